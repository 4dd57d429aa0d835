/*
 * test_server_args.c - `vor serve` argument parsing (vor_server_parse_args).
 *
 * The parser is pure, so these tests drive it directly: defaults, options before/after/between
 * paths, both "--opt v" and "--opt=v", "--" and help, and every kind of bad value (each must give
 * VOR_SERVER_ARGS_ERROR with one line naming the option, never crash or overflow err).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "server.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void test_no_arguments_gives_defaults(void **state)
{
    (void)state;
    char *argv[] = {"serve"};
    vor_server_options o;
    char err[128] = "x";
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.port, 0);
    assert_null(o.host);
    assert_null(o.site_dir);
    assert_int_equal(o.no_follow, 0);
    assert_int_equal(o.path_count, 0);
    assert_int_equal(o.max_viewers, 0);
    assert_int_equal(o.stall_timeout_ms, 0);
    assert_null(o.default_site_dir); /* the caller's to set */
    assert_string_equal(err, "");
}

static void test_options_before_between_and_after_paths(void **state)
{
    (void)state;
    char *argv[] = {"serve", "a.vor", "--port", "9000", "captures/", "--host", "::1",
                    "--site", "web/out", "--no-follow", "b.vor"};
    vor_server_options o;
    char err[128];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.path_count, 3);
    assert_string_equal(o.paths[0], "a.vor");
    assert_string_equal(o.paths[1], "captures/");
    assert_string_equal(o.paths[2], "b.vor");
    assert_int_equal(o.port, 9000);
    assert_string_equal(o.host, "::1");
    assert_string_equal(o.site_dir, "web/out");
    assert_int_equal(o.no_follow, 1);
}

static void test_equals_forms_and_port_zero(void **state)
{
    (void)state;
    char *argv[] = {"serve", "--port=0", "--host=0.0.0.0", "--site=s", "x"};
    vor_server_options o;
    char err[128];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.port, VOR_SERVER_PORT_ANY);
    assert_string_equal(o.host, "0.0.0.0");
    assert_string_equal(o.site_dir, "s");
    assert_int_equal(o.path_count, 1);
}

static void test_double_dash_ends_options(void **state)
{
    (void)state;
    char *argv[] = {"serve", "--no-follow", "--", "--port", "-weird.vor"};
    vor_server_options o;
    char err[128];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.path_count, 2);
    assert_string_equal(o.paths[0], "--port");
    assert_string_equal(o.paths[1], "-weird.vor");
    assert_int_equal(o.port, 0);
}

static void test_localhost_and_port_bounds_are_accepted(void **state)
{
    (void)state;
    char *argv[] = {"serve", "--host", "localhost", "--port", "65535"};
    vor_server_options o;
    char err[128];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.port, 65535);
    char *argv1[] = {"serve", "--port", "1"};
    assert_int_equal(vor_server_parse_args(ARGC(argv1), argv1, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.port, 1);
}

static void test_help_wins(void **state)
{
    (void)state;
    char *argv[] = {"serve", "x.vor", "--help", "--port", "nonsense"};
    char *argv2[] = {"serve", "-h"};
    vor_server_options o;
    char err[128];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_HELP);
    assert_int_equal(vor_server_parse_args(ARGC(argv2), argv2, &o, err, sizeof err), VOR_SERVER_ARGS_HELP);
    const char *u = vor_server_usage();
    assert_non_null(strstr(u, "--port"));
    assert_non_null(strstr(u, "--no-follow"));
    assert_non_null(strstr(u, "127.0.0.1"));
    assert_non_null(strstr(u, "Requests from other origins and with foreign Host headers are refused"));
    assert_int_equal(u[strlen(u) - 1], '\n');
}

/* One bad command line: must be an error whose single-line message contains `needle`. */
static void expect_error(int argc, char **argv, const char *needle)
{
    vor_server_options o;
    char err[256];
    int r = vor_server_parse_args(argc, argv, &o, err, sizeof err);
    if (r != VOR_SERVER_ARGS_ERROR || !strstr(err, needle) || strchr(err, '\n'))
        fail_msg("args ending '%s': result %d, message '%s' (wanted '%s')", argv[argc - 1], r, err, needle);
}

static void test_bad_values_are_one_clear_error(void **state)
{
    (void)state;
    char *a1[] = {"serve", "--port"};
    char *a2[] = {"serve", "--port", "abc"};
    char *a3[] = {"serve", "--port", "65536"};
    char *a4[] = {"serve", "--port", "-1"};
    char *a5[] = {"serve", "--port", ""};
    char *a6[] = {"serve", "--port", "80x"};
    char *a7[] = {"serve", "--port", "+80"};
    char *a8[] = {"serve", "--port", "99999999999999999999"};
    char *a9[] = {"serve", "--host"};
    char *a10[] = {"serve", "--host", "example.com"};
    char *a11[] = {"serve", "--host", "999.1.1.1"};
    char *a12[] = {"serve", "--site"};
    char *a13[] = {"serve", "--site", ""};
    char *a14[] = {"serve", "--bogus"};
    char *a15[] = {"serve", "-x"};
    char *a16[] = {"serve", "--no-follow=1"};
    char *a17[] = {"serve", "--portal", "1"};
    char *a18[] = {"serve", ""};
    expect_error(ARGC(a1), a1, "--port");
    expect_error(ARGC(a2), a2, "'abc'");
    expect_error(ARGC(a3), a3, "'65536'");
    expect_error(ARGC(a4), a4, "'-1'");
    expect_error(ARGC(a5), a5, "--port");
    expect_error(ARGC(a6), a6, "'80x'");
    expect_error(ARGC(a7), a7, "'+80'");
    expect_error(ARGC(a8), a8, "--port");
    expect_error(ARGC(a9), a9, "--host");
    expect_error(ARGC(a10), a10, "'example.com'");
    expect_error(ARGC(a11), a11, "'999.1.1.1'");
    expect_error(ARGC(a12), a12, "--site");
    expect_error(ARGC(a13), a13, "--site");
    expect_error(ARGC(a14), a14, "'--bogus'");
    expect_error(ARGC(a15), a15, "'-x'");
    expect_error(ARGC(a16), a16, "'--no-follow=1'");
    expect_error(ARGC(a17), a17, "'--portal'");
    expect_error(ARGC(a18), a18, "empty path");
}

