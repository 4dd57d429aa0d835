/* cmd_upload.c: `vor upload FILE... --server URL --project P [--tag k=v]... [--token-file F]`:
 * sends captures to a profile store (`vor serve --store DIR`) over its vor-upload websocket
 * (native/server/ws_upload.c has the protocol; the client is the core's, core/src/upload_ws.c).
 *
 * Each file is streamed from where the server's copy ends: the upload is keyed by the SHA-1 of
 * the capture's header (which holds the run's wall-clock start and pid), so running the same
 * command again after a dropped connection - or a Ctrl-C - resumes it, and a file stored
 * completely already is answered at once ("already stored"). Within one run a dropped
 * connection is retried 5 times with back-off before giving up. A file still being written is
 * sent up to its current end and then finished as "cut" (upload it again later to complete it:
 * it resumes). The server checks every record as it arrives and refuses, with its reason, a file
 * that is not a capture, a damaged one, one over its size limit, or a bad token: those are
 * reported and the next file is tried.
 * Exit status: 0 every file stored, 2 bad usage or a file refused, 1 the server could not be
 * reached or the connection kept failing.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "upload_client.h"

const char cmd_upload_help[] =
    "usage: vor upload FILE... --server URL --project P [--tag k=v]... [--token-file F] [--name N]\n"
    "  Sends captures to a profile store (vor serve --store DIR), streamed and resumable.\n"
    "  --server URL     the store, http://HOST:PORT\n"
    "  --project P      the project the captures belong to\n"
    "  --tag k=v        a tag (repeatable): searchable with vor list --tag and on the captures page\n"
    "  --token-file F   a file whose first line is the upload token (servers with --token-file)\n"
    "  --name N         the name the store shows (default: the file's name; one FILE only)\n"
    "  Uploading a file again resumes it where the server's copy ends; a file stored completely\n"
    "  is not sent twice.\n";

enum {
    OPT_SERVER,
    OPT_PROJECT,
    OPT_TOKEN_FILE,
    OPT_NAME,
    OPT_HELP,
    MAX_TAGS = 32,
    RETRIES = 5,
    CHUNK = 1 << 20,
    TIMEOUT_MS = 10000
};

static volatile sig_atomic_t interrupted;

static void on_stop(int sig) {
    (void)sig;
    interrupted = 1;
}

/* The first line of a token file. 0, or -1 after a message. */
int cli_read_token_file(const char *cmd, const char *path, char *out, size_t cap) {
    FILE *f = fopen(path, "re");
    if (!f) return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s", strerror(errno)), -1;
    out[0] = '\0';
    char line[600];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s && *s != '#') {
            snprintf(out, cap, "%s", s);
            break;
        }
    }
    fclose(f);
    if (!out[0]) return cli_fail(CLI_EXIT_USAGE, cmd, path, "holds no token"), -1;
    return 0;
}

/* The upload key of a capture: hex of SHA-1 of its header (magic to header check). */
static int capture_key(int fd, char key[41], char *why, size_t whylen) {
    unsigned char head[16];
    if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head) {
        snprintf(why, whylen, "too short to be a capture");
        return -1;
    }
    uint32_t body = (uint32_t)head[12] | (uint32_t)head[13] << 8 | (uint32_t)head[14] << 16 | (uint32_t)head[15] << 24;
    size_t total = (head[10] | head[11] << 8) == 0 ? 16u + body + 4u : 20u + body + 4u;
    if (memcmp(head, "\x89VOR\r\n\x1a\n", 8) != 0 || body > (1u << 20)) {
        snprintf(why, whylen, "not a vor capture (bad magic or header)");
        return -1;
    }
    unsigned char *h = malloc(total);
    if (!h || pread(fd, h, total, 0) != (ssize_t)total) {
        free(h);
        snprintf(why, whylen, "its header is incomplete");
        return -1;
    }
    uint8_t d[20];
    vor_sha1(h, total, d);
    free(h);
    for (int i = 0; i < 20; i++) snprintf(key + 2 * i, 3, "%02x", d[i]);
    return 0;
}

typedef struct job {
    const char *path;
    const vor_url *url;
    const char *server;
    vor_upload_hello hello;
} job;

/* One connection's worth of the upload. 0 stored (done printed), 1 connection lost (retry),
 * 2 refused (message printed). */
