/* clock.c: chooses the tick source, reads the OS monotonic clock, takes anchors, keeps
 * the counter's rate (a long baseline) and the session's timeline of tick-to-ns points,
 * and measures what the outputs report about the clock (see clock.h for why ticks are
 * converted off the hot path and how the timeline stays one monotone map).
 *
 * The time-stamp counter is used only when it is invariant (constant rate, not stopped
 * in sleep states): the CPU says so through CPUID, or the Linux kernel itself chose it as
 * its clocksource (virtual machines often hide the CPUID bit while the kernel has verified
 * the counter). Otherwise ticks are CLOCK_MONOTONIC nanoseconds and the maps are identity.
 */
#include "clock.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vor_internal.h"
#include "vor_testing.h"

#if defined(VOR_PLATFORM_WASM)
#include <emscripten.h>
#include <emscripten/threading.h>
#endif

#if defined(VOR_ARCH_X86) && !defined(VOR_PLATFORM_WASM)
#include <cpuid.h>
#endif

int vor_clock_source_now = VOR_CLOCK_SOURCE_MONOTONIC;

static uint64_t (*fake_clock_fn)(void *);
static void *fake_clock_user;
static uint64_t (*fake_ticks_fn)(void *); /* tests: a counter with its own rate, like rdtsc */

/* Whether ticks are a counter that anchors must map (rather than nanoseconds already). */
static int ticks_are_counter(void) {
    int source = vor_atomic_load_relaxed(&vor_clock_source_now);
    return source == VOR_CLOCK_SOURCE_TSC || (source == VOR_CLOCK_SOURCE_FAKE && fake_ticks_fn != NULL);
}

int vor_clock_ticks_are_ns(void) {
    return !ticks_are_counter();
}
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

