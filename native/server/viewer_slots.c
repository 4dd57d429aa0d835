/*
 * viewer_slots.c - who may stream: max_viewers slots, at most max_viewers_per_address of them per
 * address, and stalled viewers giving theirs up.
 *
 * A viewer is stalled when
 *   - bytes wait for it and its socket has taken nothing for T: no writable event, and the
 *     peer's TCP acknowledged nothing more (TCP_INFO tcpi_bytes_acked: a peer that does not
 *     read stops acknowledging once its receive buffer is full, a slow one keeps going), or
 *   - nothing waits for it (parked at the end of a followed capture) and it has not answered a
 *     ping for T. The ping goes after everything sent, so its pong proves the client read all
 *     of it; browsers and websocket libraries answer pings by themselves.
 * A viewer that reads everything and waits at the end of a quiet capture answers its pings: it
 * is never stalled. T is stall_timeout_ms (default 60 s) normally, and a stalled viewer is
 * closed with 1008; parked viewers are pinged after stall_timeout_ms / 2 of quiet, so a dead
 * one is gone within 1.5 x stall_timeout_ms.
 * When a newcomer finds no free slot (none at all, or its address has its share), T becomes
 * SERVER_VIEWER_EVICT_MS for the viewers in its way: those parked without a recent pong are
 * pinged at once, and the first one found stalled is dropped (no close handshake: it would not
 * read one) and the newcomer takes its slot. A newcomer waits at most SERVER_VIEWER_PENDING_MS
 * for that, then is refused with 1013. So while a slot in its way is held by a stalled viewer a
 * newcomer gets in within SERVER_VIEWER_PENDING_MS, and viewers that keep reading keep theirs.
 * With stall_timeout_ms = VOR_SERVER_STALL_NEVER nothing is ever dropped or pinged.
 * One lws timer (stall_sul) runs the checks while viewers or newcomers exist: every
 * stall_timeout_ms / 4 (10 ms to 1 s), every SERVER_VIEWER_PRESSURE_TICK_MS while newcomers wait.
 */
#include "server_internal.h"

#include <linux/tcp.h> /* struct tcp_info with tcpi_bytes_acked (glibc's lacks it) */
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static bool never(const server *srv)
{
    return srv->opts->stall_timeout_ms == VOR_SERVER_STALL_NEVER;
}

static int64_t evict_ms(const server *srv)
{
    int s = srv->opts->stall_timeout_ms;
    return s < SERVER_VIEWER_EVICT_MS ? s : SERVER_VIEWER_EVICT_MS;
}

/* Bytes (data, a control frame or the final text/close) wait for the socket. */
bool viewer_tx_pending(const viewer *v)
{
    return v->phase == VIEWER_STREAMING || v->ping_due || v->pong_due ||
           (v->phase == VIEWER_FINISHING && !v->close_sent);
}

static bool stalled(const viewer *v, int64_t now, int64_t t)
{
    if (viewer_tx_pending(v))
        return now - v->tx_ms >= t;
    return v->ping_ms && now - v->ping_ms >= t;
}

/* The peer's TCP acknowledged more since the last look: the socket is taking bytes. */
static void sample_delivery(viewer *v, int64_t now)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    int fd = lws_get_socket_fd(v->wsi);
    memset(&ti, 0, sizeof ti);
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof ti.tcpi_bytes_acked)
        return;
    if (ti.tcpi_bytes_acked != v->acked) {
        v->acked = ti.tcpi_bytes_acked;
        v->tx_ms = now;
    }
}

static int per_address(const server *srv)
{
    return srv->opts->max_viewers_per_address;
}

static int address_count(const server *srv, const peer_addr *a)
{
    int n = 0;
    for (int i = 0; i < srv->opts->max_viewers; i++)
        n += srv->viewers[i] && peer_addr_equal(&srv->viewers[i]->addr, a);
    return n;
}

static void send_ping(viewer *v)
{
    if (v->ping_due || v->ping_ms || v->phase == VIEWER_FINISHING)
        return;
    if (!viewer_tx_pending(v))
        v->tx_ms = server_now_ms(); /* the stall clock runs only while bytes wait */
    v->ping_due = true;
    lws_callback_on_writable(v->wsi);
}

void viewer_note_pong(viewer *v, const unsigned char *data, size_t len)
{
    unsigned char want[8];
    for (int i = 0; i < 8; i++)
        want[i] = (unsigned char)(v->ping_seq >> (56 - 8 * i));
    if (!v->ping_ms || len != sizeof want || memcmp(data, want, sizeof want))
        return; /* unsolicited, or an old ping's */
    v->pong_ms = server_now_ms();
    v->ping_ms = 0;
}

/* ---- slots and newcomers ---- */

static void unpend(viewer *v)
{
    server *srv = v->srv;
    for (int i = 0; i < srv->pending_count; i++)
        if (srv->pending[i] == v) {
            memmove(srv->pending + i, srv->pending + i + 1, (size_t)(srv->pending_count - i - 1) * sizeof *srv->pending);
            srv->pending_count--;
            return;
        }
}

void viewer_release_slot(viewer *v)
{
    server *srv = v->srv;
    if (v->phase == VIEWER_PENDING)
        unpend(v);
    if (v->slot >= 0) {
        srv->viewers[v->slot] = NULL;
        srv->viewer_count--;
        v->slot = -1;
    }
}

/* The viewer in scope (NULL: all) stalled longest past t, or NULL. */
static viewer *pick_stalled(server *srv, const peer_addr *scope, int64_t now, int64_t t)
{
    viewer *best = NULL;
    for (int i = 0; i < srv->opts->max_viewers; i++) {
        viewer *v = srv->viewers[i];
        if (!v || (scope && !peer_addr_equal(&v->addr, scope)) || !stalled(v, now, t))
            continue;
        int64_t since = viewer_tx_pending(v) ? v->tx_ms : v->ping_ms;
        int64_t best_since = best ? (viewer_tx_pending(best) ? best->tx_ms : best->ping_ms) : 0;
        if (!best || since < best_since)
            best = v;
    }
    return best;
}

