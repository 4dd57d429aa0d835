/* test_chrome_trace.c: the VOR_TRACE output end to end: a program records nested scopes
 * on named threads and metrics; the trace file is then loaded by check_trace.mjs (node)
 * the way Perfetto and chrome://tracing do. Exact times under the fake clock, names and
 * escaping, NaN metrics, one write per frame, a program killed mid-run (SIGKILL at a
 * known point and at a random one), unwritable paths, a file-size limit (EFBIG, never
 * SIGXFSZ), tiny buffers, renamed threads, exit without vor_shutdown, VOR_TRACE and its
 * volume settings from the environment (VOR_TRACE_EVERY, VOR_TRACE_MAX_FRAMES, bad
 * values), the live trace against `vor export --format chrome` of the same run byte for
 * byte, an export of extreme thread ids and counts, and threads racing the frame thread. */
#include "chrome_check.h"

#include "capture_writer.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FRAMES_TID 2147483647ull

static void unset_outputs(void) {
    static const char *const names[] = {"VOR_TRACE", "VOR_TRACE_EVERY", "VOR_TRACE_MAX_FRAMES", "VOR_RECORD",
                                        "VOR_RECORD_FLAME"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unsetenv(names[i]);
}

static int teardown(void **state) {
    (void)state;
    session_teardown();
    unset_outputs();
    return 0;
}

/* A session on the fake clock (start_ns > 0) or the real one (0). VOR_TRACE is unset so
 * that only the trace the test opens is written. */
static void start_session(uint64_t start_ns) {
    unset_outputs();
    if (start_ns) fake_clock_install(start_ns);
    vor_desc d;
    memset(&d, 0, sizeof d);
    setup_with_capture(d);
    vor_enable();
}

static int open_trace(const char *path, size_t buffer_bytes) {
    assert_int_equal(vor_frame_lock_acquire(), 1);
    vor_chrome_trace_options options = {0, 0, buffer_bytes};
    int ok = vor_chrome_trace_open(path, &options);
    vor_frame_lock_release();
    return ok;
}

static unsigned long long my_tid(void) {
    return (unsigned long long)syscall(SYS_gettid);
}

static unsigned long long my_pid(void) {
    return (unsigned long long)getpid();
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* One X line of the checker's dump. */
typedef struct x_event {
    unsigned long long pid, tid;
    long long ts, dur;
    char name[1024], cat[64], file[4096], line[32];
    const char *args; /* the rest of the line: the other args as JSON */
} x_event;

static int parse_x(const char *line, x_event *e) {
    int used = 0;
    if (sscanf(line, "X %llu %llu %lld %lld %1023s %63s %4095s %31s %n", &e->pid, &e->tid, &e->ts, &e->dur, e->name,
               e->cat, e->file, e->line, &used) < 8)
        return 0;
    e->args = line + used;
    return 1;
}

/* The X line of scope `name` on `tid`, nth of them; fails the test when absent. */
static x_event find_x(const trace_dump *d, unsigned long long tid, const char *name, size_t nth) {
    x_event e;
    memset(&e, 0, sizeof e);
    const char *h = hex_of(name);
    for (size_t i = 0; i < d->n; i++) {
        if (!parse_x(d->lines[i], &e)) continue;
        if (e.tid == tid && strcmp(e.name, h) == 0 && nth-- == 0) return e;
    }
    fail_msg("no X event \"%s\" on tid %llu", name, tid);
    return e;
}

static size_t count_x(const trace_dump *d, const char *name) {
    size_t n = 0;
    x_event e;
    const char *h = hex_of(name);
    for (size_t i = 0; i < d->n; i++)
        if (parse_x(d->lines[i], &e) && strcmp(e.name, h) == 0) n++;
    return n;
}

/* X events whose name starts with `prefix`. */
static size_t count_x_prefix(const trace_dump *d, const char *prefix) {
    size_t n = 0;
    x_event e;
    const char *h = hex_of(prefix);
    for (size_t i = 0; i < d->n; i++)
        if (parse_x(d->lines[i], &e) && strncmp(e.name, h, strlen(h)) == 0) n++;
    return n;
}

/* C events of counter `name`. */
static size_t count_counter(const trace_dump *d, const char *name) {
    char needle[600];
    snprintf(needle, sizeof needle, " %s %s ", hex_of(name), hex_of("value"));
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (strncmp(d->lines[i], "C ", 2) == 0 && strstr(d->lines[i], needle)) n++;
    return n;
}

/* Position of the first dump line containing `needle`, or -1. */
static long line_index(const trace_dump *d, const char *needle) {
    for (size_t i = 0; i < d->n; i++)
        if (strstr(d->lines[i], needle)) return (long)i;
    return -1;
}

/* The value of counter `name` at ts_ns, in any process (NAN when absent). */
static double counter_value(const trace_dump *d, const char *name, long long ts_ns) {
    char tail[1200];
    snprintf(tail, sizeof tail, "%lld %s %s ", ts_ns, hex_of(name), hex_of("value"));
    size_t n = strlen(tail);
    for (size_t i = 0; i < d->n; i++) {
        const char *line = d->lines[i];
        if (strncmp(line, "C ", 2) != 0) continue;
        const char *after_pid = strchr(line + 2, ' ');
        if (after_pid && strncmp(after_pid + 1, tail, n) == 0) return strtod(after_pid + 1 + n, NULL);
    }
    return NAN;
}

/* ---- Events, names and times ------------------------------------------------------------ */

typedef struct worker_job {
    const char *name;
    unsigned long long tid;
} worker_job;

static void *loader(void *arg) {
    worker_job *job = arg;
    job->tid = my_tid();
    vor_set_thread_name(job->name);
    static vor_site load = VOR_SITE_INIT("load");
    static vor_site decode = VOR_SITE_INIT("decode");
    vor_scope_begin(&load);
    fake_advance(50);
    vor_scope_begin(&decode);
    fake_advance(30);
    vor_scope_end();
    fake_advance(20);
    vor_scope_end();
    return NULL;
}

static void scopes_threads_and_metrics_become_events_with_exact_times(void **state) {
    (void)state;
    const char *path = test_path("events.json");
    start_session(1000000);
    assert_int_equal(open_trace(path, 0), 1);
    vor_set_thread_name("main loop");
    static vor_site outer = VOR_SITE_INIT("outer");
    const uint32_t outer_line = __LINE__ - 1; /* the line of VOR_SITE_INIT("outer") */
    static vor_site inner = VOR_SITE_INIT("inner");

    /* Frame 0: [0, 1000) ns since the session epoch. */
    fake_advance(100);
    vor_scope_begin(&outer); /* 100 .. 145 */
    fake_advance(10);
    vor_scope_begin(&inner); /* 110 .. 130 */
    fake_advance(20);
    vor_scope_end();
    fake_advance(5);
    vor_scope_begin(&inner); /* 135 .. 142 */
    fake_advance(7);
    vor_scope_end();
    fake_advance(3);
    vor_scope_end();
    fake_advance(5);
    worker_job jobs[2] = {{"loader 1", 0}, {"loader 2", 0}};
    for (int i = 0; i < 2; i++) { /* one after the other: the fake clock is shared */
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, loader, &jobs[i]), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    } /* loader 1: load 150 .. 250, decode 200 .. 230; loader 2: 250 .. 350, 300 .. 330 */
    vor_record_metric("loss", 0.5);
    fake_advance(650);
    vor_frame_mark();
    /* Frame 1: [1000, 2000). */
    fake_advance(100);
    vor_scope_begin(&outer); /* 1100 .. 1500 */
    fake_advance(400);
    vor_scope_end();
    vor_record_metric("loss", 0.25);
    fake_advance(500);
    vor_frame_mark();
    vor_shutdown();

    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    unsigned long long pid = my_pid(), tid = my_tid();
    char expected[2048];

    /* The process, named after /proc/self/comm, and the frames row, sorted first. */
    char *comm = read_whole_file("/proc/self/comm", NULL);
    assert_non_null(comm);
    comm[strcspn(comm, "\n")] = '\0';
    snprintf(expected, sizeof expected, "M %llu %llu process_name %s", pid, pid, hex_of(comm));
    assert_non_null(dump_find(&d, expected, 0));
    free(comm);
    snprintf(expected, sizeof expected, "M %llu %llu thread_name %s", pid, FRAMES_TID, hex_of("frames"));
    assert_non_null(dump_find(&d, expected, 0));
    snprintf(expected, sizeof expected, "M %llu %llu thread_sort_index -1", pid, FRAMES_TID);
    assert_non_null(dump_find(&d, expected, 0));

    /* Threads are named by their OS tid. */
    snprintf(expected, sizeof expected, "M %llu %llu thread_name %s", pid, tid, hex_of("main loop"));
    assert_non_null(dump_find(&d, expected, 0));
    for (int i = 0; i < 2; i++) {
        assert_true(jobs[i].tid != 0 && jobs[i].tid != tid);
        snprintf(expected, sizeof expected, "M %llu %llu thread_name %s", pid, jobs[i].tid, hex_of(jobs[i].name));
        assert_non_null(dump_find(&d, expected, 0));
    }

    /* Scopes: exact ns, name, category, file and line. */
    x_event e = find_x(&d, tid, "outer", 0);
    assert_int_equal(e.pid, pid);
    assert_int_equal(e.ts, 100);
    assert_int_equal(e.dur, 45);
    assert_string_equal(e.cat, hex_of("vor"));
    assert_string_equal(e.file, hex_of(__FILE__));
    assert_int_equal(atoi(e.line), outer_line);
    assert_string_equal(e.args, "{}");
    e = find_x(&d, tid, "inner", 0);
    assert_int_equal(e.ts, 110);
    assert_int_equal(e.dur, 20);
    e = find_x(&d, tid, "inner", 1);
    assert_int_equal(e.ts, 135);
    assert_int_equal(e.dur, 7);
    e = find_x(&d, tid, "outer", 1);
    assert_int_equal(e.ts, 1100);
    assert_int_equal(e.dur, 400);
    for (int i = 0; i < 2; i++) {
        e = find_x(&d, jobs[i].tid, "load", 0);
        assert_int_equal(e.ts, 150 + 100 * i);
        assert_int_equal(e.dur, 100);
        e = find_x(&d, jobs[i].tid, "decode", 0);
        assert_int_equal(e.ts, 200 + 100 * i);
        assert_int_equal(e.dur, 30);
    }
    assert_int_equal(count_x(&d, "inner"), 2);
    assert_int_equal(count_x(&d, "load"), 2);
    /* Parents are written before their children (start order). */
    snprintf(expected, sizeof expected, "X %llu %llu 100 45 ", pid, tid);
    long outer_at = line_index(&d, expected);
    snprintf(expected, sizeof expected, "X %llu %llu 110 20 ", pid, tid);
    long inner_at = line_index(&d, expected);
    assert_true(outer_at >= 0 && inner_at > outer_at);

    /* One frame event per frame on the frames row. */
    snprintf(expected, sizeof expected, "X %llu %llu 0 1000 %s %s - - {\"index\":0,\"scopes\":7,\"dropped\":0,", pid,
             FRAMES_TID, hex_of("frame"), hex_of("vor.frame"));
    assert_non_null(dump_find(&d, expected, 0));
    snprintf(expected, sizeof expected, "X %llu %llu 1000 1000 %s %s - - {\"index\":1,\"scopes\":1,\"dropped\":0,", pid,
             FRAMES_TID, hex_of("frame"), hex_of("vor.frame"));
    assert_non_null(dump_find(&d, expected, 0));
    assert_int_equal(count_x(&d, "frame"), 2);

    /* Counters at each frame's start: user metrics as given, system ones raw * scale. */
    assert_true(counter_value(&d, "loss", 0) == 0.5);
    assert_true(counter_value(&d, "loss", 1000) == 0.25);
    vor_column_info frame_ms;
    assert_int_equal(vor_column_get(0, &frame_ms), 1);
    assert_string_equal(frame_ms.name, "frame_ms");
    assert_true(counter_value(&d, "frame_ms", 0) == 1000 * 1e-6);
    assert_true(counter_value(&d, "frame_ms", 1000) == 1000 * 1e-6);
    assert_true(counter_value(&d, "memory_mb", 0) > 1.0); /* RSS of a running test */
    trace_dump_free(&d);
}

static void names_with_quotes_controls_and_invalid_utf8_stay_valid_json(void **state) {
    (void)state;
    const char *path = test_path("escapes.json");
    start_session(1000000);
    assert_int_equal(open_trace(path, 0), 1);
    const char *thread_raw = "th\"r\\e\x01\tad \xff!";
    const char *thread_decoded = "th\"r\\e\x01\tad \xef\xbf\xbd!";
    vor_set_thread_name(thread_raw);
    static vor_site nasty = {"sc\"o\\pe\n\x02 \xc3\xa9 \xe2\x82 end", NULL, "dir/\"odd\"\\file.c", 7, 0};
    const char *scope_decoded = "sc\"o\\pe\n\x02 \xc3\xa9 \xef\xbf\xbd end";
    /* A 300-byte name of two-byte characters is cut at 254 bytes, not inside a character. */
    static char long_name[301];
    for (int i = 0; i < 300; i += 2) memcpy(long_name + i, "\xc3\xa9", 2);
    static vor_site long_site = {long_name, NULL, NULL, 0, 0};
    vor_scope_begin(&nasty);
    fake_advance(10);
    vor_scope_end();
    vor_scope_begin(&long_site);
    vor_scope_end();
    vor_record_metric("lo\"ss\x7f\xfe", 1.0);
    fake_advance(10);
    vor_frame_mark();
    vor_shutdown();

    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    unsigned long long tid = my_tid();
    char expected[2048];
    snprintf(expected, sizeof expected, "M %llu %llu thread_name %s", my_pid(), tid, hex_of(thread_decoded));
    assert_non_null(dump_find(&d, expected, 0));
    x_event e = find_x(&d, tid, scope_decoded, 0);
    assert_string_equal(e.file, hex_of("dir/\"odd\"\\file.c"));
    assert_int_equal(atoi(e.line), 7);
    char cut[256];
    memcpy(cut, long_name, 254);
    cut[254] = '\0';
    find_x(&d, tid, cut, 0);
    assert_true(counter_value(&d, "lo\"ss\x7f\xef\xbf\xbd", 0) == 1.0);
    trace_dump_free(&d);
}

static void nan_and_infinite_metrics_are_left_out(void **state) {
    (void)state;
    const char *path = test_path("nan.json");
    start_session(1000000);
    assert_int_equal(open_trace(path, 0), 1);
    vor_record_metric("diverging", NAN);
    vor_record_metric("exploding", INFINITY);
    vor_record_metric("imploding", -INFINITY);
    vor_record_metric("fine", 3.0);
    fake_advance(1000);
    vor_frame_mark();
    vor_record_metric("diverging", 2.0); /* finite again in frame 1 */
    fake_advance(1000);
    vor_frame_mark();
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_true(isnan(counter_value(&d, "diverging", 0)));
    assert_true(isnan(counter_value(&d, "exploding", 0)));
    assert_true(isnan(counter_value(&d, "imploding", 1000)));
    assert_true(counter_value(&d, "fine", 0) == 3.0);
    assert_true(counter_value(&d, "diverging", 1000) == 2.0);
    trace_dump_free(&d);
}

/* ---- When the bytes reach the file ------------------------------------------------------- */

static void each_frame_reaches_the_file_when_it_ends(void **state) {
    (void)state;
    const char *path = test_path("per_frame.json");
    start_session(1000000);
    assert_int_equal(open_trace(path, 0), 1);
    trace_dump d;
    /* Before any frame: "[" and the process/frames names, already loadable. */
    assert_int_equal(check_trace("catapult", path, &d), 0);
    assert_int_equal(dump_count(&d, "X "), 0);
    assert_int_equal(dump_count(&d, "M "), 3);
    trace_dump_free(&d);
    static vor_site tick = VOR_SITE_INIT("tick");
    for (int frame = 0; frame < 3; frame++) {
        vor_scope_begin(&tick);
        fake_advance(10);
        vor_scope_end();
        fake_advance(90);
        vor_frame_mark();
        assert_int_equal(check_trace("catapult", path, &d), 0);
        assert_int_equal(count_x(&d, "tick"), (size_t)frame + 1);
        assert_int_equal(count_x(&d, "frame"), (size_t)frame + 1);
        trace_dump_free(&d);
        assert_true(trace_rejected("strict", path)); /* not closed yet */
    }
    vor_shutdown();
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(count_x(&d, "tick"), 3);
    trace_dump_free(&d);
}

/* The child of the crash tests: records `frames` frames of three scopes each, then either
 * opens a scope that never ends and signals the parent (ready_fd >= 0), or goes on until
 * killed (ready_fd < 0, real clock). Never returns. */
static void crash_child(const char *path, int frames, int ready_fd) {
    start_session(ready_fd >= 0 ? 1000000 : 0);
    if (!open_trace(path, 0)) _exit(2);
    static vor_site work = VOR_SITE_INIT("work");
    static vor_site step = VOR_SITE_INIT("step");
    static vor_site after = VOR_SITE_INIT("after");
    static vor_site unfinished = VOR_SITE_INIT("unfinished");
    for (int f = 0; ready_fd < 0 || f < frames; f++) {
        vor_scope_begin(&work);
        vor_scope_begin(&step);
        if (ready_fd >= 0) {
            fake_advance(50);
        } else {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
        vor_scope_end();
        vor_scope_end();
        vor_scope_begin(&after);
        vor_scope_end();
        vor_record_metric("progress", f);
        if (ready_fd >= 0) fake_advance(50);
        vor_frame_mark();
    }
    vor_scope_begin(&unfinished);
    vor_record_metric("progress", 99);
    if (write(ready_fd, "k", 1) != 1) _exit(3);
    for (;;) pause();
}

static void a_killed_program_leaves_a_loadable_trace(void **state) {
    (void)state;
    const char *path = test_path("killed.json");
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(ready[0]);
        crash_child(path, 5, ready[1]);
    }
    close(ready[1]);
    char byte;
    assert_int_equal(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    assert_int_equal(kill(child, SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    size_t size;
    char *text = read_whole_file(path, &size);
    assert_true(size > 2);
    assert_true(text[size - 1] == '}'); /* form 2 of chrome_json.h: no closing bracket */
    free(text);
    assert_true(trace_rejected("strict", path));
    trace_dump d;
    assert_int_equal(check_trace("catapult", path, &d), 0);
    /* Every frame before the kill is complete: its frame event, scopes and counters. */
    assert_int_equal(count_x(&d, "frame"), 5);
    assert_int_equal(count_x(&d, "work"), 5);
    assert_int_equal(count_x(&d, "step"), 5);
    assert_int_equal(count_x(&d, "after"), 5);
    assert_int_equal(count_x(&d, "unfinished"), 0);
    char frame_prefix[256];
    for (int f = 0; f < 5; f++) {
        snprintf(frame_prefix, sizeof frame_prefix, "\"index\":%d,", f);
        assert_true(line_index(&d, frame_prefix) >= 0);
        assert_true(counter_value(&d, "progress", 100LL * f) == f);
    }
    assert_true(isnan(counter_value(&d, "progress", 500))); /* frame 5 never ended */
    trace_dump_free(&d);
}

static void a_program_killed_at_a_random_moment_loses_at_most_a_frame(void **state) {
    (void)state;
    const char *path = test_path("killed_random.json");
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) crash_child(path, 0, -1);
    /* Let it write some hundreds of frames, then kill it wherever it is. */
    struct timespec pause_ts = {0, 2000000};
    for (int i = 0; i < 5000; i++) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > 300000) break;
        nanosleep(&pause_ts, NULL);
    }
    struct timespec jitter = {0, (long)(rand() % 1000) * 1000};
    nanosleep(&jitter, NULL);
    assert_int_equal(kill(child, SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));

    /* Perfetto's rule (an incomplete final event is dropped) always loads it; catapult's
     * does unless the kill tore a write, which takes microseconds out of every frame. */
    trace_dump d;
    assert_int_equal(check_trace("perfetto", path, &d), 0);
    /* Frames are contiguous, and every frame but the last one written has its 3 scopes. */
    x_event e, s;
    long long frames = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (!parse_x(d.lines[i], &e) || e.tid != FRAMES_TID) continue;
        char index[64];
        snprintf(index, sizeof index, "{\"index\":%lld,", frames);
        assert_true(strncmp(e.args, index, strlen(index)) == 0);
        frames++;
    }
    assert_true(frames > 10);
    long long seen = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (!parse_x(d.lines[i], &e) || e.tid != FRAMES_TID) continue;
        if (++seen == frames) break; /* the last frame may be cut */
        int scopes = 0;
        for (size_t k = i + 1; k < d.n; k++) {
            if (!parse_x(d.lines[k], &s)) continue;
            if (s.tid == FRAMES_TID) break;
            scopes++;
        }
        assert_int_equal(scopes, 3);
    }
    trace_dump_free(&d);
}

