/*
 * test_diff.c: the differential flame graph on a hand-made before/after pair.
 *   same    10 -> 10   white
 *   slower  10 -> 20   red, half strength (relative change (20 - 10) / 20 = 0.5)
 *   faster  20 -> 10   blue, half strength
 *   new      - ->  5   full red
 *   gone     5 ->  -   not drawn, reported in the notes
 */
#include "test_helpers.h"

static const char before_text[] = "main;same 10\nmain;slower 10\nmain;faster 20\nmain;gone 5\n";
static const char after_text[] = "main;same 10\nmain;slower 20\nmain;faster 10\nmain;new 5\n";

static char *diff_svg_of(const flamegraph_tree *before, const flamegraph_tree *after,
                         const flamegraph_svg_options *options)
{
    FILE *out = tmpfile();
    flamegraph_error err;
    flamegraph_status status = flamegraph_write_diff_svg(before, after, options, out, &err);
    if (status != FLAMEGRAPH_OK)
        fail_msg("flamegraph_write_diff_svg: %s", err.message);
    char *svg = read_all(out, NULL);
    fclose(out);
    return svg;
}

static void slower_is_red_faster_is_blue_unchanged_is_white(void **state)
{
    (void)state;
    flamegraph_tree *before = tree_of(before_text, NULL);
    flamegraph_tree *after = tree_of(after_text, NULL);
    char *svg = diff_svg_of(before, after, NULL);
    char fill[32];
    assert_string_equal(fill_of_frame(svg, "same", fill, sizeof fill), "rgb(255,255,255)");
    assert_string_equal(fill_of_frame(svg, "slower", fill, sizeof fill), "rgb(255,155,155)");
    assert_string_equal(fill_of_frame(svg, "faster", fill, sizeof fill), "rgb(155,155,255)");
    assert_string_equal(fill_of_frame(svg, "new", fill, sizeof fill), "rgb(255,55,55)");
    /* main: 45 before and after */
    assert_string_equal(fill_of_frame(svg, "main", fill, sizeof fill), "rgb(255,255,255)");
    free(svg);
    flamegraph_tree_destroy(before);
    flamegraph_tree_destroy(after);
}

static void hover_shows_both_values_and_the_change(void **state)
{
    (void)state;
    flamegraph_tree *before = tree_of(before_text, NULL);
    flamegraph_tree *after = tree_of(after_text, NULL);
    char *svg = diff_svg_of(before, after, NULL);
    assert_non_null(
        strstr(svg, "<title>slower (20 samples, 44.44%; before 10 samples, +100.00%)</title>"));
    assert_non_null(
        strstr(svg, "<title>faster (10 samples, 22.22%; before 20 samples, -50.00%)</title>"));
    assert_non_null(
        strstr(svg, "<title>same (10 samples, 22.22%; before 10 samples, unchanged)</title>"));
    assert_non_null(strstr(svg, "<title>new (5 samples, 11.11%; new, not in before)</title>"));
    free(svg);
    flamegraph_tree_destroy(before);
    flamegraph_tree_destroy(after);
}

static void frames_only_in_before_are_not_drawn_but_reported_in_the_notes(void **state)
{
    (void)state;
    flamegraph_tree *before = tree_of(before_text, NULL);
    flamegraph_tree *after = tree_of(after_text, NULL);
    char *svg = diff_svg_of(before, after, NULL);
    assert_null(strstr(svg, "<title>gone"));
    assert_non_null(strstr(svg, "before 45 samples, after 45 samples (+0.00%); only in before, "
                                "not drawn: 1 frame, 5 samples"));
    assert_non_null(strstr(svg, ">Differential Flame Graph</text>"));
    free(svg);
    flamegraph_tree_destroy(before);
    flamegraph_tree_destroy(after);
}

static void widths_are_those_of_after(void **state)
{
    (void)state;
    flamegraph_tree *before = tree_of("a 90\nb 10\n", NULL);
    flamegraph_tree *after = tree_of("a 50\nb 50\n", NULL);
    char *svg = diff_svg_of(before, after, NULL);
    /* 1180 px: each half is 590 px wide */
    assert_int_equal(count_of(svg, "width=\"590.00\""), 2);
    free(svg);
    flamegraph_tree_destroy(before);
    flamegraph_tree_destroy(after);
}

static void normalizing_compares_shares_instead_of_absolute_values(void **state)
{
    (void)state;
    flamegraph_tree *before = tree_of("a;b 10\na;c 30\n", NULL);
    flamegraph_tree *after = tree_of("a;b 20\na;c 60\n", NULL); /* twice as long, same shape */
    flamegraph_svg_options normalize = { .diff_normalize = true };
    char *svg = diff_svg_of(before, after, &normalize);
    char fill[32];
    assert_string_equal(fill_of_frame(svg, "b", fill, sizeof fill), "rgb(255,255,255)");
    assert_string_equal(fill_of_frame(svg, "c", fill, sizeof fill), "rgb(255,255,255)");
    free(svg);
    svg = diff_svg_of(before, after, NULL);
    assert_string_equal(fill_of_frame(svg, "b", fill, sizeof fill), "rgb(255,155,155)");
    free(svg);
    flamegraph_tree_destroy(before);
    flamegraph_tree_destroy(after);
}

static void flame_charts_and_mixed_directions_are_refused(void **state)
{
    (void)state;
    flamegraph_tree_options chart = { .flamechart = true };
    flamegraph_tree_options reversed = { .reverse = true };
    flamegraph_tree *merged = tree_of("a 1\n", NULL);
    flamegraph_tree *timed = tree_of("a 1\n", &chart);
    flamegraph_tree *backwards = tree_of("a 1\n", &reversed);
    FILE *out = tmpfile();
    flamegraph_error err;
    assert_int_equal(flamegraph_write_diff_svg(merged, timed, NULL, out, &err), FLAMEGRAPH_ERR_MODE);
    assert_non_null(strstr(err.message, "merged"));
    assert_int_equal(flamegraph_write_diff_svg(merged, backwards, NULL, out, &err),
                     FLAMEGRAPH_ERR_MODE);
    fclose(out);
    flamegraph_tree_destroy(merged);
    flamegraph_tree_destroy(timed);
    flamegraph_tree_destroy(backwards);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slower_is_red_faster_is_blue_unchanged_is_white),
        cmocka_unit_test(hover_shows_both_values_and_the_change),
        cmocka_unit_test(frames_only_in_before_are_not_drawn_but_reported_in_the_notes),
        cmocka_unit_test(widths_are_those_of_after),
        cmocka_unit_test(normalizing_compares_shares_instead_of_absolute_values),
        cmocka_unit_test(flame_charts_and_mixed_directions_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
