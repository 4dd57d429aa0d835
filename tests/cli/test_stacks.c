/* test_stacks.c: the stack engine (native/cli/stacks.c) on frames built by hand, in the
 * shapes format 1.1 gives (scopes still open at a frame's end, explicit parents) and the
 * shapes 1.0 gives (parents not recorded), with figures worked out in the comments.
 *
 * The engine names sites and threads through a reader: each test gets one from a small
 * capture made here (header + one record declaring sites 1..N and threads 1, 2), then adds
 * frames of its own making. Stacks are checked as the folded text the engine's tree writes. */
#include "cli_test.h"

#include <string.h>

#include "bytes.h"
#include "crc32c.h"

/* ---- a reader that knows the sites and threads ----------------------------------------- */

static const char *const SITES[] = {"run", "step", "child before the mark", "child after the mark", "leaf", "rec"};
enum { RUN = 1, STEP, BEFORE, AFTER, LEAF, REC };

static void str(vor_out *o, const char *s) {
    vor_out_varint(o, strlen(s));
    vor_out_bytes(o, s, strlen(s));
}

static void put_record(vor_out *file, const vor_out *decoded) {
    vor_out payload = {0};
    payload.max_capacity = 1u << 20;
    vor_out_varint(&payload, (uint64_t)decoded->size << 1 | 1); /* stored */
    vor_out_bytes(&payload, decoded->data, decoded->size);
    uint8_t length[4];
    vor_put_u32le(length, (uint32_t)payload.size + 4);
    uint32_t check = vor_crc32c(vor_crc32c(0, length, 4), payload.data, payload.size);
    vor_out_bytes(file, length, 4);
    vor_out_u32le(file, check);
    vor_out_bytes(file, payload.data, payload.size);
    free(payload.data);
}

/* A memory reader that has read one frame declaring SITES (ids 1..) and threads 1 "main"
 * and 2 "worker". */
static vor_reader *make_reader(void) {
    vor_out body = {0}, file = {0}, rec = {0};
    body.max_capacity = file.max_capacity = rec.max_capacity = 1u << 20;
    vor_out_varint(&body, 1);
    vor_out_u64le(&body, 0);
    vor_out_varint(&body, 1);
    str(&body, "test");
    str(&body, "test");
    vor_out_varint(&body, 1);
    vor_out_varint(&body, 1); /* one system column */
    vor_out_varint(&body, 0);
    str(&body, "frame_ms");
    str(&body, "ms");
    vor_out_u8(&body, 0);
    vor_out_f64le(&body, 1e-6);
    vor_out_bytes(&file, "\x89VOR\r\n\x1a\n", 8);
    size_t fixed = file.size;
    vor_out_u16le(&file, 1);
    vor_out_u16le(&file, 0);
    vor_out_u32le(&file, (uint32_t)body.size);
    vor_out_bytes(&file, body.data, body.size);
    vor_out_u32le(&file, vor_crc32c(0, file.data + fixed, file.size - fixed));
    vor_out_u8(&rec, 1);
    vor_out_varint(&rec, 1); /* declarations */
    vor_out_varint(&rec, 0);
    vor_out_svarint(&rec, 0);
    vor_out_varint(&rec, 1000);
    vor_out_varint(&rec, 0);
    vor_out_varint(&rec, 0); /* columns */
    size_t n_sites = sizeof SITES / sizeof *SITES;
    vor_out_varint(&rec, n_sites);
    for (size_t i = 0; i < n_sites; i++) {
        vor_out_varint(&rec, i + 1);
        str(&rec, SITES[i]);
        str(&rec, "");
        str(&rec, "");
        vor_out_varint(&rec, 0);
    }
    vor_out_varint(&rec, 2);
    vor_out_varint(&rec, 1);
    str(&rec, "main");
    vor_out_varint(&rec, 0);
    vor_out_varint(&rec, 2);
    str(&rec, "worker");
    vor_out_varint(&rec, 0);
    vor_out_varint(&rec, 0); /* user values */
    put_record(&file, &rec);
    assert_false(body.failed || file.failed || rec.failed);
    vor_reader *r = vor_reader_open_memory();
    assert_non_null(r);
    assert_true(vor_reader_feed(r, file.data, file.size));
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
    free(body.data);
    free(file.data);
    free(rec.data);
    return r;
}

/* ---- frames by hand ------------------------------------------------------------------------ */

#define NONE VOR_PARENT_NONE
#define UNKNOWN VOR_PARENT_UNKNOWN

static vor_reader_scope sc(uint32_t site, uint32_t depth, int64_t start, int64_t dur, uint32_t parent, int open) {
    return (vor_reader_scope){site, depth, start, dur, parent, open ? VOR_SCOPE_OPEN : 0u};
}

