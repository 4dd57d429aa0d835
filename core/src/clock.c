/* clock.c: chooses the tick source, reads the OS monotonic clock, takes anchors and
 * builds tick-to-ns maps (see clock.h for why ticks are converted off the hot path).
 *
 * The time-stamp counter is used only when it is invariant (constant rate, not stopped
 * in sleep states): the CPU says so through CPUID, or the Linux kernel itself chose it as
 * its clocksource (virtual machines often hide the CPUID bit while the kernel has verified
 * the counter). Otherwise ticks are CLOCK_MONOTONIC nanoseconds and the maps are identity.
 */
#include "clock.h"

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
        return;
    }
    vor_log(VOR_LOG_CLOCK_FALLBACK, "rdtsc is not invariant on this CPU");
#elif defined(VOR_ARCH_ARM64) && !defined(VOR_PLATFORM_WASM)
    vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_TSC);
    return;
#endif
    vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_MONOTONIC);
}

void vor_clock_init(void) {
    pthread_once(&clock_once, choose_source);
}

vor_clock_anchor vor_clock_anchor_now(void) {
    vor_clock_anchor a;
    if (!ticks_are_counter()) {
        a.ns = vor_clock_ns();
        a.tick = a.ns;
        return a;
    }
    /* Bracket the OS clock read with two counter reads and take the midpoint. */
    uint64_t t0 = vor_clock_ticks();
    a.ns = vor_clock_ns();
    uint64_t t1 = vor_clock_ticks();
    a.tick = t0 + (t1 - t0) / 2;
    return a;
}

vor_clock_map vor_clock_map_between(vor_clock_anchor from, vor_clock_anchor to, double fallback_ns_per_tick) {
    vor_clock_map m;
    m.base_tick = from.tick;
    m.base_ns = (int64_t)from.ns;
    if (!ticks_are_counter()) {
        m.ns_per_tick = 1.0;
    } else if (to.tick > from.tick + 10000 && to.ns > from.ns) {
        m.ns_per_tick = (double)(to.ns - from.ns) / (double)(to.tick - from.tick);
    } else {
        /* Too short an interval to measure the rate precisely: use the session's. */
        m.ns_per_tick = fallback_ns_per_tick > 0 ? fallback_ns_per_tick : 1.0;
    }
    return m;
}

void vor_testing_set_clock_with_ticks(uint64_t (*now_ns)(void *user), uint64_t (*ticks)(void *user), void *user) {
    vor_testing_set_clock(now_ns, user);
    fake_ticks_fn = now_ns ? ticks : NULL;
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
        vor_atomic_store_relaxed(&vor_clock_source_now, (int)VOR_CLOCK_SOURCE_MONOTONIC);
        /* Re-run the choice for the real clock. */
        choose_source();
    }
}

uint64_t vor_now_ns(void) {
    return vor_clock_ns();
}
