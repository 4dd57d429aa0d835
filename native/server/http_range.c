/*
 * http_range.c - random access to a capture over HTTP: GET /api/captures/<id>/<what>.
 *
 *   index?from=E          the capture's index from entry E (binary, below): what a viewer
 *                         draws the whole capture's overview from, and how it names frames
 *   frames?from=A&to=B    a capture stream holding frames A..B: the capture's header, a state
 *                         record (docs/FORMAT.md 4.8) and the records from the entry holding A,
 *                         byte for byte, up to the entry after B or SERVER_RANGE_MAX_BYTES (then
 *                         x-vor-next-frame says where to go on)
 *   tail?bytes=N          a capture stream of the newest records (those starting in the last N
 *                         bytes of the file, found by their checks, so it needs no index: a
 *                         viewer sees the newest frames at once, whatever the file's size)
 *   bytes?from=O          the file's bytes from O (a viewer following a live capture appends
 *                         them to what it decodes); header=<x-vor-header> makes a new run of
 *                         the file an error (409, "reset") instead of bytes of another file
 *
 * Every stream is one a reader reads like a capture (the panel's decoder does). Responses are
 * built whole, at most SERVER_RANGE_MAX_BYTES; x-vor-generation changes when the server starts
 * a capture's index over (a new run rewrote the file), x-vor-header is the header's fingerprint.
 *
 * Index response, little-endian: "VIDX", u32 version 1, u32 flags (bit 0 the end record was
 * read, bit 1 random access (format 1.1), bit 2 the index has read the whole file as it is now,
 * bit 3 the header is not complete yet), u32 stride (frames per entry), u32 entries in all,
 * u32 first entry here, u32 entries here (n), u32 0, u64 frames indexed, u64 bytes indexed,
 * u64 file size, u64 generation, u64 header fingerprint; then n f64 first frame index, n f64
 * first frame start (ns), n f32 minimum, n f32 maximum and n f32 sum of the entry's frame times
 * (ns), n u32 frames and n u32 frames with scopes, zero padding to a multiple of 8.
 */
#include "capture_access.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    INDEX_HEADER_BYTES = 72,
    INDEX_ENTRY_BYTES = 36,
    TAIL_DEFAULT_BYTES = 1024 * 1024,
    NUMBER_TEXT = 24
};

