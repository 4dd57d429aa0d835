/* test_frame_stats.c: the frame-time histogram against exact percentiles. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p) {
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform01(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void check_against_exact(uint64_t *values, size_t n) {
    vor_frame_stats_reset();
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        vor_frame_stats_add(values[i]);
        sum += (double)values[i];
    }
    qsort(values, n, sizeof values[0], compare_u64);
    vor_frame_stats st;
    vor_frame_stats_get(&st);
    assert_int_equal(st.count, n);
    assert_int_equal(st.min_ns, values[0]);
    assert_int_equal(st.max_ns, values[n - 1]);
    assert_true(fabs(st.mean_ns - sum / (double)n) <= 1e-9 * st.mean_ns);
    const double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        uint64_t exact = exact_percentile(values, n, ps[i]);
        uint64_t got = vor_frame_stats_percentile_ns(ps[i]);
        double err = fabs((double)got - (double)exact);
        /* The documented bound: within 1/256 of the exact value (values < 128 exact). */
        if (err > (double)exact / 256.0 + 0.5)
            fail_msg("p%.2f: got %llu, exact %llu (error %.4f%%)", ps[i], (unsigned long long)got,
                     (unsigned long long)exact, 100.0 * err / (double)exact);
    }
    assert_int_equal(st.p50_ns, vor_frame_stats_percentile_ns(50));
    assert_int_equal(st.p95_ns, vor_frame_stats_percentile_ns(95));
    assert_int_equal(st.p99_ns, vor_frame_stats_percentile_ns(99));
}

static void percentiles_within_bound_on_log_uniform_data(void **state) {
    (void)state;
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) v[i] = (uint64_t)exp(log(50.0) + uniform01() * (log(5e9) - log(50.0)));
    check_against_exact(v, n);
    free(v);
}

static void percentiles_within_bound_on_frame_like_data(void **state) {
    (void)state;
    /* 16.7 ms frames with jitter and 2% long stalls. */
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        double ms = 16.7 + (uniform01() - 0.5) * 2.0;
        if (uniform01() < 0.02) ms += 20 + uniform01() * 200;
        v[i] = (uint64_t)(ms * 1e6);
    }
    check_against_exact(v, n);
    free(v);
}

static void small_values_are_exact(void **state) {
    (void)state;
    uint64_t v[100];
    for (int i = 0; i < 100; i++) v[i] = (uint64_t)(i + 1);
    check_against_exact(v, 100);
    assert_int_equal(vor_frame_stats_percentile_ns(50), 50);
}

static void empty_and_edge_percentiles(void **state) {
    (void)state;
    vor_frame_stats_reset();
    vor_frame_stats st;
    vor_frame_stats_get(&st);
    assert_int_equal(st.count, 0);
    assert_int_equal(vor_frame_stats_percentile_ns(50), 0);
    vor_frame_stats_add(1000);
    vor_frame_stats_add(3000);
    assert_int_equal(vor_frame_stats_percentile_ns(0), 1000);
    assert_int_equal(vor_frame_stats_percentile_ns(100), 3000);
    assert_int_equal(vor_frame_stats_percentile_ns(NAN), 1000);
    assert_int_equal(vor_frame_stats_percentile_ns(250), 3000);
}

static void frames_feed_the_statistics(void **state) {
    (void)state;
    fake_clock_install(0);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    for (int i = 1; i <= 100; i++) {
        fake_advance((uint64_t)i * 1000000);
        vor_frame_mark();
    }
    vor_frame_stats st;
    vor_frame_stats_get(&st);
    assert_int_equal(st.count, 100);
    assert_int_equal(st.min_ns, 1000000);
    assert_int_equal(st.max_ns, 100000000);
    assert_true(fabs(st.mean_ns - 50.5e6) < 1);
    assert_true(fabs((double)st.p50_ns - 50e6) <= 50e6 / 256);
    assert_true(fabs((double)st.p95_ns - 95e6) <= 95e6 / 256);
    session_teardown();
    /* A new session starts with fresh statistics. */
    vor_enable();
    vor_frame_stats_get(&st);
    assert_int_equal(st.count, 0);
    vor_shutdown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percentiles_within_bound_on_log_uniform_data),
        cmocka_unit_test(percentiles_within_bound_on_frame_like_data),
        cmocka_unit_test(small_values_are_exact),
        cmocka_unit_test(empty_and_edge_percentiles),
        cmocka_unit_test(frames_feed_the_statistics),
    };
    return cmocka_run_group_tests_name("frame_stats", tests, NULL, NULL);
}
