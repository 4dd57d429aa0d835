/*
 * ws_stream.c - the "vor-capture" websocket protocol: each viewer streams one capture file.
 *
 * Shape, and why:
 *   - The file is the buffer. A viewer is an open fd and an offset; on each writable event it
 *     preads one chunk (<= 64 KiB) at its offset into the one buffer shared by all viewers and
 *     hands it to lws_write. Nothing is queued per viewer, so memory does not grow with the
 *     capture, the number of frames, or how far behind a viewer is. lws_write keeps at most the
 *     unsent tail of that one chunk and reports writable again only once it is flushed.
 *   - Writes happen only in LWS_CALLBACK_SERVER_WRITEABLE, one frame per event (a pong owed to
 *     the client first, then a ping of ours, then data), so a slow or stalled socket simply stops
 *     being called back: it never delays other viewers or the loop.
 *   - lws writes, but does not read: after the handshake the viewer's socket is read by
 *     ws_input.c (strict RFC 6455 framing, which lws 4.1.6 does not enforce). So the close
 *     handshake is ours too: our close frame is framed here and written raw, then the peer's
 *     close or end of stream (seen by ws_input.c) or SERVER_ERROR_CLOSE_TIMEOUT_S ends the
 *     connection; after the peer's own close it ends right after ours.
 *   - Who may stream and who is stalled: viewer_slots.c. A viewer gets a slot once its request
 *     checked out (bad requests are refused at once, without waiting for a slot); a newcomer may
 *     wait up to SERVER_VIEWER_PENDING_MS for one. A viewer that ends gives its slot back at
 *     once, before its close handshake.
 *   - Policy for a viewer far behind a live capture: it is not dropped; it reads the file at
 *     its own pace and catches up when it can (the writer is never affected, it only appends).
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
 *   - Every terminal event (end, reset, refusal, client error, stop) goes through
 *     ws_stream_finish(): at most one final text message, then a close with a status and
 *     reason. The first terminal event wins; input after it is ignored. A viewer that cannot
 *     even take its final message is killed by an lws timeout after SERVER_ERROR_CLOSE_TIMEOUT_S.
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

size_t ws_stream_session_size(void) { return sizeof(viewer); }

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

void ws_stream_finish(viewer *v, int status, const char *reason, const char *text)
{
    if (v->phase == VIEWER_FINISHING)
        return;
    viewer_release_slot(v); /* it streams no more: the slot is free for someone else now */
    if (v->fd >= 0)
        close(v->fd);
    v->fd = -1;
    v->phase = VIEWER_FINISHING;
    v->ping_due = v->pong_due = false;
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
    v->tx_ms = server_now_ms();
    lws_set_timeout(v->wsi, PENDING_TIMEOUT_USER_OK, SERVER_ERROR_CLOSE_TIMEOUT_S);
    lws_callback_on_writable(v->wsi);
}

void ws_stream_fail(viewer *v, int status, const char *message)
{
    char text[SERVER_TEXT_MAX_BYTES];
    json_buf b;
    json_init_fixed(&b, text, sizeof text);
    json_raw(&b, "{\"type\":\"error\",\"message\":");
    json_str(&b, message);
    json_raw(&b, "}");
    ws_stream_finish(v, status, message, b.failed ? "{\"type\":\"error\",\"message\":\"error\"}" : text);
}

