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
 *   conn_table.c        every connection, its address and state; who makes room for whom
 *   listener.c          the listening socket: accept, admission, eviction, back-off
 *   ws_message.c        parsing of the client's control messages (strict JSON)
 *   ws_frames.c         the websocket frames a viewer sends, read strictly (RFC 6455)
 *   ws_input.c          reading a viewer's socket: frames -> messages, pings, pongs, close
 *   ws_stream.c         the vor-capture websocket protocol: viewers streaming a file
 *   viewer_slots.c      viewer slots: per-address limit, stalled viewers, newcomers waiting
 *   ws_upload.c         the vor-upload websocket protocol: uploaders sending captures to the store
 *   http_auth.c         tokens of the store: who may upload, delete and (--token-reads) read
 *   http_delete.c       DELETE /api/captures/<id> (the store)
 *   store/              the profile store (--store): blobs, the SQLite index, the indexer thread
 * Everything in here runs on the one service thread; nothing needs locks.
 * Tests include this header (white-box) to test the pure parts directly.
 */
#ifndef VOR_SERVER_INTERNAL_H
#define VOR_SERVER_INTERNAL_H

#include "server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <libwebsockets.h>

#include "store_internal.h"

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
    SERVER_HEADER_CHECK_BYTES = 4096,   /* capture header bytes compared to detect a new run */
    /* Connections (conn_table.c, listener.c) */
    SERVER_MAX_CONNECTIONS = 1024,      /* open at once, whatever the descriptor limit */
    SERVER_CONNS_PER_ADDRESS = 256,     /* open at once from one address (IPv6: one /64) */
    SERVER_WAITING_MAX = 256,           /* without a request in progress, all addresses */
    SERVER_WAITING_PER_ADDRESS = 32,    /* without a request in progress, from one address */
    SERVER_BUSY_STALL_MS = 2000,        /* a response taking nothing this long may be evicted */
    SERVER_CLOSING_SLACK = 64,          /* table room for evicted connections not yet closed */
    SERVER_FD_RESERVE = 16,             /* descriptors kept for files, directory scans, ... */
    SERVER_ACCEPT_BATCH = 16,           /* connections accepted per wake-up of the listener: at
                                         * most half SERVER_WAITING_PER_ADDRESS, so a burst from
                                         * one address cannot evict a connection before the
                                         * server had one look at what it sent */
    SERVER_ACCEPT_RETRY_MS = 10,        /* accept again after closing idle connections */
    SERVER_ACCEPT_IDLE_RETRY_MS = 250,  /* accept again when nothing could be closed */
    CONN_FDS_HTTP = 2,                  /* descriptors an HTTP connection may hold (socket, file) */
    CONN_FDS_VIEWER = 3,                /* a viewer: socket, its reader's copy, the capture */
    /* Viewers (viewer_slots.c) */
    SERVER_VIEWER_EVICT_MS = 400,       /* stalled this long, a viewer gives its slot to a newcomer */
    SERVER_VIEWER_PENDING_MS = 900,     /* a newcomer waits this long for a slot, then 1013: room
                                         * for one ping to be sent and go unanswered (2 x
                                         * SERVER_VIEWER_EVICT_MS) plus a check period */
    SERVER_VIEWER_PRESSURE_TICK_MS = 50, /* slot checks while newcomers wait */
    /* Uploads (ws_upload.c) */
    SERVER_MAX_UPLOADS = 64,            /* uploads at once */
    SERVER_UPLOADS_PER_ADDRESS = 32,    /* ... from one address */
    SERVER_UPLOAD_READ_BYTES = 256 * 1024 /* bytes read from an uploader's socket per read */
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
bool utf8_valid(const unsigned char *s, size_t n);         /* strict UTF-8 (no overlongs, surrogates) */
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

/* ---- conn_table.c: connections and who makes room for whom ---- */
typedef struct peer_addr {
    int family;                /* AF_INET, AF_INET6 (bytes: the /64 prefix) or 0 (unknown) */
    unsigned char bytes[16];
} peer_addr;

void peer_addr_from_sockaddr(peer_addr *out, const struct sockaddr *sa);
bool peer_addr_equal(const peer_addr *a, const peer_addr *b);

