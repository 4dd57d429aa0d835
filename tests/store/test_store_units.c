/* test_store_units.c: the profile store's pure parts, against real bytes.
 *
 *   framing   a real capture (written by the core's writer in this process) fed in every split
 *             gives exactly its bytes back, whole records at a time, and FRAMING_END at its end;
 *             each damaged byte, a foreign header, bytes after the end are refused with the
 *             offset; a record split across feeds is held, never emitted half
 *   sidecars  every field, with control characters and '=' in values, round-trips
 *   JSON      hello objects parse; arrays, bad escapes, trailing text are refused
 *   queries   parameters and their errors; dates
 *   tokens    short tokens refused; constant-time check accepts only listed ones
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server_internal.h"
#include "store.h"
#include "vor/vor.h"

static unsigned char *capture;
static size_t capture_len;

/* A real capture: 30 frames with scopes and a metric, written by the core's writer. */
static void make_capture(void) {
    char path[] = "/tmp/vor-store-unit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    setenv("VOR_RECORD", path, 1);
    setenv("VOR_RECORD_FLAME", "1", 1);
    vor_enable();
    for (int i = 0; i < 30; i++) {
        static vor_site outer = VOR_SITE_INIT("outer"), inner = VOR_SITE_INIT("inner");
        if (vor_scope_begin(&outer)) {
            if (vor_scope_begin(&inner)) vor_scope_end();
            vor_scope_end();
        }
        vor_record_metric("loss", 1.0 / (i + 1));
        vor_frame_mark();
    }
    vor_shutdown();
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    capture_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    capture = malloc(capture_len);
    assert_int_equal(fread(capture, 1, capture_len, f), capture_len);
    fclose(f);
    unlink(path);
}

typedef struct sink {
    unsigned char *data;
    size_t len;
    size_t runs;
} sink;

static int emit(void *user, const unsigned char *b, size_t n) {
    sink *s = user;
    memcpy(s->data + s->len, b, n);
    s->len += n;
    s->runs++;
    return 0;
}

static void test_framing_every_split(void **state) {
    (void)state;
    for (size_t step = 1; step < 300; step += (step < 20 ? 1 : 37)) {
        framing_check c;
        sink s = {malloc(capture_len), 0, 0};
        framing_init(&c);
        framing_status st = FRAMING_MORE;
        for (size_t at = 0; at < capture_len; at += step) {
            size_t n = capture_len - at < step ? capture_len - at : step;
            st = framing_feed(&c, capture + at, n, emit, &s);
            assert_int_not_equal(st, FRAMING_BAD);
            assert_int_equal(s.len, c.checked); /* only verified bytes, never half a record */
        }
        assert_int_equal(st, FRAMING_END);
        assert_int_equal(s.len, capture_len);
        assert_memory_equal(s.data, capture, capture_len);
        framing_free(&c);
        free(s.data);
    }
}

static void test_framing_refusals(void **state) {
    (void)state;
    unsigned char *copy = malloc(capture_len + 8);
    /* A damaged byte anywhere: refused, the stored part ends before the damaged record. */
    for (size_t at = 0; at < capture_len; at += 7) {
        memcpy(copy, capture, capture_len);
        copy[at] ^= 0x20;
        framing_check c;
        sink s = {malloc(capture_len), 0, 0};
        framing_init(&c);
        framing_status st = framing_feed(&c, copy, capture_len, emit, &s);
        assert_int_equal(st, FRAMING_BAD);
        assert_true(s.len <= at);
        assert_memory_equal(s.data, capture, s.len);
        assert_non_null(strstr(c.problem, "byte"));
        framing_free(&c);
        free(s.data);
    }
    /* Not a capture: refused at its first byte. */
    framing_check c;
    sink s = {malloc(capture_len + 8), 0, 0};
    framing_init(&c);
    assert_int_equal(framing_feed(&c, "GIF89a", 6, emit, &s), FRAMING_BAD);
    assert_non_null(strstr(c.problem, "not a vor capture"));
    framing_free(&c);
    /* Bytes after the end record. */
    framing_init(&c);
    s.len = 0;
    memcpy(copy, capture, capture_len);
    memcpy(copy + capture_len, "trailing", 8);
    assert_int_equal(framing_feed(&c, copy, capture_len + 8, emit, &s), FRAMING_BAD);
    assert_non_null(strstr(c.problem, "after the end record"));
    assert_int_equal(s.len, capture_len);
    framing_free(&c);
    free(s.data);
    free(copy);
}

