/* thread_ring.c: a thread's ring of ended scopes: the producer's slow path and the frame
 * thread's reading.
 *
 * The ring holds thread_buffer_scopes events, allocated at the thread's first scope;
 * indices count from 0 for the thread's life (head, tail: uint64) and event i lives at
 * i & mask. Room: capacity - (head - tail). An event at depth d is accepted only if
 * room > d: it leaves room for its d open ancestors, which end after it, so when the
 * ring runs full the inner scopes are dropped and the outer ones survive.
 */
#include <stdlib.h>

#include "vor_internal.h"

/* Recomputes the one bound the hot path tests: below it, room > VOR_MAX_DEPTH. */
static void update_fast_limit(vor_thread *t) {
    t->fast_limit = t->tail_cache + t->mask + 1 - VOR_MAX_DEPTH;
}

int vor_ring_init(vor_thread *t) {
    uint32_t capacity = vor_settings_now.thread_buffer_scopes;
    t->events = malloc((size_t)capacity * sizeof(vor_event));
    if (t->events == NULL) return 0;
    t->mask = capacity - 1;
    t->head = t->tail = t->tail_cache = 0;
    update_fast_limit(t);
    return 1;
}

void vor_ring_free(vor_thread *t) {
    free(t->events);
    t->events = NULL;
}

int vor_ring_make_room(vor_thread *t, uint32_t depth) {
    t->tail_cache = vor_atomic_load_acquire(&t->tail);
    update_fast_limit(t);
    uint64_t room = t->mask + 1 - (t->head - t->tail_cache);
    return room > depth;
}

vor_ring_cursor vor_ring_reader(vor_thread *t) {
    vor_ring_cursor c = {t, t->tail};
    return c;
}

const vor_event *vor_ring_peek(vor_ring_cursor *c, uint64_t index) {
    c->index = index;
    return &c->t->events[index & c->t->mask];
}

uint64_t vor_ring_ended_by(vor_thread *t, uint64_t head, uint64_t tick) {
    uint64_t lo = t->tail, hi = head; /* the answer is in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((int64_t)(t->events[mid & t->mask].end - tick) > 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void vor_ring_consume(vor_thread *t, uint64_t tail) {
    vor_atomic_store_release(&t->tail, tail);
}

void vor_producer_save(const vor_thread *t, vor_producer_state *out) {
    out->head = t->head;
    out->fast_limit = t->fast_limit;
    out->dropped_full = t->dropped_full;
    out->dropped_deep = t->dropped_deep;
    out->depth = t->depth;
}

void vor_producer_restore(vor_thread *t, const vor_producer_state *in) {
    t->fast_limit = in->fast_limit;
    vor_atomic_store_relaxed(&t->dropped_full, in->dropped_full);
    vor_atomic_store_relaxed(&t->dropped_deep, in->dropped_deep);
    vor_atomic_store_release(&t->head, in->head);
    vor_atomic_store_release(&t->depth, in->depth);
}
