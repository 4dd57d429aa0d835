/* test_chrome_frames.c: the one Chrome trace writer (core/src/chrome_frames.c) fed with
 * hand-built frames, the way live records and capture frames reach it: scopes open across
 * frames, runs of consecutive recorded frames and the clipping rule, threads that exit
 * with open scopes, exact nesting whatever the input (a simulated program checked event
 * by event, then random inconsistent times checked for zero partial overlaps by
 * check_trace.mjs), drops by cause, counts above 2^63, thread ids at the limits, names
 * that are declared late. */
#include "chrome_check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_frames.h"
#include "scope_order.h"

#define FRAMES_TID 2147483647ull
#define PID 4242u

/* ---- Names: sites "s<id>" (file "f.c", line id) below 1000, threads "t<id>" ------------ */

static uint32_t unknown_site = 999; /* a site the lookup does not know (yet) */
static char site_buf[32];

static int test_site(void *ctx, uint32_t id, vor_chrome_site_info *out) {
    (void)ctx;
    if (id >= 1000 || id == unknown_site) return 0;
    snprintf(site_buf, sizeof site_buf, "s%u", id);
    out->name = site_buf;
    out->file = "f.c";
    out->line = id;
    return 1;
}

static int test_thread(void *ctx, uint32_t id, char *out, size_t cap, uint64_t *os_tid) {
    (void)ctx;
    snprintf(out, cap, "t%u", id);
    *os_tid = 0;
    return 1;
}

static const char *test_column(void *ctx, uint32_t id) {
    (void)ctx;
    return id == 0 ? "frame_ms" : NULL;
}

typedef struct writer {
    vor_chrome_json *json;
    vor_chrome_frames *frames;
    const char *path;
} writer;

