/*
 * server.c - vor_server_run(): one libwebsockets context, one port, one thread.
 *
 * The port is listened on by listener.c, not by lws (lws 4.1.6 spins when accept() runs out of
 * descriptors, and has no say in which connection makes room for another); it hands each
 * connection it admits to the "vor" vhost, which does not listen itself. Protocols on it:
 *   [0] "http"         every plain HTTP request (no lws mounts: routing is ours)
 *                      /api/... -> http_api.c, anything else -> http_static.c; also
 *                      WSI_DESTROY of every connection (the connection table forgets it)
 *   [1] "vor-capture"  websocket viewers (ws_stream.c). Marked as the vhost's "default"
 *                      protocol, so clients that send no Sec-WebSocket-Protocol land here too.
 * A second vhost, "vor-raw", holds raw descriptors: the listening socket and the copies of
 * viewers' sockets the server reads them through (ws_input.c).
 * Response headers: the cross-origin isolation trio (COOP/COEP/CORP) and nosniff are the vhost's
 * `headers` list, which lws writes after every status line it produces, errors included. Each
 * name ends with a colon: lws copies it verbatim into "name value".
 *
 * Binding: 127.0.0.1 unless --host says otherwise, because a capture reveals the structure of the
 * profiled program (scope and function names, timings, memory) and there is no authentication.
 * Any other address gets a warning at start. Binding is not enough against a web page in the
 * user's own browser, so every request's Host, and every websocket upgrade's Origin, is checked
 * (access.c): plain HTTP gets 403 in http_route(), an upgrade gets 403 in
 * LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (whichever protocol the connection is bound to then), where
 * an over-long path also gets its 414 before any websocket exists, and any upgrade but a
 * websocket (h2c) gets 400: HTTP/2 streams would carry :authority instead of Host.
 *
 * Each connection gets a header buffer (SERVER_HEADER_BYTES, allocated while in use) as soon as
 * it is admitted - the pool has one for every connection conn_table.c may admit, so none waits
 * behind slow ones - and has SERVER_HEADER_IDLE_S to send its request headers
 * (SERVER_KEEPALIVE_IDLE_S between keep-alive requests). Per-header limits (token_limits) make
 * libwebsockets stop storing an over-long request path (we answer 414) and cut headers we never
 * read to a few bytes, so a browser's big Cookie cannot overflow the buffer. Connections are
 * marked in the connection table as they go: waiting (headers, keep-alive), busy (a request in
 * http_route() or an upgrade), viewer (ESTABLISHED), and back to waiting when a response ends.
 *
 * libwebsockets logs through log_lws_line(): the lines a client can provoke (oversized headers,
 * ...) are dropped, and the rest are limited to LOG_LINES_PER_MINUTE, so no client can flood
 * stderr.
 *
 * Stopping: vor_server_request_stop() only stores an atomic flag (async-signal-safe, no fd
 * that could be closed or reused under a signal handler). The loop checks it after every
 * lws_service() return: at once when the signal interrupted poll() on this thread, otherwise
 * within STOP_CHECK_MS thanks to a timer that keeps poll() from sleeping longer. Then viewers
 * get a 1001 close, the loop runs until they are gone or SERVER_STOP_GRACE_MS passes (a
 * stalled viewer cannot take a close frame), and lws_context_destroy() closes the rest.
 */
#include "server_internal.h"
#include "capture_access.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    STOP_CHECK_MS = 100,           /* longest delay between a stop request (other thread) and the stop */
    SERVER_SERV_BUF_BYTES = 32 * 1024, /* lws per-thread buffer: static file chunks */
    SERVER_HEADER_BYTES = 8 * 1024,  /* header space of one request (allocated while in use) */
    SERVER_HEADER_IDLE_S = 3,      /* time a connection has to send its request headers */
    SERVER_KEEPALIVE_IDLE_S = 5,   /* time a keep-alive connection may idle between requests */
    SERVER_HOST_MAX_BYTES = 256,   /* Host / Origin values at this length are refused (431) */
    SERVER_UNUSED_HEADER_BYTES = 16, /* headers we never read are cut to this */
    SERVER_OTHER_HEADER_BYTES = 1024, /* other headers are cut to this */
    LOG_LINES_PER_MINUTE = 10      /* libwebsockets lines printed at most, per minute */
};

