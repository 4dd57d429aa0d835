/*
 * listener.c - the listening socket and the accept path: who gets in, who makes room, and what
 * happens when file descriptors run out.
 *
 * Why not libwebsockets' own listener: lws 4.1.6 accepts whatever comes and, when accept() fails
 * for lack of descriptors (EMFILE), logs and returns with the listening socket still readable,
 * so poll() wakes at once, forever: the server spins at 100% CPU until some connection times
 * out. Nor does it let the server choose which connection should make room for a new one. So the
 * server listens itself: the socket sits in lws's poll loop as a raw descriptor (the raw vhost),
 * and each accepted socket goes to lws (lws_adopt_descriptor_vhost_via_info, HTTP) only once
 * conn_table.c admitted it, after the connections it chose to evict were closed.
 *
 * Back-off, never a busy loop: when accept() runs out of descriptors (EMFILE, ENFILE, ENOBUFS,
 * ENOMEM), up to SERVER_EVICT_ON_EMFILE of the oldest waiting connections are closed and the
 * listener is not polled for SERVER_ACCEPT_RETRY_MS (SERVER_ACCEPT_IDLE_RETRY_MS when nothing
 * could be closed); the first time, one line on stderr says so. When the server is full of
 * connections it may not evict (CONN_DEFER), the newcomer is refused and the listener paused the
 * same way; a connection that closes resumes it at once. Connections are refused with a short
 * 503 (written without blocking), then closed.
 * Descriptor budget (so accept() rarely fails at all): RLIMIT_NOFILE minus what is open at start
 * and a reserve for files and directory scans, each connection counting CONN_FDS_* (server.c
 * computes it, conn_table.c enforces it).
 * Accepted sockets get TCP keepalive (60 s idle, 3 probes 10 s apart: a peer that vanished
 * without a FIN is noticed) and TCP_NODELAY, as lws's listener would have set.
 */
#include "server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

_Static_assert(SERVER_ACCEPT_BATCH * 2 <= SERVER_WAITING_PER_ADDRESS, "see SERVER_ACCEPT_BATCH");

enum {
    SERVER_EVICT_ON_EMFILE = 8,      /* waiting connections closed when accept() hits EMFILE */
    SERVER_KEEPALIVE_IDLE_S = 60,    /* TCP keepalive: idle time before probing */
    SERVER_KEEPALIVE_INTERVAL_S = 10,
    SERVER_KEEPALIVE_PROBES = 3
};

int listener_open(server *srv, const char *host, int port, char *err, size_t errlen)
{
    struct addrinfo hints, *ai = NULL;
    char ps[16];
    int one = 1;

    srv->listen_fd = -1;
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &ai) != 0 || !ai) {
        snprintf(err, errlen, "'%s' is not an IP address", host);
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, O_NONBLOCK) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        snprintf(err, errlen, "%s%s", strerror(errno),
                 errno == EADDRINUSE ? " (another server on this port? try --port)" : "");
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    srv->listen_fd = fd;
    return 0;
}