static writer open_writer(const char *name, int open_listed) {
    writer w;
    w.path = test_path(name);
    int fd = open(w.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    w.json = vor_chrome_json_open_fd(fd, 1, 0);
    assert_non_null(w.json);
    vor_chrome_frames_config c;
    memset(&c, 0, sizeof c);
    c.names.site = test_site;
    c.names.thread = test_thread;
    c.names.column = test_column;
    c.pid = PID;
    c.process_name = "sim";
    c.vor_version = "0.1.0";
    c.open_scopes_listed = open_listed;
    w.frames = vor_chrome_frames_new(w.json, &c);
    assert_non_null(w.frames);
    return w;
}

static vor_chrome_frames_stats close_writer(writer *w) {
    vor_chrome_frames_end_run(w->frames);
    vor_chrome_frames_stats s;
    vor_chrome_frames_get_stats(w->frames, &s);
    vor_chrome_frames_finish(w->frames);
    assert_int_equal(vor_chrome_json_close(w->json), 0);
    return s;
}

static vor_reader_scope scope(uint32_t site, uint32_t depth, int64_t start, int64_t dur) {
    vor_reader_scope s = {site, depth, start, dur, VOR_PARENT_UNKNOWN, 0};
    return s;
}

static vor_reader_scope open_scope(uint32_t site, uint32_t depth, int64_t start) {
    vor_reader_scope s = {site, depth, start, 0, VOR_PARENT_UNKNOWN, VOR_SCOPE_OPEN};
    return s;
}

/* A frame of one thread: `n` ended scopes then `m` open ones in `scopes`. */
static vor_reader_frame one_thread_frame(uint64_t index, int64_t start, int64_t dur, vor_reader_thread_scopes *t,
                                         uint32_t thread_id, const vor_reader_scope *scopes, uint32_t n, uint32_t m) {
    t->thread_id = thread_id;
    t->n_scopes = n;
    t->scopes = scopes;
    t->n_open = m;
    vor_reader_frame f;
    memset(&f, 0, sizeof f);
    f.index = index;
    f.start_ns = start;
    f.duration_ns = dur;
    f.has_flame = 1;
    f.n_threads = 1;
    f.threads = t;
    f.n_scopes = n;
    return f;
}

/* The X line of a scope: "X pid tid ts dur name_hex ..." prefix for comparisons. */
static const char *x_prefix(unsigned long long tid, long long ts, long long dur, const char *name) {
    static char ring[8][256];
    static unsigned next;
    char *p = ring[next++ % 8];
    snprintf(p, 256, "X %u %llu %lld %lld %s ", PID, tid, ts, dur, hex_of(name));
    return p;
}

static const char *x_line(const trace_dump *d, unsigned long long tid, long long ts, long long dur, const char *name) {
    return dump_find(d, x_prefix(tid, ts, dur, name), 0);
}

/* Fails unless the X event is there with exactly these extra args ("{}" for none). */
static const char *must_x(const trace_dump *d, unsigned long long tid, long long ts, long long dur, const char *name,
                          const char *args) {
    const char *line = x_line(d, tid, ts, dur, name);
    if (line == NULL) fail_msg("no X event %s on tid %llu at [%lld, +%lld]", name, tid, ts, dur);
    size_t n = strlen(line), k = strlen(args);
    if (n < k || strcmp(line + n - k, args) != 0) fail_msg("%s: args are not %s", line, args);
    return line;
}

static long line_at(const trace_dump *d, const char *line) {
    for (size_t i = 0; i < d->n; i++)
        if (d->lines[i] == line) return (long)i;
    return -1;
}

/* ---- Open scopes, runs and clipping, by hand ------------------------------------------------ */

static void scopes_open_across_frames_are_written_once_exactly(void **state) {
    (void)state;
    writer w = open_writer("across.json", 1);
    vor_reader_thread_scopes t;
    /* main [0, ...) open throughout; load [150, 2300) spans frames 0-2; leaves in each. */
    vor_reader_scope f0[] = {scope(10, 1, 100, 40), open_scope(1, 0, 0), open_scope(2, 1, 150)};
    vor_reader_scope f1[] = {scope(11, 2, 1100, 50), open_scope(1, 0, 0), open_scope(2, 1, 150)};
    vor_reader_scope f2[] = {scope(11, 2, 2100, 50), scope(2, 1, 150, 2150), open_scope(1, 0, 0)};
    vor_reader_scope f3[] = {scope(12, 1, 3100, 100), open_scope(1, 0, 0)};
    vor_reader_frame f;
    f = one_thread_frame(0, 0, 1000, &t, 3, f0, 1, 2);
    assert_int_equal(vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES), 0);
    f = one_thread_frame(1, 1000, 1000, &t, 3, f1, 1, 2);
    assert_int_equal(vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES), 0);
    f = one_thread_frame(2, 2000, 1000, &t, 3, f2, 2, 1);
    assert_int_equal(vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES), 0);
    f = one_thread_frame(3, 3000, 1000, &t, 3, f3, 1, 1);
    assert_int_equal(vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES), 0);
    vor_chrome_frames_stats s = close_writer(&w); /* main: clipped to the end of frame 3 */
    assert_int_equal(s.scopes, 6);
    assert_int_equal(s.adjusted, 0);
    assert_int_equal(s.clipped, 1);

    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    assert_int_equal(dump_count(&d, "X ") - 4, 6); /* 4 frame events */
    must_x(&d, 4, 0, 4000, "s1", "{\"clipped_end\":true}");
    must_x(&d, 4, 150, 2150, "s2", "{}"); /* once, whole */
    assert_int_equal(dump_count(&d, x_prefix(4, 150, 2150, "s2")), 1);
    must_x(&d, 4, 100, 40, "s10", "{}");
    must_x(&d, 4, 1100, 50, "s11", "{}");
    must_x(&d, 4, 2100, 50, "s11", "{}");
    must_x(&d, 4, 3100, 100, "s12", "{}");
    trace_dump_free(&d);
}