static int attempt(const job *j, int fd, uint64_t size, uint64_t *progress) {
    char err[400], hello[4096], text[1024];
    if (vor_upload_hello_json(&j->hello, hello, sizeof hello, err, sizeof err) != 0)
        return cli_fail(2, "upload", j->path, "%s", err), 2;
    vor_ws *ws = vor_ws_connect(j->url, "/upload", "vor-upload", TIMEOUT_MS, err, sizeof err);
    if (!ws) {
        cli_note("upload", j->path, "%s", err);
        return 1;
    }
    int code = 0, rc = 1;
    vor_upload_msg m;
    if (vor_ws_send(ws, 0, hello, strlen(hello), TIMEOUT_MS) != 0 ||
        vor_ws_recv(ws, text, sizeof text, TIMEOUT_MS, &code) != 1)
        goto out;
    vor_upload_msg_parse(text, &m);
    if (m.type == VOR_UPLOAD_MSG_ERROR) {
        cli_fail(2, "upload", j->path, "refused by %s: %s", j->server, m.message);
        rc = 2;
        goto out;
    }
    if (m.type == VOR_UPLOAD_MSG_DONE) {
        printf("%s: already stored as %s (%llu bytes, %s)\n", j->path, m.id, (unsigned long long)m.bytes, m.state);
        rc = 0;
        goto out;
    }
    if (m.type != VOR_UPLOAD_MSG_OFFSET) {
        cli_fail(2, "upload", j->path, "%s does not speak the vor-upload protocol", j->server);
        rc = 2;
        goto out;
    }
    char id[40];
    snprintf(id, sizeof id, "%s", m.id);
    if (m.bytes > size) {
        cli_fail(2, "upload", j->path,
                 "the server holds %llu bytes of it, more than the file has (%llu): a different "
                 "file with the same header?",
                 (unsigned long long)m.bytes, (unsigned long long)size);
        rc = 2;
        goto out;
    }
    if (m.bytes > 0 && *progress == 0)
        cli_note("upload", j->path, "resuming at byte %llu of %llu", (unsigned long long)m.bytes,
                 (unsigned long long)size);
    unsigned char *buf = malloc(CHUNK);
    if (!buf) goto out;
    uint64_t at = m.bytes;
    bool finish_sent = false;
    for (;;) {
        if (interrupted) {
            free(buf);
            cli_note("upload", j->path, "interrupted at byte %llu: run the same command to resume",
                     (unsigned long long)at);
            rc = 3;
            goto out;
        }
        if (at < size) {
            size_t want = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
            ssize_t got = pread(fd, buf, want, (off_t)at);
            if (got <= 0) {
                free(buf);
                cli_fail(2, "upload", j->path, "read error: %s", got < 0 ? strerror(errno) : "the file shrank");
                rc = 2;
                goto out;
            }
            if (vor_ws_send(ws, 1, buf, (size_t)got, TIMEOUT_MS) != 0) break;
            at += (uint64_t)got;
        } else if (!finish_sent) {
            static const char finish[] = "{\"type\":\"finish\"}";
            if (vor_ws_send(ws, 0, finish, sizeof finish - 1, TIMEOUT_MS) != 0) break;
            finish_sent = true;
        }
        /* What the server said meanwhile (acks; done after the end record or the finish). */
        int r;
        while ((r = vor_ws_recv(ws, text, sizeof text, at < size ? 0 : 200, &code)) == 1) {
            vor_upload_msg_parse(text, &m);
            if (m.type == VOR_UPLOAD_MSG_ACK) {
                *progress = m.bytes;
            } else if (m.type == VOR_UPLOAD_MSG_DONE) {
                free(buf);
                printf("%s: stored as %s (%llu bytes, %s)\n", j->path, m.id, (unsigned long long)m.bytes, m.state);
                rc = 0;
                goto out;
            } else if (m.type == VOR_UPLOAD_MSG_ERROR) {
                free(buf);
                cli_fail(2, "upload", j->path, "refused by %s: %s", j->server, m.message);
                rc = 2;
                goto out;
            }
        }
        if (r < 0) break;
    }
    free(buf);
    cli_note("upload", j->path, "connection lost after byte %llu (%s)", (unsigned long long)at,
             code == 1006 ? "dropped" : "closed");
out:
    vor_ws_close(ws, rc == 3 ? 1001 : 1000);
    return rc == 3 ? 1 : rc;
}