void ws_stream_drop(viewer *v)
{
    if (!v->wsi || v->dropped)
        return;
    v->dropped = true;
    viewer_release_slot(v);
    if (v->fd >= 0)
        close(v->fd);
    v->fd = -1;
    v->phase = VIEWER_FINISHING;
    v->text_pending = false;
    v->close_sent = true; /* nothing more will be written */
    v->peer_closed = true;
    v->ping_due = v->pong_due = false;
    lws_set_timeout(v->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void failf(viewer *v, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void failf(viewer *v, int status, const char *fmt, ...)
{
    char msg[SERVER_TEXT_MAX_BYTES / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ws_stream_fail(v, status, msg);
}

static void end_stream(viewer *v)
{
    char text[96];
    snprintf(text, sizeof text, "{\"type\":\"end\",\"bytes\":%llu}", (unsigned long long)v->offset);
    ws_stream_finish(v, LWS_CLOSE_STATUS_NORMAL, "end", text);
}

static void reset_stream(viewer *v, const char *reason)
{
    char text[128], why[64];
    snprintf(text, sizeof text, "{\"type\":\"reset\",\"reason\":\"%s\",\"bytes\":%llu}", reason,
             (unsigned long long)v->offset);
    snprintf(why, sizeof why, "capture %s", reason);
    ws_stream_finish(v, LWS_CLOSE_STATUS_NORMAL, why, text);
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
    if (!viewer_tx_pending(v))
        v->tx_ms = server_now_ms(); /* the stall clock runs only while bytes wait for the socket */
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
            ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION,
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
            ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "not a vor capture (bad magic)");
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
    unsigned char *buf = v->srv->chunk + LWS_PRE;
    int64_t now = server_now_ms();

    if (v->phase == VIEWER_FINISHING) {
        if (v->close_sent)
            return 0; /* waiting for the peer's close (or being dropped) */
        v->tx_ms = now;
        if (v->text_pending) {
            v->text_pending = false;
            memcpy(buf, v->text, v->text_len);
            if (lws_write(v->wsi, buf, v->text_len, LWS_WRITE_TEXT) < (int)v->text_len)
                return -1;
            lws_callback_on_writable(v->wsi);
            return 0;
        }
        /* The close frame, framed here and written raw: lws 4.1's own close path would send it
         * and then read the socket again to wait for the answer, beside ws_input.c. */
        size_t rl = strlen(v->close_reason);
        buf[0] = 0x88; /* FIN, close */
        buf[1] = (unsigned char)(2 + rl);
        buf[2] = (unsigned char)(v->close_status >> 8);
        buf[3] = (unsigned char)v->close_status;
        memcpy(buf + 4, v->close_reason, rl);
        if (lws_write(v->wsi, buf, 4 + rl, LWS_WRITE_RAW) < (int)(4 + rl))
            return -1;
        v->close_sent = true;
        /* After the peer's own close nothing more is awaited (nor when lws still reads this
         * socket itself): lws sends what it holds, then closes. Otherwise the peer's close, its
         * end of the stream or the timeout set by ws_stream_finish() ends the connection, so
         * what the peer still sends is read first: closing with unread data would reset the
         * connection and could lose our close frame on the way. */
        return v->peer_closed || v->fail_fast ? -1 : 0;
    }
    if (v->pong_due) {
        v->pong_due = false;
        memcpy(buf, v->pong, v->pong_len);
        if (lws_write(v->wsi, buf, v->pong_len, LWS_WRITE_PONG) < (int)v->pong_len)
            return -1;
        v->tx_ms = now;
        if (v->ping_due || v->phase == VIEWER_STREAMING)
            lws_callback_on_writable(v->wsi);
        return 0;
    }
    if (v->uploader)
        return ws_upload_writeable(v); /* acks; an uploader is never pinged (TCP keepalive) */
    if (v->ping_due) {
        v->ping_due = false;
        v->ping_seq++;
        for (int i = 0; i < 8; i++)
            buf[i] = (unsigned char)(v->ping_seq >> (56 - 8 * i));
        if (lws_write(v->wsi, buf, 8, LWS_WRITE_PING) < 8)
            return -1;
        v->ping_ms = v->tx_ms = now;
        if (v->phase == VIEWER_STREAMING)
            lws_callback_on_writable(v->wsi);
        return 0;
    }
    if (v->phase == VIEWER_STREAMING) {
        v->tx_ms = now;
        return stream_chunk(v);
    }
    return 0;
}

/* ---- connection set-up and client messages ---- */

/* The file and name of capture `id`: one given on the command line (FILES|DIRS), else one the
 * store holds (--store). false when there is none. */
static bool find_capture(server *srv, const char *id, char *path, size_t pathlen, char *name, size_t namelen)
{
    const capture_entry *e = registry_find(&srv->registry, id);
    if (!e || !e->present) { /* maybe a capture that appeared in a DIR since the last listing */
        registry_rescan(&srv->registry);
        e = registry_find(&srv->registry, id);
    }
    if (e && e->present) {
        snprintf(path, pathlen, "%s", e->path);
        snprintf(name, namelen, "%s", e->name);
        return true;
    }
    return srv->store && store_capture_path(srv->store, id, path, pathlen, name, namelen) == 0;
}

void ws_stream_start(viewer *v)
{
    server *srv = v->srv;
    unsigned char head[SERVER_CAPTURE_MAGIC_BYTES];
    struct stat st;
    char path[4096], name[STORE_FIELD_MAX_BYTES];

    if (!find_capture(srv, v->id, path, sizeof path, name, sizeof name)) {
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unknown capture id '%s'", v->id);
        return;
    }
    if (!(v->path = strdup(path))) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
        return;
    }
    /* Non-blocking open, regular files only: a FIFO here would block open(2) - and with it
     * the whole server - until some process opened it for writing. */
    v->fd = open_regular_file(v->path, 0, &st);
    if (v->fd == -2) {
        v->fd = -1;
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "%s is not a regular file (not streamed)", name);
        return;
    }
    if (v->fd < 0) {
        failf(v, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "cannot open %s: %s", name, strerror(errno));
        return;
    }
    v->dev = st.st_dev;
    v->ino = st.st_ino;
    ssize_t got = pread(v->fd, head, sizeof head, 0);
    if (got > 0 && capture_magic_check(head, (size_t)got) < 0) {
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "%s is not a vor capture (bad magic)", name);
        return;
    }
    v->phase = VIEWER_STREAMING;
    v->tx_ms = server_now_ms();
    viewer_schedule_check(srv);
    lws_callback_on_writable(v->wsi);
}

