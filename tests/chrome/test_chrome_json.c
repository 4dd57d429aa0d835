/* test_chrome_json.c: the Chrome Trace Event JSON writer on its own: the exact text of
 * each event kind, times as microseconds with three decimals, string escaping and UTF-8
 * repair, NaN/Inf, counters that read back exactly, tiny buffers, what a crash can leave
 * (every flush a loadable prefix), write errors. Traces are checked by check_trace.mjs. */
#include "chrome_check.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static vor_chrome_json *open_file(const char *path, size_t buffer_bytes) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    vor_chrome_json *j = vor_chrome_json_open_fd(fd, 1, buffer_bytes);
    assert_non_null(j);
    return j;
}

static off_t file_size(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void an_empty_writer_closes_to_an_empty_array(void **state) {
    (void)state;
    const char *path = test_path("empty.json");
    vor_chrome_json *j = open_file(path, 0);
    assert_int_equal(file_size(path), 0); /* nothing is written before the first flush */
    assert_int_equal(vor_chrome_json_close(j), 0);
    char *text = read_whole_file(path, NULL);
    assert_string_equal(text, "[\n]\n");
    free(text);
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(d.n, 0);
    trace_dump_free(&d);
}

static void times_are_microseconds_with_three_decimals(void **state) {
    (void)state;
    static const struct {
        int64_t ns;
        const char *text;
    } cases[] = {
        {0, "0.000"},
        {1, "0.001"},
        {999, "0.999"},
        {1000, "1.000"},
        {1500, "1.500"},
        {1234567, "1234.567"},
        {-1, "-0.001"},
        {-1500, "-1.500"},
        {16666667, "16666.667"},
        {INT64_MAX, "9223372036854775.807"},
        {INT64_MIN, "-9223372036854775.808"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        size_t n = vor_chrome_json_format_us(cases[i].ns, out);
        out[n] = '\0';
        assert_string_equal(out, cases[i].text);
    }
}

static void each_event_kind_has_a_fixed_text(void **state) {
    (void)state;
    const char *path = test_path("kinds.json");
    vor_chrome_json *j = open_file(path, 0);
    vor_chrome_arg extra[3] = {
        {"count", VOR_CHROME_ARG_INT, NULL, -42, 0, 0},
        {"ratio", VOR_CHROME_ARG_DOUBLE, NULL, 0, 0.25, 0},
        {"note", VOR_CHROME_ARG_STRING, "hi", 0, 0, 0},
    };
    vor_chrome_arg version = {"vor_version", VOR_CHROME_ARG_STRING, "0.1.0", 0, 0, 0};
    assert_int_equal(vor_chrome_json_process_name(j, 7, "game", &version, 1), 0);
    assert_int_equal(vor_chrome_json_thread_name(j, 7, 9, "main"), 0);
    assert_int_equal(vor_chrome_json_thread_sort_index(j, 7, 9, -1), 0);
    assert_int_equal(vor_chrome_json_complete(j, "update", "vor", 7, 9, 12345, 250, "game.c", 42, extra, 3), 0);
    assert_int_equal(vor_chrome_json_complete(j, "bare", NULL, 7, 9, 0, 0, NULL, 0, NULL, 0), 0);
    assert_int_equal(vor_chrome_json_counter(j, 7, "frame_ms", 1000, NULL, 16.5), 0);
    assert_int_equal(vor_chrome_json_counter(j, 7, "memory", 2000, "MB", 1024), 0);
    assert_int_equal(vor_chrome_json_close(j), 0);
    char *text = read_whole_file(path, NULL);
    assert_string_equal(
        text,
        "[\n"
        "{\"ph\":\"M\",\"ts\":0,\"pid\":7,\"tid\":7,\"name\":\"process_name\",\"args\":{\"name\":\"game\","
        "\"vor_version\":\"0.1.0\"}},\n"
        "{\"ph\":\"M\",\"ts\":0,\"pid\":7,\"tid\":9,\"name\":\"thread_name\",\"args\":{\"name\":\"main\"}},\n"
        "{\"ph\":\"M\",\"ts\":0,\"pid\":7,\"tid\":9,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":-1}},\n"
        "{\"ph\":\"X\",\"ts\":12.345,\"dur\":0.250,\"pid\":7,\"tid\":9,\"cat\":\"vor\",\"name\":\"update\","
        "\"args\":{\"file\":\"game.c\",\"line\":42,\"count\":-42,\"ratio\":0.25,\"note\":\"hi\"}},\n"
        "{\"ph\":\"X\",\"ts\":0.000,\"dur\":0.000,\"pid\":7,\"tid\":9,\"name\":\"bare\"},\n"
        "{\"ph\":\"C\",\"ts\":1.000,\"pid\":7,\"name\":\"frame_ms\",\"args\":{\"value\":16.5}},\n"
        "{\"ph\":\"C\",\"ts\":2.000,\"pid\":7,\"name\":\"memory\",\"args\":{\"MB\":1024}}\n"
        "]\n");
    free(text);
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(d.n, 7);
    trace_dump_free(&d);
}

