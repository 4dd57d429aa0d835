/* frame_threads.c: the scopes of a frame record, thread by thread.
 *
 * For each thread, at a frame's end (tick T, the frame's end point on the timeline):
 *   - ended: the events of its ring that ended by T, in end order (the ring is in end
 *     order, so they are a prefix of it), their ticks mapped through the timeline;
 *   - open: its scopes still open at T, outermost first, from its open-scope stack, so
 *     every ended scope's parent is in the frame (ended or open): with them,
 *     vor_scopes_link_parents() (scope_order.c) never answers VOR_PARENT_UNKNOWN;
 *   - what it lost, by cause (the frame record's drops).
 *
 * The snapshot, while the owning thread runs on. push stores the entry (start, then site)
 * before publishing the depth; pop publishes the event (head) before lowering the depth
 * (scope_hot.h). The frame thread reads the head (h1), the depth, each entry as start,
 * site, start again (a start that changed means the entry was being rewritten: not used),
 * and the head again (h2). Then:
 *   - ended in the frame: the events before h1 that ended by T;
 *   - open at T at depth k: the first event at depth k after those (up to h2: the
 *     "window"), the scope that contained T at depth k, if it began by T; else the stack
 *     entry at k, if read whole and begun by T.
 * Why this is exact. A pop published before h1 - 1 had lowered the depth before the next
 * publish, which h1 saw, so the stack read does not show it; only the pop of event h1 - 1
 * may still show, and it is recognised (same depth, start and site). A pop the depth read
 * saw lowered was published before, so it is in the window; an entry read while being
 * rewritten had been popped, and is in the window too (release stores, acquire loads). A
 * scope popped without an event (dropped) takes its descendants with it (scope_hot.h), so
 * nothing ended refers to it. So every ended scope's parent is ended or listed open, and
 * nothing is listed both; no retry is needed. Events published between h1 and h2 that
 * ended by T wait for the next frame, like an end published late (the owner was preempted
 * between reading its end tick and publishing): such a scope is listed open in this frame
 * and ends in the next one at that frame's start (clamp_late_ends below). A scope whose
 * begin read its tick by T but whose stores were not visible yet is not listed open;
 * nothing ended in the frame can be its child.
 *
 * A thread that exited by T is drained whole; the scopes it left open are closed at its
 * exit and flagged VOR_SCOPE_UNWOUND (their end is when the thread exited, not an end it
 * ran), then its buffer is freed.
 *
 * Pauses and sessions: scopes that ended before the session started or while collection
 * was paused are not recorded (no frame holds that time); a scope that began before and
 * ends after is recorded with its true start (possibly before the session's time 0) and is
 * listed open in the frames in between, so its children always find it.
 *
 * Frame full (more than max_frame_scopes ended + open): the cap is shared between threads,
 * each getting min(its scopes, an equal share) and what one does not use going to the
 * others; within a thread scopes are kept by depth, outermost first, so no kept scope loses
 * its parent. The rest counts as VOR_DROP_FRAME_FULL for that thread. A site that cannot be
 * registered (the site table is full) drops its scope and its descendants.
 *
 * Long-open scopes: a tick always maps to the same ns, but the timeline keeps only its
 * recent points; each thread remembers the ns its open scopes' starts were given, so a
 * scope open for longer than that history keeps them.
 */
#include <stdlib.h>
#include <string.h>

#include "frame_threads.h"
#include "scope_order.h"

#define DROP_CAUSES 6
#define PRUNED 0x80000000u /* internal mark in flags while a thread's scopes are filtered */

typedef struct thread_take {
    vor_thread *t;
    uint64_t head;       /* head read after the stack */
    uint64_t ready_end;  /* [tail, ready_end): ended by T */
    uint32_t n_open;     /* open at T; for a thread that exited, left open at its exit */
    int final;           /* exited by T: drained whole, closed, freed */
    uint64_t demand;     /* scopes it would add, ended and open */
    uint64_t allot;      /* frame full: what it may add */
    uint32_t keep_depth; /* frame full: keep depths below this ... */
    uint64_t keep_at;    /* ... and this many at it */
} thread_take;

