/* test_metrics.c: metric columns and units, user values in frames, I/O accumulation
 * across threads, the system columns, API misuse (NULL and over-long names, NaN), a
 * frame mark from a second thread, settings clamping, counters and the frame ring. */
#include "support.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

static void start_fake_session(vor_desc desc) {
    fake_clock_install(5000);
    setup_with_capture(desc);
    vor_enable();
    recording_attach(16);
}

static int column_id(const char *name) {
    vor_column_info info;
    for (uint32_t id = 0; id < vor_column_count(); id++)
        if (vor_column_get(id, &info) && strcmp(info.name, name) == 0) return (int)id;
    return -1;
}

static double user_value(const recorded_frame *f, int id, int *found) {
    for (uint32_t i = 0; i < f->n_user; i++)
        if ((int)f->user[i].column_id == id) {
            *found = 1;
            return f->user[i].value;
        }
    *found = 0;
    return 0;
}

static void system_columns_come_first_with_units(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    const char *names[] = {"frame_ms", "memory_mb", "io_ms", "io_MB", "cpu_ms"};
    const char *units[] = {"ms", "MB", "ms", "MB", "ms"};
    for (uint32_t i = 0; i < 5; i++) {
        vor_column_info info;
        assert_int_equal(vor_column_get(i, &info), 1);
        assert_int_equal(info.id, i);
        assert_int_equal(info.is_system, 1);
        assert_string_equal(info.name, names[i]);
        assert_string_equal(info.unit, units[i]);
    }
    fake_advance(16000000);
    vor_frame_mark();
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_system, 5);
    assert_int_equal(f->system_raw[0], 16000000); /* frame_ms raw = frame ns */
    assert_true(f->system_present & (1u << 1));    /* memory read from /proc */
    assert_true(f->system_raw[1] > 1000000);       /* RSS of a running test: > 1 MB */
    assert_true(f->system_present & (1u << 4));    /* cpu_ms */
    assert_true(f->system_raw[4] >= 0);
    assert_true(vor_current_memory_bytes() > 1000000);
}

static void user_metrics_keep_their_latest_value_and_unit(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    vor_record_metric_unit("tokens_per_s", "tokens/s");
    vor_record_metric("loss", 2.5);
    vor_record_metric("loss", 1.25); /* latest wins */
    vor_frame_mark();
    vor_record_metric("tokens_per_s", 900); /* first appears in frame 1 */
    vor_frame_mark();
    vor_frame_mark(); /* no new values: latest values are snapshotted again */

    int loss = column_id("loss"), tps = column_id("tokens_per_s");
    assert_true(loss >= 5 && tps >= 5);
    vor_column_info info;
    assert_int_equal(vor_column_get((uint32_t)tps, &info), 1);
    assert_string_equal(info.unit, "tokens/s");
    assert_int_equal(info.is_system, 0);
    assert_int_equal(vor_column_get((uint32_t)loss, &info), 1);
    assert_string_equal(info.unit, "");

    int found;
    assert_true(user_value(&rec.frames[0], loss, &found) == 1.25 && found);
    user_value(&rec.frames[0], tps, &found);
    assert_false(found);
    assert_true(user_value(&rec.frames[1], tps, &found) == 900 && found);
    assert_true(user_value(&rec.frames[2], loss, &found) == 1.25 && found);
    assert_true(user_value(&rec.frames[2], tps, &found) == 900 && found);

    /* A unit registered later updates the declaration (and is reported nowhere), also
     * when the new unit is a prefix of the old one, or empty. */
    vor_record_metric_unit("loss", "nats");
    assert_int_equal(vor_column_get((uint32_t)loss, &info), 1);
    assert_string_equal(info.unit, "nats");
    vor_record_metric_unit("loss", "nat");
    assert_int_equal(vor_column_get((uint32_t)loss, &info), 1);
    assert_string_equal(info.unit, "nat");
    vor_record_metric_unit("loss", "");
    assert_int_equal(vor_column_get((uint32_t)loss, &info), 1);
    assert_string_equal(info.unit, "");
}

static void nan_and_infinity_are_recorded_as_given(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    vor_record_metric("diverging", NAN);
    vor_record_metric("exploding", INFINITY);
    vor_frame_mark();
    int found;
    assert_true(isnan(user_value(&rec.frames[0], column_id("diverging"), &found)) && found);
    assert_true(isinf(user_value(&rec.frames[0], column_id("exploding"), &found)) && found);
    assert_int_equal(vor_log_count(VOR_LOG_VALUE_NOT_FINITE), 2);
    assert_int_equal(captured.count[VOR_LOG_VALUE_NOT_FINITE], 1);
}

