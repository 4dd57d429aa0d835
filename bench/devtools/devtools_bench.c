/* devtools_bench.c: the wasm side of the DevTools sink benchmark (devtools.bench.mjs drives it
 * in headless Chromium, with and without a DevTools trace recording).
 *
 * Every run is `frames` frames of `groups` x 4 empty scopes (an outer scope holding three inner
 * ones, as nested code has), each frame closed by vor_frame_mark() (or, for the baseline, by
 * clearing its User Timing entries). The runner takes each configuration once with groups > 0 and
 * once with groups = 0: the difference divided by the scopes is the whole cost of one scope
 * (clock reads, the wasm side, and the JS flush at the frame mark), without the per-frame costs
 * (the frame entry and mark, the frame assembly). Times are read with emscripten_get_now(), i.e.
 * performance.now(), 5 us resolution in this cross-origin isolated page: runs last tens of ms.
 *
 * The wasm side alone (target <= 20 ns per scope) is measured with vor's test clock hook
 * (vor_testing_set_clock): a counter in place of performance.now(), so what remains is the
 * scope's bookkeeping and the frame assembly, plus two calls of a trivial function.
 *
 * The naive baseline is what one would write without vor's sink: at every scope end, an EM_JS
 * call that decodes the name and the location from linear memory and calls performance.measure
 * with the same devtools detail (track, group, colour, location and frame properties, tooltip).
 */
#include <emscripten.h>

#include <vor/browser.h>
#include <vor/vor.h>

#include "clock.h"       /* core/src: vor_clock_ticks, the scope clock */
#include "vor_testing.h" /* core/src: the fake clock hook */

static double mark_ms; /* time spent in vor_frame_mark (the sink's flush) during the last run */

EM_JS(void, naive_measure, (const char *name, double start, double end, const char *file, int line, int frame), {
    var n = UTF8ToString(name), location = UTF8ToString(file) + ':' + line;
    performance.measure(n, {
        start: start, end: end,
        detail: {devtools: {dataType: 'track-entry', track: 'main', trackGroup: 'vor', color: 'primary',
                            properties: [['location', location], ['frame', String(frame)]],
                            tooltipText: n + ' (' + location + ')'}}
    });
});

EM_JS(void, naive_clear, (void), {
    performance.clearMeasures('bench_outer');
    performance.clearMeasures('bench_inner');
});

EMSCRIPTEN_KEEPALIVE void bench_start(void) {
    vor_set_thread_name("main");
    vor_enable();
}

/* The measured workload: `frames` frames of `groups` x (one scope holding three). With
 * time_marks, returns the time spent in vor_frame_mark in ms (two more clock reads per
 * frame); else 0. */
static double run_frames(int frames, int groups, int time_marks) {
    double in_mark = 0;
    for (int f = 0; f < frames; f++) {
        for (int g = 0; g < groups; g++) {
            VOR_SCOPE("bench_outer");
            for (int i = 0; i < 3; i++) {
                VOR_SCOPE("bench_inner");
            }
        }
        if (!time_marks) {
            vor_frame_mark();
            continue;
        }
        double m0 = emscripten_get_now();
        vor_frame_mark();
        in_mark += emscripten_get_now() - m0;
    }
    return in_mark;
}

/* vor with the sink in `mode` (0 off, 1 user-timing, 2 fast) and a minimum duration. Returns the
 * run's time in ms; bench_mark_ms() then gives the part spent in vor_frame_mark. */
EMSCRIPTEN_KEEPALIVE double bench_vor(int mode, int frames, int groups, double min_ns) {
    vor_browser_set_mode((vor_browser_mode)mode);
    vor_browser_set_min_duration_ns(min_ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)min_ns);
    vor_browser_set_entry_budget(0); /* every scope emitted: the cost per scope, whatever --groups */
    vor_frame_mark(); /* settings in force from here */
    double t0 = emscripten_get_now();
    mark_ms = run_frames(frames, groups, 1);
    return emscripten_get_now() - t0;
}

EMSCRIPTEN_KEEPALIVE double bench_mark_ms(void) {
    return mark_ms;
}

/* The naive baseline (vor's sink off, so only the baseline's own calls cost). */
EMSCRIPTEN_KEEPALIVE double bench_naive(int frames, int groups) {
    static const char *file = __FILE__;
    vor_browser_set_mode(VOR_BROWSER_OFF);
    vor_disable();
    double t0 = emscripten_get_now();
    for (int f = 0; f < frames; f++) {
        for (int g = 0; g < groups; g++) {
            double o0 = emscripten_get_now();
            for (int i = 0; i < 3; i++) {
                double i0 = emscripten_get_now();
                double i1 = emscripten_get_now();
                naive_measure("bench_inner", i0, i1, file, __LINE__, f);
            }
            double o1 = emscripten_get_now();
            naive_measure("bench_outer", o0, o1, file, __LINE__, f);
        }
        naive_clear();
    }
    double t = emscripten_get_now() - t0;
    vor_enable();
    return t;
}

static uint64_t fake_ns;

static uint64_t fake_clock(void *user) {
    (void)user;
    return fake_ns += 100; /* 100 ns per read: every scope lasts a little */
}

/* Two reads of vor's scope clock per scope of bench_fake_clock, through the same path (the
 * test hook's counter): subtracted from it, what is left is the wasm side beyond the two
 * clock reads. Returns the run's time in ms. */
EMSCRIPTEN_KEEPALIVE double bench_fake_clock_reads(int frames, int groups) {
    vor_testing_set_clock(fake_clock, NULL);
    volatile uint64_t sink = 0;
    double t0 = emscripten_get_now();
    for (int f = 0; f < frames; f++)
        for (int g = 0; g < groups * 4; g++) {
            sink += vor_clock_ticks();
            sink += vor_clock_ticks();
        }
    double t = emscripten_get_now() - t0;
    vor_testing_set_clock(NULL, NULL);
    (void)sink;
    return t;
}

/* The same scopes as bench_vor with the sink off and a counter for a clock, in a session of
 * their own; returns the run's time in ms (read with emscripten_get_now, not vor's clock). */
EMSCRIPTEN_KEEPALIVE double bench_fake_clock(int frames, int groups) {
    vor_frame_mark(); /* empty the thread's ring: its real-clock events would be out of place */
    vor_shutdown();
    vor_testing_set_clock(fake_clock, NULL);
    vor_browser_set_mode(VOR_BROWSER_OFF);
    vor_enable();
    double t0 = emscripten_get_now();
    run_frames(frames, groups, 0);
    double t = emscripten_get_now() - t0;
    vor_shutdown();
    vor_testing_set_clock(NULL, NULL);
    vor_enable();
    return t;
}

/* `n` pairs of clock reads (what one scope reads); returns the run's time in ms. */
EMSCRIPTEN_KEEPALIVE double bench_clock_pairs(int n) {
    volatile double sink = 0;
    double t0 = emscripten_get_now();
    for (int i = 0; i < n; i++) {
        double a = emscripten_get_now();
        double b = emscripten_get_now();
        sink += b - a;
    }
    (void)sink;
    return emscripten_get_now() - t0;
}

int main(void) {
    return 0;
}
