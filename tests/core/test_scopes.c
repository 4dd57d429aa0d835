/* test_scopes.c: scopes from the macros and the explicit API into frame records:
 * nesting and order, exact times under a fake clock, the disabled path, unbalanced
 * ends, depth overflow, full buffers and records, thread exit with open scopes. */
#include "support.h"

#include <pthread.h>
#include <string.h>

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

static const char *site_name(uint32_t id) {
    const vor_site *s = vor_site_get(id);
    return s ? s->name : "(none)";
}

static void start_fake_session(vor_desc desc, uint32_t keep) {
    fake_clock_install(1000000);
    setup_with_capture(desc);
    vor_enable();
    recording_attach(keep);
}

static void nested_scopes_have_exact_times_in_end_order(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 100);
    fake_advance(100);
    {
        VOR_SCOPE("outer");
        fake_advance(10);
        {
            VOR_SCOPE("inner");
            fake_advance(20);
        }
        fake_advance(5);
        {
            VOR_SCOPE("inner2");
            fake_advance(7);
        }
        fake_advance(3);
    }
    fake_advance(55);
    vor_frame_mark();

    assert_int_equal(rec.n_frames, 1);
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->index, 0);
    assert_int_equal(f->start_ns, 0);
    assert_int_equal(f->duration_ns, 200);
    assert_int_equal(f->n_scopes, 3);
    assert_int_equal(f->dropped, 0);
    /* End order: children before their parent. */
    assert_string_equal(site_name(f->scopes[0].site_id), "inner");
    assert_int_equal(f->scopes[0].start_ns, 110);
    assert_int_equal(f->scopes[0].duration_ns, 20);
    assert_int_equal(f->scopes[0].depth, 1);
    assert_string_equal(site_name(f->scopes[1].site_id), "inner2");
    assert_int_equal(f->scopes[1].start_ns, 135);
    assert_int_equal(f->scopes[1].duration_ns, 7);
    assert_int_equal(f->scopes[1].depth, 1);
    assert_string_equal(site_name(f->scopes[2].site_id), "outer");
    assert_int_equal(f->scopes[2].start_ns, 100);
    assert_int_equal(f->scopes[2].duration_ns, 45);
    assert_int_equal(f->scopes[2].depth, 0);
    /* The site records carry the call site. */
    const vor_site *outer = vor_site_get(f->scopes[2].site_id);
    assert_string_equal(outer->function, "nested_scopes_have_exact_times_in_end_order");
    assert_non_null(strstr(outer->file, "test_scopes.c"));
    assert_true(outer->line > 0);
}

static void frames_are_contiguous_and_scopes_land_in_the_frame_they_end_in(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 100);
    static vor_site spanning = VOR_SITE_INIT("spanning");
    assert_int_equal(vor_scope_begin(&spanning), 1);
    fake_advance(1000);
    vor_frame_mark(); /* frame 0: the scope is still open */
    fake_advance(500);
    vor_scope_end();
    fake_advance(500);
    vor_frame_mark(); /* frame 1 */

    assert_int_equal(rec.n_frames, 2);
    assert_int_equal(rec.frames[0].n_scopes, 0);
    assert_int_equal(rec.frames[0].duration_ns, 1000);
    assert_int_equal(rec.frames[1].index, 1);
    assert_int_equal(rec.frames[1].start_ns, 1000);
    assert_int_equal(rec.frames[1].duration_ns, 1000);
    assert_int_equal(rec.frames[1].n_scopes, 1);
    assert_int_equal(rec.frames[1].scopes[0].start_ns, 0);
    assert_int_equal(rec.frames[1].scopes[0].duration_ns, 1500);
}

static void function_scope_is_named_after_the_function(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    {
        VOR_FUNCTION();
        fake_advance(1);
    }
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 1);
    assert_string_equal(site_name(rec.frames[0].scopes[0].site_id), "function_scope_is_named_after_the_function");
}

static int early_return_helper(int x) {
    VOR_SCOPE("early return");
    if (x > 0) return x * 2;
    fake_advance(5);
    return -1;
}

static void scopes_end_on_every_exit_path(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    assert_int_equal(early_return_helper(3), 6);
    assert_int_equal(early_return_helper(-1), -1);
    for (int i = 0; i < 3; i++) {
        VOR_SCOPE("loop body");
        if (i == 1) continue;
        if (i == 2) break;
    }
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 5);
    assert_int_equal(rec.frames[0].dropped, 0);
    for (uint32_t i = 0; i < rec.frames[0].kept; i++) assert_int_equal(rec.frames[0].scopes[i].depth, 0);
}