/* Written from signal handlers: must be a lock-free atomic to be async-signal-safe. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "vor_server_request_stop needs a lock-free atomic int");
static atomic_int stop_requested;

void vor_server_request_stop(void)
{
    atomic_store(&stop_requested, 1);
}

server *server_from_wsi(struct lws *wsi)
{
    return lws_context_user(lws_get_context(wsi));
}

int64_t server_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every HTTP/websocket wsi was adopted by listener.c with its connection as opaque data. */
conn *server_conn(struct lws *wsi)
{
    return lws_get_opaque_user_data(wsi);
}

void server_conn_state(struct lws *wsi, conn_state state)
{
    server *srv = server_from_wsi(wsi);
    conn_set_state(&srv->conns, server_conn(wsi), state, server_now_ms());
}

/* ---- who may connect (access.c has the policy) ---- */

static const char refusal_host[] = "foreign Host header refused";
static const char refusal_origin[] = "cross-origin request refused";
/* The same refusal of an upload from a page: said in the websocket (a page cannot read a refused
 * handshake's answer, and would take it for a store that is down and retry for ever). */
static const char refusal_upload_origin[] = "upload refused: this store does not take uploads from pages of this "
                                            "origin (it allows an origin with --upload-origin)";
static const char refusal_host_too_long[] = "Host or Origin header too long";

/* A header's value (NUL-terminated, in buf), NULL when absent; *too_long when it reached the
 * token limit (lws cut it there) or does not fit buf. */
static const char *header_value(struct lws *wsi, enum lws_token_indexes token, char *buf, size_t buflen,
                                bool *too_long)
{
    int n = lws_hdr_total_length(wsi, token);
    if (n <= 0)
        return NULL;
    if ((size_t)n >= SERVER_HOST_MAX_BYTES || (size_t)n >= buflen ||
        lws_hdr_copy(wsi, buf, (int)buflen, token) < 0) {
        *too_long = true;
        return NULL;
    }
    return buf;
}

const char *server_refusal(struct lws *wsi, server *srv, bool upgrade)
{
    char host[SERVER_HOST_MAX_BYTES + 1], origin[SERVER_HOST_MAX_BYTES + 1];
    bool too_long = false;
    const char *h = header_value(wsi, WSI_TOKEN_HOST, host, sizeof host, &too_long);
    const char *o = upgrade ? header_value(wsi, WSI_TOKEN_ORIGIN, origin, sizeof origin, &too_long) : NULL;
    if (too_long)
        return refusal_host_too_long;
    if (!access_host_allowed(&srv->access, h))
        return refusal_host;
    if (upgrade && !access_origin_allowed(&srv->access, o, h)) {
        /* Pages of the origins given with --upload-origin may upload (not read). */
        char uri[SERVER_URI_MAX_BYTES];
        if (server_upload_origin_allowed(srv, o) && lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) > 0 &&
            ws_upload_requested(uri))
            return NULL;
        if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) > 0 && ws_upload_requested(uri))
            return refusal_upload_origin;
        return refusal_origin;
    }
    return NULL;
}

/* One complete short answer written at once (headers and body in a single lws_write, as
 * lws_return_http_status does for HTTP/1); the caller returns 1 and lws completes it. */
static int reply_now(struct lws *wsi, unsigned int status, const char *text)
{
    unsigned char buf[LWS_PRE + 2048];
    unsigned char *begin = buf + LWS_PRE, *p = begin, *end = buf + sizeof buf - 1;
    size_t tl = strlen(text);

    if (lws_add_http_common_headers(wsi, status, "text/plain; charset=utf-8", (lws_filepos_t)tl, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:", (const unsigned char *)"no-store",
                                    8, &p, end) ||
        lws_finalize_http_header(wsi, &p, end) || (size_t)(end - p) < tl)
        return -1;
    memcpy(p, text, tl);
    p += tl;
    if (lws_write(wsi, begin, (size_t)(p - begin), LWS_WRITE_HTTP) != (int)(p - begin))
        return -1;
    return 1;
}