/* ---- Failures ----------------------------------------------------------------------------- */

static void an_unwritable_path_is_reported_and_the_program_runs_on(void **state) {
    (void)state;
    start_session(1000000);
    assert_int_equal(open_trace("/nonexistent-vor-dir/trace.json", 0), 0);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 1);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT],
                           "VOR_TRACE=/nonexistent-vor-dir/trace.json: No such file or directory"));
    /* Each bad path is a different setting: each is reported, naming its path. */
    assert_int_equal(open_trace("/proc/vor-trace.json", 0), 0);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "VOR_TRACE=/proc/vor-trace.json: "));
    assert_int_equal(open_trace(test_path(""), 0), 0); /* a directory */
    assert_int_equal(vor_log_count(VOR_LOG_BAD_ENVIRONMENT), 3);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 3);
    recording_attach(4);
    {
        VOR_SCOPE("still recording");
        fake_advance(5);
    }
    vor_frame_mark();
    assert_int_equal(rec.n_frames, 1);
    assert_int_equal(rec.frames[0].n_scopes, 1);
}

static void a_full_device_at_open_is_reported(void **state) {
    (void)state;
    if (!file_exists("/dev/full")) skip();
    start_session(1000000);
    assert_int_equal(open_trace("/dev/full", 0), 0);
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 1);
    assert_non_null(
        strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "VOR_TRACE=/dev/full: No space left on device"));
    vor_frame_mark();
}

