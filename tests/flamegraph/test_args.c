/*
 * test_args.c: the command line of `vor flamegraph`: every option, any order, one clear message
 * for each kind of mistake.
 */
#include "test_helpers.h"

#define ARGS(...) ((char *[]){ "flamegraph", __VA_ARGS__ })
#define COUNT(...) ((int)(sizeof((char *[]){ "flamegraph", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(out, err, ...) flamegraph_parse_args(COUNT(__VA_ARGS__), ARGS(__VA_ARGS__), out, err)

static void options_may_stand_before_and_after_file_names(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "--inverted", "capture.vor", "-o", "out.svg", "--palette",
                           "blue", "second.vor", "--flamechart"),
                     FLAMEGRAPH_ARGS_OK);
    assert_int_equal(opt.input_count, 2);
    assert_string_equal(opt.inputs[0], "capture.vor");
    assert_string_equal(opt.inputs[1], "second.vor");
    assert_string_equal(opt.output_path, "out.svg");
    assert_true(opt.svg.inverted);
    assert_true(opt.tree.flamechart);
    assert_int_equal(opt.svg.palette, FLAMEGRAPH_PALETTE_BLUE);
}

static void every_option_is_stored_where_the_caller_expects_it(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "--reverse", "--deterministic", "--seed", "7", "--title",
                           "T", "--subtitle", "S", "--notes", "N", "--image-width", "800",
                           "--font-size", "10", "--count-name", "ns", "--raw",
                           "--max-frame-scopes", "1000", "--max-nodes", "5000", "--folded", "in.folded", "--frames", "10..20",
                           "--thread", "main", "-i", "--min-width", "0.5"),
                     FLAMEGRAPH_ARGS_OK);
    assert_true(opt.tree.reverse);
    assert_true(opt.svg.deterministic);
    assert_int_equal(opt.svg.color_seed, 7);
    assert_string_equal(opt.svg.title, "T");
    assert_string_equal(opt.svg.subtitle, "S");
    assert_string_equal(opt.svg.notes, "N");
    assert_int_equal(opt.svg.image_width, 800);
    assert_int_equal(opt.svg.font_size, 10);
    assert_string_equal(opt.svg.count_name, "ns");
    assert_true(opt.raw);
    assert_int_equal(opt.max_frame_scopes, 1000);
    assert_int_equal(opt.tree.max_nodes, 5000);
    assert_string_equal(opt.folded_path, "in.folded");
    assert_true(opt.has_frames);
    assert_int_equal(opt.frames_first, 10);
    assert_int_equal(opt.frames_last, 20);
    assert_string_equal(opt.thread_name, "main");
    assert_true(opt.svg.inverted);
    assert_true(opt.svg.min_width == 0.5);
    assert_false(opt.svg.min_width_is_percent);
    assert_int_equal(opt.input_count, 0);
}

static void values_may_follow_an_equals_sign_or_be_glued_to_a_short_option(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "--title=A = B", "-oout.svg", "--min-width=2%"),
                     FLAMEGRAPH_ARGS_OK);
    assert_string_equal(opt.svg.title, "A = B");
    assert_string_equal(opt.output_path, "out.svg");
    assert_true(opt.svg.min_width == 2.0);
    assert_true(opt.svg.min_width_is_percent);
}

static void double_dash_ends_the_options(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "--deterministic", "--", "--not-an-option", "-"),
                     FLAMEGRAPH_ARGS_OK);
    assert_int_equal(opt.input_count, 2);
    assert_string_equal(opt.inputs[0], "--not-an-option");
    assert_string_equal(opt.inputs[1], "-");
}

static void frame_ranges_may_be_open_on_either_side(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "--frames", "5.."), FLAMEGRAPH_ARGS_OK);
    assert_int_equal(opt.frames_first, 5);
    assert_true(opt.frames_last == UINT64_MAX);
    assert_int_equal(PARSE(&opt, &err, "--frames", "..9"), FLAMEGRAPH_ARGS_OK);
    assert_int_equal(opt.frames_first, 0);
    assert_int_equal(opt.frames_last, 9);
    assert_int_equal(PARSE(&opt, &err, "--frames", "42"), FLAMEGRAPH_ARGS_OK);
    assert_int_equal(opt.frames_first, 42);
    assert_int_equal(opt.frames_last, 42);
    assert_int_equal(PARSE(&opt, &err, "input.vor"), FLAMEGRAPH_ARGS_OK);
    assert_false(opt.has_frames);
}

static void min_width_zero_draws_everything(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "--min-width", "0"), FLAMEGRAPH_ARGS_OK);
    assert_true(opt.svg.min_width > 0 && opt.svg.min_width < 1e-6);
}

/* Parsing must fail with usage error and a message containing `expected`. */
static void assert_usage_error(int argc, char **argv, const char *expected)
{
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(flamegraph_parse_args(argc, argv, &opt, &err), FLAMEGRAPH_ARGS_USAGE_ERROR);
    assert_int_equal(err.status, FLAMEGRAPH_ERR_USAGE);
    if (strstr(err.message, expected) == NULL)
        fail_msg("message '%s' lacks '%s'", err.message, expected);
    assert_null(strchr(err.message, '\n'));
}