static void null_and_overlong_names_are_reported_not_fatal(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    uint32_t before = vor_column_count();
    vor_record_metric(NULL, 1.0);
    vor_record_metric_unit(NULL, "x");
    vor_set_thread_name(NULL);
    assert_int_equal(vor_column_count(), before);
    assert_int_equal(vor_log_count(VOR_LOG_NAME_NULL), 3);
    assert_int_equal(captured.count[VOR_LOG_NAME_NULL], 1);

    char long_name[400];
    memset(long_name, 'm', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    vor_record_metric(long_name, 3.0);
    assert_int_equal(captured.count[VOR_LOG_NAME_TOO_LONG], 1);
    vor_column_info info;
    assert_int_equal(vor_column_get(vor_column_count() - 1, &info), 1);
    assert_int_equal(strlen(info.name), VOR_MAX_NAME_BYTES);
    /* The same long name again finds the same (truncated) column. */
    vor_record_metric(long_name, 4.0);
    assert_int_equal(vor_column_count(), before + 1);

    /* A scope site with a NULL name is named "(unnamed)", not a crash. */
    static vor_site unnamed = {NULL, NULL, NULL, 0, 0};
    assert_int_equal(vor_scope_begin(&unnamed), 1);
    vor_scope_end();
    vor_frame_mark();
    assert_int_equal(rec.frames[0].n_scopes, 1);
    assert_string_equal(vor_site_get(rec.frames[0].scopes[0].site_id)->name, "(unnamed)");
}

typedef struct io_job {
    int calls;
} io_job;

static void *io_worker(void *arg) {
    io_job *job = arg;
    for (int i = 0; i < job->calls; i++) vor_record_io(10, 100);
    return NULL;
}

static void io_accumulates_across_threads_per_frame(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    pthread_t th[4];
    io_job job = {1000};
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, io_worker, &job), 0);
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    vor_frame_mark();
    vor_record_io(7400, 3);
    vor_frame_mark();
    assert_int_equal(rec.frames[0].system_raw[2], 40);      /* io_ms raw: us (40,000 ns) */
    assert_int_equal(rec.frames[0].system_raw[3], 400000);  /* io_MB raw: bytes */
    assert_int_equal(rec.frames[1].system_raw[2], 7);       /* 7,400 ns rounds to 7 us */
    assert_int_equal(rec.frames[1].system_raw[3], 3);
    vor_column_info info;
    assert_int_equal(vor_column_get(2, &info), 1);
    assert_string_equal(info.name, "io_ms");
}

static void *mark_from_other_thread(void *arg) {
    (void)arg;
    vor_frame_mark();
    return NULL;
}

static void frame_mark_from_a_second_thread_is_ignored(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    vor_frame_mark(); /* the main thread becomes the frame thread */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, mark_from_other_thread, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(rec.n_frames, 1);
    assert_int_equal(captured.count[VOR_LOG_FRAME_MARK_OTHER_THREAD], 1);
    vor_frame_mark();
    assert_int_equal(rec.n_frames, 2);
}

static void too_many_user_columns_are_ignored(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    char name[32];
    uint32_t start = vor_column_count();
    uint32_t user_before = start - 5;
    for (int i = 0; i < VOR_MAX_USER_COLUMNS + 10; i++) {
        snprintf(name, sizeof name, "metric_%d", i);
        vor_record_metric(name, i);
    }
    assert_int_equal(vor_column_count(), 5 + VOR_MAX_USER_COLUMNS);
    assert_int_equal(captured.count[VOR_LOG_TOO_MANY_COLUMNS], 1);
    assert_true(vor_log_count(VOR_LOG_TOO_MANY_COLUMNS) >= 10 + user_before);
}

static void setup_clamps_bad_values_and_refuses_while_running(void **state) {
    (void)state;
    vor_desc d = {0};
    d.thread_buffer_scopes = 3;         /* below the minimum */
    d.max_threads = 100000;             /* above the maximum */
    setup_with_capture(d);
    assert_int_equal(vor_settings_now.thread_buffer_scopes, VOR_MIN_THREAD_BUFFER_SCOPES);
    assert_int_equal(vor_settings_now.max_threads, VOR_MAX_MAX_THREADS);
    assert_int_equal(captured.count[VOR_LOG_BAD_SETTING], 1);
    d.thread_buffer_scopes = 5000; /* rounded up to a power of two */
    d.max_threads = 0;
    setup_with_capture(d);
    assert_int_equal(vor_settings_now.thread_buffer_scopes, 8192);
    assert_int_equal(vor_settings_now.max_threads, VOR_DEFAULT_MAX_THREADS);
    vor_enable();
    assert_int_equal(vor_setup(&d), 0);
    assert_int_equal(vor_log_count(VOR_LOG_SETUP_TOO_LATE), 1);
}

