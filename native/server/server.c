/*
 * server.c - vor_server_run(): one libwebsockets context, one vhost, one port, one thread.
 *
 * Protocols on the vhost:
 *   [0] "http"         every plain HTTP request (no lws mounts: routing is ours)
 *                      /api/... -> http_api.c, anything else -> http_static.c
 *   [1] "vor-capture"  websocket viewers (ws_stream.c). Marked as the vhost's "default"
 *                      protocol, so clients that send no Sec-WebSocket-Protocol land here too.
 * Response headers: the cross-origin isolation trio (COOP/COEP/CORP) and nosniff are the vhost's
 * `headers` list, which lws writes after every status line it produces, errors included. Each
 * name ends with a colon: lws copies it verbatim into "name value".
 *
 * Binding: 127.0.0.1 unless --host says otherwise, because a capture reveals the structure of the
 * profiled program (scope and function names, timings, memory) and there is no authentication.
 *
 * Stopping: vor_server_request_stop() only stores an atomic flag (async-signal-safe, no fd
 * that could be closed or reused under a signal handler). The loop checks it after every
 * lws_service() return: at once when the signal interrupted poll() on this thread, otherwise
 * within STOP_CHECK_MS thanks to a timer that keeps poll() from sleeping longer. Then viewers
 * get a 1001 close, the loop runs until they are gone or SERVER_STOP_GRACE_MS passes (a
 * stalled viewer cannot take a close frame), and lws_context_destroy() closes the rest.
 */
#include "server_internal.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    STOP_CHECK_MS = 100,           /* longest delay between a stop request (other thread) and the stop */
    SERVER_SERV_BUF_BYTES = 32 * 1024, /* lws per-thread buffer: static file chunks */
    SERVER_HEADER_POOL = 32        /* concurrent connections still parsing HTTP headers */
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

/* ---- HTTP routing ---- */

static int http_route(struct lws *wsi, http_session *s, const char *in, size_t len)
{
    static const char *const allow[] = {"allow:", "GET, HEAD", "cache-control:", "no-store", NULL};
    static const char method_text[] = "405 method not allowed\n";
    char uri[SERVER_URI_MAX_BYTES];
    server *srv = server_from_wsi(wsi);

    if (!s || !in)
        return -1;
    if (len >= sizeof uri)
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
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return s ? http_reply_writeable(wsi, s) : 0;
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return -1; /* a websocket asking for subprotocol "http": not a protocol we speak */
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
        o->site_dir = VOR_SERVER_DEFAULT_SITE;
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
    if (o->poll_interval_ms == 0)
        o->poll_interval_ms = VOR_SERVER_DEFAULT_POLL_MS;
    if (o->poll_interval_ms < 1 || o->poll_interval_ms > 10000) {
        fprintf(stderr, "vor serve: poll interval %d ms is out of range (1-10000)\n", o->poll_interval_ms);
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

/* lws does not say why it could not listen: try the same bind to get an errno to report. */
static void explain_bind_failure(const char *host, int port, char *out, size_t outlen)
{
    struct addrinfo hints, *ai = NULL;
    char ps[16];

    snprintf(out, outlen, "libwebsockets could not create the listener");
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &ai) != 0 || !ai)
        return;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0)
            snprintf(out, outlen, "%s%s", strerror(errno),
                     errno == EADDRINUSE ? " (another server on this port? try --port)" : "");
        close(fd);
    }
    freeaddrinfo(ai);
}

/* ---- run ---- */

/* libwebsockets' own error lines, without its timestamp, marked as coming from it. */
static void log_lws_line(int level, const char *line)
{
    (void)level;
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
}

