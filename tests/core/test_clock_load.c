/* test_clock_load.c: the real clock (rdtsc where invariant) while other processes keep
 * every core busy, with frames of 1-5 us and of 16 ms: per thread, scopes nest or are
 * disjoint across thousands of frames; frames are contiguous; each scope lies within the
 * frames it began and ended in; and each duration agrees with CLOCK_MONOTONIC brackets the
 * program takes around it.
 *
 * The duration check, honestly: the program reads CLOCK_MONOTONIC before vor_scope_begin
 * (b0) and right after it returns (b0'), right before vor_scope_end (b1') and after it
 * returns (b1). vor's own reads lie inside [b0, b0'] and [b1', b1], so the true duration
 * lies in [b1' - b0', b1 - b0] whatever preemption does; vor's figure must lie in
 * [(b1' - b0') * 0.99 - 100 ns, (b1 - b0) * 1.01 + 100 ns].
 *
 * Nothing is timed: the checks hold for any scheduling, and the load only makes the
 * anchors' reads likelier to be interrupted (what used to skew the map).
 */
#include "support.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns) {
    uint64_t until = mono_ns() + ns;
    while (mono_ns() < until) {
    }
}

/* ---- Load: one busy process per core, killed at the end (and if this process dies). ---- */

#define MAX_HOGS 64
static pid_t hogs[MAX_HOGS];
static int n_hogs;

static void start_hogs(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n_hogs = cores < 1 ? 1 : (cores > MAX_HOGS ? MAX_HOGS : (int)cores);
    pid_t parent = getpid();
    for (int i = 0; i < n_hogs; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0);
            volatile uint64_t x = 0;
            for (;;) x++;
        }
        hogs[i] = pid;
    }
}

static void stop_hogs(void) {
    for (int i = 0; i < n_hogs; i++) kill(hogs[i], SIGKILL);
    for (int i = 0; i < n_hogs; i++) waitpid(hogs[i], NULL, 0);
    n_hogs = 0;
}

/* ---- What the program knows about each scope of the main thread ---- */

typedef struct bracket {
    uint64_t b0, b0_in, b1_in, b1;
    uint64_t begin_frame, end_frame;
} bracket;

#define MAX_SCOPES 40000
static bracket brackets[MAX_SCOPES];
static uint32_t n_brackets;
static uint32_t open_stack[8], open_top;
static uint32_t end_order[MAX_SCOPES], n_ended;
static uint64_t frame_now;

static vor_site site_outer = {"outer", NULL, NULL, 0, 0};
static vor_site site_inner = {"inner", NULL, NULL, 0, 0};

static void begin(vor_site *s) {
    bracket *b = &brackets[n_brackets];
    b->b0 = mono_ns();
    assert_int_equal(vor_scope_begin(s), 1);
    b->b0_in = mono_ns();
    b->begin_frame = frame_now;
    open_stack[open_top++] = n_brackets++;
}

static void end(void) {
    uint32_t i = open_stack[--open_top];
    bracket *b = &brackets[i];
    b->b1_in = mono_ns();
    vor_scope_end();
    b->b1 = mono_ns();
    b->end_frame = frame_now;
    end_order[n_ended++] = i;
}

static void mark(void) {
    vor_frame_mark();
    frame_now++;
}

/* ---- A second thread: nested scopes all along, for the nesting check on another thread ---- */

