/* test_clock.c: the tick-to-ns timeline, with a fake counter that ticks at its own rate as
 * rdtsc does, so every nanosecond is known: the rate comes from a long baseline and never
 * from one short frame, an anchor read late moves nothing, the map follows a drifting rate
 * without running backwards, frames stay contiguous, and one map serves every frame (a
 * scope lies within the frames it began and ended in, and scopes nest across frames). */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

/* ---- The fake counter ---- */

static uint64_t counter_ns;
static double counter_ticks;   /* fractional, so the rate is exact over any span */
static double ticks_per_ns = 3.0;
static uint64_t late_ns;       /* the next OS clock read comes this late (a preemption) */

static uint64_t counter_now_ticks(void *u) {
    (void)u;
    return (uint64_t)counter_ticks;
}
static void counter_advance(uint64_t ns) {
    counter_ns += ns;
    counter_ticks += (double)ns * ticks_per_ns;
}
static uint64_t counter_now_ns(void *u) {
    (void)u;
    if (late_ns) { /* preempted between the anchor's counter read and this one */
        uint64_t l = late_ns;
        late_ns = 0;
        counter_advance(l);
    }
    return counter_ns;
}

static void start_counter_session(double nominal_ns_per_tick) {
    counter_ns = 5000000;
    counter_ticks = 123456789.0;
    late_ns = 0;
    vor_testing_set_clock_with_ticks(counter_now_ns, counter_now_ticks, NULL, nominal_ns_per_tick);
    vor_desc d = {0};
    d.max_frame_scopes = 1u << 16;
    setup_with_capture(d);
    vor_enable();
    recording_attach(1u << 12);
}

/* ---- What the test program knows about each scope ---- */

typedef struct truth {
    uint64_t begin_ns, end_ns;     /* counter ns at begin and end */
    uint64_t begin_frame, end_frame;
} truth;

#define MAX_TRUTH 8192
static truth truths[MAX_TRUTH];
static uint32_t n_truth;
static uint64_t frame_now; /* index of the frame being recorded */

static vor_site site_outer = {"outer", NULL, NULL, 0, 0};
static vor_site site_inner = {"inner", NULL, NULL, 0, 0};

static uint32_t open_truth[16];
static uint32_t open_depth;
static uint32_t end_order[MAX_TRUTH]; /* truths in the order their scopes ended */
static uint32_t n_ended;

static void begin(vor_site *s) {
    assert_int_equal(vor_scope_begin(s), 1);
    truth *t = &truths[n_truth];
    t->begin_ns = counter_ns;
    t->begin_frame = frame_now;
    open_truth[open_depth++] = n_truth++;
}

static void end(void) {
    uint32_t i = open_truth[--open_depth];
    truth *t = &truths[i];
    end_order[n_ended++] = i;
    t->end_ns = counter_ns;
    t->end_frame = frame_now;
    vor_scope_end();
}

static void mark(uint64_t late) {
    late_ns = late;
    vor_frame_mark();
    frame_now++;
}

/* Scopes in the records, in end order, match the truths in end order (one thread, nothing
 * dropped): checks each against its truth and the frames it began and ended in. */
static void check_against_truths(double rel_tolerance, int64_t abs_tolerance_ns) {
    const uint32_t *order = end_order;
    uint32_t n = n_ended;
    uint32_t k = 0;
    for (uint32_t f = 0; f < rec.n_frames; f++) {
        recorded_frame *fr = &rec.frames[f];
        assert_int_equal(fr->dropped, 0);
        if (f + 1 < rec.n_frames) assert_int_equal(fr->start_ns + fr->duration_ns, rec.frames[f + 1].start_ns);
        for (uint32_t i = 0; i < fr->kept; i++, k++) {
            assert_true(k < n);
            truth *t = &truths[order[k]];
            recorded_scope *s = &fr->scopes[i];
            assert_int_equal(t->end_frame, fr->index);
            recorded_frame *began = &rec.frames[t->begin_frame];
            int64_t end = s->start_ns + s->duration_ns;
            /* Within [start of the frame it began in, end of the frame it ended in]. */
            assert_true(s->start_ns >= began->start_ns && s->start_ns <= began->start_ns + began->duration_ns);
            assert_true(end >= fr->start_ns && end <= fr->start_ns + fr->duration_ns);
            double truth_ns = (double)(t->end_ns - t->begin_ns);
            double err = fabs((double)s->duration_ns - truth_ns);
            if (err > truth_ns * rel_tolerance + (double)abs_tolerance_ns)
                fail_msg("scope %u: %lld ns recorded, %.0f ns true", k, (long long)s->duration_ns, truth_ns);
        }
    }
    assert_int_equal(k, n_ended);
}

/* Per thread, scopes either nest or are disjoint, across frames too. */
static void check_no_partial_overlap(void) {
    uint64_t overlaps = recorded_partial_overlaps();
    if (overlaps) fail_msg("%llu partial overlaps", (unsigned long long)overlaps);
}