static void a_full_disk_closes_the_trace_and_the_program_runs_on(void **state) {
    (void)state;
    const char *path = test_path("full_disk.json");
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The file may not grow past 16 KiB. SIGXFSZ keeps its default action (end the
         * process): vor must not raise it, the write fails with EFBIG instead. */
        struct rlimit limit = {16384, 16384};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
        start_session(1000000);
        if (!open_trace(path, 0)) _exit(11);
        static char long_name[201];
        memset(long_name, 'n', 200);
        static vor_site big = {long_name, NULL, "f.c", 1, 0};
        for (int f = 0; f < 300; f++) {
            for (int i = 0; i < 5; i++) {
                vor_scope_begin(&big);
                fake_advance(10);
                vor_scope_end();
            }
            vor_frame_mark();
        }
        vor_counters counters;
        vor_get_counters(&counters);
        if (counters.frames != 300) _exit(12);
        if (vor_log_count(VOR_LOG_CONSUMER_FAILED) != 1 || captured.count[VOR_LOG_CONSUMER_FAILED] != 1) _exit(13);
        const char *message = captured.last_message[VOR_LOG_CONSUMER_FAILED];
        if (!strstr(message, "VOR_TRACE=") || !strstr(message, path) || !strstr(message, strerror(EFBIG))) _exit(14);
        vor_shutdown(); /* the failed trace is already closed: no second report */
        if (vor_log_count(VOR_LOG_CONSUMER_FAILED) != 1) _exit(15);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status)) fail_msg("the program was killed by signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size <= 16384);
    /* Nothing was torn: the file ends on a frame boundary, loadable by chrome://tracing. */
    trace_dump d;
    assert_int_equal(check_trace("catapult", path, &d), 0);
    assert_true(count_x(&d, "frame") > 0);
    trace_dump_free(&d);
}