static void frame_ring_keeps_the_newest_frames_as_views(void **state) {
    (void)state;
    vor_desc d = {0};
    d.frame_ring_frames = 8;
    start_fake_session(d);
    vor_record_metric("loss", 0.5);
    for (int i = 0; i < 20; i++) {
        {
            VOR_SCOPE("work");
            fake_advance(100);
        }
        fake_advance(900);
        vor_frame_mark();
    }
    uint64_t oldest = 0, newest = 0;
    assert_int_equal(vor_frame_ring_range(&oldest, &newest), 1);
    assert_int_equal(oldest, 12);
    assert_int_equal(newest, 19);
    assert_int_equal(vor_frame_ring_copy(11, NULL, 0), 0); /* overwritten */
    size_t size = vor_frame_ring_copy(19, NULL, 0);
    assert_true(size > 64);
    uint8_t view[4096];
    assert_int_equal(vor_frame_ring_copy(19, view, 10), size); /* too small: size only */
    assert_int_equal(vor_frame_ring_copy(19, view, sizeof view), size);
    uint32_t magic, total, n_values, n_threads, n_scopes;
    double index, start, duration;
    memcpy(&magic, view, 4);
    memcpy(&total, view + 8, 4);
    memcpy(&index, view + 16, 8);
    memcpy(&start, view + 24, 8);
    memcpy(&duration, view + 32, 8);
    memcpy(&n_values, view + 48, 4);
    memcpy(&n_threads, view + 52, 4);
    memcpy(&n_scopes, view + 56, 4);
    assert_int_equal(magic, 0x4D524656u);
    assert_int_equal(total, size);
    assert_true(index == 19);
    assert_true(start == 19000);
    assert_true(duration == 1000);
    assert_int_equal(n_values, 6); /* 5 system + loss */
    assert_int_equal(n_threads, 1);
    assert_int_equal(n_scopes, 1);
    /* frame_ms is value 0: column 0, 1000 ns = 0.001 ms */
    uint32_t col0;
    double v0;
    memcpy(&col0, view + 72, 4); /* values follow the 72-byte header (view version 2) */
    memcpy(&v0, view + 80, 8);
    assert_int_equal(col0, 0);
    assert_true(fabs(v0 - 0.001) < 1e-12);
}

static void counters_sum_the_session(void **state) {
    (void)state;
    vor_desc d = {0};
    start_fake_session(d);
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < 4; i++) {
            VOR_SCOPE("counted");
        }
        vor_frame_mark();
    }
    vor_counters c;
    vor_get_counters(&c);
    assert_int_equal(c.frames, 3);
    assert_int_equal(c.scopes_recorded, 12);
    assert_int_equal(c.scopes_dropped, 0);
    assert_true(c.threads >= 1);
}

/* A logger that calls back into vor (or exits) while vor reports from inside a frame mark
 * must not deadlock: the frame lock is not re-taken on the same thread. */
static int reentrant_calls;
static void reentrant_logger(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    (void)message;
    if (item != VOR_LOG_CONSUMER_FAILED) return;
    reentrant_calls++;
    vor_counters c;
    vor_get_counters(&c);
    vor_frame_mark();
    vor_flush_recording();
    vor_shutdown();
    vor_calibrate();
}

static int failing_frame(void *state, const vor_frame_record *r) {
    (void)state;
    (void)r;
    return 1; /* an output that fails: closed and reported (CONSUMER_FAILED) */
}

static void logger_calling_back_into_vor_does_not_deadlock(void **state) {
    (void)state;
    fake_clock_install(0);
    vor_desc d = {0};
    d.logger.func = reentrant_logger;
    assert_int_equal(vor_setup(&d), 1);
    vor_enable();
    vor_consumer c = {"failing output", NULL, failing_frame, NULL, NULL};
    assert_int_equal(vor_frame_lock_acquire(), 1);
    assert_int_equal(vor_consumers_add(&c), 1);
    vor_frame_lock_release();
    vor_frame_mark(); /* reports CONSUMER_FAILED under the frame lock */
    assert_int_equal(reentrant_calls, 1);
    vor_frame_mark(); /* still works afterwards */
    vor_counters counters;
    vor_get_counters(&counters);
    assert_int_equal(counters.frames, 2);
}

