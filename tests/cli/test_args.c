/* test_args.c: command-line parsing of the subcommands (native/cli/args.c): options
 * before or after file names, both value forms, "--", "-", and every refusal with its
 * message. */
#include "cli_test.h"

#include <string.h>

enum { OPT_FORMAT, OPT_OUTPUT, OPT_QUIET, OPT_NO_THREAD };

static const cli_option options[] = {
    {"format", 'f', 1, OPT_FORMAT},
    {"output", 'o', 1, OPT_OUTPUT},
    {"quiet", 'q', 0, OPT_QUIET},
    {"no-thread", 0, 0, OPT_NO_THREAD},
};
#define N_OPTIONS (sizeof options / sizeof *options)

static int parse(cli_args *a, int argc, const char **argv) {
    return cli_parse_args(argc, (char **)argv, options, N_OPTIONS, a);
}

static void options_may_come_before_or_after_the_file(void **state) {
    (void)state;
    cli_args a;
    const char *before[] = {"--format", "csv", "-o", "out.csv", "run.vor"};
    assert_int_equal(parse(&a, 5, before), 0);
    assert_int_equal(a.positional_count, 1);
    assert_string_equal(a.positional[0], "run.vor");
    assert_string_equal(a.values[OPT_FORMAT], "csv");
    assert_string_equal(a.values[OPT_OUTPUT], "out.csv");
    assert_null(a.values[OPT_QUIET]);

    const char *after[] = {"run.vor", "--format", "csv", "-o", "out.csv"};
    assert_int_equal(parse(&a, 5, after), 0);
    assert_int_equal(a.positional_count, 1);
    assert_string_equal(a.positional[0], "run.vor");
    assert_string_equal(a.values[OPT_FORMAT], "csv");
    assert_string_equal(a.values[OPT_OUTPUT], "out.csv");

    const char *around[] = {"-q", "a.vor", "--no-thread", "b.vor"};
    assert_int_equal(parse(&a, 4, around), 0);
    assert_int_equal(a.positional_count, 2);
    assert_string_equal(a.positional[0], "a.vor");
    assert_string_equal(a.positional[1], "b.vor");
    assert_string_equal(a.values[OPT_QUIET], "");
    assert_string_equal(a.values[OPT_NO_THREAD], "");
}

static void values_can_be_attached(void **state) {
    (void)state;
    cli_args a;
    const char *argv[] = {"--format=folded", "-oout.txt", "x.vor"};
    assert_int_equal(parse(&a, 3, argv), 0);
    assert_string_equal(a.values[OPT_FORMAT], "folded");
    assert_string_equal(a.values[OPT_OUTPUT], "out.txt");
    const char *empty[] = {"--output=", "x.vor"};
    assert_int_equal(parse(&a, 2, empty), 0);
    assert_string_equal(a.values[OPT_OUTPUT], "");
}

static void the_last_value_wins(void **state) {
    (void)state;
    cli_args a;
    const char *argv[] = {"-f", "csv", "x.vor", "--format", "chrome"};
    assert_int_equal(parse(&a, 5, argv), 0);
    assert_string_equal(a.values[OPT_FORMAT], "chrome");
}

static void double_dash_ends_options_and_a_lone_dash_is_a_file(void **state) {
    (void)state;
    cli_args a;
    const char *argv[] = {"-q", "--", "--format", "-o", "-"};
    assert_int_equal(parse(&a, 5, argv), 0);
    assert_int_equal(a.positional_count, 3);
    assert_string_equal(a.positional[0], "--format");
    assert_string_equal(a.positional[1], "-o");
    assert_string_equal(a.positional[2], "-");
    assert_null(a.values[OPT_FORMAT]);
    const char *dash[] = {"-", "-o", "-"};
    assert_int_equal(parse(&a, 3, dash), 0);
    assert_int_equal(a.positional_count, 1);
    assert_string_equal(a.values[OPT_OUTPUT], "-");
}

static void option_values_may_start_with_a_dash(void **state) {
    (void)state;
    cli_args a;
    const char *argv[] = {"-o", "-weird-name", "x.vor"};
    assert_int_equal(parse(&a, 3, argv), 0);
    assert_string_equal(a.values[OPT_OUTPUT], "-weird-name");
    assert_int_equal(a.positional_count, 1);
}

