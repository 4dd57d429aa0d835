/*
 * test_svg.c: the SVG writer: what is drawn, colours, escaping, the embedded viewer, units.
 * Geometry read back from the XML is checked by check_svg.py; this file checks what a string
 * search can state exactly. White-box: includes the private header for value formatting.
 */
#include "test_helpers.h"

#include "flamegraph_internal.h"

static const flamegraph_svg_options deterministic = { .deterministic = true };

static void every_frame_above_the_minimum_width_gets_one_group_and_no_other_does(void **state)
{
    (void)state;
    /* 1180 px for 10000: "tiny" (0.75) is 0.089 px, under the 0.1 px default; its child too. */
    flamegraph_tree *tree = tree_of(
        "main;work 6000\nmain;idle 3999.25\nmain;tiny 0.25\nmain;tiny;deeper 0.5\n", NULL);
    char *svg = svg_of(tree, &deterministic);
    assert_int_equal(count_of(svg, "<g><title>"), 4); /* all, main, work, idle */
    assert_null(strstr(svg, "<title>tiny"));
    assert_null(strstr(svg, "<title>deeper"));
    /* The omitted frames' time is still in their parent. */
    assert_non_null(strstr(svg, "<title>main (10,000 samples, 100.00%)</title>"));
    free(svg);

    flamegraph_svg_options everything = { .deterministic = true, .min_width = 1e-9 };
    svg = svg_of(tree, &everything);
    assert_int_equal(count_of(svg, "<g><title>"), 6);
    free(svg);
    flamegraph_tree_destroy(tree);
}

static void min_width_may_be_a_percentage_of_the_graph(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("a 50\nb 30\nc 15\nd 5\n", NULL);
    flamegraph_svg_options options = { .deterministic = true, .min_width = 10,
                                       .min_width_is_percent = true };
    char *svg = svg_of(tree, &options);
    assert_non_null(strstr(svg, "<title>a ("));
    assert_non_null(strstr(svg, "<title>c ("));
    assert_null(strstr(svg, "<title>d (")); /* 5% < 10% */
    free(svg);
    flamegraph_tree_destroy(tree);
}

static void deterministic_colours_are_byte_identical_across_runs(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("main;parse 3\nmain;eval 4\nio;read 2\n", NULL);
    char *first = svg_of(tree, &deterministic);
    char *second = svg_of(tree, &deterministic);
    assert_string_equal(first, second);
    free(first);
    free(second);
    flamegraph_tree_destroy(tree);
}

static void deterministic_colours_follow_the_name_across_different_inputs(void **state)
{
    (void)state;
    flamegraph_tree *one = tree_of("main;shared_function 3\nmain;only_here 1\n", NULL);
    flamegraph_tree *two = tree_of("other;deeper;shared_function 7\nx 100\n", NULL);
    char *svg_one = svg_of(one, &deterministic);
    char *svg_two = svg_of(two, &deterministic);
    char fill_one[32], fill_two[32], fill_other[32];
    assert_string_equal(fill_of_frame(svg_one, "shared_function", fill_one, sizeof fill_one),
                        fill_of_frame(svg_two, "shared_function", fill_two, sizeof fill_two));
    /* and another name almost surely gets another colour */
    assert_string_not_equal(fill_one, fill_of_frame(svg_one, "only_here", fill_other,
                                                    sizeof fill_other));
    free(svg_one);
    free(svg_two);
    flamegraph_tree_destroy(one);
    flamegraph_tree_destroy(two);
}

static void random_colours_are_reproducible_with_a_seed_and_vary_without(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("a;b;c 1\na;d 2\ne 3\nf 4\ng 5\n", NULL);
    flamegraph_svg_options seeded = { .color_seed = 42 };
    flamegraph_svg_options other_seed = { .color_seed = 43 };
    char *first = svg_of(tree, &seeded);
    char *second = svg_of(tree, &seeded);
    char *third = svg_of(tree, &other_seed);
    assert_string_equal(first, second);
    assert_string_not_equal(first, third);
    free(first);
    free(second);
    free(third);
    flamegraph_tree_destroy(tree);
}

static void palettes_change_the_colours(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("a 1\n", NULL);
    flamegraph_svg_options options = deterministic;
    char previous[32] = "", fill[32];
    for (int palette = 0; palette < FLAMEGRAPH_PALETTE_COUNT; palette++) {
        options.palette = (flamegraph_palette)palette;
        char *svg = svg_of(tree, &options);
        fill_of_frame(svg, "a", fill, sizeof fill);
        assert_string_not_equal(fill, previous);
        strcpy(previous, fill);
        free(svg);
    }
    flamegraph_palette parsed;
    assert_true(flamegraph_palette_from_name("aqua", &parsed));
    assert_int_equal(parsed, FLAMEGRAPH_PALETTE_AQUA);
    assert_false(flamegraph_palette_from_name("pink", &parsed));
    flamegraph_tree_destroy(tree);
}