uint64_t vor_clock_ns(void) {
    if (VOR_UNLIKELY(vor_clock_source_now == VOR_CLOCK_SOURCE_FAKE)) return fake_clock_fn(fake_clock_user);
#if defined(VOR_PLATFORM_WASM)
    /* performance.now() in ms as a double; microsecond-ish resolution in browsers. */
    return (uint64_t)(vor_wasm_now_ms() * 1e6);
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

#if defined(VOR_PLATFORM_WASM) && defined(__EMSCRIPTEN_PTHREADS__)
/* Only pthreads builds have workers to align; others add nothing at start-up. */

/* performance.timeOrigin: ms since 1970 at which this realm's performance.now() is 0,
 * on the same monotonic clock for every realm of the page; 0 where there is none. */
EM_JS(double, vor_js_time_origin_ms, (void), {
    return (typeof performance === 'object' && performance && typeof performance.timeOrigin === 'number') ?
        performance.timeOrigin : 0;
});

/* Written once, by the main thread, before any thread exists (constructors run on the
 * main thread only); read by workers. */
static double main_time_origin_ms;

__attribute__((constructor)) static void remember_main_time_origin(void) {
    main_time_origin_ms = vor_js_time_origin_ms();
}

/* A browser worker's emscripten_get_now() is performance.now() - drift, with drift set
 * by Emscripten from a postMessage. The main thread's timeline is performance.now() +
 * (this origin - the main origin), so the correction is that difference plus drift. */
EM_JS(double, vor_js_worker_clock_correction_ms, (double main_origin), {
    if (typeof ENVIRONMENT_IS_NODE !== 'undefined' && ENVIRONMENT_IS_NODE) return 0;
    if (!(main_origin > 0) || typeof performance !== 'object' || typeof performance.timeOrigin !== 'number') return 0;
    return performance.timeOrigin - main_origin + (Module['__performance_now_clock_drift'] || 0);
});

EM_JS(int, vor_js_is_node, (void), {
    return (typeof ENVIRONMENT_IS_NODE !== 'undefined' && ENVIRONMENT_IS_NODE) ? 1 : 0;
});

_Thread_local int vor_wasm_offset_known;
_Thread_local double vor_wasm_offset_ms;

double vor_wasm_thread_offset_slow(void) {
    double offset = emscripten_is_main_runtime_thread() ? 0 : vor_js_worker_clock_correction_ms(main_time_origin_ms);
    vor_wasm_offset_ms = offset;
    vor_wasm_offset_known = 1;
    return offset;
}

/* Constant for a thread: worked out at its first call (the frame thread's, once). */
static _Thread_local int realm_offset_known;
static _Thread_local double realm_offset_ms;

double vor_wasm_realm_offset_ms(void) {
    if (!realm_offset_known) {
        double here = 0;
        if (!emscripten_is_main_runtime_thread() && main_time_origin_ms > 0 && !vor_js_is_node())
            here = vor_js_time_origin_ms();
        realm_offset_ms = here > 0 ? here - main_time_origin_ms : 0;
        realm_offset_known = 1;
    }
    return realm_offset_ms;
}
#elif defined(VOR_PLATFORM_WASM)
double vor_wasm_realm_offset_ms(void) {
    return 0;
}
#endif


uint64_t vor_clock_ticks_slow(void) {
    if (VOR_UNLIKELY(fake_ticks_fn != NULL) && vor_clock_source_now == VOR_CLOCK_SOURCE_FAKE)
        return fake_ticks_fn(fake_clock_user);
    return vor_clock_ns();
}

/* ---- The counter's rate ------------------------------------------------------------------ */

#define ANCHOR_TRIES 6                /* reads of an anchor at most, keeping the tightest */
#define START_BASELINE_NS 1000000u    /* the first rate spans at least 1 ms */
#define SLEW 0.001                    /* the offset is re-aimed at 0.1% of the rate at most */
#define STEP_NS 1000000               /* ... unless the OS clock is 1 ms ahead: then it catches up */

/* Written once by the start-up measurement (under clock_once) and then only under the
 * frame lock (vor_timeline_close); read under it or after vor_clock_init. */
static struct {
    double ns_per_tick;     /* the rate of the longest baseline so far; 0 = unknown */
    vor_clock_anchor ref;   /* where the baseline starts */
    uint64_t baseline_ns;   /* its length when the rate was last set */
    uint64_t tight_bracket; /* anchors whose bracket is within this are trusted */
} model;

#if !defined(VOR_PLATFORM_WASM) && (defined(VOR_ARCH_X86) || defined(VOR_ARCH_ARM64))
#define HAS_COUNTER 1
/* The counter itself, whatever the chosen source (used before the choice is made). */
static inline uint64_t raw_counter(void) {
#if defined(VOR_ARCH_X86)
    return __rdtsc();
#else
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#endif
}

static uint64_t raw_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The tightest of a few raw pairs. */
static vor_clock_anchor raw_anchor(int tries) {
    vor_clock_anchor best = {0, 0, UINT64_MAX};
    for (int i = 0; i < tries; i++) {
        uint64_t t0 = raw_counter();
        uint64_t ns = raw_monotonic_ns();
        uint64_t t1 = raw_counter();
        if (t1 - t0 < best.bracket) {
            best.tick = t0 + (t1 - t0) / 2;
            best.ns = ns;
            best.bracket = t1 - t0;
        }
    }
    return best;
}

/* An anchor when the library is loaded: the start of the first baseline, so that by the
 * first vor_enable() it usually spans the program's start-up and costs no wait. */
static vor_clock_anchor load_anchor;
__attribute__((constructor)) static void take_load_anchor(void) {
    load_anchor = raw_anchor(8);
}
#endif

/* One (tick, ns) pair through the chosen source. */
static vor_clock_anchor read_pair(void) {
    vor_clock_anchor a;
    uint64_t t0 = vor_clock_ticks();
    a.ns = vor_clock_ns();
    uint64_t t1 = vor_clock_ticks();
    a.tick = t0 + (t1 - t0) / 2;
    a.bracket = t1 - t0;
    return a;
}

int vor_clock_anchor_is_tight(const vor_clock_anchor *a) {
    return a->bracket <= model.tight_bracket;
}

vor_clock_anchor vor_clock_anchor_now(void) {
    vor_clock_anchor a;
    if (!ticks_are_counter()) {
        a.ns = vor_clock_ns();
        a.tick = a.ns;
        a.bracket = 0;
        return a;
    }
    /* A pair whose thread was preempted or interrupted between its reads has a wide
     * bracket: read again (a few times at most) and keep the tightest. */
    vor_clock_anchor best = read_pair();
    for (int i = 1; i < ANCHOR_TRIES && !vor_clock_anchor_is_tight(&best); i++) {
        vor_clock_anchor next = read_pair();
        if (next.bracket < best.bracket) best = next;
    }
    return best;
}

#if defined(HAS_COUNTER)
/* The start-up measurement of the counter: how tight a pair can be, and a first rate over
 * at least START_BASELINE_NS (since the library's load, or a wait for the rest). */
static void measure_counter(void) {
    uint64_t tightest = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        vor_clock_anchor a = read_pair();
        if (a.bracket < tightest) tightest = a.bracket;
    }
    model.tight_bracket = 3 * tightest;
    vor_clock_anchor first = load_anchor.ns ? load_anchor : vor_clock_anchor_now();
    vor_clock_anchor now = vor_clock_anchor_now();
    if (now.ns < first.ns + START_BASELINE_NS || now.tick <= first.tick) {
        uint64_t left = first.ns + START_BASELINE_NS > now.ns ? first.ns + START_BASELINE_NS - now.ns : 0;
        struct timespec ts = {0, (long)(left + 1000)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        now = vor_clock_anchor_now();
    }
    model.ns_per_tick = now.tick > first.tick ? (double)(now.ns - first.ns) / (double)(now.tick - first.tick) : 1.0;
    model.ref = first;
    model.baseline_ns = now.ns - first.ns;
}
#endif

/* A frame's anchor: a tight one that doubles the baseline sets the rate from the baseline's
 * start to it. Frame lock held. */
static void observe_anchor(const vor_clock_anchor *a) {
    if (!vor_clock_anchor_is_tight(a) || a->ns <= model.ref.ns || a->tick <= model.ref.tick) return;
    uint64_t span = a->ns - model.ref.ns;
    if (span < 2 * model.baseline_ns || span < START_BASELINE_NS) return;
    model.ns_per_tick = (double)span / (double)(a->tick - model.ref.tick);
    model.baseline_ns = span;
}

double vor_clock_ns_per_tick(void) {
    return ticks_are_counter() && model.ns_per_tick > 0 ? model.ns_per_tick : 1.0;
}

uint64_t vor_clock_ticks_for_ns(uint64_t ns) {
    if (!ticks_are_counter()) return ns;
    return (uint64_t)ceil((double)ns / vor_clock_ns_per_tick());
}

/* ---- Source choice ------------------------------------------------------------------------ */

#if defined(VOR_ARCH_X86) && !defined(VOR_PLATFORM_WASM)
static int tsc_is_invariant(void) {
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8))) return 1;
#if defined(VOR_PLATFORM_LINUX)
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        char name[32] = {0};
        int ok = fgets(name, sizeof name, f) != NULL && strncmp(name, "tsc", 3) == 0;
        fclose(f);
        if (ok) return 1;
    }
