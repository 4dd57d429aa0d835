/* mergesort.h: the whole-program workload of bench_recording, a top-down merge sort with
 * one scope per call (VOR_FUNCTION), compiled twice from mergesort.c: *_vor
 * (instrumented) and *_plain (-DVOR_DISABLE, the uninstrumented build). Runs of
 * MERGESORT_LEAF elements or fewer are sorted by insertion, so a call does about a
 * microsecond of work: about a million scopes per second. calltree_* makes the same
 * calls (the same scopes, nested the same way) without the work: frames of the same
 * shape whose events are still in the cache when the frame is marked. */
#ifndef BENCH_MERGESORT_H
#define BENCH_MERGESORT_H

#include <stdint.h>

#define MERGESORT_LEAF 48

/* Sorts a[0..n) using tmp[0..n); returns the number of calls (scopes) made. */
uint64_t mergesort_plain(uint32_t *a, uint32_t *tmp, uint32_t n);
uint64_t mergesort_vor(uint32_t *a, uint32_t *tmp, uint32_t n);
/* The calls of a sort of n elements, without the sorting; returns their number. */
uint64_t calltree_plain(uint32_t n);
uint64_t calltree_vor(uint32_t n);

#endif
