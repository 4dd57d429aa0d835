/*
 * conn_table.c - every open connection, who it comes from and what it is doing, and the rules
 * that decide which connection makes room for a new one.
 *
 * Why: a connection that has not sent a complete request costs the server a socket and a header
 * buffer while giving nothing back, and slow or idle ones can be opened by the thousand (slowloris).
 * The server cannot tell an attacker from a normal client by address (on loopback everyone is
 * 127.0.0.1), but it can by behaviour: a normal client sends its request at once. So connections
 * are in one of four states:
 *   CONN_WAITING  no request in progress: just accepted, still sending its request headers, or
 *                 idle between two keep-alive requests. `since`: when it started waiting.
 *   CONN_BUSY     a request is being answered. `since`: when the response last made progress.
 *   CONN_VIEWER   a websocket viewer (ws_stream.c / viewer_slots.c have their own rules).
 * and admitting a connection that would cross a limit evicts, in this order of preference,
 *   1. the connection of the same scope that has been WAITING longest (an unfinished request is
 *      the cheapest thing to lose: a real client that loses one reconnects and sends at once);
 *   2. a BUSY connection whose response made no progress for busy_stall_ms (a client that does
 *      not read its answer), least recent progress first;
 * and never a viewer. When nothing can be evicted the new connection is refused (per-address
 * limits) or left in the kernel's queue (global limits; listener.c pauses accepting).
 * The limits (conn_limits) are per address and global, for WAITING connections and for all; the
 * global one is also a file-descriptor budget, each connection counting what it may hold
 * (CONN_FDS_*), so the server stops accepting before accept() itself runs out of descriptors.
 *
 * Addresses: IPv4, and IPv6 by /64 prefix (one host usually owns a whole /64); an IPv4-mapped
 * IPv6 address is its IPv4 address. Each loopback address counts on its own.
 *
 * Pure bookkeeping: no lws, no sockets, time passed in; the table is small (at most
 * SERVER_MAX_CONNECTIONS plus the connections being closed), so a linear scan per decision is
 * cheaper than keeping indexes in sync.
 */
#include "server_internal.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void peer_addr_from_sockaddr(peer_addr *out, const struct sockaddr *sa)
{
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        out->family = AF_INET;
        memcpy(out->bytes, &in->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        const unsigned char *b = in6->sin6_addr.s6_addr;
        if (!memcmp(b, v4_mapped, sizeof v4_mapped)) {
            out->family = AF_INET;
            memcpy(out->bytes, b + 12, 4);
        } else {
            out->family = AF_INET6;
            memcpy(out->bytes, b, 8); /* the /64 prefix */
        }
    }
}

bool peer_addr_equal(const peer_addr *a, const peer_addr *b)
{
    return a->family == b->family && !memcmp(a->bytes, b->bytes, sizeof a->bytes);
}

int conn_table_init(conn_table *t, const conn_limits *lim)
{
    memset(t, 0, sizeof *t);
    t->lim = *lim;
    t->cap = lim->max + SERVER_CLOSING_SLACK;
    t->slots = calloc((size_t)t->cap, sizeof *t->slots);
    return t->slots ? 0 : -1;
}