static void *disabled_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        VOR_SCOPE("while disabled");
    }
    return (void *)(uintptr_t)(vor_tls_thread == NULL);
}

static void disabled_path_records_nothing(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    vor_disable();
    assert_int_equal(vor_is_enabled(), 0);
    /* A thread that only ran disabled scopes never even gets a buffer. */
    pthread_t th;
    void *untouched = NULL;
    assert_int_equal(pthread_create(&th, NULL, disabled_worker, NULL), 0);
    assert_int_equal(pthread_join(th, &untouched), 0);
    assert_true(untouched != NULL);
    uint64_t head = vor_tls_thread ? vor_tls_thread->head : 0;
    for (int i = 0; i < 1000; i++) {
        VOR_SCOPE("while disabled");
    }
    assert_int_equal(vor_tls_thread ? vor_tls_thread->head : 0, head);
    vor_frame_mark(); /* does nothing while disabled */
    assert_int_equal(rec.n_frames, 0);
    vor_record_io(5, 5); /* ignored while disabled */

    vor_enable();
    fake_advance(10);
    vor_frame_mark();
    assert_int_equal(rec.n_frames, 1);
    assert_int_equal(rec.frames[0].n_scopes, 0);
    assert_int_equal(rec.frames[0].system_raw[2], 0); /* io_ms */
    assert_int_equal(rec.frames[0].duration_ns, 10); /* resuming opened a new frame */
}

static void scope_ending_during_a_pause_is_not_recorded(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    static vor_site s = VOR_SITE_INIT("ends in a pause");
    assert_int_equal(vor_scope_begin(&s), 1);
    vor_disable();
    fake_advance(100);
    vor_scope_end(); /* the begin was recorded, so the end still pops */
    fake_advance(5);
    vor_enable();
    fake_advance(10);
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 0);
    assert_int_equal(rec.frames[0].kept_open, 0);
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* A scope that began before a pause and ends after it keeps its true start: open in the
 * frames in between, ended in the frame where it ends, and its children find it. */
static void scope_spanning_a_pause_keeps_its_true_start(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    static vor_site s = VOR_SITE_INIT("spans a pause");
    fake_advance(100);
    assert_int_equal(vor_scope_begin(&s), 1); /* at 100 */
    fake_advance(100);
    vor_frame_mark(); /* frame 0: [0, 200), the scope open */
    vor_disable();
    fake_advance(1000);
    vor_enable(); /* frame 1 starts at 1200 */
    fake_advance(50);
    {
        VOR_SCOPE("child after the pause"); /* 1250 .. 1260 */
        fake_advance(10);
    }
    fake_advance(40);
    vor_frame_mark(); /* frame 1: [1200, 1300) */
    fake_advance(30);
    vor_scope_end(); /* 1330 */
    fake_advance(70);
    vor_frame_mark(); /* frame 2: [1300, 1400) */

    assert_int_equal(rec.n_frames, 3);
    assert_int_equal(rec.frames[0].kept_open, 1);
    assert_int_equal(rec.frames[0].open[0].start_ns, 100);
    assert_int_equal(rec.frames[0].open[0].duration_ns, 100);
    assert_int_equal(rec.frames[0].open[0].flags, VOR_SCOPE_OPEN);
    recorded_frame *f1 = &rec.frames[1];
    assert_int_equal(f1->start_ns, 1200);
    assert_int_equal(f1->n_scopes, 1);
    assert_int_equal(f1->kept_open, 1);
    assert_int_equal(f1->open[0].start_ns, 100);
    assert_int_equal(f1->open[0].duration_ns, 1200);
    assert_int_equal(f1->scopes[0].start_ns, 1250);
    assert_int_equal(f1->scopes[0].parent, 1); /* the open scope, after the one ended */
    recorded_frame *f2 = &rec.frames[2];
    assert_int_equal(f2->n_scopes, 1);
    assert_int_equal(f2->kept_open, 0);
    assert_int_equal(f2->scopes[0].start_ns, 100);
    assert_int_equal(f2->scopes[0].duration_ns, 1230);
    assert_int_equal(f2->scopes[0].parent, VOR_PARENT_NONE);
}

