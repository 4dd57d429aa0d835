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

#define COMPENSATION_BODY(leaf)                                                                     \
    uint64_t a0 = seed, a1 = seed + 1, a2 = seed + 2, a3 = seed + 3, a4 = seed + 4, a5 = seed + 5, \
             a6 = seed + 6, a7 = seed + 7;                                                           \
    for (int i = 0; i < COMPENSATION_CALLS; i++) {                                                 \
        for (int k = 0; k < COMPENSATION_INNER; k++) {                                             \
            a0 += 1, a1 += 3, a2 += 5, a3 += 7, a4 += 9, a5 += 11, a6 += 13, a7 += 15;             \
            __asm__ volatile("" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5),      \
                             "+r"(a6), "+r"(a7));                                                    \
        }                                                                                           \
        leaf();                                                                                     \
    }                                                                                               \
    return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7

uint64_t instrumented_parent(uint64_t seed);
uint64_t scoped_parent(uint64_t seed);

#endif