static struct {
    uint64_t discard_before; /* scopes that ended before this tick are not recorded */
    vor_scope_record *scopes;
    uint64_t capacity;
    thread_take takes[VOR_MAX_MAX_THREADS];
    vor_thread_record threads[VOR_MAX_MAX_THREADS];
    uint64_t thread_first[VOR_MAX_MAX_THREADS];
    vor_reader_drop drops[VOR_MAX_MAX_THREADS * DROP_CAUSES + 1];
    uint32_t n_drops;
    /* The window of the thread being read: its first event at each depth. */
    uint32_t win_stamp[VOR_MAX_DEPTH];
    uint32_t stamp;
    uint64_t win_start[VOR_MAX_DEPTH];
    vor_site *win_site[VOR_MAX_DEPTH];
    uint32_t last_at[VOR_MAX_DEPTH];
    uint64_t hist[VOR_MAX_DEPTH];
} ft;

/* Ended before the session started or while collection was paused. (A scope ending at the
 * very tick of the resume, which a coarse clock can make of one ending just before it, is
 * kept: it lies at the start of the frame, and nothing is lost at a session's start.) */
static int is_discarded(uint64_t end_tick) {
    return (int64_t)(end_tick - ft.discard_before) < 0;
}

void vor_frame_threads_begin_session(uint64_t tick) {
    free(ft.scopes); /* NULL after a shutdown; still there in a child forked mid-session */
    ft.scopes = NULL;
    ft.capacity = 0;
    ft.discard_before = tick;
    /* Buffers of threads still running keep their events; what they remember of the last
     * session's timeline and drops is forgotten. */
    uint32_t slots = vor_thread_slot_count();
    for (uint32_t s = 0; s < slots; s++) {
        vor_thread *t = vor_thread_slot(s);
        if (t == NULL) continue;
        t->seen_valid = 0;
        t->dropped_full_seen = vor_atomic_load_relaxed(&t->dropped_full);
        t->dropped_deep_seen = vor_atomic_load_relaxed(&t->dropped_deep);
        t->filtered_seen = vor_atomic_load_relaxed(&t->filtered);
        t->unbalanced_seen = vor_atomic_load_relaxed(&t->unbalanced);
    }
}

void vor_frame_threads_end_session(void) {
    /* Threads that exited since the last frame: their buffers are not needed any more. */
    uint32_t slots = vor_thread_slot_count();
    for (uint32_t s = 0; s < slots; s++) {
        vor_thread *t = vor_thread_slot(s);
        if (t && vor_atomic_load_acquire(&t->exited)) vor_thread_release(t);
    }
    free(ft.scopes);
    ft.scopes = NULL;
    ft.capacity = 0;
}

void vor_frame_threads_resume(uint64_t tick) {
    ft.discard_before = tick;
}

/* ---- Reading one thread ---------------------------------------------------------------- */

