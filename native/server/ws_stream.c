/*
 * ws_stream.c - the "vor-capture" websocket protocol: each viewer streams one capture file.
 *
 * Shape, and why:
 *   - The file is the buffer. A viewer is an open fd and an offset; on each writable event it
 *     preads one chunk (<= 64 KiB) at its offset into the one buffer shared by all viewers and
 *     hands it to lws_write. Nothing is queued per viewer, so memory does not grow with the
 *     capture, the number of frames, or how far behind a viewer is. lws_write keeps at most the
 *     unsent tail of that one chunk and reports writable again only once it is flushed.
 *   - Writes happen only in LWS_CALLBACK_SERVER_WRITEABLE, one per event, so a slow or stalled
 *     socket simply stops being called back: it never delays other viewers or the loop.
 *   - Policy for a viewer far behind a live capture: it is not dropped; it reads the file at
 *     its own pace and catches up when it can (the writer is never affected, it only appends).
 *     A stalled viewer - one whose socket has not become writable for stall_timeout_ms while
 *     it had bytes to send - is closed (1008), so it gives its slot back; one lws timer
 *     (stall_sul), running while viewers exist, checks for them. A viewer parked at the end of
 *     a live capture is not "stalled": it is waiting for the file, not for its socket (a
 *     vanished peer there is found by TCP keepalive).
 *   - A viewer that reaches the end of the file while following is parked in VIEWER_WAITING;
 *     one lws timer (poll_sul) fstat()s the parked viewers every poll_interval_ms and wakes
 *     those whose file grew. The timer runs only while someone is parked. Polling instead of
 *     inotify: portable, no extra fd per file, and 50 ms is below what a panel can show.
 *   - Growth, truncation and replacement: bytes appended are sent; a file that shrinks below
 *     what was sent ("truncated"), or whose path now names another inode ("replaced") or nothing
 *     ("removed") ends the stream with a "reset" text message, detected once the viewer has
 *     caught up with the old file's bytes (which its fd still reads correctly).
 *   - A new run rewriting the same file in place (O_TRUNC, then more bytes than before by the
 *     next poll) keeps the inode and never looks smaller, so it is recognised by its header
 *     instead: the capture header (16 fixed bytes, the body, which holds the run's wall-clock
 *     start and pid, and its check; at most SERVER_HEADER_CHECK_BYTES) is fingerprinted (FNV-1a 64) as it is
 *     sent, and re-read and compared after every chunk is read and before it is sent, and when
 *     a parked viewer's file changed (mtime). A different header ends the stream with reset
 *     "replaced": no byte of the new run is appended to the old one. The cost is one small
 *     pread per 64 KiB chunk.
 *   - The first 8 bytes must be the capture magic before anything is sent; a file still shorter
 *     than that (being created) is waited for when following.
 *   - Only regular files are streamed; the file is opened non-blocking (open(2) of a FIFO
 *     would wait for a writer and freeze the whole server) and refused (1008) if it is not one.
 *   - The upgrade was already checked for a foreign Host/Origin (server.c, 403); ESTABLISHED
 *     checks again (1008) so no path to a stream skips it.
 *   - Every terminal event (end, reset, refusal, client error, stop) goes through finish():
 *     at most one final text message, then a close with a status and reason. The first
 *     terminal event wins; input after it is ignored. A viewer that cannot even take its final
 *     message is killed by an lws timeout after SERVER_ERROR_CLOSE_TIMEOUT_S.
 * The per-connection struct (lws per-session data) is ~5 KiB, mostly the 4 KiB buffer that
 * assembles a fragmented client message (bounded; larger messages are refused with 1009).
 */
#include "server_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    CLOSE_REASON_MAX_BYTES = 120, /* RFC 6455: a close reason is at most 123 bytes */
    CLOSE_TRY_AGAIN_LATER = 1013  /* registered status, not in lws 4.1's enum */
};

