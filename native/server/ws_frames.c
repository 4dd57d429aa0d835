/*
 * ws_frames.c - reads the websocket frames a viewer sends (RFC 6455 section 5), strictly.
 *
 * Why our own: libwebsockets 4.1.6 accepts frames a server must refuse (unmasked client frames,
 * control frames with a 16-bit length) and gives no hook to see a frame's header, so the server
 * reads viewers' sockets itself (ws_input.c) and lws only writes to them. Everything a client may
 * send is small (one control message of at most SERVER_CLIENT_MSG_MAX_BYTES, pings, pongs, a
 * close), so a message is assembled whole in the reader and checked in one piece.
 *
 * The reader is a byte-at-a-time state machine over the frame header (so any split of the
 * stream into reads gives the same events) and copies payload in runs. It yields one event at a
 * time; after an error or a close frame it consumes and ignores everything. Errors, each with the
 * close status RFC 6455 calls for:
 *   1002  unmasked frame; reserved bits set (no extension is negotiated); unknown opcode;
 *         fragmented control frame; control frame over 125 bytes; a length not in its shortest
 *         form, or a 64-bit length with the top bit set; a continuation with no message to
 *         continue, or a new message inside a fragmented one; a close body of 1 byte; a close
 *         status that may not be sent (below 1000, 1004-1006, 1015, 1016-2999, 5000 and up)
 *   1003  a binary message (viewers only send JSON text), refused at its first header; an
 *         uploader's reader (binary_ok, ws_reader_feed_binary) takes binary messages instead
 *   1007  a text message or close reason that is not UTF-8
 *   1009  a message over SERVER_CLIENT_MSG_MAX_BYTES, refused at the header that crosses it
 * Uploaders (ws_upload.c) send the capture as binary messages of any size: their reader is set
 * up with binary_ok, and ws_reader_feed_binary() unmasks the payload in the caller's buffer and
 * hands it over in runs as it arrives (WS_EV_BINARY), never assembling a message, so a binary
 * message costs no memory however large. Text and control frames are read as for viewers.
 * Pure: no I/O, no allocation.
 */
#include "server_internal.h"

#include <string.h>

enum {
    OP_CONTINUATION = 0x0,
    OP_TEXT = 0x1,
    OP_BINARY = 0x2,
    OP_CLOSE = 0x8,
    OP_PING = 0x9,
    OP_PONG = 0xA,
    CONTROL_MAX_BYTES = 125
};

typedef enum reader_state {
    RS_HEADER1 = 0, /* FIN, RSV, opcode */
    RS_HEADER2,     /* MASK, 7-bit length */
    RS_LENGTH,      /* extended length bytes (2 or 8) */
    RS_MASK,        /* the 4 masking key bytes */
    RS_PAYLOAD,
    RS_DONE         /* after an error or a close frame */
} reader_state;

void ws_reader_init(ws_reader *r)
{
    memset(r, 0, sizeof *r);
}

static size_t fail(ws_reader *r, ws_event *ev, int status, const char *problem, size_t used)
{
    r->state = RS_DONE;
    ev->kind = WS_EV_ERROR;
    ev->status = status;
    ev->problem = problem;
    return used;
}

static bool close_status_valid(unsigned int code)
{
    if (code >= 3000 && code <= 4999)
        return true;
    return code >= 1000 && code <= 1014 && code != 1004 && code != 1005 && code != 1006;
}

/* The frame's payload is complete: turn it into an event, or continue the message. */
static size_t frame_done(ws_reader *r, ws_event *ev, size_t used)
{
    r->state = RS_HEADER1;
    switch (r->opcode) {
    case OP_PING:
    case OP_PONG:
        ev->kind = r->opcode == OP_PING ? WS_EV_PING : WS_EV_PONG;
        ev->data = r->control;
        ev->len = r->control_len;
        return used;
    case OP_CLOSE:
        if (r->control_len == 1)
            return fail(r, ev, 1002, "close frame with a 1-byte body", used);
        ev->kind = WS_EV_CLOSE;
        ev->status = 1005; /* no status in the frame */
        ev->data = r->control;
        ev->len = 0;
        if (r->control_len >= 2) {
            unsigned int code = (unsigned int)r->control[0] << 8 | r->control[1];
            if (!close_status_valid(code))
                return fail(r, ev, 1002, "close frame with a status that may not be sent", used);
            if (!utf8_valid(r->control + 2, r->control_len - 2))
                return fail(r, ev, 1007, "close reason is not UTF-8", used);
            ev->status = (int)code;
            ev->data = r->control + 2;
            ev->len = r->control_len - 2;
        }
        r->state = RS_DONE; /* nothing may follow a close frame */
        return used;
    default: /* text, or its continuation */
        if (!r->fin)
            return used;
        r->in_message = false;
        if (r->message_binary)
            return used; /* its payload was handed over as it came */
        if (!utf8_valid(r->message, r->message_len))
            return fail(r, ev, 1007, "invalid UTF-8 in a text message", used);
        ev->kind = WS_EV_TEXT;
        ev->data = r->message;
        ev->len = r->message_len;
        return used;
    }
}