/* A frame [start, start + duration) with one thread's scopes (n_open of them open). */
static vor_reader_frame frame1(vor_reader_thread_scopes *ts, uint32_t thread, const vor_reader_scope *scopes,
                               uint32_t n_ended, uint32_t n_open, int64_t start, int64_t duration) {
    *ts = (vor_reader_thread_scopes){thread, n_ended, scopes, n_open};
    vor_reader_frame f;
    memset(&f, 0, sizeof f);
    f.start_ns = start;
    f.duration_ns = duration;
    f.has_flame = 1;
    f.n_threads = 1;
    f.threads = ts;
    f.n_scopes = n_ended;
    return f;
}

typedef struct fixture {
    vor_reader *r;
    flamegraph_tree *tree;
    stacks st;
} fixture;

static void setup(fixture *x, int thread_roots, int flamechart) {
    x->r = make_reader();
    flamegraph_tree_options to = {flamechart, false, 0, 0};
    x->tree = flamegraph_tree_create(&to);
    stacks_options so = {.tree = x->tree, .thread_roots = thread_roots, .raw = 0, .max_frame_scopes = 0, .weight = 1.0};
    assert_int_equal(stacks_init(&x->st, &so, x->r), 0);
}

static void teardown(fixture *x) {
    stacks_free(&x->st);
    flamegraph_tree_destroy(x->tree);
    vor_reader_close(x->r);
}

/* The folded text of the engine's tree as the commands write it. */
static char *folded(fixture *x, const char *only_thread, int flamechart) {
    flamegraph_tree_options to = {flamechart, false, 0, 0};
    flamegraph_status fs;
    flamegraph_tree *t = stacks_final_tree(&x->st, x->r, &to, only_thread, 1, &fs);
    assert_non_null(t);
    mem_out m;
    mem_open(&m);
    assert_int_equal(flamegraph_write_folded(t, m.f, NULL), FLAMEGRAPH_OK);
    char *text = strdup(mem_text(&m));
    mem_close(&m);
    flamegraph_tree_destroy(t);
    return text;
}