int vor_server_run(const vor_server_options *in)
{
    static const struct lws_protocol_vhost_options pvo_default = {NULL, NULL, "default", "1"};
    static const struct lws_protocol_vhost_options pvo_capture = {NULL, &pvo_default, "vor-capture", ""};
    static const struct lws_protocol_vhost_options hdr_nosniff = {NULL, NULL, "x-content-type-options:", "nosniff"};
    static const struct lws_protocol_vhost_options hdr_corp = {&hdr_nosniff, NULL, "cross-origin-resource-policy:", "same-origin"};
    static const struct lws_protocol_vhost_options hdr_coep = {&hdr_corp, NULL, "cross-origin-embedder-policy:", "require-corp"};
    static const struct lws_protocol_vhost_options hdr_coop = {&hdr_coep, NULL, "cross-origin-opener-policy:", "same-origin"};
    struct lws_protocols protocols[] = {
        {"http", http_callback, sizeof(http_session), 0, 0, NULL, 0},
        {"vor-capture", ws_stream_callback, ws_stream_session_size(), SERVER_CLIENT_MSG_MAX_BYTES, 0, NULL,
         SERVER_CHUNK_BYTES + 16},
        {NULL, NULL, 0, 0, 0, NULL, 0}};
    struct lws_context_creation_info info;
    vor_server_options opts;
    server srv;
    run_timers timers;
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
    srv.opts = &opts;
    srv.site_dir = opts.site_dir;
    if (registry_init(&srv.registry, opts.paths, opts.path_count, err, sizeof err)) {
        fprintf(stderr, "vor serve: %s\n", err);
        return 1;
    }
    srv.site_real = realpath(opts.site_dir, NULL); /* NULL: missing, reported below */
    srv.chunk = malloc(LWS_PRE + SERVER_CHUNK_BYTES);
    srv.viewers = calloc((size_t)opts.max_viewers, sizeof *srv.viewers);
    if (!srv.chunk || !srv.viewers) {
        fprintf(stderr, "vor serve: out of memory\n");
        goto out;
    }
    warn_about_inputs(&srv);

    /* Quiet while starting: start-up failures are explained below in our own words. */
    lws_set_log_level(0, log_lws_line);
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_VALIDATE_UTF8 |
                   LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND | LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
    if (host_is_ipv4(opts.host))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    info.user = &srv;
    info.pt_serv_buf_size = SERVER_SERV_BUF_BYTES;
    info.max_http_header_pool = SERVER_HEADER_POOL;
    srv.context = lws_create_context(&info);
    if (!srv.context) {
        fprintf(stderr, "vor serve: cannot create the libwebsockets context\n");
        goto out;
    }
    timers.context = srv.context;

    info.vhost_name = "vor";
    info.port = lws_port;
    info.iface = opts.host;
    info.protocols = protocols;
    info.pvo = &pvo_capture;
    info.headers = &hdr_coop;
    struct lws_vhost *vh = lws_create_vhost(srv.context, &info);
    if (!vh) {
        explain_bind_failure(opts.host, lws_port, err, sizeof err);
        fprintf(stderr, "vor serve: cannot listen on %s:%d: %s\n", opts.host, lws_port, err);
        goto out;
    }
    lws_set_log_level(LLL_ERR, log_lws_line);
    int port = lws_get_vhost_listen_port(vh);
    if (opts.on_ready)
        opts.on_ready(opts.on_ready_user, opts.host, port);
    else
        fprintf(stderr, "vor serve: http://%s%s%s:%d/  (%zu capture%s, %zu director%s; Ctrl-C stops)\n",
                host_is_ipv4(opts.host) ? "" : "[", opts.host, host_is_ipv4(opts.host) ? "" : "]", port,
                srv.registry.count, srv.registry.count == 1 ? "" : "s", srv.registry.dir_count,
                srv.registry.dir_count == 1 ? "y" : "ies");

    stop_check_cb(&timers.stop_check);
    while (!atomic_load(&stop_requested))
        if (lws_service(srv.context, 0) < 0)
            break;

    /* Graceful part of the stop: 1001 to every viewer, wait for them, bounded. */
    srv.stopping = true;
    lws_sul_cancel(&srv.poll_sul);
    ws_stream_close_all(&srv);
    lws_sul_schedule(srv.context, 0, &timers.grace, grace_cb, SERVER_STOP_GRACE_MS * LWS_US_PER_MS);
    while (srv.viewer_count > 0 && !timers.grace_over)
        if (lws_service(srv.context, 0) < 0)
            break;
    lws_sul_cancel(&timers.grace);
    lws_sul_cancel(&timers.stop_check);
    rc = 0;
out:
    if (srv.context)
        lws_context_destroy(srv.context); /* closes every remaining connection */
    free(srv.viewers);
    free(srv.chunk);
    free(srv.site_real);
    registry_free(&srv.registry);
    atomic_store(&stop_requested, 0);
    return rc;
}
