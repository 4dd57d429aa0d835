/* bench_util.h: what the benchmark programs share: a monotonic clock in ns and the median
 * of a set of runs (this machine is shared and noisy: every figure is a median). */
#ifndef VOR_BENCH_UTIL_H
#define VOR_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bench_compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The frame of the frame-mark benchmarks: 1,000 scopes, 500 of them nested in the others.
 * (A macro: VOR_SCOPE needs <vor/vor.h>, which not every benchmark includes.) */
#define BENCH_FRAME_OF_1000_SCOPES()                                                                  \
    do {                                                                                              \
        for (int bench_i_ = 0; bench_i_ < 500; bench_i_++) {                                          \
            VOR_SCOPE("frame outer");                                                                 \
            {                                                                                         \
                VOR_SCOPE("frame inner");                                                             \
            }                                                                                         \
        }                                                                                             \
    } while (0)

/* Sorts v in place and returns its median. */
static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_compare_double);
    return v[n / 2];
}

#endif
