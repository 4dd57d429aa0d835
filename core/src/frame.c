/* frame.c: vor_frame_mark() and the assembly of one frame record.
 *
 * Closing frame i, under the frame lock:
 *   1. take a (tick, ns) clock anchor and add the frame's end point to the session's
 *      timeline (clock.h): the frame is [previous point, this point), frames are
 *      contiguous, and every tick maps through the one monotone timeline, so a scope lies
 *      within [start of the frame it began in, end of the frame it ended in];
 *   2. drain every thread's ring: each event becomes a vor_scope_record (site id, depth,
 *      start and duration in ns since the session epoch), grouped by thread in end order;
 *      rings whose threads exited are freed after their last events;
 *   3. sample the system columns, snapshot the user metrics, take the I/O totals;
 *   4. hand the record to every consumer, add the frame time to the statistics.
 * The record's arrays are reused from frame to frame: scopes grow up to
 * max_frame_scopes and no further; beyond, scopes are dropped and counted.
 *
 * Overhead attributed to a frame: the cost of the vor_frame_mark() that opened it (its
 * own measured time, consumers included) plus its scope count times the calibrated cost
 * of an empty scope. The panel shows it as the profiler's per-frame cost.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "scope_order.h"
#include "vor_internal.h"

typedef struct frame_assembly {
    vor_timeline_point opened;     /* the current frame's start on the timeline */
    uint64_t index;                /* index of the current frame */
    uint64_t discard_before_tick;  /* events that began before this are from a pause */
    int64_t last_mark_cost_ns;     /* cost of the vor_frame_mark that opened this frame */
    double empty_span_ns;
    vor_scope_record *scopes;
    uint32_t scopes_capacity;
    vor_thread_record threads[VOR_MAX_MAX_THREADS];
    uint32_t thread_first[VOR_MAX_MAX_THREADS];
    vor_user_value user[VOR_MAX_USER_COLUMNS];
    uint32_t n_system;
    uintptr_t owner;               /* atomic: the frame thread's marker, 0 = none yet */
    /* Session totals for vor_get_counters. */
    uint64_t frames, scopes_recorded, scopes_dropped, open_at_exit;
} frame_assembly;

static frame_assembly fa;

static VOR_TLS char frame_thread_marker;

/* Makes room for one more scope record; 0 when the cap is reached or memory is short. */
static int reserve_scope(uint32_t n) {
    if (n < fa.scopes_capacity) return 1;
    uint32_t cap = vor_settings_now.max_frame_scopes;
    if (fa.scopes_capacity >= cap) return 0;
    uint32_t grown = fa.scopes_capacity ? fa.scopes_capacity * 2 : 4096;
    if (grown > cap) grown = cap;
    vor_scope_record *p = realloc(fa.scopes, (size_t)grown * sizeof *p);
    if (p == NULL) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "frame record of %u scopes", grown);
        return 0;
    }
    fa.scopes = p;
    fa.scopes_capacity = grown;
    return 1;
}

int vor_frames_begin_session(void) {
    free(fa.scopes); /* NULL after a shutdown; still there in a child forked mid-session */
    memset(&fa, 0, sizeof fa);
    vor_clock_anchor epoch = {vor_session_now.epoch_tick, vor_session_now.epoch_ns, 0};
    vor_timeline_reset(epoch);
    fa.opened = vor_timeline_last();
    fa.discard_before_tick = vor_session_now.epoch_tick;
    fa.n_system = vor_columns_begin_session();
    fa.empty_span_ns = vor_empty_span_ns_locked();
    vor_clock_info info;
    vor_clock_get_info(&info); /* the clock's resolution, measured once, before outputs ask */
    return 1;
}

void vor_frames_end_session(void) {
    /* Threads that exited since the last frame: their buffers are not needed any more. */
    uint32_t slots = vor_thread_slot_count();
    for (uint32_t s = 0; s < slots; s++) {
        vor_thread *t = vor_thread_slot(s);
        if (t && vor_atomic_load_acquire(&t->exited)) vor_thread_release(t);
    }
    free(fa.scopes);
    fa.scopes = NULL;
    fa.scopes_capacity = 0;
    vor_atomic_store_relaxed(&fa.owner, (uintptr_t)0);
}

