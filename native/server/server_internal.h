/*
 * server_internal.h - private declarations shared by the files of the vor server.
 *
 * The server is split by job, one file each:
 *   args.c              `vor serve` command line -> vor_server_options (pure)
 *   server.c            lws context, protocol table, stop pipe, run loop and shutdown
 *   json_out.c          JSON text builder with string escaping (growable or fixed buffer)
 *   capture_registry.c  which files are captures: FILE/DIR arguments, ids, magic probing
 *   http_reply.c        buffered HTTP responses (status + headers + body) over lws
 *   http_static.c       site directory: URL -> file resolution (traversal-safe), MIME types
 *   http_api.c          /api/captures JSON endpoints
 *   ws_message.c        parsing of the client's control messages (strict JSON)
 *   ws_stream.c         the vor-capture websocket protocol: viewers streaming a file
 * Everything in here runs on the one service thread; nothing needs locks.
 * Tests include this header (white-box) to test the pure parts directly.
 */
#ifndef VOR_SERVER_INTERNAL_H
#define VOR_SERVER_INTERNAL_H

#include "server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libwebsockets.h>

/* ---- Fixed capacities (units in the names) ---- */
enum {
    SERVER_CHUNK_BYTES = 64 * 1024,     /* largest binary message sent to a viewer */
    SERVER_CLIENT_MSG_MAX_BYTES = 4096, /* largest control message accepted from a viewer */
    SERVER_TEXT_MAX_BYTES = 512,        /* largest text message the server sends */
    SERVER_URI_MAX_BYTES = 2048,        /* longest request path handled */
    SERVER_HTTP_BODY_CHUNK_BYTES = 16 * 1024, /* HTTP body bytes written per writable event */
    SERVER_JSON_MAX_BYTES = 4 * 1024 * 1024,  /* largest JSON response built */
    SERVER_STOP_GRACE_MS = 1000,        /* how long a stop waits for viewers to take a close */
    SERVER_ERROR_CLOSE_TIMEOUT_S = 5    /* a refused viewer that cannot take its error: killed */
};

/* The 8 bytes every .vor capture starts with (docs/FORMAT.md). */
#define SERVER_CAPTURE_MAGIC "\x89VOR\r\n\x1a\n"
#define SERVER_CAPTURE_MAGIC_BYTES 8

/* ---- json_out.c ---- */
typedef struct json_buf {
    char *data;      /* NUL-terminated text (when !failed) */
    size_t len;      /* bytes used, without the NUL */
    size_t cap;      /* bytes allocated (or the fixed buffer's size) */
    size_t limit;    /* growable: never grow beyond this many bytes */
    bool fixed;      /* data is caller-owned and never grows */
    bool failed;     /* out of memory / over the limit: text is unusable */
} json_buf;

void json_init(json_buf *b, size_t limit);                 /* growable, starts empty */
void json_init_fixed(json_buf *b, char *buf, size_t cap);  /* caller's buffer, cap >= 1 */
void json_free(json_buf *b);                               /* growable only; safe twice */
void json_raw(json_buf *b, const char *text);              /* appends text verbatim */
void json_str(json_buf *b, const char *s);                 /* appends "s", escaped; bad UTF-8 -> U+FFFD */
void json_u64(json_buf *b, uint64_t v);
void json_i64(json_buf *b, int64_t v);
char *json_take(json_buf *b, size_t *len);                 /* growable: hands over data (NULL if failed) */

/* ---- capture_registry.c ---- */
typedef enum capture_state {
    CAPTURE_OK,            /* starts with the magic */
    CAPTURE_EMPTY,         /* 0 bytes, or a proper prefix of the magic */
    CAPTURE_NOT_CAPTURE,   /* starts with something else */
    CAPTURE_MISSING,       /* does not exist */
    CAPTURE_UNREADABLE,    /* exists, cannot be opened/read */
    CAPTURE_NOT_FILE       /* a directory, device, ... */
} capture_state;

typedef struct capture_probe {
    capture_state state;
    uint64_t bytes;
    int64_t mtime_ms;
} capture_probe;

/* 1: the bytes start with the whole magic; 0: fewer than 8 bytes, all matching; -1: mismatch. */
int capture_magic_check(const unsigned char *bytes, size_t n);
void capture_probe_path(const char *path, capture_probe *out);
const char *capture_state_name(capture_state s);   /* "capture", "empty", ... */

typedef struct capture_entry {
    char *path;       /* as given, or DIR "/" NAME for captures found in a directory */
    const char *name; /* points into path: the last component */
    int dir;          /* index into registry dirs, or -1 for a FILE argument */
    bool present;     /* FILE: always; DIR entry: seen in the latest scan */
} capture_entry;