#endif
    return 0;
}
#endif

static void choose_source(void) {
    if (vor_clock_source_now == VOR_CLOCK_SOURCE_FAKE) return;
#if defined(VOR_ARCH_X86) && !defined(VOR_PLATFORM_WASM)
    if (tsc_is_invariant()) {
        vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_TSC);
        if (model.ns_per_tick == 0) measure_counter();
        return;
    }
    vor_log(VOR_LOG_CLOCK_FALLBACK, "rdtsc is not invariant on this CPU");
#elif defined(VOR_ARCH_ARM64) && !defined(VOR_PLATFORM_WASM)
    vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_TSC);
    if (model.ns_per_tick == 0) measure_counter();
    return;
#endif
    vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_MONOTONIC);
}

void vor_clock_init(void) {
    pthread_once(&clock_once, choose_source);
}

/* ---- The timeline ------------------------------------------------------------------------- */

/* The map is a chain of straight lines ("knots": where a line starts, and its slope). A new
 * knot starts where the previous line is at that tick, so the map never jumps, and it is
 * evaluated by one formula (on_knot) wherever a tick is mapped, so a tick always gets the
 * same ns. Knots are added at frame boundaries only, and only when the line changes: the
 * rate was refined, or the offset is re-aimed (at most once per KNOT_MIN_NS), so the history
 * kept spans seconds whatever the frame rate. Frame lock held for everything below. */
#define TIMELINE_KNOTS 4096u
#define KNOT_MIN_NS 1000000.0 /* re-aim the line at most once per ms */

typedef struct knot {
    uint64_t tick;
    int64_t ns;
    double slope; /* ns per tick from here on */
    double rate;  /* the counter's rate when it was made */
} knot;

static knot knots[TIMELINE_KNOTS];
static uint32_t knot_count; /* kept, at most TIMELINE_KNOTS */
static uint32_t knot_next;  /* where the next one goes */
static vor_timeline_point boundary; /* the last frame boundary */