static void prepared_events_are_identical_to_plain_ones(void **state) {
    (void)state;
    const char *names[] = {"plain", "with \"quotes\"", "", "\xff\xfe", "tab\there"};
    const char *a = test_path("plain.json"), *b = test_path("prepared.json");
    vor_chrome_json *ja = open_file(a, 0), *jb = open_file(b, 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        vor_chrome_prepared p;
        assert_int_equal(
            vor_chrome_prepare_complete(&p, names[i], i % 2 ? NULL : "vor", i == 2 ? NULL : "f.c", (uint32_t)i), 1);
        vor_chrome_json_complete(ja, names[i], i % 2 ? NULL : "vor", 1, 2, (int64_t)i * 1000, 5, i == 2 ? NULL : "f.c",
                                 (uint32_t)i, NULL, 0);
        vor_chrome_json_complete_prepared(jb, &p, 1, 2, (int64_t)i * 1000, 5, NULL, 0);
        vor_chrome_prepared_free(&p);
    }
    assert_int_equal(vor_chrome_json_close(ja), 0);
    assert_int_equal(vor_chrome_json_close(jb), 0);
    char *ta = read_whole_file(a, NULL), *tb = read_whole_file(b, NULL);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

/* Strings that need care, and the bytes a JSON reader must decode them to. */
static const struct {
    const char *raw;
    const char *decoded;
} nasty[] = {
    {"say \"hi\"", "say \"hi\""},
    {"back\\slash\\", "back\\slash\\"},
    {"ctl \x01\x02\x1f \b\f\n\r\t del\x7f", "ctl \x01\x02\x1f \b\f\n\r\t del\x7f"},
    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"}, /* valid UTF-8 */
    {"bad \xff end", "bad \xef\xbf\xbd end"},                                                   /* invalid byte */
    {"cut \xe2\x82", "cut \xef\xbf\xbd"},                                                       /* truncated sequence */
    {"over \xc0\xaf", "over \xef\xbf\xbd\xef\xbf\xbd"},                                         /* overlong */
    {"surr \xed\xa0\x80", "surr \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                         /* UTF-16 surrogate */
    {"big \xf4\x90\x80\x80", "big \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},           /* above U+10FFFF */
    {"lone \x80 cont", "lone \xef\xbf\xbd cont"},
    {"mix \xe2\x28\xa1", "mix \xef\xbf\xbd(\xef\xbf\xbd"},
    {"</script> \xe2\x80\xa8", "</script> \xe2\x80\xa8"}, /* U+2028 is valid JSON */
};

static void escaping_gives_the_expected_json_text(void **state) {
    (void)state;
    char out[256];
    uint64_t replaced = 0;
    const char *in = "a\"b\\c\n\x01\x7f\xff";
    size_t n = vor_chrome_json_escape(in, strlen(in), out, &replaced);
    out[n] = '\0';
    assert_string_equal(out, "a\\\"b\\\\c\\n\\u0001\\u007f\xef\xbf\xbd");
    assert_int_equal(replaced, 1);
}

static void strings_are_escaped_and_invalid_utf8_replaced(void **state) {
    (void)state;
    const char *path = test_path("escapes.json");
    vor_chrome_json *j = open_file(path, 0);
    size_t count = sizeof nasty / sizeof nasty[0];
    for (size_t i = 0; i < count; i++) {
        vor_chrome_arg arg = {nasty[i].raw, VOR_CHROME_ARG_STRING, nasty[i].raw, 0, 0, 0};
        vor_chrome_json_complete(j, nasty[i].raw, nasty[i].raw, 1, 2, (int64_t)i * 10, 1, nasty[i].raw, 3, &arg, 1);
        vor_chrome_json_thread_name(j, 1, 100 + i, nasty[i].raw);
        vor_chrome_json_counter(j, 1, nasty[i].raw, (int64_t)i, nasty[i].raw, (double)i);
    }
    vor_chrome_json_stats stats;
    vor_chrome_json_get_stats(j, &stats);
    assert_int_equal(stats.invalid_utf8_replaced, 14 * 8); /* 14 U+FFFD in the list, 8 strings per entry */
    assert_int_equal(vor_chrome_json_close(j), 0);

    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    for (size_t i = 0; i < count; i++) {
        char expected[4096];
        const char *h = hex_of(nasty[i].decoded);
        /* X pid tid ts dur name cat file line {...}: the args JSON is checked by node. */
        snprintf(expected, sizeof expected, "X 1 2 %zu 1 %s %s %s 3 ", i * 10, h, h, h);
        const char *x = dump_find(&d, expected, 0);
        assert_non_null(x);
        snprintf(expected, sizeof expected, "M 1 %zu thread_name %s", 100 + i, h);
        assert_non_null(dump_find(&d, expected, 0));
        snprintf(expected, sizeof expected, "C 1 %zu %s %s %zu", i, h, h, i);
        assert_non_null(dump_find(&d, expected, 0));
    }
    trace_dump_free(&d);
}

static void non_finite_counters_are_omitted_and_counted(void **state) {
    (void)state;
    const char *path = test_path("nonfinite.json");
    vor_chrome_json *j = open_file(path, 0);
    assert_int_equal(vor_chrome_json_counter(j, 1, "nan", 0, NULL, NAN), 0);
    assert_int_equal(vor_chrome_json_counter(j, 1, "inf", 0, NULL, INFINITY), 0);
    assert_int_equal(vor_chrome_json_counter(j, 1, "-inf", 0, NULL, -INFINITY), 0);
    assert_int_equal(vor_chrome_json_counter(j, 1, "fine", 0, NULL, 1.5), 0);
    vor_chrome_arg arg = {"loss", VOR_CHROME_ARG_DOUBLE, NULL, 0, NAN, 0};
    assert_int_equal(vor_chrome_json_complete(j, "x", "vor", 1, 1, 0, 0, NULL, 0, &arg, 1), 0);
    vor_chrome_json_stats stats;
    vor_chrome_json_get_stats(j, &stats);
    assert_int_equal(stats.non_finite_omitted, 4);
    assert_int_equal(vor_chrome_json_close(j), 0);
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(dump_count(&d, "C "), 1);
    assert_non_null(dump_find(&d, "C 1 0 66696e65 76616c7565 1.5", 0));
    assert_non_null(strstr(dump_find(&d, "X ", 0), "{\"loss\":null}"));
    trace_dump_free(&d);
}

static void counter_values_read_back_exactly(void **state) {
    (void)state;
    static const double values[] = {0.0,
                                    -0.0,
                                    0.1,
                                    1e-7,
                                    123456789.123,
                                    -2.5,
                                    1e300,
                                    1e21,
                                    1e-300,
                                    5e-324,
                                    1.0 / 3,
                                    9007199254740993.0,
                                    -1e15,
                                    4503599627370497.5,
                                    16.000000000000004};
    const char *path = test_path("numbers.json");
    vor_chrome_json *j = open_file(path, 0);
    size_t count = sizeof values / sizeof values[0];
    for (size_t i = 0; i < count; i++) vor_chrome_json_counter(j, 1, "v", (int64_t)i, NULL, values[i]);
    assert_int_equal(vor_chrome_json_close(j), 0);
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    assert_int_equal(d.n, count);
    for (size_t i = 0; i < count; i++) {
        const char *value = strrchr(d.lines[i], ' ') + 1;
        assert_true(strtod(value, NULL) == values[i]);
    }
    trace_dump_free(&d);
}

/* A locale whose decimal separator is ',': an installed one, else one compiled into the
 * test directory with localedef (glibc reads LOCPATH at each setlocale). */
static int use_comma_locale(void) {
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (size_t i = 0; i < 4; i++)
        if (setlocale(LC_NUMERIC, names[i])) return 1;
    char command[1024];
    snprintf(command, sizeof command, "localedef -i de_DE -f UTF-8 '%s' >/dev/null 2>&1", test_path("de_DE.UTF-8"));
    if (system(command) != 0) return 0;
    setenv("LOCPATH", test_path(""), 1);
    int ok = setlocale(LC_NUMERIC, "de_DE.UTF-8") != NULL;
    unsetenv("LOCPATH");
    return ok;
}

static void a_comma_locale_does_not_change_numbers(void **state) {
    (void)state;
    if (!use_comma_locale()) skip(); /* no such locale and no localedef */
    char probe[16];
    snprintf(probe, sizeof probe, "%.2f", 2.75);
    assert_string_equal(probe, "2,75"); /* the locale is really in effect */
    const char *path = test_path("locale.json");
    vor_chrome_json *j = open_file(path, 0);
    vor_chrome_json_counter(j, 1, "v", 0, NULL, 2.75);
    vor_chrome_json_counter(j, 1, "w", 0, NULL, -1.5e-7);
    assert_int_equal(vor_chrome_json_close(j), 0);
    setlocale(LC_NUMERIC, "C");
    char *text = read_whole_file(path, NULL);
    assert_non_null(strstr(text, "{\"value\":2.75}"));
    assert_non_null(strstr(text, "{\"value\":-1.5e-07}"));
    free(text);
}

/* A big trace: names of every length class, escapes, long strings, args. */
static void write_big_trace(vor_chrome_json *j) {
    char long_name[3000];
    for (size_t i = 0; i < sizeof long_name - 1; i++) long_name[i] = (char)("ab\"\\\x01\xc3\xa9xyz"[i % 10]);
    long_name[sizeof long_name - 1] = '\0';
    char name[64];
    for (int i = 0; i < 4000; i++) {
        snprintf(name, sizeof name, "scope %d \"q\" \\ \x02", i % 97);
        vor_chrome_arg arg = {"i", VOR_CHROME_ARG_INT, NULL, i, 0, 0};
        vor_chrome_json_complete(j, i % 500 == 7 ? long_name : name, "vor", 10, 20 + i % 3, (int64_t)i * 1000, 999,
                                 i % 3 ? "src/some/file.c" : long_name, (uint32_t)i, &arg, 1);
        if (i % 50 == 0)
            vor_chrome_json_counter(j, 10, i % 100 ? "memory_mb" : long_name, (int64_t)i * 1000, NULL, i * 0.5);
        if (i % 200 == 0) vor_chrome_json_flush(j);
    }
}

static void a_tiny_buffer_writes_the_same_bytes(void **state) {
    (void)state;
    const char *big = test_path("big.json"), *tiny = test_path("tiny.json"), *stream = test_path("stream.json");
    vor_chrome_json *jb = open_file(big, 0);
    vor_chrome_json *jt = open_file(tiny, 1); /* raised to the minimum */
    FILE *f = fopen(stream, "wb");
    assert_non_null(f);
    vor_chrome_json *js = vor_chrome_json_open_stream(f, 1, 300);
    assert_non_null(js);
    write_big_trace(jb);
    write_big_trace(jt);
    write_big_trace(js);
    vor_chrome_json_stats sb, st;
    vor_chrome_json_get_stats(jb, &sb);
    vor_chrome_json_get_stats(jt, &st);
    assert_int_equal(sb.events, st.events);
    assert_int_equal(vor_chrome_json_close(jb), 0);
    assert_int_equal(vor_chrome_json_close(jt), 0);
    assert_int_equal(vor_chrome_json_close(js), 0);
    size_t nb, nt, ns;
    char *tb = read_whole_file(big, &nb), *tt = read_whole_file(tiny, &nt), *ts = read_whole_file(stream, &ns);
    assert_true(nb > 1000000);
    assert_int_equal(nb, nt);
    assert_int_equal(nb, ns);
    assert_memory_equal(tb, tt, nb);
    assert_memory_equal(tb, ts, nb);
    free(tb);
    free(tt);
    free(ts);
    trace_dump d;
    assert_int_equal(check_trace("strict", tiny, &d), 0);
    assert_int_equal(dump_count(&d, "X "), 4000);
    assert_int_equal(dump_count(&d, "C "), 80);
    trace_dump_free(&d);
}

static void writes_end_between_events(void **state) {
    (void)state;
    /* With events smaller than the buffer, whatever is on disk after any call ends with
     * the "[" or the "}" of an event: the forms a crash can leave. */
    const char *path = test_path("boundaries.json");
    vor_chrome_json *j = open_file(path, 1024);
    char name[200];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "event %d %.*s", i, i % 150,
                 "................................................"
                 "................................................"
                 "......................................................");
        vor_chrome_json_complete(j, name, "vor", 1, 1, i, 1, "f.c", 1, NULL, 0);
        size_t n;
        char *text = read_whole_file(path, &n);
        if (n > 0) assert_true(text[n - 1] == '}' || (n == 1 && text[0] == '['));
        free(text);
    }
    assert_int_equal(vor_chrome_json_close(j), 0);
}

static void every_flush_leaves_a_loadable_prefix(void **state) {
    (void)state;
    const char *path = test_path("prefixes.json");
    vor_chrome_json *j = open_file(path, 0);
    size_t sizes[8];
    int events_at[8];
    int n_sizes = 0, events = 0;
    vor_chrome_json_process_name(j, 5, "prefix test", NULL, 0);
    vor_chrome_json_flush(j);
    sizes[n_sizes] = (size_t)file_size(path);
    events_at[n_sizes++] = ++events;
    for (int frame = 0; frame < 6; frame++) {
        for (int i = 0; i < 5; i++) {
            vor_chrome_json_complete(j, "work", "vor", 5, 6, frame * 100 + i * 10, 5, "w.c", 3, NULL, 0);
            events++;
        }
        vor_chrome_json_counter(j, 5, "frame_ms", frame * 100, NULL, 0.1);
        events++;
        assert_int_equal(vor_chrome_json_flush(j), 0);
        sizes[n_sizes] = (size_t)file_size(path);
        events_at[n_sizes++] = events;
    }
    assert_int_equal(vor_chrome_json_close(j), 0);
    size_t total;
    char *text = read_whole_file(path, &total);
    const char *cut = test_path("cut.json");
    for (int i = 0; i < n_sizes; i++) {
        write_whole_file(cut, text, sizes[i]);
        trace_dump d;
        assert_int_equal(check_trace("catapult", cut, &d), 0);
        assert_int_equal((int)d.n, events_at[i]);
        trace_dump_free(&d);
        if (i > 0) {
            /* The checker is not lenient by accident: a cut inside an event fails. */
            write_whole_file(cut, text, sizes[i] - 5);
            assert_true(trace_rejected("catapult", cut));
            assert_int_equal(check_trace("perfetto", cut, &d), 0);
            assert_int_equal((int)d.n, events_at[i] - 1);
            trace_dump_free(&d);
        }
    }
    free(text);
}

static void write_errors_are_kept_and_stop_writing(void **state) {
    (void)state;
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) skip();
    vor_chrome_json *j = vor_chrome_json_open_fd(fd, 1, 0);
    assert_non_null(j);
    assert_int_equal(vor_chrome_json_complete(j, "a", "vor", 1, 1, 0, 1, NULL, 0, NULL, 0), 0); /* buffered */
    assert_int_equal(vor_chrome_json_flush(j), -1);
    vor_chrome_json_stats stats;
    vor_chrome_json_get_stats(j, &stats);
    assert_int_equal(stats.write_errno, ENOSPC);
    assert_int_equal(stats.bytes_written, 0);
    assert_int_equal(vor_chrome_json_complete(j, "b", "vor", 1, 1, 0, 1, NULL, 0, NULL, 0), -1);
    assert_int_equal(vor_chrome_json_counter(j, 1, "c", 0, NULL, 1), -1);
    assert_int_equal(vor_chrome_json_thread_name(j, 1, 1, "t"), -1);
    for (int i = 0; i < 100000; i++) vor_chrome_json_flush(j); /* no growth, no crash */
    errno = 0;
    assert_int_equal(vor_chrome_json_close(j), -1);
    assert_int_equal(errno, ENOSPC);
    assert_int_equal(vor_chrome_json_close(NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_empty_writer_closes_to_an_empty_array),
        cmocka_unit_test(times_are_microseconds_with_three_decimals),
        cmocka_unit_test(each_event_kind_has_a_fixed_text),
        cmocka_unit_test(prepared_events_are_identical_to_plain_ones),
        cmocka_unit_test(escaping_gives_the_expected_json_text),
        cmocka_unit_test(strings_are_escaped_and_invalid_utf8_replaced),
        cmocka_unit_test(non_finite_counters_are_omitted_and_counted),
        cmocka_unit_test(counter_values_read_back_exactly),
        cmocka_unit_test(a_comma_locale_does_not_change_numbers),
        cmocka_unit_test(a_tiny_buffer_writes_the_same_bytes),
        cmocka_unit_test(writes_end_between_events),
        cmocka_unit_test(every_flush_leaves_a_loadable_prefix),
        cmocka_unit_test(write_errors_are_kept_and_stop_writing),
    };
    return cmocka_run_group_tests_name("chrome_json", tests, NULL, remove_test_dir_teardown);
}