static void the_viewer_script_is_inline_and_finds_every_element_it_uses(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("a;b 1\n", NULL);
    char *svg = svg_of(tree, &deterministic);
    assert_non_null(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
    assert_non_null(strstr(svg, "var vorFlamegraphConfig = {"));
    assert_non_null(strstr(svg, "function zoom(target)"));
    assert_non_null(strstr(svg, "function unzoom()"));
    assert_non_null(strstr(svg, "function search(term)"));
    assert_non_null(strstr(svg, "new RegExp(term)"));
    static const char *const ids[] = { "details", "unzoom", "search", "matched", "frames" };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char use[64], element[64];
        snprintf(use, sizeof use, "getElementById(\"%s\")", ids[i]);
        snprintf(element, sizeof element, "id=\"%s\"", ids[i]);
        if (strstr(svg, use) == NULL || count_of(svg, element) != 1)
            fail_msg("the script uses #%s but it is not in the document once", ids[i]);
    }
    /* No external resource: nothing is loaded from anywhere. */
    assert_null(strstr(svg, "href"));
    assert_null(strstr(svg, "http://www.w3.org/1999/xlink"));
    assert_int_equal(count_of(svg, "]]>"), 2); /* the style's and the script's CDATA ends */
    free(svg);
    flamegraph_tree_destroy(tree);
}

static void names_titles_and_notes_are_escaped_for_xml(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    const char *names[] = { "a<b>&\"c\"'d'", "bad\xff\xfe utf8 \xc3\x28 ctl\x01", "ok \xc3\xa9" };
    assert_int_equal(flamegraph_tree_add_stack(tree, names, 3, 10), FLAMEGRAPH_OK);
    flamegraph_svg_options options = { .deterministic = true, .title = "T <&>",
                                       .subtitle = "S \"'", .notes = "N ]]> \x02" };
    char *svg = svg_of(tree, &options);
    assert_non_null(strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39; ("));
    assert_non_null(strstr(svg, "bad\xEF\xBF\xBD\xEF\xBF\xBD utf8 \xEF\xBF\xBD( ctl\xEF\xBF\xBD"));
    assert_non_null(strstr(svg, "ok \xc3\xa9 (")); /* valid UTF-8 is kept */
    assert_non_null(strstr(svg, ">T &lt;&amp;&gt;</text>"));
    assert_non_null(strstr(svg, ">S &quot;&#39;</text>"));
    assert_non_null(strstr(svg, "N ]]&gt; \xEF\xBF\xBD"));
    assert_null(strchr(svg, '\xff'));
    assert_null(strchr(svg, '\x01'));
    free(svg);
    flamegraph_tree_destroy(tree);
}

static void labels_are_trimmed_to_their_frame(void **state)
{
    (void)state;
    /* At 1200 px, 12 px font: a frame of 10% (118 px) fits 15 characters. */
    flamegraph_tree *tree =
        tree_of("a_rather_long_function_name 10\nshort 10\nx 79\nnarrow_but_named 1\n", NULL);
    char *svg = svg_of(tree, &deterministic);
    assert_non_null(strstr(svg, ">a_rather_long..</text>"));
    assert_non_null(strstr(svg, ">short</text>"));
    /* 11.8 px: under three characters, so no label at all. */
    const char *narrow = strstr(svg, "<title>narrow_but_named (");
    assert_non_null(narrow);
    const char *group_end = strstr(narrow, "</g>");
    const char *next_label = strstr(narrow, "<text");
    assert_true(next_label == NULL || next_label > group_end);
    free(svg);
    flamegraph_tree_destroy(tree);
}

/* The y attribute of the rectangle of frame `name`. */
static int y_of_frame(const char *svg, const char *name)
{
    char title[128];
    snprintf(title, sizeof title, "<title>%s (", name);
    const char *at = strstr(svg, title);
    assert_non_null(at);
    const char *y = strstr(at, " y=\"");
    assert_non_null(y);
    return atoi(y + 4);
}

static void inverted_puts_the_root_on_top(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("main;leaf 1\n", NULL);
    char *normal = svg_of(tree, &deterministic);
    flamegraph_svg_options icicle = { .deterministic = true, .inverted = true };
    char *inverted = svg_of(tree, &icicle);
    assert_true(y_of_frame(normal, "all") > y_of_frame(normal, "leaf"));
    assert_true(y_of_frame(inverted, "all") < y_of_frame(inverted, "leaf"));
    assert_non_null(strstr(inverted, ">Icicle Graph</text>"));
    assert_non_null(strstr(normal, ">Flame Graph</text>"));
    free(normal);
    free(inverted);
    flamegraph_tree_destroy(tree);
}

static void a_flame_chart_has_its_own_title(void **state)
{
    (void)state;
    flamegraph_tree_options chart = { .flamechart = true };
    flamegraph_tree *tree = tree_of("a 1\n", &chart);
    char *svg = svg_of(tree, &deterministic);
    assert_non_null(strstr(svg, ">Flame Chart</text>"));
    free(svg);
    flamegraph_tree_destroy(tree);
}

static void hover_details_show_value_in_its_unit_and_share_of_total(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    const char *parse[] = { "main", "parse" };
    const char *eval[] = { "main", "eval" };
    flamegraph_tree_add_stack(tree, parse, 2, 12345678);
    flamegraph_tree_add_stack(tree, eval, 2, 12345678);
    flamegraph_svg_options options = { .deterministic = true, .count_name = "ns" };
    char *svg = svg_of(tree, &options);
    assert_non_null(strstr(svg, "<title>parse (12.3 ms, 50.00%)</title>"));
    assert_non_null(strstr(svg, "<title>main (24.7 ms, 100.00%)</title>"));
    free(svg);
    flamegraph_tree_destroy(tree);
}

/* fg_out_value() of `value`, as a string. */
static void assert_value_text(double value, const char *count_name, const char *expected)
{
    fg_out *out = malloc(sizeof *out);
    fg_out_init(out, NULL);
    fg_out_value(out, value, count_name);
    fg_out_char(out, '\0');
    assert_string_equal(out->buffer, expected);
    free(out);
}

static void values_are_written_with_their_unit(void **state)
{
    (void)state;
    assert_value_text(850, "ns", "850 ns");
    assert_value_text(1500, "ns", "1.50 \xC2\xB5s");
    assert_value_text(12345678, "ns", "12.3 ms");
    assert_value_text(2e9, "ns", "2.00 s");
    assert_value_text(1.5, "ms", "1.50 ms");
    assert_value_text(250, "us", "250 \xC2\xB5s");
    assert_value_text(1234567, NULL, "1,234,567 samples");
    assert_value_text(2.5, "samples", "2.50 samples");
    assert_value_text(3, "", "3");
    assert_value_text(7, "<bytes>", "7 &lt;bytes&gt;");
}

static void an_empty_tree_gives_a_valid_svg_and_a_status_saying_so(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    FILE *out = tmpfile();
    flamegraph_error err;
    assert_int_equal(flamegraph_write_svg(tree, NULL, out, &err), FLAMEGRAPH_ERR_EMPTY);
    assert_non_null(strstr(err.message, "no stacks"));
    char *svg = read_all(out, NULL);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "no stacks to draw</text>\n</svg>\n"));
    free(svg);
    fclose(out);
    flamegraph_tree_destroy(tree);
}