/* ---- Sizes, renames, exit, environment, threads ------------------------------------------- */

static void a_tiny_buffer_still_writes_every_event(void **state) {
    (void)state;
    const char *path = test_path("tiny.json");
    start_session(1000000);
    assert_int_equal(open_trace(path, 1), 1); /* raised to VOR_CHROME_JSON_MIN_BUFFER_BYTES */
    static char long_name[301];
    memset(long_name, 'x', 300);
    static vor_site a = VOR_SITE_INIT("a"), b = VOR_SITE_INIT("b"), c = {long_name, NULL, __FILE__, 1, 0};
    for (int f = 0; f < 4; f++) {
        for (int i = 0; i < 500; i++) {
            vor_scope_begin(&a);
            fake_advance(1);
            vor_scope_begin(&b);
            vor_scope_begin(&c);
            fake_advance(2);
            vor_scope_end();
            vor_scope_end();
            vor_scope_end();
        }
        vor_frame_mark();
    }
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(count_x(&d, "a"), 2000);
    assert_int_equal(count_x(&d, "b"), 2000);
    long_name[255] = '\0'; /* names are cut at VOR_MAX_NAME_BYTES */
    assert_int_equal(count_x(&d, long_name), 2000);
    long_name[255] = 'x';
    trace_dump_free(&d);
}