int listener_port(const server *srv)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (srv->listen_fd < 0 || getsockname(srv->listen_fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int listener_start(server *srv)
{
    lws_adopt_desc_t info;
    memset(&info, 0, sizeof info);
    info.vh = srv->raw_vhost;
    info.type = LWS_ADOPT_RAW_FILE_DESC;
    info.fd.filefd = srv->listen_fd;
    info.vh_prot_name = "vor-raw";
    srv->listen_wsi = lws_adopt_descriptor_vhost_via_info(&info);
    srv->listen_adopted = srv->listen_wsi != NULL; /* from now on lws closes the descriptor */
    return srv->listen_adopted ? 0 : -1;
}

void listener_close(server *srv)
{
    if (!srv->listen_adopted && srv->listen_fd >= 0)
        close(srv->listen_fd);
    srv->listen_fd = -1;
}

/* ---- pausing ---- */

static void resume_cb(lws_sorted_usec_list_t *sul)
{
    server *srv = lws_container_of(sul, server, accept_sul);
    if (!srv->accept_paused || !srv->listen_wsi || srv->stopping)
        return;
    srv->accept_paused = false;
    lws_rx_flow_control(srv->listen_wsi, 1);
}

static void pause_accepting(server *srv, int ms)
{
    if (!srv->listen_wsi)
        return;
    if (!srv->accept_paused) {
        srv->accept_paused = true;
        lws_rx_flow_control(srv->listen_wsi, 0);
    }
    lws_sul_schedule(srv->context, 0, &srv->accept_sul, resume_cb, (lws_usec_t)ms * LWS_US_PER_MS);
}

void listener_conn_closed(server *srv, conn *c)
{
    conn_close(&srv->conns, c);
    if (srv->accept_paused && !srv->stopping)
        lws_sul_schedule(srv->context, 0, &srv->accept_sul, resume_cb, 1);
}

void listener_evict(server *srv, conn *c)
{
    conn_mark_evicted(&srv->conns, c);
    if (c->wsi)
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC); /* no flush, no FIN wait */
}

/* ---- accepting ---- */

/* A connection we will not serve: a short answer if the socket takes it at once, then close. */
static void refuse(int fd)
{
    static const char busy[] =
        "HTTP/1.1 503 Service Unavailable\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        "cache-control: no-store\r\n"
        "retry-after: 1\r\n"
        "cross-origin-opener-policy: same-origin\r\n"
        "cross-origin-embedder-policy: require-corp\r\n"
        "cross-origin-resource-policy: same-origin\r\n"
        "connection: close\r\n"
        "content-length: 44\r\n\r\n"
        "503 too many connections: try again shortly\n";
    (void)!send(fd, busy, sizeof busy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    close(fd);
}

static void set_socket_options(int fd)
{
    int one = 1, idle = SERVER_KEEPALIVE_IDLE_S, interval = SERVER_KEEPALIVE_INTERVAL_S,
        probes = SERVER_KEEPALIVE_PROBES;
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void admit(server *srv, int fd, const struct sockaddr_storage *ss)
{
    conn *victims[4];
    int n_victims = 0;
    peer_addr addr;
    int64_t now = server_now_ms();

    peer_addr_from_sockaddr(&addr, (const struct sockaddr *)ss);
    conn_verdict verdict = conn_admit(&srv->conns, &addr, now, victims, &n_victims);
    for (int i = 0; i < n_victims; i++)
        listener_evict(srv, victims[i]);
    if (verdict != CONN_ADMIT) {
        refuse(fd);
        if (verdict == CONN_DEFER)
            pause_accepting(srv, SERVER_ACCEPT_IDLE_RETRY_MS);
        return;
    }
    conn *c = conn_open(&srv->conns, &addr, now);
    if (!c) { /* cannot happen after CONN_ADMIT; be safe */
        refuse(fd);
        pause_accepting(srv, SERVER_ACCEPT_RETRY_MS);
        return;
    }
    set_socket_options(fd);
    lws_adopt_desc_t info;
    memset(&info, 0, sizeof info);
    info.vh = srv->vhost;
    info.type = LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP;
    info.fd.sockfd = fd;
    info.opaque = c;
    struct lws *wsi = lws_adopt_descriptor_vhost_via_info(&info); /* closes fd on failure */
    if (!wsi) {
        if (c->state != CONN_FREE && !c->wsi) /* not already forgotten through WSI_DESTROY */
            conn_close(&srv->conns, c);
        return;
    }
    c->wsi = wsi;
}

static void out_of_descriptors(server *srv, int err)
{
    int64_t now = server_now_ms();
    int closed = 0;
    for (; closed < SERVER_EVICT_ON_EMFILE; closed++) {
        conn *v = conn_pick_victim(&srv->conns, NULL, false, now);
        if (!v)
            break;
        listener_evict(srv, v);
    }
    if (!srv->fd_warning_shown) {
        struct rlimit rl;
        srv->fd_warning_shown = true;
        fprintf(stderr, "vor serve: warning: out of file descriptors (%s; limit %lu): closing idle "
                        "connections and accepting more slowly; raise `ulimit -n` unless this is an attack\n",
                strerror(err), getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (unsigned long)rl.rlim_cur : srv->fd_limit);
    }
    pause_accepting(srv, closed ? SERVER_ACCEPT_RETRY_MS : SERVER_ACCEPT_IDLE_RETRY_MS);
}

static void accept_ready(server *srv)
{
    if (srv->stopping) {
        pause_accepting(srv, SERVER_ACCEPT_IDLE_RETRY_MS);
        return;
    }
    for (int i = 0; i < SERVER_ACCEPT_BATCH && !srv->accept_paused; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept(srv->listen_fd, (struct sockaddr *)&ss, &len);
        if (fd >= 0) {
            admit(srv, fd, &ss);
            continue;
        }
        switch (errno) {
        case EINTR:
        case ECONNABORTED: /* the client gave up while queued */
        case EPROTO:
        case EPERM:        /* a firewall rule */
            continue;
        case EAGAIN:
#if EWOULDBLOCK != EAGAIN
        case EWOULDBLOCK:
#endif
            return;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
            out_of_descriptors(srv, errno);
            return;
        default:
            pause_accepting(srv, SERVER_ACCEPT_IDLE_RETRY_MS);
            return;
        }
    }
}

int listener_raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    server *srv = server_from_wsi(wsi);
    if (srv && wsi == srv->listen_wsi) {
        if (reason == LWS_CALLBACK_RAW_RX_FILE)
            accept_ready(srv);
        else if (reason == LWS_CALLBACK_RAW_CLOSE_FILE)
            srv->listen_wsi = NULL;
        return 0;
    }
    return ws_input_callback(wsi, reason, in, len);
}
