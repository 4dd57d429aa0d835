/* test_fork.c: fork() while other threads are inside vor must never leave the child stuck.
 *
 * Threads hammer every public entry point that takes a lock (metrics and units, I/O,
 * thread names, scopes on short-lived threads, frame marks and session restarts on the
 * frame thread, frame statistics, counters, sites, columns, the frame ring, thread
 * names) while the main thread forks FORKS times. Each child calls a dozen vor functions
 * (a whole session of its own included) and leaves with _exit. The parent reaps the
 * children with waitpid and a deadline far beyond what a healthy child needs; a child
 * still running then is stuck (a lock held at fork() by a thread the child does not
 * have): it is killed and counted, and the test fails if any was.
 *
 * Not timed: the deadline only bounds how long a deadlocked child is waited for.
 * Also run under ThreadSanitizer (label "threads").
 */
#include "support.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKS 300
#define GRACE_SECONDS 60 /* after the last fork; a healthy child takes milliseconds */

static int stop_hammering;
static uint64_t logged; /* the quiet logger's count */

static int stopping(void) {
    return __atomic_load_n(&stop_hammering, __ATOMIC_ACQUIRE);
}

/* Quiet, and slow enough to be inside at some fork(); it calls vor like a health check
 * would (the frame lock, from whichever thread reports). */
static void quiet_logger(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    (void)item;
    (void)message;
    __atomic_fetch_add(&logged, 1, __ATOMIC_RELAXED);
    vor_counters counters;
    vor_get_counters(&counters);
    struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
}

/* ---- Hammers (parent threads) ------------------------------------------------------- */

static void *hammer_metrics(void *arg) {
    (void)arg;
    char name[32];
    for (uint32_t i = 0; !stopping(); i++) {
        snprintf(name, sizeof name, "metric %u", i % 24);
        vor_record_metric(name, (double)i);
        if (i % 64 == 0) vor_record_metric_unit(name, i % 128 ? "ms" : "s");
        if (i % 1024 == 0) vor_record_metric(NULL, 0); /* a log item, once per session */
        vor_record_io(10, 100);
        vor_column_info info;
        vor_column_get(i % (vor_column_count() + 1), &info);
    }
    return NULL;
}

static void *short_lived(void *arg) {
    (void)arg;
    vor_set_thread_name("short-lived");
    VOR_SCOPE("short-lived work");
    return NULL;
}

static void *hammer_threads(void *arg) {
    (void)arg;
    char name[32];
    for (uint32_t i = 0; !stopping(); i++) {
        snprintf(name, sizeof name, "renamed %u", i % 7);
        vor_set_thread_name(name);
        {
            VOR_SCOPE("hammer scope");
        }
        if (i % 16 == 0) { /* registration and exit: the registry's lock */
            pthread_t t;
            if (pthread_create(&t, NULL, short_lived, NULL) == 0) pthread_join(t, NULL);
        }
        char out[64];
        vor_thread_name(i % 8, out, sizeof out);
    }
    return NULL;
}

static void *hammer_frames(void *arg) {
    (void)arg;
    vor_set_thread_name("frame thread");
    for (uint32_t i = 0; !stopping(); i++) {
        {
            VOR_SCOPE("frame work");
        }
        vor_frame_mark();
        if (i % 40 == 39) { /* a new session: log reports, outputs opened and closed */
            vor_shutdown();
            vor_enable();
        }
        if (i % 8 == 0) vor_flush_recording();
    }
    return NULL;
}

static void *hammer_readers(void *arg) {
    (void)arg;
    uint8_t view[4096];
    for (uint32_t i = 0; !stopping(); i++) {
        vor_frame_stats stats;
        vor_frame_stats_get(&stats);
        (void)vor_frame_stats_percentile_ns(95);
        vor_counters counters;
        vor_get_counters(&counters);
        uint32_t sites = vor_site_count();
        if (sites) (void)vor_site_get(1 + i % sites);
        uint64_t oldest, newest;
        if (vor_frame_ring_range(&oldest, &newest)) (void)vor_frame_ring_copy(newest, view, sizeof view);
        (void)vor_log_count(VOR_LOG_NAME_NULL);
        (void)vor_empty_span_ns();
        (void)vor_current_memory_bytes();
    }
    return NULL;
}