static const stacks_name *by_name(fixture *x, const char *name) {
    uint32_t id = name_table_find(x->st.names, name);
    assert_int_not_equal(id, NAME_NONE);
    return stacks_get_name(&x->st, id);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* A scope that spans the frame mark, the case of issue 9.2. The program:
 *     run { step { before } | mark | { after } step end ... }
 * Frame [1000, 2000): `before` ended (1100..1300), run and step open (run from 0, step
 * from 1050). Frame [2000, 3000): `after` (2100..2400) and step (1050..2500) ended, run
 * open. Every stack is one the program makes; time is inside each frame. */
static void scopes_open_across_the_mark_keep_their_true_stack(void **state) {
    (void)state;
    fixture x;
    setup(&x, 1, 0);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(BEFORE, 2, 1100, 200, 2, 0), sc(RUN, 0, 0, 2000, NONE, 1), sc(STEP, 1, 1050, 950, 1, 1)};
    vor_reader_frame f = frame1(&ts, 1, a, 1, 2, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    vor_reader_scope b[] = {sc(AFTER, 2, 2100, 300, 1, 0), sc(STEP, 1, 1050, 1450, 2, 0), sc(RUN, 0, 0, 3000, NONE, 1)};
    f = frame1(&ts, 1, b, 2, 1, 2000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    char *text = folded(&x, NULL, 0);
    /* run: frame 1 contributes 1000 - step's 950 = 50; frame 2: 1000 - step's 500 = 500.
     * step: 950 - 200 = 750, then 500 - 300 = 200. */
    assert_string_equal(text, "main;run 550\n"
                              "main;run;step 950\n"
                              "main;run;step;child after the mark 300\n"
                              "main;run;step;child before the mark 200\n");
    free(text);
    const stacks_name *step = by_name(&x, "step");
    assert_int_equal(step->calls, 1);               /* ended once */
    assert_int_equal(step->total_ns, 950 + 500);    /* time inside the two frames */
    assert_int_equal(step->duration_ns, 1450);      /* the full duration of the ended one */
    assert_int_equal(by_name(&x, "run")->calls, 0); /* never ended */
    assert_int_equal(by_name(&x, "run")->total_ns, 2000);
    assert_int_equal(x.st.stats.open_scopes, 3);
    assert_int_equal(x.st.stats.parent_unknown, 0);
    teardown(&x);
}

/* 1.0: the parent of `before` ended in a frame that was not recorded: not guessed. */
static void an_unrecorded_parent_is_a_placeholder_not_a_guess(void **state) {
    (void)state;
    fixture x;
    setup(&x, 1, 0);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(BEFORE, 2, 1100, 200, UNKNOWN, 0), sc(LEAF, 1, 1400, 100, 2, 0),
                            sc(STEP, 0, 1300, 400, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 3, 0, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    char *text = folded(&x, NULL, 0);
    assert_string_equal(text, "main;[parent not recorded];child before the mark 200\n"
                              "main;step 300\n"
                              "main;step;leaf 100\n");
    free(text);
    assert_int_equal(x.st.stats.parent_unknown, 1);
    teardown(&x);
}

/* Parents that cannot be (out of range, pointing backwards, at itself) are not followed:
 * no loop, no invented nesting. */
static void impossible_parents_are_not_followed(void **state) {
    (void)state;
    fixture x;
    setup(&x, 0, 0);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(LEAF, 1, 1000, 10, 0, 0), sc(LEAF, 1, 1010, 10, 0, 0), sc(STEP, 0, 1000, 100, 77, 0),
                            sc(RUN, 0, 1000, 500, 3, 1), sc(REC, 1, 1000, 500, 3, 1)};
    vor_reader_frame f = frame1(&ts, 1, a, 3, 2, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    char *text = folded(&x, NULL, 0);
    /* leaf 0 names itself, leaf 1 names an earlier scope, step 77, open run names itself;
     * open rec names open run (3): valid. */
    /* run's time is all its child's (no line of its own). */
    assert_string_equal(text, "[parent not recorded];leaf 20\n"
                              "[parent not recorded];run;rec 1000\n"
                              "[parent not recorded];step 100\n");
    free(text);
    assert_int_equal(x.st.stats.parent_unknown, 4);
    teardown(&x);
}

/* Self = contribution - children's contributions, never negative; totals add up. */
static void self_time_is_never_negative(void **state) {
    (void)state;
    fixture x;
    setup(&x, 0, 0);
    vor_reader_thread_scopes ts;
    /* step 1000..1100 with children of 80 and 70: longer than their parent. */
    vor_reader_scope a[] = {sc(LEAF, 1, 1000, 80, 2, 0), sc(LEAF, 1, 1020, 70, 2, 0), sc(STEP, 0, 1000, 100, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 3, 0, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    const stacks_name *step = by_name(&x, "step");
    assert_int_equal(step->self_ns, 0);
    assert_int_equal(step->total_ns, 150); /* a parent is as wide as its children */
    assert_int_equal(x.st.stats.children_longer, 1);
    teardown(&x);
}

/* A scope that began before the frame counts from the frame's start. */
static void time_is_clipped_to_the_frame(void **state) {
    (void)state;
    fixture x;
    setup(&x, 0, 0);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(LEAF, 1, 500, 700, 1, 0), sc(STEP, 0, 100, 1500, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 2, 0, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    assert_int_equal(by_name(&x, "leaf")->total_ns, 200); /* 1000..1200 */
    assert_int_equal(by_name(&x, "step")->total_ns, 600); /* 1000..1600 */
    assert_int_equal(by_name(&x, "step")->self_ns, 400);
    assert_int_equal(by_name(&x, "step")->duration_ns, 1500); /* mean: the full duration */
    teardown(&x);
}

/* rec(rec(rec)) of 300, 200, 100: the name's total is 300, not 600; self adds up to 300. */
static void recursion_counts_a_name_once(void **state) {
    (void)state;
    fixture x;
    setup(&x, 0, 0);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(REC, 2, 1100, 100, 1, 0), sc(REC, 1, 1050, 200, 2, 0), sc(REC, 0, 1000, 300, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 3, 0, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    const stacks_name *rec = by_name(&x, "rec");
    assert_int_equal(rec->calls, 3);
    assert_int_equal(rec->total_ns, 300);
    assert_int_equal(rec->self_ns, 300);
    assert_int_equal(rec->max_ns, 300);
    teardown(&x);
}

/* Each direct child costs its parent the calibrated cost, self never below zero, and
 * the parent's total shrinks with it (the flame graph stays consistent). */
static void compensation_takes_each_childs_cost_from_its_parent(void **state) {
    (void)state;
    fixture x;
    setup(&x, 0, 0);
    x.st.compensating = 1; /* as stacks_init does when the header has costs */
    x.st.scope_cost_ns = 20.4;
    vor_reader_thread_scopes ts;
    /* step 1000 ns with three leaves of 10 ns: raw self 970, compensated 970 - 61 = 909.
     * rec 100 ns with six leaves of 10: raw self 40 < 122: 0. */
    vor_reader_scope a[] = {sc(LEAF, 1, 1000, 10, 3, 0), sc(LEAF, 1, 1100, 10, 3, 0), sc(LEAF, 1, 1200, 10, 3, 0),
                            sc(STEP, 0, 1000, 1000, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 4, 0, 1000, 2000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    assert_int_equal(by_name(&x, "step")->self_ns, 909);
    assert_int_equal(by_name(&x, "step")->total_ns, 939);
    assert_int_equal(by_name(&x, "step")->duration_ns, 939); /* full duration less what was removed */
    vor_reader_scope b[6 + 1];
    for (int i = 0; i < 6; i++) b[i] = sc(LEAF, 1, 3000 + 10 * i, 10, 6, 0);
    b[6] = sc(REC, 0, 3000, 100, NONE, 0);
    f = frame1(&ts, 1, b, 7, 0, 3000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    assert_int_equal(by_name(&x, "rec")->self_ns, 0);
    assert_int_equal(by_name(&x, "rec")->total_ns, 60);
    teardown(&x);
}

/* Threads are the bottom frames, named at the end by their newest name; --thread keeps one. */
static void threads_are_named_at_the_end_and_can_be_selected(void **state) {
    (void)state;
    fixture x;
    setup(&x, 1, 0);
    vor_reader_scope a[] = {sc(LEAF, 0, 1000, 10, NONE, 0)};
    vor_reader_scope b[] = {sc(STEP, 0, 1000, 20, NONE, 0)};
    vor_reader_thread_scopes ts[3] = {{1, 1, a, 0}, {2, 1, b, 0}, {0xFFFFFFFFu, 1, b, 0}};
    vor_reader_frame f;
    memset(&f, 0, sizeof f);
    f.start_ns = 1000;
    f.duration_ns = 1000;
    f.has_flame = 1;
    f.n_threads = 3;
    f.threads = ts;
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    char *text = folded(&x, NULL, 0);
    assert_string_equal(text, "main;leaf 10\nthread 4294967295;step 20\nworker;step 20\n");
    free(text);
    text = folded(&x, "worker", 0);
    assert_string_equal(text, "worker;step 20\n");
    free(text);
    teardown(&x);
}

/* A flame chart keeps time order through the final tree. */
static void a_flame_chart_keeps_time_order(void **state) {
    (void)state;
    fixture x;
    setup(&x, 0, 1);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(STEP, 0, 1000, 10, NONE, 0), sc(LEAF, 0, 1100, 10, NONE, 0),
                            sc(STEP, 0, 1200, 30, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 3, 0, 1000, 1000);
    assert_int_equal(stacks_add_frame(&x.st, x.r, &f), STACKS_OK);
    char *text = folded(&x, NULL, 1);
    assert_string_equal(text, "step 10\nleaf 10\nstep 30\n");
    free(text);
    teardown(&x);
}

/* More scopes in a frame than the bound: refused before anything is allocated. */
static void a_frame_over_the_bound_is_refused(void **state) {
    (void)state;
    vor_reader *r = make_reader();
    stacks st;
    stacks_options so = {.tree = NULL, .thread_roots = 0, .raw = 0, .max_frame_scopes = 2, .weight = 1.0};
    assert_int_equal(stacks_init(&st, &so, r), 0);
    vor_reader_thread_scopes ts;
    vor_reader_scope a[] = {sc(LEAF, 1, 1000, 10, 2, 0), sc(LEAF, 1, 1010, 10, 2, 0), sc(STEP, 0, 1000, 30, NONE, 0)};
    vor_reader_frame f = frame1(&ts, 1, a, 3, 0, 1000, 1000);
    assert_int_equal(stacks_add_frame(&st, r, &f), STACKS_TOO_MANY);
    assert_int_equal(st.frame_scopes, 3);
    assert_int_equal(st.stats.flame_frames, 0);
    assert_null(st.scratch.contrib);
    stacks_free(&st);
    vor_reader_close(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scopes_open_across_the_mark_keep_their_true_stack),
        cmocka_unit_test(an_unrecorded_parent_is_a_placeholder_not_a_guess),
        cmocka_unit_test(impossible_parents_are_not_followed),
        cmocka_unit_test(self_time_is_never_negative),
        cmocka_unit_test(time_is_clipped_to_the_frame),
        cmocka_unit_test(recursion_counts_a_name_once),
        cmocka_unit_test(compensation_takes_each_childs_cost_from_its_parent),
        cmocka_unit_test(threads_are_named_at_the_end_and_can_be_selected),
        cmocka_unit_test(a_flame_chart_keeps_time_order),
        cmocka_unit_test(a_frame_over_the_bound_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