typedef enum viewer_phase {
    VIEWER_NONE = 0,   /* per-session data zeroed by lws: not (yet) a viewer */
    VIEWER_STREAMING,  /* a writable event is requested: read and send the next chunk */
    VIEWER_WAITING,    /* caught up while following: parked for the growth poll */
    VIEWER_FINISHING   /* final text message and/or close pending */
} viewer_phase;

struct viewer {
    struct lws *wsi;       /* set in ESTABLISHED: marks the struct as initialised */
    server *srv;
    viewer_phase phase;
    int slot;              /* index in srv->viewers, -1 when not counted (refused) */
    int fd;                /* the capture, -1 when not open */
    char *path;            /* for the replacement check */
    dev_t dev;
    ino_t ino;
    uint64_t offset;       /* bytes sent so far == next byte to read */
    int64_t progress_ms;   /* monotonic ms of the last writable event (or of having bytes again) */
    unsigned char head16[16]; /* the first 16 bytes as sent (header length at 12..15) */
    size_t head_len;       /* header bytes fingerprinted, 0 until the first 16 were sent */
    size_t head_hashed;    /* header bytes hashed so far (<= offset) */
    uint64_t head_hash;    /* FNV-1a 64 of the header bytes as sent */
    struct timespec head_mtime; /* the file's mtime when the header was last compared */
    bool follow;
    bool magic_ok;         /* the first 8 bytes were checked */
    bool head_done;        /* head_hash covers the whole header (head_len bytes) */
    bool text_pending;     /* FINISHING: text[] still to send */
    bool close_started;    /* FINISHING: the close was handed to lws; ignore later writables */
    size_t text_len;
    int close_status;
    char close_reason[CLOSE_REASON_MAX_BYTES + 1];
    char text[SERVER_TEXT_MAX_BYTES];
    size_t rx_len;         /* bytes of a fragmented client message assembled in rx[] */
    char rx[SERVER_CLIENT_MSG_MAX_BYTES];
};

size_t ws_stream_session_size(void) { return sizeof(viewer); }

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- capture header fingerprint ---- */

enum { HEADER_FIXED_BYTES = 16, HEADER_CHECK_BYTES = 4 };
#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

size_t capture_header_length(const unsigned char *first16)
{
    uint64_t body = (uint64_t)first16[12] | (uint64_t)first16[13] << 8 | (uint64_t)first16[14] << 16 |
                    (uint64_t)first16[15] << 24;
    uint64_t total = HEADER_FIXED_BYTES + body + HEADER_CHECK_BYTES;
    return total > SERVER_HEADER_CHECK_BYTES ? SERVER_HEADER_CHECK_BYTES : (size_t)total;
}

static uint64_t fnv_add(uint64_t h, const unsigned char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= bytes[i];
        h *= FNV_PRIME;
    }
    return h;
}

uint64_t capture_header_hash(const unsigned char *bytes, size_t n)
{
    return fnv_add(FNV_OFFSET, bytes, n);
}

/* Feeds the header part of the n bytes about to be sent at v->offset into the fingerprint. */
static void absorb_header(viewer *v, const unsigned char *buf, size_t n)
{
    uint64_t off = v->offset, end = off + n;
    if (v->head_done || v->head_hashed < off)
        return;
    if (v->head_hashed == 0)
        v->head_hash = FNV_OFFSET;
    for (uint64_t i = off; i < end && i < HEADER_FIXED_BYTES; i++)
        v->head16[i] = buf[i - off];
    if (!v->head_len && end >= HEADER_FIXED_BYTES)
        v->head_len = capture_header_length(v->head16);
    uint64_t upto = v->head_len ? v->head_len : HEADER_FIXED_BYTES;
    if (end < upto)
        upto = end;
    if (upto > v->head_hashed) {
        v->head_hash = fnv_add(v->head_hash, buf + (v->head_hashed - off), (size_t)(upto - v->head_hashed));
        v->head_hashed = (size_t)upto;
    }
    if (v->head_len && v->head_hashed == v->head_len)
        v->head_done = true;
}

/* Is the file's header still the one this viewer sent? NULL when it is (or is not known yet),
 * else the reset reason. */
