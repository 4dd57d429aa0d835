/* calibrate.c: measures what one empty scope costs, so users (and the overhead chip)
 * can account for it.
 *
 * The measurement runs the real path (vor_scope_begin without its two entry checks, and
 * vor_scope_end, through the calling thread's own buffer) in batches, and rewinds the buffer's producer
 * position after each batch so the calibration scopes never reach a frame. The rewind is safe because it
 * holds the frame lock: the only other reader of `head`, the frame assembly, is locked
 * out, and only this thread writes it. The figure is the median of several batches,
 * which keeps one preempted batch from skewing it.
 */
#include <stdlib.h>

#include "clock.h"
#include "vor_internal.h"

/* 5,500 scopes: about 0.1 ms natively and a few ms in a browser (each clock read is a JS
 * call there), paid once per process at the first vor_enable(). */
#define BATCH_SCOPES 500
#define BATCHES 11

static vor_site calibration_site = {"vor calibration", "vor_calibrate", __FILE__, __LINE__, 0};
static double empty_span_ns_measured = -1; /* under vor_frame_lock */

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs the batches; the frame lock is held by the caller. */
static double measure_locked(void) {
    vor_thread *t = vor_tls_thread;
    if (t == NULL) t = vor_thread_attach();
    if (t == NULL) return 0;
    vor_producer_state saved;
    vor_producer_save(t, &saved);
    double per_batch[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = vor_clock_ns();
        for (int i = 0; i < BATCH_SCOPES; i++) {
            if (vor_scope_begin_unchecked(&calibration_site)) vor_scope_end();
        }
        uint64_t t1 = vor_clock_ns();
        per_batch[b] = (double)(t1 - t0) / BATCH_SCOPES;
        vor_producer_restore(t, &saved); /* forget the batch */
    }
    qsort(per_batch, BATCHES, sizeof per_batch[0], compare_double);
    return per_batch[BATCHES / 2];
}

double vor_calibrate(void) {
    vor_clock_init();
    if (!vor_frame_lock_acquire()) return empty_span_ns_measured > 0 ? empty_span_ns_measured : 0;
    double v = measure_locked();
    empty_span_ns_measured = v;
    vor_frame_lock_release();
    return v;
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
