/* test_formats.c: the text the CLI writes: CSV fields (csv.c), numbers (numfmt.c), JSON
 * (json_writer.c), names and paths made safe to show (text.c) and the one-line messages
 * (report.c). Outputs are compared byte for byte: scripts depend on them. */
#include "cli_test.h"

#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static const char *csv(mem_out *m, const char *field) {
    rewind(m->f);
    csv_write_field(m->f, field);
    fputc('\0', m->f);
    return mem_text(m);
}

static void csv_fields_are_quoted_only_when_needed(void **state) {
    (void)state;
    mem_out m;
    mem_open(&m);
    assert_string_equal(csv(&m, "frame_ms (ms)"), "frame_ms (ms)");
    assert_string_equal(csv(&m, ""), "");
    assert_string_equal(csv(&m, "a,b"), "\"a,b\"");
    assert_string_equal(csv(&m, "say \"hi\""), "\"say \"\"hi\"\"\"");
    assert_string_equal(csv(&m, "two\nlines"), "\"two\nlines\"");
    assert_string_equal(csv(&m, "cr\rhere"), "\"cr\rhere\"");
    assert_string_equal(csv(&m, " padded"), "\" padded\"");
    assert_string_equal(csv(&m, "padded "), "\"padded \"");
    assert_string_equal(csv(&m, "tokens/s (1/s)"), "tokens/s (1/s)");
    assert_string_equal(csv(&m, "\xc3\xa9t\xc3\xa9"), "\xc3\xa9t\xc3\xa9");
    mem_close(&m);
}

static void doubles_are_shortest_and_read_back(void **state) {
    (void)state;
    char b[NUMFMT_BYTES];
    assert_string_equal(numfmt_double(b, 0.1), "0.1");
    assert_string_equal(numfmt_double(b, 16.667), "16.667");
    assert_string_equal(numfmt_double(b, 0), "0");
    assert_string_equal(numfmt_double(b, -2.5), "-2.5");
    assert_string_equal(numfmt_double(b, 1e300), "1e+300");
    assert_string_equal(numfmt_double(b, NAN), "nan");
    assert_string_equal(numfmt_double(b, INFINITY), "inf");
    assert_string_equal(numfmt_double(b, -INFINITY), "-inf");
    const double hard[] = {0.1 + 0.2, 1.0 / 3.0, 5e-324, 1.7976931348623157e308, 123456789.123456789, -0.0};
    for (size_t i = 0; i < sizeof hard / sizeof *hard; i++) {
        numfmt_double(b, hard[i]);
        assert_true(strtod(b, NULL) == hard[i]);
    }
}