void vor_frames_restart(void) {
    fa.opened = vor_timeline_close(vor_clock_anchor_now());
    fa.discard_before_tick = fa.opened.tick;
    fa.last_mark_cost_ns = 0;
    vor_system_begin_session();
    uint64_t ns, bytes;
    vor_io_drain(&ns, &bytes);
}

/* Drains one thread's ring into the record; returns the number of scopes it added.
 * Events are in end order, so the drain stops at the first scope that ended after the
 * frame's closing anchor (`close_tick`): it belongs to the next frame. A thread that
 * exited is drained whole, its buffer is freed right after. */
static uint32_t drain_thread(vor_thread *t, const vor_clock_map *map, uint64_t close_tick, uint32_t n_scopes,
                             uint64_t *dropped) {
    int exited = vor_atomic_load_acquire(&t->exited);
    uint64_t head = vor_atomic_load_acquire(&t->head);
    uint64_t tail = t->tail;
    uint32_t first = n_scopes;
    int64_t epoch = (int64_t)vor_session_now.epoch_ns;
    uint64_t discard_before = fa.discard_before_tick;
    /* Ticks that are nanoseconds already (the OS clock, and always in wasm) map to
     * themselves: no conversion per scope. */
    int identity = vor_clock_ticks_are_ns();

    for (; tail != head; tail++) {
        const vor_event *e = &t->events[tail & t->mask];
        if (!exited && (int64_t)(e->end - close_tick) > 0) break; /* ended after this frame */
        if ((int64_t)(e->start - discard_before) < 0) continue; /* began before this session or pause */
        if (!reserve_scope(n_scopes)) {
            uint64_t lost = head - tail;
            *dropped += lost;
            vor_log_n(VOR_LOG_FRAME_RECORD_FULL, lost);
            tail = head;
            break;
        }
        /* Sites are registered here, by the frame thread only, so the id is read unlocked. */
        uint32_t id = e->site->id;
        if (VOR_UNLIKELY(id == 0)) {
            id = vor_site_register(e->site);
            if (id == 0) {
                (*dropped)++;
                continue;
            }
        }
        int64_t start, end;
        if (identity) {
            start = (int64_t)e->start;
            end = (int64_t)e->end;
        } else {
            /* A scope that began in an earlier frame maps through the timeline's points. */
            start = (int64_t)(e->start - map->base_tick) < 0 ? vor_timeline_map(e->start) : vor_clock_map_ns(map, e->start);
            end = vor_clock_map_ns(map, e->end);
        }
        vor_scope_record *r = &fa.scopes[n_scopes++];
        r->site_id = id;
        r->depth = e->depth;
        r->start_ns = start - epoch;
        r->duration_ns = end > start ? end - start : 0;
        r->parent = VOR_PARENT_UNKNOWN;
        r->flags = 0;
    }
    vor_atomic_store_release(&t->tail, tail);

    /* Drops the producer counted since the last frame. */
    uint64_t full = vor_atomic_load_relaxed(&t->dropped_full);
    uint64_t deep = vor_atomic_load_relaxed(&t->dropped_deep);
    uint64_t unbalanced = vor_atomic_load_relaxed(&t->unbalanced);
    if (full != t->dropped_full_seen) {
        vor_log_n(VOR_LOG_THREAD_BUFFER_FULL, full - t->dropped_full_seen);
        *dropped += full - t->dropped_full_seen;
        t->dropped_full_seen = full;
    }
    if (deep != t->dropped_deep_seen) {
        vor_log_n(VOR_LOG_DEPTH_OVERFLOW, deep - t->dropped_deep_seen);
        *dropped += deep - t->dropped_deep_seen;
        t->dropped_deep_seen = deep;
    }
    if (unbalanced != t->unbalanced_seen) {
        vor_log_n(VOR_LOG_UNBALANCED_END, unbalanced - t->unbalanced_seen);
        t->unbalanced_seen = unbalanced;
    }
    if (exited) {
        if (t->open_at_exit) {
            vor_log_n(VOR_LOG_OPEN_AT_THREAD_EXIT, t->open_at_exit);
            fa.open_at_exit += t->open_at_exit;
        }
        vor_thread_release(t);
    }
    return n_scopes - first;
}