/* lws stops storing a path (or query) at SERVER_URI_MAX_BYTES (token_limits): a request that
 * reached the limit had a longer one. */
static bool uri_too_long(struct lws *wsi)
{
    return lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) >= SERVER_URI_MAX_BYTES ||
           lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) >= SERVER_URI_MAX_BYTES;
}

int server_confirm_upgrade(struct lws *wsi, const char *upgrade)
{
    conn *c = server_conn(wsi);
    if (c && c->evicted)
        return -1;
    /* The answers below complete the request: the connection waits for the next one. */
    server_conn_state(wsi, CONN_WAITING);
    /* Only websockets: an h2c upgrade would turn the connection into HTTP/2 streams, which
     * carry :authority instead of Host and would skip the Host check (and lws serves them). */
    if (!upgrade || strcasecmp(upgrade, "websocket") != 0)
        return reply_now(wsi, 400, "400 only websocket upgrades are accepted (this server speaks HTTP/1.1, "
                                   "not HTTP/2)\n");
    if (uri_too_long(wsi))
        return reply_now(wsi, 414, "414 request path too long\n");
    const char *refused = server_refusal(wsi, server_from_wsi(wsi), true);
    if (refused == refusal_host_too_long)
        return reply_now(wsi, 431, "431 Host or Origin header too long\n");
    if (refused == refusal_host)
        return reply_now(wsi, 403, "403 foreign Host header refused (cross-site / DNS rebinding protection)\n");
    if (refused == refusal_upload_origin) {
        server_conn_state(wsi, CONN_BUSY); /* ESTABLISHED sends the reason and closes (1008) */
        return 0;
    }
    if (refused)
        return reply_now(wsi, 403, "403 cross-origin websocket refused: only pages served by this server "
                                   "may read captures\n");
    server_conn_state(wsi, CONN_BUSY); /* the handshake; ESTABLISHED makes it a viewer */
    return 0;
}

/* ---- HTTP routing ---- */