/* The reference: printf with 15, 16, 17 digits, the first that reads back. */
static void reference_shortest(char *buf, size_t cap, double v) {
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_bits(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void doubles_round_trip_and_are_no_longer_than_printf(void **state) {
    (void)state;
    char b[NUMFMT_BYTES], ref[64];
    assert_string_equal(numfmt_double(b, 0.005), "0.005");
    assert_string_equal(numfmt_double(b, 123.456), "123.456");
    assert_string_equal(numfmt_double(b, 1e-4), "0.0001");
    assert_string_equal(numfmt_double(b, 2015232 * 1e-6), "2.0152319999999997");
    assert_string_equal(numfmt_double(b, 1.5e15), "1.5e+15");
    assert_string_equal(numfmt_double(b, 99999999999999.9), "99999999999999.9");
    for (int i = 0; i < 200000; i++) {
        double v;
        uint64_t bits = next_bits();
        switch (i % 4) {
        case 0: /* any finite double */
            memcpy(&v, &bits, sizeof v);
            if (!isfinite(v)) continue;
            break;
        case 1: /* a decimal with a few digits */
            v = (double)(int64_t)(bits % 2000000001u - 1000000000) / pow(10.0, (double)((bits >> 40) % 12));
            break;
        case 2: /* an integer count times a unit scale, as system columns are */
            v = (double)(bits % 100000000000u) * 1e-6;
            break;
        default: /* magnitudes around 1 */
            v = (double)(bits >> 11) / 9007199254740992.0 * pow(10.0, (double)((int)(bits % 9) - 4));
        }
        numfmt_double(b, v);
        reference_shortest(ref, sizeof ref, v);
        if (strtod(b, NULL) != v) fail_msg("%s does not read back as %s", b, ref);
        if (strlen(b) > strlen(ref)) fail_msg("%s is longer than %s", b, ref);
    }
}

static void times_and_counts_read_well(void **state) {
    (void)state;
    char b[NUMFMT_BYTES];
    assert_string_equal(numfmt_ns_as_ms(b, 0), "0.000000");
    assert_string_equal(numfmt_ns_as_ms(b, 16667000), "16.667000");
    assert_string_equal(numfmt_ns_as_ms(b, 1), "0.000001");
    assert_string_equal(numfmt_ns_as_ms(b, -1500000), "-1.500000");
    assert_string_equal(numfmt_ns_as_ms(b, INT64_MIN), "-9223372036854.775808");
    assert_string_equal(numfmt_count(b, 0), "0");
    assert_string_equal(numfmt_count(b, 999), "999");
    assert_string_equal(numfmt_count(b, 1000), "1,000");
    assert_string_equal(numfmt_count(b, 1234567), "1,234,567");
    assert_string_equal(numfmt_count(b, UINT64_MAX), "18,446,744,073,709,551,615");
    assert_string_equal(numfmt_human(b, 16.6666666), "16.6667");
    assert_string_equal(numfmt_human(b, 1234567.8), "1234568");
    assert_string_equal(numfmt_human(b, 0), "0");
    assert_string_equal(numfmt_human(b, 0.00001234), "1.234e-05");
}

static void json_is_valid_and_escaped(void **state) {
    (void)state;
    mem_out m;
    mem_open(&m);
    json_writer w;
    json_begin(&w, m.f, 0);
    json_object_begin(&w, NULL);
    json_string(&w, "name", "a \"quoted\"\\ name\n\t\x01");
    json_double(&w, "x", 0.1);
    json_double(&w, "nan", NAN);
    json_double(&w, "inf", -INFINITY);
    json_int(&w, "neg", -5);
    json_uint(&w, "big", UINT64_MAX);
    json_bool(&w, "yes", 1);
    json_null(&w, "none");
    json_array_begin(&w, "list");
    json_object_begin(&w, NULL);
    json_uint(&w, "id", 0);
    json_object_end(&w);
    json_object_begin(&w, NULL);
    json_object_end(&w);
    json_array_end(&w);
    json_array_begin(&w, "empty");
    json_array_end(&w);
    json_object_end(&w);
    json_end(&w);
    assert_string_equal(mem_text(&m), "{\"name\":\"a \\\"quoted\\\"\\\\ name\\n\\t\\u0001\",\"x\":0.1,\"nan\":null,"
                                      "\"inf\":null,\"neg\":-5,\"big\":18446744073709551615,\"yes\":true,"
                                      "\"none\":null,\"list\":[{\"id\":0},{}],\"empty\":[]}\n");
    mem_close(&m);
}

static void pretty_json_puts_one_member_per_line(void **state) {
    (void)state;
    mem_out m;
    mem_open(&m);
    json_writer w;
    json_begin(&w, m.f, 1);
    json_object_begin(&w, NULL);
    json_uint(&w, "a", 1);
    json_array_begin(&w, "b");
    json_uint(&w, NULL, 2);
    json_array_end(&w);
    json_array_begin(&w, "c");
    json_array_end(&w);
    json_object_end(&w);
    json_end(&w);
    assert_string_equal(mem_text(&m), "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ],\n  \"c\": []\n}\n");
    mem_close(&m);
}

/* ---- UTF-8 -------------------------------------------------------------------------------- */

/* A reference validator written from the definition rather than from table 3-7: decode by
 * the lead byte's length, then refuse overlongs (cp below the length's minimum),
 * surrogates and values above U+10FFFF. Returns the length or 0. */
static int reference_valid(const unsigned char *s, size_t n, uint32_t *cp) {
    int len = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3 : (s[0] >> 3) == 30 ? 4 : 0;
    if (len == 0 || (size_t)len > n) return 0;
    uint32_t v = len == 1 ? s[0] : s[0] & (0x7Fu >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3Fu);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
    *cp = v;
    return len;
}

static void utf8_decoding_follows_unicode(void **state) {
    (void)state;
    unsigned char b[5] = {0};
    uint32_t cp, want;
    /* Every two-byte and every three-byte sequence (the byte after them is 0). */
    for (unsigned x = 0; x < 0x10000; x++) {
        b[0] = (unsigned char)(x >> 8), b[1] = (unsigned char)x, b[2] = 0;
        int got = cli_utf8_next(b, 2, &cp), ref = reference_valid(b, 2, &want);
        if (ref) {
            assert_int_equal(got, ref);
            assert_int_equal(cp, want);
        } else {
            assert_true(got < 0 || (got == 1 && b[0] < 0x80));
        }
    }
    for (unsigned x = 0; x < 0x1000000; x += (x >> 16) >= 0xE0 && (x >> 16) <= 0xF4 ? 1 : 0x10000) {
        b[0] = (unsigned char)(x >> 16), b[1] = (unsigned char)(x >> 8), b[2] = (unsigned char)x, b[3] = 0;
        int got = cli_utf8_next(b, 3, &cp), ref = reference_valid(b, 3, &want);
        if (ref == 3) {
            assert_int_equal(got, 3);
            assert_int_equal(cp, want);
        } else if (b[0] >= 0xE0 && b[0] <= 0xEF) {
            assert_true(got < 0);
        }
    }
    /* Every code point encodes and decodes back, four-byte ones included. */
    for (uint32_t v = 0x80; v <= 0x10FFFF; v++) {
        if (v >= 0xD800 && v <= 0xDFFF) continue;
        int len = v < 0x800 ? 2 : v < 0x10000 ? 3 : 4;
        b[0] = (unsigned char)((0xF00u >> len) | (v >> (6 * (len - 1))));
        for (int i = 1; i < len; i++) b[i] = (unsigned char)(0x80 | ((v >> (6 * (len - 1 - i))) & 0x3F));
        assert_int_equal(cli_utf8_next(b, (size_t)len, &cp), len);
        assert_int_equal(cp, v);
    }
    /* Maximal subparts (Unicode 3.9, table 3-8): F1 80 80 | E1 80 | C2 | 80 | 80 | BF. */
    const unsigned char t[] = {0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62};
    assert_int_equal(cli_utf8_next(t, sizeof t, &cp), -3);
    assert_int_equal(cli_utf8_next(t + 3, sizeof t - 3, &cp), -2);
    assert_int_equal(cli_utf8_next(t + 5, sizeof t - 5, &cp), -1);
    assert_int_equal(cli_utf8_next((const unsigned char *)"\xe2\x82", 2, &cp), -2);         /* cut short */
    assert_int_equal(cli_utf8_next((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp), -1); /* > U+10FFFF */
    assert_int_equal(cli_utf8_next((const unsigned char *)"\xed\xa0\x80", 3, &cp), -1);     /* surrogate */
}

static const char *json_text(mem_out *m, const char *s) {
    rewind(m->f);
    json_write_string(m->f, s);
    fputc('\0', m->f);
    return mem_text(m);
}

static void json_strings_are_always_valid_utf8(void **state) {
    (void)state;
    mem_out m;
    mem_open(&m);
#define FFFD "\xef\xbf\xbd"
    assert_string_equal(json_text(&m, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80"), "\"\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80\"");
    assert_string_equal(json_text(&m, "a\xff"
                                      "b"),
                        "\"a" FFFD "b\"");
    assert_string_equal(json_text(&m, "\xc0\xaf"), "\"" FFFD FFFD "\"");          /* overlong '/' */
    assert_string_equal(json_text(&m, "\xe0\x80\xaf"), "\"" FFFD FFFD FFFD "\""); /* overlong, 3 bytes */
    assert_string_equal(json_text(&m, "\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\""); /* surrogate */
    assert_string_equal(json_text(&m, "\xf4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"");
    assert_string_equal(json_text(&m, "\xf5\x80"), "\"" FFFD FFFD "\"");
    assert_string_equal(json_text(&m, "\xe2\x82"), "\"" FFFD "\""); /* one per maximal subpart */
    assert_string_equal(json_text(&m, "\xe2\x82x"), "\"" FFFD "x\"");
    assert_string_equal(json_text(&m, "a\xf1\x80\x80\xe1\x80\xc2"
                                      "b\x80"
                                      "c\x80\xbf"
                                      "d"),
                        "\"a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d\"");
    assert_string_equal(json_text(&m, "\x1b[2J\x7f\xc2\x9b\xe2\x80\xa8\b\f"),
                        "\"\\u001b[2J\\u007f\\u009b\\u2028\\u0008\\u000c\"");
#undef FFFD
    mem_close(&m);
}

/* ---- Text for terminals ------------------------------------------------------------------------ */

static void text_escapes_control_characters_and_invalid_bytes(void **state) {
    (void)state;
    char b[256];
    assert_string_equal(cli_text_show(b, sizeof b, "plain \xc3\xa9t\xc3\xa9"), "plain \xc3\xa9t\xc3\xa9");
    assert_string_equal(cli_text_show(b, sizeof b, "a\x1b[2Jb\n\t\r\x7f\x01"), "a\\x1b[2Jb\\n\\t\\r\\x7f\\x01");
    assert_string_equal(cli_text_show(b, sizeof b,
                                      "\xc2\x9b"
                                      "31m"),
                        "\\u009b31m"); /* C1 CSI */
    assert_string_equal(cli_text_show(b, sizeof b, "x\xff\xc0\xaf\xed\xa0\x80y"), "x\\xff\\xc0\\xaf\\xed\\xa0\\x80y");
    assert_int_equal(cli_text_shown_length("a\x1b\n\xff\xc3\xa9"), 1 + 4 + 2 + 4 + 2);
    /* Cut at the end with "...", never inside a character or an escape. */
    assert_string_equal(cli_text_show(b, 8, "abcdefghij"), "abcd...");
    assert_string_equal(cli_text_show(b, 8, "abcdefg"), "abcdefg");
    assert_string_equal(cli_text_show(b, 8, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"), "\xc3\xa9\xc3\xa9...");
    assert_string_equal(cli_text_show(b, 8, "ab\x1b\x1b"), "ab...");
    mem_out m;
    mem_open(&m);
    cli_text_fputs(m.f, "t\x1b]0;x\x07\xfe");
    assert_string_equal(mem_text(&m), "t\\x1b]0;x\\x07\\xfe");
    mem_close(&m);
}

static void long_text_is_shortened_in_the_middle(void **state) {
    (void)state;
    char b[256];
    const char *path = "/aaaa/bbbb/cccc/dddd/file.vor"; /* 29 bytes */
    assert_string_equal(cli_text_show_middle(b, sizeof b, path, 29), path);
    assert_string_equal(cli_text_show_middle(b, sizeof b, path, 20), "/aaaa/...dd/file.vor");
    assert_string_equal(cli_text_show_middle(b, 11, path, 100), "/a...e.vor"); /* cap wins */
    /* Escapes and characters stay whole on both sides of the cut. */
    cli_text_show_middle(b, sizeof b, "\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", 20);
    assert_true(strlen(b) <= 20);
    assert_string_equal(b, "\\x1b...\\x1b\\x1b"); /* 6 bytes of head room hold one escape */
    cli_text_show_middle(b, sizeof b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10);
    assert_string_equal(b, "\xc3\xa9...\xc3\xa9\xc3\xa9");
}

/* ---- Messages ------------------------------------------------------------------------------------- */

/* Runs cli_fail with stderr sent to a file; returns what it wrote (static buffer). */
static const char *captured_message(const char *subject, const char *problem) {
    static char text[8192];
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    char name[] = "/tmp/vor-test-report-XXXXXX";
    int fd = mkstemp(name);
    assert_true(saved >= 0 && fd >= 0);
    unlink(name);
    dup2(fd, STDERR_FILENO);
    int status = cli_fail(CLI_EXIT_USAGE, "summary", subject, "%s", problem);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_int_equal(status, CLI_EXIT_USAGE);
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    return text;
}

static void messages_are_one_safe_line_that_keeps_the_problem(void **state) {
    (void)state;
    assert_string_equal(captured_message("run.vor", "No such file or directory"),
                        "vor summary: run.vor: No such file or directory\n");
    assert_string_equal(captured_message("evil\x1b[2J\n.vor", "bad\nname \xff"),
                        "vor summary: evil\\x1b[2J\\n.vor: bad\\nname \\xff\n");
    /* A 5000-byte path: shortened in its middle, the problem whole, one line of <= 1 KiB. */
    static char path[5001];
    memset(path, 'p', 5000);
    memcpy(path, "/start", 6);
    memcpy(path + 5000 - 8, "/end.vor", 8);
    const char *line = captured_message(path, "No such file or directory");
    size_t len = strlen(line);
    assert_true(len <= 1025);
    assert_memory_equal(line, "vor summary: /start", 19);
    assert_non_null(strstr(line, "..."));
    const char *tail = "/end.vor: No such file or directory\n";
    assert_string_equal(line + len - strlen(tail), tail);
    assert_ptr_equal(strchr(line, '\n'), line + len - 1);
    /* A long problem too: the subject keeps a useful part, the line stays bounded. */
    static char problem[3001];
    memset(problem, 'x', 3000);
    line = captured_message(path, problem);
    assert_true(strlen(line) <= 1025);
    assert_memory_equal(line, "vor summary: /start", 19);
    assert_non_null(strstr(line, "/end.vor: xxx"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_fields_are_quoted_only_when_needed),
        cmocka_unit_test(doubles_are_shortest_and_read_back),
        cmocka_unit_test(doubles_round_trip_and_are_no_longer_than_printf),
        cmocka_unit_test(times_and_counts_read_well),
        cmocka_unit_test(json_is_valid_and_escaped),
        cmocka_unit_test(pretty_json_puts_one_member_per_line),
        cmocka_unit_test(utf8_decoding_follows_unicode),
        cmocka_unit_test(json_strings_are_always_valid_utf8),
        cmocka_unit_test(text_escapes_control_characters_and_invalid_bytes),
        cmocka_unit_test(long_text_is_shortened_in_the_middle),
        cmocka_unit_test(messages_are_one_safe_line_that_keeps_the_problem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
