/* test_exit_logger.c: a logger callback may call vor and may exit() (vor.h allows both),
 * and a normal exit finishes every output as the README says: the capture gets its last
 * frames and its end record, the VOR_TRACE file its closing "]" (strict JSON).
 *
 * Each scenario runs in a child process recording with VOR_RECORD (flame frames) and
 * VOR_TRACE, whose logger calls exit() when the scenario's warning arrives:
 *   - THREAD_BUFFER_FULL, raised while vor_frame_mark drains the buffers under the frame
 *     lock (before the fix the exit hook saw the lock held and left both files
 *     unfinished);
 *   - FRAME_MARK_OTHER_THREAD, raised on a second thread;
 *   - TOO_MANY_COLUMNS, raised under the columns' lock by vor_record_metric, with a logger
 *     that records a metric first (before the fix the thread waited for its own lock).
 * The parent checks how the child ended, reads the capture back with the reader and
 * loads the trace with the strict JSON checker.
 */
#include "support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_check.h"
#include "child.h"
#include "vor/reader.h"

#define EXIT_FROM_LOGGER 7

static vor_log_item exit_item;     /* the logger exits when this item arrives */
static int record_in_logger;       /* ...after recording a metric and reading the counters */

static void exiting_logger(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    (void)message;
    if (item != exit_item) return;
    if (record_in_logger) {
        vor_record_metric("logged", 1.0);
        vor_counters counters;
        vor_get_counters(&counters);
    }
    exit(EXIT_FROM_LOGGER);
}

typedef struct scenario {
    vor_log_item item;
    int record_in_logger;
    void (*run)(void);
    uint32_t frames_expected; /* frames closed before the exit */
    const char *capture, *trace;
} scenario;

static void start_recording(const scenario *s) {
    setenv("VOR_RECORD", s->capture, 1);
    setenv("VOR_RECORD_FLAME", "1", 1);
    setenv("VOR_TRACE", s->trace, 1);
    exit_item = s->item;
    record_in_logger = s->record_in_logger;
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.logger.func = exiting_logger;
    desc.thread_buffer_scopes = 1024;
    vor_setup(&desc);
    vor_enable();
}

static void frames_with_scopes(int frames) {
    for (int f = 0; f < frames; f++) {
        for (int i = 0; i < 10; i++) {
            VOR_SCOPE("work");
        }
        vor_record_metric("loss", 1.0 / (f + 1));
        vor_frame_mark();
    }
}

/* Three frames, then more scopes than the buffer holds: the fourth mark reports it. */
static void full_buffer(void) {
    frames_with_scopes(3);
    for (int i = 0; i < 3000; i++) {
        VOR_SCOPE("overflowing");
    }
    vor_frame_mark();
}

static void *mark_from_other_thread(void *arg) {
    (void)arg;
    vor_frame_mark();
    return NULL;
}

/* Three frames, then a mark from a second thread. */
static void other_thread_mark(void) {
    frames_with_scopes(3);
    pthread_t t;
    if (pthread_create(&t, NULL, mark_from_other_thread, NULL) == 0) pthread_join(t, NULL);
}

/* Three frames, then more user metrics than a process may name. */
static void too_many_columns(void) {
    frames_with_scopes(3);
    char name[32];
    for (int i = 0; i <= VOR_MAX_USER_COLUMNS; i++) {
        snprintf(name, sizeof name, "metric %d", i);
        vor_record_metric(name, i);
    }
}

static void child_body(void *arg) {
    const scenario *s = arg;
    start_recording(s);
    s->run();
}

static void check_scenario(scenario *s) {
    char capture[512], trace[512];
    snprintf(capture, sizeof capture, "%s", safety_temp_path(".vor"));
    snprintf(trace, sizeof trace, "%s", safety_temp_path(".json"));
    s->capture = capture;
    s->trace = trace;
    child_result r;
    run_child(child_body, s, &r);
    if (r.err[0]) fprintf(stderr, "child stderr:\n%s", r.err);
    assert_int_equal(r.stuck, 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_status, EXIT_FROM_LOGGER);

    capture_summary c;
    assert_int_equal(read_capture_back(capture, &c), VOR_READ_NOTHING_YET);
    assert_int_equal(c.frames, s->frames_expected);
    assert_int_equal(c.finished, 1); /* the end record is there */

    trace_dump d;
    assert_int_equal(check_trace("strict", trace, &d), 0);
    assert_int_equal(dump_count(&d, "X ") >= s->frames_expected, 1);
    size_t frame_events = 0;
    char frame_cat[64];
    snprintf(frame_cat, sizeof frame_cat, " %s ", hex_of("vor.frame"));
    for (size_t i = 0; i < d.n; i++)
        if (strstr(d.lines[i], frame_cat)) frame_events++;
    assert_int_equal(frame_events, s->frames_expected);
    trace_dump_free(&d);
    child_result_free(&r);
    unlink(capture);
    unlink(trace);
}

static void exit_from_logger_inside_frame_mark(void **state) {
    (void)state;
    scenario s = {VOR_LOG_THREAD_BUFFER_FULL, 0, full_buffer, 4, NULL, NULL};
    check_scenario(&s);
}

static void exit_from_logger_on_another_thread(void **state) {
    (void)state;
    scenario s = {VOR_LOG_FRAME_MARK_OTHER_THREAD, 0, other_thread_mark, 3, NULL, NULL};
    check_scenario(&s);
}

static void logger_calling_vor_under_the_columns_lock(void **state) {
    (void)state;
    scenario s = {VOR_LOG_TOO_MANY_COLUMNS, 1, too_many_columns, 3, NULL, NULL};
    check_scenario(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exit_from_logger_inside_frame_mark),
        cmocka_unit_test(exit_from_logger_on_another_thread),
        cmocka_unit_test(logger_calling_vor_under_the_columns_lock),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    remove_test_dir();
    return failed;
}
