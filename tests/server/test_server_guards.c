/*
 * test_server_guards.c - white-box tests of the server's defences against hostile clients
 * (server_internal.h): the connection table's admission and eviction rules (conn_table.c),
 * peer addresses, and the strict reader of websocket frames (ws_frames.c).
 *
 * The node test server_hostile.test.mjs drives the same rules through real sockets; here each
 * rule is pinned on crafted input: which connection is evicted for which newcomer, and which
 * frame is refused with which close status, whatever way the bytes are split.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "server_internal.h"

/* ---- addresses ---- */

static peer_addr v4(const char *text)
{
    struct sockaddr_in sa;
    peer_addr a;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, text, &sa.sin_addr), 1);
    peer_addr_from_sockaddr(&a, (struct sockaddr *)&sa);
    return a;
}

static peer_addr v6(const char *text)
{
    struct sockaddr_in6 sa;
    peer_addr a;
    memset(&sa, 0, sizeof sa);
    sa.sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, text, &sa.sin6_addr), 1);
    peer_addr_from_sockaddr(&a, (struct sockaddr *)&sa);
    return a;
}

static void test_peer_addresses(void **state)
{
    (void)state;
    peer_addr a = v4("127.0.0.1"), b = v4("127.0.0.2");
    assert_true(peer_addr_equal(&a, &a));
    assert_false(peer_addr_equal(&a, &b)); /* each loopback address on its own */
    peer_addr m = v6("::ffff:127.0.0.1");
    assert_true(peer_addr_equal(&a, &m)); /* IPv4-mapped is the IPv4 address */
    peer_addr x = v6("2001:db8:1:2::1"), y = v6("2001:db8:1:2:ffff::9"), z = v6("2001:db8:1:3::1");
    assert_true(peer_addr_equal(&x, &y)); /* one /64, one host */
    assert_false(peer_addr_equal(&x, &z));
    assert_false(peer_addr_equal(&x, &a));
}

/* ---- the connection table ---- */

static conn_table table(int max, int per_address, int waiting_max, int waiting_per_address, int fd_budget)
{
    conn_table t;
    conn_limits lim = {max, per_address, waiting_max, waiting_per_address, 1000, fd_budget};
    assert_int_equal(conn_table_init(&t, &lim), 0);
    return t;
}

/* Admits a connection from addr at time now; returns it, the victims in victims[]. */
static conn *admit(conn_table *t, peer_addr addr, int64_t now, conn **victims, int *n)
{
    assert_int_equal(conn_admit(t, &addr, now, victims, n), CONN_ADMIT);
    for (int i = 0; i < *n; i++)
        conn_close(t, victims[i]); /* what listener.c's kill leads to */
    conn *c = conn_open(t, &addr, now);
    assert_non_null(c);
    return c;
}

