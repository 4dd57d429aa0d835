/* test_formats.c: the text the CLI writes: CSV fields (csv.c), numbers (numfmt.c) and
 * JSON (json_writer.c). Outputs are compared byte for byte: scripts depend on them. */
#include "cli_test.h"

#include <math.h>
#include <string.h>

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_fields_are_quoted_only_when_needed),
        cmocka_unit_test(doubles_are_shortest_and_read_back),
        cmocka_unit_test(doubles_round_trip_and_are_no_longer_than_printf),
        cmocka_unit_test(times_and_counts_read_well),
        cmocka_unit_test(json_is_valid_and_escaped),
        cmocka_unit_test(pretty_json_puts_one_member_per_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