static knot *knot_at(uint32_t i) { /* oldest first */
    return &knots[(knot_next + TIMELINE_KNOTS - knot_count + i) % TIMELINE_KNOTS];
}

static void add_knot(uint64_t tick, int64_t ns, double slope, double rate) {
    knot *k = &knots[knot_next];
    k->tick = tick;
    k->ns = ns;
    k->slope = slope;
    k->rate = rate;
    knot_next = (knot_next + 1) % TIMELINE_KNOTS;
    if (knot_count < TIMELINE_KNOTS) knot_count++;
}

static int64_t on_knot(const knot *k, uint64_t tick) {
    return k->ns + (int64_t)((double)(int64_t)(tick - k->tick) * k->slope);
}

/* The knot whose line holds `tick` (the oldest kept one for older ticks). */
static const knot *knot_for(uint64_t tick) {
    uint32_t lo = 0, hi = knot_count; /* the last knot at or before tick is in [lo, hi) */
    if ((int64_t)(tick - knot_at(0)->tick) < 0) return knot_at(0);
    while (lo + 1 < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((int64_t)(tick - knot_at(mid)->tick) >= 0)
            lo = mid;
        else
            hi = mid;
    }
    return knot_at(lo);
}

void vor_timeline_reset(vor_clock_anchor epoch) {
    knot_count = knot_next = 0;
    double rate = vor_clock_ns_per_tick();
    add_knot(epoch.tick, (int64_t)epoch.ns, rate, rate);
    boundary.tick = epoch.tick;
    boundary.ns = (int64_t)epoch.ns;
}

vor_timeline_point vor_timeline_last(void) {
    return boundary;
}

vor_timeline_point vor_timeline_close(vor_clock_anchor a) {
    if (!ticks_are_counter()) {
        boundary.ns = (int64_t)a.ns > boundary.ns ? (int64_t)a.ns : boundary.ns;
        boundary.tick = (uint64_t)boundary.ns;
        return boundary;
    }
    observe_anchor(&a);
    double rate = vor_clock_ns_per_tick();
    knot *k = knot_at(knot_count - 1);
    uint64_t T = (int64_t)(a.tick - boundary.tick) > 0 ? a.tick : boundary.tick;
    int64_t line = on_knot(k, T);
    int tight = vor_clock_anchor_is_tight(&a);
    int64_t error = tight ? (int64_t)a.ns - line : 0;
    if (error > STEP_NS && T > boundary.tick) {
        /* The OS clock ran far ahead (a suspended VM): the frame now ending catches up. A
         * knot at its start on the same line moves nothing mapped before. */
        if (boundary.tick != k->tick) add_knot(boundary.tick, boundary.ns, k->slope, k->rate);
        k = knot_at(knot_count - 1);
        k->slope = (double)((int64_t)a.ns - k->ns) / (double)(T - k->tick);
        line = on_knot(k, T);
        add_knot(T, line, rate, rate);
    } else if ((tight && (double)(T - k->tick) * rate >= KNOT_MIN_NS) || rate != k->rate) {
        /* Re-aim: the next line runs at the rate, plus at most SLEW to take the offset error
         * back over about as long as the last line lasted. */
        double span = (double)(T - k->tick) * rate;
        double s = (double)error / (span > KNOT_MIN_NS ? span : KNOT_MIN_NS);
        s = s > SLEW ? SLEW : (s < -SLEW ? -SLEW : s);
        add_knot(T, line, rate * (1.0 + s), rate);
    }
    boundary.tick = T;
    boundary.ns = line;
    return boundary;
}

vor_clock_map vor_timeline_segment(uint64_t tick) {
    vor_clock_map m;
    if (!ticks_are_counter()) {
        m.base_tick = 0;
        m.base_ns = 0;
        m.ns_per_tick = 1.0;
        m.identity = 1;
        return m;
    }
    const knot *k = knot_for(tick);
    m.base_tick = k->tick;
    m.base_ns = k->ns;
    m.ns_per_tick = k->slope;
    m.identity = 0;
    return m;
}

int64_t vor_timeline_map(uint64_t tick) {
    if (!ticks_are_counter()) return (int64_t)tick;
    return on_knot(knot_for(tick), tick);
}

/* ---- What outputs say about the clock ---------------------------------------------------- */

static vor_clock_info info;
static pthread_once_t info_once = PTHREAD_ONCE_INIT;

