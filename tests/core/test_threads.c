/* test_threads.c: many threads recording while the frame thread drains them. Also run
 * under ThreadSanitizer by `make test`. */
#include "support.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#define THREADS 8
#define SCOPES_PER_THREAD 100000 /* half "outer", half "inner" nested in it */

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

static int workers_done;

static void *worker(void *arg) {
    char name[32];
    snprintf(name, sizeof name, "worker %d", (int)(intptr_t)arg);
    vor_set_thread_name(name);
    for (int i = 0; i < SCOPES_PER_THREAD / 2; i++) {
        VOR_SCOPE("outer");
        {
            VOR_SCOPE("inner");
        }
    }
    __atomic_fetch_add(&workers_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static uint32_t site_id_named(const char *name) {
    for (uint32_t id = 1; id <= vor_site_count(); id++)
        if (strcmp(vor_site_get(id)->name, name) == 0) return id;
    return 0;
}

static void run_workers(int mark_while_running) {
    pthread_t th[THREADS];
    workers_done = 0;
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    if (mark_while_running)
        while (__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE) < THREADS) vor_frame_mark();
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    vor_frame_mark();
}

static void check_exact_counts(void) {
    assert_int_equal(rec.total_dropped, 0);
    assert_int_equal(rec.total_scopes, (uint64_t)THREADS * SCOPES_PER_THREAD);
    uint32_t outer = site_id_named("outer"), inner = site_id_named("inner");
    assert_true(outer && inner);
    uint64_t per_thread_outer = 0, threads_seen = 0;
    for (int t = 0; t < 64; t++) {
        uint64_t o = rec.site_counts[t][outer % 16], n = rec.site_counts[t][inner % 16];
        if (o == 0 && n == 0) continue;
        assert_int_equal(o, SCOPES_PER_THREAD / 2);
        assert_int_equal(n, SCOPES_PER_THREAD / 2);
        per_thread_outer += o;
        threads_seen++;
    }
    assert_int_equal(threads_seen, THREADS);
    assert_int_equal(per_thread_outer, (uint64_t)THREADS * SCOPES_PER_THREAD / 2);
}

/* Room for a whole thread in its buffer and for every scope in one frame: no drops,
 * whatever the timing. */
static void start_roomy_session(uint32_t keep_scopes_per_frame) {
    vor_desc d = {0};
    d.thread_buffer_scopes = 1u << 17;
    d.max_frame_scopes = 1u << 20;
    setup_with_capture(d);
    vor_enable();
    recording_attach(keep_scopes_per_frame);
}

static void eight_threads_counted_exactly_in_one_frame(void **state) {
    (void)state;
    start_roomy_session(0);
    run_workers(0);
    check_exact_counts();
    assert_int_equal(rec.frames[rec.n_frames - 1].n_scopes, (uint64_t)THREADS * SCOPES_PER_THREAD);
}

static void eight_threads_counted_exactly_while_frames_are_marked(void **state) {
    (void)state;
    start_roomy_session(0);
    run_workers(1);
    check_exact_counts();
}

static void nesting_is_consistent_on_every_thread(void **state) {
    (void)state;
    start_roomy_session(1u << 20);
    run_workers(0);
    recorded_frame *f = &rec.frames[rec.n_frames - 1];
    uint32_t outer = site_id_named("outer");
    /* In end order each inner (depth 1) is followed by its outer (depth 0) that
     * contains it, on the same thread. */
    for (uint32_t i = 0; i + 1 < f->kept; i += 2) {
        recorded_scope *in = &f->scopes[i], *out = &f->scopes[i + 1];
        assert_int_equal(in->depth, 1);
        assert_int_equal(out->depth, 0);
        assert_int_equal(out->site_id, outer);
        assert_int_equal(in->thread_id, out->thread_id);
        assert_true(in->start_ns >= out->start_ns);
        assert_true(in->start_ns + in->duration_ns <= out->start_ns + out->duration_ns);
    }
}

/* The frame thread exits: the next thread that marks frames takes over. A second thread's
 * marks are ignored (and counted) only while the frame thread lives. */
static int marker_go, marker_done;
static void *marking_thread(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        {
            VOR_SCOPE("on the first frame thread");
        }
        vor_frame_mark();
    }
    __atomic_store_n(&marker_done, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&marker_go, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void frame_thread_role_passes_on_when_it_exits(void **state) {
    (void)state;
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(0);
    marker_go = marker_done = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, marking_thread, NULL), 0);
    while (!__atomic_load_n(&marker_done, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    vor_frame_mark(); /* the frame thread still lives: ignored */
    vor_frame_mark();
    assert_int_equal(vor_log_count(VOR_LOG_FRAME_MARK_OTHER_THREAD), 2);
    assert_int_equal(rec.n_frames, 5);
    __atomic_store_n(&marker_go, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < 10; i++) {
        {
            VOR_SCOPE("on the next frame thread");
        }
        vor_frame_mark();
    }
    assert_int_equal(rec.n_frames, 15);
    assert_int_equal(rec.total_scopes, 15);
    assert_int_equal(vor_log_count(VOR_LOG_FRAME_MARK_OTHER_THREAD), 2);
    for (uint32_t f = 0; f < rec.n_frames; f++) assert_int_equal(rec.frames[f].index, f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(eight_threads_counted_exactly_in_one_frame, teardown),
        cmocka_unit_test_teardown(eight_threads_counted_exactly_while_frames_are_marked, teardown),
        cmocka_unit_test_teardown(nesting_is_consistent_on_every_thread, teardown),
        cmocka_unit_test_teardown(frame_thread_role_passes_on_when_it_exits, teardown),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
