/* test_longjmp.c: scopes that a longjmp skips (their ends never run) are closed by vor,
 * flagged VOR_SCOPE_UNWOUND, and recording goes on: the scopes after the jump nest under
 * the right parents, nothing is left open, nothing is dropped, even when it happens a
 * hundred thousand times. Macro scopes (VOR_SCOPE, VOR_FUNCTION) and -finstrument-functions
 * hooks (instrumented_longjmp.c); the explicit API's scopes, which may end in another
 * function, are never closed by vor. */
#include "support.h"

#include <setjmp.h>
#include <string.h>

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

static const char *site_name(uint32_t id) {
    const vor_site *s = vor_site_get(id);
    return s ? s->name : "(none)";
}

/* The kept scope of the last frame named `name` (the n-th such, 0 first), or NULL. */
static const recorded_scope *find_scope(const recorded_frame *f, const char *name, int nth) {
    for (uint32_t i = 0; i < f->kept; i++)
        if (strcmp(site_name(f->scopes[i].site_id), name) == 0 && nth-- == 0) return &f->scopes[i];
    return NULL;
}

/* A session on the real clock, recording the first `keep` scopes of each frame. */
static void start_session(uint32_t keep) {
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(keep);
}

static const recorded_scope *parent_of(const recorded_frame *f, const recorded_scope *s) {
    return s->parent < f->kept ? &f->scopes[s->parent] : NULL;
}

static jmp_buf jump;

__attribute__((noinline)) static void thrower(int depth) {
    VOR_SCOPE("skipped");
    if (depth < 0) return;
    if (depth > 0)
        thrower(depth - 1);
    else
        longjmp(jump, 1);
}

__attribute__((noinline)) static void after_the_jump(void) {
    VOR_SCOPE("after");
    __asm__ volatile("" ::: "memory");
}

/* outer { setjmp; thrower x3 -> longjmp; after } */
__attribute__((noinline)) static void jump_over_three(void) {
    VOR_SCOPE("outer");
    if (setjmp(jump) == 0) thrower(2);
    after_the_jump();
}

static void longjmp_over_nested_scopes_closes_them_unwound(void **state) {
    (void)state;
    start_session(100);
    jump_over_three();
    vor_frame_mark();

    assert_int_equal(rec.n_frames, 1);
    const recorded_frame *f = &rec.frames[0];

    assert_int_equal(f->kept_open, 0);
    assert_int_equal(f->dropped, 0);
    assert_int_equal(f->n_scopes, 5);
    for (int k = 0; k < 3; k++) {
        const recorded_scope *s = find_scope(f, "skipped", k);
        assert_non_null(s);
        assert_true(s->flags & VOR_SCOPE_UNWOUND);
    }
    const recorded_scope *outer = find_scope(f, "outer", 0), *after = find_scope(f, "after", 0);
    assert_non_null(outer);
    assert_non_null(after);
    assert_int_equal(outer->depth, 0);
    assert_int_equal(outer->flags, 0);
    assert_int_equal(after->depth, 1);
    assert_int_equal(after->flags, 0);
    assert_ptr_equal(parent_of(f, after), outer);
    /* The skipped ones keep their nesting: outer > skipped > skipped > skipped. */
    assert_int_equal(find_scope(f, "skipped", 0)->depth, 3);
    assert_ptr_equal(parent_of(f, find_scope(f, "skipped", 2)), outer);
    assert_int_equal(recorded_partial_overlaps(), 0);
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* A scope opened in the function that called setjmp, after it, is skipped too: its end
 * never runs, and the function's outer scope finds its own entry below it. */
__attribute__((noinline)) static void jump_back_into_own_function(void) {
    VOR_SCOPE("outer");
    if (setjmp(jump) == 0) {
        VOR_SCOPE("same function");
        thrower(0);
    }
}

static void scope_of_the_setjmp_function_is_closed_by_its_outer_scope(void **state) {
    (void)state;
    start_session(100);
    jump_back_into_own_function();
    after_the_jump();
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->kept_open, 0);
    assert_int_equal(f->n_scopes, 4);
    const recorded_scope *same = find_scope(f, "same function", 0), *outer = find_scope(f, "outer", 0);
    assert_true(same->flags & VOR_SCOPE_UNWOUND);
    assert_true(find_scope(f, "skipped", 0)->flags & VOR_SCOPE_UNWOUND);
    assert_int_equal(outer->flags, 0);
    assert_int_equal(outer->depth, 0);
    assert_ptr_equal(parent_of(f, same), outer);
    assert_int_equal(find_scope(f, "after", 0)->depth, 0);
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* Recursion: the jump lands in the middle of a recursion of one function; the levels
 * above the landing point are closed, the ones below stay open and end normally. */
static jmp_buf recursion_jump;
__attribute__((noinline)) static int recurse(int level) {
    VOR_FUNCTION();
    if (level == 5) longjmp(recursion_jump, 1);
    if (level == 2) {
        if (setjmp(recursion_jump) == 0) return recurse(level + 1);
        return level;
    }
    return recurse(level + 1) + 1;
}

static void longjmp_inside_a_recursion_keeps_the_levels_below(void **state) {
    (void)state;
    start_session(100);
    recurse(0);
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->kept_open, 0);
    assert_int_equal(f->n_scopes, 6);
    /* End order: levels 5, 4, 3 (unwound), then 2, 1, 0 (ended normally). */
    for (uint32_t i = 0; i < 6; i++) {
        assert_string_equal(site_name(f->scopes[i].site_id), "recurse");
        assert_int_equal(f->scopes[i].depth, 5 - i);
        assert_int_equal(f->scopes[i].flags & VOR_SCOPE_UNWOUND, i < 3 ? VOR_SCOPE_UNWOUND : 0);
    }
    assert_int_equal(recorded_partial_overlaps(), 0);
}