static void gather(thread_take *k, vor_thread *t, uint64_t T) {
    memset(k, 0, sizeof *k);
    k->t = t;
    if (!t->seen_valid) {
        for (uint32_t i = 0; i < VOR_MAX_DEPTH; i++) t->seen_start[i] = UINT64_MAX;
        t->seen_valid = 1;
    }
    k->final = vor_atomic_load_acquire(&t->exited) && (int64_t)(t->exit_tick - T) <= 0;
    uint32_t n = 0;
    if (k->final) {
        /* Its stack is frozen: what it left open, closed below at its exit. */
        n = t->open_at_exit < VOR_MAX_DEPTH ? t->open_at_exit : VOR_MAX_DEPTH;
        for (uint32_t i = 0; i < n; i++) {
            t->snap_start[i] = vor_atomic_load_relaxed(&t->open[i].start);
            t->snap_site[i] = vor_atomic_load_relaxed(&t->open[i].site);
        }
        k->head = vor_atomic_load_acquire(&t->head);
        k->ready_end = k->head;
    } else {
        /* h1, the stack, h2: see the top of the file. */
        uint64_t h1 = vor_atomic_load_acquire(&t->head);
        uint32_t d = vor_atomic_load_acquire(&t->depth);
        if (d > VOR_MAX_DEPTH) d = VOR_MAX_DEPTH;
        for (uint32_t i = 0; i < d; i++) {
            uint64_t s1 = vor_atomic_load_acquire(&t->open[i].start);
            vor_site *site = vor_atomic_load_acquire(&t->open[i].site);
            uint64_t s2 = vor_atomic_load_acquire(&t->open[i].start);
            t->snap_start[i] = s1;
            t->snap_site[i] = s1 == s2 && (int64_t)(s1 - T) <= 0 ? site : NULL;
        }
        k->head = vor_atomic_load_acquire(&t->head);
        k->ready_end = vor_ring_ended_by(t, h1, T);
        vor_ring_cursor c = vor_ring_reader(t);
        if (k->ready_end == h1 && h1 != t->tail) {
            /* The last event before h1 is the one pop whose depth may not have been lowered
             * yet when the depth was read: then the stack still shows its scope. */
            const vor_event *last = vor_ring_peek(&c, h1 - 1);
            if (last->depth < d && t->snap_site[last->depth] == last->site && t->snap_start[last->depth] == last->start)
                d = last->depth;
            c = vor_ring_reader(t);
        }
        /* The window: the first event at each depth among those after the ended ones. Its
         * depth-0 event ends the search: every scope open at T below it ended before it. */
        uint32_t stamp = ++ft.stamp;
        for (uint64_t i = k->ready_end; i < k->head; i++) {
            const vor_event *e = vor_ring_peek(&c, i);
            uint32_t ed = e->depth;
            if (ed < VOR_MAX_DEPTH && ft.win_stamp[ed] != stamp) {
                ft.win_stamp[ed] = stamp;
                ft.win_start[ed] = e->start;
                ft.win_site[ed] = e->site;
            }
            if (ed == 0) break;
        }
        for (; n < VOR_MAX_DEPTH; n++) {
            if (ft.win_stamp[n] == stamp) {
                if ((int64_t)(ft.win_start[n] - T) > 0) break; /* began after T */
                t->snap_start[n] = ft.win_start[n];
                t->snap_site[n] = ft.win_site[n];
            } else if (n >= d || t->snap_site[n] == NULL) {
                break;
            }
        }
    }
    k->n_open = n;
    k->demand = (k->ready_end - t->tail) + n;
    k->keep_depth = UINT32_MAX;
}

/* ---- Sharing a full frame ------------------------------------------------------------- */

/* Counts a thread's scopes by depth (pause discards left out); returns the total. */
static uint64_t count_by_depth(thread_take *k) {
    vor_thread *t = k->t;
    memset(ft.hist, 0, sizeof ft.hist);
    uint64_t total = 0;
    vor_ring_cursor c = vor_ring_reader(t);
    for (uint64_t i = t->tail; i < k->ready_end; i++) {
        const vor_event *e = vor_ring_peek(&c, i);
        if (is_discarded(e->end)) continue;
        ft.hist[e->depth < VOR_MAX_DEPTH ? e->depth : VOR_MAX_DEPTH - 1]++;
        total++;
    }
    if (!k->final || !is_discarded(k->t->exit_tick)) {
        for (uint32_t i = 0; i < k->n_open; i++) ft.hist[i]++;
        total += k->n_open;
    }
    return total;
}

static int compare_demand(const void *a, const void *b) {
    uint64_t x = ft.takes[*(const uint32_t *)a].demand, y = ft.takes[*(const uint32_t *)b].demand;
    return (x > y) - (x < y);
}

/* Water-filling: each thread gets min(its demand, an equal share of what is left). */
static void share_fairly(uint32_t n, uint64_t cap) {
    static uint32_t order[VOR_MAX_MAX_THREADS];
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        ft.takes[i].demand = count_by_depth(&ft.takes[i]);
        total += ft.takes[i].demand;
        order[i] = i;
    }
    if (total <= cap) return;
    qsort(order, n, sizeof order[0], compare_demand);
    uint64_t left = cap;
    for (uint32_t i = 0; i < n; i++) {
        thread_take *k = &ft.takes[order[i]];
        uint64_t share = left / (n - i);
        k->allot = k->demand < share ? k->demand : share;
        left -= k->allot;
        if (k->allot == k->demand) continue;
        /* Keep the outermost depths that fit, and part of the next one. */
        count_by_depth(k);
        uint64_t kept = 0;
        uint32_t depth = 0;
        while (depth < VOR_MAX_DEPTH && kept + ft.hist[depth] <= k->allot) kept += ft.hist[depth++];
        k->keep_depth = depth;
        k->keep_at = k->allot - kept;
    }
}

/* Whether a scope at `depth` is kept under the thread's share (counts down the part). */
static int keep(thread_take *k, uint32_t depth) {
    if (depth < k->keep_depth) return 1;
    if (depth == k->keep_depth && k->keep_at > 0) {
        k->keep_at--;
        return 1;
    }
    return 0;
}