static void test_meta_round_trip(void **state) {
    (void)state;
    capture_meta m, back;
    memset(&m, 0, sizeof m);
    snprintf(m.id, sizeof m.id, "20261124-223504-3f9a1c0d");
    snprintf(m.key, sizeof m.key, "abcdefgh");
    snprintf(m.project, sizeof m.project, "pro=ject\\with\nodd\tbytes\x01");
    snprintf(m.name, sizeof m.name, "run.vor");
    m.n_tags = 2;
    snprintf(m.tags[0].key, sizeof m.tags[0].key, "branch");
    snprintf(m.tags[0].value, sizeof m.tags[0].value, "a=b=c");
    snprintf(m.tags[1].key, sizeof m.tags[1].key, "k\\x"); /* keys never hold '=' (the hello refuses it) */
    m.tags[1].value[0] = '\0';
    m.uploaded_ms = 1795560624505;
    m.state = STORE_CUT;
    m.bytes = 123456789012ull;
    char *text = store_meta_format(&m);
    char err[100];
    assert_int_equal(store_meta_parse(text, strlen(text), &back, err, sizeof err), 0);
    assert_memory_equal(&m, &back, sizeof m);
    free(text);
    assert_int_equal(store_meta_parse("nope", 4, &back, err, sizeof err), -1);
}

/* A resumed upload (state back to "uploading") is no longer indexed: its final facts were those
 * of the part stored before, and a search must not offer them as final once it completes. */
static bool row_indexed(capture_index *x) {
    index_query q;
    memset(&q, 0, sizeof q);
    q.limit = 10;
    json_buf out;
    json_init(&out, 1 << 20);
    uint64_t total = 0;
    char err[200];
    assert_int_equal(index_search(x, &q, &out, false, &total, err, sizeof err), 0);
    assert_int_equal(total, 1);
    bool yes = strstr(out.data, "\"indexed\":true") != NULL;
    assert_true(yes || strstr(out.data, "\"indexed\":false"));
    json_free(&out);
    return yes;
}

