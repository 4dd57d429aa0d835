/* args.c: command-line parsing for the subcommands.
 *
 * Each subcommand describes its options in a table (long name, short letter, whether it
 * takes a value, an id) and gets back, per id, the last value given, plus the positional
 * arguments in order. The arguments are read by the `vor` command's one parser
 * (native/args/arg_parser.h, shared with `vor flamegraph` and `vor serve`): options may
 * stand before or after file names (`vor export run.vor --format csv` and `vor export
 * --format csv run.vor` are the same), as people type them; "--" ends the options so that
 * a file named "-x" can still be given.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_args(int argc, char **argv, const cli_option *options, size_t n_options, cli_args *out) {
    memset(out, 0, sizeof *out);
    vor_arg_parser parser;
    vor_arg_parser_init(&parser, argc, argv, 0, options, n_options);
    for (;;) {
        const cli_option *opt;
        const char *value;
        switch (vor_arg_next(&parser, &opt, &value)) {
        case VOR_ARG_DONE: return 0;
        case VOR_ARG_ERROR: snprintf(out->error, sizeof out->error, "%s", parser.error); return -1;
        case VOR_ARG_POSITIONAL:
            if (out->positional_count >= CLI_MAX_POSITIONAL) {
                snprintf(out->error, sizeof out->error, "too many arguments (at '%s')", value);
                return -1;
            }
            out->positional[out->positional_count++] = value;
            break;
        case VOR_ARG_OPTION:
            if (opt->id < 0 || opt->id >= CLI_MAX_OPTIONS) {
                snprintf(out->error, sizeof out->error, "internal error: bad option id for '--%s'", opt->long_name);
                return -1;
            }
            out->values[opt->id] = value;
            break;
        }
    }
}

int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
    if (!text || text[0] < '0' || text[0] > '9') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || !end || *end != '\0') return -1;
    if ((uint64_t)v < min || (uint64_t)v > max) return -1;
    *out = (uint64_t)v;
    return 0;
}
