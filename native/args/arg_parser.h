/* arg_parser.h: the one command-line parser of the `vor` command: its subcommands
 * (native/cli), `vor flamegraph` (native/flamegraph) and `vor serve` (native/server).
 *
 * Each command describes its options in a table (long name, short letter, whether it takes
 * a value, an id) and reads its arguments one at a time: a positional argument, an option
 * with its value, the end, or an error. Options may stand before or after positional
 * arguments (`vor export run.vor --format csv`), values come as the next argument, after
 * '=' (--format=csv) or glued to a short option (-oOUT); short flags are not bundled;
 * "--" ends the options, and "-" alone is positional. Nothing is allocated and nothing is
 * global: strings point into argv. Not getopt_long: it permutes argv, keeps global state
 * and prints its own messages.
 *
 * An error comes with a message in the CLI's words (`error`) and with its parts (`kind`,
 * `option`, `arg`), so a command that words its messages its own way keeps them.
 */
#ifndef VOR_ARG_PARSER_H
#define VOR_ARG_PARSER_H

#include <stddef.h>

typedef struct vor_arg_option {
    const char *long_name; /* without the dashes: "format" for --format */
    char short_name;       /* 'o' for -o, 0 for none */
    int takes_value;       /* 1: --format csv, --format=csv, -o out, -oout */
    int id;                /* the command's own id */
} vor_arg_option;

typedef enum vor_arg_kind {
    VOR_ARG_DONE,       /* no argument left */
    VOR_ARG_POSITIONAL, /* *value is the argument */
    VOR_ARG_OPTION,     /* *option, and *value: its value ("" for a flag) */
    VOR_ARG_ERROR,      /* see error_kind and error */
} vor_arg_kind;

typedef enum vor_arg_error_kind {
    VOR_ARG_UNKNOWN,          /* no such option (a short flag with text glued to it too) */
    VOR_ARG_MISSING_VALUE,    /* an option that takes a value came last */
    VOR_ARG_UNEXPECTED_VALUE, /* --flag=value for an option without a value */
} vor_arg_error_kind;

typedef struct vor_arg_parser {
    int argc;
    char **argv;
    int next;          /* index of the next argument to read */
    int options_ended; /* after "--" */
    const vor_arg_option *options;
    size_t n_options;
    /* After VOR_ARG_ERROR: */
    vor_arg_error_kind error_kind;
    const vor_arg_option *option; /* the option concerned (NULL when unknown) */
    const char *arg;              /* the argument as given */
    char error[256];              /* e.g. "unknown option '--x'", "option '--format' needs a value" */
} vor_arg_parser;

/* Reads argv[first..argc) against `options` (a NULL argv entry ends the arguments). */
void vor_arg_parser_init(vor_arg_parser *p, int argc, char **argv, int first, const vor_arg_option *options,
                         size_t n_options);
/* The next argument. After VOR_ARG_DONE or VOR_ARG_ERROR, the parser stays there. */
vor_arg_kind vor_arg_next(vor_arg_parser *p, const vor_arg_option **option, const char **value);

#endif /* VOR_ARG_PARSER_H */