static void a_run_ends_at_a_gap_and_open_scopes_are_clipped_to_it(void **state) {
    (void)state;
    writer w = open_writer("runs.json", 1);
    vor_reader_thread_scopes t;
    vor_reader_scope f0[] = {scope(10, 1, 100, 40), open_scope(1, 0, 0), open_scope(2, 1, 500)};
    /* Frame 1 is not recorded (index 2 follows 0): a new run starts at 2000. */
    vor_reader_scope f2[] = {scope(2, 1, 500, 1800), open_scope(1, 0, 0)};
    /* Frame 3 starts later than frame 2 ended (a pause): another run. */
    vor_reader_scope f3[] = {scope(1, 0, 0, 3700)};
    vor_reader_frame f;
    f = one_thread_frame(0, 0, 1000, &t, 0, f0, 1, 2);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    f = one_thread_frame(2, 2000, 1000, &t, 0, f2, 1, 1);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    f = one_thread_frame(3, 3500, 500, &t, 0, f3, 1, 0);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    vor_chrome_frames_stats s = close_writer(&w);
    assert_int_equal(s.adjusted, 0);

    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    /* Run [0, 1000): s1 and s2 open at its end, clipped there. */
    must_x(&d, 1, 0, 1000, "s1", "{\"clipped_end\":true}");
    must_x(&d, 1, 500, 500, "s2", "{\"clipped_end\":true}");
    /* Run [2000, 3000): s2 ends in it (clipped start), s1 open at its end (both). */
    must_x(&d, 1, 2000, 300, "s2", "{\"clipped_start\":true}");
    must_x(&d, 1, 2000, 1000, "s1", "{\"clipped_start\":true,\"clipped_end\":true}");
    /* Run [3500, 4000): s1 ends. */
    must_x(&d, 1, 3500, 200, "s1", "{\"clipped_start\":true}");
    assert_int_equal(dump_count(&d, "X ") - 3, 6);
    trace_dump_free(&d);
}

static void a_frame_that_ends_its_run_writes_open_scopes_first(void **state) {
    (void)state;
    writer w = open_writer("ends_run.json", 1);
    vor_reader_thread_scopes t;
    /* A child that starts at the very nanosecond of its (open) parent. */
    vor_reader_scope f0[] = {scope(10, 2, 100, 40), open_scope(1, 0, 0), open_scope(2, 1, 100)};
    vor_reader_frame f = one_thread_frame(0, 0, 1000, &t, 0, f0, 1, 2);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES | VOR_CHROME_FRAME_ENDS_RUN);
    /* The run ended: the next frame starts another, even though it follows on. */
    vor_reader_scope f1[] = {scope(2, 1, 100, 1200), open_scope(1, 0, 0)};
    f = one_thread_frame(1, 1000, 1000, &t, 0, f1, 1, 1);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES | VOR_CHROME_FRAME_ENDS_RUN);
    close_writer(&w);

    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    const char *main0 = must_x(&d, 1, 0, 1000, "s1", "{\"clipped_end\":true}");
    const char *load0 = must_x(&d, 1, 100, 900, "s2", "{\"clipped_end\":true}");
    const char *leaf = must_x(&d, 1, 100, 40, "s10", "{}");
    assert_true(line_at(&d, main0) < line_at(&d, load0));
    assert_true(line_at(&d, load0) < line_at(&d, leaf)); /* parents first, even at equal starts */
    must_x(&d, 1, 1000, 300, "s2", "{\"clipped_start\":true}");
    must_x(&d, 1, 1000, 1000, "s1", "{\"clipped_start\":true,\"clipped_end\":true}");
    trace_dump_free(&d);
}

static void a_thread_that_exits_with_open_scopes_has_them_clipped_where_last_seen(void **state) {
    (void)state;
    writer w = open_writer("exit.json", 1);
    vor_reader_thread_scopes th[2];
    vor_reader_scope a0[] = {open_scope(1, 0, 100), open_scope(2, 1, 200)}; /* thread 5 */
    vor_reader_scope b0[] = {scope(3, 0, 10, 20)};                          /* thread 6 */
    vor_reader_frame f;
    memset(&f, 0, sizeof f);
    f.index = 0, f.start_ns = 0, f.duration_ns = 1000, f.has_flame = 1;
    th[0] = (vor_reader_thread_scopes){5, 0, a0, 2};
    th[1] = (vor_reader_thread_scopes){6, 1, b0, 0};
    f.threads = th, f.n_threads = 2;
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    /* Frame 1: thread 5 is gone (it exited with both scopes open). */
    vor_reader_scope b1[] = {scope(3, 0, 1010, 20)};
    f.index = 1, f.start_ns = 1000;
    th[0] = (vor_reader_thread_scopes){6, 1, b1, 0};
    f.n_threads = 1;
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    /* Frame 2: thread 7 ends a scope that began earlier, its outer one vanished (exit). */
    vor_reader_scope c2[] = {open_scope(1, 0, 2100), open_scope(2, 1, 2200)};
    f.index = 2, f.start_ns = 2000;
    th[0] = (vor_reader_thread_scopes){7, 0, c2, 2};
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    vor_reader_scope c3[] = {scope(2, 1, 2200, 1300)};
    f.index = 3, f.start_ns = 3000;
    th[0] = (vor_reader_thread_scopes){7, 1, c3, 0};
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    vor_chrome_frames_stats s = close_writer(&w);
    assert_int_equal(s.adjusted, 0);

    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    must_x(&d, 6, 100, 900, "s1", "{\"clipped_end\":true}");
    must_x(&d, 6, 200, 800, "s2", "{\"clipped_end\":true}");
    must_x(&d, 8, 2100, 1400, "s1", "{\"clipped_end\":true}"); /* to its child's end */
    must_x(&d, 8, 2200, 1300, "s2", "{}");
    trace_dump_free(&d);
}

