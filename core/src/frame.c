/* frame.c: vor_frame_mark() and the assembly of one frame record.
 *
 * Closing frame i, under the frame lock:
 *   1. take a (tick, ns) clock anchor and add the frame's end point to the session's
 *      timeline (clock.h): the frame is [previous point, this point), frames are
 *      contiguous, and every tick maps through the one monotone timeline, so a scope lies
 *      within [start of the frame it began in, end of the frame it ended in];
 *   2. collect every thread's scopes (frame_threads.c): those that ended in the frame,
 *      those still open at its end, what was dropped and why; threads that exited are
 *      drained and freed;
 *   3. sample the system columns, snapshot the user metrics, take the I/O totals;
 *   4. hand the record to every consumer, add the frame time to the statistics.
 *
 * The frame thread is the first thread that calls vor_frame_mark() in a session; when it
 * exits, the next thread that calls it takes over (a pthread key destructor gives the role
 * back), so recording never stops because the thread that used to mark frames is gone.
 *
 * Overhead attributed to a frame: the cost of the vor_frame_mark() that opened it (its
 * own measured time, consumers included) plus its scope count times the calibrated cost
 * of an empty scope. The panel shows it as the profiler's per-frame cost.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frame_threads.h"
#include "nvtx_ranges.h"
#include "vor_internal.h"

typedef struct frame_assembly {
    vor_timeline_point opened;     /* the current frame's start on the timeline */
    uint64_t index;                /* index of the current frame */
    int64_t last_mark_cost_ns;     /* cost of the vor_frame_mark that opened this frame */
    double empty_span_ns;
    vor_user_value user[VOR_MAX_USER_COLUMNS];
    uint32_t n_system;
    uintptr_t owner;               /* atomic: the frame thread's token, 0 = none */
    /* Session totals for vor_get_counters. */
    uint64_t frames, scopes_recorded, scopes_dropped, open_at_exit;
} frame_assembly;

static frame_assembly fa;

/* ---- The frame thread ------------------------------------------------------------------ */

/* A token per thread, never reused (a thread's address may be). */
static uintptr_t next_token;
static VOR_TLS uintptr_t my_token;
static pthread_key_t owner_key;
static pthread_once_t owner_key_once = PTHREAD_ONCE_INIT;

/* Runs when a thread that was the frame thread exits: the role is free again. */
static void owner_exits(void *token) {
    uintptr_t expected = (uintptr_t)token;
    vor_atomic_cas(&fa.owner, &expected, (uintptr_t)0);
}

static void create_owner_key(void) {
    pthread_key_create(&owner_key, owner_exits);
}

/* 1 if the calling thread is (or just became) the frame thread. */
static int claim_frame_thread(void) {
    if (VOR_UNLIKELY(my_token == 0)) my_token = vor_atomic_add_relaxed(&next_token, 1) + 1;
    uintptr_t owner = vor_atomic_load_acquire(&fa.owner);
    if (VOR_LIKELY(owner == my_token)) return 1;
    uintptr_t expected = 0;
    if (owner != 0 || !vor_atomic_cas(&fa.owner, &expected, my_token)) return 0;
    pthread_once(&owner_key_once, create_owner_key);
    pthread_setspecific(owner_key, (void *)my_token);
    return 1;
}

/* ---- Sessions ------------------------------------------------------------------------- */

int vor_frames_begin_session(void) {
    memset(&fa, 0, sizeof fa);
    vor_clock_anchor epoch = {vor_session_now.epoch_tick, vor_session_now.epoch_ns, 0};
    vor_timeline_reset(epoch);
    fa.opened = vor_timeline_last();
    vor_frame_threads_begin_session(vor_session_now.epoch_tick);
    vor_scope_limits_reset(); /* the environment's values come with the outputs (outputs.c) */
    fa.n_system = vor_columns_begin_session();
    fa.empty_span_ns = vor_empty_span_ns_locked();
    vor_clock_info info;
    vor_clock_get_info(&info); /* the clock's resolution, measured once, before outputs ask */
    return 1;
}

void vor_frames_end_session(void) {
    vor_frame_threads_end_session();
    vor_scope_limits_reset();
    vor_atomic_store_relaxed(&fa.owner, (uintptr_t)0);
}

void vor_frames_restart(void) {
    fa.opened = vor_timeline_close(vor_clock_anchor_now());
    vor_frame_threads_resume(fa.opened.tick);
    fa.last_mark_cost_ns = 0;
    vor_system_begin_session();
    uint64_t ns, bytes;
    vor_io_drain(&ns, &bytes);
}

/* ---- Frames --------------------------------------------------------------------------- */

void vor_frame_mark(void) {
    if (!vor_internal_is_collecting()) return;
    if (VOR_UNLIKELY(!claim_frame_thread())) {
        vor_log(VOR_LOG_FRAME_MARK_OTHER_THREAD, NULL);
        return;
    }

    uint64_t entered = vor_clock_ticks();
    if (!vor_frame_lock_acquire()) return; /* called back from a logger or consumer */
    if (!vor_session_now.active) {
        vor_frame_lock_release();
        return;
    }

    vor_timeline_point now = vor_timeline_close(vor_clock_anchor_now());
    if (VOR_NVTX_ON()) vor_nvtx_frame(fa.index); /* VOR_NVTX=1: the frame's end as an NVTX mark */

    vor_frame_record rec;
    memset(&rec, 0, sizeof rec);
    rec.index = fa.index;
    rec.start_ns = fa.opened.ns - (int64_t)vor_session_now.epoch_ns;
    rec.duration_ns = now.ns - fa.opened.ns;

    vor_frame_scopes scopes;
    vor_frame_threads_collect(fa.opened, now, &scopes);
    rec.n_threads = scopes.n_threads;
    rec.threads = scopes.threads;
    rec.n_scopes = scopes.n_scopes;
    rec.dropped_scopes = scopes.dropped;
    rec.n_drops = scopes.n_drops;
    rec.drops = scopes.drops;

    /* Metrics. */
    uint64_t io_ns, io_bytes;
    vor_io_drain(&io_ns, &io_bytes);
    rec.n_system = fa.n_system;
    rec.system_present = vor_system_sample(rec.system_raw, rec.duration_ns, io_ns, io_bytes);
    rec.n_user = vor_columns_snapshot_user(fa.user, VOR_MAX_USER_COLUMNS);
    rec.user = fa.user;
    rec.overhead_ns = fa.last_mark_cost_ns + (int64_t)((double)scopes.n_scopes * fa.empty_span_ns);

    vor_consumers_frame(&rec);
    vor_frame_stats_add((uint64_t)rec.duration_ns);

    fa.frames++;
    fa.scopes_recorded += scopes.n_scopes;
    fa.scopes_dropped += scopes.dropped;
    fa.open_at_exit += scopes.open_at_exit;
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