static void test_index_resume_not_indexed(void **state) {
    (void)state;
    char dir[] = "/tmp/vor-store-units-XXXXXX", path[64], err[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/index.sqlite", dir);
    bool created = false;
    capture_index *x = index_open(path, &created, err, sizeof err);
    assert_non_null(x);
    capture_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.id, sizeof m.id, "20261124-223504-3f9a1c0d");
    snprintf(m.key, sizeof m.key, "abcdefgh");
    snprintf(m.project, sizeof m.project, "p");
    m.state = STORE_OPEN; /* a dropped upload */
    m.bytes = 1000;
    assert_int_equal(index_put_meta(x, &m), 0);
    capture_facts f;
    memset(&f, 0, sizeof f);
    f.frames = 3;
    assert_int_equal(index_put_facts(x, m.id, &f, true), 0);
    assert_true(row_indexed(x));
    m.state = STORE_UPLOADING; /* resumed */
    assert_int_equal(index_put_meta(x, &m), 0);
    assert_false(row_indexed(x));
    m.state = STORE_COMPLETE; /* completed: indexed only when the final facts come */
    m.bytes = 2000;
    assert_int_equal(index_put_meta(x, &m), 0);
    assert_false(row_indexed(x));
    assert_int_equal(index_put_facts(x, m.id, &f, true), 0);
    assert_true(row_indexed(x));
    index_close(x);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_json(void **state) {
    (void)state;
    json_object o;
    char err[100];
    const char *hello = "{\"type\":\"hello\",\"key\":\"k\\u00e9y\",\"tags\":{\"a\":\"1\",\"b\":\"\\ud83d\\ude00\"},\"n\":-1.5e3,"
                        "\"live\":true,\"x\":null}";
    assert_int_equal(store_json_parse(hello, strlen(hello), &o, err, sizeof err), 0);
    assert_string_equal(store_json_get(&o, "key")->str, "k\xc3\xa9y");
    const json_member *tags = store_json_get(&o, "tags");
    assert_int_equal(tags->kind, 'o');
    assert_int_equal(tags->n_children, 2);
    assert_string_equal(o.members[tags->first_child + 1].str, "\xf0\x9f\x98\x80");
    assert_null(store_json_get(&o, "a")); /* nested members are not top-level */
    static const char *const bad[] = {"[1]", "{\"a\":[1]}", "{\"a\":\"\\x\"}", "{\"a\":1} x", "{\"a\":{\"b\":{}}}",
                                      "{\"a\":\"\\ud800\"}", "{\"a\":\"\x01\"}", "{\"a\" 1}", "{\"a\":01}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(store_json_parse(bad[i], strlen(bad[i]), &o, err, sizeof err), -1);
}

static void test_query(void **state) {
    (void)state;
    index_query q;
    char buf[4096], err[300];
    assert_int_equal(store_query_parse("project=a%20b&tag=k%3Dv&tag=only&scope=mat+row&sort=scope:layer%20x&order=asc&"
                                       "limit=5&since=2026-11-24&until=2026-11-24T10:00:30Z&token=t",
                                       &q, buf, sizeof buf, err, sizeof err), 0);
    assert_string_equal(q.project, "a b");
    assert_int_equal(q.n_tags, 2);
    assert_string_equal(q.tags[0].value, "v");
    assert_string_equal(q.tags[1].value, "\x01");
    assert_string_equal(q.scope, "mat row");
    assert_int_equal(q.sort, SORT_SCOPE_TOTAL);
    assert_string_equal(q.sort_scope, "layer x");
    assert_true(q.ascending);
    assert_int_equal(q.limit, 5);
    assert_int_equal(q.since_ms, 1795478400000ll);
    assert_int_equal(q.until_ms, 1795478400000ll + 36030000ll);
    static const char *const bad[] = {"colour=red", "limit=0", "limit=5000", "sort=size", "state=gone", "since=yesterday",
                                      "tag==v", "project=%zz", "order=up"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(store_query_parse(bad[i], &q, buf, sizeof buf, err, sizeof err), -1);
}

static void test_tokens(void **state) {
    (void)state;
    char path[] = "/tmp/vor-store-tokens-XXXXXX", err[200];
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("# comment\n\n  first-token-0123456789  \nsecond-token-abcdefghij\n", f);
    fclose(f);
    token_set t;
    assert_int_equal(tokens_load(&t, path, err, sizeof err), 0);
    assert_int_equal(t.n, 2);
    assert_true(tokens_check(&t, "first-token-0123456789"));
    assert_true(tokens_check(&t, "second-token-abcdefghij"));
    assert_false(tokens_check(&t, "first-token-012345678"));
    assert_false(tokens_check(&t, ""));
    assert_false(tokens_check(&t, NULL));
    tokens_free(&t);
    f = fopen(path, "w");
    fputs("short\n", f);
    fclose(f);
    assert_int_equal(tokens_load(&t, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "shorter than 16"));
    unlink(path);
}

int main(void) {
    make_capture();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framing_every_split), cmocka_unit_test(test_framing_refusals),
        cmocka_unit_test(test_meta_round_trip),     cmocka_unit_test(test_json),
        cmocka_unit_test(test_query),               cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_index_resume_not_indexed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(capture);
    return rc;
}
