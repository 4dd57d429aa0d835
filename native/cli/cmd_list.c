/* cmd_list.c: `vor list --server URL [filters] [--json]`: the captures a profile store holds,
 * searched by the server's index (GET /api/captures; native/server/store/store_query.c lists
 * the parameters). Filters: --project, --tag k=v (repeatable), --process, --host, --state,
 * --scope TEXT (full text over every scope's name), --since/--until DATE; --sort date|uploaded|
 * frames|span|scope:NAME, --order asc|desc, --limit N, --offset N. Prints one line per capture
 * (id, start, project, process, frames, span, size, how it ended, its top scope by self time),
 * or with --json the server's answer as it came.
 * Exit status: 0, 2 bad usage or a query the server refused, 1 the server could not be reached.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "upload_client.h"

static const char help[] =
    "usage: vor list --server URL [--project P] [--tag k=v]... [--process X] [--host H]\n"
    "                [--state complete|cut|open|uploading] [--scope TEXT] [--since DATE] [--until DATE]\n"
    "                [--sort date|uploaded|frames|span|scope:NAME] [--order asc|desc] [--limit N]\n"
    "                [--offset N] [--token-file F] [--json]\n"
    "  The captures a profile store (vor serve --store DIR) holds, newest first.\n"
    "  --scope TEXT   captures with a scope whose name has words starting with these\n"
    "  DATE           2026-11-24, 2026-11-24T22:35[:04][Z] (UTC), or ms since 1970\n"
    "  --json         the server's JSON answer as is\n";

enum {
    OPT_SERVER,
    OPT_PROJECT,
    OPT_PROCESS,
    OPT_HOST,
    OPT_STATE,
    OPT_SCOPE,
    OPT_SINCE,
    OPT_UNTIL,
    OPT_SORT,
    OPT_ORDER,
    OPT_LIMIT,
    OPT_OFFSET,
    OPT_TOKEN_FILE,
    OPT_JSON,
    OPT_HELP,
    N_QUERY = OPT_TOKEN_FILE
};

static void add_param(char *q, size_t cap, const char *name, const char *value) {
    size_t o = strlen(q);
    o += (size_t)snprintf(q + o, cap > o ? cap - o : 0, "%s%s=", o ? "&" : "?", name);
    for (const unsigned char *p = (const unsigned char *)value; *p && o + 4 < cap; p++) {
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || strchr("-_.~:", *p))
            q[o++] = (char)*p;
        else
            o += (size_t)snprintf(q + o, cap - o, "%%%02X", *p);
    }
    q[o < cap ? o : cap - 1] = '\0';
}

/* The raw text of member `key` in one capture object (flat values; strings without quotes). */
static int member(const char *obj, const char *end, const char *key, char *out, size_t cap) {
    char pat[40];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(obj, pat);
    out[0] = '\0';
    if (!p || p >= end) return -1;
    p += strlen(pat);
    size_t o = 0;
    if (*p == '"') {
        for (p++; *p && *p != '"' && o + 1 < cap; p++) {
            if (*p == '\\' && p[1]) p++;
            out[o++] = *p;
        }
    } else {
        while (*p && *p != ',' && *p != '}' && o + 1 < cap) out[o++] = *p++;
    }
    out[o] = '\0';
    return 0;
}

/* Where the object that starts at p ends (strings and nesting taken into account). */
static const char *object_end(const char *p) {
    int depth = 0, str = 0;
    for (; *p; p++) {
        if (str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                str = 0;
        } else if (*p == '"')
            str = 1;
        else if (*p == '{' || *p == '[')
            depth++;
        else if ((*p == '}' || *p == ']') && --depth == 0)
            return p + 1;
    }
    return p;
}

static void print_table(const char *body) {
    const char *p = strstr(body, "\"captures\":[");
    if (!p) return;
    p += 12;
    int n = 0;
    printf("%-24s %-17s %-14s %-16s %9s %10s %9s %-8s %s\n", "id", "start (UTC)", "project", "process", "frames",
           "span s", "MB", "ended", "top scope by self time");
    while (*p == '{' || *p == ',') {
        if (*p == ',') {
            p++;
            continue;
        }
        const char *end = object_end(p);
        char id[64], proj[64], proc[64], frames[32], span[32], bytes[32], ended[16], start[32], top[128], upload[16];
        member(p, end, "id", id, sizeof id);
        member(p, end, "project", proj, sizeof proj);
        member(p, end, "process", proc, sizeof proc);
        member(p, end, "frames", frames, sizeof frames);
        member(p, end, "span_ns", span, sizeof span);
        member(p, end, "bytes", bytes, sizeof bytes);
        member(p, end, "ended", ended, sizeof ended);
        member(p, end, "upload", upload, sizeof upload);
        member(p, end, "start_ms", start, sizeof start);
        const char *ts = strstr(p, "\"top_self\":[{");
        if (ts && ts < end)
            member(ts, end, "name", top, sizeof top);
        else
            top[0] = '\0';
        char when[32] = "-";
        if (start[0]) {
            time_t t = (time_t)(strtoll(start, NULL, 10) / 1000);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        }
        char span_s[32] = "-", mb[32];
        if (span[0]) snprintf(span_s, sizeof span_s, "%.3f", strtod(span, NULL) / 1e9);
        snprintf(mb, sizeof mb, "%.2f", strtod(bytes, NULL) / 1e6);
        const char *how = !strcmp(upload, "uploading") ? "live"
                          : !strcmp(upload, "open")    ? "open"
                          : ended[0]                   ? ended
                                                       : "-";
        printf("%-24s %-17s %-14.14s %-16.16s %9s %10s %9s %-8s ", id, when, proj, proc, frames[0] ? frames : "-",
               span_s, mb, how);
        cli_text_fputs(stdout, top);
        putchar('\n');
        n++;
        p = end;
    }
    char total[32] = "";
    const char *t = strstr(p, "\"total\":");
    if (t) member(t, t + strlen(t), "total", total, sizeof total);
    printf("%d shown%s%s\n", n, total[0] ? " of " : "", total);
}