/* ---- Frames: drops, counts, thread ids, late names ---------------------------------------- */

static void frames_carry_drops_by_cause_and_counts_above_2_63(void **state) {
    (void)state;
    writer w = open_writer("drops.json", 1);
    vor_reader_drop drops[] = {
        {VOR_DROP_THREAD_BUFFER_FULL, 1, 5},
        {VOR_DROP_THREAD_BUFFER_FULL, 2, 7},
        {VOR_DROP_FRAME_FULL, 1, (1ull << 63) + 5},
        {VOR_DROP_FILTERED, 1, 3},
        {99, 0, 1},
    };
    vor_reader_value values[] = {{0, 16.5}, {1, 2.0}};
    vor_reader_frame f;
    memset(&f, 0, sizeof f);
    f.index = UINT64_MAX - 1;
    f.start_ns = 0;
    f.duration_ns = 500;
    f.overhead_ns = -3;
    f.dropped_scopes = UINT64_MAX;
    f.n_scopes = (1ull << 63) + 1;
    f.drops = drops;
    f.n_drops = 5;
    f.values = values;
    f.n_values = 2;
    vor_chrome_frames_write(w.frames, &f, 0);
    close_writer(&w);
    char *text = read_whole_file(w.path, NULL);
    /* The figures are categories, not args (speedscope would fold args into the name). */
    assert_non_null(strstr(text, "\"cat\":\"vor.frame,index:18446744073709551614,scopes:9223372036854775809,"
                                 "dropped:18446744073709551615,overhead_ns:-3,"
                                 "dropped_thread_buffer_full:12,dropped_frame_full:9223372036854775813,"
                                 "filtered_min_duration:3,dropped_other_cause:1\",\"name\":\"frame\"}"));
    free(text);
    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    assert_int_equal(dump_count(&d, "C "), 1); /* column 1 has no name: left out */
    trace_dump_free(&d);
}

static void thread_ids_at_the_limits_get_rows_of_their_own(void **state) {
    (void)state;
    writer w = open_writer("tids.json", 1);
    vor_reader_scope a[] = {scope(1, 0, 10, 10)};
    vor_reader_thread_scopes th[3] = {
        {0xFFFFFFFFu, 1, a, 0},
        {2147483646u, 1, a, 0}, /* id + 1 is the frames row's tid */
        {0, 1, a, 0},
    };
    vor_reader_frame f;
    memset(&f, 0, sizeof f);
    f.duration_ns = 100, f.has_flame = 1, f.threads = th, f.n_threads = 3;
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    close_writer(&w);
    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    char expected[128];
    snprintf(expected, sizeof expected, "M %u 4294967296 thread_name %s", PID, hex_of("t4294967295"));
    assert_non_null(dump_find(&d, expected, 0));
    snprintf(expected, sizeof expected, "M %u %llu thread_name %s", PID, (1ull << 32) + 2147483646u,
             hex_of("t2147483646"));
    assert_non_null(dump_find(&d, expected, 0));
    snprintf(expected, sizeof expected, "X %u %llu ", PID, FRAMES_TID);
    assert_int_equal(dump_count(&d, expected), 1); /* only the frame */
    must_x(&d, 4294967296ull, 10, 10, "s1", "{}");
    must_x(&d, 1, 10, 10, "s1", "{}");
    trace_dump_free(&d);
}