static void renamed_threads_are_named_again(void **state) {
    (void)state;
    const char *path = test_path("rename.json");
    start_session(1000000);
    assert_int_equal(open_trace(path, 0), 1);
    vor_set_thread_name("first name");
    for (int f = 0; f < 3; f++) {
        {
            VOR_SCOPE("named work");
            fake_advance(10);
        }
        vor_frame_mark();
        if (f == 0) vor_set_thread_name("second name");
    }
    vor_set_thread_name("second name"); /* the same name again: nothing new to write */
    vor_frame_mark();
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    char first[256], second[256];
    snprintf(first, sizeof first, "M %llu %llu thread_name %s", my_pid(), my_tid(), hex_of("first name"));
    snprintf(second, sizeof second, "M %llu %llu thread_name %s", my_pid(), my_tid(), hex_of("second name"));
    assert_int_equal(dump_count(&d, first), 1);
    assert_int_equal(dump_count(&d, second), 1);
    assert_true(line_index(&d, first) < line_index(&d, second));
    trace_dump_free(&d);
}

static void exit_without_shutdown_leaves_a_loadable_trace(void **state) {
    (void)state;
    const char *path = test_path("exit.json");
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* Through the environment when outputs.c reads VOR_TRACE, else opened here. */
        fake_clock_install(1000000);
        vor_desc d;
        memset(&d, 0, sizeof d);
        setup_with_capture(d);
        setenv("VOR_TRACE", path, 1);
        vor_enable();
        int from_environment = file_exists(path);
        if (!from_environment && !open_trace(path, 0)) _exit(2);
        for (int f = 0; f < 3; f++) {
            {
                VOR_SCOPE("before exit");
                fake_advance(10);
            }
            vor_frame_mark();
        }
        exit(from_environment ? 0 : 3); /* exit(), not vor_shutdown() */
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    int from_environment = WEXITSTATUS(status) == 0;
    assert_true(from_environment || WEXITSTATUS(status) == 3);
    size_t size;
    char *text = read_whole_file(path, &size);
    int closed = size >= 2 && strcmp(text + size - 2, "]\n") == 0;
    free(text);
    print_message("exit without vor_shutdown: trace %s, %s\n",
                  from_environment ? "from VOR_TRACE" : "opened by the test",
                  closed ? "closed by an exit hook (strict JSON)" : "left open (tolerated truncation)");
    trace_dump d;
    assert_int_equal(check_trace(closed ? "strict" : "catapult", path, &d), 0);
    assert_int_equal(count_x(&d, "before exit"), 3);
    trace_dump_free(&d);
}

