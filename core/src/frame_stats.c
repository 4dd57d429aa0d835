/* frame_stats.c: a log-linear histogram of frame times (HDR style) and its percentiles.
 *
 * Values below 128 ns have a bucket each. Above, every power of two [2^e, 2^(e+1)) is
 * split into 128 equal sub-buckets, so a bucket is at most 1/128 of its lower bound wide
 * and its midpoint is within 1/256 (0.39%) of any value in it. A percentile is reported
 * as the midpoint of the bucket holding the nearest-rank sample (rank = ceil(p/100 * n)),
 * clamped to the exact min and max: it is therefore within 0.39% of the exact
 * nearest-rank percentile. Fixed size: 7,424 counters (58 KiB), any frame time up to
 * 2^63 ns, O(1) insert.
 */
#include <math.h>
#include <string.h>

#include "vor_internal.h"

#define SUB_BITS 7
#define SUB_COUNT (1u << SUB_BITS)
#define BUCKETS (SUB_COUNT + (64 - SUB_BITS) * SUB_COUNT)

static vor_mutex stats_lock = VOR_MUTEX_INIT;
static uint64_t counts[BUCKETS];
static uint64_t total, min_ns, max_ns;
static double sum_ns;

static uint32_t bucket_of(uint64_t v) {
    if (v < SUB_COUNT) return (uint32_t)v;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(v); /* >= SUB_BITS */
    uint32_t sub = (uint32_t)(v >> (e - SUB_BITS)) & (SUB_COUNT - 1);
    return SUB_COUNT + (e - SUB_BITS) * SUB_COUNT + sub;
}

/* The midpoint of a bucket. */
static uint64_t bucket_value(uint32_t b) {
    if (b < SUB_COUNT) return b;
    uint32_t e = (b - SUB_COUNT) / SUB_COUNT + SUB_BITS;
    uint64_t sub = (b - SUB_COUNT) % SUB_COUNT;
    uint64_t width = 1ull << (e - SUB_BITS);
    uint64_t low = (1ull << e) + sub * width;
    return low + width / 2;
}

void vor_frame_stats_add(uint64_t ns) {
    vor_mutex_lock(&stats_lock);
    counts[bucket_of(ns)]++;
    if (total == 0 || ns < min_ns) min_ns = ns;
    if (ns > max_ns) max_ns = ns;
    total++;
    sum_ns += (double)ns;
    vor_mutex_unlock(&stats_lock);
}

static uint64_t percentile_locked(double p) {
    if (total == 0) return 0;
    if (!(p > 0)) return min_ns; /* also NaN */
    if (p >= 100) return max_ns;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)total);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        seen += counts[b];
        if (seen >= rank) {
            uint64_t v = bucket_value(b);
            if (v < min_ns) v = min_ns;
            if (v > max_ns) v = max_ns;
            return v;
        }
    }
    return max_ns;
}

uint64_t vor_frame_stats_percentile_ns(double p) {
    vor_mutex_lock(&stats_lock);
    uint64_t v = percentile_locked(p);
    vor_mutex_unlock(&stats_lock);
    return v;
}

void vor_frame_stats_get(vor_frame_stats *out) {
    if (out == NULL) return;
    vor_mutex_lock(&stats_lock);
    memset(out, 0, sizeof *out);
    if (total) {
        out->count = total;
        out->min_ns = min_ns;
        out->max_ns = max_ns;
        out->mean_ns = sum_ns / (double)total;
        out->p50_ns = percentile_locked(50);
        out->p95_ns = percentile_locked(95);
        out->p99_ns = percentile_locked(99);
    }
    vor_mutex_unlock(&stats_lock);
}

/* fork(): the histogram's lock is taken before and released after (session.c). */
void vor_frame_stats_fork(vor_fork_phase phase) {
    if (phase == VOR_FORK_PREPARE)
        pthread_mutex_lock(&stats_lock);
    else
        pthread_mutex_unlock(&stats_lock);
}

void vor_frame_stats_reset(void) {
    vor_mutex_lock(&stats_lock);
    memset(counts, 0, sizeof counts);
    total = min_ns = max_ns = 0;
    sum_ns = 0;
    vor_mutex_unlock(&stats_lock);
}
