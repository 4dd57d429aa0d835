/* thread_ring.c: a thread's ring of ended scopes, as a circle of chunks that grows on
 * demand up to a bound.
 *
 * Why chunks: a ring allocated whole at a thread's first scope costs every thread the
 * bound (2 MiB by default) even if it records ten scopes a frame, and a ring that grows by
 * copying would move events the frame thread may be reading. Here a thread starts with one
 * chunk of VOR_RING_CHUNK_EVENTS events; when the ring nears full, the owning thread links
 * a new chunk into the circle right after the chunk it is writing, where no reader is, and
 * nothing ever moves. Memory stays below the bound (vor_thread_scopes_bound), rounded up to
 * a chunk.
 *
 * Indices: events are numbered from 0 for the thread's life (head, tail: uint64). A chunk
 * holds VOR_RING_CHUNK_EVENTS consecutive indices from its `base`, a multiple of the chunk
 * size; the producer fills a chunk, then moves to the next one in the circle and sets its
 * base. The consumer follows: the chunk after index i's chunk is the one whose base is
 * i's chunk end, normally `next`, found by walking the circle in the rare case where the
 * consumer stopped exactly at a chunk's end and the producer since reused that chunk.
 *
 * Room: the chunk holding `tail` is in use until the consumer has read all of it, so
 *   room = n_chunks * chunk - (head - tail rounded down to its chunk).
 * An event at depth d is accepted only if room > d (it leaves room for its d ancestors,
 * which end after it); the producer adds a chunk when room would fall below
 * VOR_MAX_DEPTH + 1, if the bound allows, so below the bound no event is ever refused.
 */
#include <stdlib.h>

#include "vor_internal.h"

#define CHUNK ((uint64_t)VOR_RING_CHUNK_EVENTS)

static vor_chunk *new_chunk(void) {
    vor_chunk *c = malloc(sizeof *c);
    if (c == NULL) vor_log(VOR_LOG_OUT_OF_MEMORY, "a chunk of %u scopes for a thread's buffer", VOR_RING_CHUNK_EVENTS);
    return c;
}

/* Chunks the session's bound lets the ring use (a ring grown under a larger bound in an
 * earlier session keeps its chunks, but not their room). */
static uint64_t usable_chunks(const vor_thread *t) {
    uint64_t bound = vor_atomic_load_relaxed(&vor_thread_scopes_bound) / CHUNK;
    if (bound == 0) bound = 1;
    return t->n_chunks < bound ? t->n_chunks : bound;
}

static uint64_t room_of(const vor_thread *t, uint64_t head, uint64_t tail) {
    uint64_t used = head - (tail & ~(CHUNK - 1)), capacity = usable_chunks(t) * CHUNK;
    return used < capacity ? capacity - used : 0;
}

/* Recomputes the one bound the hot path tests. */
static void update_fast_limit(vor_thread *t) {
    uint64_t held_from = t->tail_cache & ~(CHUNK - 1);
    uint64_t limit = held_from + usable_chunks(t) * CHUNK - VOR_MAX_DEPTH;
    t->fast_limit = limit < t->chunk_end ? limit : t->chunk_end;
}

int vor_ring_init(vor_thread *t) {
    vor_chunk *c = new_chunk();
    if (c == NULL) return 0;
    c->next = c;
    c->base = 0;
    t->chunk = c;
    t->chunk_events = c->events;
    t->chunk_end = CHUNK;
    t->n_chunks = 1;
    t->head = 0;
    t->tail = 0;
    t->tail_cache = 0;
    t->read_chunk = c;
    t->read_base = 0;
    update_fast_limit(t);
    return 1;
}

void vor_ring_free(vor_thread *t) {
    vor_chunk *c = t->chunk;
    for (uint32_t i = 0; i < t->n_chunks && c; i++) {
        vor_chunk *next = c->next;
        free(c);
        c = next;
    }
    t->chunk = NULL;
    t->n_chunks = 0;
}

int vor_ring_make_room(vor_thread *t, uint32_t depth) {
    uint64_t head = t->head;
    t->tail_cache = vor_atomic_load_acquire(&t->tail);
    uint64_t bound = vor_atomic_load_relaxed(&vor_thread_scopes_bound);
    uint64_t max_chunks = bound / CHUNK ? bound / CHUNK : 1;
    uint64_t room = room_of(t, head, t->tail_cache);
    while (room < (uint64_t)VOR_MAX_DEPTH + 1 && t->n_chunks < max_chunks) {
        vor_chunk *c = new_chunk();
        if (c == NULL) break;
        /* After the chunk being written: the consumer is behind it, never there. */
        c->next = t->chunk->next;
        c->base = 0;
        vor_atomic_store_release(&t->chunk->next, c);
        t->n_chunks++;
        room += CHUNK;
    }
    if (room < (uint64_t)depth + 1) return 0;
    if (head == t->chunk_end) {
        /* room >= 1 with the current chunk full: the next chunk in the circle is free. */
        vor_chunk *next = t->chunk->next;
        vor_atomic_store_release(&next->base, head);
        t->chunk = next;
        t->chunk_events = next->events;
        t->chunk_end = head + CHUNK;
    }
    update_fast_limit(t);
    return 1;
}