/* ---- Writing one thread's scopes ------------------------------------------------------ */

/* A start tick in ns. Ticks of the frame's line map directly (the remembered starts were
 * given the same ns); an older tick may be a scope open for longer than the timeline's
 * history, whose ns was remembered when it was first seen open. */
static inline int64_t map_start(const vor_thread *t, uint32_t depth, uint64_t tick, const vor_clock_map *map) {
    if (VOR_LIKELY(map->identity || (int64_t)(tick - map->base_tick) >= 0)) return vor_clock_map_ns(map, tick);
    if (depth < VOR_MAX_DEPTH && t->seen_start[depth] == tick) return t->seen_start_ns[depth];
    return vor_timeline_map(tick);
}

/* Sites are registered here, by the frame thread only, so the id is read unlocked. 0 when
 * the table is full. */
static uint32_t site_id(vor_site *site) {
    if (VOR_UNLIKELY(site == NULL)) return 0;
    return VOR_LIKELY(site->id != 0) ? site->id : vor_site_register(site);
}

static void add_drop(uint32_t cause, uint32_t thread_id, uint64_t count) {
    if (count == 0 || ft.n_drops >= sizeof ft.drops / sizeof ft.drops[0]) return;
    vor_reader_drop *d = &ft.drops[ft.n_drops++];
    d->cause = cause;
    d->thread_id = thread_id;
    d->count = count;
}

/* The start of the scope after ended scope i at its depth (the first later ended one at a
 * depth <= its own, if at its depth, else the open one at its depth), INT64_MAX if none. */
static int64_t next_sibling_start(const vor_scope_record *s, uint32_t i, uint32_t n_ended, uint32_t n) {
    uint32_t d = s[i].depth;
    for (uint32_t j = i + 1; j < n_ended; j++) {
        if (s[j].depth > d) continue;
        return s[j].depth == d ? s[j].start_ns : INT64_MAX;
    }
    return n_ended + d < n ? s[n_ended + d].start_ns : INT64_MAX;
}

/* An end published after the previous frame was assembled (the thread was preempted inside
 * vor_scope_end, or its store was still on its way) has a tick before this frame: that
 * frame listed the scope open to its end, so it is shown ending at this frame's start, or
 * earlier if its next sibling began earlier or its parent ends earlier (so scopes of one
 * thread still nest). Parents are linked already; they come after their children (or are
 * open), so a backward pass sees each parent's final end first. Rare: a scope or two per
 * thread and frame. */
static void clamp_late_ends(vor_scope_record *s, uint32_t n_ended, uint32_t n, int64_t frame_start) {
    for (uint32_t i = n_ended; i-- > 0;) {
        int64_t end = s[i].start_ns + s[i].duration_ns;
        if (VOR_LIKELY(end >= frame_start)) continue;
        int64_t limit = frame_start;
        int64_t sibling = next_sibling_start(s, i, n_ended, n);
        if (sibling < limit) limit = sibling;
        uint32_t p = s[i].parent;
        if (p < n && s[p].start_ns + s[p].duration_ns < limit) limit = s[p].start_ns + s[p].duration_ns;
        if (limit > end) s[i].duration_ns = limit - s[i].start_ns;
    }
}

/* Removes the scopes marked PRUNED and their descendants; returns how many went. */
static uint32_t prune(vor_scope_record *s, uint32_t *n_ended, uint32_t *n_open) {
    uint32_t ne = *n_ended, no = *n_open, gone = 0;
    for (uint32_t i = ne; i < ne + no; i++)
        if (i > ne && (s[i - 1].flags & PRUNED)) s[i].flags |= PRUNED;
    for (uint32_t i = ne; i-- > 0;) {
        uint32_t p = s[i].parent;
        if (p < ne + no && (s[p].flags & PRUNED)) s[i].flags |= PRUNED;
    }
    uint32_t w = 0, kept_ended = 0;
    for (uint32_t i = 0; i < ne + no; i++) {
        if (s[i].flags & PRUNED) {
            gone++;
            continue;
        }
        if (i < ne) kept_ended++;
        s[w++] = s[i];
    }
    *n_ended = kept_ended;
    *n_open = w - kept_ended;
    return gone;
}

