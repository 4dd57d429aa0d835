/*
 * test_server_lifecycle.c - vor_server_run() in-process: start, serve, stop, start again.
 *
 * The server runs on a second thread of this test (as it would beside a GUI thread), listens on
 * an ephemeral port of 127.0.0.1, reports it through on_ready, answers a few HTTP requests made
 * with plain sockets, and stops on vor_server_request_stop() called from this thread. Under
 * ASan/LSan (VOR_SANITIZE=address) the process exit also proves that every run freed its memory.
 * Also: bad options return 2, a busy port returns 1, a stop requested before the run returns 0,
 * the caller's default site directory is used unless site_dir (--site) is given, and running
 * out of file descriptors makes the server back off instead of spinning.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

typedef struct run {
    vor_server_options opts;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int port;      /* set by on_ready */
    int done;      /* set when vor_server_run returned */
    int rc;
    int host_ok;   /* on_ready saw host "127.0.0.1" (checked on the test thread) */
} run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_ready(void *user, const char *host, int port)
{
    run *r = user; /* runs on the server thread: no cmocka asserts here */
    pthread_mutex_lock(&r->lock);
    r->host_ok = host && !strcmp(host, "127.0.0.1");
    r->port = port;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void *run_thread(void *arg)
{
    run *r = arg;
    int rc = vor_server_run(&r->opts);
    pthread_mutex_lock(&r->lock);
    r->rc = rc;
    r->done = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Starts a server thread; returns once it listens (port > 0) or has returned. */
static void start(run *r, const char *site)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    r->opts.port = VOR_SERVER_PORT_ANY;
    r->opts.site_dir = site;
    r->opts.on_ready = on_ready;
    r->opts.on_ready_user = r;
    assert_int_equal(pthread_create(&r->thread, NULL, run_thread, r), 0);
    pthread_mutex_lock(&r->lock);
    while (!r->port && !r->done)
        pthread_cond_wait(&r->cond, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

static int finish(run *r)
{
    pthread_join(r->thread, NULL);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    return r->rc;
}

/* GET path over a fresh connection; returns the HTTP status, copies the response into out. */
static int http_get(int port, const char *path, char *out, size_t outlen)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    struct timeval tv = {5, 0};
    char req[512];
    size_t got = 0;

    assert_true(fd >= 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    for (;;) {
        ssize_t k = read(fd, out + got, outlen - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
        if (got == outlen - 1)
            break;
    }
    out[got] = '\0';
    close(fd);
    int status = 0;
    if (sscanf(out, "HTTP/1.1 %d", &status) != 1)
        return -1;
    return status;
}

static char site[64];

static int make_site(void **state)
{
    (void)state;
    snprintf(site, sizeof site, "/tmp/vor-server-life-XXXXXX");
    if (!mkdtemp(site))
        return -1;
    char p[128];
    snprintf(p, sizeof p, "%s/index.html", site);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs("<!doctype html>hello", f);
    fclose(f);
    return 0;
}

static int remove_site(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/index.html", site);
    unlink(p);
    return rmdir(site);
}

static void test_serves_then_stops_cleanly_twice(void **state)
{
    (void)state;
    char resp[4096];
    for (int round = 0; round < 2; round++) {
        run r;
        start(&r, site);
        assert_false(r.done);
        assert_true(r.port > 0);
        assert_true(r.host_ok);
        assert_int_equal(http_get(r.port, "/", resp, sizeof resp), 200);
        assert_non_null(strstr(resp, "cross-origin-opener-policy: same-origin"));
        assert_non_null(strstr(resp, "cross-origin-embedder-policy: require-corp"));
        assert_non_null(strstr(resp, "hello"));
        assert_int_equal(http_get(r.port, "/api/captures", resp, sizeof resp), 200);
        assert_non_null(strstr(resp, "{\"captures\":[]}"));
        double t0 = now_s();
        vor_server_request_stop();
        vor_server_request_stop(); /* idempotent */
        assert_int_equal(finish(&r), 0);
        double took = now_s() - t0;
        if (took > 2.0)
            fail_msg("stop took %.3f s", took);
    }
}

static void test_stop_before_run_returns_at_once(void **state)
{
    (void)state;
    run r;
    vor_server_request_stop();
    double t0 = now_s();
    start(&r, site);
    assert_int_equal(finish(&r), 0);
    assert_int_equal(r.port, 0); /* never listened */
    assert_true(now_s() - t0 < 2.0);
    /* The request was consumed: the next run serves normally. */
    start(&r, site);
    assert_true(r.port > 0);
    vor_server_request_stop();
    assert_int_equal(finish(&r), 0);
}

static void test_bad_options_return_2(void **state)
{
    (void)state;
    vor_server_options o;
    memset(&o, 0, sizeof o);
    o.port = 70000;
    assert_int_equal(vor_server_run(&o), 2);
    memset(&o, 0, sizeof o);
    o.port = VOR_SERVER_PORT_ANY;
    o.max_viewers = -3;
    assert_int_equal(vor_server_run(&o), 2);
    memset(&o, 0, sizeof o);
    o.port = VOR_SERVER_PORT_ANY;
    o.host = "not-an-address";
    assert_int_equal(vor_server_run(&o), 2);
    memset(&o, 0, sizeof o);
    o.port = VOR_SERVER_PORT_ANY;
    o.poll_interval_ms = 20000;
    assert_int_equal(vor_server_run(&o), 2);
    memset(&o, 0, sizeof o);
    o.port = VOR_SERVER_PORT_ANY;
    o.stall_timeout_ms = 50;
    assert_int_equal(vor_server_run(&o), 2);
    o.stall_timeout_ms = -7;
    assert_int_equal(vor_server_run(&o), 2);
    assert_int_equal(vor_server_run(NULL), 2);
}

/* The `vor` command passes the panel found next to its executable as default_site_dir;
 * --site (site_dir) still wins. */
static void test_default_site_dir_and_site_override(void **state)
{
    (void)state;
    char other[64], p[128], resp[4096];
    snprintf(other, sizeof other, "/tmp/vor-server-life2-XXXXXX");
    assert_non_null(mkdtemp(other));
    snprintf(p, sizeof p, "%s/index.html", other);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("<!doctype html>installed panel", f);
    fclose(f);

    run r;
    /* start() zeroes the options, so set them by hand here. */
    for (int round = 0; round < 2; round++) {
        memset(&r, 0, sizeof r);
        pthread_mutex_init(&r.lock, NULL);
        pthread_cond_init(&r.cond, NULL);
        r.opts.port = VOR_SERVER_PORT_ANY;
        r.opts.site_dir = round == 0 ? NULL : site;
        r.opts.default_site_dir = other;
        r.opts.stall_timeout_ms = VOR_SERVER_STALL_NEVER;
        r.opts.on_ready = on_ready;
        r.opts.on_ready_user = &r;
        assert_int_equal(pthread_create(&r.thread, NULL, run_thread, &r), 0);
        pthread_mutex_lock(&r.lock);
        while (!r.port && !r.done)
            pthread_cond_wait(&r.cond, &r.lock);
        pthread_mutex_unlock(&r.lock);
        assert_true(r.port > 0);
        assert_int_equal(http_get(r.port, "/", resp, sizeof resp), 200);
        assert_non_null(strstr(resp, round == 0 ? "installed panel" : "hello"));
        vor_server_request_stop();
        assert_int_equal(finish(&r), 0);
    }
    unlink(p);
    rmdir(other);
}

static void test_busy_port_returns_1(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);

    vor_server_options o;
    memset(&o, 0, sizeof o);
    o.port = ntohs(sa.sin_port);
    o.site_dir = site;
    assert_int_equal(vor_server_run(&o), 1);
    close(fd);
}

/* Connects a non-blocking socket to the server (the kernel completes the handshake whether or
 * not the server accepts). */
static int connect_nonblocking(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFL, O_NONBLOCK);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads the answer to a GET sent on fd; returns the HTTP status, or -1 after timeout_s. */
static int request_status(int fd, double timeout_s)
{
    static const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    char buf[256];
    size_t got = 0;
    double end = now_s() + timeout_s;
    struct pollfd p = {fd, POLLOUT, 0};
    if (poll(&p, 1, (int)(timeout_s * 1000)) != 1 || write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1))
        return -1;
    while (got < 12 && now_s() < end) {
        p.events = POLLIN;
        if (poll(&p, 1, 100) == 1) {
            ssize_t k = read(fd, buf + got, sizeof buf - 1 - got);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
    }
    buf[got] = '\0';
    int status = -1;
    return sscanf(buf, "HTTP/1.1 %d", &status) == 1 ? status : -1;
}

/*
 * When accept() runs out of descriptors the server must not spin (libwebsockets' own listener
 * retried at once, forever: 100% CPU), and must serve again once descriptors are back. The
 * process's descriptor limit is lowered after the server started (so its budget cannot foresee
 * it) and every descriptor left is taken; the server thread's CPU time is measured meanwhile.
 */
static void test_out_of_descriptors_backs_off_without_spinning(void **state)
{
    (void)state;
    enum { CLIENTS = 16, HOG_MAX = 4096 };
    static int hog[HOG_MAX];
    int clients[CLIENTS], n_hog = 0, served = 0;
    struct rlimit old, low;
    clockid_t cpu;
    struct timespec c0, c1;

    run r;
    start(&r, site);
    assert_true(r.port > 0);
    assert_int_equal(pthread_getcpuclockid(r.thread, &cpu), 0);
    for (int i = 0; i < CLIENTS; i++)
        clients[i] = socket(AF_INET, SOCK_STREAM, 0); /* descriptors for later, taken now */
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = 256;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    while (n_hog < HOG_MAX && (hog[n_hog] = open("/dev/null", O_RDONLY)) >= 0)
        n_hog++;
    for (int i = 0; i < CLIENTS; i++) { /* reuse the reserved descriptors for the connections */
        close(clients[i]);
        clients[i] = connect_nonblocking(r.port);
    }
    usleep(200 * 1000); /* the server meets EMFILE */
    clock_gettime(cpu, &c0);
    double t0 = now_s();
    usleep(1000 * 1000);
    clock_gettime(cpu, &c1);
    double wall = now_s() - t0;
    double used = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    while (n_hog > 0)
        close(hog[--n_hog]);
    setrlimit(RLIMIT_NOFILE, &old);
    for (int i = 0; i < CLIENTS; i++)
        if (clients[i] >= 0 && request_status(clients[i], 5.0) == 200)
            served++;
    for (int i = 0; i < CLIENTS; i++)
        if (clients[i] >= 0)
            close(clients[i]);
    vor_server_request_stop();
    assert_int_equal(finish(&r), 0);
    printf("# out of descriptors: server thread used %.1f%% of a CPU for %.2f s; %d of %d queued "
           "clients served once descriptors were back\n", 100.0 * used / wall, wall, served, CLIENTS);
    if (used > 0.05 * wall)
        fail_msg("the server thread used %.2f s of CPU in %.2f s while out of descriptors", used, wall);
    assert_int_equal(served, CLIENTS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serves_then_stops_cleanly_twice),
        cmocka_unit_test(test_stop_before_run_returns_at_once),
        cmocka_unit_test(test_bad_options_return_2),
        cmocka_unit_test(test_busy_port_returns_1),
        cmocka_unit_test(test_default_site_dir_and_site_override),
        cmocka_unit_test(test_out_of_descriptors_backs_off_without_spinning),
    };
    return cmocka_run_group_tests_name("server lifecycle", tests, make_site, remove_site);
}
