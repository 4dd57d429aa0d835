/* scope_hot.h: the scope hot path, inline, on an explicit thread buffer.
 *
 * begin pushes (start tick, site) on the thread's open-scope stack; end pops it and
 * appends one finished event to the thread's ring. The ring is single-producer,
 * single-consumer: the owning thread publishes `head` with a release store after the
 * event's bytes, and the frame thread publishes `tail` when it has copied events out.
 * One compare decides the common case: below `fast_limit` the current chunk has room and
 * the ring keeps VOR_MAX_DEPTH events free, so the event fits whatever its depth; at the
 * limit the slow path (thread_ring.c) rereads `tail`, moves to the next chunk or adds one.
 * Nothing here blocks; the only allocation is a new chunk, when the ring is full and below
 * its bound.
 *
 * What the frame thread relies on to snapshot the open stack at a frame's end
 * (frame_threads.c):
 *   - push stores the entry (start, then site) before publishing the depth;
 *   - pop publishes the event (head) before lowering the depth.
 * The stores are release stores: plain moves on x86, so the hot path costs what it did.
 *
 * What is dropped, and why nothing kept loses its parent:
 *   - deeper than VOR_MAX_DEPTH: its descendants are deeper still;
 *   - shorter than VOR_MIN_DURATION_NS (vor_min_duration_ticks): its descendants are
 *     shorter still;
 *   - no room: an event at depth d is accepted only if the ring keeps room for d more, so
 *     its d open ancestors always fit after it (outer scopes survive first).
 * Each is counted on the thread; the frame record says how many, by cause.
 *
 * Scopes a non-local exit skipped (a longjmp, a C++ exception through C frames, a
 * coroutine switch: their ends never run). The macros and the -finstrument-functions hooks
 * begin and end a scope from the same function, so their entries keep where that
 * function's stack was (VOR_STACK_POSITION: larger is deeper). A begin that runs
 * shallower than an open entry proves that entry's function is gone: it is closed then,
 * ended at that moment and flagged VOR_SCOPE_UNWOUND, and recording goes on. An end
 * checks that the top entry is its own (same position, same site or function) and, if
 * not, finds its own below (the topmost of its site at its position: deeper entries of
 * the same site are skipped recursions) and closes those above it, unwound: they may be
 * deeper, or of its own function (a scope opened in the function that called setjmp),
 * or, in wasm, of a callee without a stack frame of its own. An end whose entry is not
 * there (closed already, never stored) closes nothing. The common case costs one
 * compare at each end. vor_scope_begin and vor_scope_end (scopes that may begin and end
 * in different functions) keep no position: their entries are never judged skipped.
 * The macros never let the compiler turn vor_scope_leave into a tail call (vor.h), which
 * would call it from the caller's position; the hooks detect it (instrument_functions.c).
 *
 * The clock is read last in begin and first in end, so a scope's duration excludes
 * most of vor's own bookkeeping (and, with VOR_NVTX=1, the NVTX range's calls:
 * nvtx_ranges.h; off, they cost one predicted branch each).
 */
#ifndef VOR_SCOPE_HOT_H
#define VOR_SCOPE_HOT_H

#include "clock.h"
#include "nvtx_ranges.h"
#include "vor_internal.h"

/* Where the calling function's stack is, as a number that grows with depth (the stack
 * grows down): natively the caller's stack pointer at the call of the vor function this
 * is used in (its canonical frame address), in wasm Emscripten's stack pointer (the C
 * stack in linear memory; functions without address-taken locals do not move it). A
 * macro, so it measures the function it is written in. Never 0 (0 means unknown). */
#if defined(VOR_PLATFORM_WASM)
#include <emscripten/stack.h>
#define VOR_STACK_POSITION() (~(uintptr_t)emscripten_stack_get_current())
#else
#define VOR_STACK_POSITION() (~(uintptr_t)__builtin_dwarf_cfa())
#endif

/* The entry points of the hot path start on a cache line of their own, so what a scope
 * costs does not move with unrelated changes elsewhere in the library (their placement
 * moved it by up to 1.5 ns, measured), and calibration and the program's calls run the
 * very same lines. */
#define VOR_HOT_ENTRY __attribute__((aligned(64)))

static inline void vor_scope_push(vor_thread *t, vor_site *site) {
    if (VOR_NVTX_ON()) vor_nvtx_push(site); /* VOR_NVTX=1: before the clock read */
    uint32_t d = t->depth;
    if (VOR_LIKELY(d < VOR_MAX_DEPTH)) {
        t->open_at[d + 1].pos = 0; /* no position: never judged skipped */
        t->open_at[d + 1].fn = NULL;
        uint64_t now = vor_clock_ticks();
        vor_atomic_store_release(&t->open[d].start, now);
        vor_atomic_store_release(&t->open[d].site, site);
    }
    vor_atomic_store_release(&t->depth, d + 1);
}

/* Everything but the common case of vor_scope_push_at (scope.c): too deep, or an open
 * entry at or deeper than `limit`: closes the skipped ones first (an entry hook's
 * `call_site` tells an inlined function's frame, which it shares with its caller, from a
 * skipped sibling's; 0 for the macros). */
VOR_HIDDEN void vor_scope_push_at_slow(vor_thread *t, vor_site *site, uintptr_t pos, uintptr_t limit,
                                       const void *call_site, const void *fn);

