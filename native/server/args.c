/*
 * args.c - the `vor serve` command line -> vor_server_options.
 *
 * Pure (no I/O, no allocation) so the lead's `vor` command can call it before anything else and
 * tests can drive it directly. Options may stand before or after the paths; "--" ends options.
 * Every bad value yields one message naming the option and the value; the caller exits 2.
 * Values are checked here for form only (a number in range, an address that parses); whether
 * the port is free or the site exists is found out by vor_server_run(). The arguments are
 * read by the `vor` command's one parser (native/args/arg_parser.h).
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arg_parser.h"

static const char usage_text[] =
    "usage: vor serve [FILES|DIRS] [--port N] [--host H] [--site DIR] [--no-follow]\n"
    "  Serves the web panel and streams .vor captures to it over websockets.\n"
    "  FILES|DIRS   captures to offer; a directory offers every *.vor directly inside it,\n"
    "               rescanned on each listing\n"
    "  --port N     port to listen on (default 8700; 0 lets the system choose)\n"
    "  --host H     address to bind (default 127.0.0.1: captures reveal the structure of the\n"
    "               profiled program, so the server stays on this machine unless asked)\n"
    "  --site DIR   static panel directory (default: the panel that comes with vor)\n"
    "  --no-follow  send captures as they are now, without following their growth\n"
    "  -h, --help   show this help\n"
    "  Requests from other origins and with foreign Host headers are refused (cross-site\n"
    "  pages, DNS rebinding).\n";

const char *vor_server_usage(void) { return usage_text; }

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return VOR_SERVER_ARGS_ERROR;
}

/* Decimal 0..65535, nothing else (no sign, no spaces, no trailing text). */
static int parse_port(const char *s, int *out)
{
    if (!s || !*s || strlen(s) > 5)
        return -1;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v > 65535)
        return -1;
    *out = v == 0 ? VOR_SERVER_PORT_ANY : (int)v;
    return 0;
}

static int valid_host(const char *h)
{
    unsigned char addr[16];
    if (!h || !*h)
        return 0;
    if (!strcmp(h, "localhost"))
        return 1;
    return inet_pton(AF_INET, h, addr) == 1 || inet_pton(AF_INET6, h, addr) == 1;
}

enum { OPT_HELP, OPT_NO_FOLLOW, OPT_PORT, OPT_HOST, OPT_SITE };
static const vor_arg_option options[] = {
    {"help", 'h', 0, OPT_HELP}, {"no-follow", 0, 0, OPT_NO_FOLLOW}, {"port", 0, 1, OPT_PORT},
    {"host", 0, 1, OPT_HOST},   {"site", 0, 1, OPT_SITE},
};

int vor_server_parse_args(int argc, char **argv, vor_server_options *opts, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!opts)
        return fail(err, errlen, "internal error: no options struct");
    memset(opts, 0, sizeof *opts);

    vor_arg_parser parser;
    vor_arg_parser_init(&parser, argc, argv, 1, options, sizeof options / sizeof options[0]);
    for (;;) {
        const vor_arg_option *opt;
        const char *v;
        switch (vor_arg_next(&parser, &opt, &v)) {
        case VOR_ARG_DONE:
            return VOR_SERVER_ARGS_OK;
        case VOR_ARG_POSITIONAL:
            if (opts->path_count >= VOR_SERVER_MAX_PATHS)
                return fail(err, errlen, "too many FILES|DIRS (at most %d): pass their directory instead",
                            VOR_SERVER_MAX_PATHS);
            if (!*v)
                return fail(err, errlen, "empty path argument");
            opts->paths[opts->path_count++] = v;
            break;
        case VOR_ARG_ERROR:
            if (parser.error_kind != VOR_ARG_MISSING_VALUE)
                return fail(err, errlen, "unknown option '%s' (see vor serve --help)", parser.arg);
            if (parser.option->id == OPT_PORT)
                return fail(err, errlen, "--port needs a value (a port number, 0-65535)");
            if (parser.option->id == OPT_HOST)
                return fail(err, errlen, "--host needs a value (an IP address such as 127.0.0.1)");
            return fail(err, errlen, "--site needs a value (the panel's directory)");
        case VOR_ARG_OPTION:
            switch (opt->id) {
            case OPT_HELP:
                return VOR_SERVER_ARGS_HELP;
            case OPT_NO_FOLLOW:
                opts->no_follow = 1;
                break;
            case OPT_PORT:
                if (parse_port(v, &opts->port))
                    return fail(err, errlen, "--port: '%s' is not a port number (0-65535)", v);
                break;
            case OPT_HOST:
                if (!valid_host(v))
                    return fail(err, errlen, "--host: '%s' is not an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)", v);
                opts->host = v;
                break;
            case OPT_SITE:
                if (!*v)
                    return fail(err, errlen, "--site: empty directory name");
                opts->site_dir = v;
                break;
            }
            break;
        }
    }
}
