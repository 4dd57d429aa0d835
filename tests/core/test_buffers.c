/* test_buffers.c: thread buffers that grow on demand up to a bound, and the two settings
 * the environment gives them (read when vor_enable() starts a session): VOR_THREAD_SCOPES,
 * the bound, and VOR_MIN_DURATION_NS, scopes too short to record. A bad value is reported
 * once, naming the variable, and ignored. */
#include "support.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int teardown(void **state) {
    (void)state;
    unsetenv("VOR_THREAD_SCOPES");
    unsetenv("VOR_MIN_DURATION_NS");
    session_teardown();
    return 0;
}

static uint64_t heap_bytes(void) {
    struct mallinfo2 m = mallinfo2();
    return (uint64_t)m.uordblks + (uint64_t)m.hblkhd;
}

/* ---- Threads that record little cost little ---- */

#define FEW_THREADS 32
static pthread_barrier_t all_recorded, may_exit;

static void *records_a_little(void *arg) {
    (void)arg;
    for (int i = 0; i < 10; i++) {
        VOR_SCOPE("a little");
    }
    pthread_barrier_wait(&all_recorded);
    pthread_barrier_wait(&may_exit);
    return NULL;
}

static void buffers_cost_what_threads_record(void **state) {
    (void)state;
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(0);
    pthread_barrier_init(&all_recorded, NULL, FEW_THREADS + 1);
    pthread_barrier_init(&may_exit, NULL, FEW_THREADS + 1);
    uint64_t before = heap_bytes();
    pthread_t th[FEW_THREADS];
    for (int i = 0; i < FEW_THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, records_a_little, NULL), 0);
    pthread_barrier_wait(&all_recorded);
    uint64_t grown = heap_bytes() - before;
    pthread_barrier_wait(&may_exit);
    for (int i = 0; i < FEW_THREADS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    vor_frame_mark();
    assert_int_equal(rec.total_scopes, FEW_THREADS * 10);
    /* 32 threads with ten scopes each: under 100 KiB apiece (a whole 65,536-scope buffer
     * per thread would be 2 MiB each). */
    if (grown > (uint64_t)FEW_THREADS * 100 * 1024)
        fail_msg("%llu bytes for %d threads of ten scopes", (unsigned long long)grown, FEW_THREADS);
    pthread_barrier_destroy(&all_recorded);
    pthread_barrier_destroy(&may_exit);
}

/* ---- A burst grows the buffer to the bound, and no further ---- */

static void *burst(void *arg) {
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) {
        VOR_SCOPE("burst");
    }
    return (void *)(uintptr_t)vor_tls_thread->n_chunks;
}

static uint32_t run_burst(int n) {
    pthread_t th;
    void *chunks;
    assert_int_equal(pthread_create(&th, NULL, burst, &n), 0);
    assert_int_equal(pthread_join(th, &chunks), 0);
    vor_frame_mark();
    return (uint32_t)(uintptr_t)chunks;
}

static void a_burst_grows_the_buffer_up_to_its_bound(void **state) {
    (void)state;
    vor_desc d = {0}; /* bound 65,536 */
    setup_with_capture(d);
    vor_enable();
    recording_attach(0);
    uint32_t chunks = run_burst(50000);
    assert_int_equal(rec.frames[0].n_scopes, 50000);
    assert_int_equal(rec.frames[0].dropped, 0);
    assert_true(chunks * VOR_RING_CHUNK_EVENTS >= 50000 && chunks <= 65536 / VOR_RING_CHUNK_EVENTS);
    chunks = run_burst(100000); /* over the bound */
    assert_int_equal(chunks, 65536 / VOR_RING_CHUNK_EVENTS);
    assert_int_equal(rec.frames[1].n_scopes, 65536);
    assert_int_equal(rec.frames[1].dropped, 100000 - 65536);
}

static void thread_scopes_from_the_environment(void **state) {
    (void)state;
    setenv("VOR_THREAD_SCOPES", "3000", 1); /* rounded up to 4,096 */
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(0);
    uint32_t chunks = run_burst(10000);
    assert_int_equal(chunks, 4);
    assert_int_equal(rec.frames[0].n_scopes, 4096);
    assert_int_equal(rec.frames[0].dropped, 10000 - 4096);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 0);
}

static void bad_thread_scopes_are_reported_and_ignored(void **state) {
    (void)state;
    setenv("VOR_THREAD_SCOPES", "lots", 1);
    vor_desc d = {0};
    d.thread_buffer_scopes = 2048;
    setup_with_capture(d);
    vor_enable();
    recording_attach(0);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 1);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "VOR_THREAD_SCOPES=\"lots\""));
    assert_int_equal(run_burst(5000), 2); /* the setting stands */
    session_teardown();

    setenv("VOR_THREAD_SCOPES", "100", 1); /* below the minimum: the minimum, with a warning */
    setup_with_capture(d);
    vor_enable();
    recording_attach(0);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 1);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "VOR_THREAD_SCOPES=100"));
    assert_int_equal(run_burst(5000), 1);
}

/* ---- The ring under a fast producer and a fast frame thread ---- */

/* A thread ends scopes whose site says their depth, as fast as it can, while the main
 * thread marks frames as fast as it can: every scope read back must be one the thread
 * wrote (site of its depth, start <= end), and counts must add up. Small bounds make the
 * frame thread meet chunk ends, reused chunks and a circle of one. */