static int http_route(struct lws *wsi, http_session *s, const char *in, size_t len)
{
    static const char *const allow[] = {"allow:", "GET, HEAD", "cache-control:", "no-store", NULL};
    static const char method_text[] = "405 method not allowed\n";
    char uri[SERVER_URI_MAX_BYTES];
    server *srv = server_from_wsi(wsi);

    if (!s || !in)
        return -1;
    conn *c = server_conn(wsi);
    if (c && c->evicted)
        return -1;
    server_conn_state(wsi, CONN_BUSY);
    const char *refused = server_refusal(wsi, srv, false);
    if (refused == refusal_host_too_long)
        return http_reply_text(wsi, s, 431, "431 Host header too long\n");
    if (refused)
        return http_reply_text(wsi, s, 403, "403 foreign Host header refused (cross-site / DNS rebinding "
                                            "protection): open the panel by IP address or as localhost\n");
    if (len >= sizeof uri || uri_too_long(wsi))
        return http_reply_text(wsi, s, 414, "414 request path too long\n");
    memcpy(uri, in, len);
    uri[len] = '\0';
    if (strlen(uri) != len)
        return http_reply_text(wsi, s, 400, "400 bad request path\n");
    if (!strncmp(uri, "/api/", 5) || !strcmp(uri, "/api"))
        return api_handle(wsi, srv, s, uri);
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0 && lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) <= 0)
        return http_reply(wsi, s, 405, "text/plain; charset=utf-8", allow, (char *)method_text,
                          sizeof method_text - 1, false);
    return static_handle(wsi, srv, s, uri);
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    http_session *s = user;

    switch (reason) {
    case LWS_CALLBACK_HTTP:
        return http_route(wsi, s, in, len);
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: /* a keep-alive connection asking to upgrade */
        return server_confirm_upgrade(wsi, in);
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return s ? http_reply_writeable(wsi, s) : 0;
    case LWS_CALLBACK_WSI_DESTROY: { /* every HTTP/websocket wsi ends here, whatever its protocol */
        conn *c = server_conn(wsi);
        if (c) {
            lws_set_opaque_user_data(wsi, NULL);
            listener_conn_closed(server_from_wsi(wsi), c);
        }
        return 0;
    }
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return -1; /* a websocket asking for subprotocol "http": not a protocol we speak */
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: { /* the store's indexer has results (ws_upload_wake) */
        server *srv = server_from_wsi(wsi);
        if (srv && srv->store && !srv->destroying)
            store_service(srv->store);
        return 0;
    }
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        if (s)
            http_session_clear(s);
        break;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- options ---- */

static int resolve_options(const vor_server_options *in, vor_server_options *o, int *lws_port)
{
    *o = *in;
    if (!o->host || !strcmp(o->host, "localhost"))
        o->host = VOR_SERVER_DEFAULT_HOST;
    if (!o->site_dir)
        o->site_dir = o->default_site_dir ? o->default_site_dir : VOR_SERVER_DEFAULT_SITE;
    if (o->port == 0)
        o->port = VOR_SERVER_DEFAULT_PORT;
    if (o->port == VOR_SERVER_PORT_ANY) {
        *lws_port = 0; /* the kernel picks; lws reports the result */
    } else if (o->port >= 1 && o->port <= 65535) {
        *lws_port = o->port;
    } else {
        fprintf(stderr, "vor serve: port %d is out of range (1-65535)\n", o->port);
        return -1;
    }
    if (o->max_viewers == 0)
        o->max_viewers = VOR_SERVER_DEFAULT_MAX_VIEWERS;
    if (o->max_viewers < 1 || o->max_viewers > VOR_SERVER_MAX_VIEWERS_LIMIT) {
        fprintf(stderr, "vor serve: max_viewers %d is out of range (1-%d)\n", o->max_viewers,
                VOR_SERVER_MAX_VIEWERS_LIMIT);
        return -1;
    }
    if (o->max_viewers_per_address == 0)
        o->max_viewers_per_address = (o->max_viewers + 1) / 2;
    if (o->max_viewers_per_address < 1 || o->max_viewers_per_address > o->max_viewers) {
        fprintf(stderr, "vor serve: max_viewers_per_address %d is out of range (1-%d)\n",
                o->max_viewers_per_address, o->max_viewers);
        return -1;
    }
    if (o->poll_interval_ms == 0)
        o->poll_interval_ms = VOR_SERVER_DEFAULT_POLL_MS;
    if (o->poll_interval_ms < 1 || o->poll_interval_ms > 10000) {
        fprintf(stderr, "vor serve: poll interval %d ms is out of range (1-10000)\n", o->poll_interval_ms);
        return -1;
    }
    if (o->stall_timeout_ms == 0)
        o->stall_timeout_ms = VOR_SERVER_DEFAULT_STALL_MS;
    if (o->stall_timeout_ms != VOR_SERVER_STALL_NEVER &&
        (o->stall_timeout_ms < 100 || o->stall_timeout_ms > 86400000)) {
        fprintf(stderr, "vor serve: stall timeout %d ms is out of range (100-86400000, or never)\n",
                o->stall_timeout_ms);
        return -1;
    }
    if (o->path_count < 0 || o->path_count > VOR_SERVER_MAX_PATHS) {
        fprintf(stderr, "vor serve: path count %d is out of range (0-%d)\n", o->path_count,
                VOR_SERVER_MAX_PATHS);
        return -1;
    }
    for (int i = 0; i < o->path_count; i++)
        if (!o->paths[i] || !o->paths[i][0]) {
            fprintf(stderr, "vor serve: empty capture path\n");
            return -1;
        }
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = AI_NUMERICHOST;
    if (getaddrinfo(o->host, NULL, &hints, &ai) != 0) {
        fprintf(stderr, "vor serve: host '%s' is not an IP address\n", o->host);
        return -1;
    }
    freeaddrinfo(ai);
    return 0;
}

static bool host_is_ipv4(const char *host)
{
    return strchr(host, ':') == NULL;
}

/* ---- run ---- */

/* Lines libwebsockets logs about a client's malformed or oversized request: the client's
 * doing, answered (414/431) or dropped; never printed, or any client could flood stderr. */
static const char *const peer_lines[] = {
    "Ran out of header data space",
    "More hdr frags than we can deal with",
    "exceeds limit",        /* "header N exceeds limit M": a token cut at its token_limit */
    "Duplicated method",
    "Unknown method",
    "lws_parse failed",
};

/* Rate limit state; libwebsockets logs from the service thread only (one server at a time). */
static struct {
    int64_t window_start_ms;
    int printed;           /* lines printed in the current window */
    long suppressed;       /* lines dropped by the rate limit in the current window */
} log_limit;

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* libwebsockets' own error lines, without its timestamp, marked as coming from it; at most
 * LOG_LINES_PER_MINUTE a minute (then one line saying how many were dropped). */
static void log_lws_line(int level, const char *line)
{
    for (size_t i = 0; i < sizeof peer_lines / sizeof peer_lines[0]; i++)
        if (strstr(line, peer_lines[i]))
            return;
    if (!(level & LLL_ERR))
        return; /* warnings are enabled only so the peer lines above reach this filter */
    int64_t now = monotonic_ms();
    if (now - log_limit.window_start_ms >= 60000) {
        if (log_limit.suppressed)
            fprintf(stderr, "vor serve: libwebsockets: (%ld more messages were not shown)\n", log_limit.suppressed);
        log_limit.window_start_ms = now;
        log_limit.printed = 0;
        log_limit.suppressed = 0;
    }
    if (log_limit.printed >= LOG_LINES_PER_MINUTE) {
        log_limit.suppressed++;
        return;
    }
    log_limit.printed++;
    fprintf(stderr, "vor serve: libwebsockets: %s", line);
}

typedef struct run_timers {
    lws_sorted_usec_list_t stop_check; /* bounds poll() sleeps so a stop flag is seen */
    lws_sorted_usec_list_t grace;      /* end of the stop grace period */
    struct lws_context *context;
    bool grace_over;
} run_timers;

static void stop_check_cb(lws_sorted_usec_list_t *sul)
{
    run_timers *t = lws_container_of(sul, run_timers, stop_check);
    lws_sul_schedule(t->context, 0, &t->stop_check, stop_check_cb, STOP_CHECK_MS * LWS_US_PER_MS);
}

static void grace_cb(lws_sorted_usec_list_t *sul)
{
    run_timers *t = lws_container_of(sul, run_timers, grace);
    t->grace_over = true;
}

static void warn_about_inputs(const server *srv)
{
    const capture_registry *r = &srv->registry;
    for (size_t i = 0; i < r->count; i++) {
        capture_probe pr;
        if (r->entries[i].dir >= 0)
            continue;
        capture_probe_path(r->entries[i].path, &pr);
        if (pr.state == CAPTURE_MISSING)
            fprintf(stderr, "vor serve: warning: %s does not exist (yet); listed as missing\n",
                    r->entries[i].path);
        else if (pr.state == CAPTURE_NOT_CAPTURE)
            fprintf(stderr, "vor serve: warning: %s is not a vor capture (bad magic); listed, not served\n",
                    r->entries[i].path);
    }
    if (!srv->site_real)
        fprintf(stderr, "vor serve: warning: site directory %s not found: the panel will not load "
                        "(build it, or pass --site DIR); the API still works\n", srv->site_dir);
    if (!access_address_is_loopback(srv->opts->host))
        fprintf(stderr, "vor serve: warning: --host %s is not a loopback address: captures are readable "
                        "by anyone on that network, without authentication\n", srv->opts->host);
}

/* Per-header storage limits (see the top of this file). Every token not listed keeps
 * SERVER_OTHER_HEADER_BYTES. */
static void set_token_limits(struct lws_token_limits *t)
{
    static const enum lws_token_indexes uri_tokens[] = {
        WSI_TOKEN_GET_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_OPTIONS_URI, WSI_TOKEN_PUT_URI,
        WSI_TOKEN_PATCH_URI, WSI_TOKEN_DELETE_URI, WSI_TOKEN_CONNECT, WSI_TOKEN_HEAD_URI,
        WSI_TOKEN_HTTP_URI_ARGS};
    static const enum lws_token_indexes unused_tokens[] = {
        WSI_TOKEN_HTTP_COOKIE, WSI_TOKEN_HTTP_USER_AGENT, WSI_TOKEN_HTTP_REFERER,
        WSI_TOKEN_HTTP_ACCEPT_LANGUAGE, WSI_TOKEN_HTTP_IF_NONE_MATCH,
        WSI_TOKEN_HTTP_ACCEPT};
    for (int i = 0; i < WSI_TOKEN_COUNT; i++)
        t->token_limit[i] = SERVER_OTHER_HEADER_BYTES;
    for (size_t i = 0; i < sizeof uri_tokens / sizeof uri_tokens[0]; i++)
        t->token_limit[uri_tokens[i]] = SERVER_URI_MAX_BYTES;
    for (size_t i = 0; i < sizeof unused_tokens / sizeof unused_tokens[0]; i++)
        t->token_limit[unused_tokens[i]] = SERVER_UNUSED_HEADER_BYTES;
    t->token_limit[WSI_TOKEN_HOST] = SERVER_HOST_MAX_BYTES;
    t->token_limit[WSI_TOKEN_ORIGIN] = SERVER_HOST_MAX_BYTES;
}

/* Descriptors open in this process now (/proc/self/fd), or -1 when it cannot tell. */
static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = -1; /* the directory's own descriptor is listed too */
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Connection limits; the descriptor budget is what the limit leaves after what is open now
 * (the context, the listener, the caller's own files) and a reserve for files and scans. */
static int connection_limits(server *srv, conn_limits *lim)
{
    struct rlimit rl;
    unsigned long limit = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1ul << 20) ? (1ul << 20) : (unsigned long)rl.rlim_cur;
    srv->fd_limit = limit;
    int open_now = open_descriptors();
    if (open_now < 0)
        open_now = 32;
    long reserve = (long)limit / 8 < SERVER_FD_RESERVE ? (long)limit / 8 : SERVER_FD_RESERVE;
    long budget = (long)limit - open_now - (reserve < 4 ? 4 : reserve);
    if (budget < CONN_FDS_VIEWER + CONN_FDS_HTTP) {
        fprintf(stderr, "vor serve: too few file descriptors: %d of %lu are open already (raise `ulimit -n`)\n",
                open_now, limit);
        return -1;
    }
    lim->fd_budget = (int)(budget > 1000000 ? 1000000 : budget);
    lim->max = SERVER_MAX_CONNECTIONS;
    lim->per_address = SERVER_CONNS_PER_ADDRESS;
    lim->waiting_max = SERVER_WAITING_MAX;
    lim->waiting_per_address = SERVER_WAITING_PER_ADDRESS;
    lim->busy_stall_ms = SERVER_BUSY_STALL_MS;
    return 0;
}

int vor_server_run(const vor_server_options *in)
{
    static const struct lws_protocol_vhost_options pvo_default = {NULL, NULL, "default", "1"};
    static const struct lws_protocol_vhost_options pvo_capture = {NULL, &pvo_default, "vor-capture", ""};
    static const struct lws_protocol_vhost_options hdr_nosniff = {NULL, NULL, "x-content-type-options:", "nosniff"};
    static const struct lws_protocol_vhost_options hdr_corp = {&hdr_nosniff, NULL, "cross-origin-resource-policy:", "same-origin"};
    static const struct lws_protocol_vhost_options hdr_coep = {&hdr_corp, NULL, "cross-origin-embedder-policy:", "require-corp"};
    static const struct lws_protocol_vhost_options hdr_coop = {&hdr_coep, NULL, "cross-origin-opener-policy:", "same-origin"};
    /* No lws keepalive pings or idle hangups: lws does not read viewers' sockets (ws_input.c
     * does), so it would never see the pongs; viewer_slots.c pings instead. */
    static const lws_retry_bo_t no_idle_policy = {NULL, 0, 0, 0, 0, 0};
    struct lws_protocols protocols[] = {
        {"http", http_callback, sizeof(http_session), 0, 0, NULL, 0},
        {"vor-capture", ws_stream_callback, ws_stream_session_size(), SERVER_CLIENT_MSG_MAX_BYTES, 0, NULL,
         SERVER_CHUNK_BYTES + 16},
        /* Uploaders (ws_upload.c): the same connection code, another protocol name. */
        {"vor-upload", ws_stream_callback, ws_stream_session_size(), SERVER_CLIENT_MSG_MAX_BYTES, 0, NULL,
         SERVER_CHUNK_BYTES + 16},
        {NULL, NULL, 0, 0, 0, NULL, 0}};
    struct lws_protocols raw_protocols[] = {
        {"vor-raw", listener_raw_callback, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0}};
    struct lws_context_creation_info info;
    static struct lws_token_limits token_limits; /* read by lws while the context lives */
    vor_server_options opts;
    server srv;
    run_timers timers;
    conn_limits limits;
    char err[256];
    int lws_port = 0, rc = 1;

    if (!in) {
        fprintf(stderr, "vor serve: no options\n");
        return 2;
    }
    if (resolve_options(in, &opts, &lws_port))
        return 2;
    if (atomic_exchange(&stop_requested, 0))
        return 0; /* stopped before it started */

    memset(&srv, 0, sizeof srv);
    memset(&timers, 0, sizeof timers);
    srv.listen_fd = -1;
    srv.opts = &opts;
    srv.site_dir = opts.site_dir;
    if (registry_init(&srv.registry, opts.paths, opts.path_count, err, sizeof err)) {
        fprintf(stderr, "vor serve: %s\n", err);
        return 1;
    }
    srv.site_real = realpath(opts.site_dir, NULL); /* NULL: missing, reported below */
    if (opts.token_file && tokens_load(&srv.tokens, opts.token_file, err, sizeof err)) {
        fprintf(stderr, "vor serve: %s\n", err);
        rc = 2;
        goto out;
    }
    if (opts.store_dir && !access_address_is_loopback(opts.host) && srv.tokens.n == 0) {
        fprintf(stderr, "vor serve: --store on %s (not a loopback address) needs --token-file: uploads and deletes "
                        "from the network must carry a token\n", opts.host);
        rc = 2;
        goto out;
    }
    if (opts.token_reads && srv.tokens.n == 0) {
        fprintf(stderr, "vor serve: --token-reads needs --token-file\n");
        rc = 2;
        goto out;
    }
    if (opts.store_dir) {
        store_options so = {opts.store_dir, opts.max_capture_bytes, opts.max_store_bytes};
        store_callbacks cb = {ws_upload_wake, ws_upload_end, &srv};
        srv.upload_buf = malloc(SERVER_UPLOAD_READ_BYTES);
        srv.store = srv.upload_buf ? store_open(&so, &cb, err, sizeof err) : NULL;
        if (!srv.store) {
            fprintf(stderr, "vor serve: --store %s: %s\n", opts.store_dir, srv.upload_buf ? err : "out of memory");
            goto out;
        }
        srv.compare = compare_jobs_new(opts.diff_exe); /* NULL (no memory): /api/compare answers 501 */
    }
    srv.chunk = malloc(LWS_PRE + SERVER_CHUNK_BYTES);
    srv.viewers = calloc((size_t)opts.max_viewers, sizeof *srv.viewers);
    srv.pending = calloc((size_t)opts.max_viewers, sizeof *srv.pending);
    if (!srv.chunk || !srv.viewers || !srv.pending) {
        fprintf(stderr, "vor serve: out of memory\n");
        goto out;
    }
    if (listener_open(&srv, opts.host, lws_port, err, sizeof err)) {
        fprintf(stderr, "vor serve: cannot listen on %s:%d: %s\n", opts.host, lws_port, err);
        goto out;
    }
    warn_about_inputs(&srv);

    /* Quiet while starting: start-up failures are explained below in our own words. */
    lws_set_log_level(0, log_lws_line);
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_VALIDATE_UTF8 |
                   LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
    if (host_is_ipv4(opts.host))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    info.user = &srv;
    info.pt_serv_buf_size = SERVER_SERV_BUF_BYTES;
    /* A header buffer for every connection the server admits, allocated while in use: so a
     * connection never queues behind others for one (conn_table.c bounds the connections). */
    info.max_http_header_pool = SERVER_MAX_CONNECTIONS + SERVER_CLOSING_SLACK;
    info.max_http_header_data = SERVER_HEADER_BYTES;
    set_token_limits(&token_limits);
    info.token_limits = &token_limits;
    srv.context = lws_create_context(&info);
    if (!srv.context) {
        fprintf(stderr, "vor serve: cannot create the libwebsockets context\n");
        goto out;
    }
    timers.context = srv.context;

    /* The vhosts do not listen: listener.c accepts and hands each admitted socket over. */
    info.vhost_name = "vor";
    info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
    info.protocols = protocols;
    info.pvo = &pvo_capture;
    info.headers = &hdr_coop;
    info.timeout_secs_ah_idle = SERVER_HEADER_IDLE_S;
    info.keepalive_timeout = SERVER_KEEPALIVE_IDLE_S;
    info.retry_and_idle_policy = &no_idle_policy;
    srv.vhost = lws_create_vhost(srv.context, &info);
    info.vhost_name = "vor-raw";
    info.protocols = raw_protocols;
    info.pvo = NULL;
    info.headers = NULL;
    srv.raw_vhost = srv.vhost ? lws_create_vhost(srv.context, &info) : NULL;
    if (!srv.raw_vhost || connection_limits(&srv, &limits) || conn_table_init(&srv.conns, &limits) ||
        listener_start(&srv)) {
        fprintf(stderr, "vor serve: cannot start serving on %s:%d\n", opts.host, lws_port);
        goto out;
    }
    memset(&log_limit, 0, sizeof log_limit);
    log_limit.window_start_ms = monotonic_ms();
    lws_set_log_level(LLL_ERR | LLL_WARN, log_lws_line);
    int port = listener_port(&srv);
    access_policy_init(&srv.access, opts.host, port); /* opts.host is numeric (checked above) */
    if (opts.on_ready)
        opts.on_ready(opts.on_ready_user, opts.host, port);
    else
        fprintf(stderr, "vor serve: http://%s%s%s:%d/  (%zu capture%s, %zu director%s; Ctrl-C stops)\n",
                host_is_ipv4(opts.host) ? "" : "[", opts.host, host_is_ipv4(opts.host) ? "" : "]", port,
                srv.registry.count, srv.registry.count == 1 ? "" : "s", srv.registry.dir_count,
                srv.registry.dir_count == 1 ? "y" : "ies");

    if (srv.store)
        store_service(srv.store); /* results the indexer had before the context existed */
    stop_check_cb(&timers.stop_check);
    while (!atomic_load(&stop_requested))
        if (lws_service(srv.context, 0) < 0)
            break;

    /* Graceful part of the stop: 1001 to every viewer, wait for them, bounded. */
    srv.stopping = true;
    lws_sul_cancel(&srv.poll_sul);
    lws_sul_cancel(&srv.stall_sul);
    lws_sul_cancel(&srv.accept_sul);
    ws_stream_close_all(&srv);
    lws_sul_schedule(srv.context, 0, &timers.grace, grace_cb, SERVER_STOP_GRACE_MS * LWS_US_PER_MS);
    while ((srv.viewer_conns > 0 || srv.upload_conns > 0) && !timers.grace_over)
        if (lws_service(srv.context, 0) < 0)
            break;
    lws_sul_cancel(&timers.grace);
    lws_sul_cancel(&timers.stop_check);
    rc = 0;
out:
    srv.stopping = true;
    srv.destroying = true;
    if (srv.store)
        store_stop_indexer(srv.store); /* it must not wake a context being destroyed */
    capture_access_free(&srv); /* the indexes of random access (capture_access.c), timer first */
    if (srv.context)
        lws_context_destroy(srv.context); /* closes every remaining connection */
    listener_close(&srv);
    conn_table_free(&srv.conns);
    free(srv.pending);
    free(srv.viewers);
    free(srv.chunk);
    free(srv.site_real);
    registry_free(&srv.registry);
    compare_jobs_free(srv.compare);
    store_close(srv.store); /* after the context: every upload was released as its connection closed */
    free(srv.upload_buf);
    tokens_free(&srv.tokens);
    atomic_store(&stop_requested, 0);
    return rc;
}