static void reset_truths(void) {
    n_truth = 0;
    n_ended = 0;
    frame_now = 0;
    open_depth = 0;
}

/* Frames of 2 us: a rate taken from one frame's two anchors (or, as before, a 1.0 fallback
 * for frames under 10,000 ticks) made such scopes up to 3x too long. */
static void short_frames_keep_exact_durations_with_late_anchors(void **state) {
    (void)state;
    reset_truths();
    start_counter_session(1.0 / 3.0);
    for (int f = 0; f < 400; f++) {
        counter_advance(200);
        begin(&site_outer);
        counter_advance(400);
        begin(&site_inner);
        counter_advance(700);
        end();
        counter_advance(400);
        end();
        counter_advance(300);
        mark(f % 2 ? 300 : 0); /* every other anchor is read 300 ns late */
    }
    check_against_truths(0.0, 2);
    check_no_partial_overlap();
}

/* The counter's rate moves by 500 ppm (as CLOCK_MONOTONIC under NTP slewing) and the
 * start-up rate is 50 ppm off: frames stay contiguous, the map monotone, scopes inside
 * their frames and nested across frame boundaries, durations within 0.2%. */
static void drifting_rate_keeps_one_monotone_map(void **state) {
    (void)state;
    reset_truths();
    start_counter_session(1.0 / 3.0 * (1.0 + 50e-6));
    for (int f = 0; f < 3000; f++) {
        if (f % 500 == 0) { /* open across 500 frames */
            if (f) end();
            begin(&site_outer);
        }
        if (f == 1000) ticks_per_ns = 3.0 * (1.0 + 500e-6);
        if (f == 2000) ticks_per_ns = 3.0 * (1.0 - 500e-6);
        counter_advance(100 + (uint64_t)(f % 7) * 300);
        if (f % 3 == 0) {
            begin(&site_inner); /* straddles the frame boundary */
            counter_advance(500);
            mark(f % 5 == 0 ? 400 : 0);
            counter_advance(700);
            end();
        } else {
            begin(&site_inner);
            counter_advance(900 + (uint64_t)(f % 11) * 50);
            end();
            counter_advance(50);
            mark(f % 5 == 0 ? 400 : 0);
        }
    }
    counter_advance(1000);
    end();
    mark(0);
    ticks_per_ns = 3.0;
    check_against_truths(0.002, 2);
    check_no_partial_overlap();
}

/* A start-up rate 2% off is corrected once the baseline is long: after a second of 16 ms
 * frames, durations are exact to 0.15% and frame ends within 1 us of the OS clock. */
static void rate_is_refined_over_a_long_baseline(void **state) {
    (void)state;
    reset_truths();
    start_counter_session(1.0 / 3.0 * 1.02);
    for (int f = 0; f < 150; f++) {
        counter_advance(1000000);
        begin(&site_outer);
        counter_advance(14000000);
        end();
        counter_advance(1000000);
        mark(0);
    }
    /* The last 50 frames (from 1.6 s on). */
    for (uint32_t f = 100; f < rec.n_frames; f++) {
        recorded_frame *fr = &rec.frames[f];
        assert_int_equal(fr->kept, 1);
        double err = fabs((double)fr->scopes[0].duration_ns - 14000000.0);
        if (err > 14000000.0 * 0.0015) fail_msg("frame %u: %lld ns for 14 ms", f, (long long)fr->scopes[0].duration_ns);
        int64_t os_end = (int64_t)(5000000 + 16000000ull * (f + 1)) - 5000000; /* since the epoch */
        int64_t end = fr->start_ns + fr->duration_ns;
        if (llabs(end - os_end) > 1000) fail_msg("frame %u ends %lld ns from the OS clock", f, (long long)(end - os_end));
    }
}

static void clock_info_names_the_source(void **state) {
    (void)state;
    vor_clock_info info;
    vor_clock_get_info(&info);
    assert_non_null(info.source);
    assert_true(strcmp(info.source, "tsc") == 0 || strcmp(info.source, "monotonic") == 0 ||
                strcmp(info.source, "cntvct") == 0);
    assert_true(info.resolution_ns >= 1 && info.resolution_ns <= 1000);
    assert_int_equal(info.cross_origin_isolated, -1);
    fake_clock_install(1000);
    vor_clock_get_info(&info);
    assert_string_equal(info.source, "fake");
    fake_clock_remove();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clock_info_names_the_source),
        cmocka_unit_test_teardown(short_frames_keep_exact_durations_with_late_anchors, teardown),
        cmocka_unit_test_teardown(drifting_rate_keeps_one_monotone_map, teardown),
        cmocka_unit_test_teardown(rate_is_refined_over_a_long_baseline, teardown),
    };
    return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
