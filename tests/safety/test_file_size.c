/* test_file_size.c: a file-size limit (ulimit -f, RLIMIT_FSIZE) never kills the program.
 *
 * Before the fix, the VOR_RECORD and VOR_TRACE writes that reached the limit made the
 * kernel send SIGXFSZ and the process died (exit 153 in a shell). Now vor treats it like
 * a full disk: one clear message on stderr naming the file and the limit, that output
 * stops, what it wrote reads back, and the program runs on and exits normally. The
 * program's own signal disposition is left alone (SIGXFSZ is still SIG_DFL).
 *
 * Each case runs in a child whose soft limit is 64 KiB and which records frames with
 * scopes until far more than 64 KiB would have been written, then exits normally.
 *
 *   test_safety_file_size capture   VOR_RECORD
 *   test_safety_file_size trace     VOR_TRACE, and both outputs at once (needs the trace
 *                                   writer to write through vor_file_write_all)
 */
#include "support.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chrome_check.h"
#include "child.h"

#define LIMIT_BYTES (64 * 1024)
#define RAN_ON "the program ran on"
#define FRAMES 2000

typedef struct outputs {
    const char *capture; /* NULL: not recorded */
    const char *trace;
    const char *trace_every; /* VOR_TRACE_EVERY, or NULL */
} outputs;

static void record_past_the_limit(void *arg) {
    const outputs *o = arg;
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = LIMIT_BYTES;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(97);
    if (o->capture) {
        setenv("VOR_RECORD", o->capture, 1);
        setenv("VOR_RECORD_FLAME", "1", 1);
    }
    if (o->trace) setenv("VOR_TRACE", o->trace, 1);
    if (o->trace_every) setenv("VOR_TRACE_EVERY", o->trace_every, 1);
    vor_enable();
    /* About 230 KiB of capture and 25 MB of trace without the limit. */
    for (int f = 0; f < FRAMES; f++) {
        for (int i = 0; i < 50; i++) {
            VOR_SCOPE("step");
            VOR_SCOPE("inner");
        }
        vor_record_metric("loss", 1.0 / (f + 1));
        vor_frame_mark();
    }
    vor_shutdown();
    struct sigaction sa;
    sigaction(SIGXFSZ, NULL, &sa);
    if (sa.sa_handler != SIG_DFL) _exit(96); /* vor must not have changed it */
    fprintf(stderr, "%s\n", RAN_ON);
    exit(0);
}

static uint64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The child ended normally, and said so. */
static void check_ran_on(const child_result *r) {
    if (r->err[0]) fprintf(stderr, "child stderr:\n%s", r->err);
    assert_int_equal(r->stuck, 0);
    assert_int_equal(r->signaled, 0); /* SIGXFSZ before the fix */
    assert_true(r->exited);
    assert_int_equal(r->exit_status, 0);
    assert_int_equal(count_lines_containing(r->err, RAN_ON), 1);
}

/* One line names the file, and says it is the file-size limit. */
static void check_one_message(const child_result *r, const char *variable) {
    assert_int_equal(count_lines_containing(r->err, variable), 1);
    assert_int_equal(count_lines_containing(r->err, "File too large"), count_lines_containing(r->err, "vor: "));
}

/* Every frame written reads back: the reader ends without error where the writes stopped. */
static void check_capture_reads_back(const char *path) {
    assert_true(file_size(path) <= LIMIT_BYTES);
    capture_summary c;
    assert_int_equal(read_capture_back(path, &c), VOR_READ_NOTHING_YET);
    assert_true(c.frames > 10);
    assert_true(c.frames < FRAMES);
    assert_true(c.offset == file_size(path)); /* no torn record at the end */
}

/* The trace stops between two events: chrome://tracing's rule for an unfinished array
 * loads it (every write ends on an event boundary). */
static void check_trace_loads(const char *path) {
    uint64_t size = file_size(path);
    assert_true(size > 1000 && size <= LIMIT_BYTES);
    trace_dump d;
    assert_int_equal(check_trace("catapult", path, &d), 0);
    assert_true(dump_count(&d, "X ") > 10);
    trace_dump_free(&d);
}

/* Records with the outputs asked for, past the limit, in a child. With both, the trace
 * keeps 1 frame in 400, so the capture reaches the limit first (near frame 650) and the
 * trace later (past frame 1000): each failure is reported, whichever came first. */
static void at_the_limit(int capture, int trace) {
    char capture_path[512], trace_path[512];
    snprintf(capture_path, sizeof capture_path, "%s", safety_temp_path(".vor"));
    snprintf(trace_path, sizeof trace_path, "%s", safety_temp_path(".json"));
    outputs o = {capture ? capture_path : NULL, trace ? trace_path : NULL, capture && trace ? "400" : NULL};
    child_result r;
    run_child(record_past_the_limit, &o, &r);
    check_ran_on(&r);
    if (capture) {
        check_one_message(&r, "VOR_RECORD=");
        check_capture_reads_back(capture_path);
    }
    if (trace) {
        check_one_message(&r, "VOR_TRACE=");
        check_trace_loads(trace_path);
    }
    if (capture && trace) assert_true(strstr(r.err, "VOR_RECORD=") < strstr(r.err, "VOR_TRACE="));
    child_result_free(&r);
    unlink(capture_path);
    unlink(trace_path);
}

static void capture_at_the_limit(void **state) {
    (void)state;
    at_the_limit(1, 0);
}

static void trace_at_the_limit(void **state) {
    (void)state;
    at_the_limit(0, 1);
}

static void both_at_the_limit(void **state) {
    (void)state;
    at_the_limit(1, 1);
}

int main(int argc, char **argv) {
    const struct CMUnitTest capture_tests[] = {
        cmocka_unit_test(capture_at_the_limit),
    };
    const struct CMUnitTest trace_tests[] = {
        cmocka_unit_test(trace_at_the_limit),
        cmocka_unit_test(both_at_the_limit),
    };
    if (argc == 2 && strcmp(argv[1], "capture") == 0) return cmocka_run_group_tests(capture_tests, NULL, NULL);
    if (argc == 2 && strcmp(argv[1], "trace") == 0) return cmocka_run_group_tests(trace_tests, NULL, NULL);
    fprintf(stderr, "usage: %s capture|trace\n", argv[0]);
    return 2;
}
