/*
 * ws_upload.c - the "vor-upload" websocket protocol: a client sends a capture to the store.
 *
 * One protocol for every uploader: `vor upload`, a running program (VOR_UPLOAD, core/src/
 * upload_*.c) and a browser page (Module.vorUpload) - browsers cannot stream an HTTP request
 * body, a websocket they can, and the server's answers (the offset it holds, acks) travel on the
 * same connection, which is what makes an upload resumable without re-sending anything.
 *
 *   ws://HOST:PORT/upload   (subprotocol "vor-upload")
 *   client, text    {"type":"hello","key":K,"project":P,"tags":{"k":"v"},"name":N,"host":H,
 *                    "token":T}    first; K (8-64 of [A-Za-z0-9._-]) names the capture within
 *                   the project: the same K resumes it. At most 4 KiB.
 *   server, text    {"type":"offset","id":ID,"bytes":N}   send the capture's bytes from N on
 *                   {"type":"done","id":ID,"bytes":N,"state":"complete","already":true} (and
 *                   close 1000) when it was stored completely before
 *   client, binary  the capture's bytes, in order, from N; any message sizes
 *   server, text    {"type":"ack","bytes":N}     N bytes (whole records) are stored
 *   client, text    {"type":"finish"}            nothing more will come (a capture without its
 *                   end record is then stored as "cut")
 *   server, text    {"type":"done","id":ID,"bytes":N,"state":"complete"|"cut"}, close 1000:
 *                   after the end record, or after "finish"
 *                   {"type":"error","message":M}, close 1008 (refused: a bad token, a foreign or
 *                   damaged capture, bytes after the end record, the store full), 1009 (over the
 *                   size limit), 1011 (the server failed), 1013 (too many uploads: try later)
 * A dropped connection leaves the capture "open": the next hello with the same key resumes at
 * the offset the server holds. Refusals are final; the client reports them and does not retry.
 *
 * Uploaders share the viewers' connection code (ws_stream.c: the close handshake, pings and
 * pongs, strict frames read by ws_input.c), but take no viewer slot: at most SERVER_MAX_UPLOADS
 * at once, SERVER_UPLOADS_PER_ADDRESS from one address. Their socket is read at most
 * 4 x SERVER_UPLOAD_READ_BYTES per wake-up (ws_input.c), so a fast uploader takes its turn like
 * everyone else and a slow one only delays itself: nothing is buffered for it but the one record
 * in progress (store_framing.c).
 */
#include "server_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool ws_upload_requested(const char *uri)
{
    return !strncmp(uri, "/upload", 7) && (uri[7] == '\0' || uri[7] == '?');
}

static int from_address(const server *srv, const peer_addr *a)
{
    int n = 0;
    for (int i = 0; i < SERVER_MAX_UPLOADS; i++)
        n += srv->uploaders[i] && peer_addr_equal(&srv->uploaders[i]->addr, a);
    return n;
}

void ws_upload_wake(void *user)
{
    server *srv = user;
    if (srv->context)
        lws_cancel_service(srv->context);
}

void ws_upload_end(void *user, void *owner, int status, const char *problem)
{
    (void)user;
    viewer *v = owner;
    if (v && v->wsi && v->phase != VIEWER_FINISHING)
        ws_stream_fail(v, status, problem);
}

void ws_upload_start(viewer *v)
{
    server *srv = v->srv;
    v->uploader = true;
    v->rx.binary_ok = true;
    v->phase = VIEWER_WAITING; /* nothing to send until the hello */
    if (!srv->store) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                       "this server keeps no captures (start it with vor serve --store DIR)");
        return;
    }
    if (srv->upload_conns >= SERVER_MAX_UPLOADS) {
        ws_stream_fail(v, CLOSE_TRY_AGAIN_LATER, "too many uploads at once (try again later)");
        return;
    }
    if (from_address(srv, &v->addr) >= SERVER_UPLOADS_PER_ADDRESS) {
        ws_stream_fail(v, CLOSE_TRY_AGAIN_LATER, "too many uploads from your address (try again later)");
        return;
    }
    for (int i = 0; i < SERVER_MAX_UPLOADS; i++)
        if (!srv->uploaders[i]) {
            srv->uploaders[i] = v;
            break;
        }
    srv->upload_conns++;
    v->counted = true;
}

/* A text message to send before the next ack. */
static void queue_text(viewer *v, const char *text)
{
    size_t n = strlen(text);
    if (n >= sizeof v->utext)
        n = sizeof v->utext - 1;
    memcpy(v->utext, text, n);
    v->utext_len = n;
    v->phase = VIEWER_STREAMING;
    lws_callback_on_writable(v->wsi);
}