static void on_established(struct lws *wsi, viewer *v, server *srv)
{
    char uri[SERVER_URI_MAX_BYTES], arg[64];
    static const char prefix[] = "/capture/";

    memset(v, 0, sizeof *v);
    v->wsi = wsi;
    v->srv = srv;
    v->fd = -1;
    v->slot = -1;
    v->phase = VIEWER_STREAMING; /* not yet streaming: no slot, no file, nothing written */
    v->follow = !srv->opts->no_follow;
    v->since_ms = v->tx_ms = server_now_ms();
    srv->viewer_conns++;
    conn *c = server_conn(wsi);
    if (c)
        v->addr = c->addr;
    server_conn_state(wsi, CONN_VIEWER);

    if (ws_input_start(v) != 0) {
        v->fail_fast = true; /* lws still reads this one: do not wait for its close */
        ws_stream_fail(v, CLOSE_TRY_AGAIN_LATER, "server busy: cannot read this connection");
        return;
    }
    if (srv->stopping) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_GOINGAWAY, "server stopping");
        return;
    }
    const char *refused = server_refusal(wsi, srv, true);
    if (refused) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, refused);
        return;
    }
    int n = lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI);
    if (n > 0 && ws_upload_requested(uri)) {
        ws_upload_start(v);
        return;
    }
    if (!http_may_read(wsi, srv)) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "this server needs a token to read (add ?token=...)");
        return;
    }
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
    char path[4096], name[STORE_FIELD_MAX_BYTES];
    if (strlen(id) >= sizeof v->id || !find_capture(srv, id, path, sizeof path, name, sizeof name)) {
        failf(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unknown capture id '%s'", id);
        return;
    }
    memcpy(v->id, id, strlen(id) + 1);
    viewer_request_slot(v);
}

void ws_stream_on_text(viewer *v, const char *text, size_t len)
{
    client_msg msg;

    if (v->phase == VIEWER_FINISHING)
        return; /* already ending: ignore whatever else arrives */
    client_msg_kind kind = client_msg_parse(text, len, &msg);
    if (kind != CLIENT_MSG_FOLLOW) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, client_msg_problem(kind));
        return;
    }
    v->follow = msg.follow && !v->srv->opts->no_follow;
    if (!v->follow && v->phase == VIEWER_WAITING) /* parked at the end: end now */
        wake(v);
}

static void on_closed(viewer *v)
{
    server *srv = v->srv;
    if (v->uploader)
        ws_upload_closed(v);
    viewer_release_slot(v);
    ws_input_stop(v);
    if (v->fd >= 0)
        close(v->fd);
    v->fd = -1;
    free(v->path);
    v->path = NULL;
    v->wsi = NULL;
    v->phase = VIEWER_NONE;
    srv->viewer_conns--;
}

void ws_stream_close_all(server *srv)
{
    for (int i = 0; i < srv->opts->max_viewers; i++)
        if (srv->viewers[i])
            ws_stream_finish(srv->viewers[i], LWS_CLOSE_STATUS_GOINGAWAY, "server stopping", NULL);
    while (srv->pending_count > 0)
        ws_stream_finish(srv->pending[0], LWS_CLOSE_STATUS_GOINGAWAY, "server stopping", NULL);
    for (int i = 0; i < SERVER_MAX_UPLOADS; i++)
        if (srv->uploaders[i])
            ws_stream_finish(srv->uploaders[i], LWS_CLOSE_STATUS_GOINGAWAY, "server stopping", NULL);
}

int ws_stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    viewer *v = user;

    /* New HTTP connections are bound to this (default) protocol until lws routes them, so
     * anything but the websocket events is not ours: let lws's default handle it. The upgrade
     * request of a fresh connection is confirmed (Host/Origin check) here. */
    switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return server_confirm_upgrade(wsi, in);
    case LWS_CALLBACK_ESTABLISHED:
        if (!v)
            return -1;
        on_established(wsi, v, server_from_wsi(wsi));
        return 0;
    case LWS_CALLBACK_RECEIVE:
    case LWS_CALLBACK_RECEIVE_PONG:
        /* lws reads nothing after the handshake (ws_input.c does): a frame it parsed came in the
         * same read as the upgrade request, before our 101 - which RFC 6455 (4.1) forbids. */
        if (v && v->wsi == wsi) {
            v->fail_fast = true;
            ws_stream_fail(v, LWS_CLOSE_STATUS_PROTOCOL_ERR, "frame sent before the handshake response");
        }
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
