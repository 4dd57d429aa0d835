/* calibrate.c: measures what one empty scope and one -finstrument-functions call cost, so
 * users (and the overhead chip) can account for it, and readers compensate for it.
 *
 * Two figures come out of one measurement. The empty span: how much a parent's duration
 * grows per child scope (begin + end, all of it), what a frame loses per scope. The self
 * cost: how much a parent's *self* time grows per child, which is the empty span minus
 * the child's own measured span (the child's clock reads bracket part of vor's work, and
 * that part is counted in the child, not its parent). Compensation subtracts the self
 * cost from a parent's self time per direct child (docs/FORMAT.md, reading rules), so the
 * capture header carries that one, for scopes (VOR_SCOPE) and for function hooks.
 *
 * What a child costs its parent depends on the parent as much as on vor, so the
 * measurement copies what a program pays, each point measured (against
 * tests/cli/test_cli_compensation.py, which compares compensated self times with the
 * uninstrumented run):
 *   - the child is what callers write: a VOR_SCOPE in a noinline function, expanded as
 *     vor.h expands it (vor_scope_enter/leave), or an empty function with the hooks a
 *     compiler inserts; the baseline is a plain empty function, which the compiler knows
 *     clobbers nothing (the uninstrumented program's case), not the same call with vor
 *     turned off (that counted the macro's flag test in the baseline);
 *   - the parent is a function of its own that keeps eight values live across each call
 *     (a caller's loop state): a child that calls into vor makes it save and reload them,
 *     a cost of the scope that a parent keeping nothing live never showed (about 1.5 ns);
 *   - the children run one level deep, inside a parent scope (0.4 ns more than at depth 0).
 * Each batch of scopes is timed between bursts of program-like work, less the same rounds
 * calling the plain function, through the calling thread's own buffer; the buffer's
 * producer position is rewound after each batch (vor_producer_save/restore: head, chunk,
 * depth, counters), so the calibration scopes never reach a frame and never grow the buffer
 * past a chunk. (Fresh, evicted slots instead of rewound ones: no difference, measured.)
 * The rewind is safe because it holds the frame lock: the only other reader of the buffer,
 * the frame assembly, is locked out, and only this thread writes it. A figure is the median
 * of several batches, which keeps one preempted batch from skewing it, and of a few rounds
 * (vor_calibrate), which keeps a loaded stretch of the machine from skewing all of it.
 */
#include <sched.h>
#include <stdlib.h>

#include "clock.h"
#include "vor_internal.h"

VOR_API void __cyg_profile_func_exit(void *fn, void *call_site); /* instrument_functions.c */

/* Per kind and round, 7 batches of 500 scopes (touched, then timed) and 500 plain rounds,
 * each after ~25 ns of work: 4.5-6 ms natively for everything, 8-17 ms in wasm under node (each
 * clock read is a JS call there), paid once per process at the first vor_enable(). */
#define BATCH_SCOPES 500
#define BATCHES 7

static vor_site calibration_site = {"vor calibration", "vor_calibrate", __FILE__, __LINE__, 0};
static vor_site calibration_parent_site = {"vor calibration parent", "vor_calibrate", __FILE__, __LINE__, 0};
/* Under vor_frame_lock; -1 until measured. */
static double empty_span_ns_measured = -1, self_cost_ns_measured = -1, function_cost_ns_measured = -1;

/* One empty scope the way user code pays for it: a VOR_SCOPE in a noinline function (what
 * callers write), expanded as vor.h expands it, but testing the calibration's own flag:
 * calibration runs before collection starts, and turning the global flag on would let
 * other threads record. */
static int calibration_collecting;

__attribute__((noinline)) static void empty_scope(void) {
    vor_site *entered =
        VOR_LIKELY(vor_atomic_load_relaxed(&calibration_collecting)) ? vor_scope_enter(&calibration_site) : NULL;
    __asm__ volatile("");
    if (entered) {
        vor_scope_leave(entered);
        VOR_NOT_A_TAIL_CALL_();
    }
}

/* One empty function compiled with -finstrument-functions: the entry hook (less its test
 * of the global flag, replaced by the calibration's) and the exit hook, as a compiler
 * inserts them in a void function. */
__attribute__((noinline)) static void empty_function(void) {
    if (vor_atomic_load_relaxed(&calibration_collecting))
        vor_function_enter_unchecked((void *)empty_function, __builtin_return_address(0));
    __asm__ volatile("");
    __cyg_profile_func_exit((void *)empty_function, __builtin_return_address(0));
}

/* The same function without vor: what the uninstrumented program calls. */
__attribute__((noinline)) static void empty_plain(void) {
    __asm__ volatile("");
}

/* Program work between two scopes: independent integer additions (about 25 ns), which
 * keep the execution units busy as real code between scopes does. Scopes timed back to
 * back with nothing else to do run vor's instructions on idle units, or in the shadow of
 * a short burst, and cost their parent about half of what they cost after real work
 * (measured: 8 and 4 against 14 ns on a Xeon); scopes inside long dependency chains cost
 * less. The calibration takes the busy case: README states the limit. */
#define FILLER_ROUNDS 40
/* Keeps a sum in a register; one asm per sum (one asm for all eight makes GCC shuffle
 * registers around it in some callers). */