static void a_site_declared_late_gets_its_name_from_then_on(void **state) {
    (void)state;
    writer w = open_writer("late.json", 1);
    vor_reader_thread_scopes t;
    vor_reader_scope s0[] = {scope(998, 0, 10, 10)};
    unknown_site = 998;
    vor_reader_frame f = one_thread_frame(0, 0, 100, &t, 0, s0, 1, 0);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    unknown_site = 999; /* declared now */
    vor_reader_scope s1[] = {scope(998, 0, 110, 10)};
    f = one_thread_frame(1, 100, 100, &t, 0, s1, 1, 0);
    vor_chrome_frames_write(w.frames, &f, VOR_CHROME_FRAME_SCOPES);
    close_writer(&w);
    trace_dump d;
    assert_int_equal(check_trace("strict", w.path, &d), 0);
    must_x(&d, 1, 10, 10, "site 998", "{}");
    must_x(&d, 1, 110, 10, "s998", "{}");
    trace_dump_free(&d);
}

/* ---- A simulated program: every event exactly as the rule says ------------------------------ */

enum { SIM_THREADS = 3, SIM_FRAMES = 400, SIM_MAX_DEPTH = 7, SIM_MAX_SCOPES = 64 };

typedef struct sim_thread {
    uint32_t id;
    vor_reader_scope stack[SIM_MAX_DEPTH];
    uint32_t depth;
    int exit_at; /* frame at which it stops (exits with what is open), -1 never */
} sim_thread;

typedef struct sim_frame {
    int64_t start, end;
    int recorded, ends_run;
    uint32_t n_threads;
    vor_reader_thread_scopes threads[SIM_THREADS];
    vor_reader_scope scopes[SIM_THREADS][SIM_MAX_SCOPES + SIM_MAX_DEPTH];
} sim_frame;

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

/* Runs the program: frames of 3 threads that begin and end scopes at random, some of them
 * across frame marks. */
static sim_frame *simulate(uint64_t seed) {
    rng_state = seed;
    sim_frame *frames = calloc(SIM_FRAMES, sizeof *frames);
    assert_non_null(frames);
    sim_thread th[SIM_THREADS] = {{0, {{0}}, 0, -1}, {7, {{0}}, 0, 250}, {0xFFFFFFFFu, {{0}}, 0, -1}};
    int64_t t = 0;
    for (int k = 0; k < SIM_FRAMES; k++) {
        sim_frame *f = &frames[k];
        f->start = t;
        f->end = t + 200 + rnd(2000);
        f->recorded = rnd(4) != 0;
        for (int i = 0; i < SIM_THREADS; i++) {
            sim_thread *s = &th[i];
            if (s->exit_at >= 0 && k >= s->exit_at) continue;
            vor_reader_scope *out = f->scopes[f->n_threads];
            uint32_t n = 0;
            int64_t now = f->start;
            while (n < SIM_MAX_SCOPES) {
                now += rnd(60);
                if (now >= f->end) break;
                int begin = s->depth == 0 || (s->depth < SIM_MAX_DEPTH && rnd(2));
                if (begin) {
                    s->stack[s->depth] = open_scope(1 + rnd(5), s->depth, now);
                    s->depth++;
                } else {
                    vor_reader_scope e = s->stack[--s->depth];
                    e.duration_ns = now - e.start_ns;
                    e.flags = rnd(20) == 0 ? VOR_SCOPE_UNWOUND : 0;
                    out[n++] = e;
                }
            }
            if (n == 0 && s->depth == 0) continue; /* nothing overlaps the frame */
            for (uint32_t d = 0; d < s->depth; d++) out[n + d] = s->stack[d];
            uint32_t last_at[SIM_MAX_DEPTH];
            vor_scopes_link_parents(out, n, s->depth, last_at, SIM_MAX_DEPTH);
            f->threads[f->n_threads] = (vor_reader_thread_scopes){s->id, n, out, s->depth};
            f->n_threads++;
        }
        t = f->end;
    }
    for (int k = 0; k < SIM_FRAMES; k++)
        frames[k].ends_run = frames[k].recorded && (k + 1 == SIM_FRAMES || !frames[k + 1].recorded) && rnd(2);
    return frames;
}

static char **expected_lines;
static size_t n_expected, expected_capacity;

