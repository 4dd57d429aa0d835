/* test_thread_names.c: a thread name over VOR_MAX_THREAD_NAME_BYTES (63) is cut at a
 * UTF-8 character boundary everywhere, and the one warning says what was done.
 *
 * Before the fix the name was cut at byte 63 whatever it held: a name of "é" (2 bytes
 * each) kept 31 of them and a lone 0xC3, which the capture stored; the warning said 255
 * bytes. Now the stored name is 31 "é" (62 bytes), in the capture, in the trace, and from
 * vor_thread_name (also into a buffer too small for it), and the warning's text names
 * both limits.
 */
#include "support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_check.h"
#include "child.h"
#include "vor/reader.h"

#define E_ACUTE "\xC3\xA9"

/* n times "é". */
static const char *accents(int n) {
    static char text[8][256];
    static unsigned next;
    char *t = text[next++ % 8];
    t[0] = '\0';
    for (int i = 0; i < n; i++) strcat(t, E_ACUTE);
    return t;
}

static int teardown(void **state) {
    (void)state;
    unsetenv("VOR_RECORD");
    unsetenv("VOR_RECORD_FLAME");
    unsetenv("VOR_TRACE");
    session_teardown();
    return 0;
}

/* Named before its first scope: the name waits for the thread's buffer. */
static void *named_worker(void *arg) {
    (void)arg;
    vor_set_thread_name(accents(40));
    VOR_SCOPE("worker scope");
    return NULL;
}

static const char *thread_name_in_capture(vor_reader *r, uint32_t id) {
    const vor_reader_thread *t = vor_reader_get_thread(r, id);
    return t ? t->name : NULL;
}

static void long_names_cut_at_a_character_boundary(void **state) {
    (void)state;
    char capture[512], trace[512];
    snprintf(capture, sizeof capture, "%s", safety_temp_path(".vor"));
    snprintf(trace, sizeof trace, "%s", safety_temp_path(".json"));
    setenv("VOR_RECORD", capture, 1);
    setenv("VOR_RECORD_FLAME", "1", 1);
    setenv("VOR_TRACE", trace, 1);
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    setup_with_capture(desc);
    vor_enable();
    recording_attach(16);

    { VOR_SCOPE("main scope"); }
    vor_set_thread_name(accents(40)); /* a rename: the buffer exists already */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, named_worker, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    vor_frame_mark();

    const char *kept = accents(31); /* 62 bytes: a 32nd "é" would end at byte 64 */
    assert_int_equal(rec.n_frames, 1);
    uint32_t ids[2] = {rec.frames[0].scopes[0].thread_id, rec.frames[0].scopes[1].thread_id};
    assert_int_not_equal(ids[0], ids[1]);
    for (int i = 0; i < 2; i++) {
        char name[VOR_MAX_THREAD_NAME_BYTES + 1];
        assert_int_equal(vor_thread_name(ids[i], name, sizeof name), 1);
        assert_string_equal(name, kept);
        char small[10]; /* 9 bytes: four "é", not four and a half */
        assert_int_equal(vor_thread_name(ids[i], small, sizeof small), 1);
        assert_string_equal(small, accents(4));
    }

    /* One report, counted per name, whose text is true and whose quote is whole characters. */
    assert_int_equal(captured.count[VOR_LOG_NAME_TOO_LONG], 1);
    assert_int_equal(vor_log_count(VOR_LOG_NAME_TOO_LONG), 2);
    char expected[512];
    snprintf(expected, sizeof expected,
             "a name longer than 255 bytes (63 for a thread name) was cut at a character boundary: "
             "thread name \"%s...\" kept as its first 62 bytes",
             accents(20));
    assert_string_equal(captured.last_message[VOR_LOG_NAME_TOO_LONG], expected);
    vor_shutdown();

    char err[1024];
    vor_reader *r = vor_reader_open(capture, err, sizeof err);
    assert_non_null(r);
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
    for (int i = 0; i < 2; i++) {
        const char *name = thread_name_in_capture(r, ids[i]);
        assert_non_null(name);
        assert_string_equal(name, kept);
    }
    vor_reader_close(r);

    trace_dump d;
    assert_int_equal(check_trace("strict", trace, &d), 0); /* also: the file is valid UTF-8 */
    char line[256];
    snprintf(line, sizeof line, " thread_name %s", hex_of(kept));
    size_t named = 0;
    for (size_t i = 0; i < d.n; i++)
        if (strstr(d.lines[i], line)) named++;
    assert_int_equal(named, 2);
    trace_dump_free(&d);
    unlink(capture);
    unlink(trace);
}

/* A name of exactly 63 bytes is kept whole and not reported. */
static void a_name_at_the_limit_is_kept(void **state) {
    (void)state;
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    setup_with_capture(desc);
    vor_enable();
    recording_attach(4);
    char name[VOR_MAX_THREAD_NAME_BYTES + 1];
    snprintf(name, sizeof name, "x%s", accents(31)); /* 63 bytes */
    assert_int_equal(strlen(name), VOR_MAX_THREAD_NAME_BYTES);
    vor_set_thread_name(name);
    { VOR_SCOPE("scope"); }
    vor_frame_mark();
    char out[VOR_MAX_THREAD_NAME_BYTES + 1];
    assert_int_equal(vor_thread_name(rec.frames[0].scopes[0].thread_id, out, sizeof out), 1);
    assert_string_equal(out, name);
    assert_int_equal(vor_log_count(VOR_LOG_NAME_TOO_LONG), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(long_names_cut_at_a_character_boundary, teardown),
        cmocka_unit_test_teardown(a_name_at_the_limit_is_kept, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    remove_test_dir();
    return failed;
}