static vor_site depth_sites[4] = {
    {"depth 0", NULL, NULL, 0, 0}, {"depth 1", NULL, NULL, 0, 0}, {"depth 2", NULL, NULL, 0, 0}, {"depth 3", NULL, NULL, 0, 0},
};
static int producer_stop;
static uint64_t produced;

static void *fast_producer(void *arg) {
    (void)arg;
    uint64_t n = 0;
    while (!__atomic_load_n(&producer_stop, __ATOMIC_ACQUIRE)) {
        vor_scope_begin(&depth_sites[0]);
        for (int i = 0; i < 3; i++) {
            vor_scope_begin(&depth_sites[1]);
            vor_scope_begin(&depth_sites[2]);
            vor_scope_end();
            vor_scope_end();
        }
        vor_scope_end();
        n += 7;
    }
    produced = n;
    return NULL;
}

static struct {
    uint64_t ended, dropped, bad;
} ring_check;

static int check_ring_frame(void *state, const vor_frame_record *r) {
    (void)state;
    ring_check.dropped += r->dropped_scopes;
    for (uint32_t t = 0; t < r->n_threads; t++) {
        const vor_thread_record *tr = &r->threads[t];
        for (uint32_t i = 0; i < tr->n_scopes + tr->n_open; i++) {
            const vor_scope_record *s = &tr->scopes[i];
            const vor_site *site = vor_site_get(s->site_id);
            if (site == NULL || s->depth > 2 || site != &depth_sites[s->depth] || s->duration_ns < 0 ||
                s->parent == VOR_PARENT_UNKNOWN)
                ring_check.bad++;
        }
        ring_check.ended += tr->n_scopes;
    }
    return 0;
}

static void ring_reads_back_what_was_written(uint32_t bound) {
    vor_desc d = {0};
    d.thread_buffer_scopes = bound;
    setup_with_capture(d);
    vor_enable();
    vor_consumer c = {"ring check", NULL, check_ring_frame, NULL, NULL};
    assert_int_equal(vor_frame_lock_acquire(), 1);
    assert_int_equal(vor_consumers_add(&c), 1);
    vor_frame_lock_release();
    memset(&ring_check, 0, sizeof ring_check);
    producer_stop = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fast_producer, NULL), 0);
    uint64_t until = vor_now_ns() + 300000000; /* 0.3 s */
    while (vor_now_ns() < until) vor_frame_mark();
    __atomic_store_n(&producer_stop, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    vor_frame_mark();
    assert_int_equal(ring_check.bad, 0);
    assert_true(ring_check.ended > 0);
    assert_int_equal(ring_check.ended + ring_check.dropped, produced);
}

static void ring_of_one_chunk_reads_back(void **state) {
    (void)state;
    ring_reads_back_what_was_written(1024);
}

static void ring_of_four_chunks_reads_back(void **state) {
    (void)state;
    ring_reads_back_what_was_written(4096);
}

/* ---- VOR_MIN_DURATION_NS ---- */

static void short_scopes_are_filtered_and_counted(void **state) {
    (void)state;
    setenv("VOR_MIN_DURATION_NS", "100", 1);
    fake_clock_install(1000);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(100);
    for (int i = 0; i < 10; i++) {
        VOR_SCOPE("long parent"); /* 2 x 5 + 200 = 210 ns: kept */
        {
            VOR_SCOPE("short child");
            fake_advance(5);
            {
                VOR_SCOPE("shorter grandchild");
                fake_advance(1);
            }
        }
        {
            VOR_SCOPE("long child");
            fake_advance(200);
        }
        fake_advance(4);
    }
    fake_advance(10);
    vor_frame_mark();
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_scopes, 20); /* the parents and the long children */
    assert_int_equal(f->dropped, 0);   /* filtered scopes are not drops */
    for (uint32_t i = 0; i < f->kept; i++) {
        assert_true(f->scopes[i].duration_ns >= 100);
        assert_true(f->scopes[i].parent != VOR_PARENT_UNKNOWN);
    }
    assert_int_equal(f->n_drops, 1);
    assert_int_equal(f->drops[0].cause, VOR_DROP_FILTERED);
    assert_int_equal(f->drops[0].thread_id, vor_tls_thread->thread_id);
    assert_int_equal(f->drops[0].count, 20);
    vor_counters c;
    vor_get_counters(&c);
    assert_int_equal(c.scopes_dropped, 0);
}

static void bad_min_duration_is_reported_and_ignored(void **state) {
    (void)state;
    setenv("VOR_MIN_DURATION_NS", "-5", 1);
    fake_clock_install(1000);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(100);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 1);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "VOR_MIN_DURATION_NS"));
    {
        VOR_SCOPE("short");
        fake_advance(1);
    }
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(buffers_cost_what_threads_record, teardown),
        cmocka_unit_test_teardown(a_burst_grows_the_buffer_up_to_its_bound, teardown),
        cmocka_unit_test_teardown(thread_scopes_from_the_environment, teardown),
        cmocka_unit_test_teardown(bad_thread_scopes_are_reported_and_ignored, teardown),
        cmocka_unit_test_teardown(ring_of_one_chunk_reads_back, teardown),
        cmocka_unit_test_teardown(ring_of_four_chunks_reads_back, teardown),
        cmocka_unit_test_teardown(short_scopes_are_filtered_and_counted, teardown),
        cmocka_unit_test_teardown(bad_min_duration_is_reported_and_ignored, teardown),
    };
    return cmocka_run_group_tests_name("buffers", tests, NULL, NULL);
}
