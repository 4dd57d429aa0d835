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
 * The clock is read last in begin and first in end, so a scope's duration excludes
 * most of vor's own bookkeeping.
 */
#ifndef VOR_SCOPE_HOT_H
#define VOR_SCOPE_HOT_H

#include "clock.h"
#include "vor_internal.h"

static inline void vor_scope_push(vor_thread *t, vor_site *site) {
    uint32_t d = t->depth;
    if (VOR_LIKELY(d < VOR_MAX_DEPTH)) {
        uint64_t now = vor_clock_ticks();
        vor_atomic_store_release(&t->open[d].start, now);
        vor_atomic_store_release(&t->open[d].site, site);
    }
    vor_atomic_store_release(&t->depth, d + 1);
}

/* Writes the event of the open scope at depth d, ending at `end`, at `head` (room checked)
 * and publishes it. */
static inline void vor_scope_append(vor_thread *t, uint64_t head, uint32_t d, uint64_t end) {
    vor_event *e = &t->chunk_events[head & (VOR_RING_CHUNK_EVENTS - 1)];
    e->site = t->open[d].site;
    e->start = t->open[d].start;
    e->end = end;
    e->depth = d;
    vor_atomic_store_release(&t->head, head + 1);
}

/* Everything but the common case of vor_scope_pop (scope.c): nothing open, too deep,
 * too short, or the ring at its fast limit. Out of line and called last, so the common
 * case needs no saved registers. */
VOR_HIDDEN void vor_scope_pop_slow(vor_thread *t, uint64_t end);

static inline void vor_scope_pop(vor_thread *t, uint64_t end) {
    uint32_t d = t->depth - 1; /* wraps when nothing is open */
    uint64_t head = t->head;
    if (VOR_UNLIKELY(d >= VOR_MAX_DEPTH || head >= t->fast_limit ||
                     end - t->open[d].start < vor_atomic_load_relaxed(&vor_min_duration_ticks))) {
        vor_scope_pop_slow(t, end);
        return;
    }
    vor_scope_append(t, head, d, end);
    vor_atomic_store_release(&t->depth, d);
}

#endif /* VOR_SCOPE_HOT_H */