/* 1 when a scope pushed with `limit` is the common case: room below VOR_MAX_DEPTH and no
 * open entry deeper than `limit`. *d gets the depth. */
static inline int vor_scope_push_at_plain(const vor_thread *t, uintptr_t limit, uint32_t *d) {
    *d = t->depth;
    return VOR_LIKELY(*d < VOR_MAX_DEPTH && t->open_at[*d].pos <= limit);
}

/* Stores the entry at depth d (below VOR_MAX_DEPTH) begun `now` and publishes it; `fn`:
 * an entry hook's function, NULL for the macros. */
static inline void vor_scope_open_entry(vor_thread *t, uint32_t d, vor_site *site, uintptr_t pos, const void *fn,
                                        uint64_t now) {
    t->open_at[d + 1].pos = pos;
    t->open_at[d + 1].fn = fn;
    vor_atomic_store_release(&t->open[d].start, now);
    vor_atomic_store_release(&t->open[d].site, site);
    vor_atomic_store_release(&t->depth, d + 1);
}

/* Pushes a scope that ends in the same function (the macros, the hooks): `pos` is that
 * function's VOR_STACK_POSITION(); open entries deeper than `limit` were skipped. A
 * macro's limit is `pos` (scopes of its own function are at `pos`). An entry hook's,
 * natively, is `pos - 1`: its function has just begun, so an entry at its position is
 * either a sibling's that a jump skipped, or, when the compiler inlined the function, its
 * caller's (the slow path tells them apart by call site). In wasm a function without a
 * stack frame shares its caller's position, so there too the limit is `pos`. */
static inline void vor_scope_push_at(vor_thread *t, vor_site *site, uintptr_t pos, uintptr_t limit,
                                     const void *call_site, const void *fn) {
    if (VOR_NVTX_ON()) vor_nvtx_push(site); /* VOR_NVTX=1: before the clock read */
    uint32_t d;
    if (VOR_UNLIKELY(!vor_scope_push_at_plain(t, limit, &d))) {
        vor_scope_push_at_slow(t, site, pos, limit, call_site, fn);
        return;
    }
    vor_scope_open_entry(t, d, site, pos, fn, vor_clock_ticks());
}

/* Writes the event of the open scope at depth d, ending at `end`, at `head` (room checked)
 * and publishes it. */
static inline void vor_scope_append(vor_thread *t, uint64_t head, uint32_t d, uint64_t end, uint32_t flags) {
    vor_event *e = &t->chunk_events[head & (VOR_RING_CHUNK_EVENTS - 1)];
    e->site = t->open[d].site;
    e->start = t->open[d].start;
    e->end = end;
    e->depth = d;
    e->flags = flags;
    vor_atomic_store_release(&t->head, head + 1);
}

/* Everything but the common case of vor_scope_pop (scope.c): nothing open, too deep,
 * too short, the ring at its fast limit, or VOR_NVTX=1 (every scope that closes, in the
 * slow paths only, pops its NVTX range). Out of line and called last, so the common case
 * needs no saved registers. */
VOR_HIDDEN void vor_scope_pop_slow(vor_thread *t, uint64_t end);

/* The end of a scope begun with vor_scope_push_at when the top entry is not plainly its
 * own: finds its entry, the topmost one of its site (or, when `site` is NULL, of the
 * function `fn`: the hooks) at its function's stack position, closes what lies above it
 * (skipped) and then it. `pos` is where the end was called from: the function's own
 * position, or, when `tail` (a hook the compiler called as a tail call, natively), its
 * caller's, so the entry lies deeper than `pos`. Also the common case's other exits (too
 * deep, too short, ring at its limit). */
VOR_HIDDEN void vor_scope_pop_at_slow(vor_thread *t, uint64_t end, uintptr_t pos, const vor_site *site,
                                      const void *fn, int tail);

/* The end of a macro scope at `site`, from the function that began it (`pos`). */
static inline void vor_scope_pop_at(vor_thread *t, uint64_t end, uintptr_t pos, const vor_site *site) {
    uint32_t d = t->depth - 1; /* wraps when nothing is open */
    uint64_t head = t->head;
    if (VOR_UNLIKELY(d >= VOR_MAX_DEPTH || head >= t->fast_limit || t->open_at[d + 1].pos != pos ||
                     t->open[d].site != site || VOR_NVTX_ON() ||
                     end - t->open[d].start < vor_atomic_load_relaxed(&vor_min_duration_ticks))) {
        vor_scope_pop_at_slow(t, end, pos, site, NULL, 0);
        return;
    }
    vor_scope_append(t, head, d, end, 0);
    vor_atomic_store_release(&t->depth, d);
}

static inline void vor_scope_pop(vor_thread *t, uint64_t end) {
    uint32_t d = t->depth - 1; /* wraps when nothing is open */
    uint64_t head = t->head;
    if (VOR_UNLIKELY(d >= VOR_MAX_DEPTH || head >= t->fast_limit || VOR_NVTX_ON() ||
                     end - t->open[d].start < vor_atomic_load_relaxed(&vor_min_duration_ticks))) {
        vor_scope_pop_slow(t, end);
        return;
    }
    vor_scope_append(t, head, d, end, 0);
    vor_atomic_store_release(&t->depth, d);
}

#endif /* VOR_SCOPE_HOT_H */