/* A hundred thousand jumps over three nested scopes, a frame every thousand: nothing
 * dropped, nothing left open, every frame's scopes nest, the depth comes back to 1. */
static void repeated_longjmp_never_drops(void **state) {
    (void)state;
    start_session(0);
    enum { JUMPS = 100000, PER_FRAME = 1000 };
    {
        VOR_SCOPE("whole run");
        for (int i = 0; i < JUMPS; i++) {
            jump_over_three();
            if (i % PER_FRAME == PER_FRAME - 1) vor_frame_mark();
        }
        assert_int_equal(vor_tls_thread->depth, 1);
    }
    vor_frame_mark();
    assert_int_equal(vor_tls_thread->dropped_full + vor_tls_thread->dropped_deep, 0);
    assert_int_equal(rec.total_dropped, 0);
    assert_int_equal(rec.total_scopes, (uint64_t)JUMPS * 5 + 1);
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* A jump from deeper than VOR_MAX_DEPTH: the scopes too deep to be stored go with the
 * deepest stored one (counted too deep, as they always are), the stored ones close unwound,
 * and the depth comes back to where the jump landed. */
static jmp_buf deep_jump;
__attribute__((noinline)) static void recurse_deep(int level) {
    VOR_FUNCTION();
    if (level < 0) return;
    if (level == VOR_MAX_DEPTH + 40) longjmp(deep_jump, 1);
    recurse_deep(level + 1);
}

__attribute__((noinline)) static void catch_deep(void) {
    VOR_SCOPE("catcher");
    if (setjmp(deep_jump) == 0) recurse_deep(0);
    after_the_jump();
}

static void longjmp_from_beyond_the_depth_limit_comes_back(void **state) {
    (void)state;
    start_session(1000);
    catch_deep();
    assert_int_equal(vor_tls_thread->depth, 0);
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->kept_open, 0);
    /* catcher, after, and the VOR_MAX_DEPTH - 1 stored levels below the catcher. */
    assert_int_equal(f->n_scopes, VOR_MAX_DEPTH + 1);
    assert_int_equal(f->dropped, 42); /* levels 255 .. 296, too deep to be stored */
    const recorded_scope *after = find_scope(f, "after", 0), *catcher = find_scope(f, "catcher", 0);
    assert_int_equal(after->flags, 0);
    assert_ptr_equal(parent_of(f, after), catcher);
    assert_true(find_scope(f, "recurse_deep", 0)->flags & VOR_SCOPE_UNWOUND);
}

/* -finstrument-functions (instrumented_longjmp.c): the same jump over hooked functions. */
int instrumented_jump_over(int depth);
int instrumented_catcher(int depth);

static void longjmp_over_instrumented_functions_closes_them_unwound(void **state) {
    (void)state;
    start_session(200);
    for (int i = 0; i < 20; i++) assert_int_equal(instrumented_catcher(3), 1);
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->kept_open, 0);
    assert_int_equal(f->dropped, 0);
    /* Per catch: instrumented_catcher, 4 levels of instrumented_jump_over (unwound). */
    assert_int_equal(f->n_scopes, 100);
    uint32_t unwound = 0, catchers = 0;
    for (uint32_t i = 0; i < f->kept; i++) {
        const char *name = site_name(f->scopes[i].site_id);
        if (strcmp(name, "instrumented_catcher") == 0) {
            catchers++;
            assert_int_equal(f->scopes[i].depth, 0);
            assert_int_equal(f->scopes[i].flags, 0);
        } else {
            assert_string_equal(name, "instrumented_jump_over");
            assert_true(f->scopes[i].flags & VOR_SCOPE_UNWOUND);
            unwound++;
        }
    }
    assert_int_equal(catchers, 20);
    assert_int_equal(unwound, 80);
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* Void functions, whose exit hook compilers call as a tail call (from the caller's stack
 * position): the leaves after the jump nest under the catcher, the skipped levels are
 * closed unwound. */