static void test_too_many_paths(void **state)
{
    (void)state;
    static char *argv[VOR_SERVER_MAX_PATHS + 2];
    vor_server_options o;
    char err[256];
    argv[0] = "serve";
    for (int i = 1; i < VOR_SERVER_MAX_PATHS + 2; i++)
        argv[i] = "x.vor";
    assert_int_equal(vor_server_parse_args(VOR_SERVER_MAX_PATHS + 1, argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_int_equal(o.path_count, VOR_SERVER_MAX_PATHS);
    assert_int_equal(vor_server_parse_args(VOR_SERVER_MAX_PATHS + 2, argv, &o, err, sizeof err),
                     VOR_SERVER_ARGS_ERROR);
    assert_non_null(strstr(err, "too many"));
}

static void test_small_or_missing_error_buffer_is_safe(void **state)
{
    (void)state;
    char *argv[] = {"serve", "--port", "not-a-port-at-all-and-rather-long"};
    vor_server_options o;
    char tiny[8];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, tiny, sizeof tiny), VOR_SERVER_ARGS_ERROR);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, NULL, 0), VOR_SERVER_ARGS_ERROR);
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, NULL, tiny, sizeof tiny), VOR_SERVER_ARGS_ERROR);
}

/* The store's options (--store and its companions) read by the same parser, with their own
 * messages. */
static void test_store_options(void **state)
{
    (void)state;
    char *argv[] = {"serve", "--store", "st", "--token-file=t", "--token-reads", "--max-capture-bytes", "2G",
                    "--max-store-bytes=500M", "--upload-origin", "https://a.example", "--upload-origin=http://b:81"};
    vor_server_options o;
    char err[160];
    assert_int_equal(vor_server_parse_args(ARGC(argv), argv, &o, err, sizeof err), VOR_SERVER_ARGS_OK);
    assert_string_equal(o.store_dir, "st");
    assert_string_equal(o.token_file, "t");
    assert_int_equal(o.token_reads, 1);
    assert_true(o.max_capture_bytes == 2ull << 30);
    assert_true(o.max_store_bytes == 500ull << 20);
    assert_int_equal(o.upload_origin_count, 2);
    assert_string_equal(o.upload_origins[1], "http://b:81");

    static const struct {
        const char *a, *b, *msg;
    } bad[] = {
        {"--store", NULL, "--store needs a value (the store's directory)"},
        {"--store=", NULL, "--store needs a value (the store's directory)"},
        {"--token-file", NULL, "--token-file needs a value (a file of tokens)"},
        {"--max-capture-bytes", "5X", "--max-capture-bytes: '5X' is not a size (digits, then K, M, G or T)"},
        {"--max-store-bytes", "0", "--max-store-bytes: '0' is not a size (digits, then K, M, G or T)"},
        {"--max-store-bytes", NULL, "--max-store-bytes needs a value (a size such as 500M or 2G)"},
        {"--upload-origin", "ftp://x", "--upload-origin: 'ftp://x' is not an origin (http(s)://host[:port])"},
        {"--upload-origin", NULL, "--upload-origin needs a value (e.g. https://app.example.com)"},
        {"--token-reads=1", NULL, "unknown option '--token-reads=1' (see vor serve --help)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *v[] = {"serve", (char *)bad[i].a, (char *)bad[i].b};
        assert_int_equal(vor_server_parse_args(bad[i].b ? 3 : 2, v, &o, err, sizeof err), VOR_SERVER_ARGS_ERROR);
        assert_string_equal(err, bad[i].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_arguments_gives_defaults),
        cmocka_unit_test(test_options_before_between_and_after_paths),
        cmocka_unit_test(test_equals_forms_and_port_zero),
        cmocka_unit_test(test_double_dash_ends_options),
        cmocka_unit_test(test_localhost_and_port_bounds_are_accepted),
        cmocka_unit_test(test_help_wins),
        cmocka_unit_test(test_bad_values_are_one_clear_error),
        cmocka_unit_test(test_too_many_paths),
        cmocka_unit_test(test_store_options),
        cmocka_unit_test(test_small_or_missing_error_buffer_is_safe),
    };
    return cmocka_run_group_tests_name("server args", tests, NULL, NULL);
}