static const char *header_changed(viewer *v)
{
    unsigned char buf[SERVER_HEADER_CHECK_BYTES];
    if (!v->head_done)
        return NULL;
    ssize_t got;
    do
        got = pread(v->fd, buf, v->head_len, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return NULL; /* a read error shows up on the next chunk read */
    if ((size_t)got < v->head_len)
        return "truncated";
    return capture_header_hash(buf, v->head_len) == v->head_hash ? NULL : "replaced";
}

/* ---- terminal events ---- */

static void finish(viewer *v, int status, const char *reason, const char *text)
{
    if (v->phase == VIEWER_FINISHING)
        return;
    v->phase = VIEWER_FINISHING;
    v->close_status = status;
    /* Cut the reason at a UTF-8 character boundary within the RFC's limit. */
    size_t n = strlen(reason);
    if (n > CLOSE_REASON_MAX_BYTES) {
        n = CLOSE_REASON_MAX_BYTES;
        while (n > 0 && ((unsigned char)reason[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(v->close_reason, reason, n);
    v->close_reason[n] = '\0';
    v->text_pending = false;
    if (text) {
        size_t tl = strlen(text);
        if (tl < sizeof v->text) {
            memcpy(v->text, text, tl + 1);
            v->text_len = tl;
            v->text_pending = true;
        }
    }
    lws_set_timeout(v->wsi, PENDING_TIMEOUT_USER_OK, SERVER_ERROR_CLOSE_TIMEOUT_S);
    lws_callback_on_writable(v->wsi);
}

static void fail_viewer(viewer *v, int status, const char *message)
{
    char text[SERVER_TEXT_MAX_BYTES];
    json_buf b;
    json_init_fixed(&b, text, sizeof text);
    json_raw(&b, "{\"type\":\"error\",\"message\":");
    json_str(&b, message);
    json_raw(&b, "}");
    finish(v, status, message, b.failed ? "{\"type\":\"error\",\"message\":\"error\"}" : text);
}

static void failf(viewer *v, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void failf(viewer *v, int status, const char *fmt, ...)
{
    char msg[SERVER_TEXT_MAX_BYTES / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fail_viewer(v, status, msg);
}

static void end_stream(viewer *v)
{
    char text[96];
    snprintf(text, sizeof text, "{\"type\":\"end\",\"bytes\":%llu}", (unsigned long long)v->offset);
    finish(v, LWS_CLOSE_STATUS_NORMAL, "end", text);
}

static void reset_stream(viewer *v, const char *reason)
{
    char text[128], why[64];
    snprintf(text, sizeof text, "{\"type\":\"reset\",\"reason\":\"%s\",\"bytes\":%llu}", reason,
             (unsigned long long)v->offset);
    snprintf(why, sizeof why, "capture %s", reason);
    finish(v, LWS_CLOSE_STATUS_NORMAL, why, text);
}

/* ---- growth polling ---- */

static void poll_tick(lws_sorted_usec_list_t *sul);

static void schedule_poll(server *srv)
{
    if (srv->poll_scheduled || srv->stopping)
        return;
    srv->poll_scheduled = true;
    lws_sul_schedule(srv->context, 0, &srv->poll_sul, poll_tick,
                     (lws_usec_t)srv->opts->poll_interval_ms * LWS_US_PER_MS);
}

/* Back to streaming (from parked, or still streaming): a writable event is requested. */
static void wake(viewer *v)
{
    if (v->phase == VIEWER_WAITING)
        v->progress_ms = now_ms(); /* the stall clock runs only while bytes wait for the socket */
    v->phase = VIEWER_STREAMING;
    lws_callback_on_writable(v->wsi);
}

/* The file at v->path is still the one v->fd reads? Sets *why when not. */
static bool same_file(const viewer *v, const char **why)
{
    struct stat st;
    if (stat(v->path, &st) != 0) {
        *why = "removed";
        return false;
    }
    if (st.st_dev != v->dev || st.st_ino != v->ino) {
        *why = "replaced";
        return false;
    }
    return true;
}

/*
 * Checks a viewer with no bytes left to read: wakes it if the file grew meanwhile, ends or resets
 * the stream, or parks it. Returns true when parked (it then needs the poll).
 */
static bool settle_at_eof(viewer *v)
{
    struct stat st;
    const char *why = NULL;

    if (fstat(v->fd, &st) != 0) {
        failf(v, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "cannot stat the capture: %s", strerror(errno));
        return false;
    }
    uint64_t size = (uint64_t)st.st_size;
    uint64_t have = v->magic_ok ? v->offset : SERVER_CAPTURE_MAGIC_BYTES - 1;
    if (size < v->offset) {
        reset_stream(v, "truncated");
        return false;
    }
    if (v->head_done && (st.st_mtim.tv_sec != v->head_mtime.tv_sec || st.st_mtim.tv_nsec != v->head_mtime.tv_nsec)) {
        /* Written to since the last look: rewritten in place by a new run? */
        const char *changed = header_changed(v);
        if (changed) {
            reset_stream(v, changed);
            return false;
        }
        v->head_mtime = st.st_mtim;
    }
    if (size > have) { /* grew since the last read: go on streaming */
        wake(v);
        return false;
    }
    if (!v->follow) {
        if (!v->magic_ok)
            fail_viewer(v, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                        "capture is empty or incomplete (shorter than its 8-byte magic)");
        else
            end_stream(v);
        return false;
    }
    if (!same_file(v, &why)) {
        reset_stream(v, why);
        return false;
    }
    v->phase = VIEWER_WAITING;
    return true;
}

static void poll_tick(lws_sorted_usec_list_t *sul)
{
    server *srv = lws_container_of(sul, server, poll_sul);
    bool again = false;

    srv->poll_scheduled = false;
    for (int i = 0; i < srv->opts->max_viewers; i++) {
        viewer *v = srv->viewers[i];
        if (v && v->phase == VIEWER_WAITING && settle_at_eof(v))
            again = true;
    }
    if (again)
        schedule_poll(srv);
}

/* ---- streaming ---- */

static int stream_chunk(viewer *v)
{
    server *srv = v->srv;
    unsigned char *buf = srv->chunk + LWS_PRE;
    ssize_t n = pread(v->fd, buf, SERVER_CHUNK_BYTES, (off_t)v->offset);

    if (n < 0) {
        if (errno == EINTR) {
            lws_callback_on_writable(v->wsi);
            return 0;
        }
        failf(v, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "cannot read the capture: %s", strerror(errno));
        return 0;
    }
    if (!v->magic_ok) { /* offset is 0 here: nothing has been sent yet */
        int m = capture_magic_check(buf, (size_t)n);
        if (m < 0) {
            fail_viewer(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "not a vor capture (bad magic)");
            return 0;
        }
        if (m == 0)
            n = 0; /* fewer than 8 bytes so far: as if at the end, wait for more */
        else
            v->magic_ok = true;
    }
    if (n == 0) {
        if (settle_at_eof(v))
            schedule_poll(srv);
        return 0;
    }
    absorb_header(v, buf, (size_t)n);
    /* These bytes may already be a new run's, if the file was rewritten in place since the
     * header was sent: compare the header now that the chunk is read, before sending it. */
    const char *changed = header_changed(v);
    if (changed) {
        reset_stream(v, changed);
        return 0;
    }
    if (lws_write(v->wsi, buf, (size_t)n, LWS_WRITE_BINARY) < (int)n)
        return -1;
    v->offset += (uint64_t)n;
    lws_callback_on_writable(v->wsi);
    return 0;
}

static int on_writeable(viewer *v)
{
    if (v->phase == VIEWER_FINISHING) {
        if (v->text_pending) {
            unsigned char *buf = v->srv->chunk + LWS_PRE;
            v->text_pending = false;
            memcpy(buf, v->text, v->text_len);
            if (lws_write(v->wsi, buf, v->text_len, LWS_WRITE_TEXT) < (int)v->text_len)
                return -1;
            lws_callback_on_writable(v->wsi);
            return 0;
        }
        /* lws now sends the close frame and waits for the peer's; it may still report the
         * socket writable meanwhile, and a second -1 would make it drop the connection at once,
         * resetting it (unread client data) and losing the frames just sent. */
        if (v->close_started)
            return 0;
        v->close_started = true;
        lws_close_reason(v->wsi, (enum lws_close_status)v->close_status,
                         (unsigned char *)v->close_reason, strlen(v->close_reason));
        return -1;
    }
    if (v->phase == VIEWER_STREAMING) {
        v->progress_ms = now_ms();
        return stream_chunk(v);
    }
    return 0;
}

/* ---- stalled viewers ---- */

static void stall_tick(lws_sorted_usec_list_t *sul);

static int stall_period_ms(const server *srv)
{
    int p = srv->opts->stall_timeout_ms / 4;
    return p < 10 ? 10 : p > 1000 ? 1000 : p;
}

static void schedule_stall_check(server *srv)
{
    if (srv->stall_scheduled || srv->stopping || srv->opts->stall_timeout_ms == VOR_SERVER_STALL_NEVER ||
        srv->viewer_count == 0)
        return;
    srv->stall_scheduled = true;
    lws_sul_schedule(srv->context, 0, &srv->stall_sul, stall_tick,
                     (lws_usec_t)stall_period_ms(srv) * LWS_US_PER_MS);
}

static void stall_tick(lws_sorted_usec_list_t *sul)
{
    server *srv = lws_container_of(sul, server, stall_sul);
    int64_t now = now_ms(), limit = srv->opts->stall_timeout_ms;

    srv->stall_scheduled = false;
    for (int i = 0; i < srv->opts->max_viewers; i++) {
        viewer *v = srv->viewers[i];
        if (v && v->phase == VIEWER_STREAMING && now - v->progress_ms >= limit) {
            char why[96];
            /* It cannot take bytes, so most likely not this close either: lws drops it after
             * SERVER_ERROR_CLOSE_TIMEOUT_S. Its slot is free once it is closed. */
            snprintf(why, sizeof why, "viewer stalled: took no data for %lld ms", (long long)limit);
            finish(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, why, NULL);
        }
    }
    schedule_stall_check(srv);
}

/* ---- connection set-up and client messages ---- */

static int free_slot(const server *srv)
{
    for (int i = 0; i < srv->opts->max_viewers; i++)
        if (!srv->viewers[i])
            return i;
    return -1;
}

static void on_established(struct lws *wsi, viewer *v, server *srv)
{
    char uri[SERVER_URI_MAX_BYTES], arg[64];
    unsigned char head[SERVER_CAPTURE_MAGIC_BYTES];
    struct stat st;
    static const char prefix[] = "/capture/";

    memset(v, 0, sizeof *v);
    v->wsi = wsi;
    v->srv = srv;
    v->fd = -1;
    v->slot = -1;
    v->phase = VIEWER_STREAMING;
    v->follow = !srv->opts->no_follow;

    if (srv->stopping) {
        fail_viewer(v, LWS_CLOSE_STATUS_GOINGAWAY, "server stopping");
        return;
    }
    const char *refused = server_refusal(wsi, srv, true);
    if (refused) {
        fail_viewer(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, refused);
        return;
    }
    int n = lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI);
    if (n <= 0 || strncmp(uri, prefix, sizeof prefix - 1) != 0 || !uri[sizeof prefix - 1]) {
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "bad URL '%s': expected /capture/<id>",
              n > 0 ? uri : "");
        return;
    }
    const char *id = uri + sizeof prefix - 1;
    const char *f = lws_get_urlarg_by_name(wsi, "follow=", arg, sizeof arg);
    if (f) {
        if (!strcmp(f, "0") || !strcmp(f, "false"))
            v->follow = false;
        else if (strcmp(f, "1") && strcmp(f, "true")) {
            failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "bad follow value '%s' (use 0 or 1)", f);
            return;
        }
    }
    int slot = free_slot(srv);
    if (slot < 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "too many viewers (max %d)", srv->opts->max_viewers);
        fail_viewer(v, CLOSE_TRY_AGAIN_LATER, msg);
        return;
    }
    const capture_entry *e = registry_find(&srv->registry, id);
    if (!e || !e->present) { /* maybe a capture that appeared in a DIR since the last listing */
        registry_rescan(&srv->registry);
        e = registry_find(&srv->registry, id);
    }
    if (!e || !e->present) {
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unknown capture id '%s'", id);
        return;
    }
    if (!(v->path = strdup(e->path))) {
        fail_viewer(v, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
        return;
    }
    /* Non-blocking open, regular files only: a FIFO here would block open(2) - and with it
     * the whole server - until some process opened it for writing. */
    v->fd = open_regular_file(v->path, 0, &st);
    if (v->fd == -2) {
        v->fd = -1;
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "%s is not a regular file (not streamed)", e->name);
        return;
    }
    if (v->fd < 0) {
        failf(v, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "cannot open %s: %s", e->name, strerror(errno));
        return;
    }
    v->dev = st.st_dev;
    v->ino = st.st_ino;
    ssize_t got = pread(v->fd, head, sizeof head, 0);
    if (got > 0 && capture_magic_check(head, (size_t)got) < 0) {
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "%s is not a vor capture (bad magic)", e->name);
        return;
    }
    srv->viewers[slot] = v;
    v->slot = slot;
    srv->viewer_count++;
    v->progress_ms = now_ms();
    schedule_stall_check(srv);
    lws_callback_on_writable(wsi);
}

static void on_receive(viewer *v, const void *in, size_t len)
{
    client_msg msg;

    if (v->phase == VIEWER_FINISHING)
        return; /* already ending: ignore whatever else arrives */
    if (lws_frame_is_binary(v->wsi)) {
        fail_viewer(v, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
                    "binary messages are not accepted (send JSON text)");
        return;
    }
    if (len > sizeof v->rx - v->rx_len) {
        fail_viewer(v, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message too large (max 4096 bytes)");
        return;
    }
    memcpy(v->rx + v->rx_len, in, len);
    v->rx_len += len;
    if (!lws_is_final_fragment(v->wsi))
        return;
    client_msg_kind kind = client_msg_parse(v->rx, v->rx_len, &msg);
    v->rx_len = 0;
    if (kind != CLIENT_MSG_FOLLOW) {
        fail_viewer(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, client_msg_problem(kind));
        return;
    }
    v->follow = msg.follow && !v->srv->opts->no_follow;
    if (!v->follow && v->phase == VIEWER_WAITING) /* parked at the end: end now */
        wake(v);
}

static void on_closed(viewer *v)
{
    server *srv = v->srv;
    if (v->slot >= 0) {
        srv->viewers[v->slot] = NULL;
        srv->viewer_count--;
        v->slot = -1;
    }
    if (v->fd >= 0)
        close(v->fd);
    v->fd = -1;
    free(v->path);
    v->path = NULL;
    v->wsi = NULL;
    v->phase = VIEWER_NONE;
}

void ws_stream_close_all(server *srv)
{
    for (int i = 0; i < srv->opts->max_viewers; i++)
        if (srv->viewers[i])
            finish(srv->viewers[i], LWS_CLOSE_STATUS_GOINGAWAY, "server stopping", NULL);
}

int ws_stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    viewer *v = user;

    /* New HTTP connections are bound to this (default) protocol until lws routes them, so
     * anything but the websocket events is not ours: let lws's default handle it. The upgrade
     * request of a fresh connection is confirmed (Host/Origin check) here. */
    switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return server_confirm_upgrade(wsi);
    case LWS_CALLBACK_ESTABLISHED:
        if (!v)
            return -1;
        on_established(wsi, v, server_from_wsi(wsi));
        return 0;
    case LWS_CALLBACK_RECEIVE:
        if (v && v->wsi == wsi)
            on_receive(v, in, len);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        if (v && v->wsi == wsi)
            return on_writeable(v);
        return 0;
    case LWS_CALLBACK_CLOSED:
        if (v && v->wsi == wsi)
            on_closed(v);
        return 0;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}
