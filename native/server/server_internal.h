/*
 * server_internal.h - private declarations shared by the files of the vor server.
 *
 * The server is split by job, one file each:
 *   args.c              `vor serve` command line -> vor_server_options (pure)
 *   server.c            lws context, protocol table, stop flag, run loop and shutdown, the
 *                       Host/Origin gate, header limits, libwebsockets' log filter
 *   access.c            Host and Origin header policy (pure): who may connect
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
#include <sys/stat.h>
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
    SERVER_ERROR_CLOSE_TIMEOUT_S = 5,   /* a refused viewer that cannot take its error: killed */
    SERVER_HEADER_CHECK_BYTES = 4096    /* capture header bytes compared to detect a new run */
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
    size_t id;        /* its id (shown as decimal text); never given to another file */
    int dir;          /* index into registry dirs, or -1 for a FILE argument */
    bool present;     /* FILE: always; DIR entry: seen in the latest scan */
    uint64_t gone_at; /* !present: registry gone_clock when it vanished (oldest forgotten first) */
} capture_entry;

typedef struct capture_registry {
    capture_entry *entries; /* in increasing id order; absent entries are remembered up to
                             * VOR_SERVER_MAX_GONE_CAPTURES, then freed (oldest-gone first) */
    size_t count, cap;
    size_t present;         /* entries with present set: at most VOR_SERVER_MAX_CAPTURES */
    size_t next_id;         /* ids are handed out increasing from 0, never reused */
    uint64_t gone_clock;    /* counts vanishings, orders absent entries by age */
    char **dirs;            /* DIR arguments, as given */
    size_t dir_count;
    bool truncated;         /* the latest scan found more than VOR_SERVER_MAX_CAPTURES */
} capture_registry;

/* 0 on success; -1 (out of memory) with a message in err. Paths are classified once, here. */
int registry_init(capture_registry *r, const char *const *paths, int count, char *err, size_t errlen);
void registry_free(capture_registry *r);
void registry_rescan(capture_registry *r);               /* rescans every DIR argument */
/* The entry whose id is `id` (canonical decimal: "0", "17"; not "07", "+1", ""), or NULL
 * (also for the id of a forgotten entry). Valid until the next rescan. */
const capture_entry *registry_find(const capture_registry *r, const char *id);

/* Opens `path` for reading without ever blocking (open(2) of a FIFO would wait for a writer,
 * freezing the server) and keeps it only if it is a regular file. Returns the fd (close-on-exec,
 * blocking mode restored) and fills *st; -1 when it cannot be opened (errno set); -2 when it
 * is not a regular file (FIFO, device, directory, ...). extra_flags: e.g. O_NOFOLLOW. */
int open_regular_file(const char *path, int extra_flags, struct stat *st);

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

/* ---- access.c: Host / Origin policy ---- */
typedef struct access_policy {
    int port;                 /* the port the server listens on */
    int family;               /* AF_INET or AF_INET6: the bound address */
    unsigned char addr[16];
    bool wildcard;            /* bound to 0.0.0.0 or :: */
} access_policy;

/* host: the numeric address the server binds; 0, or -1 when it is not one. */
int access_policy_init(access_policy *p, const char *host, int port);
/* The Host header (NULL when absent) names this server? */
bool access_host_allowed(const access_policy *p, const char *host_header);
/* The Origin header (NULL when absent) is this server, for a request with this Host header? */
bool access_origin_allowed(const access_policy *p, const char *origin, const char *host_header);
/* localhost, 127.0.0.0/8, ::1 (and v4-mapped 127.x): only this machine can connect. */
bool access_address_is_loopback(const char *host);

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
    lws_sorted_usec_list_t stall_sul; /* stalled-viewer check, while viewers exist */
    bool stall_scheduled;
    access_policy access;             /* Host / Origin policy (port known once listening) */
    bool stopping;
} server;

server *server_from_wsi(struct lws *wsi);
/* Host (and, for websocket upgrades, Origin) check of the request on wsi. NULL: allowed;
 * else a short reason for the refusal. */
const char *server_refusal(struct lws *wsi, server *srv, bool upgrade);
/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: 0 to let the upgrade proceed, 1 after answering 403. */
int server_confirm_upgrade(struct lws *wsi);

/* ---- http_static.c / http_api.c: request handlers (return what the callback returns) ---- */
int static_handle(struct lws *wsi, server *srv, http_session *s, const char *uri);
int api_handle(struct lws *wsi, server *srv, http_session *s, const char *uri);

/* ---- ws_stream.c ---- */
int ws_stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                       void *in, size_t len);
size_t ws_stream_session_size(void);
void ws_stream_close_all(server *srv);   /* on stop: close every viewer with 1001 */

/* Capture header fingerprint (ws_stream.c): FNV-1a 64 over the first bytes of a capture, the
 * fixed 16-byte header, its body and its check, at most SERVER_HEADER_CHECK_BYTES. Exposed for tests. */
size_t capture_header_length(const unsigned char *first16);  /* from bytes 0..15 */
uint64_t capture_header_hash(const unsigned char *bytes, size_t n);

#endif /* VOR_SERVER_INTERNAL_H */
