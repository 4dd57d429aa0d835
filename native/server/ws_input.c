/*
 * ws_input.c - reads what a viewer sends, in place of libwebsockets.
 *
 * Why: lws 4.1.6 accepts client frames RFC 6455 forbids (unmasked ones, control frames with a
 * 16-bit length) and has no hook to see a frame header, so after the handshake the server stops
 * lws from reading the viewer's socket (lws_rx_flow_control) and reads it itself through a
 * duplicate of the descriptor, put in lws's poll loop as a raw descriptor of the raw vhost (the
 * "reader"). Frames are parsed strictly by ws_frames.c; lws keeps writing to the socket through
 * the viewer's own wsi. A duplicate descriptor rather than the same one: lws maps one descriptor
 * to one wsi.
 * What the reader does with each event:
 *   text   -> ws_stream_on_text() (the {"type":"follow"} message)
 *   ping   -> a pong with the same payload, sent before anything else (only the latest is owed)
 *   pong   -> viewer_note_pong() (liveness, viewer_slots.c)
 *   close  -> our close in return (its status echoed), then the connection ends; if ours was
 *             already sent, the close handshake is complete and the connection ends now
 *   error  -> ws_stream_fail() with the frame's status (1002, 1003, 1007, 1009); what follows
 *             is read and ignored until the peer closes (or the close timeout)
 *   end of stream or a socket error -> the connection ends (nothing more can be read)
 * Frames a client sends before the handshake response (RFC 6455 4.1 forbids it) may already sit
 * in lws's buffer when it stops reading: they are never read, neither by lws nor here.
 * The reader lives exactly as long as the viewer: each closes the other; its opaque pointer
 * (the viewer) is cleared first, so a late callback finds nothing to touch.
 * Per wake-up at most READ_ROUNDS reads of READ_BYTES, so a client flooding pings cannot hold
 * the loop; what is left is read on the next wake-up. Uploaders (ws_upload.c) send whole captures:
 * their reads are SERVER_UPLOAD_READ_BYTES, into one buffer shared by all of them, where binary
 * payload is unmasked in place and handed to the store as it comes.
 */
#include "server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { READ_BYTES = 4096, READ_ROUNDS = 4 };

int ws_input_start(viewer *v)
{
    int fd = lws_get_socket_fd(v->wsi);
    int copy = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (copy < 0)
        return -1;
    lws_adopt_desc_t info;
    memset(&info, 0, sizeof info);
    info.vh = v->srv->raw_vhost;
    info.type = LWS_ADOPT_RAW_FILE_DESC;
    info.fd.filefd = copy;
    info.vh_prot_name = "vor-raw";
    info.opaque = v;
    v->reader = lws_adopt_descriptor_vhost_via_info(&info);
    if (!v->reader) {
        close(copy);
        return -1;
    }
    ws_reader_init(&v->rx);
    lws_rx_flow_control(v->wsi, 0); /* lws reads nothing more from this socket */
    return 0;
}

void ws_input_stop(viewer *v)
{
    struct lws *reader = v->reader;
    if (!reader)
        return;
    v->reader = NULL;
    lws_set_opaque_user_data(reader, NULL);
    if (!v->srv->destroying)
        lws_set_timeout(reader, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void on_ping(viewer *v, const unsigned char *data, size_t len)
{
    if (v->phase == VIEWER_FINISHING)
        return;
    if (!viewer_tx_pending(v))
        v->tx_ms = server_now_ms();
    memcpy(v->pong, data, len);
    v->pong_len = len;
    v->pong_due = true;
    lws_callback_on_writable(v->wsi);
}

/* The peer's close frame (status 1005: none given). */
static void on_close(viewer *v, int status)
{
    v->peer_closed = true;
    if (v->close_sent) {
        ws_stream_drop(v); /* ours went first: the handshake is complete */
        return;
    }
    /* Echo its status (RFC 6455 5.5.1); our close then ends the connection (peer_closed). */
    ws_stream_finish(v, status == 1005 ? LWS_CLOSE_STATUS_NORMAL : status, "", NULL);
}

/* Feeds n bytes to the frame reader. Returns false once nothing more should be read. */
static bool feed(viewer *v, unsigned char *buf, size_t n)
{
    for (size_t off = 0; off < n;) {
        ws_event ev;
        off += v->uploader ? ws_reader_feed_binary(&v->rx, buf + off, n - off, &ev)
                           : ws_reader_feed(&v->rx, buf + off, n - off, &ev);
        switch (ev.kind) {
        case WS_EV_NONE:
            break;
        case WS_EV_TEXT:
            if (v->uploader)
                ws_upload_on_text(v, (const char *)ev.data, ev.len);
            else
                ws_stream_on_text(v, (const char *)ev.data, ev.len);
            break;
        case WS_EV_BINARY:
            ws_upload_on_data(v, ev.data, ev.len);
            break;
        case WS_EV_PING:
            on_ping(v, ev.data, ev.len);
            break;
        case WS_EV_PONG:
            viewer_note_pong(v, ev.data, ev.len);
            break;
        case WS_EV_CLOSE:
            on_close(v, ev.status);
            return !v->dropped;
        case WS_EV_ERROR:
            if (v->close_sent)
                ws_stream_drop(v);
            else
                ws_stream_fail(v, ev.status, ev.problem);
            return !v->dropped;
        }
    }
    return true;
}

static int read_rounds(viewer *v, int fd, unsigned char *buf, size_t size);

/* The reader's socket is readable. Returns -1 to close the reader. */
static int read_input(struct lws *reader, viewer *v)
{
    unsigned char small[READ_BYTES];
    unsigned char *buf = v->uploader && v->srv->upload_buf ? v->srv->upload_buf : small;
    size_t size = buf == small ? sizeof small : SERVER_UPLOAD_READ_BYTES;
    int fd = lws_get_socket_fd(reader);
    int rc = read_rounds(v, fd, buf, size);
    if (v->uploader && !v->dropped)
        ws_upload_after_read(v);
    return rc;
}

static int read_rounds(viewer *v, int fd, unsigned char *buf, size_t size)
{
    for (int round = 0; round < READ_ROUNDS; round++) {
        ssize_t n = recv(fd, buf, size, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            /* The peer is gone, or finished sending: after its close frame our close may still
             * go out (then the connection ends); otherwise nothing is left to do. */
            if (!(v->peer_closed && !v->close_sent && !v->dropped))
                ws_stream_drop(v);
            return -1;
        }
        if (!feed(v, buf, (size_t)n))
            return -1;
    }
    return 0;
}

int ws_input_callback(struct lws *wsi, enum lws_callback_reasons reason, void *in, size_t len)
{
    (void)in;
    (void)len;
    viewer *v = lws_get_opaque_user_data(wsi);
    switch (reason) {
    case LWS_CALLBACK_RAW_RX_FILE:
        if (!v)
            return -1; /* its viewer is gone */
        return read_input(wsi, v);
    case LWS_CALLBACK_RAW_CLOSE_FILE:
        if (v && v->reader == wsi) {
            v->reader = NULL;
            lws_set_opaque_user_data(wsi, NULL);
            if (!v->srv->destroying && !(v->peer_closed && !v->close_sent))
                ws_stream_drop(v); /* nothing can be read any more */
        }
        return 0;
    default:
        return 0;
    }
}