typedef enum conn_state {
    CONN_FREE = 0,   /* unused slot */
    CONN_WAITING,    /* no request in progress (new, sending headers, or idle keep-alive) */
    CONN_BUSY,       /* a request is being answered */
    CONN_VIEWER      /* a websocket viewer */
} conn_state;

typedef struct conn {
    conn_state state;
    bool evicted;          /* being closed to make room: no longer counted */
    struct lws *wsi;       /* set once lws adopted the socket */
    peer_addr addr;
    int64_t since_ms;      /* WAITING: waiting since; BUSY: last progress of the response */
} conn;

typedef struct conn_limits {
    int max;                  /* connections */
    int per_address;
    int waiting_max;
    int waiting_per_address;
    int busy_stall_ms;
    int fd_budget;            /* descriptors connections may hold (CONN_FDS_* each) */
} conn_limits;

typedef struct conn_table {
    conn *slots;
    int cap;                  /* limits.max + SERVER_CLOSING_SLACK */
    int open;                 /* slots in use, evicted ones included */
    int fds;                  /* descriptors the open connections may hold */
    int evicted_fds;          /* ... of which evicted ones (closing) */
    conn_limits lim;
} conn_table;

typedef enum conn_verdict {
    CONN_ADMIT,      /* take it (after evicting the victims returned) */
    CONN_REFUSE,     /* its address is over a limit and has nothing to give up */
    CONN_DEFER       /* the server is full of connections that cannot be evicted */
} conn_verdict;

int conn_table_init(conn_table *t, const conn_limits *lim);   /* -1: out of memory */
void conn_table_free(conn_table *t);
conn *conn_open(conn_table *t, const peer_addr *addr, int64_t now_ms);  /* WAITING; NULL: full */
void conn_close(conn_table *t, conn *c);
void conn_set_state(conn_table *t, conn *c, conn_state state, int64_t now_ms);
void conn_progress(conn *c, int64_t now_ms);                 /* a BUSY response moved on */
void conn_mark_evicted(conn_table *t, conn *c);
/* The connection to evict within scope (NULL: any address): the longest WAITING one, else (unless
 * waiting_only) the BUSY one stalled longest past busy_stall_ms; NULL when none. */
conn *conn_pick_victim(conn_table *t, const peer_addr *scope, bool waiting_only, int64_t now_ms);
/* Decides on a new connection from addr. CONN_ADMIT: *n_victims (0..4) connections in victims[]
 * were marked evicted and must be closed by the caller. */
conn_verdict conn_admit(conn_table *t, const peer_addr *addr, int64_t now_ms, conn **victims, int *n_victims);

/* ---- ws_frames.c: a viewer's frames, read strictly ---- */
typedef enum ws_event_kind {
    WS_EV_NONE = 0,
    WS_EV_TEXT,      /* a complete text message (valid UTF-8) in data/len */
    WS_EV_PING,      /* payload in data/len (<= 125 bytes) */
    WS_EV_PONG,
    WS_EV_CLOSE,     /* status (1005: none given), reason in data/len */
    WS_EV_BINARY,    /* uploaders: the next bytes of a binary message (unmasked in the input) */
    WS_EV_ERROR      /* protocol error: close with status, problem says why */
} ws_event_kind;

typedef struct ws_event {
    ws_event_kind kind;
    const unsigned char *data;  /* points into the reader: valid until the next feed */
    size_t len;
    int status;
    const char *problem;
} ws_event;

typedef struct ws_reader {
    int state;
    bool fin, in_message;
    bool binary_ok;            /* an uploader: binary messages are taken (ws_reader_feed_binary) */
    bool message_binary;       /* the message in progress is binary */
    unsigned char opcode, length_bytes;
    size_t have;               /* header bytes read / payload position (for the mask) */
    uint64_t left;             /* payload bytes still to come in this frame */
    unsigned char mask[4];
    size_t control_len, message_len;
    unsigned char control[125];
    unsigned char message[SERVER_CLIENT_MSG_MAX_BYTES];
} ws_reader;

void ws_reader_init(ws_reader *r);
/* Reads from in[0..len) up to the end of the next event (ev->kind, WS_EV_NONE when none yet);
 * returns the bytes used. After WS_EV_ERROR or WS_EV_CLOSE everything is consumed, unread. */
