/* test_quantile.c: percentiles for `vor summary` (native/cli/quantile.c) and the
 * per-column statistics around them (metric_stats.c): exact nearest-rank while values
 * fit, within 1/256 relative once the histogram takes over, min/max/mean exact, NaN and
 * infinities skipped and counted. */
#include "cli_test.h"

#include <math.h>
#include <string.h>

/* The exact nearest-rank percentile, computed here independently. */
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double nearest_rank(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp);
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    return v[rank - 1];
}

static void exact_percentiles_are_nearest_rank(void **state) {
    (void)state;
    quantile q;
    quantile_init(&q, 0, NULL);
    assert_true(isnan(quantile_get(&q, 95)));
    for (int i = 100; i >= 1; i--) assert_int_equal(quantile_add(&q, i), 0);
    assert_true(quantile_is_exact(&q));
    assert_true(quantile_get(&q, 95) == 95.0);
    assert_true(quantile_get(&q, 50) == 50.0);
    assert_true(quantile_get(&q, 100) == 100.0);
    assert_true(quantile_get(&q, 1) == 1.0);
    assert_true(quantile_get(&q, 0.5) == 1.0);
    quantile_free(&q);

    quantile_init(&q, 0, NULL);
    for (int i = 1; i <= 20; i++) quantile_add(&q, i * 0.5);
    assert_true(quantile_get(&q, 95) == 9.5); /* rank 19 of 20 */
    quantile_add(&q, -3);                     /* adding after a query re-sorts */
    assert_true(quantile_get(&q, 1) == -3.0);
    quantile_free(&q);

    quantile_init(&q, 0, NULL);
    quantile_add(&q, 42);
    assert_true(quantile_get(&q, 95) == 42.0);
    quantile_free(&q);
}

/* A deterministic generator: values over many orders of magnitude, both signs. */
static uint64_t rng_state = 88172645463325252ull;
static double next_value(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    double u = (double)(rng_state >> 11) / 9007199254740992.0;
    double mag = pow(10.0, u * 12.0 - 6.0);
    return (rng_state & 1) && (rng_state & 2) ? -mag : mag;
}

static void histogram_percentiles_are_within_a_256th(void **state) {
    (void)state;
    enum { N = 20000 };
    double *values = malloc(N * sizeof *values);
    assert_non_null(values);
    quantile q;
    quantile_init(&q, 256, NULL);
    for (int i = 0; i < N; i++) {
        values[i] = next_value();
        assert_int_equal(quantile_add(&q, values[i]), 0);
    }
    assert_false(quantile_is_exact(&q));
    const double ps[] = {1, 5, 25, 50, 75, 90, 95, 99, 99.9, 100};
    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++) {
        double want = nearest_rank(values, N, ps[k]);
        double got = quantile_get(&q, ps[k]);
        assert_true(fabs(got - want) <= fabs(want) / 256.0 + 1e-300);
    }
    /* min and max stay exact and bound every answer. */
    assert_true(quantile_get(&q, 100) == values[N - 1]);
    assert_true(q.min == values[0]);
    quantile_free(&q);
    free(values);
}

static void zero_negative_zero_and_subnormals_are_ordered(void **state) {
    (void)state;
    quantile q;
    quantile_init(&q, 1, NULL); /* histogram from the second value on */
    double v[] = {-0.0, 0.0, 5e-324, -5e-324, 1.0, -1.0, 0.0};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) quantile_add(&q, v[i]);
    assert_false(quantile_is_exact(&q));
    assert_true(quantile_get(&q, 1) == -1.0);
    assert_true(quantile_get(&q, 100) == 1.0);
    double median = quantile_get(&q, 50); /* rank 4 of 7: a zero */
    assert_true(fabs(median) < 1e-300);
    quantile_free(&q);
}

static void a_shared_budget_moves_streams_to_histograms(void **state) {
    (void)state;
    uint64_t budget = 100;
    quantile a, b;
    quantile_init(&a, 0, &budget);
    quantile_init(&b, 0, &budget);
    for (int i = 0; i < 64; i++) quantile_add(&a, i);
    for (int i = 0; i < 1000; i++) quantile_add(&b, i);
    assert_true(quantile_is_exact(&a));
    assert_false(quantile_is_exact(&b)); /* 64 + 64 > 100: b could not grow */
    double p = quantile_get(&b, 95);
    assert_true(fabs(p - 949.0) <= 949.0 / 256.0);
    quantile_free(&a);
    quantile_free(&b);
    assert_int_equal(budget, 100); /* everything given back */
}

static void metric_stats_skip_and_count_non_finite_values(void **state) {
    (void)state;
    metric_stats s;
    metric_stats_init(&s);
    assert_null(metric_stats_get(&s, 3));
    metric_stats_add(&s, 3, 2.0);
    metric_stats_add(&s, 3, NAN);
    metric_stats_add(&s, 3, 4.0);
    metric_stats_add(&s, 3, INFINITY);
    metric_stats_add(&s, 3, -INFINITY);
    metric_stats_add(&s, 0, 1.0);
    metric_stats_add(&s, 7, NAN); /* only non-finite: still reported */
    const metric_stat *m = metric_stats_get(&s, 3);
    assert_non_null(m);
    assert_int_equal(m->frames, 2);
    assert_int_equal(m->nonfinite, 3);
    assert_true(m->min == 2.0 && m->max == 4.0);
    assert_true(metric_stat_mean(m) == 3.0);
    assert_true(metric_stat_p95((metric_stat *)m) == 4.0);
    assert_null(metric_stats_get(&s, 1));
    m = metric_stats_get(&s, 7);
    assert_non_null(m);
    assert_int_equal(m->frames, 0);
    assert_true(isnan(metric_stat_mean(m)));
    assert_int_equal(metric_stats_add(&s, VOR_READER_MAX_COLUMNS, 1.0), -1);
    metric_stats_free(&s);
}

static void the_mean_is_compensated(void **state) {
    (void)state;
    metric_stats s;
    metric_stats_init(&s);
    /* 1e16 then a million 1.0: naive summation loses every 1.0. */
    metric_stats_add(&s, 0, 1e16);
    for (int i = 0; i < 1000000; i++) metric_stats_add(&s, 0, 1.0);
    metric_stats_add(&s, 0, -1e16);
    const metric_stat *m = metric_stats_get(&s, 0);
    double want = 1000000.0 / 1000002.0;
    assert_true(fabs(metric_stat_mean(m) - want) < 1e-12);
    metric_stats_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_percentiles_are_nearest_rank),
        cmocka_unit_test(histogram_percentiles_are_within_a_256th),
        cmocka_unit_test(zero_negative_zero_and_subnormals_are_ordered),
        cmocka_unit_test(a_shared_budget_moves_streams_to_histograms),
        cmocka_unit_test(metric_stats_skip_and_count_non_finite_values),
        cmocka_unit_test(the_mean_is_compensated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