#define KEEP(x) __asm__ volatile("" : "+r"(x))

/* `n` rounds of work and one call of `child` each, in a parent function of its own as a
 * program's caller is (a noinline function per child, so each calls it directly); returns
 * the ns they took. The eight sums stay live across each call, as a caller's loop keeps
 * its state in registers around the scopes it calls. */
#define TIMED_ROUNDS(name, child)                                                                   \
    __attribute__((noinline)) static double name(int n) {                                           \
        uint64_t a0 = 0, a1 = 1, a2 = 2, a3 = 3, a4 = 4, a5 = 5, a6 = 6, a7 = 7;                       \
        uint64_t t0 = vor_clock_ns();                                                                \
        for (int i = 0; i < n; i++) {                                                                \
            for (int k = 0; k < FILLER_ROUNDS; k++) {                                                \
                a0 += 1, a1 += 3, a2 += 5, a3 += 7, a4 += 9, a5 += 11, a6 += 13, a7 += 15;           \
                KEEP(a0);                                                                            \
                KEEP(a1);                                                                            \
                KEEP(a2);                                                                            \
                KEEP(a3);                                                                            \
                KEEP(a4);                                                                            \
                KEEP(a5);                                                                            \
                KEEP(a6);                                                                            \
                KEEP(a7);                                                                            \
            }                                                                                        \
            child();                                                                                 \
        }                                                                                            \
        uint64_t t1 = vor_clock_ns();                                                                \
        __asm__ volatile("" : : "r"(a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7));                         \
        return (double)(t1 - t0);                                                                    \
    }
TIMED_ROUNDS(timed_scopes, empty_scope)
TIMED_ROUNDS(timed_functions, empty_function)
TIMED_ROUNDS(timed_plain, empty_plain)

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What one call of `child` (an empty scope or an empty hooked function) costs: *span its
 * parent's duration, *self its parent's self time. The frame lock is held by the caller. */
static void measure_locked(void (*child)(void), double (*timed_rounds)(int), double *empty_span, double *self_cost) {
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
        for (int i = 0; i < BATCH_SCOPES; i++) child();
        vor_producer_restore(t, &before);
        /* Inside a parent scope, as every child that compensation is about (one level
         * deeper costs a little more: 0.4 ns, measured); its event is the batch's last. */
        vor_site *parent = vor_scope_enter(&calibration_parent_site);
        per_batch[b] = timed_rounds(BATCH_SCOPES) / BATCH_SCOPES;
        if (parent) {
            vor_scope_leave(parent);
            VOR_NOT_A_TAIL_CALL_();
        }
        /* The children's own spans, from the events the batch wrote (the parent's last). */
        uint64_t written = t->head - before.head, span_ticks = 0;
        if (written > 0) written--;
        vor_ring_cursor c = {before.chunk, before.chunk_base};
        for (uint64_t i = 0; i < written; i++) {
            const vor_event *e = vor_ring_peek(&c, before.head + i);
            span_ticks += e->end - e->start;
        }
        inside[b] = written ? (double)span_ticks * ns_per_tick / (double)written : 0;
        vor_producer_restore(t, &before); /* the next batch writes the same slots */
        /* The same rounds calling a plain empty function: the program without vor. */
        vor_atomic_store_relaxed(&calibration_collecting, 0);
        loop[b] = timed_plain(BATCH_SCOPES) / BATCH_SCOPES;
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

/* Each figure is measured in ROUNDS rounds, the kinds taking turns and the thread yielding
 * between turns, and the round with the median span is kept: another process loading the
 * same core can slow a whole round (a batch median does not see it), and the program
 * measured later runs under the machine's usual load, which the median round stands for.
 * (Keeping the least loaded round instead under-compensated a program that ran loaded.) */
#define ROUNDS 5

static void yield_between_rounds(void) {
#if !defined(VOR_PLATFORM_WASM)
    sched_yield();
#endif
}

typedef struct round_result {
    double span, self;
} round_result;

static int compare_span(const void *a, const void *b) {
    return compare_double(&((const round_result *)a)->span, &((const round_result *)b)->span);
}

double vor_calibrate(void) {
    vor_clock_init();
    if (!vor_frame_lock_acquire()) return empty_span_ns_measured > 0 ? empty_span_ns_measured : 0;
    round_result scopes[ROUNDS], functions[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        measure_locked(empty_scope, timed_scopes, &scopes[r].span, &scopes[r].self);
        yield_between_rounds();
        measure_locked(empty_function, timed_functions, &functions[r].span, &functions[r].self);
        yield_between_rounds();
    }
    qsort(scopes, ROUNDS, sizeof scopes[0], compare_span);
    qsort(functions, ROUNDS, sizeof functions[0], compare_span);
    empty_span_ns_measured = scopes[ROUNDS / 2].span;
    self_cost_ns_measured = scopes[ROUNDS / 2].self;
    function_cost_ns_measured = functions[ROUNDS / 2].self;
    vor_frame_lock_release();
    return empty_span_ns_measured;
}

double vor_function_span_ns_locked(void) {
    return function_cost_ns_measured > 0 ? function_cost_ns_measured : 0;
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