/* Fills one scope record (times in ns since the session's epoch). */
static void put_scope(vor_scope_record *r, uint32_t id, uint32_t depth, int64_t start, int64_t end, uint32_t flags,
                      int64_t epoch) {
    r->site_id = id;
    r->depth = depth;
    r->start_ns = start - epoch;
    r->duration_ns = end > start ? end - start : 0;
    r->parent = VOR_PARENT_UNKNOWN;
    r->flags = flags | (id ? 0 : PRUNED);
}

/* The drain's common case, every event of [i, end) kept (the frame is not full):
 * a chunk at a time, ticks of the frame's line mapped inline (the formula of
 * vor_clock_map_ns, so a tick maps to the same ns as anywhere else), the site id and
 * flags of the previous event reused. The frame thread reads every recorded scope here,
 * so this loop is most of the drain's cost per scope. */
typedef struct fast_state {
    const vor_thread *t;
    const vor_clock_map *map;
    uint64_t base_tick;
    int64_t base_ns, epoch; /* base_ns relative to the epoch */
    double ns_per_tick;
    const vor_site *last_site;
    uint32_t last_id, last_flags;
    int missing;     /* a site without an id (the table is full) */
    int64_t min_end; /* relative to the epoch */
} fast_state;

static inline __attribute__((always_inline)) vor_scope_record *
emit_run(fast_state *f, const vor_event *e, const vor_event *stop, vor_scope_record *r, const int identity) {
    int64_t min_end = f->min_end;
    for (; e < stop; e++, r++) {
        vor_site *site = e->site;
        if (VOR_UNLIKELY(site != f->last_site)) {
            f->last_site = site;
            f->last_id = site_id(site);
            f->last_flags = f->last_id ? 0 : PRUNED;
            f->missing |= f->last_id == 0;
        }
        int64_t start, stop_ns;
        if (identity) { /* ticks are ns (a fake or a nanosecond clock) */
            start = (int64_t)e->start - f->epoch;
            stop_ns = (int64_t)e->end - f->epoch;
        } else {
            int64_t ds = (int64_t)(e->start - f->base_tick), de = (int64_t)(e->end - f->base_tick);
            start = VOR_LIKELY(ds >= 0) ? f->base_ns + (int64_t)((double)ds * f->ns_per_tick)
                                        : map_start(f->t, e->depth, e->start, f->map) - f->epoch;
            stop_ns = VOR_LIKELY(de >= 0) ? f->base_ns + (int64_t)((double)de * f->ns_per_tick)
                                          : vor_clock_map_ns(f->map, e->end) - f->epoch;
        }
        r->site_id = f->last_id;
        r->depth = e->depth;
        r->start_ns = start;
        r->duration_ns = stop_ns > start ? stop_ns - start : 0;
        r->flags = f->last_flags | e->flags; /* parent: vor_scopes_link_parents sets every one, below */
        min_end = stop_ns < min_end ? stop_ns : min_end;
    }
    f->min_end = min_end;
    return r;
}

/* Returns the scopes written at out[0..]. */
static uint32_t emit_ended_fast(vor_ring_cursor *c, uint64_t i, uint64_t end, const vor_thread *t,
                                vor_scope_record *out, const vor_clock_map *map, int64_t frame_start_ns, int64_t epoch,
                                uint32_t *unregistered, int *late) {
    fast_state f = {t, map, map->base_tick, map->base_ns - epoch, epoch, map->ns_per_tick, NULL, 0, 0, 0, INT64_MAX};
    vor_scope_record *r = out;
    while (i < end) {
        const vor_event *e = vor_ring_peek(c, i);
        uint64_t in_chunk = VOR_RING_CHUNK_EVENTS - (i - c->base);
        uint64_t run = end - i < in_chunk ? end - i : in_chunk;
        r = map->identity ? emit_run(&f, e, e + run, r, 1) : emit_run(&f, e, e + run, r, 0);
        i += run;
    }
    *unregistered += (uint32_t)f.missing;
    *late |= f.min_end < frame_start_ns - epoch;
    return (uint32_t)(r - out);
}