void vor_frame_mark(void) {
    if (!vor_internal_is_collecting()) return;

    uintptr_t me = (uintptr_t)&frame_thread_marker;
    uintptr_t owner = vor_atomic_load_acquire(&fa.owner);
    if (VOR_UNLIKELY(owner != me)) {
        uintptr_t expected = 0;
        if (owner != 0 || !vor_atomic_cas(&fa.owner, &expected, me)) {
            vor_log(VOR_LOG_FRAME_MARK_OTHER_THREAD, NULL);
            return;
        }
    }

    uint64_t entered = vor_clock_ticks();
    if (!vor_frame_lock_acquire()) return; /* called back from a logger or consumer */
    if (!vor_session_now.active) {
        vor_frame_lock_release();
        return;
    }

    vor_timeline_point now = vor_timeline_close(vor_clock_anchor_now());
    vor_clock_map map = vor_clock_map_between(fa.opened, now);

    vor_frame_record rec;
    memset(&rec, 0, sizeof rec);
    rec.index = fa.index;
    rec.start_ns = fa.opened.ns - (int64_t)vor_session_now.epoch_ns;
    rec.duration_ns = now.ns - fa.opened.ns;

    /* Scopes, thread by thread. */
    uint32_t n_scopes = 0, n_threads = 0;
    uint64_t dropped = vor_atomic_exchange(&vor_refused_scopes, 0);
    uint32_t slots = vor_thread_slot_count();
    for (uint32_t s = 0; s < slots; s++) {
        vor_thread *t = vor_thread_slot(s);
        if (t == NULL) continue;
        uint32_t thread_id = t->thread_id;
        uint32_t added = drain_thread(t, &map, now.tick, n_scopes, &dropped); /* may free t */
        if (added) {
            uint32_t last_at[VOR_MAX_DEPTH];
            vor_scopes_link_parents(fa.scopes + n_scopes, added, 0, last_at, VOR_MAX_DEPTH);
            fa.threads[n_threads].thread_id = thread_id;
            fa.threads[n_threads].n_scopes = added;
            fa.threads[n_threads].n_open = 0;
            fa.thread_first[n_threads] = n_scopes;
            n_threads++;
            n_scopes += added;
        }
    }
    for (uint32_t i = 0; i < n_threads; i++) fa.threads[i].scopes = fa.scopes + fa.thread_first[i];
    rec.n_threads = n_threads;
    rec.threads = fa.threads;
    rec.n_scopes = n_scopes;
    rec.dropped_scopes = dropped;

    /* Metrics. */
    uint64_t io_ns, io_bytes;
    vor_io_drain(&io_ns, &io_bytes);
    rec.n_system = fa.n_system;
    rec.system_present = vor_system_sample(rec.system_raw, rec.duration_ns, io_ns, io_bytes);
    rec.n_user = vor_columns_snapshot_user(fa.user, VOR_MAX_USER_COLUMNS);
    rec.user = fa.user;
    rec.overhead_ns = fa.last_mark_cost_ns + (int64_t)((double)n_scopes * fa.empty_span_ns);

    vor_consumers_frame(&rec);
    vor_frame_stats_add((uint64_t)rec.duration_ns);

    fa.frames++;
    fa.scopes_recorded += n_scopes;
    fa.scopes_dropped += dropped;
    fa.index++;
    fa.opened = now;

    uint64_t left = vor_clock_ticks();
    fa.last_mark_cost_ns = (int64_t)((double)(left - entered) * vor_clock_ns_per_tick());
    vor_frame_lock_release();
}

void vor_get_counters(vor_counters *out) {
    if (out == NULL) return;
    int locked = vor_frame_lock_acquire(); /* 0: called back from inside vor, which holds it */
    out->frames = fa.frames;
    out->scopes_recorded = fa.scopes_recorded;
    out->scopes_dropped = fa.scopes_dropped;
    out->unbalanced_ends = vor_log_count(VOR_LOG_UNBALANCED_END);
    out->open_at_exit = fa.open_at_exit;
    out->threads = vor_threads_registered();
    if (locked) vor_frame_lock_release();
}