static void test_unfinished_connections_per_address(void **state)
{
    (void)state;
    conn_table t = table(100, 100, 100, 3, 1000);
    conn *victims[4], *a[4];
    int n;
    for (int i = 0; i < 3; i++) {
        a[i] = admit(&t, v4("10.0.0.1"), 10 + i, victims, &n);
        assert_int_equal(n, 0);
    }
    conn *b = admit(&t, v4("10.0.0.2"), 20, victims, &n); /* another address: its own quota */
    assert_int_equal(n, 0);
    a[3] = admit(&t, v4("10.0.0.1"), 30, victims, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(victims[0], a[0]); /* the oldest of that address, not b */
    (void)b;
    /* A connection that sent its request is not "unfinished": it does not count. */
    conn_set_state(&t, a[1], CONN_BUSY, 31);
    admit(&t, v4("10.0.0.1"), 32, victims, &n);
    assert_int_equal(n, 0);
    /* Back to waiting (keep-alive) counts from then: the oldest is now a[2]. */
    conn_set_state(&t, a[1], CONN_WAITING, 33);
    admit(&t, v4("10.0.0.1"), 34, victims, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(victims[0], a[2]);
    conn_table_free(&t);
}

static void test_unfinished_connections_overall(void **state)
{
    (void)state;
    conn_table t = table(100, 100, 4, 4, 1000);
    conn *victims[4], *first = NULL;
    int n;
    for (int i = 0; i < 4; i++) {
        char ip[16];
        snprintf(ip, sizeof ip, "10.0.1.%d", i + 1);
        conn *c = admit(&t, v4(ip), 100 + i, victims, &n);
        if (!first)
            first = c;
        assert_int_equal(n, 0);
    }
    admit(&t, v4("10.0.1.9"), 200, victims, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(victims[0], first); /* the oldest of all */
    conn_table_free(&t);
}

static void test_busy_connections_give_way_only_when_stalled(void **state)
{
    (void)state;
    conn_table t = table(100, 2, 100, 100, 1000);
    conn *victims[4];
    int n;
    conn *x = admit(&t, v4("10.0.2.1"), 0, victims, &n);
    conn *y = admit(&t, v4("10.0.2.1"), 0, victims, &n);
    conn_set_state(&t, x, CONN_BUSY, 100);
    conn_set_state(&t, y, CONN_BUSY, 100);
    peer_addr a = v4("10.0.2.1");
    /* Both answering, recently: nothing to evict for a third from that address. */
    assert_int_equal(conn_admit(&t, &a, 500, victims, &n), CONN_REFUSE);
    conn_progress(y, 900);
    /* busy_stall_ms (1000) later x made no progress: it gives way, y (progress at 900) stays. */
    assert_int_equal(conn_admit(&t, &a, 1100, victims, &n), CONN_ADMIT);
    assert_int_equal(n, 1);
    assert_ptr_equal(victims[0], x);
    conn_close(&t, x);
    conn_table_free(&t);
}

static void test_descriptor_budget_and_viewers(void **state)
{
    (void)state;
    /* Room for 3 viewers (3 each) and one HTTP connection (2). */
    conn_table t = table(100, 100, 100, 100, 3 * CONN_FDS_VIEWER + CONN_FDS_HTTP);
    conn *victims[4], *v[3];
    int n;
    for (int i = 0; i < 3; i++) {
        v[i] = admit(&t, v4("10.0.3.1"), i, victims, &n);
        conn_set_state(&t, v[i], CONN_VIEWER, i);
    }
    conn *w = admit(&t, v4("10.0.3.2"), 10, victims, &n);
    assert_int_equal(n, 0);
    /* Full: the waiting one makes room, viewers never do. */
    conn *x = admit(&t, v4("10.0.3.3"), 20, victims, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(victims[0], w);
    conn_set_state(&t, x, CONN_BUSY, 21); /* answering, recently: not evictable either */
    peer_addr a = v4("10.0.3.4");
    assert_int_equal(conn_admit(&t, &a, 30, victims, &n), CONN_DEFER); /* only viewers left */
    conn_close(&t, v[0]);
    assert_int_equal(conn_admit(&t, &a, 40, victims, &n), CONN_ADMIT);
    assert_int_equal(n, 0);
    conn_table_free(&t);
}

static void test_evicted_connections_no_longer_count(void **state)
{
    (void)state;
    conn_table t = table(2, 100, 100, 100, 1000);
    conn *victims[4];
    int n;
    conn *a = admit(&t, v4("10.0.4.1"), 0, victims, &n);
    conn *a2 = admit(&t, v4("10.0.4.1"), 1, victims, &n);
    peer_addr b = v4("10.0.4.2");
    assert_int_equal(conn_admit(&t, &b, 2, victims, &n), CONN_ADMIT); /* max 2: a goes */
    assert_int_equal(n, 1);
    assert_ptr_equal(victims[0], a);
    assert_true(a->evicted);
    assert_int_equal(t.evicted_fds, CONN_FDS_HTTP);
    conn_set_state(&t, a, CONN_BUSY, 3); /* an evicted connection keeps its state */
    assert_int_equal(a->state, CONN_WAITING);
    assert_ptr_equal(conn_pick_victim(&t, &a->addr, false, 3), a2); /* a is gone already */
    conn_close(&t, a);
    assert_int_equal(t.evicted_fds, 0);
    assert_int_equal(t.open, 1);
    conn_table_free(&t);
}

/* ---- websocket frames ---- */

typedef struct events {
    int n;
    ws_event_kind kind[16];
    int status[16];
    char data[16][4200];
    size_t len[16];
} events;

/* Feeds bytes in pieces of `step` (0: all at once), collecting the events. */
static void feed(ws_reader *r, const unsigned char *bytes, size_t len, size_t step, events *out)
{
    memset(out, 0, sizeof *out);
    for (size_t off = 0; off < len;) {
        size_t piece = step && len - off > step ? step : len - off;
        size_t used = 0;
        while (used < piece) {
            ws_event ev;
            size_t k = ws_reader_feed(r, bytes + off + used, piece - used, &ev);
            assert_true(k > 0 && k <= piece - used);
            used += k;
            if (ev.kind && out->n < 16) {
                out->kind[out->n] = ev.kind;
                out->status[out->n] = ev.status;
                out->len[out->n] = ev.len;
                if (ev.data && ev.len < sizeof out->data[0])
                    memcpy(out->data[out->n], ev.data, ev.len);
                out->n++;
            }
        }
        off += piece;
    }
}

enum { F_UNMASKED = 1, F_NOFIN = 2, F_LEN16 = 4, F_LEN64 = 8 };

/* One client frame into out; returns its size. */
static size_t frame(unsigned char *out, unsigned int first, const void *payload, size_t len, int flags)
{
    static const unsigned char key[4] = {0x11, 0x22, 0x33, 0x44};
    size_t at = 0;
    out[at++] = (unsigned char)((flags & F_NOFIN ? 0 : 0x80) | first);
    unsigned char m = flags & F_UNMASKED ? 0 : 0x80;
    if (flags & F_LEN64) {
        out[at++] = m | 127;
        for (int i = 7; i >= 0; i--)
            out[at++] = (unsigned char)((uint64_t)len >> (8 * i));
    } else if (flags & F_LEN16 || len > 125) {
        out[at++] = m | 126;
        out[at++] = (unsigned char)(len >> 8);
        out[at++] = (unsigned char)len;
    } else {
        out[at++] = m | (unsigned char)len;
    }
    if (m) {
        memcpy(out + at, key, 4);
        at += 4;
    }
    for (size_t i = 0; i < len; i++)
        out[at + i] = ((const unsigned char *)payload)[i] ^ (m ? key[i & 3] : 0);
    return at + len;
}

/* The single event of a stream, fed whole and byte by byte: both must agree. */
static void expect_one(const unsigned char *bytes, size_t len, ws_event_kind kind, int status)
{
    for (size_t step = 0; step <= 1; step++) {
        ws_reader r;
        events ev;
        ws_reader_init(&r);
        feed(&r, bytes, len, step, &ev);
        assert_int_equal(ev.n, 1);
        assert_int_equal(ev.kind[0], kind);
        if (status)
            assert_int_equal(ev.status[0], status);
    }
}

static void test_frames_valid(void **state)
{
    (void)state;
    unsigned char buf[16384];
    events ev;
    ws_reader r;
    size_t n = frame(buf, 0x1, "{\"type\":\"follow\",\"value\":false}", 31, 0);
    expect_one(buf, n, WS_EV_TEXT, 0);
    /* A message in three fragments with a ping in between; split at every byte. */
    n = frame(buf, 0x1, "{\"a\":", 5, F_NOFIN);
    n += frame(buf + n, 0x9, "hi", 2, 0);
    n += frame(buf + n, 0x0, "\"\xc3\xa9\"", 4, F_NOFIN);
    n += frame(buf + n, 0x0, "}", 1, 0);
    n += frame(buf + n, 0xA, "12345678", 8, 0);
    n += frame(buf + n, 0x9, "", 0, 0);
    for (size_t step = 0; step <= 3; step++) {
        ws_reader_init(&r);
        feed(&r, buf, n, step, &ev);
        assert_int_equal(ev.n, 4);
        assert_int_equal(ev.kind[0], WS_EV_PING);
        assert_memory_equal(ev.data[0], "hi", 2);
        assert_int_equal(ev.kind[1], WS_EV_TEXT);
        assert_int_equal(ev.len[1], 10);
        assert_memory_equal(ev.data[1], "{\"a\":\"\xc3\xa9\"}", 10);
        assert_int_equal(ev.kind[2], WS_EV_PONG);
        assert_int_equal(ev.kind[3], WS_EV_PING);
        assert_int_equal(ev.len[3], 0);
    }
    /* A 125-byte ping, the largest allowed; a 4096-byte message, the largest accepted. */
    memset(buf + 8192, 'x', 4096);
    n = frame(buf, 0x9, buf + 8192, 125, 0);
    expect_one(buf, n, WS_EV_PING, 0);
    n = frame(buf, 0x1, buf + 8192, 4096, 0);
    expect_one(buf, n, WS_EV_TEXT, 0);
    /* Close: with a status and reason, and without any; nothing after it is read. */
    n = frame(buf, 0x8, "\x0f\xa0" "bye", 5, 0);
    n += frame(buf + n, 0x1, "{}", 2, 0);
    ws_reader_init(&r);
    feed(&r, buf, n, 0, &ev);
    assert_int_equal(ev.n, 1);
    assert_int_equal(ev.kind[0], WS_EV_CLOSE);
    assert_int_equal(ev.status[0], 4000);
    assert_int_equal(ev.len[0], 3);
    assert_memory_equal(ev.data[0], "bye", 3);
    n = frame(buf, 0x8, "", 0, 0);
    expect_one(buf, n, WS_EV_CLOSE, 1005);
}

static void test_frames_protocol_errors(void **state)
{
    (void)state;
    unsigned char buf[16384], big[200];
    memset(big, 'x', sizeof big);
    struct {
        unsigned int first;
        const char *payload;
        size_t len;
        int flags;
        int status;
    } cases[] = {
        {0x1, "{}", 2, F_UNMASKED, 1002},            /* unmasked data */
        {0x9, "x", 1, F_UNMASKED, 1002},             /* unmasked ping */
        {0x9, (const char *)big, 126, 0, 1002},      /* control frame over 125 bytes */
        {0x9, "x", 1, F_LEN16, 1002},                /* control frame, 16-bit length */
        {0x9, "x", 1, F_NOFIN, 1002},                /* fragmented control frame */
        {0x1 | 0x40, "{}", 2, 0, 1002},              /* RSV1 without an extension */
        {0x3, "x", 1, 0, 1002},                      /* reserved opcode */
        {0xB, "x", 1, 0, 1002},                      /* reserved control opcode */
        {0x0, "x", 1, 0, 1002},                      /* continuation of nothing */
        {0x1, "{}", 2, F_LEN16, 1002},               /* 16-bit length for 2 bytes */
        {0x1, (const char *)big, 200, F_LEN64, 1002},/* 64-bit length for 200 bytes */
        {0x8, "x", 1, 0, 1002},                      /* close with a 1-byte body */
        {0x8, "\x03\xed", 2, 0, 1002},               /* close status 1005 (never sent) */
        {0x8, "\x03\xe7", 2, 0, 1002},               /* close status 999 */
        {0x8, "\x03\xf7", 2, 0, 1002},               /* close status 1015 (never sent) */
        {0x8, "\x13\x88", 2, 0, 1002},               /* close status 5000 */
        {0x8, "\x03\xe8\xff", 3, 0, 1007},           /* close reason not UTF-8 */
        {0x2, "\x01", 1, 0, 1003},                   /* binary */
        {0x1, "\xed\xa0\x80", 3, 0, 1007},           /* a UTF-16 surrogate in UTF-8 */
        {0x1, "\xc0\xaf", 2, 0, 1007},               /* overlong */
        {0x1, "\xe2\x82", 2, 0, 1007},               /* cut short */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = frame(buf, cases[i].first, cases[i].payload, cases[i].len, cases[i].flags);
        expect_one(buf, n, WS_EV_ERROR, cases[i].status);
    }
    /* 64-bit length with its top bit set. */
    unsigned char top[] = {0x81, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
    expect_one(top, sizeof top, WS_EV_ERROR, 1002);
    /* A new message inside a fragmented one. */
    size_t n = frame(buf, 0x1, "{", 1, F_NOFIN);
    n += frame(buf + n, 0x1, "}", 1, 0);
    expect_one(buf, n, WS_EV_ERROR, 1002);
    /* Over 4096 bytes: refused at the header that crosses the limit, before its payload. */
    unsigned char huge[] = {0x81, 0xfe, 0x10, 0x01, 1, 2, 3, 4}; /* 4097 bytes announced */
    expect_one(huge, sizeof huge, WS_EV_ERROR, 1009);
    n = frame(buf, 0x1, big, 200, F_NOFIN);
    for (int i = 0; i < 20; i++)
        n += frame(buf + n, 0x0, big, 200, F_NOFIN); /* 4,200 bytes in all */
    ws_reader r;
    events ev;
    ws_reader_init(&r);
    feed(&r, buf, n, 0, &ev);
    assert_int_equal(ev.n, 1);
    assert_int_equal(ev.kind[0], WS_EV_ERROR);
    assert_int_equal(ev.status[0], 1009);
    /* After an error everything is consumed and ignored. */
    n = frame(buf, 0x1, "{}", 2, F_UNMASKED);
    n += frame(buf + n, 0x9, "x", 1, 0);
    ws_reader_init(&r);
    feed(&r, buf, n, 0, &ev);
    assert_int_equal(ev.n, 1);
}

int main(void)
{
    const struct CMUnitTest conn_tests[] = {
        cmocka_unit_test(test_peer_addresses),
        cmocka_unit_test(test_unfinished_connections_per_address),
        cmocka_unit_test(test_unfinished_connections_overall),
        cmocka_unit_test(test_busy_connections_give_way_only_when_stalled),
        cmocka_unit_test(test_descriptor_budget_and_viewers),
        cmocka_unit_test(test_evicted_connections_no_longer_count),
    };
    const struct CMUnitTest frame_tests[] = {
        cmocka_unit_test(test_frames_valid),
        cmocka_unit_test(test_frames_protocol_errors),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("server connection table", conn_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("server websocket frames", frame_tests, NULL, NULL);
    return failed ? 1 : 0;
}