/* ---- The child ------------------------------------------------------------------------ */

static void child_body(void) {
    vor_record_metric("child metric", 1.0);
    vor_record_metric_unit("child metric", "units");
    vor_record_io(1, 1);
    (void)vor_current_memory_bytes();
    vor_set_thread_name("forked child");
    vor_counters counters;
    vor_get_counters(&counters);
    vor_frame_stats stats;
    vor_frame_stats_get(&stats);
    uint32_t sites = vor_site_count();
    if (sites) (void)vor_site_get(sites);
    vor_column_info info;
    (void)vor_column_get(0, &info);
    uint64_t oldest, newest;
    uint8_t view[4096];
    if (vor_frame_ring_range(&oldest, &newest)) (void)vor_frame_ring_copy(newest, view, sizeof view);
    char name[64];
    (void)vor_thread_name(0, name, sizeof name);
    /* A session of the child's own: frame assembly, the registry, sites, columns. */
    vor_enable();
    for (int i = 0; i < 3; i++) {
        {
            VOR_SCOPE("child scope");
        }
        vor_frame_mark();
    }
    vor_flush_recording();
    vor_shutdown();
    _exit(0);
}

/* ---- The test ------------------------------------------------------------------------- */

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct children {
    pid_t pid[FORKS];
    int done[FORKS];
    int n, exited_ok, exited_bad;
} children;

static void reap(children *c, int options) {
    for (int i = 0; i < c->n; i++) {
        if (c->done[i]) continue;
        int status = 0;
        pid_t r = waitpid(c->pid[i], &status, options);
        if (r == c->pid[i]) {
            c->done[i] = 1;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                c->exited_ok++;
            else
                c->exited_bad++;
        }
    }
}

static void fork_while_hammering(void **state) {
    (void)state;
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.logger.func = quiet_logger;
    desc.frame_ring_frames = 64;
    assert_int_equal(vor_setup(&desc), 1);
    char capture[256];
    snprintf(capture, sizeof capture, "%s/vor_fork_%d.vor", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    setenv("VOR_RECORD", capture, 1);
    setenv("VOR_RECORD_FLAME", "1", 1);
    vor_enable();

    void *(*hammers[])(void *) = {hammer_metrics, hammer_threads, hammer_frames, hammer_readers};
    enum { HAMMERS = sizeof hammers / sizeof hammers[0] };
    pthread_t threads[HAMMERS];
    for (int i = 0; i < HAMMERS; i++) assert_int_equal(pthread_create(&threads[i], NULL, hammers[i], NULL), 0);

    static children c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) child_body();
        c.pid[c.n++] = pid;
        reap(&c, WNOHANG);
        struct timespec pause = {0, 1000000}; /* let the hammers move between forks */
        nanosleep(&pause, NULL);
    }
    __atomic_store_n(&stop_hammering, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < HAMMERS; i++) assert_int_equal(pthread_join(threads[i], NULL), 0);

    double deadline = seconds_now() + GRACE_SECONDS;
    for (;;) {
        reap(&c, WNOHANG);
        if (c.exited_ok + c.exited_bad == c.n || seconds_now() > deadline) break;
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
    }
    int stuck = 0;
    for (int i = 0; i < c.n; i++) {
        if (c.done[i]) continue;
        stuck++;
        kill(c.pid[i], SIGKILL);
        waitpid(c.pid[i], NULL, 0);
    }
    printf("fork safety: %d of %d children stuck, %d exited with an error\n", stuck, c.n, c.exited_bad);
    vor_shutdown();
    unsetenv("VOR_RECORD");
    unsetenv("VOR_RECORD_FLAME");
    unlink(capture);
    assert_int_equal(stuck, 0);
    assert_int_equal(c.exited_bad, 0);
    assert_int_equal(c.exited_ok, FORKS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fork_while_hammering),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