/* The header is complete (length and mask known): check it against the message state. */
static size_t header_done(ws_reader *r, ws_event *ev, size_t used)
{
    bool control = r->opcode & 0x8;
    if (control) {
        r->control_len = 0;
    } else if (r->opcode == OP_CONTINUATION) {
        if (!r->in_message)
            return fail(r, ev, 1002, "continuation frame with no message to continue", used);
    } else {
        if (r->in_message)
            return fail(r, ev, 1002, "new message inside a fragmented one", used);
        if (r->opcode == OP_BINARY && !r->binary_ok)
            return fail(r, ev, 1003, "binary messages are not accepted (send JSON text)", used);
        r->in_message = true;
        r->message_binary = r->opcode == OP_BINARY;
        r->message_len = 0;
    }
    if (!control && !r->message_binary && r->left > SERVER_CLIENT_MSG_MAX_BYTES - r->message_len)
        return fail(r, ev, 1009, "message too large (max 4096 bytes)", used);
    r->state = RS_MASK;
    r->have = 0;
    return used;
}

/* XORs n bytes at p with the mask, p being at payload position `pos`: 8 bytes at a time (an
 * uploader's whole capture goes through here). */
static void unmask(unsigned char *p, size_t n, const unsigned char mask[4], uint64_t pos)
{
    size_t k = 0;
    for (; k < n && ((pos + k) & 3); k++)
        p[k] ^= mask[(pos + k) & 3];
    uint32_t m32;
    memcpy(&m32, mask, 4);
    uint64_t m64 = (uint64_t)m32 << 32 | m32;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        w ^= m64;
        memcpy(p + k, &w, 8);
    }
    for (; k < n; k++)
        p[k] ^= mask[(pos + k) & 3];
}

/* `mut`: the same bytes as `in`, writable (binary payload is unmasked there), or NULL. */
static size_t feed(ws_reader *r, const unsigned char *in, unsigned char *mut, size_t len, ws_event *ev)
{
    size_t i = 0;
    memset(ev, 0, sizeof *ev);
    while (i < len) {
        unsigned char c = in[i];
        switch ((reader_state)r->state) {
        case RS_DONE:
            return len;
        case RS_HEADER1:
            i++;
            r->fin = (c & 0x80) != 0;
            r->opcode = c & 0x0f;
            if (c & 0x70)
                return fail(r, ev, 1002, "reserved bits set (no extension was negotiated)", i);
            if (r->opcode > OP_BINARY && r->opcode != OP_CLOSE && r->opcode != OP_PING && r->opcode != OP_PONG)
                return fail(r, ev, 1002, "unknown opcode", i);
            if ((r->opcode & 0x8) && !r->fin)
                return fail(r, ev, 1002, "fragmented control frame", i);
            r->state = RS_HEADER2;
            break;
        case RS_HEADER2:
            i++;
            if (!(c & 0x80))
                return fail(r, ev, 1002, "unmasked frame from a client", i);
            r->left = c & 0x7f;
            if ((r->opcode & 0x8) && r->left > CONTROL_MAX_BYTES)
                return fail(r, ev, 1002, "control frame over 125 bytes", i);
            if (r->left >= 126) {
                r->length_bytes = r->left == 126 ? 2 : 8;
                r->left = 0;
                r->have = 0;
                r->state = RS_LENGTH;
                break;
            }
            header_done(r, ev, i);
            if (ev->kind)
                return i;
            break;
        case RS_LENGTH:
            i++;
            r->left = r->left << 8 | c;
            if (++r->have < r->length_bytes)
                break;
            if (r->length_bytes == 8 && (r->left >> 63))
                return fail(r, ev, 1002, "64-bit length with its top bit set", i);
            if (r->left < (r->length_bytes == 2 ? 126u : 65536u))
                return fail(r, ev, 1002, "length not in its shortest form", i);
            header_done(r, ev, i);
            if (ev->kind)
                return i;
            break;
        case RS_MASK:
            i++;
            r->mask[r->have++] = c;
            if (r->have < 4)
                break;
            r->have = 0; /* position in the payload, for the mask */
            r->state = RS_PAYLOAD;
            if (r->left == 0)
                return frame_done(r, ev, i);
            break;
        case RS_PAYLOAD: {
            size_t run = len - i;
            if (run > r->left)
                run = (size_t)r->left;
            if (!(r->opcode & 0x8) && r->message_binary) {
                /* An uploader's bytes: unmasked in place and handed over at once. */
                if (!mut)
                    return fail(r, ev, 1003, "binary messages are not accepted (send JSON text)", i);
                unmask(mut + i, run, r->mask, r->have);
                r->have += run;
                r->left -= run;
                ev->kind = WS_EV_BINARY;
                ev->data = mut + i;
                ev->len = run;
                i += run;
                if (r->left == 0) {
                    r->state = RS_HEADER1;
                    if (r->fin)
                        r->in_message = false;
                }
                return i;
            }
            unsigned char *dst = (r->opcode & 0x8) ? r->control + r->control_len : r->message + r->message_len;
            for (size_t k = 0; k < run; k++)
                dst[k] = in[i + k] ^ r->mask[(r->have + k) & 3];
            r->have += run;
            if (r->opcode & 0x8)
                r->control_len += run;
            else
                r->message_len += run;
            r->left -= run;
            i += run;
            if (r->left == 0)
                return frame_done(r, ev, i);
            break;
        }
        }
    }
    return i;
}

size_t ws_reader_feed(ws_reader *r, const unsigned char *in, size_t len, ws_event *ev)
{
    return feed(r, in, NULL, len, ev);
}

size_t ws_reader_feed_binary(ws_reader *r, unsigned char *in, size_t len, ws_event *ev)
{
    return feed(r, in, in, len, ev);
}