static int upload_file(job *j) {
    struct stat st;
    char key[41], why[200];
    int fd = cli_input_open("upload", j->path, CLI_INPUT_CAPTURE, &st);
    if (fd < 0) return CLI_EXIT_USAGE;
    if (capture_key(fd, key, why, sizeof why) != 0) {
        close(fd);
        return cli_fail(CLI_EXIT_USAGE, "upload", j->path, "%s", why);
    }
    j->hello.key = key;
    uint64_t progress = 0;
    int rc = 1;
    for (int i = 0; i <= RETRIES && !interrupted; i++) {
        if (i) {
            struct timespec ts = {i < 3 ? 0 : 1, i < 3 ? 250000000L * i : 0};
            nanosleep(&ts, NULL);
        }
        if (fstat(fd, &st) != 0) break;
        rc = attempt(j, fd, (uint64_t)st.st_size, &progress);
        if (rc != 1) break;
    }
    close(fd);
    if (rc == 1 && !interrupted)
        cli_fail(1, "upload", j->path, "gave up after %d attempts: run the same command to resume", RETRIES + 1);
    return rc == 0 ? CLI_EXIT_OK : rc == 2 ? CLI_EXIT_USAGE : CLI_EXIT_IO;
}

int cmd_upload(int argc, char **argv) {
    static const cli_option options[] = {{"server", 0, 1, OPT_SERVER},
                                         {"project", 0, 1, OPT_PROJECT},
                                         {"token-file", 0, 1, OPT_TOKEN_FILE},
                                         {"name", 0, 1, OPT_NAME},
                                         {"help", 'h', 0, OPT_HELP}};
    /* --tag may repeat: taken out before the common parser (which keeps one value per option). */
    char tags[MAX_TAGS * 520] = "";
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int n_rest = 0, n_tags = 0;
    if (!rest) return cli_fail(CLI_EXIT_IO, "upload", NULL, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--")) {
            while (i < argc) rest[n_rest++] = argv[i++];
            break;
        }
        if (!strcmp(a, "--tag"))
            v = i + 1 < argc ? argv[++i] : "";
        else if (!strncmp(a, "--tag=", 6))
            v = a + 6;
        if (!v) {
            rest[n_rest++] = argv[i];
            continue;
        }
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || strchr(v, ',') || n_tags >= MAX_TAGS || strlen(v) > 511) {
            free(rest);
            return cli_usage_error("upload", "--tag '%s': expected key=value (no commas; at most %d tags)", v,
                                   MAX_TAGS);
        }
        size_t len = strlen(tags);
        snprintf(tags + len, sizeof tags - len, "%s%s", n_tags++ ? "," : "", v);
    }
    cli_args args;
    int bad = cli_parse_args(n_rest, rest, options, sizeof options / sizeof options[0], &args);
    free(rest);
    if (bad) return cli_usage_error("upload", "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_upload_help, stdout);
        return CLI_EXIT_OK;
    }
    if (!args.values[OPT_SERVER]) return cli_usage_error("upload", "--server URL is required (http://HOST:PORT)");
    if (!args.values[OPT_PROJECT] || !*args.values[OPT_PROJECT])
        return cli_usage_error("upload", "--project P is required");
    if (args.positional_count == 0) return cli_usage_error("upload", "no capture to upload");
    if (args.values[OPT_NAME] && args.positional_count > 1)
        return cli_usage_error("upload", "--name applies to one FILE only");
    vor_url url;
    char err[300], token[600] = "";
    if (vor_url_parse(args.values[OPT_SERVER], &url, err, sizeof err) != 0)
        return cli_usage_error("upload", "--server: %s", err);
    if (args.values[OPT_TOKEN_FILE] && cli_read_token_file("upload", args.values[OPT_TOKEN_FILE], token, sizeof token))
        return CLI_EXIT_USAGE;
    cli_on_stop_signals(on_stop);
    int status = CLI_EXIT_OK;
    for (int i = 0; i < args.positional_count && !interrupted; i++) {
        const char *path = args.positional[i];
        const char *base = strrchr(path, '/');
        job j = {path,
                 &url,
                 args.values[OPT_SERVER],
                 {NULL, args.values[OPT_PROJECT],
                  args.values[OPT_NAME] ? args.values[OPT_NAME]
                  : base                ? base + 1
                                        : path,
                  NULL, token[0] ? token : NULL, tags[0] ? tags : NULL}};
        int rc = upload_file(&j);
        if (rc != CLI_EXIT_OK && (status == CLI_EXIT_OK || rc == CLI_EXIT_IO)) status = rc;
    }
    return interrupted ? 130 : status;
}