void conn_table_free(conn_table *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static int fd_cost(const conn *c)
{
    return c->state == CONN_VIEWER ? CONN_FDS_VIEWER : CONN_FDS_HTTP;
}

conn *conn_open(conn_table *t, const peer_addr *addr, int64_t now_ms)
{
    for (int i = 0; i < t->cap; i++) {
        conn *c = &t->slots[i];
        if (c->state != CONN_FREE)
            continue;
        memset(c, 0, sizeof *c);
        c->state = CONN_WAITING;
        c->addr = *addr;
        c->since_ms = now_ms;
        t->open++;
        t->fds += fd_cost(c);
        return c;
    }
    return NULL;
}

void conn_close(conn_table *t, conn *c)
{
    if (!c || c->state == CONN_FREE)
        return;
    t->fds -= fd_cost(c);
    if (c->evicted)
        t->evicted_fds -= fd_cost(c);
    t->open--;
    memset(c, 0, sizeof *c);
}

void conn_set_state(conn_table *t, conn *c, conn_state state, int64_t now_ms)
{
    if (!c || c->state == CONN_FREE || c->evicted || state == CONN_FREE)
        return;
    t->fds -= fd_cost(c);
    c->state = state;
    c->since_ms = now_ms;
    t->fds += fd_cost(c);
}

void conn_progress(conn *c, int64_t now_ms)
{
    if (c && c->state == CONN_BUSY)
        c->since_ms = now_ms;
}

/* Counts of the connections that are staying (not being evicted). */
typedef struct counts {
    int all, waiting, addr_all, addr_waiting;
} counts;

static counts count(const conn_table *t, const peer_addr *addr)
{
    counts n = {0, 0, 0, 0};
    for (int i = 0; i < t->cap; i++) {
        const conn *c = &t->slots[i];
        if (c->state == CONN_FREE || c->evicted)
            continue;
        bool same = peer_addr_equal(&c->addr, addr);
        n.all++;
        n.addr_all += same;
        if (c->state == CONN_WAITING) {
            n.waiting++;
            n.addr_waiting += same;
        }
    }
    return n;
}

conn *conn_pick_victim(conn_table *t, const peer_addr *scope, bool waiting_only, int64_t now_ms)
{
    conn *best = NULL;
    for (int i = 0; i < t->cap; i++) {
        conn *c = &t->slots[i];
        if (c->state == CONN_FREE || c->evicted || (scope && !peer_addr_equal(&c->addr, scope)))
            continue;
        if (c->state == CONN_WAITING) {
            if (!best || best->state != CONN_WAITING || c->since_ms < best->since_ms)
                best = c;
        } else if (!waiting_only && c->state == CONN_BUSY && now_ms - c->since_ms >= t->lim.busy_stall_ms) {
            if (!best || (best->state == CONN_BUSY && c->since_ms < best->since_ms))
                best = c;
        }
    }
    return best;
}

conn_verdict conn_admit(conn_table *t, const peer_addr *addr, int64_t now_ms, conn **victims, int *n_victims)
{
    *n_victims = 0;
    if (t->open >= t->cap)
        return CONN_DEFER; /* too many still closing: wait for them */
    counts n = count(t, addr);
    /* Each rule, with the newcomer counted, evicts at most one connection (each rule is crossed
     * by one at most, as every admission keeps them all); a victim no longer counts afterwards. */
    for (int rule = 0; rule < 4; rule++) {
        conn *v = NULL;
        switch (rule) {
        case 0:
            if (n.addr_waiting + 1 <= t->lim.waiting_per_address)
                continue;
            v = conn_pick_victim(t, addr, true, now_ms);
            if (!v)
                return CONN_REFUSE;
            break;
        case 1:
            if (n.waiting + 1 <= t->lim.waiting_max)
                continue;
            v = conn_pick_victim(t, NULL, true, now_ms);
            if (!v)
                return CONN_DEFER;
            break;
        case 2:
            if (n.addr_all + 1 <= t->lim.per_address)
                continue;
            v = conn_pick_victim(t, addr, false, now_ms);
            if (!v)
                return CONN_REFUSE;
            break;
        default: {
            int fds = t->fds - t->evicted_fds + CONN_FDS_HTTP;
            if (n.all + 1 <= t->lim.max && fds <= t->lim.fd_budget)
                continue;
            v = conn_pick_victim(t, NULL, false, now_ms);
            if (!v)
                return CONN_DEFER;
            break;
        }
        }
        bool same = peer_addr_equal(&v->addr, addr);
        n.all--;
        n.addr_all -= same;
        if (v->state == CONN_WAITING) {
            n.waiting--;
            n.addr_waiting -= same;
        }
        conn_mark_evicted(t, v);
        victims[(*n_victims)++] = v;
    }
    return CONN_ADMIT;
}

void conn_mark_evicted(conn_table *t, conn *c)
{
    if (c->state == CONN_FREE || c->evicted)
        return;
    c->evicted = true;
    t->evicted_fds += fd_cost(c);
}