typedef struct capture_registry {
    capture_entry *entries; /* id = index; ids are never reused while the server runs */
    size_t count, cap;
    char **dirs;            /* DIR arguments, as given */
    size_t dir_count;
    bool truncated;         /* a scan found more than VOR_SERVER_MAX_CAPTURES */
} capture_registry;

/* 0 on success; -1 (out of memory) with a message in err. Paths are classified once, here. */
int registry_init(capture_registry *r, const char *const *paths, int count, char *err, size_t errlen);
void registry_free(capture_registry *r);
void registry_rescan(capture_registry *r);               /* rescans every DIR argument */
/* The entry whose id is `id` (canonical decimal: "0", "17"; not "07", "+1", ""), or NULL. */
const capture_entry *registry_find(const capture_registry *r, const char *id, size_t *index);

/* ---- http_reply.c ---- */
typedef struct http_session {
    char *body;          /* in-memory response body still to be written, or NULL */
    bool body_owned;     /* free(body) when done */
    int file_fd_plus1;   /* file response: its fd + 1 (0: none; per-session data starts zeroed) */
    uint64_t body_len, body_sent;
} http_session;

/* Writes status + headers now and the body on writable events (then completes the
 * transaction). Takes ownership of body when owned (also on failure). extra_headers: NULL or
 * lws-style pairs {"name:", "value", ..., NULL}. Returns what the lws callback must return. */
int http_reply(struct lws *wsi, http_session *s, unsigned int status, const char *content_type,
               const char *const *extra_headers, char *body, size_t len, bool owned);
/* Same with the first `size` bytes of an open file as the body; takes ownership of fd. */
int http_reply_file(struct lws *wsi, http_session *s, const char *content_type,
                    const char *const *extra_headers, int fd, uint64_t size);
int http_reply_text(struct lws *wsi, http_session *s, unsigned int status, const char *text);
int http_reply_writeable(struct lws *wsi, http_session *s);
void http_session_clear(http_session *s);

/* ---- http_static.c ---- */
typedef enum static_result {
    STATIC_FILE,        /* out holds the real path of a regular file inside the site */
    STATIC_REDIRECT,    /* a directory asked without its trailing slash */
    STATIC_FORBIDDEN,   /* refused: traversal, control characters, escapes the site */
    STATIC_NOT_FOUND
} static_result;

/* Maps a decoded request path ("/", "/js/app.js") onto the site directory whose real path
 * (realpath(3), no trailing slash) is site_real. Never returns a path outside site_real. */
static_result static_resolve(const char *site_real, const char *uri, char *out, size_t outlen);
const char *static_mime_type(const char *path);  /* never NULL; unknown -> octet-stream */

/* ---- ws_message.c ---- */
typedef enum client_msg_kind {
    CLIENT_MSG_FOLLOW,        /* {"type":"follow","value":true|false} */
    CLIENT_MSG_BAD_JSON,
    CLIENT_MSG_NOT_OBJECT,
    CLIENT_MSG_NO_TYPE,
    CLIENT_MSG_UNKNOWN_TYPE,
    CLIENT_MSG_BAD_VALUE
} client_msg_kind;

typedef struct client_msg {
    client_msg_kind kind;
    bool follow;      /* CLIENT_MSG_FOLLOW: the requested value */
} client_msg;

/* Strict JSON (RFC 8259, nesting depth <= 16). Never reads past text[len]. */
client_msg_kind client_msg_parse(const char *text, size_t len, client_msg *out);
const char *client_msg_problem(client_msg_kind kind);  /* human-readable, for error replies */

/* ---- server.c: the running server, reachable from every callback ---- */
typedef struct viewer viewer;

typedef struct server {
    const vor_server_options *opts;   /* resolved copy (defaults applied) */
    struct lws_context *context;
    capture_registry registry;
    char *site_real;                  /* realpath of the site dir, NULL when it is missing */
    const char *site_dir;             /* as configured, for messages */
    unsigned char *chunk;             /* LWS_PRE + SERVER_CHUNK_BYTES, shared by all viewers */
    viewer **viewers;                 /* opts->max_viewers slots */
    int viewer_count;
    lws_sorted_usec_list_t poll_sul;  /* growth polling for caught-up viewers */
    bool poll_scheduled;
    bool stopping;
} server;

server *server_from_wsi(struct lws *wsi);

/* ---- http_static.c / http_api.c: request handlers (return what the callback returns) ---- */
int static_handle(struct lws *wsi, server *srv, http_session *s, const char *uri);
int api_handle(struct lws *wsi, server *srv, http_session *s, const char *uri);

/* ---- ws_stream.c ---- */
int ws_stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                       void *in, size_t len);
size_t ws_stream_session_size(void);
void ws_stream_close_all(server *srv);   /* on stop: close every viewer with 1001 */

#endif /* VOR_SERVER_INTERNAL_H */