static void expect(uint64_t tid, int64_t start, int64_t end, uint32_t site, uint32_t flags) {
    if (n_expected == expected_capacity) {
        expected_capacity = expected_capacity ? expected_capacity * 2 : 1024;
        expected_lines = realloc(expected_lines, expected_capacity * sizeof *expected_lines);
        assert_non_null(expected_lines);
    }
    char name[16], args[96] = "{";
    snprintf(name, sizeof name, "s%u", site);
    if (flags & 1) strcat(args, "\"clipped_start\":true");
    if (flags & 2) strcat(args, args[1] ? ",\"clipped_end\":true" : "\"clipped_end\":true");
    if (flags & 4) strcat(args, args[1] ? ",\"unwound\":true" : "\"unwound\":true");
    strcat(args, "}");
    char *line = malloc(512);
    assert_non_null(line);
    snprintf(line, 512, "X %u %llu %lld %lld %s %s %s %u %s", PID, (unsigned long long)tid, (long long)start,
             (long long)(end - start), hex_of(name), hex_of("vor"), hex_of("f.c"), site, args);
    expected_lines[n_expected++] = line;
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the rule says the writer writes for the recorded frames of `frames`. */
static void expected_events(const sim_frame *frames) {
    n_expected = 0;
    for (int k = 0; k < SIM_FRAMES;) {
        if (!frames[k].recorded) {
            k++;
            continue;
        }
        int first = k, last = k;
        while (last + 1 < SIM_FRAMES && frames[last + 1].recorded && !frames[last].ends_run) last++;
        int64_t run_start = frames[first].start;
        uint32_t ids[SIM_THREADS] = {0, 7, 0xFFFFFFFFu};
        for (int i = 0; i < SIM_THREADS; i++) {
            int last_listed = -1;
            for (int j = first; j <= last; j++) {
                for (uint32_t x = 0; x < frames[j].n_threads; x++) {
                    const vor_reader_thread_scopes *ts = &frames[j].threads[x];
                    if (ts->thread_id != ids[i]) continue;
                    last_listed = j;
                    for (uint32_t s = 0; s < ts->n_scopes; s++) {
                        const vor_reader_scope *sc = &ts->scopes[s];
                        int clipped = sc->start_ns < run_start;
                        expect((uint64_t)ids[i] + 1, clipped ? run_start : sc->start_ns, sc->start_ns + sc->duration_ns,
                               sc->site_id, (clipped ? 1u : 0u) | (sc->flags & VOR_SCOPE_UNWOUND ? 4u : 0u));
                    }
                }
            }
            if (last_listed < 0) continue;
            for (uint32_t x = 0; x < frames[last_listed].n_threads; x++) {
                const vor_reader_thread_scopes *ts = &frames[last_listed].threads[x];
                if (ts->thread_id != ids[i]) continue;
                for (uint32_t o = 0; o < ts->n_open; o++) {
                    const vor_reader_scope *sc = &ts->scopes[ts->n_scopes + o];
                    int clipped = sc->start_ns < run_start;
                    expect((uint64_t)ids[i] + 1, clipped ? run_start : sc->start_ns, frames[last_listed].end,
                           sc->site_id, 2u | (clipped ? 1u : 0u));
                }
            }
        }
        k = last + 1;
    }
}

static void a_simulated_program_gives_exactly_the_events_of_the_rule(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        sim_frame *frames = simulate(seed);
        writer w = open_writer("sim.json", seed % 3 != 0);
        for (int k = 0; k < SIM_FRAMES; k++) {
            vor_reader_frame f;
            memset(&f, 0, sizeof f);
            f.index = (uint64_t)k;
            f.start_ns = frames[k].start;
            f.duration_ns = frames[k].end - frames[k].start;
            f.has_flame = frames[k].recorded;
            f.n_threads = frames[k].recorded ? frames[k].n_threads : 0;
            f.threads = frames[k].threads;
            unsigned flags = (frames[k].recorded ? VOR_CHROME_FRAME_SCOPES : 0u) |
                             (frames[k].ends_run ? VOR_CHROME_FRAME_ENDS_RUN : 0u);
            assert_int_equal(vor_chrome_frames_write(w.frames, &f, flags), 0);
        }
        vor_chrome_frames_stats s = close_writer(&w);
        assert_int_equal(s.adjusted, 0);
        assert_int_equal(s.scopes_lost, 0);

        trace_dump d;
        assert_int_equal(check_trace("strict", w.path, &d), 0); /* zero partial overlaps */
        char frames_prefix[64];
        snprintf(frames_prefix, sizeof frames_prefix, "X %u %llu ", PID, FRAMES_TID);
        assert_int_equal(dump_count(&d, frames_prefix), SIM_FRAMES);
        char **got = calloc(d.n, sizeof *got);
        size_t n_got = 0;
        for (size_t i = 0; i < d.n; i++)
            if (strncmp(d.lines[i], "X ", 2) == 0 && strncmp(d.lines[i], frames_prefix, strlen(frames_prefix)) != 0)
                got[n_got++] = d.lines[i];
        expected_events(frames);
        assert_int_equal(n_got, n_expected);
        assert_int_equal(s.scopes, n_expected);
        qsort(got, n_got, sizeof *got, compare_strings);
        qsort(expected_lines, n_expected, sizeof *expected_lines, compare_strings);
        for (size_t i = 0; i < n_got; i++) {
            if (strcmp(got[i], expected_lines[i]) != 0)
                fail_msg("seed %llu, event %zu:\n got      %s\n expected %s", (unsigned long long)seed, i, got[i],
                         expected_lines[i]);
        }
        for (size_t i = 0; i < n_expected; i++) free(expected_lines[i]);
        free(got);
        trace_dump_free(&d);
        free(frames);
    }
    free(expected_lines);
    expected_lines = NULL;
    expected_capacity = 0;
}

