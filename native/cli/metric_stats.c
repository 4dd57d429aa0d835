/* metric_stats.c: per-column statistics for `vor summary`: how many frames have a value,
 * min, mean, p95, max, and how many values were NaN or infinite (skipped, counted).
 *
 * Columns are indexed by the capture's dense column ids; the array grows as user columns
 * appear (at most VOR_READER_MAX_COLUMNS). The mean uses Neumaier's compensated sum so
 * that a long capture's mean does not drift. The quantiles share one budget of exact
 * values (METRIC_EXACT_BUDGET, 32 MiB) so that thousands of columns cannot each keep
 * 65,536 values; a column past its share switches to its histogram (quantile.c).
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define METRIC_EXACT_BUDGET (4u * 1024u * 1024u) /* values kept exactly, all columns together */

void metric_stats_init(metric_stats *s) {
    memset(s, 0, sizeof *s);
    s->exact_budget = METRIC_EXACT_BUDGET;
}

static int ensure_column(metric_stats *s, uint32_t id) {
    if (id < s->n_columns) return 0;
    if (id >= VOR_READER_MAX_COLUMNS) return -1;
    uint32_t n = s->n_columns ? s->n_columns : 8;
    while (n <= id) n *= 2;
    if (n > VOR_READER_MAX_COLUMNS) n = VOR_READER_MAX_COLUMNS;
    metric_stat *c = realloc(s->columns, (size_t)n * sizeof *c);
    if (!c) return -1;
    /* Quantiles hold a pointer to the shared budget, not into this array: moving is fine. */
    for (uint32_t i = s->n_columns; i < n; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].min = INFINITY;
        c[i].max = -INFINITY;
        quantile_init(&c[i].q, 0, &s->exact_budget);
    }
    s->columns = c;
    s->n_columns = n;
    return 0;
}

int metric_stats_add(metric_stats *s, uint32_t id, double value) {
    if (ensure_column(s, id) != 0) return -1;
    metric_stat *m = &s->columns[id];
    if (!isfinite(value)) {
        m->nonfinite++;
        return 0;
    }
    if (quantile_add(&m->q, value) != 0) return -1;
    m->frames++;
    if (value < m->min) m->min = value;
    if (value > m->max) m->max = value;
    /* Neumaier: keep the low-order bits lost by each addition. */
    double t = m->sum + value;
    if (fabs(m->sum) >= fabs(value))
        m->sum_compensation += (m->sum - t) + value;
    else
        m->sum_compensation += (value - t) + m->sum;
    m->sum = t;
    return 0;
}

const metric_stat *metric_stats_get(const metric_stats *s, uint32_t id) {
    if (id >= s->n_columns) return NULL;
    const metric_stat *m = &s->columns[id];
    return (m->frames || m->nonfinite) ? m : NULL;
}

double metric_stat_mean(const metric_stat *m) {
    return m->frames ? (m->sum + m->sum_compensation) / (double)m->frames : NAN;
}

double metric_stat_p95(metric_stat *m) {
    return quantile_get(&m->q, 95.0);
}

void metric_stats_free(metric_stats *s) {
    for (uint32_t i = 0; i < s->n_columns; i++) quantile_free(&s->columns[i].q);
    free(s->columns);
    memset(s, 0, sizeof *s);
}