int cmd_list(int argc, char **argv) {
    static const cli_option options[] = {{"server", 0, 1, OPT_SERVER},
                                         {"project", 0, 1, OPT_PROJECT},
                                         {"process", 0, 1, OPT_PROCESS},
                                         {"host", 0, 1, OPT_HOST},
                                         {"state", 0, 1, OPT_STATE},
                                         {"scope", 0, 1, OPT_SCOPE},
                                         {"since", 0, 1, OPT_SINCE},
                                         {"until", 0, 1, OPT_UNTIL},
                                         {"sort", 0, 1, OPT_SORT},
                                         {"order", 0, 1, OPT_ORDER},
                                         {"limit", 0, 1, OPT_LIMIT},
                                         {"offset", 0, 1, OPT_OFFSET},
                                         {"token-file", 0, 1, OPT_TOKEN_FILE},
                                         {"json", 0, 0, OPT_JSON},
                                         {"help", 'h', 0, OPT_HELP}};
    static const char *const names[N_QUERY] = {NULL,    "project", "process", "host",  "state", "scope",
                                               "since", "until",   "sort",    "order", "limit", "offset"};
    char query[8192] = "";
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int n_rest = 0;
    if (!rest) return cli_fail(CLI_EXIT_IO, "list", NULL, "out of memory");
    for (int i = 1; i < argc; i++) { /* --tag may repeat */
        const char *v = NULL;
        if (!strcmp(argv[i], "--tag"))
            v = i + 1 < argc ? argv[++i] : "";
        else if (!strncmp(argv[i], "--tag=", 6))
            v = argv[i] + 6;
        if (v)
            add_param(query, sizeof query, "tag", v);
        else
            rest[n_rest++] = argv[i];
    }
    cli_args args;
    int bad = cli_parse_args(n_rest, rest, options, sizeof options / sizeof options[0], &args);
    free(rest);
    if (bad) return cli_usage_error("list", "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count) return cli_usage_error("list", "unexpected argument '%s'", args.positional[0]);
    if (!args.values[OPT_SERVER]) return cli_usage_error("list", "--server URL is required (http://HOST:PORT)");
    for (int o = OPT_PROJECT; o < N_QUERY; o++)
        if (args.values[o]) add_param(query, sizeof query, names[o], args.values[o]);
    vor_url url;
    char err[300], token[600] = "", path[8300];
    if (vor_url_parse(args.values[OPT_SERVER], &url, err, sizeof err) != 0)
        return cli_usage_error("list", "--server: %s", err);
    if (args.values[OPT_TOKEN_FILE] && cli_read_token_file("list", args.values[OPT_TOKEN_FILE], token, sizeof token))
        return CLI_EXIT_USAGE;
    snprintf(path, sizeof path, "/api/captures%s", query);
    char *body = NULL;
    size_t len = 0;
    int status = 0;
    if (vor_http_get(&url, path, token, 10000, 64u << 20, &body, &len, &status, err, sizeof err) != 0)
        return cli_fail(CLI_EXIT_IO, "list", args.values[OPT_SERVER], "%s", err);
    int rc = CLI_EXIT_OK;
    if (status != 200) {
        char msg[300];
        if (member(body, body + len, "error", msg, sizeof msg) != 0) snprintf(msg, sizeof msg, "HTTP %d", status);
        rc = cli_fail(CLI_EXIT_USAGE, "list", args.values[OPT_SERVER], "%s", msg);
    } else if (args.values[OPT_JSON]) {
        fwrite(body, 1, len, stdout);
        if (len && body[len - 1] != '\n') putchar('\n');
    } else {
        if (!strstr(body, "\"store\":true"))
            cli_note("list", args.values[OPT_SERVER],
                     "this server keeps no store (vor serve --store DIR): its FILES only");
        print_table(body);
    }
    free(body);
    return rc;
}
