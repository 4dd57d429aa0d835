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

/* Sorts v in place and returns its median. */
static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_compare_double);
    return v[n / 2];
}

#endif
