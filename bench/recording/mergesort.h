/* mergesort.h: the whole-program workload of bench_recording, a top-down merge sort with
 * one scope per call (VOR_FUNCTION), compiled twice from mergesort.c: mergesort_vor
 * (instrumented) and mergesort_plain (-DVOR_DISABLE, the uninstrumented build). Runs of
 * MERGESORT_LEAF elements or fewer are sorted by insertion, so a call does about a
 * microsecond of work: about a million scopes per second, as in the figure. */
#ifndef BENCH_MERGESORT_H
#define BENCH_MERGESORT_H

#include <stdint.h>

#define MERGESORT_LEAF 48

/* Sorts a[0..n) using tmp[0..n); returns the number of calls (scopes) made. */
uint64_t mergesort_plain(uint32_t *a, uint32_t *tmp, uint32_t n);
uint64_t mergesort_vor(uint32_t *a, uint32_t *tmp, uint32_t n);

#endif