/* Appends a thread's scopes at ft.scopes[first..]; returns how many. */
static uint32_t emit(thread_take *k, uint64_t first, const vor_clock_map *map, int64_t frame_start_ns,
                     int64_t frame_end_ns, int64_t epoch, uint64_t *dropped, uint64_t *open_at_exit) {
    vor_thread *t = k->t;
    vor_scope_record *out = ft.scopes ? ft.scopes + first : NULL; /* NULL: a frame with no scope */
    uint32_t n = 0, unregistered = 0;
    uint64_t frame_full = 0;

    /* Ended in the frame, in end order. Those that ended before the session or during a
     * pause are a prefix (end order): skipped first. */
    vor_ring_cursor c = vor_ring_reader(t);
    uint64_t from = t->tail;
    while (from < k->ready_end && is_discarded(vor_ring_peek(&c, from)->end)) from++;
    int late = 0; /* an end before the frame's start: clamp_late_ends has work */
    if (VOR_LIKELY(k->keep_depth == UINT32_MAX)) {
        n = emit_ended_fast(&c, from, k->ready_end, t, out, map, frame_start_ns, epoch, &unregistered, &late);
    } else {
        for (uint64_t i = from; i < k->ready_end; i++) {
            const vor_event *e = vor_ring_peek(&c, i);
            if (!keep(k, e->depth)) {
                frame_full++;
                continue;
            }
            uint32_t id = site_id(e->site);
            int64_t start = map_start(t, e->depth, e->start, map);
            int64_t end = vor_clock_map_ns(map, e->end); /* before the frame if published late: see below */
            put_scope(&out[n++], id, e->depth, start, end, e->flags, epoch);
            unregistered += id == 0;
            late |= end < frame_start_ns;
        }
    }
    vor_ring_consume(t, k->ready_end);
    uint32_t n_ended;

    if (k->final) {
        /* Left open when the thread exited: closed at its exit, innermost first. */
        int64_t exit_ns = vor_clock_map_ns(map, t->exit_tick);
        if (!is_discarded(t->exit_tick)) {
            for (uint32_t i = k->n_open; i-- > 0;) {
                if (!keep(k, i)) {
                    frame_full++;
                    continue;
                }
                uint32_t id = site_id(t->snap_site[i]);
                int64_t start = map_start(t, i, t->snap_start[i], map);
                put_scope(&out[n++], id, i, start, exit_ns, VOR_SCOPE_UNWOUND, epoch);
                unregistered += id == 0;
            }
        }
        if (t->open_at_exit) {
            vor_log_n(VOR_LOG_OPEN_AT_THREAD_EXIT, t->open_at_exit);
            *open_at_exit += t->open_at_exit;
            if (t->open_at_exit > VOR_MAX_DEPTH) { /* too deep to have been kept */
                uint64_t deep = t->open_at_exit - VOR_MAX_DEPTH;
                vor_log_n(VOR_LOG_DEPTH_OVERFLOW, deep);
                add_drop(VOR_DROP_TOO_DEEP, t->thread_id, deep);
                *dropped += deep;
            }
        }
        n_ended = n;
    } else {
        n_ended = n;
        /* Open at the frame's end, outermost first; their starts are remembered. */
        for (uint32_t i = 0; i < k->n_open; i++) {
            int64_t start = map_start(t, i, t->snap_start[i], map);
            t->seen_start[i] = t->snap_start[i];
            t->seen_start_ns[i] = start;
            if (!keep(k, i)) {
                frame_full++;
                continue;
            }
            uint32_t id = site_id(t->snap_site[i]);
            put_scope(&out[n++], id, i, start, frame_end_ns, VOR_SCOPE_OPEN, epoch);
            unregistered += id == 0;
        }
    }
    uint32_t n_open = n - n_ended;
    vor_scopes_link_parents(out, n_ended, n_open, ft.last_at, VOR_MAX_DEPTH);
    if (VOR_UNLIKELY(late || k->final)) clamp_late_ends(out, n_ended, n, frame_start_ns - epoch);
    if (VOR_UNLIKELY(unregistered)) {
        uint32_t gone = prune(out, &n_ended, &n_open);
        n = n_ended + n_open;
        vor_scopes_link_parents(out, n_ended, n_open, ft.last_at, VOR_MAX_DEPTH);
        add_drop(VOR_DROP_SITE_TABLE_FULL, t->thread_id, gone);
        *dropped += gone;
    }
    if (frame_full) {
        vor_log_n(VOR_LOG_FRAME_RECORD_FULL, frame_full);
        add_drop(VOR_DROP_FRAME_FULL, t->thread_id, frame_full);
        *dropped += frame_full;
    }

    /* Drops the producer counted since the last frame. */
    uint64_t full = vor_atomic_load_relaxed(&t->dropped_full);
    uint64_t deep = vor_atomic_load_relaxed(&t->dropped_deep);
    uint64_t unbalanced = vor_atomic_load_relaxed(&t->unbalanced);
    uint64_t filtered = vor_atomic_load_relaxed(&t->filtered);
    if (filtered != t->filtered_seen) { /* left out on purpose: not counted as dropped */
        add_drop(VOR_DROP_FILTERED, t->thread_id, filtered - t->filtered_seen);
        t->filtered_seen = filtered;
    }
    if (full != t->dropped_full_seen) {
        vor_log_n(VOR_LOG_THREAD_BUFFER_FULL, full - t->dropped_full_seen);
        add_drop(VOR_DROP_THREAD_BUFFER_FULL, t->thread_id, full - t->dropped_full_seen);
        *dropped += full - t->dropped_full_seen;
        t->dropped_full_seen = full;
    }
    if (deep != t->dropped_deep_seen) {
        vor_log_n(VOR_LOG_DEPTH_OVERFLOW, deep - t->dropped_deep_seen);
        add_drop(VOR_DROP_TOO_DEEP, t->thread_id, deep - t->dropped_deep_seen);
        *dropped += deep - t->dropped_deep_seen;
        t->dropped_deep_seen = deep;
    }
    if (unbalanced != t->unbalanced_seen) {
        vor_log_n(VOR_LOG_UNBALANCED_END, unbalanced - t->unbalanced_seen);
        t->unbalanced_seen = unbalanced;
    }

    k->n_open = n_open; /* what the record lists */
    return n;
}

