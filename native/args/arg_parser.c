/* arg_parser.c: the one command-line parser of the `vor` command (arg_parser.h). */
#include "arg_parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void vor_arg_parser_init(vor_arg_parser *p, int argc, char **argv, int first, const vor_arg_option *options,
                         size_t n_options) {
    memset(p, 0, sizeof *p);
    p->argc = argc;
    p->argv = argv;
    p->next = first;
    p->options = options;
    p->n_options = n_options;
}

static const vor_arg_option *find_long(const vor_arg_parser *p, const char *name, size_t len) {
    for (size_t i = 0; i < p->n_options; i++)
        if (strlen(p->options[i].long_name) == len && strncmp(p->options[i].long_name, name, len) == 0)
            return &p->options[i];
    return NULL;
}

static const vor_arg_option *find_short(const vor_arg_parser *p, char c) {
    for (size_t i = 0; i < p->n_options; i++)
        if (p->options[i].short_name == c) return &p->options[i];
    return NULL;
}

static vor_arg_kind fail(vor_arg_parser *p, vor_arg_error_kind kind, const vor_arg_option *option, const char *arg,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static vor_arg_kind fail(vor_arg_parser *p, vor_arg_error_kind kind, const vor_arg_option *option, const char *arg,
                         const char *fmt, ...) {
    p->error_kind = kind;
    p->option = option;
    p->arg = arg;
    va_list args;
    va_start(args, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, args);
    va_end(args);
    p->next = p->argc; /* stays at the error */
    return VOR_ARG_ERROR;
}

vor_arg_kind vor_arg_next(vor_arg_parser *p, const vor_arg_option **option, const char **value) {
    *option = NULL;
    *value = NULL;
    if (p->next >= p->argc || p->argv[p->next] == NULL) return VOR_ARG_DONE;
    const char *arg = p->argv[p->next++];
    if (p->options_ended || arg[0] != '-' || arg[1] == '\0') {
        *value = arg;
        return VOR_ARG_POSITIONAL;
    }
    if (strcmp(arg, "--") == 0) {
        p->options_ended = 1;
        return vor_arg_next(p, option, value);
    }
    const vor_arg_option *opt;
    const char *attached = NULL; /* --opt=value or -ovalue */
    if (arg[1] == '-') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        opt = find_long(p, name, len);
        if (!opt)
            return fail(p, VOR_ARG_UNKNOWN, NULL, arg, "unknown option '--%.*s'", (int)(len < 100 ? len : 100), name);
        if (eq) {
            if (!opt->takes_value)
                return fail(p, VOR_ARG_UNEXPECTED_VALUE, opt, arg, "option '--%s' takes no value", opt->long_name);
            attached = eq + 1;
        }
    } else {
        opt = find_short(p, arg[1]);
        if (opt && arg[2] != '\0') {
            if (!opt->takes_value)
                opt = NULL; /* no bundling of flags: "-qx" is unknown */
            else
                attached = arg + 2;
        }
        if (!opt) return fail(p, VOR_ARG_UNKNOWN, NULL, arg, "unknown option '%s'", arg);
    }
    if (opt->takes_value && !attached) {
        if (p->next >= p->argc || p->argv[p->next] == NULL) {
            if (arg[1] == '-')
                return fail(p, VOR_ARG_MISSING_VALUE, opt, arg, "option '--%s' needs a value", opt->long_name);
            return fail(p, VOR_ARG_MISSING_VALUE, opt, arg, "option '%s' (--%s) needs a value", arg, opt->long_name);
        }
        attached = p->argv[p->next++];
    }
    *option = opt;
    *value = opt->takes_value ? attached : "";
    return VOR_ARG_OPTION;
}
