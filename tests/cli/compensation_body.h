/* compensation_body.h: the body of the parent function of the compensation test, written
 * once and compiled twice: instrumented (compensation_instrumented.c, -finstrument-functions;
 * compensation_scoped.c, VOR_SCOPEs) and plain (compensation_workload.c), so that both run
 * the very same code: COMPENSATION_CALLS calls to an empty function, each after a burst of
 * eight independent integer additions repeated COMPENSATION_INNER times.
 *
 * The work keeps the CPU's integer units busy on purpose. Work made of one long dependency
 * chain (floating-point steps, pointer chasing) leaves them idle, and the out-of-order core
 * then runs the hooks' instructions in that shadow: the hooks cost the parent almost
 * nothing there, and compensating for a calibrated cost would take too much (a limit the
 * README states). This test checks the case the cost was calibrated for. */
#ifndef VOR_COMPENSATION_BODY_H
#define VOR_COMPENSATION_BODY_H

#include <stdint.h>

#define COMPENSATION_CALLS 400
#define COMPENSATION_INNER 40

/* One empty asm per sum keeps each in a register without tying them together: a single
 * asm with all eight operands made GCC shuffle registers inside the instrumented parent's
 * loop (four extra moves per round there, none in the plain one: 3 ns per call of the
 * parent's own time with collection off), a difference between the two builds that no
 * per-call compensation can or should remove. */
#define COMPENSATION_KEEP(x) __asm__ volatile("" : "+r"(x))
#define COMPENSATION_BODY(leaf)                                                                     \
    uint64_t a0 = seed, a1 = seed + 1, a2 = seed + 2, a3 = seed + 3, a4 = seed + 4, a5 = seed + 5, \
             a6 = seed + 6, a7 = seed + 7;                                                           \
    for (int i = 0; i < COMPENSATION_CALLS; i++) {                                                 \
        for (int k = 0; k < COMPENSATION_INNER; k++) {                                             \
            a0 += 1, a1 += 3, a2 += 5, a3 += 7, a4 += 9, a5 += 11, a6 += 13, a7 += 15;             \
            COMPENSATION_KEEP(a0); COMPENSATION_KEEP(a1); COMPENSATION_KEEP(a2); COMPENSATION_KEEP(a3); \
            COMPENSATION_KEEP(a4); COMPENSATION_KEEP(a5); COMPENSATION_KEEP(a6); COMPENSATION_KEEP(a7); \
        }                                                                                           \
        leaf();                                                                                     \
    }                                                                                               \
    return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7

uint64_t instrumented_parent(uint64_t seed);
uint64_t scoped_parent(uint64_t seed);

#endif