/* Makes room for `n` scope records (up to the cap); returns the room there is. */
static uint64_t reserve(uint64_t n) {
    if (n <= ft.capacity) return ft.capacity;
    uint64_t grown = ft.capacity ? ft.capacity : 4096;
    while (grown < n) grown *= 2;
    if (grown > vor_settings_now.max_frame_scopes) grown = vor_settings_now.max_frame_scopes;
    if (grown <= ft.capacity) return ft.capacity;
    vor_scope_record *p = realloc(ft.scopes, grown * sizeof *p);
    if (p == NULL) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "frame record of %llu scopes", (unsigned long long)grown);
        return ft.capacity;
    }
    ft.scopes = p;
    ft.capacity = grown;
    return grown;
}

void vor_frame_threads_collect(vor_timeline_point start, vor_timeline_point end, vor_frame_scopes *out) {
    memset(out, 0, sizeof *out);
    vor_clock_map map = vor_timeline_segment(start.tick);
    int64_t epoch = (int64_t)vor_session_now.epoch_ns;
    ft.n_drops = 0;

    uint32_t n = 0;
    uint64_t total = 0;
    uint32_t slots = vor_thread_slot_count();
    for (uint32_t s = 0; s < slots; s++) {
        vor_thread *t = vor_thread_slot(s);
        if (t == NULL) continue;
        gather(&ft.takes[n], t, end.tick);
        total += ft.takes[n].demand;
        n++;
    }
    uint64_t cap = vor_settings_now.max_frame_scopes;
    uint64_t room = reserve(total < cap ? total : cap);
    if (room < cap) cap = room; /* out of memory: what there is */
    if (total > cap) share_fairly(n, cap);

    uint64_t refused = vor_atomic_exchange(&vor_refused_scopes, 0);
    add_drop(VOR_DROP_THREAD_REFUSED, 0, refused);
    out->dropped = refused;
    uint64_t used = 0;
    uint32_t n_threads = 0;
    for (uint32_t i = 0; i < n; i++) {
        thread_take *k = &ft.takes[i];
        uint32_t thread_id = k->t->thread_id;
        uint32_t added = emit(k, used, &map, start.ns, end.ns, epoch, &out->dropped, &out->open_at_exit);
        if (k->final) vor_thread_release(k->t);
        if (added == 0) continue;
        vor_thread_record *r = &ft.threads[n_threads];
        r->thread_id = thread_id;
        r->n_scopes = added - k->n_open;
        r->n_open = k->n_open;
        ft.thread_first[n_threads++] = used;
        out->n_scopes += added - k->n_open;
        out->n_open += k->n_open;
        used += added;
    }
    for (uint32_t i = 0; i < n_threads; i++) ft.threads[i].scopes = ft.scopes + ft.thread_first[i];
    out->n_threads = n_threads;
    out->threads = ft.threads;
    out->n_drops = ft.n_drops;
    out->drops = ft.drops;
}