/* The chunk after `c`, which held [base, base + CHUNK): the one whose base is base + CHUNK.
 * Only asked for an index the producer has written, so that chunk exists. */
static vor_chunk *chunk_after(vor_chunk *c, uint64_t base) {
    uint64_t want = base + CHUNK;
    vor_chunk *n = vor_atomic_load_acquire(&c->next);
    if (vor_atomic_load_acquire(&n->base) == want) return n;
    /* `c` was reused after the consumer stopped exactly at its end (a circle of one gives
     * `c` itself): walk the circle. */
    for (vor_chunk *p = n;;) {
        if (vor_atomic_load_acquire(&p->base) == want) return p;
        p = vor_atomic_load_acquire(&p->next);
        if (p == n) return n; /* cannot happen: keep the reader inside the ring */
    }
}

vor_ring_cursor vor_ring_reader(vor_thread *t) {
    vor_ring_cursor c = {t->read_chunk, t->read_base};
    return c;
}

void vor_ring_cross(vor_ring_cursor *c, uint64_t index) {
    while (index - c->base >= CHUNK) {
        c->chunk = chunk_after(c->chunk, c->base);
        c->base += CHUNK;
    }
}

uint64_t vor_ring_ended_by(vor_thread *t, uint64_t head, uint64_t tick) {
    vor_ring_cursor c = vor_ring_reader(t);
    uint64_t lo = t->tail;
    while (lo < head) {
        /* The part of [lo, head) in lo's chunk: past `tick` at its last event? */
        vor_ring_peek(&c, lo);
        uint64_t chunk_end = c.base + CHUNK, hi = head < chunk_end ? head : chunk_end;
        const vor_event *events = c.chunk->events;
        if ((int64_t)(events[hi - 1 - c.base].end - tick) <= 0) {
            lo = hi;
            continue;
        }
        while (lo < hi) { /* the first past `tick` is in [lo, hi] */
            uint64_t mid = lo + (hi - lo) / 2;
            if ((int64_t)(events[mid - c.base].end - tick) > 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        return lo;
    }
    return head;
}

void vor_ring_consume(vor_thread *t, uint64_t tail) {
    /* Keep the read position on the chunk holding `tail`, or the one it ends (crossing
     * needs the next chunk's index to have been written). */
    vor_ring_cursor c = vor_ring_reader(t);
    if (tail - c.base > CHUNK) vor_ring_peek(&c, tail - 1);
    t->read_chunk = c.chunk;
    t->read_base = c.base;
    vor_atomic_store_release(&t->tail, tail);
}

void vor_producer_save(const vor_thread *t, vor_producer_state *out) {
    out->head = t->head;
    out->fast_limit = t->fast_limit;
    out->chunk_end = t->chunk_end;
    out->dropped_full = t->dropped_full;
    out->dropped_deep = t->dropped_deep;
    out->filtered = t->filtered;
    out->chunk_events = t->chunk_events;
    out->chunk = t->chunk;
    out->chunk_base = t->chunk->base;
    out->depth = t->depth;
}

void vor_producer_restore(vor_thread *t, const vor_producer_state *in) {
    /* Chunks added meanwhile stay in the circle, after the restored one: free room. Chunks
     * entered meanwhile forget their base, so the consumer never takes one for the chunk
     * that holds those indices later. (The frame lock is held: no consumer runs.) */
    if (t->chunk != in->chunk) {
        for (vor_chunk *c = in->chunk->next;; c = c->next) {
            vor_atomic_store_relaxed(&c->base, UINT64_MAX);
            if (c == t->chunk) break;
        }
    }
    vor_atomic_store_relaxed(&in->chunk->base, in->chunk_base);
    t->chunk = in->chunk;
    t->chunk_events = in->chunk_events;
    t->chunk_end = in->chunk_end;
    vor_atomic_store_relaxed(&t->dropped_full, in->dropped_full);
    vor_atomic_store_relaxed(&t->dropped_deep, in->dropped_deep);
    vor_atomic_store_relaxed(&t->filtered, in->filtered);
    vor_atomic_store_release(&t->head, in->head);
    vor_atomic_store_release(&t->depth, in->depth);
    update_fast_limit(t);
}