int instrumented_void_catcher(int depth);

static void longjmp_over_void_instrumented_functions_closes_them_unwound(void **state) {
    (void)state;
    start_session(200);
    for (int i = 0; i < 20; i++) assert_int_equal(instrumented_void_catcher(2), 2);
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->kept_open, 0);
    assert_int_equal(f->dropped, 0);
    /* Per catch: the catcher, 3 thrower levels (unwound), 2 leaves under the catcher. */
    assert_int_equal(f->n_scopes, 120);
    uint32_t unwound = 0, leaves = 0;
    for (uint32_t i = 0; i < f->kept; i++) {
        const recorded_scope *s = &f->scopes[i];
        const char *name = site_name(s->site_id);
        if (strcmp(name, "instrumented_void_thrower") == 0) {
            assert_true(s->flags & VOR_SCOPE_UNWOUND);
            unwound++;
        } else if (strcmp(name, "instrumented_void_leaf") == 0) {
            assert_int_equal(s->flags, 0);
            assert_int_equal(s->depth, 1);
            assert_string_equal(site_name(parent_of(f, s)->site_id), "instrumented_void_catcher");
            leaves++;
        } else {
            assert_string_equal(name, "instrumented_void_catcher");
            assert_int_equal(s->flags, 0);
        }
    }
    assert_int_equal(unwound, 60);
    assert_int_equal(leaves, 40);
    assert_int_equal(recorded_partial_overlaps(), 0);
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* A function the compiler inlined keeps its hooks, which then run from its caller's
 * frame (same stack position): neither is taken for a skipped one. */
int instrumented_calls_inlined(int x);

static void inlined_functions_are_not_taken_for_skipped_ones(void **state) {
    (void)state;
    start_session(100);
    for (int i = 0; i < 10; i++) instrumented_calls_inlined(i);
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_scopes, 30);
    for (uint32_t i = 0; i < f->kept; i++) {
        const recorded_scope *s = &f->scopes[i];
        assert_int_equal(s->flags, 0);
        if (strcmp(site_name(s->site_id), "instrumented_calls_inlined") == 0) {
            assert_int_equal(s->depth, 0);
        } else {
            assert_string_equal(site_name(s->site_id), "inlined_helper");
            assert_int_equal(s->depth, 1);
            assert_string_equal(site_name(parent_of(f, s)->site_id), "instrumented_calls_inlined");
        }
    }
    assert_int_equal(vor_tls_thread->depth, 0);
}

/* The explicit form may begin in one function and end in another: a macro scope in a
 * shallower function must not close it. */
static vor_site explicit_site = {"explicit", NULL, __FILE__, __LINE__, 0};
__attribute__((noinline)) static void begin_explicit(void) {
    vor_scope_begin(&explicit_site);
}

static void explicit_scopes_are_never_closed_by_vor(void **state) {
    (void)state;
    start_session(100);
    begin_explicit();
    after_the_jump(); /* a macro scope, shallower than begin_explicit's frame */
    vor_scope_end();
    vor_frame_mark();

    const recorded_frame *f = &rec.frames[0];
    assert_int_equal(f->n_scopes, 2);
    const recorded_scope *e = find_scope(f, "explicit", 0), *a = find_scope(f, "after", 0);
    assert_int_equal(e->flags, 0);
    assert_ptr_equal(parent_of(f, a), e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(longjmp_over_nested_scopes_closes_them_unwound, teardown),
        cmocka_unit_test_teardown(scope_of_the_setjmp_function_is_closed_by_its_outer_scope, teardown),
        cmocka_unit_test_teardown(longjmp_inside_a_recursion_keeps_the_levels_below, teardown),
        cmocka_unit_test_teardown(repeated_longjmp_never_drops, teardown),
        cmocka_unit_test_teardown(longjmp_from_beyond_the_depth_limit_comes_back, teardown),
        cmocka_unit_test_teardown(longjmp_over_instrumented_functions_closes_them_unwound, teardown),
        cmocka_unit_test_teardown(longjmp_over_void_instrumented_functions_closes_them_unwound, teardown),
        cmocka_unit_test_teardown(inlined_functions_are_not_taken_for_skipped_ones, teardown),
        cmocka_unit_test_teardown(explicit_scopes_are_never_closed_by_vor, teardown),
    };
    return cmocka_run_group_tests_name("longjmp", tests, NULL, NULL);
}
