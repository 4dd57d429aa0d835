/* test_instrument.c: -finstrument-functions gives every function of a file a scope,
 * named from the program's symbol table (static ones too), VOR_SKIP keeps one out,
 * and exits of functions whose entry was not recorded close nothing. */
#include "support.h"

#include <string.h>

int instrumented_leaf(int x);
int instrumented_parent(int x);
int instrumented_skipped(int x);
int instrumented_calls_static(int x);

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

static const char *name_of(uint32_t site_id) {
    return vor_site_get(site_id)->name;
}

static void every_function_gets_a_named_scope_except_skipped(void **state) {
    (void)state;
    fake_clock_install(0);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(64);
    assert_int_equal(instrumented_parent(2), 7 + 10 + 1);
    vor_frame_mark();
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_scopes, 3);
    assert_string_equal(name_of(f->scopes[0].site_id), "instrumented_leaf");
    assert_int_equal(f->scopes[0].depth, 1);
    assert_string_equal(name_of(f->scopes[1].site_id), "instrumented_leaf");
    assert_int_equal(f->scopes[1].site_id, f->scopes[0].site_id); /* one site per function */
    assert_string_equal(name_of(f->scopes[2].site_id), "instrumented_parent");
    assert_int_equal(f->scopes[2].depth, 0);
    for (uint32_t i = 0; i < f->kept; i++) assert_null(strstr(name_of(f->scopes[i].site_id), "skipped"));
}

static void static_functions_are_named_from_the_symbol_table(void **state) {
    (void)state;
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(64);
    instrumented_calls_static(1);
    vor_frame_mark();
    recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_scopes, 2);
    const vor_site *hidden = vor_site_get(f->scopes[0].site_id);
    assert_string_equal(hidden->name, "hidden_helper");
    assert_non_null(hidden->file);
    assert_non_null(strstr(hidden->file, "instrumented_code.c"));
    assert_true(hidden->line > 0);
    assert_string_equal(name_of(f->scopes[1].site_id), "instrumented_calls_static");
}

static void exits_without_recorded_entries_close_nothing(void **state) {
    (void)state;
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(64);
    {
        VOR_SCOPE("outer macro scope");
        vor_disable();
        instrumented_parent(1); /* entries not recorded: exits must not pop "outer" */
        vor_enable();
        assert_int_equal(vor_tls_thread->depth, 1);
    }
    assert_int_equal(vor_tls_thread->depth, 0);
    vor_frame_mark();
    assert_int_equal(vor_log_count(VOR_LOG_UNBALANCED_END), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(every_function_gets_a_named_scope_except_skipped, teardown),
        cmocka_unit_test_teardown(static_functions_are_named_from_the_symbol_table, teardown),
        cmocka_unit_test_teardown(exits_without_recorded_entries_close_nothing, teardown),
    };
    return cmocka_run_group_tests_name("instrument_functions", tests, NULL, NULL);
}