/* A logger that triggers another item from inside (here a NULL name) must not hang on
 * the reporting lock: the nested item is counted, and reported when it next occurs. */
static int nested_calls;
static void nesting_logger(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    (void)message;
    nested_calls++;
    if (item == VOR_LOG_VALUE_NOT_FINITE) vor_record_metric(NULL, 1.0); /* NAME_NULL, nested */
}

static void logger_triggering_another_item_does_not_hang(void **state) {
    (void)state;
    vor_desc d = {0};
    d.logger.func = nesting_logger;
    assert_int_equal(vor_setup(&d), 1);
    vor_enable();
    nested_calls = 0;
    vor_record_metric("nan", NAN); /* VALUE_NOT_FINITE, whose report logs NAME_NULL */
    assert_int_equal(nested_calls, 1);
    assert_int_equal(vor_log_count(VOR_LOG_NAME_NULL), 1); /* counted, not reported yet */
    vor_record_metric(NULL, 2.0);                           /* outside the logger: reported */
    assert_int_equal(nested_calls, 2);
    assert_int_equal(vor_log_count(VOR_LOG_NAME_NULL), 2);
    vor_record_metric(NULL, 3.0); /* and once only */
    assert_int_equal(nested_calls, 2);
}

typedef struct race_state {
    int stop;
} race_state;

static void *enable_shutdown_loop(void *arg) {
    race_state *rs = arg;
    while (!__atomic_load_n(&rs->stop, __ATOMIC_ACQUIRE)) {
        vor_enable();
        vor_shutdown();
    }
    return NULL;
}

static void *enable_loop(void *arg) {
    race_state *rs = arg;
    while (!__atomic_load_n(&rs->stop, __ATOMIC_ACQUIRE)) vor_enable();
    return NULL;
}

static void enable_and_shutdown_racing_leave_a_consistent_state(void **state) {
    (void)state;
    race_state rs = {0};
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, enable_shutdown_loop, &rs), 0);
    assert_int_equal(pthread_create(&b, NULL, enable_loop, &rs), 0);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    __atomic_store_n(&rs.stop, 1, __ATOMIC_RELEASE);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    /* Whatever the interleaving: enabled means a session runs, and frames can be marked. */
    vor_enable();
    assert_int_equal(vor_is_enabled(), 1);
    vor_frame_stats_reset();
    vor_frame_mark();
    vor_frame_stats st;
    vor_frame_stats_get(&st);
    assert_int_equal(st.count, 1);
}

static void version_is_consistent(void **state) {
    (void)state;
    assert_int_equal(vor_version_number(), VOR_VERSION_NUMBER);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", VOR_VERSION_MAJOR, VOR_VERSION_MINOR, VOR_VERSION_PATCH);
    assert_string_equal(vor_version_string(), expected);
}

static void calibration_measures_a_plausible_cost(void **state) {
    (void)state;
    double ns = vor_calibrate();
    assert_true(ns > 0.5);     /* two clock reads cannot be free */
    assert_true(ns < 100000);  /* and one scope is not 100 us, even under sanitizers */
    assert_true(vor_empty_span_ns() == ns);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(system_columns_come_first_with_units, teardown),
        cmocka_unit_test_teardown(user_metrics_keep_their_latest_value_and_unit, teardown),
        cmocka_unit_test_teardown(nan_and_infinity_are_recorded_as_given, teardown),
        cmocka_unit_test_teardown(null_and_overlong_names_are_reported_not_fatal, teardown),
        cmocka_unit_test_teardown(io_accumulates_across_threads_per_frame, teardown),
        cmocka_unit_test_teardown(frame_mark_from_a_second_thread_is_ignored, teardown),
        cmocka_unit_test_teardown(setup_clamps_bad_values_and_refuses_while_running, teardown),
        cmocka_unit_test_teardown(frame_ring_keeps_the_newest_frames_as_views, teardown),
        cmocka_unit_test_teardown(counters_sum_the_session, teardown),
        cmocka_unit_test_teardown(logger_calling_back_into_vor_does_not_deadlock, teardown),
        cmocka_unit_test_teardown(logger_triggering_another_item_does_not_hang, teardown),
        cmocka_unit_test_teardown(enable_and_shutdown_racing_leave_a_consistent_state, teardown),
        cmocka_unit_test(version_is_consistent),
        cmocka_unit_test(calibration_measures_a_plausible_cost),
        /* Last: it fills the process-wide column table. */
        cmocka_unit_test_teardown(too_many_user_columns_are_ignored, teardown),
    };
    return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
