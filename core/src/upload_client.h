/* upload_client.h: the client side of the store's upload protocol (native only), shared by the
 * live upload of a running program (VOR_UPLOAD: upload_live.c) and the `vor` command
 * (`vor upload`, `vor list`).
 *
 *   upload_sha1.c    SHA-1 and base64 (the websocket handshake; `vor upload`'s resume keys)
 *   upload_ws.c      a minimal HTTP/1.1 + websocket client over a plain socket: why not
 *                    libwebsockets' client is said at the top of that file
 *   upload_proto.c   the vor-upload messages: hello, offset, ack, done, error
 * The protocol itself is specified at the top of native/server/ws_upload.c.
 */
#ifndef VOR_UPLOAD_CLIENT_H
#define VOR_UPLOAD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifndef VOR_HIDDEN
#if defined(__GNUC__)
#define VOR_HIDDEN __attribute__((visibility("hidden")))
#else
#define VOR_HIDDEN
#endif
#endif

VOR_HIDDEN void vor_sha1(const void *data, size_t n, uint8_t out[20]);
/* Writes 4 * ceil(n / 3) characters and a NUL; returns the characters written. */
VOR_HIDDEN size_t vor_base64(const uint8_t *in, size_t n, char *out);

/* ---- upload_ws.c ---- */

typedef struct vor_url {
    char host[256]; /* a name or an address ([] removed for IPv6) */
    char port[8];
    char path[512]; /* the base path, without a trailing '/' ("" for the root) */
} vor_url;

/* http://HOST[:PORT][/PATH] or ws://... (https and wss are refused: put a TLS proxy in front
 * and give its plain side, or tunnel). 0, or -1 with the problem in err. */
VOR_HIDDEN int vor_url_parse(const char *url, vor_url *out, char *err, size_t errlen);

typedef struct vor_ws vor_ws;

/* Connects (within timeout_ms) and upgrades GET <base path><path> to a websocket with the given
 * subprotocol. NULL with the problem in err (connection refused, not a websocket, HTTP status). */
VOR_HIDDEN vor_ws *vor_ws_connect(const vor_url *u, const char *path, const char *protocol, int timeout_ms, char *err,
                                  size_t errlen);
/* Sends one message (text or binary), masked. Waits at most timeout_ms for the socket to take it
 * (then -1, errno ETIMEDOUT). 0, or -1 (the connection is unusable). */
VOR_HIDDEN int vor_ws_send(vor_ws *ws, int binary, const void *data, size_t n, int timeout_ms);
/* The next text message from the server into text (NUL-terminated; longer ones are cut), waiting
 * at most timeout_ms (0: only what is there). Answers pings. Returns 1 (a message), 0 (none yet),
 * -1 (closed: *close_code set, 1006 when the connection dropped without a close frame). */
VOR_HIDDEN int vor_ws_recv(vor_ws *ws, char *text, size_t cap, int timeout_ms, int *close_code);
/* Sends a close frame (code) and closes the socket. NULL is fine. */
VOR_HIDDEN void vor_ws_close(vor_ws *ws, int code);
/* Aborts a connection from another thread: blocked calls return -1 soon. */
VOR_HIDDEN void vor_ws_abort(vor_ws *ws);

/* GET <base path><path_query> with an optional bearer token. 0 with the body (malloc'ed, NUL-
 * terminated) and the HTTP status; -1 with the problem in err. Bodies over max_bytes: -1. */
VOR_HIDDEN int vor_http_get(const vor_url *u, const char *path_query, const char *token, int timeout_ms,
                            size_t max_bytes, char **body, size_t *len, int *status, char *err, size_t errlen);

/* ---- upload_proto.c ---- */

typedef struct vor_upload_hello {
    const char *key; /* 8-64 of [A-Za-z0-9._-] */
    const char *project;
    const char *name;
    const char *host;  /* NULL: this machine's name */
    const char *token; /* NULL: none */
    const char *tags;  /* "k=v,k2=v2" (VOR_TAGS), or NULL */
} vor_upload_hello;

/* The hello message; -1 when a tag is malformed (err says which) or it does not fit. */
VOR_HIDDEN int vor_upload_hello_json(const vor_upload_hello *h, char *out, size_t cap, char *err, size_t errlen);

typedef enum vor_upload_msg_type {
    VOR_UPLOAD_MSG_OTHER = 0,
    VOR_UPLOAD_MSG_OFFSET,
    VOR_UPLOAD_MSG_ACK,
    VOR_UPLOAD_MSG_DONE,
    VOR_UPLOAD_MSG_ERROR
} vor_upload_msg_type;

typedef struct vor_upload_msg {
    vor_upload_msg_type type;
    uint64_t bytes;
    char id[40];
    char state[16];
    int already;
    char message[256];
} vor_upload_msg;

/* Reads a server message ({"type":..., "bytes":N, "id":..., "state":..., "message":...}). */
VOR_HIDDEN void vor_upload_msg_parse(const char *text, vor_upload_msg *m);

/* A random key for a live upload: 24 hex characters. */
VOR_HIDDEN void vor_upload_random_key(char out[25]);

#endif /* VOR_UPLOAD_CLIENT_H */
