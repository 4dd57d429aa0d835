/*
 * test_server_units.c - white-box tests of the server's pure parts (server_internal.h):
 * JSON output escaping, the client message parser, capture magic/probing, opening without
 * blocking (FIFOs), the capture registry (ids, rescans, cap, churn), the capture header
 * fingerprint, the Host/Origin policy and static path resolution (traversal, symlinks, MIME
 * types).
 *
 * These are the pieces whose bugs would be security or protocol bugs, tested directly on
 * crafted input rather than through a socket. Temporary files live under a mkdtemp directory
 * that each group creates and removes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"

/* ---- helpers ---- */

static char tmp_root[PATH_MAX];

/* out = a "/" b, failing the test rather than truncating. */
static void join(char *out, const char *a, const char *b)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", a, b);
    assert_true(n > 0 && n < PATH_MAX);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char p[PATH_MAX];
    join(p, dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void path_in(char *out, const char *name)
{
    join(out, tmp_root, name);
}

static int make_tmp(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/vor-server-units-XXXXXX");
    return mkdtemp(tmp_root) ? 0 : -1;
}

static int remove_tmp(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

static const char magic[] = SERVER_CAPTURE_MAGIC;

/* ---- json_out.c ---- */

static void check_json_str(const char *in, const char *want)
{
    char buf[256];
    json_buf b;
    json_init_fixed(&b, buf, sizeof buf);
    json_str(&b, in);
    assert_false(b.failed);
    assert_string_equal(buf, want);
}

static void test_json_escapes_specials_and_controls(void **state)
{
    (void)state;
    check_json_str("plain", "\"plain\"");
    check_json_str("", "\"\"");
    check_json_str("a\"b\\c", "\"a\\\"b\\\\c\"");
    check_json_str("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
    check_json_str("\x01\x1f", "\"\\u0001\\u001f\"");
    check_json_str("/<>\x7f", "\"/<>\x7f\"");
}

static void test_json_keeps_valid_utf8_and_replaces_invalid(void **state)
{
    (void)state;
    check_json_str("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    check_json_str("a\xff" "b", "\"a\\ufffdb\"");
    check_json_str("\xc0\x80", "\"\\ufffd\\ufffd\"");          /* overlong NUL */
    check_json_str("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
    check_json_str("\xe2\x82", "\"\\ufffd\\ufffd\"");         /* truncated at the end */
    check_json_str("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
    check_json_str("\xf5", "\"\\ufffd\"");
}

static void test_json_fixed_buffer_overflow_fails_cleanly(void **state)
{
    (void)state;
    char buf[8];
    json_buf b;
    json_init_fixed(&b, buf, sizeof buf);
    json_raw(&b, "1234567");
    assert_false(b.failed);
    json_raw(&b, "8");
    assert_true(b.failed);
    json_raw(&b, "more"); /* sticky: no-op */
    assert_true(b.failed);
    assert_null(json_take(&b, NULL));
}

static void test_json_growable_respects_its_limit(void **state)
{
    (void)state;
    json_buf b;
    size_t len = 0;
    json_init(&b, 64);
    json_u64(&b, UINT64_MAX);
    json_raw(&b, ",");
    json_i64(&b, INT64_MIN);
    char *s = json_take(&b, &len);
    assert_non_null(s);
    assert_string_equal(s, "18446744073709551615,-9223372036854775808");
    assert_int_equal(len, strlen(s));
    free(s);

    json_init(&b, 64);
    for (int i = 0; i < 100; i++)
        json_raw(&b, "x");
    assert_true(b.failed);
    assert_null(json_take(&b, NULL));

    json_init(&b, 64);
    s = json_take(&b, &len); /* nothing appended: an empty string */
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
}

/* ---- ws_message.c ---- */

static client_msg_kind parse(const char *text)
{
    /* An exact-size heap copy without a terminator: ASan catches any read past the end. */
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, text, n);
    client_msg m;
    client_msg_kind k = client_msg_parse(copy, n, &m);
    assert_int_equal(m.kind, k);
    free(copy);
    return k;
}

static void test_client_follow_messages(void **state)
{
    (void)state;
    client_msg m;
    const char *t = "{\"type\":\"follow\",\"value\":false}";
    assert_int_equal(client_msg_parse(t, strlen(t), &m), CLIENT_MSG_FOLLOW);
    assert_false(m.follow);
    t = " \t\r\n{ \"value\" : true , \"type\" : \"follow\" } \n";
    assert_int_equal(client_msg_parse(t, strlen(t), &m), CLIENT_MSG_FOLLOW);
    assert_true(m.follow);
    t = "{\"type\":\"follow\",\"value\":true,\"extra\":{\"a\":[1,-2.5e+3,{\"b\":null}],\"s\":\"\\u00e9\\n\"}}";
    assert_int_equal(client_msg_parse(t, strlen(t), &m), CLIENT_MSG_FOLLOW);
    assert_true(m.follow);
    t = "{\"type\":\"nope\",\"type\":\"follow\",\"value\":true,\"value\":false}"; /* last wins */
    assert_int_equal(client_msg_parse(t, strlen(t), &m), CLIENT_MSG_FOLLOW);
    assert_false(m.follow);
}

static void test_client_bad_json_is_rejected(void **state)
{
    (void)state;
    const char *bad[] = {
        "", "   ", "{", "}", "{\"type\":\"follow\",\"value\":false", "{\"type\":\"follow\",}",
        "{type:\"follow\"}", "{'type':'follow'}", "{\"type\":\"follow\" \"value\":true}",
        "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":.5}", "{\"a\":+1}",
        "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":\"\\u12\"}",
        "{\"a\":\"tab\there\"}", "{\"a\":\"unterminated}", "{\"a\":[1,2}", "{\"a\":[1,]}",
        "{} {}", "{}x", "[", "\"\\", "{\"a\":\"\\",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (parse(bad[i]) != CLIENT_MSG_BAD_JSON)
            fail_msg("accepted bad JSON: %s", bad[i]);
    /* An embedded NUL inside the message is not JSON either. */
    client_msg m;
    assert_int_equal(client_msg_parse("{\"a\":1}\0", 8, &m), CLIENT_MSG_BAD_JSON);
}

static void test_client_nesting_is_bounded(void **state)
{
    (void)state;
    char deep[200], ok[200];
    int n = 0;
    for (int i = 0; i < 40; i++)
        deep[n++] = '[';
    for (int i = 0; i < 40; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    assert_int_equal(parse(deep), CLIENT_MSG_BAD_JSON);
    n = 0;
    for (int i = 0; i < 10; i++)
        ok[n++] = '[';
    for (int i = 0; i < 10; i++)
        ok[n++] = ']';
    ok[n] = '\0';
    assert_int_equal(parse(ok), CLIENT_MSG_NOT_OBJECT);
}

static void test_client_valid_json_but_wrong_message(void **state)
{
    (void)state;
    assert_int_equal(parse("[1,2,3]"), CLIENT_MSG_NOT_OBJECT);
    assert_int_equal(parse("\"follow\""), CLIENT_MSG_NOT_OBJECT);
    assert_int_equal(parse("null"), CLIENT_MSG_NOT_OBJECT);
    assert_int_equal(parse("{}"), CLIENT_MSG_NO_TYPE);
    assert_int_equal(parse("{\"type\":1}"), CLIENT_MSG_NO_TYPE);
    assert_int_equal(parse("{\"type\":\"fol\\u006cow\",\"value\":true}"), CLIENT_MSG_UNKNOWN_TYPE);
    assert_int_equal(parse("{\"type\":\"followx\",\"value\":true}"), CLIENT_MSG_UNKNOWN_TYPE);
    assert_int_equal(parse("{\"type\":\"follow\"}"), CLIENT_MSG_BAD_VALUE);
    assert_int_equal(parse("{\"type\":\"follow\",\"value\":1}"), CLIENT_MSG_BAD_VALUE);
    assert_int_equal(parse("{\"type\":\"follow\",\"value\":\"true\"}"), CLIENT_MSG_BAD_VALUE);
    assert_int_equal(parse("{\"type\":\"follow\",\"value\":null}"), CLIENT_MSG_BAD_VALUE);
    for (int k = CLIENT_MSG_FOLLOW; k <= CLIENT_MSG_BAD_VALUE; k++)
        assert_true(strlen(client_msg_problem((client_msg_kind)k)) > 1);
}

/* ---- capture_registry.c: magic and probing ---- */

static void test_magic_check(void **state)
{
    (void)state;
    const unsigned char *m = (const unsigned char *)magic;
    unsigned char longer[12];
    memcpy(longer, m, 8);
    memcpy(longer + 8, "abcd", 4);
    assert_int_equal(capture_magic_check(m, 8), 1);
    assert_int_equal(capture_magic_check(longer, 12), 1);
    assert_int_equal(capture_magic_check(m, 3), 0);
    assert_int_equal(capture_magic_check(m, 0), 0);
    assert_int_equal(capture_magic_check((const unsigned char *)"\x89VOX", 4), -1);
    assert_int_equal(capture_magic_check((const unsigned char *)"GIF89a..", 8), -1);
}

static void test_probe_states(void **state)
{
    (void)state;
    char p[PATH_MAX];
    capture_probe pr;
    unsigned char cap[20];
    memcpy(cap, magic, 8);
    memset(cap + 8, 7, 12);
    write_file(tmp_root, "ok.vor", cap, sizeof cap);
    write_file(tmp_root, "empty.vor", "", 0);
    write_file(tmp_root, "partial.vor", magic, 5);
    write_file(tmp_root, "other.vor", "hello world", 11);

    path_in(p, "ok.vor");
    capture_probe_path(p, &pr);
    assert_int_equal(pr.state, CAPTURE_OK);
    assert_int_equal(pr.bytes, 20);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(pr.mtime_ms, (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
    path_in(p, "empty.vor");
    capture_probe_path(p, &pr);
    assert_int_equal(pr.state, CAPTURE_EMPTY);
    path_in(p, "partial.vor");
    capture_probe_path(p, &pr);
    assert_int_equal(pr.state, CAPTURE_EMPTY);
    assert_int_equal(pr.bytes, 5);
    path_in(p, "other.vor");
    capture_probe_path(p, &pr);
    assert_int_equal(pr.state, CAPTURE_NOT_CAPTURE);
    path_in(p, "absent.vor");
    capture_probe_path(p, &pr);
    assert_int_equal(pr.state, CAPTURE_MISSING);
    capture_probe_path(tmp_root, &pr);
    assert_int_equal(pr.state, CAPTURE_NOT_FILE);
    assert_string_equal(capture_state_name(CAPTURE_OK), "capture");
    assert_string_equal(capture_state_name(CAPTURE_NOT_CAPTURE), "not-a-capture");
    assert_string_equal(capture_state_name(CAPTURE_EMPTY), "empty");
    assert_string_equal(capture_state_name(CAPTURE_MISSING), "missing");
}

/* ---- capture_registry.c: ids and rescans ---- */

static void test_registry_files_dirs_and_ids(void **state)
{
    (void)state;
    char dir[PATH_MAX], file[PATH_MAX], missing[PATH_MAX], err[128];
    capture_registry r;

    path_in(dir, "reg");
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file(dir, "b.vor", magic, 8);
    write_file(dir, "a.vor", magic, 8);
    write_file(dir, "notes.txt", magic, 8);
    write_file(dir, ".vor", magic, 8);
    char sub[PATH_MAX];
    join(sub, dir, "d.vor");
    assert_int_equal(mkdir(sub, 0700), 0);
    path_in(file, "single.vor");
    write_file(tmp_root, "single.vor", magic, 8);
    path_in(missing, "later.vor");

    const char *paths[] = {file, dir, missing};
    assert_int_equal(registry_init(&r, paths, 3, err, sizeof err), 0);
    assert_int_equal(r.dir_count, 1);
    assert_int_equal(r.count, 4); /* single, later (FILE args first), then a, b sorted */
    assert_string_equal(r.entries[0].path, file);
    assert_string_equal(r.entries[0].name, "single.vor");
    assert_string_equal(r.entries[1].name, "later.vor");
    assert_string_equal(r.entries[2].name, "a.vor");
    assert_string_equal(r.entries[3].name, "b.vor");
    assert_int_equal(r.entries[2].dir, 0);

    for (size_t i = 0; i < r.count; i++)
        assert_int_equal(r.entries[i].id, i); /* ids from 0, in order */
    assert_ptr_equal(registry_find(&r, "2"), &r.entries[2]);
    const char *bad_ids[] = {"", "4", "02", "+1", "-1", " 1", "1 ", "1x", "0x1", "9999999999", NULL};
    for (int i = 0; bad_ids[i]; i++)
        if (registry_find(&r, bad_ids[i]))
            fail_msg("id '%s' was accepted", bad_ids[i]);
    assert_null(registry_find(&r, NULL));

    /* Rescan: new file gets the next id; a removed one is not present; it keeps its id back. */
    write_file(dir, "c.vor", magic, 8);
    char a_path[PATH_MAX];
    join(a_path, dir, "a.vor");
    assert_int_equal(unlink(a_path), 0);
    registry_rescan(&r);
    assert_int_equal(r.count, 5);
    assert_string_equal(r.entries[4].name, "c.vor");
    assert_false(r.entries[2].present);
    write_file(dir, "a.vor", magic, 8);
    registry_rescan(&r);
    assert_int_equal(r.count, 5);
    assert_true(r.entries[2].present);
    assert_false(r.truncated);
    registry_free(&r);
    assert_int_equal(r.count, 0);
}

static void test_registry_is_capped(void **state)
{
    (void)state;
    char dir[PATH_MAX], err[128], name[32];
    capture_registry r;
    path_in(dir, "many");
    assert_int_equal(mkdir(dir, 0700), 0);
    for (int i = 0; i < VOR_SERVER_MAX_CAPTURES + 5; i++) {
        snprintf(name, sizeof name, "c%05d.vor", i);
        write_file(dir, name, magic, 8);
    }
    const char *paths[] = {dir};
    assert_int_equal(registry_init(&r, paths, 1, err, sizeof err), 0);
    assert_int_equal(r.count, VOR_SERVER_MAX_CAPTURES);
    assert_int_equal(r.present, VOR_SERVER_MAX_CAPTURES);
    assert_true(r.truncated);
    registry_rescan(&r); /* no growth beyond the cap, no duplicates */
    assert_int_equal(r.count, VOR_SERVER_MAX_CAPTURES);
    assert_true(r.truncated);
    /* Files going away make room: the ones left out are listed, the others keep their ids. */
    size_t id_of_last = r.entries[r.count - 1].id;
    char last_path[PATH_MAX];
    snprintf(last_path, sizeof last_path, "%s", r.entries[r.count - 1].path);
    for (int i = 0; i < 10; i++) {
        char p[PATH_MAX];
        snprintf(name, sizeof name, "c%05d.vor", i);
        join(p, dir, name);
        unlink(p);
    }
    registry_rescan(&r);
    assert_false(r.truncated);
    assert_int_equal(r.present, VOR_SERVER_MAX_CAPTURES + 5 - 10);
    for (size_t i = 0; i < r.count; i++)
        if (!strcmp(r.entries[i].path, last_path))
            assert_int_equal(r.entries[i].id, id_of_last);
    registry_free(&r);
}

/* The reviewer's case: more than VOR_SERVER_MAX_CAPTURES names seen over time, each gone again
 * before the next arrive. New captures must still be listed, with memory bounded. */
static void test_registry_churn_keeps_listing_new_captures(void **state)
{
    (void)state;
    char dir[PATH_MAX], err[128], name[64], p[PATH_MAX];
    capture_registry r;
    path_in(dir, "churn");
    assert_int_equal(mkdir(dir, 0700), 0);
    const char *paths[] = {dir};
    assert_int_equal(registry_init(&r, paths, 1, err, sizeof err), 0);
    write_file(dir, "keep.vor", magic, 8); /* present throughout: its id never changes */
    registry_rescan(&r);
    assert_int_equal(r.count, 1);
    size_t keep_id = r.entries[0].id;
    size_t first_gone_id = 0;
    for (int round = 0; round < 110; round++) {
        for (int k = 0; k < 10; k++) {
            snprintf(name, sizeof name, "run%03d-%d.vor", round, k);
            write_file(dir, name, magic, 8);
        }
        registry_rescan(&r);
        assert_int_equal(r.present, 11);
        if (round == 0) {
            const capture_entry *e = registry_find(&r, "1");
            assert_non_null(e);
            first_gone_id = e->id;
        }
        for (int k = 0; k < 10; k++) {
            snprintf(name, sizeof name, "run%03d-%d.vor", round, k);
            join(p, dir, name);
            assert_int_equal(unlink(p), 0);
        }
        registry_rescan(&r);
        assert_int_equal(r.present, 1);
        assert_true(r.count <= 1 + VOR_SERVER_MAX_GONE_CAPTURES);
    }
    write_file(dir, "new.vor", magic, 8);
    registry_rescan(&r);
    assert_false(r.truncated);
    assert_int_equal(r.present, 2);
    const capture_entry *found = NULL;
    for (size_t i = 0; i < r.count; i++)
        if (r.entries[i].present && !strcmp(r.entries[i].name, "new.vor"))
            found = &r.entries[i];
    assert_non_null(found);
    assert_int_equal(found->id, 1 + 1100); /* ids are never reused */
    char idtxt[16];
    snprintf(idtxt, sizeof idtxt, "%zu", found->id);
    assert_ptr_equal(registry_find(&r, idtxt), found);
    snprintf(idtxt, sizeof idtxt, "%zu", keep_id);
    assert_non_null(registry_find(&r, idtxt));
    assert_true(registry_find(&r, idtxt)->present);
    /* The longest-gone were forgotten: their ids are unknown now, and such a file coming back
     * gets a new id; a recently gone one gets its id back. */
    snprintf(idtxt, sizeof idtxt, "%zu", first_gone_id);
    assert_null(registry_find(&r, idtxt));
    write_file(dir, "run000-0.vor", magic, 8);
    write_file(dir, "run109-9.vor", magic, 8);
    registry_rescan(&r);
    for (size_t i = 0; i < r.count; i++) {
        if (!strcmp(r.entries[i].name, "run000-0.vor"))
            assert_int_equal(r.entries[i].id, 1 + 1100 + 1);
        if (!strcmp(r.entries[i].name, "run109-9.vor"))
            assert_int_equal(r.entries[i].id, 1 + 1099);
    }
    for (size_t i = 1; i < r.count; i++)
        assert_true(r.entries[i - 1].id < r.entries[i].id); /* still in id order */
    registry_free(&r);
}

/* ---- open_regular_file: FIFOs and devices never block, never stream ---- */

static void test_open_regular_file_refuses_fifos_without_blocking(void **state)
{
    (void)state;
    char fifo[PATH_MAX], file[PATH_MAX], missing[PATH_MAX];
    struct stat st;
    path_in(fifo, "pipe.vor");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* A blocking open(2) would hang here forever: nobody opens the FIFO for writing. */
    assert_int_equal(open_regular_file(fifo, 0, &st), -2);
    capture_probe pr;
    capture_probe_path(fifo, &pr);
    assert_int_equal(pr.state, CAPTURE_NOT_FILE);
    assert_int_equal(open_regular_file(tmp_root, 0, &st), -2); /* a directory */
    assert_int_equal(open_regular_file("/dev/null", 0, &st), -2);

    write_file(tmp_root, "plain.vor", magic, 8);
    path_in(file, "plain.vor");
    int fd = open_regular_file(file, O_NOFOLLOW, &st);
    assert_true(fd >= 0);
    assert_int_equal(st.st_size, 8);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);
    path_in(missing, "nothing-here.vor");
    errno = 0;
    assert_int_equal(open_regular_file(missing, 0, &st), -1);
    assert_int_equal(errno, ENOENT);
}

/* ---- ws_stream.c: capture header fingerprint ---- */

static void test_capture_header_fingerprint(void **state)
{
    (void)state;
    unsigned char h[32];
    memcpy(h, magic, 8);
    h[8] = 1; h[9] = 0; h[10] = 0; h[11] = 0;
    h[12] = 100; h[13] = 0; h[14] = 0; h[15] = 0;
    assert_int_equal(capture_header_length(h), 120); /* 16 + body + check */
    h[12] = 0; h[14] = 0x10; /* 1 MiB body: only the first SERVER_HEADER_CHECK_BYTES count */
    assert_int_equal(capture_header_length(h), SERVER_HEADER_CHECK_BYTES);
    h[14] = 0; h[15] = 0xff;
    assert_int_equal(capture_header_length(h), SERVER_HEADER_CHECK_BYTES);
    memset(h + 16, 0x42, 16);
    uint64_t a = capture_header_hash(h, sizeof h);
    assert_true(a == capture_header_hash(h, sizeof h));
    h[20] ^= 1; /* another wall-clock start */
    assert_true(a != capture_header_hash(h, sizeof h));
}

/* ---- access.c: Host / Origin policy ---- */

static void expect_host(const access_policy *p, const char *host, bool want)
{
    if (access_host_allowed(p, host) != want)
        fail_msg("Host '%s': %s, wanted %s", host ? host : "(none)", want ? "refused" : "allowed",
                 want ? "allowed" : "refused");
}

static void expect_origin(const access_policy *p, const char *origin, const char *host, bool want)
{
    if (access_origin_allowed(p, origin, host) != want)
        fail_msg("Origin '%s' with Host '%s': %s, wanted %s", origin ? origin : "(none)",
                 host ? host : "(none)", want ? "refused" : "allowed", want ? "allowed" : "refused");
}

static void test_access_host_header(void **state)
{
    (void)state;
    access_policy p;
    assert_int_equal(access_policy_init(&p, "127.0.0.1", 8700), 0);
    const char *ok[] = {NULL, "127.0.0.1", "127.0.0.1:8700", "127.0.0.1:9999", "localhost",
                        "LocalHost:8700", "[::1]:8700", "[::1]", "127.1.2.3:1",
                        "[0:0:0:0:0:0:0:1]:8700"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        expect_host(&p, ok[i], true);
    const char *bad[] = {"evil.example", "evil.example:8700", "127.0.0.1.evil.example", "",
                         "localhost.evil.example:8700", "[::1", "::1", "localhost:", "localhost:abc",
                         "localhost:0", "localhost:70000", "10.0.0.5:8700", "user@127.0.0.1",
                         "127.0.0.1 :8700", " 127.0.0.1", "localhost.", "0.0.0.0:8700", "[127.0.0.1]",
                         "127.0.0.1:8700:1", "127.1", "2130706433"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_host(&p, bad[i], false);

    /* Bound to a LAN address: that address too, and still loopback; no other. */
    assert_int_equal(access_policy_init(&p, "10.1.2.3", 8700), 0);
    expect_host(&p, "10.1.2.3:8700", true);
    expect_host(&p, "localhost:8700", true);
    expect_host(&p, "10.1.2.4:8700", false);
    expect_host(&p, "myhost.lan:8700", false);
    /* Bound to every address: any IP literal is one of ours; names still are not. */
    assert_int_equal(access_policy_init(&p, "0.0.0.0", 8700), 0);
    expect_host(&p, "192.168.1.5:8700", true);
    expect_host(&p, "[fe80::1]:8700", true);
    expect_host(&p, "evil.example:8700", false);
    assert_int_equal(access_policy_init(&p, "::", 8700), 0);
    expect_host(&p, "192.168.1.5", true);
    assert_int_equal(access_policy_init(&p, "::1", 8700), 0);
    expect_host(&p, "[::1]:8700", true);
    expect_host(&p, "[::2]:8700", false);
    assert_int_equal(access_policy_init(&p, "not-an-address", 8700), -1);
}

static void test_access_origin_header(void **state)
{
    (void)state;
    access_policy p;
    assert_int_equal(access_policy_init(&p, "127.0.0.1", 8700), 0);
    const char *h = "127.0.0.1:8700";
    expect_origin(&p, NULL, h, true);       /* CLI / node clients send none */
    expect_origin(&p, NULL, NULL, true);
    expect_origin(&p, "http://127.0.0.1:8700", h, true);
    expect_origin(&p, "http://localhost:8700", h, true);
    expect_origin(&p, "http://[::1]:8700", h, true);
    expect_origin(&p, "HTTP://LOCALHOST:8700", h, true);
    expect_origin(&p, "http://127.0.0.1:8700/", h, true);
    expect_origin(&p, "http://localhost:8700", NULL, true);
    expect_origin(&p, "http://localhost:9000", "localhost:9000", true); /* ssh -L 9000:...:8700 */
    expect_origin(&p, "https://evil.example", h, false);
    expect_origin(&p, "http://evil.example:8700", h, false);
    expect_origin(&p, "http://evil.example:8700", "evil.example:8700", false); /* DNS rebinding */
    expect_origin(&p, "http://localhost:8701", h, false);  /* another local server's page */
    expect_origin(&p, "http://localhost", h, false);
    expect_origin(&p, "http://127.0.0.1:8700", "evil.example", false);
    expect_origin(&p, "null", h, false);
    expect_origin(&p, "file://", h, false);
    expect_origin(&p, "chrome-extension://abcdef", h, false);
    expect_origin(&p, "http://127.0.0.1:8700/path", h, false);
    expect_origin(&p, "http://127.0.0.1:8700.evil.example", h, false);
    expect_origin(&p, "http://user@127.0.0.1:8700", h, false);
    expect_origin(&p, "", h, false);
    expect_origin(&p, "http://", h, false);
    /* On a wildcard bind, a page from this server via a LAN address passes; others do not. */
    assert_int_equal(access_policy_init(&p, "0.0.0.0", 8700), 0);
    expect_origin(&p, "http://192.168.1.5:8700", "192.168.1.5:8700", true);
    expect_origin(&p, "http://192.168.1.6:8700", "192.168.1.5:8700", false);
    expect_origin(&p, "http://192.168.1.5:8701", "192.168.1.5:8700", false);
}

static void test_access_loopback_addresses(void **state)
{
    (void)state;
    assert_true(access_address_is_loopback("127.0.0.1"));
    assert_true(access_address_is_loopback("127.9.9.9"));
    assert_true(access_address_is_loopback("::1"));
    assert_true(access_address_is_loopback("::ffff:127.0.0.1"));
    assert_true(access_address_is_loopback("localhost"));
    assert_false(access_address_is_loopback("0.0.0.0"));
    assert_false(access_address_is_loopback("::"));
    assert_false(access_address_is_loopback("192.168.0.1"));
    assert_false(access_address_is_loopback("fe80::1"));
    assert_false(access_address_is_loopback(NULL));
}

/* ---- http_static.c ---- */

static char site_real[PATH_MAX];

static int make_site(void **state)
{
    char p[PATH_MAX], q[PATH_MAX];
    if (make_tmp(state))
        return -1;
    path_in(p, "site");
    mkdir(p, 0700);
    path_in(p, "site/sub");
    mkdir(p, 0700);
    path_in(p, "site2"); /* shares the prefix "site": a classic containment-check trap */
    mkdir(p, 0700);
    path_in(p, "site");
    write_file(p, "index.html", "i", 1);
    write_file(p, "app.js", "a", 1);
    write_file(p, "...", "dots", 4);
    path_in(p, "site/sub");
    write_file(p, "index.html", "s", 1);
    write_file(tmp_root, "secret.txt", "s", 1);
    path_in(p, "site2");
    write_file(p, "x.js", "x", 1);
    path_in(p, "secret.txt");
    path_in(q, "site/out.txt");
    if (symlink(p, q))
        return -1;
    path_in(q, "site/outdir");
    if (symlink(tmp_root, q))
        return -1;
    path_in(p, "site2/x.js");
    path_in(q, "site/sibling.js");
    if (symlink(p, q))
        return -1;
    path_in(p, "site/app.js");
    path_in(q, "site/sub/alias.js");
    if (symlink(p, q))
        return -1;
    path_in(p, "site");
    return realpath(p, site_real) ? 0 : -1;
}

static void expect_resolve(const char *uri, static_result want, const char *want_suffix)
{
    char out[PATH_MAX] = "";
    static_result got = static_resolve(site_real, uri, out, sizeof out);
    if (got != want)
        fail_msg("%s: result %d, wanted %d", uri, got, want);
    if (want == STATIC_FILE) {
        size_t n = strlen(out), m = strlen(want_suffix);
        if (n < m || strcmp(out + n - m, want_suffix) || strncmp(out, site_real, strlen(site_real)))
            fail_msg("%s resolved to %s", uri, out);
    }
}

static void test_static_resolves_files_and_directories(void **state)
{
    (void)state;
    expect_resolve("/", STATIC_FILE, "/site/index.html");
    expect_resolve("/app.js", STATIC_FILE, "/site/app.js");
    expect_resolve("/sub/", STATIC_FILE, "/site/sub/index.html");
    expect_resolve("/sub", STATIC_REDIRECT, NULL);
    expect_resolve("/sub/alias.js", STATIC_FILE, "/site/app.js"); /* symlink inside: its target */
    expect_resolve("/...", STATIC_FILE, "/site/...");             /* a real name, not traversal */
    expect_resolve("/nope.js", STATIC_NOT_FOUND, NULL);
    expect_resolve("/app.js/", STATIC_NOT_FOUND, NULL);
    expect_resolve("/sub/index.html/x", STATIC_NOT_FOUND, NULL);
    char out[PATH_MAX];
    assert_int_equal(static_resolve(NULL, "/", out, sizeof out), STATIC_NOT_FOUND);
    assert_int_equal(static_resolve(site_real, "/app.js", out, 4), STATIC_NOT_FOUND); /* too small */
}

static void test_static_refuses_traversal(void **state)
{
    (void)state;
    const char *bad[] = {
        "/../secret.txt", "/..", "/sub/../../secret.txt", "/sub/..", "/./app.js", "/.",
        "/sub/./index.html", "/..\\secret.txt", "/a\\b", "/\x01", "/x\x7f", "app.js", "",
        "/out.txt", "/outdir/secret.txt", "/outdir/site/app.js/../../secret.txt", "/sibling.js",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_resolve(bad[i], STATIC_FORBIDDEN, NULL);
}

static void test_mime_types(void **state)
{
    (void)state;
    assert_string_equal(static_mime_type("/x/demo.wasm"), "application/wasm");
    assert_string_equal(static_mime_type("DEMO.WASM"), "application/wasm");
    assert_non_null(strstr(static_mime_type("index.html"), "text/html"));
    assert_non_null(strstr(static_mime_type("a.js"), "javascript"));
    assert_non_null(strstr(static_mime_type("a.mjs"), "javascript"));
    assert_non_null(strstr(static_mime_type("a.css"), "text/css"));
    assert_string_equal(static_mime_type("a.json"), "application/json");
    assert_string_equal(static_mime_type("a.js.map"), "application/json");
    assert_string_equal(static_mime_type("a.svg"), "image/svg+xml");
    assert_string_equal(static_mime_type("a.png"), "image/png");
    assert_string_equal(static_mime_type("README"), "application/octet-stream");
    assert_string_equal(static_mime_type("a.xyz"), "application/octet-stream");
    assert_string_equal(static_mime_type(".wasm"), "application/octet-stream"); /* no base name */
}

int main(void)
{
    const struct CMUnitTest json_tests[] = {
        cmocka_unit_test(test_json_escapes_specials_and_controls),
        cmocka_unit_test(test_json_keeps_valid_utf8_and_replaces_invalid),
        cmocka_unit_test(test_json_fixed_buffer_overflow_fails_cleanly),
        cmocka_unit_test(test_json_growable_respects_its_limit),
    };
    const struct CMUnitTest message_tests[] = {
        cmocka_unit_test(test_client_follow_messages),
        cmocka_unit_test(test_client_bad_json_is_rejected),
        cmocka_unit_test(test_client_nesting_is_bounded),
        cmocka_unit_test(test_client_valid_json_but_wrong_message),
    };
    const struct CMUnitTest capture_tests[] = {
        cmocka_unit_test(test_magic_check),
        cmocka_unit_test(test_probe_states),
        cmocka_unit_test(test_registry_files_dirs_and_ids),
        cmocka_unit_test(test_registry_is_capped),
        cmocka_unit_test(test_registry_churn_keeps_listing_new_captures),
        cmocka_unit_test(test_open_regular_file_refuses_fifos_without_blocking),
    };
    const struct CMUnitTest access_tests[] = {
        cmocka_unit_test(test_capture_header_fingerprint),
        cmocka_unit_test(test_access_host_header),
        cmocka_unit_test(test_access_origin_header),
        cmocka_unit_test(test_access_loopback_addresses),
    };
    const struct CMUnitTest static_tests[] = {
        cmocka_unit_test(test_static_resolves_files_and_directories),
        cmocka_unit_test(test_static_refuses_traversal),
        cmocka_unit_test(test_mime_types),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("server json output", json_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("server client messages", message_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("server captures", capture_tests, make_tmp, remove_tmp);
    failed += cmocka_run_group_tests_name("server access and headers", access_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("server static files", static_tests, make_site, remove_tmp);
    return failed ? 1 : 0;
}