size_t ws_reader_feed(ws_reader *r, const unsigned char *in, size_t len, ws_event *ev);
/* The same for an uploader (binary_ok set): binary payload is unmasked in place in `in` and
 * returned as WS_EV_BINARY runs (data points into `in`). */
size_t ws_reader_feed_binary(ws_reader *r, unsigned char *in, size_t len, ws_event *ev);

/* ---- server.c: the running server, reachable from every callback ---- */
typedef struct viewer viewer;

typedef struct server {
    const vor_server_options *opts;   /* resolved copy (defaults applied) */
    struct lws_context *context;
    capture_registry registry;
    char *site_real;                  /* realpath of the site dir, NULL when it is missing */
    const char *site_dir;             /* as configured, for messages */
    unsigned char *chunk;             /* LWS_PRE + SERVER_CHUNK_BYTES, shared by all viewers */
    struct lws_vhost *vhost;          /* HTTP and websockets; it does not listen itself */
    struct lws_vhost *raw_vhost;      /* raw descriptors: the listener, viewers' readers */
    conn_table conns;                 /* every HTTP/websocket connection */
    int listen_fd;                    /* -1 when not listening */
    bool listen_adopted;              /* lws owns listen_fd (and closes it) */
    struct lws *listen_wsi;           /* the listening socket in lws's poll loop */
    bool accept_paused;
    lws_sorted_usec_list_t accept_sul;  /* resumes accepting after a back-off */
    bool fd_warning_shown;            /* "out of file descriptors" printed (once per run) */
    unsigned long fd_limit;           /* RLIMIT_NOFILE when the server started */
    viewer **viewers;                 /* opts->max_viewers slots */
    int viewer_count;                 /* slots in use */
    int viewer_conns;                 /* viewer connections open (slot or not) */
    viewer **pending;                 /* newcomers waiting for a slot, oldest first */
    int pending_count;
    lws_sorted_usec_list_t poll_sul;  /* growth polling for caught-up viewers */
    bool poll_scheduled;
    lws_sorted_usec_list_t stall_sul; /* viewer checks (viewer_slots.c), while viewers exist */
    bool stall_scheduled;
    int64_t stall_due_ms;             /* when stall_sul fires */
    access_policy access;             /* Host / Origin policy (port known once listening) */
    store *store;                     /* --store: NULL without */
    token_set tokens;                 /* --token-file: empty without */
    int upload_conns;                 /* uploaders connected */
    struct viewer *uploaders[SERVER_MAX_UPLOADS]; /* their connections (ws_upload.c) */
    unsigned char *upload_buf;        /* SERVER_UPLOAD_READ_BYTES, shared by all uploaders */
    struct compare_jobs *compare;     /* GET /api/compare (http_compare.c); NULL without a store */
    struct capture_access *access_ix; /* random access: capture indexes (capture_access.c) */
    bool stopping;
    bool destroying;                  /* lws_context_destroy() is closing everything */
} server;

server *server_from_wsi(struct lws *wsi);
/* Host (and, for websocket upgrades, Origin) check of the request on wsi. NULL: allowed;
 * else a short reason for the refusal. An upload from a page of a foreign origin completes its
 * handshake and is refused in the websocket with that reason (nothing of it is read). */
const char *server_refusal(struct lws *wsi, server *srv, bool upgrade);
/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (upgrade: the Upgrade header's value): 0 to let a websocket
 * upgrade proceed, 1 after answering (403, 414, 431; 400 for any other upgrade, such as h2c). */
int server_confirm_upgrade(struct lws *wsi, const char *upgrade);
int64_t server_now_ms(void);                       /* monotonic */
conn *server_conn(struct lws *wsi);                /* the connection of an HTTP/websocket wsi */
void server_conn_state(struct lws *wsi, conn_state state);

/* ---- listener.c ---- */
/* Binds and listens on host:port (port 0: any); returns 0, or -1 with a message in err. */
int listener_open(server *srv, const char *host, int port, char *err, size_t errlen);
int listener_port(const server *srv);
/* Puts the listening socket into lws's loop (once the vhosts exist); -1 on failure. */
int listener_start(server *srv);
void listener_close(server *srv);
/* The raw protocol's callback: the listener and viewers' readers. */
int listener_raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);
/* A connection closed (WSI_DESTROY): forget it; accepting may resume. */
void listener_conn_closed(server *srv, conn *c);
/* Closes c at once (violently: its peer gave nothing worth keeping). */
void listener_evict(server *srv, conn *c);