#if defined(VOR_PLATFORM_WASM)
EM_JS(int, vor_js_cross_origin_isolated, (void), {
    if (typeof ENVIRONMENT_IS_NODE !== 'undefined' && ENVIRONMENT_IS_NODE) return -1;
    if (typeof crossOriginIsolated === 'boolean') return crossOriginIsolated ? 1 : 0;
    return -1;
});

/* Emscripten's clock under node is process.hrtime (library.js, emscripten_get_now). */
EM_JS(int, vor_js_clock_is_hrtime, (void), {
    return (typeof ENVIRONMENT_IS_NODE !== 'undefined' && ENVIRONMENT_IS_NODE) ? 1 : 0;
});

/* The smallest step between distinct readings of the clock over a few steps (at most
 * 2 ms of spinning): 5 us or 100 us in browsers (coarsened), the call's own cost under
 * node. */
static uint64_t measured_step_ns(void) {
    double start = emscripten_get_now(), prev = start, best = 0;
    int steps = 0;
    while (steps < 4) {
        double t = emscripten_get_now();
        if (t != prev) {
            if (best == 0 || t - prev < best) best = t - prev;
            prev = t;
            steps++;
        }
        if (t - start > 2.0) break;
    }
    if (best == 0) best = emscripten_get_now() - start;
    uint64_t ns = (uint64_t)(best * 1e6 + 0.5);
    return ns ? ns : 1;
}
#endif

/* The real source's facts, measured once per process (they do not change while it runs). */
static void measure_info(void) {
    vor_clock_init();
    int source = vor_atomic_load_relaxed(&vor_clock_source_now);
    info.cross_origin_isolated = -1;
#if defined(VOR_PLATFORM_WASM)
    (void)source; /* always performance.now() (process.hrtime under node) */
    info.cross_origin_isolated = vor_js_cross_origin_isolated();
    info.source = vor_js_clock_is_hrtime() ? "process.hrtime" : "performance.now";
    info.resolution_ns = measured_step_ns();
#else
    if (source == VOR_CLOCK_SOURCE_TSC) {
#if defined(VOR_ARCH_X86)
        info.source = "tsc";
#else
        info.source = "cntvct";
#endif
        /* One tick is the counter's step (well under a ns on x86). */
        double step = ceil(vor_clock_ns_per_tick());
        info.resolution_ns = step >= 1 ? (uint64_t)step : 1;
    } else {
        struct timespec res;
        info.source = "monotonic";
        info.resolution_ns =
            clock_getres(CLOCK_MONOTONIC, &res) == 0 ? (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec : 1;
        if (info.resolution_ns == 0) info.resolution_ns = 1;
    }
#endif
}

void vor_clock_get_info(vor_clock_info *out) {
    if (out == NULL) return;
    if (vor_atomic_load_relaxed(&vor_clock_source_now) == VOR_CLOCK_SOURCE_FAKE) {
        out->source = "fake";
        out->resolution_ns = 1;
        out->cross_origin_isolated = -1;
        return;
    }
    pthread_once(&info_once, measure_info);
    *out = info;
}

/* ---- Tests -------------------------------------------------------------------------------- */

/* The real counter's model while a fake counter replaces it. */
static __typeof__(model) real_model;
static int real_model_saved;

void vor_testing_set_clock_with_ticks(uint64_t (*now_ns)(void *user), uint64_t (*ticks)(void *user), void *user,
                                      double ns_per_tick) {
    vor_testing_set_clock(now_ns, user);
    fake_ticks_fn = now_ns ? ticks : NULL;
    if (now_ns && ticks) {
        if (!real_model_saved) real_model = model;
        real_model_saved = 1;
        /* What the start-up measurement would have found. */
        model.ns_per_tick = ns_per_tick > 0 ? ns_per_tick : 1.0;
        model.tight_bracket = 0;
        model.ref = read_pair();
        model.baseline_ns = START_BASELINE_NS;
    }
}

void vor_testing_set_clock(uint64_t (*now_ns)(void *user), void *user) {
    vor_clock_init();
    fake_ticks_fn = NULL;
    if (now_ns) {
        fake_clock_fn = now_ns;
        fake_clock_user = user;
        vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_FAKE);
    } else {
        fake_clock_fn = NULL;
        if (real_model_saved) model = real_model;
        real_model_saved = 0;
        vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_MONOTONIC);
        /* Re-run the choice for the real clock (the counter keeps its measured rate). */
        choose_source();
    }
}

uint64_t vor_now_ns(void) {
    return vor_clock_ns();
}