static void refusals_say_what_is_wrong(void **state) {
    (void)state;
    cli_args a;
    const char *unknown_long[] = {"x.vor", "--colour"};
    assert_int_equal(parse(&a, 2, unknown_long), -1);
    assert_string_equal(a.error, "unknown option '--colour'");
    const char *unknown_long_value[] = {"--colour=red"};
    assert_int_equal(parse(&a, 1, unknown_long_value), -1);
    assert_string_equal(a.error, "unknown option '--colour'");
    const char *unknown_short[] = {"-x"};
    assert_int_equal(parse(&a, 1, unknown_short), -1);
    assert_string_equal(a.error, "unknown option '-x'");
    const char *bundled[] = {"-qx"};
    assert_int_equal(parse(&a, 1, bundled), -1);
    assert_string_equal(a.error, "unknown option '-qx'");
    const char *missing[] = {"x.vor", "--format"};
    assert_int_equal(parse(&a, 2, missing), -1);
    assert_string_equal(a.error, "option '--format' needs a value");
    const char *missing_short[] = {"-o"};
    assert_int_equal(parse(&a, 1, missing_short), -1);
    assert_string_equal(a.error, "option '-o' (--output) needs a value");
    const char *flag_value[] = {"--quiet=yes"};
    assert_int_equal(parse(&a, 1, flag_value), -1);
    assert_string_equal(a.error, "option '--quiet' takes no value");
}

static void too_many_files_are_refused(void **state) {
    (void)state;
    cli_args a;
    const char *argv[CLI_MAX_POSITIONAL + 1];
    for (int i = 0; i <= CLI_MAX_POSITIONAL; i++) argv[i] = "f.vor";
    assert_int_equal(parse(&a, CLI_MAX_POSITIONAL, argv), 0);
    assert_int_equal(parse(&a, CLI_MAX_POSITIONAL + 1, argv), -1);
    assert_non_null(strstr(a.error, "too many arguments"));
}

static void numbers_are_checked(void **state) {
    (void)state;
    uint64_t v = 0;
    assert_int_equal(cli_parse_u64("10", 0, 100, &v), 0);
    assert_int_equal(v, 10);
    assert_int_equal(cli_parse_u64("0", 0, 100, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(cli_parse_u64("0", 1, 100, &v), -1);
    assert_int_equal(cli_parse_u64("101", 0, 100, &v), -1);
    assert_int_equal(cli_parse_u64("-1", 0, 100, &v), -1);
    assert_int_equal(cli_parse_u64("+1", 0, 100, &v), -1);
    assert_int_equal(cli_parse_u64(" 1", 0, 100, &v), -1);
    assert_int_equal(cli_parse_u64("1x", 0, 100, &v), -1);
    assert_int_equal(cli_parse_u64("", 0, 100, &v), -1);
    assert_int_equal(cli_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -1);
    assert_int_equal(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
}

static void reader_messages_lose_a_leading_path(void **state) {
    (void)state;
    assert_string_equal(cli_strip_path_prefix("run.vor: offset 12: bad magic", "run.vor"), "offset 12: bad magic");
    assert_string_equal(cli_strip_path_prefix("offset 12: bad magic", "run.vor"), "offset 12: bad magic");
    assert_string_equal(cli_strip_path_prefix("run.vorx: y", "run.vor"), "run.vorx: y");
    assert_string_equal(cli_strip_path_prefix(NULL, "run.vor"), "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_may_come_before_or_after_the_file),
        cmocka_unit_test(values_can_be_attached),
        cmocka_unit_test(the_last_value_wins),
        cmocka_unit_test(double_dash_ends_options_and_a_lone_dash_is_a_file),
        cmocka_unit_test(option_values_may_start_with_a_dash),
        cmocka_unit_test(refusals_say_what_is_wrong),
        cmocka_unit_test(too_many_files_are_refused),
        cmocka_unit_test(numbers_are_checked),
        cmocka_unit_test(reader_messages_lose_a_leading_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
