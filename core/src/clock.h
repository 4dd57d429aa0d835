/* clock.h: the tick source of the hot path and the conversion of ticks to nanoseconds.
 *
 * Scopes are timed in raw ticks, read inline: the CPU's time-stamp counter (rdtsc) on
 * x86 when it is invariant, the virtual counter on arm64, else the OS monotonic clock.
 * Two clock reads are most of a scope's cost, and rdtsc is about twice as cheap as
 * clock_gettime here, so the conversion to nanoseconds is kept out of the hot path:
 * vor_frame_mark() takes one (tick, ns) anchor per frame and the frame's ticks are mapped
 * by the session's timeline (below): a rate from a long baseline, and anchors that only
 * slew the offset, so the map is one monotone function across frames.
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

/* The source read inline (no call): the counter natively, performance.now() in wasm. */
#if defined(VOR_PLATFORM_WASM)
#define VOR_CLOCK_SOURCE_INLINE VOR_CLOCK_SOURCE_MONOTONIC
#else
#define VOR_CLOCK_SOURCE_INLINE VOR_CLOCK_SOURCE_TSC
#endif

/* 1 when vor_clock_read_inline() is the session's clock (the hot path tests it once). */
static inline int vor_clock_source_is_inline(void) {
#if defined(VOR_ARCH_X86) || defined(VOR_ARCH_ARM64) || defined(VOR_PLATFORM_WASM)
    return __atomic_load_n(&vor_clock_source_now, __ATOMIC_RELAXED) == VOR_CLOCK_SOURCE_INLINE;
#else
    return 0;
#endif
}

/* The inline source's ticks; only when vor_clock_source_is_inline(). */
static inline uint64_t vor_clock_read_inline(void) {
#if defined(VOR_ARCH_X86) && !defined(VOR_PLATFORM_WASM)
    return __rdtsc();
#elif defined(VOR_ARCH_ARM64) && !defined(VOR_PLATFORM_WASM)
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#elif defined(VOR_PLATFORM_WASM)
    /* performance.now() (process.hrtime under node), called directly: ticks are ns. */
    return (uint64_t)(vor_wasm_now_ms() * 1e6);
#else
    return vor_clock_ticks_slow();
#endif
}

/* Raw ticks. Inline: this is half of every scope's cost. */
static inline uint64_t vor_clock_ticks(void) {
    if (VOR_LIKELY(vor_clock_source_is_inline())) return vor_clock_read_inline();
    return vor_clock_ticks_slow();
}

/* Monotonic nanoseconds from the OS (or the fake clock). */
VOR_HIDDEN uint64_t vor_clock_ns(void);

/* Chooses the tick source (once per process; the fake clock overrides it) and, for a
 * counter, measures its first rate (see "The rate" below). */
VOR_HIDDEN void vor_clock_init(void);

/* 1 when ticks are nanoseconds already (the OS clock, wasm, the plain fake clock): every
 * map is the identity and no conversion is needed. */
VOR_HIDDEN int vor_clock_ticks_are_ns(void);

/* A (tick, ns) pair: the OS clock read between two counter reads. `bracket` is the
 * distance between the two counter reads, the uncertainty of `tick` (0 when ticks are ns).
 * vor_clock_anchor_now() reads up to a few pairs and keeps the tightest: a pair whose
 * thread was preempted or interrupted between its reads has a wide bracket. */
typedef struct vor_clock_anchor {
    uint64_t tick;
    uint64_t ns;
    uint64_t bracket;
} vor_clock_anchor;

VOR_HIDDEN vor_clock_anchor vor_clock_anchor_now(void);

/* 1 when an anchor's bracket is tight enough to be trusted (see clock.c). */
VOR_HIDDEN int vor_clock_anchor_is_tight(const vor_clock_anchor *a);

/* The tick rate (ns per tick) of the long baseline; 1 when ticks are ns. */
VOR_HIDDEN double vor_clock_ns_per_tick(void);

/* Ticks in `ns` nanoseconds at the current rate (rounded up; for thresholds). */
VOR_HIDDEN uint64_t vor_clock_ticks_for_ns(uint64_t ns);

/* ---- The timeline: one tick-to-ns map for a session ------------------------------------
 *
 * The rate. A counter's rate is never taken from one frame: two anchors a few us apart
 * with a few hundred ns of skew between the counter read and the OS clock read of one of
 * them would give a rate off by several percent (scopes twice too long were measured that
 * way on a loaded machine). The rate comes from a long baseline: at start-up, the span
 * from the library's load (or at least 1 ms) between two tight anchors; afterwards, each
 * time a frame's tight anchor doubles the baseline, the rate from the first anchor to it.
 * So it is refined over seconds, and one late-read anchor never moves it (only tight ones
 * count).
 *
 * The map. A session's timeline is a chain of straight lines. Frame boundaries are points
 * on it: vor_timeline_close() maps a frame's anchor tick, so frames are contiguous (a
 * frame's end is the next one's start). Anchors only steer the offset: at most once per
 * millisecond the next line is aimed at the OS clock, at the counter's rate plus at most
 * 0.1% (a slew, as NTP does), so the map is monotone (time never runs backwards) and
 * continuous; a line changes only at a frame boundary, so a frame's ticks lie on one line.
 * Every tick is mapped by the same formula whenever it is mapped, so a scope mapped in any
 * frame gets the ns its children and parents were given. The lines of the last few
 * seconds at least are kept (4,096 of them); a tick older than that maps on the oldest
 * kept line (frame_threads.c remembers the ns of scopes open longer than that). */

/* Starts the session's timeline at `epoch` (its first point). */
VOR_HIDDEN void vor_timeline_reset(vor_clock_anchor epoch);

/* The point of a frame boundary: the tick read at its anchor, and its ns on the map. */
typedef struct vor_timeline_point {
    uint64_t tick;
    int64_t ns;
} vor_timeline_point;
VOR_HIDDEN vor_timeline_point vor_timeline_close(vor_clock_anchor anchor);

/* The last boundary (the current frame's start). */
VOR_HIDDEN vor_timeline_point vor_timeline_last(void);

/* Maps any tick. */
VOR_HIDDEN int64_t vor_timeline_map(uint64_t tick);

/* The line that holds `tick` and every later tick up to the next boundary where the line
 * changed: a frame's ticks are mapped with the line of its start, without a search. */
typedef struct vor_clock_map {
    uint64_t base_tick;
    int64_t base_ns;
    double ns_per_tick;
    int identity; /* ticks are ns */
} vor_clock_map;

VOR_HIDDEN vor_clock_map vor_timeline_segment(uint64_t tick);

/* Maps a tick at or after the line's base; the same formula as vor_timeline_map. */
static inline int64_t vor_clock_map_ns(const vor_clock_map *m, uint64_t tick) {
    if (m->identity) return (int64_t)tick;
    if (VOR_UNLIKELY((int64_t)(tick - m->base_tick) < 0)) return vor_timeline_map(tick);
    return m->base_ns + (int64_t)((double)(int64_t)(tick - m->base_tick) * m->ns_per_tick);
}

#endif /* VOR_CLOCK_H */
