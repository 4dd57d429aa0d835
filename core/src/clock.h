/* clock.h: the tick source of the hot path and the conversion of ticks to nanoseconds.
 *
 * Scopes are timed in raw ticks, read inline: the CPU's time-stamp counter (rdtsc) on
 * x86 when it is invariant, the virtual counter on arm64, else the OS monotonic clock.
 * Two clock reads are most of a scope's cost, and rdtsc is about twice as cheap as
 * clock_gettime here, so the conversion to nanoseconds is kept out of the hot path:
 * vor_frame_mark() takes one (tick, ns) anchor pair per frame and maps the ticks of the
 * frame by linear interpolation between the previous anchor and this one. Frame
 * boundaries are therefore exact monotonic nanoseconds, and the tick rate never has to
 * be known in advance or be perfectly stable.
 *
 * Tests replace the source with a fake clock (vor_testing_set_clock), in which case
 * ticks are nanoseconds.
 *
 * In WebAssembly ticks are nanoseconds of performance.now() on the main thread's
 * timeline. A worker's performance.now() counts from the worker's own time origin, and
 * Emscripten 3.1.6 shifts emscripten_get_now() there by an offset measured with a
 * postMessage, so it comes out early by that message's latency (about a millisecond).
 * vor corrects each worker once, on its first clock read, with the exact difference of
 * the two realms' performance.timeOrigin (vor_wasm_thread_offset_slow in clock.c).
 */
#ifndef VOR_CLOCK_H
#define VOR_CLOCK_H

#include <stdint.h>

#include "platform.h"

#if defined(VOR_PLATFORM_WASM)
#include <emscripten/emscripten.h>
#elif defined(VOR_ARCH_X86)
#include <x86intrin.h>
#endif

typedef enum vor_clock_source {
    VOR_CLOCK_SOURCE_TSC = 0,       /* rdtsc / cntvct: raw counter ticks */
    VOR_CLOCK_SOURCE_MONOTONIC = 1, /* OS monotonic clock: ticks are ns */
    VOR_CLOCK_SOURCE_FAKE = 2       /* tests: a function returning ns */
} vor_clock_source;

/* Read by the hot path; written only by vor_clock_init() / vor_testing_set_clock(). */
extern VOR_HIDDEN int vor_clock_source_now;

/* The slow path: OS monotonic clock or the fake clock, in ns. */
VOR_HIDDEN uint64_t vor_clock_ticks_slow(void);

#if defined(VOR_PLATFORM_WASM) && defined(__EMSCRIPTEN_PTHREADS__)
/* ms to add to emscripten_get_now() on this thread; known after its first read. */
extern VOR_HIDDEN _Thread_local int vor_wasm_offset_known;
extern VOR_HIDDEN _Thread_local double vor_wasm_offset_ms;
VOR_HIDDEN double vor_wasm_thread_offset_slow(void);
static inline double vor_wasm_now_ms(void) {
    double offset = VOR_LIKELY(vor_wasm_offset_known) ? vor_wasm_offset_ms : vor_wasm_thread_offset_slow();
    return emscripten_get_now() + offset;
}
#elif defined(VOR_PLATFORM_WASM)
static inline double vor_wasm_now_ms(void) {
    return emscripten_get_now();
}
#endif

#if defined(VOR_PLATFORM_WASM)
/* This realm's performance.now() minus vor's clock, in ms: what turns a vor time into
 * one that performance.measure and console.timeStamp of this thread take. 0 on the main
 * thread and under node (whose emscripten_get_now() is process-wide). */
VOR_HIDDEN double vor_wasm_realm_offset_ms(void);
#endif

/* Raw ticks. Inline: this is half of every scope's cost. */
static inline uint64_t vor_clock_ticks(void) {
#if defined(VOR_ARCH_X86) && !defined(VOR_PLATFORM_WASM)
    if (VOR_LIKELY(__atomic_load_n(&vor_clock_source_now, __ATOMIC_RELAXED) == VOR_CLOCK_SOURCE_TSC)) return __rdtsc();
#elif defined(VOR_ARCH_ARM64) && !defined(VOR_PLATFORM_WASM)
    if (VOR_LIKELY(__atomic_load_n(&vor_clock_source_now, __ATOMIC_RELAXED) == VOR_CLOCK_SOURCE_TSC)) {
        uint64_t v;
        __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
        return v;
    }
#elif defined(VOR_PLATFORM_WASM)
    /* performance.now() (process.hrtime under node), called directly: ticks are ns. */
    if (VOR_LIKELY(__atomic_load_n(&vor_clock_source_now, __ATOMIC_RELAXED) == VOR_CLOCK_SOURCE_MONOTONIC))
        return (uint64_t)(vor_wasm_now_ms() * 1e6);
#endif
    return vor_clock_ticks_slow();
}

/* Monotonic nanoseconds from the OS (or the fake clock). */
VOR_HIDDEN uint64_t vor_clock_ns(void);

/* Chooses the tick source (once per process; the fake clock overrides it). */
VOR_HIDDEN void vor_clock_init(void);

/* A (tick, ns) pair read as close together as the platform allows. */
typedef struct vor_clock_anchor {
    uint64_t tick;
    uint64_t ns;
} vor_clock_anchor;

VOR_HIDDEN vor_clock_anchor vor_clock_anchor_now(void);

/* Maps ticks to ns between two anchors (`from` earlier than `to`). Ticks outside the
 * interval are extrapolated at the same rate. */
typedef struct vor_clock_map {
    uint64_t base_tick;
    int64_t base_ns;
    double ns_per_tick;
} vor_clock_map;

VOR_HIDDEN vor_clock_map vor_clock_map_between(vor_clock_anchor from, vor_clock_anchor to, double fallback_ns_per_tick);

static inline int64_t vor_clock_map_ns(const vor_clock_map *m, uint64_t tick) {
    /* Signed difference: a scope may have begun before the frame's first anchor. */
    int64_t dt = (int64_t)(tick - m->base_tick);
    return m->base_ns + (int64_t)((double)dt * m->ns_per_tick);
}

#endif /* VOR_CLOCK_H */