static void finish_done(viewer *v, bool already)
{
    char text[256];
    snprintf(text, sizeof text, "{\"type\":\"done\",\"id\":\"%s\",\"bytes\":%" PRIu64 ",\"state\":\"%s\"%s}",
             upload_id(v->up), upload_offset(v->up), store_state_name(v->up->meta.state),
             already ? ",\"already\":true" : "");
    ws_stream_finish(v, LWS_CLOSE_STATUS_NORMAL, "done", text);
}

static void on_hello(viewer *v, const json_object *hello)
{
    server *srv = v->srv;
    char err[256], peer[64] = "";
    int status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
    const json_member *token = store_json_get(hello, "token");
    if (!http_may_write(srv, token && token->kind == 's' ? token->str : NULL)) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                       token ? "upload refused: bad token" : "upload refused: this server needs a token (\"token\" in the hello)");
        return;
    }
    lws_get_peer_simple(v->wsi, peer, sizeof peer);
    upload *u = NULL;
    upload_answer a = store_upload_begin(srv->store, hello, peer, v, &u, &status, err, sizeof err);
    if (a == UPLOAD_REFUSED) {
        ws_stream_fail(v, status, err);
        return;
    }
    v->up = u;
    if (a == UPLOAD_ALREADY) {
        finish_done(v, true);
        return;
    }
    char text[160];
    v->stored_said = upload_offset(u);
    snprintf(text, sizeof text, "{\"type\":\"offset\",\"id\":\"%s\",\"bytes\":%" PRIu64 "}", upload_id(u), v->stored_said);
    queue_text(v, text);
}

void ws_upload_on_text(viewer *v, const char *text, size_t len)
{
    json_object *o;
    char err[160];
    if (v->phase == VIEWER_FINISHING)
        return;
    /* The parse arena is ~10 KiB: kept off the stack of the service thread's deep callbacks. */
    static json_object parsed; /* one service thread: never used by two callers at once */
    o = &parsed;
    if (store_json_parse(text, len, o, err, sizeof err)) {
        char msg[200];
        snprintf(msg, sizeof msg, "bad JSON: %s", err);
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, msg);
        return;
    }
    const json_member *type = store_json_get(o, "type");
    if (!v->up) {
        on_hello(v, o);
        return;
    }
    if (type && type->kind == 's' && !strcmp(type->str, "finish")) {
        store_upload_finish(v->up);
        finish_done(v, false);
        return;
    }
    ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "unknown message (after the hello: bytes, or {\"type\":\"finish\"})");
}

void ws_upload_on_data(viewer *v, const unsigned char *data, size_t len)
{
    char err[300];
    int status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
    if (v->phase == VIEWER_FINISHING || len == 0)
        return;
    if (!v->up) {
        ws_stream_fail(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, "send the hello before the capture's bytes");
        return;
    }
    int rc = store_upload_feed(v->up, data, len, &status, err, sizeof err);
    if (rc < 0) {
        ws_stream_fail(v, status, err);
        return;
    }
    if (rc == 1) {
        finish_done(v, false);
        return;
    }
    if (upload_offset(v->up) != v->stored_said)
        v->ack_due = true;
}

void ws_upload_after_read(viewer *v)
{
    if (v->ack_due && v->phase != VIEWER_FINISHING) {
        v->phase = VIEWER_STREAMING;
        lws_callback_on_writable(v->wsi);
    }
}

int ws_upload_writeable(viewer *v)
{
    unsigned char *buf = v->srv->chunk + LWS_PRE;
    if (v->utext_len) {
        memcpy(buf, v->utext, v->utext_len);
        size_t n = v->utext_len;
        v->utext_len = 0;
        if (lws_write(v->wsi, buf, n, LWS_WRITE_TEXT) < (int)n)
            return -1;
        if (v->ack_due)
            lws_callback_on_writable(v->wsi);
        else
            v->phase = VIEWER_WAITING;
        return 0;
    }
    if (v->ack_due && v->up) {
        v->ack_due = false;
        v->stored_said = upload_offset(v->up);
        int n = snprintf((char *)buf, 96, "{\"type\":\"ack\",\"bytes\":%" PRIu64 "}", v->stored_said);
        if (lws_write(v->wsi, buf, (size_t)n, LWS_WRITE_TEXT) < n)
            return -1;
    }
    v->phase = VIEWER_WAITING;
    return 0;
}

void ws_upload_closed(viewer *v)
{
    if (v->up) {
        store_upload_release(v->up);
        v->up = NULL;
    }
    if (v->counted) {
        for (int i = 0; i < SERVER_MAX_UPLOADS; i++)
            if (v->srv->uploaders[i] == v)
                v->srv->uploaders[i] = NULL;
        v->srv->upload_conns--;
        v->counted = false;
    }
}