/* The fake clock and the capturing logger, no output in the environment yet. */
static void prepare_session(void) {
    unset_outputs();
    fake_clock_install(1000000);
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    setup_with_capture(desc);
}

/* A session on the fake clock whose outputs come from the environment, as a user runs it. */
static void start_environment_session(const char *trace, const char *every, const char *max_frames) {
    prepare_session();
    setenv("VOR_TRACE", trace, 1);
    if (every) setenv("VOR_TRACE_EVERY", every, 1);
    if (max_frames) setenv("VOR_TRACE_MAX_FRAMES", max_frames, 1);
    vor_enable();
}

static void vor_trace_in_the_environment_opens_the_trace(void **state) {
    (void)state;
    const char *path = test_path("environment.json");
    start_environment_session(path, NULL, NULL);
    assert_true(file_exists(path)); /* opened by vor_enable, before any frame */
    {
        VOR_SCOPE("from the environment");
        fake_advance(10);
    }
    vor_frame_mark();
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(count_x(&d, "from the environment"), 1);
    assert_int_equal(count_x(&d, "frame"), 1);
    trace_dump_free(&d);
}

/* The frames row of a dump: [start, end] of each frame event, in file order. */
typedef struct frame_span {
    long long start, end, index;
} frame_span;

static size_t frame_spans(const trace_dump *d, frame_span *out, size_t cap) {
    size_t n = 0;
    x_event e;
    for (size_t i = 0; i < d->n && n < cap; i++) {
        if (!parse_x(d->lines[i], &e) || e.tid != FRAMES_TID) continue;
        out[n].start = e.ts;
        out[n].end = e.ts + e.dur;
        assert_int_equal(sscanf(e.args, "{\"index\":%lld,", &out[n].index), 1);
        n++;
    }
    return n;
}

/* Frames 0..frames-1 of 200 ns on the fake clock: a scope open across all of them, one
 * that spans two frames every five, and a step with a child in each. */
static void record_frames(int frames) {
    static vor_site whole = VOR_SITE_INIT("whole run"), span = VOR_SITE_INIT("two frames");
    static vor_site step = VOR_SITE_INIT("step"), inner = VOR_SITE_INIT("inner");
    vor_scope_begin(&whole);
    for (int f = 0; f < frames; f++) {
        if (f % 5 == 2) vor_scope_end(); /* "two frames", begun in the previous frame */
        vor_scope_begin(&step);
        fake_advance(20);
        vor_scope_begin(&inner);
        fake_advance(30);
        vor_scope_end();
        vor_scope_end();
        if (f % 5 == 1) vor_scope_begin(&span);
        vor_record_metric("frame number", f);
        fake_advance(150);
        vor_frame_mark();
    }
}

static void vor_trace_every_writes_one_frame_in_n_with_exact_nesting(void **state) {
    (void)state;
    const char *path = test_path("every.json");
    start_environment_session(path, "3", NULL);
    record_frames(30);
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0); /* zero partial overlaps per thread */
    frame_span spans[64];
    size_t n = frame_spans(&d, spans, 64);
    assert_int_equal(n, 10);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(spans[i].index, 3 * (long long)i);
        assert_true(counter_value(&d, "frame number", spans[i].start) == 3.0 * (double)i);
    }
    assert_int_equal(count_x(&d, "step"), 10);
    assert_int_equal(count_x(&d, "inner"), 10);
    assert_int_equal(count_counter(&d, "frame number"), 10);
    /* Each written frame is a run of its own: every scope lies within its frame, and one
     * that began in an unwritten frame says so. */
    x_event e;
    size_t two_frames = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (!parse_x(d.lines[i], &e) || e.tid == FRAMES_TID) continue;
        size_t k = 0;
        while (k < n && !(spans[k].start <= e.ts && e.ts + e.dur <= spans[k].end)) k++;
        if (k == n) fail_msg("outside every written frame: %s", d.lines[i]);
        if (strcmp(e.name, hex_of("two frames")) == 0) {
            two_frames++;
            assert_true(strstr(e.args, "clipped") != NULL);
        }
    }
    assert_true(two_frames >= 2); /* ended in frames 12 and 27 (and open at the end of 6 and 21) */
    trace_dump_free(&d);
}