static void unbalanced_end_is_counted_and_reported_once(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    vor_scope_end();
    vor_scope_end();
    vor_scope_end();
    vor_frame_mark();
    assert_int_equal(vor_log_count(VOR_LOG_UNBALANCED_END), 3);
    assert_int_equal(captured.count[VOR_LOG_UNBALANCED_END], 1);
    vor_counters c;
    vor_get_counters(&c);
    assert_int_equal(c.unbalanced_ends, 3);
    /* The thread still records normally afterwards. */
    {
        VOR_SCOPE("after");
    }
    vor_frame_mark();
    assert_int_equal(rec.frames[1].n_scopes, 1);
}

static void deeper_than_max_depth_is_dropped_and_balanced(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 0);
    static vor_site deep = VOR_SITE_INIT("deep");
    int levels = VOR_MAX_DEPTH + 44;
    for (int i = 0; i < levels; i++) assert_int_equal(vor_scope_begin(&deep), 1);
    for (int i = 0; i < levels; i++) vor_scope_end();
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, VOR_MAX_DEPTH);
    assert_int_equal(rec.frames[0].dropped, 44);
    assert_int_equal(captured.count[VOR_LOG_DEPTH_OVERFLOW], 1);
    assert_int_equal(vor_log_count(VOR_LOG_DEPTH_OVERFLOW), 44);
}

static void *burst_worker(void *arg) {
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) {
        VOR_SCOPE("burst");
    }
    return NULL;
}

static void full_thread_buffer_drops_and_counts(void **state) {
    (void)state;
    vor_desc d = {0};
    d.thread_buffer_scopes = 1024;
    start_fake_session(d, 0);
    pthread_t th;
    int n = 1500;
    assert_int_equal(pthread_create(&th, NULL, burst_worker, &n), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 1024);
    assert_int_equal(rec.frames[0].dropped, 476);
    assert_int_equal(captured.count[VOR_LOG_THREAD_BUFFER_FULL], 1);
    assert_int_equal(vor_log_count(VOR_LOG_THREAD_BUFFER_FULL), 476);
}

static void full_frame_record_drops_and_counts(void **state) {
    (void)state;
    vor_desc d = {0};
    d.max_frame_scopes = 100;
    start_fake_session(d, 0);
    for (int i = 0; i < 150; i++) {
        VOR_SCOPE("many");
    }
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 100);
    assert_int_equal(rec.frames[0].dropped, 50);
    assert_int_equal(captured.count[VOR_LOG_FRAME_RECORD_FULL], 1);
    /* The next frame starts clean. */
    {
        VOR_SCOPE("one");
    }
    vor_frame_mark();
    assert_int_equal(rec.frames[1].n_scopes, 1);
    assert_int_equal(rec.frames[1].dropped, 0);
}

static void *leave_open_worker(void *arg) {
    (void)arg;
    static vor_site a = VOR_SITE_INIT("left open");
    static vor_site b = VOR_SITE_INIT("closed");
    vor_set_thread_name("quitter");
    vor_scope_begin(&a);
    vor_scope_begin(&a);
    vor_scope_begin(&b);
    vor_scope_end();
    return NULL; /* exits with two scopes open */
}

static void thread_exiting_with_open_scopes_closes_them_unwound(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, leave_open_worker, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    vor_frame_mark();
    /* The scope it closed, then the two it left open, closed at its exit, innermost first. */
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_scopes, 3);
    assert_int_equal(f->kept_open, 0);
    assert_string_equal(site_name(f->scopes[0].site_id), "closed");
    assert_int_equal(f->scopes[0].flags, 0);
    assert_int_equal(f->scopes[0].parent, 1);
    for (int i = 1; i <= 2; i++) {
        assert_string_equal(site_name(f->scopes[i].site_id), "left open");
        assert_int_equal(f->scopes[i].flags, VOR_SCOPE_UNWOUND);
        assert_int_equal(f->scopes[i].depth, 2 - i);
    }
    assert_int_equal(f->scopes[1].parent, 2);
    assert_int_equal(f->scopes[2].parent, VOR_PARENT_NONE);
    vor_counters c;
    vor_get_counters(&c);
    assert_int_equal(c.open_at_exit, 2);
    assert_int_equal(captured.count[VOR_LOG_OPEN_AT_THREAD_EXIT], 1);
    /* Its name is still known after its buffer was freed. */
    char name[64];
    assert_int_equal(vor_thread_name(rec.frames[0].scopes[0].thread_id, name, sizeof name), 1);
    assert_string_equal(name, "quitter");
}