/* ---- http_static.c / http_api.c: request handlers (return what the callback returns) ---- */
int static_handle(struct lws *wsi, server *srv, http_session *s, const char *uri);
int api_handle(struct lws *wsi, server *srv, http_session *s, const char *uri);
/* JSON answers of the API (http_api.c): a body built in b; {"error":"what: detail"}. */
int send_json(struct lws *wsi, http_session *s, unsigned int status, json_buf *b);

/* ---- http_compare.c: GET /api/compare?a=ID&b=ID, vor diff of two stored captures ---- */
typedef struct compare_jobs compare_jobs;
compare_jobs *compare_jobs_new(const char *exe); /* exe: the vor binary; NULL: 501 answers */
void compare_jobs_free(compare_jobs *j);         /* kills running children, joins their threads */
int http_compare(struct lws *wsi, server *srv, http_session *s);
int api_send_error(struct lws *wsi, http_session *s, unsigned int status, const char *what, const char *detail);
/* DELETE /api/captures/<id> (http_delete.c). */
int http_delete(struct lws *wsi, server *srv, http_session *s, const char *id);

/* ---- ws_stream.c / viewer_slots.c / ws_input.c: viewers ---- */
typedef enum viewer_phase {
    VIEWER_NONE = 0,   /* per-session data zeroed by lws: not (yet) a viewer */
    VIEWER_PENDING,    /* request accepted, waiting for a slot (viewer_slots.c) */
    VIEWER_STREAMING,  /* a writable event is requested: read and send the next chunk */
    VIEWER_WAITING,    /* caught up while following: parked for the growth poll */
    VIEWER_FINISHING   /* final text message and/or close pending */
} viewer_phase;

enum {
    CLOSE_REASON_MAX_BYTES = 120, /* RFC 6455: a close reason is at most 123 bytes */
    CLOSE_TRY_AGAIN_LATER = 1013  /* registered status, not in lws 4.1's enum */
};

struct viewer {
    struct lws *wsi;       /* set in ESTABLISHED: marks the struct as initialised */
    server *srv;
    viewer_phase phase;
    peer_addr addr;
    int slot;              /* index in srv->viewers, -1 when holding none */
    int fd;                /* the capture, -1 when not open */
    char *path;            /* for the replacement check */
    dev_t dev;
    ino_t ino;
    uint64_t offset;       /* bytes sent so far == next byte to read */
    /* Liveness (viewer_slots.c) */
    int64_t since_ms;      /* established (or, pending, arrived) */
    int64_t tx_ms;         /* the socket last took bytes: a write, or the peer acknowledged more */
    uint64_t acked;        /* bytes the peer's TCP acknowledged at the last look */
    int64_t ping_ms;       /* when our outstanding ping was sent; 0: none outstanding */
    int64_t pong_ms;       /* when a pong last answered our ping */
    uint64_t ping_seq;     /* payload of the latest ping (pongs must echo it) */
    bool ping_due;         /* send a ping at the next writable event */
    bool pong_due;         /* answer the client's ping at the next writable event */
    size_t pong_len;
    unsigned char pong[125];
    /* Capture header fingerprint (ws_stream.c) */
    unsigned char head16[16]; /* the first 16 bytes as sent (header length at 12..15) */
    size_t head_len;       /* header bytes fingerprinted, 0 until the first 16 were sent */
    size_t head_hashed;    /* header bytes hashed so far (<= offset) */
    uint64_t head_hash;    /* FNV-1a 64 of the header bytes as sent */
    struct timespec head_mtime; /* the file's mtime when the header was last compared */
    char id[STORE_ID_BYTES + 8]; /* the capture id asked for (a stored one: 24 characters) */
    bool follow;
    bool magic_ok;         /* the first 8 bytes were checked */
    bool head_done;        /* head_hash covers the whole header (head_len bytes) */
    /* Ending (ws_stream.c) */
    bool text_pending;     /* FINISHING: text[] still to send */
    bool close_sent;       /* FINISHING: our close frame went out; waiting for the peer's */
    bool peer_closed;      /* the peer sent its close frame (or its end of the stream) */
    bool fail_fast;        /* lws still reads this socket: close right after our close frame */
    bool dropped;          /* being closed without a close handshake */
    size_t text_len;
    int close_status;
    char close_reason[CLOSE_REASON_MAX_BYTES + 1];
    char text[SERVER_TEXT_MAX_BYTES];
    /* Input (ws_input.c) */
    struct lws *reader;    /* the raw wsi reading this viewer's socket, NULL when none */
    ws_reader rx;
    /* Uploaders (ws_upload.c): this websocket sends a capture to the store instead */
    bool uploader;
    bool counted;          /* counted in srv->upload_conns */
    upload *up;            /* after the hello */
    bool ack_due;          /* send {"type":"ack"} at the next writable event */
    uint64_t stored_said;  /* the offset the last ack (or the offset message) said */
    size_t utext_len;      /* a message to send before any ack (the offset answer) */
    char utext[256];
};

