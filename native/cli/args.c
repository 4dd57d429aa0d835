/* args.c: command-line parsing for the subcommands.
 *
 * Each subcommand describes its options in a table (long name, short letter, whether it
 * takes a value, an id) and gets back, per id, the last value given, plus the positional
 * arguments in order. Options may stand before or after file names (`vor export run.vor
 * --format csv` and `vor export --format csv run.vor` are the same), as people type
 * them; "--" ends the options so that a file named "-x" can still be given.
 *
 * getopt_long would permute argv and print its own messages; we want our message shape
 * ("vor <cmd>: unknown option '--x'") and no global state, so the parser is ours.
 */
#include "cli.h"

#include <stdarg.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const cli_option *find_long(const cli_option *options, size_t n, const char *name, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (strlen(options[i].long_name) == len && strncmp(options[i].long_name, name, len) == 0) return &options[i];
    return NULL;
}

static const cli_option *find_short(const cli_option *options, size_t n, char c) {
    for (size_t i = 0; i < n; i++)
        if (options[i].short_name == c) return &options[i];
    return NULL;
}

static int fail(cli_args *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(cli_args *out, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, args);
    va_end(args);
    return -1;
}

static int add_positional(cli_args *out, const char *arg) {
    if (out->positional_count >= CLI_MAX_POSITIONAL) return fail(out, "too many arguments (at '%s')", arg);
    out->positional[out->positional_count++] = arg;
    return 0;
}

int cli_parse_args(int argc, char **argv, const cli_option *options, size_t n_options, cli_args *out) {
    memset(out, 0, sizeof *out);
    int only_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (add_positional(out, arg) != 0) return -1;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        const cli_option *opt;
        const char *value = NULL; /* attached value: --opt=value or -ovalue */
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            opt = find_long(options, n_options, name, len);
            if (!opt) {
                char shown[128];
                snprintf(shown, sizeof shown, "--%.*s", (int)(len < 100 ? len : 100), name);
                return fail(out, "unknown option '%s'", shown);
            }
            if (eq) {
                if (!opt->takes_value) return fail(out, "option '--%s' takes no value", opt->long_name);
                value = eq + 1;
            }
        } else {
            opt = find_short(options, n_options, arg[1]);
            if (!opt) return fail(out, "unknown option '%s'", arg);
            if (arg[2] != '\0') {
                if (!opt->takes_value) return fail(out, "unknown option '%s'", arg);
                value = arg + 2;
            }
        }
        if (opt->takes_value && !value) {
            if (i + 1 >= argc) {
                if (arg[1] == '-') return fail(out, "option '--%s' needs a value", opt->long_name);
                return fail(out, "option '%s' (--%s) needs a value", arg, opt->long_name);
            }
            value = argv[++i];
        }
        if (opt->id < 0 || opt->id >= CLI_MAX_OPTIONS) return fail(out, "internal error: bad option id for '--%s'", opt->long_name);
        out->values[opt->id] = opt->takes_value ? value : "";
    }
    return 0;
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
