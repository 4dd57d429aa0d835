/* test_header.c: the public header works from C99, C11 and C++ translation units, and
 * VOR_DISABLE turns the macros off. */
#include "support.h"

#include <string.h>

int header_c99_work(int n);
int header_c11_work(void);
int header_cpp_work(void);
int header_disabled_work(void);

static int count_named(const recorded_frame *f, const char *name) {
    int n = 0;
    for (uint32_t i = 0; i < f->kept; i++)
        if (strcmp(vor_site_get(f->scopes[i].site_id)->name, name) == 0) n++;
    return n;
}

static void header_works_from_every_language_mode(void **state) {
    (void)state;
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(64);
    assert_int_equal(header_c99_work(3), 3);
    assert_int_equal(header_c11_work(), 1);
    assert_int_equal(header_cpp_work(), 1);
    assert_int_equal(header_disabled_work(), 1);
    vor_frame_mark();
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(count_named(f, "header_c99_work"), 1);
    assert_int_equal(count_named(f, "c99 loop"), 3);
    assert_int_equal(count_named(f, "c11 explicit"), 1);
    assert_int_equal(count_named(f, "c11 scope"), 1);
    assert_int_equal(count_named(f, "c11 second scope on one line"), 1);
    assert_int_equal(count_named(f, "c11 third"), 1);
    assert_int_equal(count_named(f, "cpp throws"), 1);
    assert_int_equal(count_named(f, "header_cpp_work"), 1);
    assert_int_equal(count_named(f, "never recorded"), 0);
    assert_int_equal(count_named(f, "header_disabled_work"), 0);
    assert_int_equal(f->dropped, 0);
    assert_int_equal(vor_tls_thread->depth, 0);
    session_teardown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_works_from_every_language_mode),
    };
    return cmocka_run_group_tests_name("header", tests, NULL, NULL);
}