#define ASSERT_USAGE_ERROR(expected, ...) \
    assert_usage_error(COUNT(__VA_ARGS__), ARGS(__VA_ARGS__), expected)

static void mistakes_give_one_clear_message(void **state)
{
    (void)state;
    ASSERT_USAGE_ERROR("unknown option '--bogus'", "in.vor", "--bogus");
    ASSERT_USAGE_ERROR("unknown option '-x'", "-x");
    ASSERT_USAGE_ERROR("unknown option '-ih'", "-ih");
    ASSERT_USAGE_ERROR("option '--title' needs a value", "--title");
    ASSERT_USAGE_ERROR("option '--flamechart' takes no value", "--flamechart=yes");
    ASSERT_USAGE_ERROR("--palette: unknown palette 'pink' (one of hot, mem, io, red, green, "
                       "blue, aqua, yellow, purple, orange)",
                       "--palette", "pink");
    ASSERT_USAGE_ERROR("--image-width: 'wide' is not a whole number from 100 to 100000",
                       "--image-width", "wide");
    ASSERT_USAGE_ERROR("--image-width: '50' is not", "--image-width", "50");
    ASSERT_USAGE_ERROR("--min-width: '-1' is not a width", "--min-width", "-1");
    ASSERT_USAGE_ERROR("--min-width: '150%' is not a width", "--min-width", "150%");
    ASSERT_USAGE_ERROR("--frames: '9..3' is not a frame range", "--frames", "9..3");
    ASSERT_USAGE_ERROR("--frames: 'x..3' is not a frame range", "--frames", "x..3");
    ASSERT_USAGE_ERROR("--frames: '..' is not a frame range", "--frames", "..");
    ASSERT_USAGE_ERROR("--seed: '0' is not a whole number", "--seed", "0");
    ASSERT_USAGE_ERROR("--max-nodes: '99999999999' is not", "--max-nodes", "99999999999");
    ASSERT_USAGE_ERROR("too many file names: 'i' (at most 8)", "a", "b", "c", "d", "e", "f", "g",
                       "h", "i");
}

static void help_is_reported_and_lists_every_option(void **state)
{
    (void)state;
    flamegraph_options opt;
    flamegraph_error err;
    assert_int_equal(PARSE(&opt, &err, "in.vor", "--help"), FLAMEGRAPH_ARGS_HELP);
    assert_int_equal(PARSE(&opt, &err, "-h"), FLAMEGRAPH_ARGS_HELP);
    const char *help = flamegraph_help_text();
    static const char *const options[] = {
        "--flamechart", "--inverted", "--reverse", "--min-width", "--palette", "--deterministic",
        "--seed", "--title", "--subtitle", "--notes", "--image-width", "--font-size",
        "--count-name", "--max-nodes", "--folded", "--output", "--frames", "--thread", "--raw",
        "--max-frame-scopes", "--help",
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (strstr(help, options[i]) == NULL)
            fail_msg("--help does not mention %s", options[i]);
    assert_int_equal(help[strlen(help) - 1], '\n');
}

/* The other way round (issue 10.6): every option the help offers is one the parser takes.
 * `vor flamegraph` has one input; a differential option here would be a promise it breaks. */
static void help_offers_only_what_the_parser_takes(void **state)
{
    (void)state;
    const char *help = flamegraph_help_text();
    size_t checked = 0;
    for (const char *p = strstr(help, "--"); p != NULL; p = strstr(p + 2, "--")) {
        char name[64];
        size_t n = 0;
        while (n + 1 < sizeof name && (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z'))) {
            name[n] = p[n];
            n++;
        }
        name[n] = '\0';
        if (n <= 2)
            continue; /* "--" alone: the end of the options */
        flamegraph_options opt;
        flamegraph_error err;
        char value[] = "1";
        char *argv[] = { (char *)"flamegraph", name, value, NULL };
        int rc = flamegraph_parse_args(3, argv, &opt, &err);
        if (rc == FLAMEGRAPH_ARGS_USAGE_ERROR && strstr(err.message, "unknown option") != NULL)
            fail_msg("--help offers %s, which the parser refuses", name);
        checked++;
    }
    assert_true(checked >= 20);
    assert_null(strstr(help, "--normalize"));
    assert_null(strstr(help, "Differential"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_may_stand_before_and_after_file_names),
        cmocka_unit_test(every_option_is_stored_where_the_caller_expects_it),
        cmocka_unit_test(values_may_follow_an_equals_sign_or_be_glued_to_a_short_option),
        cmocka_unit_test(double_dash_ends_the_options),
        cmocka_unit_test(frame_ranges_may_be_open_on_either_side),
        cmocka_unit_test(min_width_zero_draws_everything),
        cmocka_unit_test(mistakes_give_one_clear_message),
        cmocka_unit_test(help_is_reported_and_lists_every_option),
        cmocka_unit_test(help_offers_only_what_the_parser_takes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