static void *try_record(void *arg) {
    (void)arg;
    static vor_site s = VOR_SITE_INIT("extra thread");
    return (void *)(uintptr_t)vor_scope_begin(&s);
}

static void threads_beyond_the_limit_are_refused_and_counted(void **state) {
    (void)state;
    vor_desc d = {0};
    d.max_threads = 1; /* the main thread already has a buffer */
    start_fake_session(d, 10);
    {
        VOR_SCOPE("main");
    }
    pthread_t th;
    void *began = (void *)1;
    assert_int_equal(pthread_create(&th, NULL, try_record, NULL), 0);
    assert_int_equal(pthread_join(th, &began), 0);
    assert_null(began);
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 1);
    assert_int_equal(rec.frames[0].dropped, 1);
    assert_int_equal(captured.count[VOR_LOG_TOO_MANY_THREADS], 1);
}

static void explicit_begin_while_disabled_records_nothing(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    static vor_site s = VOR_SITE_INIT("explicit");
    vor_disable();
    for (int i = 0; i < 100000; i++) assert_int_equal(vor_scope_begin(&s), 0);
    vor_enable();
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 0);
    assert_int_equal(rec.frames[0].dropped, 0);
    assert_int_equal(vor_log_count(VOR_LOG_THREAD_BUFFER_FULL), 0);
}

static void null_site_is_refused_and_reported(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d, 10);
    assert_int_equal(vor_scope_begin(NULL), 0);
    assert_int_equal(vor_scope_begin(NULL), 0);
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 0);
    assert_int_equal(vor_log_count(VOR_LOG_NAME_NULL), 2);
    assert_int_equal(captured.count[VOR_LOG_NAME_NULL], 1);
}

static void *short_lived(void *arg) {
    (void)arg;
    VOR_SCOPE("short-lived thread");
    return NULL;
}

static void many_short_lived_threads_per_frame_are_not_refused(void **state) {
    (void)state;
    vor_desc d = {0};
    d.max_threads = 8;
    start_fake_session(d, 0);
    for (int i = 0; i < 7; i++) { /* 7 exited-and-waiting buffers: below the limit of 8 */
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, short_lived, NULL), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    }
    vor_frame_mark();
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 7; i++) {
            pthread_t th;
            assert_int_equal(pthread_create(&th, NULL, short_lived, NULL), 0);
            assert_int_equal(pthread_join(th, NULL), 0);
        }
        vor_frame_mark();
    }
    uint64_t total = 0, dropped = 0;
    for (uint32_t f = 0; f < rec.n_frames; f++) {
        total += rec.frames[f].n_scopes;
        dropped += rec.frames[f].dropped;
    }
    assert_int_equal(total, 28);
    assert_int_equal(dropped, 0);
    assert_int_equal(vor_log_count(VOR_LOG_TOO_MANY_THREADS), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(explicit_begin_while_disabled_records_nothing, teardown),
        cmocka_unit_test_teardown(null_site_is_refused_and_reported, teardown),
        cmocka_unit_test_teardown(many_short_lived_threads_per_frame_are_not_refused, teardown),
        cmocka_unit_test_teardown(nested_scopes_have_exact_times_in_end_order, teardown),
        cmocka_unit_test_teardown(frames_are_contiguous_and_scopes_land_in_the_frame_they_end_in, teardown),
        cmocka_unit_test_teardown(function_scope_is_named_after_the_function, teardown),
        cmocka_unit_test_teardown(scopes_end_on_every_exit_path, teardown),
        cmocka_unit_test_teardown(disabled_path_records_nothing, teardown),
        cmocka_unit_test_teardown(scope_ending_during_a_pause_is_not_recorded, teardown),
        cmocka_unit_test_teardown(scope_spanning_a_pause_keeps_its_true_start, teardown),
        cmocka_unit_test_teardown(unbalanced_end_is_counted_and_reported_once, teardown),
        cmocka_unit_test_teardown(deeper_than_max_depth_is_dropped_and_balanced, teardown),
        cmocka_unit_test_teardown(full_thread_buffer_drops_and_counts, teardown),
        cmocka_unit_test_teardown(full_frame_record_drops_and_counts, teardown),
        cmocka_unit_test_teardown(thread_exiting_with_open_scopes_closes_them_unwound, teardown),
        cmocka_unit_test_teardown(threads_beyond_the_limit_are_refused_and_counted, teardown),
    };
    return cmocka_run_group_tests_name("scopes", tests, NULL, NULL);
}