static void a_failing_write_is_reported(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "wb");
    if (full == NULL)
        skip();
    flamegraph_tree *tree = tree_of("a;b 1\n", NULL);
    flamegraph_error err;
    assert_int_equal(flamegraph_write_svg(tree, NULL, full, &err), FLAMEGRAPH_ERR_WRITE);
    assert_int_equal(err.status, FLAMEGRAPH_ERR_WRITE);
    fclose(full);
    flamegraph_tree_destroy(tree);
}

static void status_names_and_texts_come_from_one_list(void **state)
{
    (void)state;
    assert_string_equal(flamegraph_status_name(FLAMEGRAPH_ERR_BAD_COUNT),
                        "FLAMEGRAPH_ERR_BAD_COUNT");
    assert_string_equal(flamegraph_status_text(FLAMEGRAPH_OK), "success");
    assert_string_equal(flamegraph_status_name(FLAMEGRAPH_STATUS_COUNT), "?");
    assert_string_equal(flamegraph_version_string(), "1.0.0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_frame_above_the_minimum_width_gets_one_group_and_no_other_does),
        cmocka_unit_test(min_width_may_be_a_percentage_of_the_graph),
        cmocka_unit_test(deterministic_colours_are_byte_identical_across_runs),
        cmocka_unit_test(deterministic_colours_follow_the_name_across_different_inputs),
        cmocka_unit_test(random_colours_are_reproducible_with_a_seed_and_vary_without),
        cmocka_unit_test(palettes_change_the_colours),
        cmocka_unit_test(the_viewer_script_is_inline_and_finds_every_element_it_uses),
        cmocka_unit_test(names_titles_and_notes_are_escaped_for_xml),
        cmocka_unit_test(labels_are_trimmed_to_their_frame),
        cmocka_unit_test(inverted_puts_the_root_on_top),
        cmocka_unit_test(a_flame_chart_has_its_own_title),
        cmocka_unit_test(hover_details_show_value_in_its_unit_and_share_of_total),
        cmocka_unit_test(values_are_written_with_their_unit),
        cmocka_unit_test(an_empty_tree_gives_a_valid_svg_and_a_status_saying_so),
        cmocka_unit_test(a_failing_write_is_reported),
        cmocka_unit_test(status_names_and_texts_come_from_one_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