static int send_error(struct lws *wsi, http_session *s, unsigned int status, const char *reset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int send_error(struct lws *wsi, http_session *s, unsigned int status, const char *reset, const char *fmt, ...)
{
    static const char *const headers[] = {"cache-control:", "no-store", NULL};
    char msg[SERVER_TEXT_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_buf b;
    json_init(&b, SERVER_TEXT_MAX_BYTES * 4);
    json_raw(&b, "{\"error\":");
    json_str(&b, msg);
    if (reset) {
        json_raw(&b, ",\"reset\":");
        json_str(&b, reset);
    }
    json_raw(&b, "}");
    size_t len = 0;
    char *body = json_take(&b, &len);
    if (!body)
        return http_reply_text(wsi, s, 500, "500 out of memory\n");
    return http_reply(wsi, s, status, "application/json", headers, body, len, true);
}

/* A decimal query argument; `fallback` when absent; false when present and not a number. */
static bool arg_u64(struct lws *wsi, const char *name, uint64_t fallback, uint64_t *out)
{
    char buf[32];
    const char *v = lws_get_urlarg_by_name(wsi, name, buf, sizeof buf);
    *out = fallback;
    if (!v)
        return true;
    if (!*v || strlen(v) > 19)
        return false;
    uint64_t n = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    *out = n;
    return true;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    put64(p, b);
}

static void put_f32(uint8_t *p, float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    put32(p, b);
}

static uint64_t file_size(const indexed_capture *c)
{
    struct stat st;
    return stat(c->path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Sends `body` (owned) as a capture stream or index, with the x-vor-* headers given. */
static int send_binary(struct lws *wsi, http_session *s, const indexed_capture *c, uint8_t *body, size_t len,
                       const char *const *more)
{
    char gen[NUMBER_TEXT], head[NUMBER_TEXT];
    const char *headers[16] = {"cache-control:", "no-store", "x-vor-generation:", gen, "x-vor-header:", head};
    int n = 6;
    snprintf(gen, sizeof gen, "%" PRIu64, c->generation);
    snprintf(head, sizeof head, "%016" PRIx64, c->head_hash);
    for (; more && more[0] && n < 14; more += 2) {
        headers[n++] = more[0];
        headers[n++] = more[1];
    }
    headers[n] = NULL;
    return http_reply(wsi, s, 200, "application/octet-stream", headers, (char *)body, len, true);
}

static int serve_index(struct lws *wsi, http_session *s, indexed_capture *c)
{
    uint64_t from;
    if (!arg_u64(wsi, "from=", 0, &from))
        return send_error(wsi, s, 400, NULL, "bad from= (an entry number)");
    vor_index_entries en;
    vor_capture_index_entries(c->ix, &en);
    uint32_t first = from < en.count ? (uint32_t)from : en.count;
    uint32_t n = en.count - first;
    uint32_t room = (SERVER_RANGE_MAX_BYTES - INDEX_HEADER_BYTES) / INDEX_ENTRY_BYTES;
    if (n > room)
        n = room;
    size_t len = INDEX_HEADER_BYTES + (size_t)n * INDEX_ENTRY_BYTES;
    len = (len + 7) & ~(size_t)7;
    uint8_t *b = calloc(1, len);
    if (!b)
        return send_error(wsi, s, 500, NULL, "out of memory");
    size_t header_n = 0;
    uint32_t flags = (vor_capture_index_finished(c->ix) ? 1u : 0u) | (vor_capture_index_random_access(c->ix) ? 2u : 0u) |
                     (c->at_end ? 4u : 0u) | (vor_capture_index_header(c->ix, &header_n) ? 0u : 8u);
    memcpy(b, "VIDX", 4);
    put32(b + 4, 1);
    put32(b + 8, flags);
    put32(b + 12, en.stride);
    put32(b + 16, en.count);
    put32(b + 20, first);
    put32(b + 24, n);
    put64(b + 32, vor_capture_index_frames(c->ix));
    put64(b + 40, vor_capture_index_offset(c->ix));
    put64(b + 48, file_size(c));
    put64(b + 56, c->generation);
    put64(b + 64, c->head_hash);
    uint8_t *p = b + INDEX_HEADER_BYTES;
    for (uint32_t i = 0; i < n; i++)
        put_f64(p + 8 * i, (double)en.index[first + i]);
    p += 8 * (size_t)n;
    for (uint32_t i = 0; i < n; i++)
        put_f64(p + 8 * i, (double)en.start_ns[first + i]);
    p += 8 * (size_t)n;
    const float *floats[3] = {en.min_ns, en.max_ns, en.sum_ns};
    for (int k = 0; k < 3; k++, p += 4 * (size_t)n)
        for (uint32_t i = 0; i < n; i++)
            put_f32(p + 4 * i, floats[k][first + i]);
    const uint32_t *counts[2] = {en.frames, en.flame};
    for (int k = 0; k < 2; k++, p += 4 * (size_t)n)
        for (uint32_t i = 0; i < n; i++)
            put32(p + 4 * i, counts[k][first + i]);
    return send_binary(wsi, s, c, b, len, NULL);
}

/* header + state + file bytes [from, to): the body of a capture stream (NULL: out of memory). */
static uint8_t *stream_body(const indexed_capture *c, const vor_out *state, const uint8_t *bytes, size_t n,
                            size_t *len)
{
    size_t hn = 0;
    const uint8_t *header = vor_capture_index_header(c->ix, &hn);
    *len = hn + state->size + n;
    uint8_t *b = malloc(*len ? *len : 1);
    if (!b)
        return NULL;
    memcpy(b, header, hn);
    memcpy(b + hn, state->data, state->size);
    if (n)
        memcpy(b + hn + state->size, bytes, n);
    return b;
}

/* Reads the file's bytes [at, at + n) into a new buffer (NULL: failed, errno set). */
static uint8_t *read_bytes(const indexed_capture *c, uint64_t at, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    if (b && vor_capture_index_pread(c->ix, b, n, at) != (long)n) {
        free(b);
        if (!errno)
            errno = EIO;
        return NULL;
    }
    return b;
}

/* The state record for entry e (values exact), into `state`. */
static bool entry_state(const indexed_capture *c, uint32_t e, vor_out *state)
{
    vor_index_entries en;
    vor_capture_index_entries(c->ix, &en);
    uint64_t from;
    uint32_t snap;
    if (!vor_capture_index_state_source(c->ix, e, &from, &snap) || en.offset[e] - from > SERVER_RANGE_HARD_BYTES)
        return false;
    uint8_t *bytes = read_bytes(c, from, (size_t)(en.offset[e] - from));
    bool ok = bytes && vor_capture_index_state(c->ix, e, snap, bytes, (size_t)(en.offset[e] - from), state);
    free(bytes);
    return ok;
}

static int serve_frames(struct lws *wsi, http_session *s, indexed_capture *c)
{
    uint64_t from, to;
    if (!arg_u64(wsi, "from=", 0, &from) || !arg_u64(wsi, "to=", UINT64_MAX, &to) || to < from)
        return send_error(wsi, s, 400, NULL, "bad from= / to= (frame indexes, from <= to)");
    if (!vor_capture_index_random_access(c->ix))
        return send_error(wsi, s, 409, NULL, "this capture cannot be read from the middle (format 1.0, or no header yet)");
    vor_index_entries en;
    vor_capture_index_entries(c->ix, &en);
    int64_t found = vor_capture_index_find(c->ix, from);
    if (found < 0 || en.index[en.count - 1] + en.stride <= from)
        return send_error(wsi, s, 416, NULL, "frame %" PRIu64 " is not indexed (yet)", from);
    uint32_t e0 = (uint32_t)found;
    uint32_t e1 = (uint32_t)vor_capture_index_find(c->ix, to) + 1; /* entries [e0, e1) */
    uint64_t end = e1 < en.count ? en.offset[e1] : vor_capture_index_offset(c->ix);
    vor_out state = {0};
    state.max_capacity = SERVER_RANGE_HARD_BYTES;
    if (!entry_state(c, e0, &state)) {
        free(state.data);
        return send_error(wsi, s, 500, NULL, "cannot read the capture's state before frame %" PRIu64, en.index[e0]);
    }
    size_t hn = 0;
    vor_capture_index_header(c->ix, &hn);
    size_t prefix = hn + state.size;
    char next[NUMBER_TEXT] = "";
    if (prefix + (end - en.offset[e0]) > SERVER_RANGE_MAX_BYTES) {
        uint32_t lo = e0 + 1, hi = e1; /* the last entry boundary that fits */
        while (lo < hi) {
            uint32_t m = lo + (hi - lo + 1) / 2;
            if (prefix + (en.offset[m] - en.offset[e0]) <= SERVER_RANGE_MAX_BYTES) lo = m;
            else hi = m - 1;
        }
        if (prefix + (en.offset[lo] - en.offset[e0]) > SERVER_RANGE_HARD_BYTES) {
            free(state.data);
            return send_error(wsi, s, 413, NULL, "the records of frame %" PRIu64 " are larger than %d bytes",
                              en.index[e0], SERVER_RANGE_HARD_BYTES);
        }
        end = en.offset[lo];
        snprintf(next, sizeof next, "%" PRIu64, en.index[lo]);
    }
    uint8_t *bytes = read_bytes(c, en.offset[e0], (size_t)(end - en.offset[e0]));
    size_t len = 0;
    uint8_t *body = bytes ? stream_body(c, &state, bytes, (size_t)(end - en.offset[e0]), &len) : NULL;
    free(bytes);
    free(state.data);
    if (!body)
        return send_error(wsi, s, 500, NULL, "cannot read the capture: %s", strerror(errno));
    char first[NUMBER_TEXT];
    snprintf(first, sizeof first, "%" PRIu64, en.index[e0]);
    const char *more[] = {"x-vor-first-frame:", first, next[0] ? "x-vor-next-frame:" : NULL, next, NULL};
    return send_binary(wsi, s, c, body, len, more);
}

/* The entry whose record starts at byte `at`, or -1. */
static int64_t entry_at(const indexed_capture *c, uint64_t at)
{
    vor_index_entries en;
    vor_capture_index_entries(c->ix, &en);
    uint32_t lo = 0, hi = en.count;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (en.offset[m] < at) lo = m + 1;
        else hi = m;
    }
    return lo < en.count && en.offset[lo] == at ? (int64_t)lo : -1;
}

static int serve_tail(struct lws *wsi, http_session *s, indexed_capture *c)
{
    uint64_t want;
    if (!arg_u64(wsi, "bytes=", TAIL_DEFAULT_BYTES, &want) || want == 0)
        return send_error(wsi, s, 400, NULL, "bad bytes= (a positive count)");
    if (!vor_capture_index_random_access(c->ix))
        return send_error(wsi, s, 409, NULL, "this capture cannot be read from the middle (format 1.0, or no header yet)");
    size_t hn = 0;
    vor_capture_index_header(c->ix, &hn);
    uint64_t size = file_size(c);
    if (want > SERVER_RANGE_MAX_BYTES / 2)
        want = SERVER_RANGE_MAX_BYTES / 2;
    /* The first record that starts in the last `want` bytes, by its checks; a longer look when
     * no record starts there (one record longer than the window). */
    for (;;) {
        uint64_t start = size > hn + want ? size - want : hn;
        size_t n = (size_t)(size - start);
        uint8_t *buf = read_bytes(c, start, n);
        if (!buf)
            return send_error(wsi, s, 500, NULL, "cannot read the capture: %s", strerror(errno));
        size_t q = 0, len = 0;
        while (q < n && (len = vor_capture_intact_record(buf + q, n - q)) == 0)
            q++;
        if (q == n && start > hn && want < SERVER_RANGE_HARD_BYTES / 2) {
            free(buf);
            want *= 4;
            continue;
        }
        size_t endq = q;
        while (endq < n && (len = vor_capture_intact_record(buf + endq, n - endq)) > 0)
            endq += len;
        vor_out state = {0};
        state.max_capacity = SERVER_RANGE_HARD_BYTES;
        int64_t e = endq > q ? entry_at(c, start + q) : -1;
        bool ok = e >= 0 ? entry_state(c, (uint32_t)e, &state) : false;
        if (!ok) { /* not indexed yet: the names the index has read so far, no values */
            state.size = 0;
            state.failed = 0;
            ok = vor_capture_index_declarations(c->ix, &state);
        }
        size_t body_len = 0;
        uint8_t *body = ok ? stream_body(c, &state, buf + q, endq - q, &body_len) : NULL;
        free(buf);
        free(state.data);
        if (!body)
            return send_error(wsi, s, 500, NULL, "out of memory");
        char endtext[NUMBER_TEXT];
        snprintf(endtext, sizeof endtext, "%" PRIu64, endq > q ? start + endq : (q == n ? hn : start + q));
        const char *more[] = {"x-vor-end:", endtext, "x-vor-values:", e >= 0 ? "exact" : "unknown", NULL};
        return send_binary(wsi, s, c, body, body_len, more);
    }
}

static int serve_bytes(struct lws *wsi, http_session *s, indexed_capture *c)
{
    uint64_t from, max, head;
    char hexbuf[32];
    const char *h = lws_get_urlarg_by_name(wsi, "header=", hexbuf, sizeof hexbuf);
    if (!arg_u64(wsi, "from=", 0, &from) || !arg_u64(wsi, "max=", SERVER_RANGE_MAX_BYTES, &max) || max == 0)
        return send_error(wsi, s, 400, NULL, "bad from= / max= (byte counts)");
    char *endp = NULL;
    head = h ? strtoull(h, &endp, 16) : 0;
    if (h && (!*h || *endp))
        return send_error(wsi, s, 400, NULL, "bad header= (the x-vor-header of an earlier response)");
    if (h && c->head_hash && head != c->head_hash)
        return send_error(wsi, s, 409, "replaced", "the capture was rewritten by a new run");
    uint64_t size = file_size(c);
    if (from > size)
        return send_error(wsi, s, 409, "truncated", "the capture is shorter than byte %" PRIu64 ": truncated", from);
    if (max > SERVER_RANGE_MAX_BYTES)
        max = SERVER_RANGE_MAX_BYTES;
    size_t n = (size_t)(size - from < max ? size - from : max);
    uint8_t *body = read_bytes(c, from, n);
    if (!body)
        return send_error(wsi, s, 500, NULL, "cannot read the capture: %s", strerror(errno));
    char endtext[NUMBER_TEXT], sizetext[NUMBER_TEXT];
    snprintf(endtext, sizeof endtext, "%" PRIu64, from + n);
    snprintf(sizetext, sizeof sizetext, "%" PRIu64, size);
    const char *more[] = {"x-vor-end:", endtext, "x-vor-size:", sizetext, NULL};
    return send_binary(wsi, s, c, body, n, more);
}

int range_handle(struct lws *wsi, server *srv, http_session *s, const char *id_and_what)
{
    char id[32], err[512];
    const char *slash = strchr(id_and_what, '/');
    size_t idlen = slash ? (size_t)(slash - id_and_what) : 0;
    if (!slash || idlen == 0 || idlen >= sizeof id)
        return send_error(wsi, s, 404, NULL, "no such endpoint");
    memcpy(id, id_and_what, idlen);
    id[idlen] = '\0';
    const char *what = slash + 1;
    if (strcmp(what, "index") && strcmp(what, "frames") && strcmp(what, "tail") && strcmp(what, "bytes"))
        return send_error(wsi, s, 404, NULL, "no such endpoint: %s (index, frames, tail, bytes)", what);
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0)
        return send_error(wsi, s, 405, NULL, "method not allowed: GET only");
    registry_rescan(&srv->registry);
    const capture_entry *e = registry_find(&srv->registry, id);
    if (!e || !e->present)
        return send_error(wsi, s, 404, NULL, "unknown capture id: %s", id);
    indexed_capture *c = capture_access_get(srv, e, SERVER_INDEX_SLICE_MS, err, sizeof err);
    if (!c)
        return send_error(wsi, s, 500, NULL, "%s", err);
    const char *problem = vor_capture_index_error(c->ix);
    if (problem[0])
        return send_error(wsi, s, 422, NULL, "%s: unreadable capture: %s", e->name, problem);
    if (!strcmp(what, "index"))
        return serve_index(wsi, s, c);
    if (!strcmp(what, "frames"))
        return serve_frames(wsi, s, c);
    if (!strcmp(what, "tail"))
        return serve_tail(wsi, s, c);
    return serve_bytes(wsi, s, c);
}
