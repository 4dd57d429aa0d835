/* fuzz_server_input.c: libFuzzer target for what `vor serve` parses from the network
 * before anything else sees it: a viewer's websocket frames (ws_frames.c, the whole input), its
 * control message (ws_message.c), the Host and Origin headers (access.c) and the request path
 * mapped onto the site directory (http_static.c). For the last three the input is split at its
 * first two newlines.
 * Property checked beyond ASan/UBSan: a path the server would serve is inside the site
 * directory.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, realpath */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_internal.h"

static char site_real[4096];
static char site_dir[] = "/tmp/vor-fuzz-site-XXXXXX";

/* The site goes when the fuzzer exits normally (a crash leaves it, with the artifact). */
static void remove_site(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s/js/app.js", site_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/js", site_dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/index.html", site_dir);
    unlink(path);
    rmdir(site_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* A small site: index.html and a subdirectory with one file. */
    char *dir = mkdtemp(site_dir);
    if (dir == NULL) abort();
    atexit(remove_site);
    char path[4200];
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/js", dir);
    if (mkdir(path, 0700) != 0) abort();
    snprintf(path, sizeof path, "%s/js/app.js", dir);
    f = fopen(path, "w");
    if (f) fclose(f);
    if (realpath(dir, site_real) == NULL) abort();
    return 0;
}

/* The next newline-terminated piece of [*p, end) as a NUL-terminated copy. */
static char *next_piece(const uint8_t **p, const uint8_t *end) {
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    const uint8_t *stop = nl ? nl : end;
    size_t n = (size_t)(stop - *p);
    char *s = malloc(n + 1);
    if (s == NULL) abort();
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = nl ? nl + 1 : end;
    return s;
}

/* The input as websocket frames from a client (ws_frames.c), fed in pieces of `step` bytes (0:
 * whole). Returns a digest of the events. Properties: every call makes progress within its
 * input, text is valid UTF-8, control payloads fit in 125 bytes. */
static uint64_t feed_frames(const uint8_t *data, size_t size, size_t step) {
    static ws_reader reader; /* 4 KiB of message buffer: off the stack */
    uint64_t digest = 14695981039346656037ull;
    ws_reader_init(&reader);
    for (size_t off = 0; off < size;) {
        size_t piece = step && size - off > step ? step : size - off;
        for (size_t used = 0; used < piece;) {
            ws_event ev;
            size_t k = ws_reader_feed(&reader, data + off + used, piece - used, &ev);
            if (k == 0 || k > piece - used) abort();
            used += k;
            if (ev.kind == WS_EV_NONE) continue;
            if (ev.kind == WS_EV_TEXT && !utf8_valid(ev.data, ev.len)) abort();
            if ((ev.kind == WS_EV_PING || ev.kind == WS_EV_PONG) && ev.len > 125) abort();
            uint64_t item[3] = {(uint64_t)ev.kind, (uint64_t)ev.status, (uint64_t)ev.len};
            for (size_t i = 0; i < sizeof item; i++) digest = (digest ^ ((const uint8_t *)item)[i]) * 1099511628211ull;
            for (size_t i = 0; i < ev.len; i++) digest = (digest ^ ev.data[i]) * 1099511628211ull;
        }
        off += piece;
    }
    return digest;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The same events whatever way the stream is split into reads. */
    if (feed_frames(data, size, 0) != feed_frames(data, size, 1) || feed_frames(data, size, 0) != feed_frames(data, size, 7))
        abort();

    const uint8_t *p = data, *end = data + size;
    char *message = next_piece(&p, end);
    char *header = next_piece(&p, end);
    char *uri = next_piece(&p, end);

    client_msg msg;
    client_msg_kind kind = client_msg_parse(message, strlen(message), &msg);
    (void)client_msg_problem(kind);
    /* The same bytes with NULs inside (strlen stopped at the first): the parser takes a length. */
    (void)client_msg_parse((const char *)data, size, &msg);

    access_policy policy;
    if (access_policy_init(&policy, "127.0.0.1", 8700) == 0) {
        (void)access_host_allowed(&policy, header);
        (void)access_origin_allowed(&policy, header, "127.0.0.1:8700");
        (void)access_origin_allowed(&policy, "http://127.0.0.1:8700", header);
    }
    access_policy policy6;
    if (access_policy_init(&policy6, "::1", 8700) == 0) (void)access_host_allowed(&policy6, header);

    char out[4096];
    static_result r = static_resolve(site_real, uri, out, sizeof out);
    if (r == STATIC_FILE) {
        size_t n = strlen(site_real);
        if (strncmp(out, site_real, n) != 0 || (out[n] != '/' && out[n] != '\0')) {
            fprintf(stderr, "fuzz_server_input: '%s' resolved outside the site: %s\n", uri, out);
            abort();
        }
    }
    (void)static_mime_type(uri);
    free(message);
    free(header);
    free(uri);
    return 0;
}