/* Pings the parked viewers in the newcomer's way that have not proved they read lately. */
static void ping_the_way(server *srv, const peer_addr *scope, int64_t now)
{
    for (int i = 0; i < srv->opts->max_viewers; i++) {
        viewer *v = srv->viewers[i];
        if (v && (!scope || peer_addr_equal(&v->addr, scope)) && !viewer_tx_pending(v) && !v->ping_ms &&
            now - v->pong_ms >= evict_ms(srv))
            send_ping(v);
    }
}

/* A slot for v now (evicting a stalled viewer in its way if need be)? Then it streams. */
static bool try_admit(viewer *v, int64_t now, const peer_addr **scope)
{
    server *srv = v->srv;
    bool address_full = address_count(srv, &v->addr) >= per_address(srv);
    *scope = address_full ? &v->addr : NULL;
    if (address_full || srv->viewer_count >= srv->opts->max_viewers) {
        viewer *victim = never(srv) ? NULL : pick_stalled(srv, *scope, now, evict_ms(srv));
        if (!victim)
            return false;
        ws_stream_drop(victim); /* gives its slot back */
    }
    int slot = 0;
    while (srv->viewers[slot])
        slot++;
    if (v->phase == VIEWER_PENDING)
        unpend(v);
    srv->viewers[slot] = v;
    v->slot = slot;
    srv->viewer_count++;
    v->tx_ms = now;
    ws_stream_start(v);
    return true;
}

/* A newcomer that cannot have a slot: the server is full, or its address has its share. */
static void refuse(viewer *v)
{
    char msg[80];
    server *srv = v->srv;
    if (srv->viewer_count < srv->opts->max_viewers)
        snprintf(msg, sizeof msg, "too many viewers from your address (max %d)", per_address(v->srv));
    else
        snprintf(msg, sizeof msg, "too many viewers (max %d)", v->srv->opts->max_viewers);
    ws_stream_fail(v, 1013, msg); /* 1013: try again later (registered, not in lws 4.1's enum) */
}

void viewer_request_slot(viewer *v)
{
    server *srv = v->srv;
    const peer_addr *scope;
    int64_t now = server_now_ms();
    v->since_ms = now;
    if (try_admit(v, now, &scope))
        return;
    if (never(srv) || srv->pending_count >= srv->opts->max_viewers) {
        refuse(v);
        return;
    }
    v->phase = VIEWER_PENDING;
    srv->pending[srv->pending_count++] = v;
    ping_the_way(srv, scope, now);
    viewer_schedule_check(srv);
}

/* ---- the check ---- */

static int period_ms(const server *srv)
{
    if (srv->pending_count)
        return SERVER_VIEWER_PRESSURE_TICK_MS;
    int p = srv->opts->stall_timeout_ms / 4;
    return p < 10 ? 10 : p > 1000 ? 1000 : p;
}

static void check_tick(lws_sorted_usec_list_t *sul)
{
    server *srv = lws_container_of(sul, server, stall_sul);
    int64_t now = server_now_ms(), limit = srv->opts->stall_timeout_ms;

    srv->stall_scheduled = false;
    for (int i = 0; i < srv->opts->max_viewers; i++)
        if (srv->viewers[i] && viewer_tx_pending(srv->viewers[i]))
            sample_delivery(srv->viewers[i], now);

    /* Newcomers, oldest first: a slot, or still waiting, or refused. */
    for (int i = 0; i < srv->pending_count;) {
        viewer *v = srv->pending[i];
        const peer_addr *scope;
        if (try_admit(v, now, &scope))
            continue; /* it left the list at i */
        if (now - v->since_ms >= SERVER_VIEWER_PENDING_MS) {
            refuse(v); /* finishing takes it off the list */
            continue;
        }
        ping_the_way(srv, scope, now);
        i++;
    }

    if (!never(srv))
        for (int i = 0; i < srv->opts->max_viewers; i++) {
            viewer *v = srv->viewers[i];
            if (!v)
                continue;
            if (stalled(v, now, limit)) {
                char why[96];
                if (viewer_tx_pending(v))
                    snprintf(why, sizeof why, "viewer stalled: took no data for %lld ms", (long long)limit);
                else
                    snprintf(why, sizeof why, "viewer stalled: no answer to a ping for %lld ms", (long long)limit);
                /* It most likely cannot take this close either: lws drops it after
                 * SERVER_ERROR_CLOSE_TIMEOUT_S. Its slot is free at once. */
                ws_stream_finish(v, LWS_CLOSE_STATUS_POLICY_VIOLATION, why, NULL);
            } else if (v->phase == VIEWER_WAITING && !viewer_tx_pending(v) && !v->ping_ms) {
                int64_t heard = v->tx_ms > v->pong_ms ? v->tx_ms : v->pong_ms;
                if (now - heard >= limit / 2)
                    send_ping(v);
            }
        }
    viewer_schedule_check(srv);
}

void viewer_schedule_check(server *srv)
{
    if (srv->stopping || (!srv->pending_count && (never(srv) || srv->viewer_count == 0)))
        return;
    int64_t due = server_now_ms() + period_ms(srv);
    if (srv->stall_scheduled && srv->stall_due_ms <= due)
        return;
    srv->stall_scheduled = true;
    srv->stall_due_ms = due;
    lws_sul_schedule(srv->context, 0, &srv->stall_sul, check_tick, (lws_usec_t)period_ms(srv) * LWS_US_PER_MS);
}
