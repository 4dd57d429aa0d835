/* scope_hot.h: the scope hot path, inline, on an explicit thread buffer.
 *
 * begin pushes (site, start tick) on the thread's open-scope stack; end pops it and
 * appends one finished event to the thread's ring. The ring is single-producer,
 * single-consumer: the owning thread publishes `head` with a release store after the
 * event's bytes, and the frame thread publishes `tail` when it has copied events out.
 * The producer rereads `tail` only when its cached copy says the ring is full, so the
 * common case touches no shared cache line. A full ring or a stack deeper than
 * VOR_MAX_DEPTH drops the scope and counts it; nothing here blocks or allocates.
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
    t->depth = d + 1;
    if (VOR_LIKELY(d < VOR_MAX_DEPTH)) {
        t->open[d].site = site;
        t->open[d].start = vor_clock_ticks();
    }
}

static inline void vor_scope_pop(vor_thread *t, uint64_t end) {
    uint32_t d = t->depth;
    if (VOR_UNLIKELY(d == 0)) {
        vor_atomic_store_relaxed(&t->unbalanced, t->unbalanced + 1);
        return;
    }
    t->depth = --d;
    if (VOR_UNLIKELY(d >= VOR_MAX_DEPTH)) {
        vor_atomic_store_relaxed(&t->dropped_deep, t->dropped_deep + 1);
        return;
    }
    uint64_t head = t->head;
    if (VOR_UNLIKELY(head - t->tail_cache > t->mask)) {
        t->tail_cache = vor_atomic_load_acquire(&t->tail);
        if (head - t->tail_cache > t->mask) {
            vor_atomic_store_relaxed(&t->dropped_full, t->dropped_full + 1);
            return;
        }
    }
    vor_event *e = &t->events[head & t->mask];
    e->site = t->open[d].site;
    e->start = t->open[d].start;
    e->end = end;
    e->depth = d;
    vor_atomic_store_release(&t->head, head + 1);
}

#endif /* VOR_SCOPE_HOT_H */