static void vor_trace_max_frames_stops_the_trace(void **state) {
    (void)state;
    const char *path = test_path("max.json");
    start_environment_session(path, NULL, "4");
    record_frames(12);
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    frame_span spans[16];
    size_t n = frame_spans(&d, spans, 16);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) assert_int_equal(spans[i].index, (long long)i);
    assert_int_equal(count_x(&d, "step"), 4);
    assert_int_equal(count_counter(&d, "frame number"), 4);
    trace_dump_free(&d);
}

static void bad_trace_volume_settings_warn_and_the_trace_goes_on(void **state) {
    (void)state;
    const char *path = test_path("bad_every.json");
    start_environment_session(path, "every other", "-2");
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 2);
    assert_int_equal(vor_log_count(VOR_LOG_BAD_ENVIRONMENT), 2);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "VOR_TRACE_MAX_FRAMES=\"-2\""));
    record_frames(6);
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(count_x(&d, "frame"), 6); /* both ignored: every frame, no limit */
    assert_int_equal(count_x(&d, "step"), 6);
    trace_dump_free(&d);
}

static void *renamed_worker(void *arg) {
    (void)arg;
    vor_set_thread_name("worker");
    static vor_site job = VOR_SITE_INIT("job");
    vor_scope_begin(&job);
    fake_advance(7);
    vor_scope_end();
    return NULL;
}

/* One run with both outputs: a renamed thread, a worker, a site with an empty name, a scope
 * spanning frames, metrics. */
static void record_both_outputs(const char *capture, const char *trace) {
    prepare_session();
    setenv("VOR_RECORD", capture, 1);
    setenv("VOR_RECORD_FLAME", "1", 1);
    setenv("VOR_TRACE", trace, 1);
    vor_enable();
    vor_set_thread_name("main loop");
    static vor_site blank = VOR_SITE_INIT("");
    for (int f = 0; f < 12; f++) {
        if (f == 4) vor_set_thread_name("main loop, renamed");
        vor_scope_begin(&blank);
        fake_advance(5);
        vor_scope_end();
        pthread_t th;
        if (f % 3 == 0 && pthread_create(&th, NULL, renamed_worker, NULL) == 0) pthread_join(th, NULL);
        vor_record_metric("loss", 1.0 / (f + 1));
        vor_scope_begin(&blank);
        fake_advance(100);
        vor_frame_mark(); /* the second scope spans two frames */
        fake_advance(20);
        vor_scope_end();
    }
    vor_frame_mark();
    vor_shutdown();
}

static void the_live_trace_and_the_export_of_the_same_run_are_identical(void **state) {
    (void)state;
    const char *capture = test_path("same_run.vor");
    const char *live = test_path("same_run_live.json");
    const char *exported = test_path("same_run_export.json");
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        record_both_outputs(capture, live);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char command[2048];
    snprintf(command, sizeof command, "'%s' export '%s' --format chrome -o '%s'", VOR_CLI, capture, exported);
    assert_int_equal(system(command), 0);
    size_t live_size, exported_size;
    char *a = read_whole_file(live, &live_size);
    char *b = read_whole_file(exported, &exported_size);
    assert_non_null(a);
    assert_non_null(b);
    if (live_size != exported_size || memcmp(a, b, live_size) != 0) {
        size_t at = 0;
        while (at < live_size && at < exported_size && a[at] == b[at]) at++;
        fail_msg("the export differs from the live trace at byte %zu:\n live   %.160s\n export %.160s", at, a + at,
                 b + at);
    }
    trace_dump d;
    assert_int_equal(check_trace("strict", live, &d), 0);
    assert_int_equal(count_x(&d, "job"), 4);
    assert_true(count_x_prefix(&d, "site ") > 0); /* the site with an empty name: "site N" */
    trace_dump_free(&d);
    free(a);
    free(b);
}