static int worker_stop;
static void *worker(void *arg) {
    (void)arg;
    vor_set_thread_name("worker");
    while (!__atomic_load_n(&worker_stop, __ATOMIC_ACQUIRE)) {
        {
            VOR_SCOPE("worker outer");
            for (int i = 0; i < 3; i++) {
                VOR_SCOPE("worker inner");
                spin_ns(700);
            }
        }
        struct timespec pause = {0, 20000}; /* a few thousand scopes per 16 ms frame at most */
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* ---- Checks ---- */

static void check_nesting_per_thread(void) {
    for (uint32_t f = 0; f < rec.n_frames; f++) assert_int_equal(rec.frames[f].kept, rec.frames[f].n_scopes);
    uint64_t overlaps = recorded_partial_overlaps();
    if (overlaps) fail_msg("%llu partial overlaps", (unsigned long long)overlaps);
}

static void check_main_thread_scopes(uint32_t main_thread) {
    uint32_t k = 0;
    for (uint32_t f = 0; f < rec.n_frames; f++) {
        recorded_frame *fr = &rec.frames[f];
        if (f + 1 < rec.n_frames) assert_int_equal(fr->start_ns + fr->duration_ns, rec.frames[f + 1].start_ns);
        for (uint32_t i = 0; i < fr->kept; i++) {
            recorded_scope *s = &fr->scopes[i];
            if (s->thread_id != main_thread) continue;
            assert_true(k < n_ended);
            bracket *b = &brackets[end_order[k++]];
            assert_int_equal(b->end_frame, fr->index);
            recorded_frame *began = &rec.frames[b->begin_frame];
            int64_t end = s->start_ns + s->duration_ns;
            if (s->start_ns < began->start_ns || s->start_ns > began->start_ns + began->duration_ns ||
                end < fr->start_ns || end > fr->start_ns + fr->duration_ns)
                fail_msg("scope %u [%lld, %lld] outside its frames [%lld, ...] .. [..., %lld]", k, (long long)s->start_ns,
                         (long long)end, (long long)began->start_ns, (long long)(fr->start_ns + fr->duration_ns));
            double outer = (double)(b->b1 - b->b0), inner = (double)(b->b1_in - b->b0_in);
            double d = (double)s->duration_ns;
            if (d > outer * 1.01 + 100 || d < inner * 0.99 - 100)
                fail_msg("scope %u: %.0f ns recorded; CLOCK_MONOTONIC says between %.0f and %.0f", k, d, inner, outer);
        }
    }
    assert_int_equal(k, n_ended);
}

static int teardown(void **state) {
    (void)state;
    stop_hogs();
    session_teardown();
    return 0;
}

static void scopes_agree_with_the_os_clock_under_load(void **state) {
    (void)state;
    vor_desc d = {0};
    d.max_frame_scopes = 1u << 20;
    d.thread_buffer_scopes = 1u << 20;
    setup_with_capture(d);
    n_brackets = n_ended = 0;
    open_top = 0;
    frame_now = 0;
    start_hogs();
    vor_enable();
    recording_attach(1u << 16);
    {
        VOR_SCOPE("main prologue"); /* gives the main thread its buffer and id */
    }
    uint32_t main_thread = vor_tls_thread->thread_id;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);

    /* 3,000 frames of 1-5 us; some scopes straddle a frame boundary. */
    for (int f = 0; f < 3000; f++) {
        begin(&site_outer);
        spin_ns(100 + (uint64_t)(f % 5) * 100);
        begin(&site_inner);
        spin_ns(1200 + (uint64_t)(f % 3) * 800);
        if (f % 4 == 0) mark(); /* the inner scope and its parent span this boundary */
        end();
        spin_ns(100);
        end();
        if (f % 4 != 0) mark();
    }
    /* 100 frames of 16 ms. */
    for (int f = 0; f < 100; f++) {
        begin(&site_outer);
        struct timespec ts = {0, 15000000};
        nanosleep(&ts, NULL);
        end();
        spin_ns(500000);
        mark();
    }
    __atomic_store_n(&worker_stop, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    mark();
    stop_hogs();

    assert_true(rec.n_frames < RECORDED_FRAMES_MAX);
    for (uint32_t f = 0; f < rec.n_frames; f++) assert_int_equal(rec.frames[f].dropped, 0);
    /* The prologue scope is the first the main thread ended: not bracketed, skip it. */
    recorded_frame *f0 = &rec.frames[0];
    assert_true(f0->kept >= 1);
    for (uint32_t i = 0; i < f0->kept; i++)
        if (f0->scopes[i].thread_id == main_thread) {
            f0->scopes[i].thread_id = UINT32_MAX - 1; /* out of the bracket check, still nested */
            break;
        }
    check_main_thread_scopes(main_thread);
    check_nesting_per_thread();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(scopes_agree_with_the_os_clock_under_load, teardown),
    };
    return cmocka_run_group_tests_name("clock under load", tests, NULL, NULL);
}