/* ---- Any input: zero partial overlaps --------------------------------------------------------- */

static void inconsistent_times_still_nest_exactly(void **state) {
    (void)state;
    for (uint64_t seed = 100; seed < 106; seed++) {
        rng_state = seed;
        writer w = open_writer("garbage.json", seed % 2);
        static vor_reader_scope scopes[4][40];
        vor_reader_thread_scopes th[4];
        int64_t t = 0;
        uint64_t index = 0;
        for (int k = 0; k < 600; k++) {
            vor_reader_frame f;
            memset(&f, 0, sizeof f);
            index += rnd(8) == 0 ? 2 : 1;
            f.index = index;
            f.start_ns = t - 300 + (int64_t)rnd(600); /* overlapping, gaps */
            f.duration_ns = rnd(5) == 0 ? -(int64_t)rnd(100) : (int64_t)rnd(3000);
            t = f.start_ns + f.duration_ns;
            f.n_threads = 1 + rnd(4);
            for (uint32_t i = 0; i < f.n_threads; i++) {
                uint32_t n = rnd(30), m = rnd(6);
                for (uint32_t s = 0; s < n + m; s++) {
                    scopes[i][s] =
                        scope(1 + rnd(6), rnd(5), f.start_ns - 2000 + (int64_t)rnd(6000), (int64_t)rnd(2500) - 100);
                    scopes[i][s].flags = s >= n ? VOR_SCOPE_OPEN : (rnd(9) == 0 ? VOR_SCOPE_UNWOUND : 0);
                }
                uint32_t ids[4] = {0, 1, 0xFFFFFFFFu, 2147483646u};
                th[i] = (vor_reader_thread_scopes){ids[rnd(4)], n, scopes[i], m};
            }
            f.threads = th;
            f.has_flame = 1;
            unsigned flags = (rnd(6) ? VOR_CHROME_FRAME_SCOPES : 0u) | (rnd(5) == 0 ? VOR_CHROME_FRAME_ENDS_RUN : 0u);
            vor_chrome_frames_write(w.frames, &f, flags);
        }
        vor_chrome_frames_stats s = close_writer(&w);
        assert_true(s.adjusted > 0);
        trace_dump d;
        if (check_trace("strict", w.path, &d) != 0) fail_msg("seed %llu: partial overlaps", (unsigned long long)seed);
        trace_dump_free(&d);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scopes_open_across_frames_are_written_once_exactly),
        cmocka_unit_test(a_run_ends_at_a_gap_and_open_scopes_are_clipped_to_it),
        cmocka_unit_test(a_frame_that_ends_its_run_writes_open_scopes_first),
        cmocka_unit_test(a_thread_that_exits_with_open_scopes_has_them_clipped_where_last_seen),
        cmocka_unit_test(frames_carry_drops_by_cause_and_counts_above_2_63),
        cmocka_unit_test(thread_ids_at_the_limits_get_rows_of_their_own),
        cmocka_unit_test(a_site_declared_late_gets_its_name_from_then_on),
        cmocka_unit_test(a_simulated_program_gives_exactly_the_events_of_the_rule),
        cmocka_unit_test(inconsistent_times_still_nest_exactly),
    };
    return cmocka_run_group_tests_name("chrome_frames", tests, NULL, remove_test_dir_teardown);
}