int ws_stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                       void *in, size_t len);
size_t ws_stream_session_size(void);
void ws_stream_close_all(server *srv);   /* on stop: close every viewer with 1001 */
void ws_stream_start(viewer *v);         /* the viewer got a slot: open the capture, stream */
/* Ends the stream: at most one text message, then a close frame with status and reason. */
void ws_stream_finish(viewer *v, int status, const char *reason, const char *text);
void ws_stream_fail(viewer *v, int status, const char *message);  /* error message + close */
void ws_stream_drop(viewer *v);          /* closes the connection now, no close handshake */
void ws_stream_on_text(viewer *v, const char *text, size_t len);   /* a client message */

/* viewer_slots.c */
void viewer_request_slot(viewer *v);     /* admits v now, parks it as a newcomer, or refuses it */
void viewer_release_slot(viewer *v);     /* v stops streaming (or waiting for a slot) */
void viewer_note_pong(viewer *v, const unsigned char *data, size_t len);
bool viewer_tx_pending(const viewer *v); /* bytes (data, control, final frames) wait for the socket */
void viewer_schedule_check(server *srv); /* keeps the stall / slot check running while needed */

/* ws_upload.c */
bool ws_upload_requested(const char *uri);   /* "/upload" (with or without a query) */
void ws_upload_start(viewer *v);          /* an upload connection is established */
void ws_upload_on_text(viewer *v, const char *text, size_t len);
void ws_upload_on_data(viewer *v, const unsigned char *data, size_t len);
void ws_upload_after_read(viewer *v);     /* a batch of input was read: an ack may be due */
int ws_upload_writeable(viewer *v);       /* the uploader's own writes (ack, offset) */
void ws_upload_closed(viewer *v);
/* The store's callbacks (store_internal.h): wake the loop; end an upload's connection. */
void ws_upload_wake(void *srv);
void ws_upload_end(void *srv, void *owner, int status, const char *problem);

/* http_auth.c */
/* The token of a request: "Authorization: Bearer T", else "?token=T"; "" when none. */
void http_request_token(struct lws *wsi, char *out, size_t outlen);
/* May this request read (the API, a capture stream)? Always without --token-reads. */
bool http_may_read(struct lws *wsi, server *srv);
/* May it upload or delete? Without --token-file: yes (a loopback-only server, checked at start). */
bool http_may_write(server *srv, const char *token);
/* --upload-origin: may pages of this origin upload? */
bool server_upload_origin_allowed(const server *srv, const char *origin);
/* The request's query arguments, URL-encoded again ("a=1&b=x%26y"); -1 when too long. */
int http_query_string(struct lws *wsi, char *out, size_t outlen);

/* ws_input.c */
int ws_input_start(viewer *v);           /* reads v's socket from now on (lws stops); -1: cannot */
void ws_input_stop(viewer *v);           /* v is closing: its reader goes too */
int ws_input_callback(struct lws *wsi, enum lws_callback_reasons reason, void *in, size_t len);

/* Capture header fingerprint (ws_stream.c): FNV-1a 64 over the first bytes of a capture, the
 * fixed 16-byte header, its body and its check, at most SERVER_HEADER_CHECK_BYTES. Exposed for tests. */
size_t capture_header_length(const unsigned char *first16);  /* from bytes 0..15 */
uint64_t capture_header_hash(const unsigned char *bytes, size_t n);

#endif /* VOR_SERVER_INTERNAL_H */
