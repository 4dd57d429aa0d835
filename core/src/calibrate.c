/* calibrate.c: measures what one empty scope costs, so users (and the overhead chip)
 * can account for it.
 *
 * Two figures come out of one measurement. The empty span: how much a parent's duration
 * grows per child scope (begin + end, all of it), what a frame loses per scope. The self
 * cost: how much a parent's *self* time grows per child, which is the empty span minus
 * the child's own measured span (the child's clock reads bracket part of vor's work, and
 * that part is counted in the child, not its parent). Compensation subtracts the self
 * cost from a parent's self time per direct child (docs/FORMAT.md, reading rules), so the
 * capture header carries that one.
 *
 * The measurement runs the real path (vor_scope_begin without its two entry checks, and
 * vor_scope_end, through the calling thread's own buffer) in batches, between bursts of
 * program-like work, less the same rounds with the scope turned off, and rewinds the
 * buffer's producer position afterwards (vor_producer_save/restore: head, chunk, depth,
 * counters) after each batch, so the calibration scopes never reach a frame and never
 * grow the buffer past a chunk. Each batch's slots are touched once before it is timed, as
 * a frame's scopes find their slots resident. The rewind is safe
 * because it holds the frame lock: the only other reader of the buffer, the frame
 * assembly, is locked out, and only this thread writes it. The figure is the median of several batches,
 * which keeps one preempted batch from skewing it.
 */
#include <stdlib.h>

#include "clock.h"
#include "vor_internal.h"

/* 5,500 scopes (and as many rounds without), each after ~100 ns of work: about 1.5 ms natively and a few ms in a browser (each clock read is a JS
 * call there), paid once per process at the first vor_enable(). */
#define BATCH_SCOPES 500
#define BATCHES 11

static vor_site calibration_site = {"vor calibration", "vor_calibrate", __FILE__, __LINE__, 0};
static double empty_span_ns_measured = -1; /* under vor_frame_lock */
static double self_cost_ns_measured = -1;  /* under vor_frame_lock */

/* One empty scope the way user code pays for it: from a function of its own (a VOR_SCOPE
 * in a noinline function is what callers write), with the macro's inline check of a flag,
 * then begin and end. The flag is the calibration's own: calibration runs before
 * collection starts, and turning the global flag on would let other threads record. */
static int calibration_collecting;

__attribute__((noinline)) static void empty_scope(void) {
    if (vor_atomic_load_relaxed(&calibration_collecting) && vor_scope_begin_unchecked(&calibration_site))
        vor_scope_end();
}

/* Program work between two scopes: about 100 ns of independent integer additions, which
 * keep the execution units busy as real code between scopes does. Scopes timed back to
 * back with nothing else to do run vor's instructions on idle units, or in the shadow of
 * a short burst, and cost their parent about half of what they cost after real work
 * (measured: 8 and 4 against 14 ns on a Xeon); scopes inside long dependency chains cost
 * less. The calibration takes the busy case: README states the limit. */
#define FILLER_ROUNDS 40
static inline uint64_t filler(uint64_t seed) {
    uint64_t a0 = seed, a1 = seed + 1, a2 = seed + 2, a3 = seed + 3, a4 = seed + 4, a5 = seed + 5, a6 = seed + 6,
             a7 = seed + 7;
    for (int k = 0; k < FILLER_ROUNDS; k++) {
        a0 += 1, a1 += 3, a2 += 5, a3 += 7, a4 += 9, a5 += 11, a6 += 13, a7 += 15;
        __asm__ volatile("" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5), "+r"(a6), "+r"(a7));
    }
    return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7;
}

/* BATCH_SCOPES rounds of work and one empty scope (or, with the flag off, the same call
 * doing nothing); returns ns per round. */
static double timed_rounds(void) {
    uint64_t sink = 1;
    uint64_t t0 = vor_clock_ns();
    for (int i = 0; i < BATCH_SCOPES; i++) {
        sink = filler(sink);
        empty_scope();
    }
    uint64_t t1 = vor_clock_ns();
    __asm__ volatile("" : : "r"(sink));
    return (double)(t1 - t0) / BATCH_SCOPES;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs the batches into *empty_span and *self_cost; the frame lock is held by the caller. */
static void measure_locked(double *empty_span, double *self_cost) {
    *empty_span = *self_cost = 0;
    vor_thread *t = vor_tls_thread;
    if (t == NULL) t = vor_thread_attach();
    if (t == NULL) return;
    vor_producer_state saved, before;
    vor_producer_save(t, &saved);
    double per_batch[BATCHES], inside[BATCHES], loop[BATCHES];
    double ns_per_tick = vor_clock_ns_per_tick();
    for (int b = 0; b < BATCHES; b++) {
        vor_atomic_store_relaxed(&calibration_collecting, 1);
        vor_producer_save(t, &before);
        /* Touch the slots first: a program's buffer pages are resident after its first
         * frames, so the first touch of a page is no part of a scope's steady cost. */
        for (int i = 0; i < BATCH_SCOPES; i++) empty_scope();
        vor_producer_restore(t, &before);
        per_batch[b] = timed_rounds();
        /* The children's own spans, from the events the batch wrote. */
        uint64_t written = t->head - before.head, span_ticks = 0;
        vor_ring_cursor c = {before.chunk, before.chunk_base};
        for (uint64_t i = 0; i < written; i++) {
            const vor_event *e = vor_ring_peek(&c, before.head + i);
            span_ticks += e->end - e->start;
        }
        inside[b] = written ? (double)span_ticks * ns_per_tick / (double)written : 0;
        vor_producer_restore(t, &before); /* the next batch writes the same slots */
        /* The same calls with the flag off: what the call itself costs, without vor. */
        vor_atomic_store_relaxed(&calibration_collecting, 0);
        loop[b] = timed_rounds();
    }
    vor_producer_restore(t, &saved); /* forget the batches */
    double self[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        per_batch[b] = per_batch[b] > loop[b] ? per_batch[b] - loop[b] : 0;
        self[b] = per_batch[b] > inside[b] ? per_batch[b] - inside[b] : 0;
    }
    qsort(per_batch, BATCHES, sizeof per_batch[0], compare_double);
    qsort(self, BATCHES, sizeof self[0], compare_double);
    *empty_span = per_batch[BATCHES / 2];
    *self_cost = self[BATCHES / 2];
}

double vor_calibrate(void) {
    vor_clock_init();
    if (!vor_frame_lock_acquire()) return empty_span_ns_measured > 0 ? empty_span_ns_measured : 0;
    double span, self;
    measure_locked(&span, &self);
    empty_span_ns_measured = span;
    self_cost_ns_measured = self;
    vor_frame_lock_release();
    return span;
}

double vor_scope_self_cost_ns_locked(void) {
    return self_cost_ns_measured > 0 ? self_cost_ns_measured : 0;
}

double vor_empty_span_ns_locked(void) {
    return empty_span_ns_measured > 0 ? empty_span_ns_measured : 0;
}

double vor_empty_span_ns(void) {
    if (!vor_frame_lock_acquire()) return empty_span_ns_measured > 0 ? empty_span_ns_measured : 0;
    double v = empty_span_ns_measured;
    vor_frame_lock_release();
    return v >= 0 ? v : vor_calibrate();
}
