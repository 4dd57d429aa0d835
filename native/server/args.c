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
    "                 [--store DIR [--token-file F] [--token-reads] [--max-capture-bytes N]\n"
    "                  [--max-store-bytes N] [--upload-origin O]...]\n"
    "  Serves the web panel and streams .vor captures to it over websockets.\n"
    "  FILES|DIRS   captures to offer; a directory offers every *.vor directly inside it,\n"
    "               rescanned on each listing\n"
    "  --port N     port to listen on (default 8700; 0 lets the system choose)\n"
    "  --host H     address to bind (default 127.0.0.1: captures reveal the structure of the\n"
    "               profiled program, so the server stays on this machine unless asked)\n"
    "  --site DIR   static panel directory (default: the panel that comes with vor)\n"
    "  --no-follow  send captures as they are now, without following their growth\n"
    "  --store DIR  keep captures uploaded with `vor upload`, VOR_UPLOAD or a page's\n"
    "               Module.vorUpload in DIR, indexed (SQLite) and searchable\n"
    "  --token-file F        tokens (one per line) that uploads and deletes need; required\n"
    "               with --store when --host is not a loopback address\n"
    "  --token-reads         the API and capture streams need a token too\n"
    "  --max-capture-bytes N largest capture stored (default 4G; K, M, G, T suffixes)\n"
    "  --max-store-bytes N   the store's size; the oldest captures are deleted to stay within\n"
    "               it (default 64G)\n"
    "  --upload-origin O     pages of origin O (https://host[:port]) may upload (repeatable)\n"
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

/* A size: digits, then an optional K, M, G or T (powers of 1024; "B", "iB" accepted). */
static int parse_size(const char *s, unsigned long long *out)
{
    unsigned long long v = 0;
    const char *p = s;
    if (!*p)
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (~0ull - 9) / 10)
            return -1;
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (p == s)
        return -1;
    int shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: break;
    }
    if (shift && *p == 'i')
        p++;
    if (*p == 'B' || *p == 'b')
        p++;
    if (*p || v == 0 || (shift && v > (~0ull >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

/* An origin as browsers send it: http(s)://host[:port], nothing after. */
static int valid_origin(const char *o)
{
    const char *rest = !strncmp(o, "https://", 8) ? o + 8 : !strncmp(o, "http://", 7) ? o + 7 : NULL;
    if (!rest || !*rest || strlen(o) > 255)
        return 0;
    for (; *rest; rest++)
        if (*rest == '/' || *rest == '?' || *rest == '#' || *rest <= ' ' || *rest > '~')
            return 0;
    return 1;
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

enum {
    OPT_HELP,
    OPT_NO_FOLLOW,
    OPT_PORT,
    OPT_HOST,
    OPT_SITE,
    OPT_STORE,
    OPT_TOKEN_FILE,
    OPT_TOKEN_READS,
    OPT_MAX_CAPTURE_BYTES,
    OPT_MAX_STORE_BYTES,
    OPT_UPLOAD_ORIGIN
};
static const vor_arg_option options[] = {
    {"help", 'h', 0, OPT_HELP},
    {"no-follow", 0, 0, OPT_NO_FOLLOW},
    {"port", 0, 1, OPT_PORT},
    {"host", 0, 1, OPT_HOST},
    {"site", 0, 1, OPT_SITE},
    {"store", 0, 1, OPT_STORE},
    {"token-file", 0, 1, OPT_TOKEN_FILE},
    {"token-reads", 0, 0, OPT_TOKEN_READS},
    {"max-capture-bytes", 0, 1, OPT_MAX_CAPTURE_BYTES},
    {"max-store-bytes", 0, 1, OPT_MAX_STORE_BYTES},
    {"upload-origin", 0, 1, OPT_UPLOAD_ORIGIN},
};

/* "--NAME needs a value (...)": what each option with a value expects. */
static int missing_value(char *err, size_t errlen, int id)
{
    switch (id) {
    case OPT_PORT:
        return fail(err, errlen, "--port needs a value (a port number, 0-65535)");
    case OPT_HOST:
        return fail(err, errlen, "--host needs a value (an IP address such as 127.0.0.1)");
    case OPT_STORE:
        return fail(err, errlen, "--store needs a value (the store's directory)");
    case OPT_TOKEN_FILE:
        return fail(err, errlen, "--token-file needs a value (a file of tokens)");
    case OPT_MAX_CAPTURE_BYTES:
        return fail(err, errlen, "--max-capture-bytes needs a value (a size such as 500M or 2G)");
    case OPT_MAX_STORE_BYTES:
        return fail(err, errlen, "--max-store-bytes needs a value (a size such as 500M or 2G)");
    case OPT_UPLOAD_ORIGIN:
        return fail(err, errlen, "--upload-origin needs a value (e.g. https://app.example.com)");
    default:
        return fail(err, errlen, "--site needs a value (the panel's directory)");
    }
}

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
        unsigned long long size = 0;
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
            return missing_value(err, errlen, parser.option->id);
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
            case OPT_STORE:
            case OPT_TOKEN_FILE:
                if (!*v)
                    return missing_value(err, errlen, opt->id);
                if (opt->id == OPT_STORE)
                    opts->store_dir = v;
                else
                    opts->token_file = v;
                break;
            case OPT_TOKEN_READS:
                opts->token_reads = 1;
                break;
            case OPT_MAX_CAPTURE_BYTES:
            case OPT_MAX_STORE_BYTES:
                if (parse_size(v, &size))
                    return fail(err, errlen, "--%s: '%s' is not a size (digits, then K, M, G or T)", opt->long_name,
                                v);
                if (opt->id == OPT_MAX_CAPTURE_BYTES)
                    opts->max_capture_bytes = size;
                else
                    opts->max_store_bytes = size;
                break;
            case OPT_UPLOAD_ORIGIN:
                if (!valid_origin(v))
                    return fail(err, errlen, "--upload-origin: '%s' is not an origin (http(s)://host[:port])", v);
                if (opts->upload_origin_count >= VOR_SERVER_MAX_UPLOAD_ORIGINS)
                    return fail(err, errlen, "too many --upload-origin (at most %d)", VOR_SERVER_MAX_UPLOAD_ORIGINS);
                opts->upload_origins[opts->upload_origin_count++] = v;
                break;
            }
            break;
        }
    }
}
