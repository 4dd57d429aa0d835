/* quantile.c: percentiles (p95 for `vor summary`) of a stream of doubles in bounded memory.
 *
 * Two regimes:
 *   exact      the values are kept (up to exact_max of them, and while the shared budget
 *              lasts) and sorted on demand; the answer is the nearest-rank percentile:
 *              the value at rank ceil(p/100 * n) in ascending order.
 *   histogram  past that, every value goes to a bucket named by the top bits of its IEEE
 *              754 representation: sign, 11 exponent bits and the first 7 mantissa bits,
 *              i.e. 128 sub-buckets per power of two. A bucket spans at most 1/128 of its
 *              values' magnitude, so answering with the bucket's midpoint is within 1/256
 *              (0.4%, relative) of the exact nearest-rank value (subnormals: within 2^-1029
 *              absolute). The answer is clamped to the exact min and max.
 * Buckets live in 1 KiB pages, one per (sign, exponent) that occurs, allocated on first use
 * and kept sorted in value order, so a metric spanning 1e-6 .. 1e6 costs ~40 pages. The
 * switch happens once; the kept values move into the histogram.
 *
 * Options not taken: a t-digest or a KLL sketch gives tighter rank error with less memory
 * but no value-relative bound and more code; P-square keeps 5 markers but its error is
 * unbounded on skewed data. The histogram matches vor_frame_stats (same 0.4% bound).
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_INITIAL 64u

struct quantile_page {
    uint32_t key; /* 0..4095 ascending in value: negative pages first */
    uint64_t counts[QUANTILE_SUB_BUCKETS];
};

void quantile_init(quantile *q, uint32_t exact_max, uint64_t *budget) {
    memset(q, 0, sizeof *q);
    q->exact_max = exact_max ? exact_max : QUANTILE_EXACT_MAX;
    q->budget = budget;
    q->min = INFINITY;
    q->max = -INFINITY;
}

static uint64_t bits_of(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double double_of(uint64_t b) {
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* Page key and sub-bucket of v, both ascending with the value. */
static void bucket_of(double v, uint32_t *key, uint32_t *sub) {
    if (v == 0.0) v = 0.0; /* -0 joins +0 */
    uint64_t b = bits_of(v);
    uint32_t sign = (uint32_t)(b >> 63);
    uint32_t exp = (uint32_t)(b >> 52) & 0x7ffu;
    uint32_t s = (uint32_t)(b >> 45) & 0x7fu;
    *key = sign ? 2047u - exp : 2048u + exp;
    *sub = sign ? 127u - s : s;
}

static double bucket_midpoint(uint32_t key, uint32_t sub) {
    uint64_t sign = key < 2048u ? 1u : 0u;
    uint64_t exp = sign ? 2047u - key : key - 2048u;
    uint64_t s = sign ? 127u - sub : sub;
    return double_of(sign << 63 | exp << 52 | s << 45 | (uint64_t)1 << 44);
}

static quantile_page *find_page(quantile *q, uint32_t key, int create) {
    /* Consecutive values of a metric mostly share an exponent: try the last page first. */
    if (q->last_page && q->last_page->key == key) return q->last_page;
    uint32_t lo = 0, hi = q->n_pages;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (q->pages[mid]->key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < q->n_pages && q->pages[lo]->key == key) return q->last_page = q->pages[lo];
    if (!create) return NULL;
    if (q->n_pages == q->cap_pages) {
        uint32_t cap = q->cap_pages ? q->cap_pages * 2 : 16;
        quantile_page **p = realloc(q->pages, cap * sizeof *p);
        if (!p) return NULL;
        q->pages = p;
        q->cap_pages = cap;
    }
    quantile_page *page = calloc(1, sizeof *page);
    if (!page) return NULL;
    page->key = key;
    memmove(&q->pages[lo + 1], &q->pages[lo], (q->n_pages - lo) * sizeof *q->pages);
    q->pages[lo] = page;
    q->n_pages++;
    return q->last_page = page;
}

static int histogram_add(quantile *q, double v) {
    uint32_t key, sub;
    bucket_of(v, &key, &sub);
    quantile_page *page = find_page(q, key, 1);
    if (!page) return -1;
    page->counts[sub]++;
    return 0;
}

/* Moves the kept values into the histogram. On failure (no memory) nothing changes. */
static int switch_to_histogram(quantile *q) {
    /* Reserve every page first so that the move cannot fail half-way. */
    for (uint32_t i = 0; i < q->n_exact; i++) {
        uint32_t key, sub;
        bucket_of(q->exact[i], &key, &sub);
        if (!find_page(q, key, 1)) return -1;
    }
    for (uint32_t i = 0; i < q->n_exact; i++) histogram_add(q, q->exact[i]);
    if (q->budget) *q->budget += q->cap_exact;
    free(q->exact);
    q->exact = NULL;
    q->n_exact = q->cap_exact = 0;
    q->histogram = 1;
    return 0;
}

static int grow_exact(quantile *q) {
    uint32_t cap = q->cap_exact ? q->cap_exact * 2 : EXACT_INITIAL;
    if (cap > q->exact_max) cap = q->exact_max;
    if (cap <= q->cap_exact) return -1;
    uint32_t extra = cap - q->cap_exact;
    if (q->budget && *q->budget < extra) return -1;
    double *e = realloc(q->exact, (size_t)cap * sizeof *e);
    if (!e) return -1;
    if (q->budget) *q->budget -= extra;
    q->exact = e;
    q->cap_exact = cap;
    return 0;
}

int quantile_add(quantile *q, double v) {
    if (!q->histogram) {
        if (q->n_exact == q->cap_exact && grow_exact(q) != 0 && switch_to_histogram(q) != 0) return -1;
    }
    if (q->histogram) {
        if (histogram_add(q, v) != 0) return -1;
    } else {
        q->exact[q->n_exact++] = v;
        q->sorted = 0;
    }
    q->count++;
    if (v < q->min) q->min = v;
    if (v > q->max) q->max = v;
    return 0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double quantile_get(quantile *q, double p) {
    if (q->count == 0) return NAN;
    if (!(p > 0.0)) return q->min;
    if (p >= 100.0) return q->max;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)q->count);
    if (rank < 1) rank = 1;
    if (rank > q->count) rank = q->count;
    if (!q->histogram) {
        if (!q->sorted) {
            qsort(q->exact, q->n_exact, sizeof *q->exact, compare_doubles);
            q->sorted = 1;
        }
        return q->exact[rank - 1];
    }
    uint64_t seen = 0;
    for (uint32_t i = 0; i < q->n_pages; i++) {
        for (uint32_t s = 0; s < QUANTILE_SUB_BUCKETS; s++) {
            seen += q->pages[i]->counts[s];
            if (seen >= rank) {
                double m = bucket_midpoint(q->pages[i]->key, s);
                if (m < q->min) m = q->min;
                if (m > q->max) m = q->max;
                return m;
            }
        }
    }
    return q->max; /* not reached: the counts add up to count */
}

int quantile_is_exact(const quantile *q) {
    return !q->histogram;
}

void quantile_free(quantile *q) {
    if (q->budget) *q->budget += q->cap_exact;
    free(q->exact);
    for (uint32_t i = 0; i < q->n_pages; i++) free(q->pages[i]);
    free(q->pages);
    memset(q, 0, sizeof *q);
}