static void export_takes_any_thread_id_and_any_drop_count(void **state) {
    (void)state;
    const char *capture = test_path("extreme.vor");
    const char *exported = test_path("extreme.json");
    start_session(1000000);
    static vor_site extreme = VOR_SITE_INIT("extreme");
    uint32_t site = vor_site_register(&extreme);
    assert_true(site > 0);
    vor_capture_options options = {1, 1, 0, 0};
    vor_capture_writer *w = vor_capture_writer_create(capture, &options);
    assert_non_null(w);
    vor_scope_record scopes[1] = {{site, 0, 10, 20, VOR_PARENT_NONE, 0}};
    vor_thread_record threads[2] = {{0xFFFFFFFFu, 1, scopes, 0}, {0, 1, scopes, 0}};
    vor_reader_drop drops[1] = {{VOR_DROP_FRAME_FULL, 0xFFFFFFFFu, (1ull << 63) + 5}};
    vor_frame_record r;
    memset(&r, 0, sizeof r);
    r.duration_ns = 100;
    r.n_threads = 2;
    r.threads = threads;
    r.n_scopes = 2;
    r.dropped_scopes = (1ull << 63) + 5;
    r.n_drops = 1;
    r.drops = drops;
    assert_int_equal(vor_capture_writer_frame(w, &r), 0);
    vor_capture_writer_close(w);
    char command[2048];
    snprintf(command, sizeof command, "'%s' export '%s' --format chrome -o '%s'", VOR_CLI, capture, exported);
    int status = system(command);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    trace_dump d;
    assert_int_equal(check_trace("strict", exported, &d), 0);
    char expected[256];
    snprintf(expected, sizeof expected, "M %llu 4294967296 thread_name %s", my_pid(), hex_of("thread 4294967295"));
    assert_non_null(dump_find(&d, expected, 0));
    assert_int_equal(count_x(&d, "extreme"), 2);
    trace_dump_free(&d);
    char *text = read_whole_file(exported, NULL);
    assert_non_null(strstr(text, ",dropped:9223372036854775813,")); /* not negative */
    free(text);
}

typedef struct racer {
    int index;
    int iterations;
} racer;

static int racers_done;

static void *race(void *arg) {
    racer *r = arg;
    char name[32];
    for (int i = 0; i < r->iterations; i++) {
        if (i % 500 == 0) {
            snprintf(name, sizeof name, "racer %d.%d", r->index, i / 500);
            vor_set_thread_name(name);
        }
        VOR_SCOPE("racer outer");
        { VOR_SCOPE("racer inner"); }
    }
    __atomic_fetch_add(&racers_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void threads_recording_while_frames_are_written(void **state) {
    (void)state;
    const char *path = test_path("threads.json");
    start_session(0);
    assert_int_equal(open_trace(path, 0), 1);
    racers_done = 0;
    enum { RACERS = 4, ITERATIONS = 4000 };
    pthread_t th[RACERS];
    racer racers[RACERS];
    for (int i = 0; i < RACERS; i++) {
        racers[i] = (racer){i, ITERATIONS};
        assert_int_equal(pthread_create(&th[i], NULL, race, &racers[i]), 0);
    }
    struct timespec pause_ts = {0, 200000};
    while (__atomic_load_n(&racers_done, __ATOMIC_ACQUIRE) < RACERS) {
        {
            VOR_SCOPE("frame thread");
            nanosleep(&pause_ts, NULL);
        }
        vor_frame_mark();
    }
    for (int i = 0; i < RACERS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    vor_frame_mark();
    vor_frame_mark(); /* the exited threads' last scopes */
    vor_counters counters;
    vor_get_counters(&counters);
    vor_shutdown();
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0); /* nesting checked per thread */
    assert_int_equal(counters.scopes_dropped, 0);
    assert_int_equal(count_x(&d, "racer outer"), RACERS * ITERATIONS);
    assert_int_equal(count_x(&d, "racer inner"), RACERS * ITERATIONS);
    assert_int_equal(dump_count(&d, "X ") - count_x(&d, "frame"), counters.scopes_recorded);
    trace_dump_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(scopes_threads_and_metrics_become_events_with_exact_times, teardown),
        cmocka_unit_test_teardown(names_with_quotes_controls_and_invalid_utf8_stay_valid_json, teardown),
        cmocka_unit_test_teardown(nan_and_infinite_metrics_are_left_out, teardown),
        cmocka_unit_test_teardown(each_frame_reaches_the_file_when_it_ends, teardown),
        cmocka_unit_test_teardown(a_killed_program_leaves_a_loadable_trace, teardown),
        cmocka_unit_test_teardown(a_program_killed_at_a_random_moment_loses_at_most_a_frame, teardown),
        cmocka_unit_test_teardown(an_unwritable_path_is_reported_and_the_program_runs_on, teardown),
        cmocka_unit_test_teardown(a_full_device_at_open_is_reported, teardown),
        cmocka_unit_test_teardown(a_full_disk_closes_the_trace_and_the_program_runs_on, teardown),
        cmocka_unit_test_teardown(a_tiny_buffer_still_writes_every_event, teardown),
        cmocka_unit_test_teardown(renamed_threads_are_named_again, teardown),
        cmocka_unit_test_teardown(exit_without_shutdown_leaves_a_loadable_trace, teardown),
        cmocka_unit_test_teardown(vor_trace_in_the_environment_opens_the_trace, teardown),
        cmocka_unit_test_teardown(vor_trace_every_writes_one_frame_in_n_with_exact_nesting, teardown),
        cmocka_unit_test_teardown(vor_trace_max_frames_stops_the_trace, teardown),
        cmocka_unit_test_teardown(bad_trace_volume_settings_warn_and_the_trace_goes_on, teardown),
        cmocka_unit_test_teardown(the_live_trace_and_the_export_of_the_same_run_are_identical, teardown),
        cmocka_unit_test_teardown(export_takes_any_thread_id_and_any_drop_count, teardown),
        cmocka_unit_test_teardown(threads_recording_while_frames_are_written, teardown),
    };
    return cmocka_run_group_tests_name("chrome_trace", tests, NULL, remove_test_dir_teardown);
}
