/* devtools_entries_test.c: the DevTools sink's entry budget and display times
 * (wasm/src/devtools_entries.c), natively and exactly.
 *
 * Hand-made frames check each rule (zero-length scopes get one clock step and stay nested
 * and inside their frame, a crowded frame narrows its entries instead of overflowing, the
 * budget keeps the longest scopes and their ancestors, ended or still open, the minimum
 * duration, open scopes across frames). A simulation then runs random programs (several
 * threads, nesting up to 6 deep, scopes open across many frames, times on a 5 us or
 * 100 us grid, so most scopes measure zero) through the frame assembly's parent rule
 * (vor_scopes_link_parents) and checks every frame's entries: every scope shown exactly
 * once when it ends, each inside its true parent, siblings in order, never narrower than
 * DEVTOOLS_MIN_WIDTH_NS, and with a budget the longest ones plus their ancestors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../wasm/src/devtools_entries.h"
#include "scope_order.h"

#define MS 1000000LL
#define US 1000LL

static vor_scope_record scope(uint32_t site, uint32_t depth, int64_t start, int64_t duration) {
    vor_scope_record s;
    memset(&s, 0, sizeof s);
    s.site_id = site;
    s.depth = depth;
    s.start_ns = start;
    s.duration_ns = duration;
    return s;
}

/* Sets the parents of one thread's scopes (n ended, o open) by the frame assembly's rule. */
static void link(vor_scope_record *s, uint32_t n, uint32_t o) {
    uint32_t last_at[VOR_MAX_DEPTH];
    vor_scopes_link_parents(s, n, o, last_at, VOR_MAX_DEPTH);
    for (uint32_t k = 0; k < o; k++) s[n + k].flags |= VOR_SCOPE_OPEN;
}

static devtools_frame_in frame_in(const vor_thread_record *threads, uint32_t n_threads, int64_t start, int64_t end,
                                  double step) {
    devtools_frame_in in;
    memset(&in, 0, sizeof in);
    in.threads = threads;
    in.n_threads = n_threads;
    in.start_ns = start;
    in.end_ns = end;
    in.step_ns = step;
    return in;
}

static const devtools_entry *find(const devtools_frame_out *out, uint32_t site) {
    const devtools_entry *found = NULL;
    for (uint32_t i = 0; i < out->n_entries; i++)
        if (out->entries[i].site_id == site) {
            assert_null(found); /* one entry per site in these frames */
            found = &out->entries[i];
        }
    assert_non_null(found);
    return found;
}

static void assert_inside(const devtools_entry *child, const devtools_entry *parent) {
    assert_true(parent->start_ns <= child->start_ns);
    assert_true(child->end_ns <= parent->end_ns);
}

/* update [1 ms, 1 ms] holding a [1 ms, 1 ms] and b [1 ms, 1 ms]: all zero on a 100 us clock. */
static void test_zero_length_scopes_get_one_step_and_nest(void **state) {
    (void)state;
    devtools_entries *e = calloc(1, sizeof *e);
    vor_scope_record s[3] = {scope(2, 1, MS, 0), scope(3, 1, MS, 0), scope(1, 0, MS, 0)};
    link(s, 3, 0);
    vor_thread_record t = {7, 3, s, 0};
    devtools_frame_in in = frame_in(&t, 1, 0, 16 * MS, 100 * US);
    devtools_frame_out out;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, 3);
    const devtools_entry *update = find(&out, 1), *a = find(&out, 2), *b = find(&out, 3);
    assert_true(a->end_ns - a->start_ns >= 100 * US);
    assert_true(b->end_ns - b->start_ns >= 100 * US);
    assert_inside(a, update);
    assert_inside(b, update);
    assert_true(a->start_ns >= update->start_ns + DEVTOOLS_NEST_GAP_NS); /* a child starts after its parent */
    assert_true(a->end_ns <= b->start_ns);
    assert_true(update->start_ns >= MS);
    assert_int_equal(out.entries[2].site_id, 1); /* end order: children first */
    assert_true(out.min_width_ns == 100 * US);
    devtools_entries_free(e);
    free(e);
}

/* A zero-length scope at the frame's last tick is drawn in the step before it. */
static void test_zero_length_at_the_frame_end_stays_inside(void **state) {
    (void)state;
    devtools_entries *e = calloc(1, sizeof *e);
    vor_scope_record s[3] = {scope(2, 1, 10 * MS, 6 * MS), scope(3, 1, 16 * MS, 0), scope(1, 0, 10 * MS, 6 * MS)};
    link(s, 3, 0);
    vor_thread_record t = {0, 3, s, 0};
    devtools_frame_in in = frame_in(&t, 1, 0, 16 * MS, 100 * US);
    devtools_frame_out out;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    const devtools_entry *update = find(&out, 1), *work = find(&out, 2), *tiny = find(&out, 3);
    assert_true(tiny->end_ns <= 16 * MS);
    assert_true(tiny->end_ns - tiny->start_ns >= 100 * US);
    assert_true(work->end_ns <= tiny->start_ns);
    assert_inside(tiny, update);
    assert_inside(work, update);
    assert_true(update->end_ns <= 16 * MS);
    devtools_entries_free(e);
    free(e);
}

/* 300 zero-length siblings in a 1 ms frame on a 100 us clock: narrower entries, all inside. */
static void test_a_crowded_frame_narrows_its_entries(void **state) {
    (void)state;
    devtools_entries *e = calloc(1, sizeof *e);
    enum { N = 300 };
    vor_scope_record s[N + 1];
    for (uint32_t i = 0; i < N; i++) s[i] = scope(10 + i, 1, 100 * US, 0);
    s[N] = scope(1, 0, 100 * US, 0);
    link(s, N + 1, 0);
    vor_thread_record t = {0, N + 1, s, 0};
    devtools_frame_in in = frame_in(&t, 1, 0, MS, 100 * US);
    devtools_frame_out out;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, N + 1);
    assert_true(out.min_width_ns < 100 * US);
    assert_true(out.min_width_ns >= DEVTOOLS_MIN_WIDTH_NS);
    const devtools_entry *parent = find(&out, 1);
    assert_true(parent->end_ns <= MS);
    for (uint32_t i = 0; i < N; i++) {
        const devtools_entry *c = find(&out, 10 + i);
        assert_true(c->end_ns - c->start_ns >= out.min_width_ns);
        assert_inside(c, parent);
        if (i > 0) assert_true(find(&out, 10 + i - 1)->end_ns <= c->start_ns);
    }
    devtools_entries_free(e);
    free(e);
}

/* root 10 ms holding a 4 ms, b 3.5 ms (holding leaf 3 ms) and c 1 ms: budget 2 shows root
 * and a. Then with leaf, b and root all 3.5 ms and budget 1: the tie goes to the first in
 * end order (leaf), which brings its parent b and the root. */
static void test_budget_keeps_the_longest_and_their_ancestors(void **state) {
    (void)state;
    devtools_entries *e = calloc(1, sizeof *e);
    /* end order: a, leaf, b, c, root */
    vor_scope_record s[5] = {scope(2, 1, 0, 4 * MS), scope(5, 2, 4 * MS, 3 * MS), scope(3, 1, 4 * MS, 3500 * US),
                             scope(4, 1, 8 * MS, 1 * MS), scope(1, 0, 0, 10 * MS)};
    link(s, 5, 0);
    vor_thread_record t = {0, 5, s, 0};
    devtools_frame_in in = frame_in(&t, 1, 0, 10 * MS, 5 * US);
    in.budget = 2;
    devtools_frame_out out;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, 2);
    find(&out, 1);
    find(&out, 2);
    assert_int_equal(out.left_out_budget, 3);
    /* budget 1 with a long leaf: the leaf comes with its parent b and the root */
    s[1].duration_ns = 3500 * US; /* leaf as long as b */
    s[4].duration_ns = 3500 * US; /* root too (ties: thread order, then end order: leaf first) */
    s[0].duration_ns = 1 * MS;
    in.budget = 1;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, 3);
    find(&out, 5);
    find(&out, 3);
    find(&out, 1);
    assert_int_equal(out.left_out_budget, 2);
    devtools_entries_free(e);
    free(e);
}

/* The minimum duration leaves short scopes out, and counts them apart from the budget. */
static void test_minimum_duration(void **state) {
    (void)state;
    devtools_entries *e = calloc(1, sizeof *e);
    vor_scope_record s[3] = {scope(2, 1, 0, 10 * US), scope(3, 1, 1 * MS, 2 * MS), scope(1, 0, 0, 5 * MS)};
    link(s, 3, 0);
    vor_thread_record t = {0, 3, s, 0};
    devtools_frame_in in = frame_in(&t, 1, 0, 5 * MS, 5 * US);
    in.min_duration_ns = 100 * US;
    devtools_frame_out out;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, 2);
    assert_int_equal(out.left_out_short, 1);
    assert_int_equal(out.left_out_budget, 0);
    devtools_entries_free(e);
    free(e);
}

/* A parent open across two frames: its children of frame 0 are shown in frame 0, it is
 * shown in frame 1 (when it ends) around them, even when the budget would not pick it. */
static void test_open_parent_across_frames(void **state) {
    (void)state;
    devtools_entries *e = calloc(1, sizeof *e);
    /* frame 0 [0, 10 ms]: loop opens at 2 ms; child [3, 3] (zero) ends; loop still open */
    vor_scope_record f0[2] = {scope(2, 1, 3 * MS, 0), scope(1, 0, 2 * MS, 8 * MS)};
    link(f0, 1, 1);
    vor_thread_record t0 = {4, 1, f0, 1};
    devtools_frame_in in = frame_in(&t0, 1, 0, 10 * MS, 100 * US);
    devtools_frame_out out;
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, 1);
    devtools_entry child = *find(&out, 2);
    /* frame 1 [10, 20 ms]: loop ends at 12 ms; another thread has a 19 ms scope and a 1 ms one */
    vor_scope_record f1[1] = {scope(1, 0, 2 * MS, 10 * MS)};
    link(f1, 1, 0);
    vor_scope_record g1[2] = {scope(8, 0, 0, 19 * MS), scope(9, 0, 19 * MS, 1 * MS)};
    link(g1, 2, 0);
    vor_thread_record t1[2] = {{5, 2, g1, 0}, {4, 1, f1, 0}};
    in = frame_in(t1, 2, 10 * MS, 20 * MS, 100 * US);
    in.budget = 1; /* picks the 19 ms scope; loop comes because its child was shown */
    assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
    assert_int_equal(out.n_entries, 2);
    const devtools_entry *loop = find(&out, 1);
    find(&out, 8);
    assert_inside(&child, loop);
    assert_true(loop->start_ns <= 2 * MS + 1);
    assert_true(loop->end_ns >= 12 * MS);
    assert_int_equal(out.left_out_budget, 1);
    devtools_entries_free(e);
    free(e);
}

/* ---- A simulated program --------------------------------------------------------------- */

#define SIM_THREADS 3
#define SIM_DEPTH 6
#define SIM_FRAMES 60
#define SIM_MAX_SCOPES 4000

typedef struct sim_scope {
    int64_t start, end; /* end < 0: open */
    int parent;         /* serial of the parent, -1 for none */
    int thread;
    uint32_t depth;
    int shown;          /* frames it was shown in */
    double begin_d, end_d;
} sim_scope;

typedef struct sim_thread {
    int stack[SIM_DEPTH];
    uint32_t depth;
    vor_scope_record rec[SIM_MAX_SCOPES];
    uint32_t n_rec;
} sim_thread;

static sim_scope sims[SIM_MAX_SCOPES * SIM_THREADS];
static int n_sims;

static uint64_t rng = 88172645463325252ull;
static uint32_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Runs random programs; `budget` 0 shows everything. */
static void simulate(double step, uint32_t budget) {
    devtools_entries *e = calloc(1, sizeof *e);
    sim_thread *threads = calloc(SIM_THREADS, sizeof *threads);
    n_sims = 0;
    int64_t now = 0, grid = (int64_t)step;
    for (int frame = 0; frame < SIM_FRAMES; frame++) {
        int64_t frame_start = now;
        for (int t = 0; t < SIM_THREADS; t++) threads[t].n_rec = 0;
        int steps = 10 + (int)(next_random() % 60);
        for (int k = 0; k < steps; k++) {
            int which = (int)(next_random() % SIM_THREADS);
            sim_thread *th = &threads[which];
            if (next_random() % 3 == 0) now += grid * (int64_t)(next_random() % 3); /* mostly no time passes */
            int begin = th->depth == 0 || (th->depth < SIM_DEPTH && next_random() % 2 == 0);
            if (begin && n_sims < SIM_MAX_SCOPES * SIM_THREADS - 1) {
                sim_scope *s = &sims[n_sims];
                memset(s, 0, sizeof *s);
                s->start = now;
                s->end = -1;
                s->depth = th->depth;
                s->thread = which;
                s->parent = th->depth ? th->stack[th->depth - 1] : -1;
                th->stack[th->depth++] = n_sims++;
            } else if (th->depth > 0) {
                int serial = th->stack[--th->depth];
                sims[serial].end = now;
                assert_true(th->n_rec < SIM_MAX_SCOPES);
                th->rec[th->n_rec++] = scope((uint32_t)serial + 1, sims[serial].depth, sims[serial].start,
                                             now - sims[serial].start);
            }
        }
        now += grid * (int64_t)(next_random() % 3);
        vor_thread_record tr[SIM_THREADS];
        for (int t = 0; t < SIM_THREADS; t++) {
            sim_thread *th = &threads[t];
            uint32_t n = th->n_rec;
            for (uint32_t d = 0; d < th->depth; d++) {
                sim_scope *s = &sims[th->stack[d]];
                th->rec[n + d] = scope((uint32_t)th->stack[d] + 1, d, s->start, now - s->start);
            }
            link(th->rec, n, th->depth);
            tr[t].thread_id = (uint32_t)t * 1000;
            tr[t].n_scopes = n;
            tr[t].scopes = th->rec;
            tr[t].n_open = th->depth;
        }
        devtools_frame_in in = frame_in(tr, SIM_THREADS, frame_start, now, step);
        in.budget = budget;
        devtools_frame_out out;
        assert_int_equal(devtools_entries_frame(e, &in, &out), 0);
        uint64_t ended = 0;
        for (int t = 0; t < SIM_THREADS; t++) ended += tr[t].n_scopes;
        assert_int_equal(out.n_entries + out.left_out_budget + out.left_out_short, ended);
        if (budget == 0) assert_int_equal(out.n_entries, ended);
        for (uint32_t i = 0; i < out.n_entries; i++) {
            const devtools_entry *en = &out.entries[i];
            sim_scope *s = &sims[en->site_id - 1];
            assert_true(s->end >= frame_start && s->end <= now); /* shown in the frame it ended in */
            assert_int_equal(s->shown, 0);
            s->shown = frame + 1;
            s->begin_d = en->start_ns;
            s->end_d = en->end_ns;
            assert_true(en->end_ns - en->start_ns >= DEVTOOLS_MIN_WIDTH_NS);
            assert_true(en->end_ns - en->start_ns >= out.min_width_ns - 1e-6);
            if (out.min_width_ns >= step) assert_true(en->end_ns <= (double)now);
        }
        if (budget > 0) {
            /* the shown scopes are the longest ones, plus ancestors */
            int64_t shortest_picked = INT64_MAX, longest_left = -1;
            for (int t = 0; t < SIM_THREADS; t++)
                for (uint32_t i = 0; i < tr[t].n_scopes; i++) {
                    sim_scope *s = &sims[tr[t].scopes[i].site_id - 1];
                    int64_t d = s->end - s->start;
                    if (s->shown != frame + 1 && d > longest_left) longest_left = d;
                }
            uint32_t counted = 0;
            for (uint32_t i = 0; i < out.n_entries; i++) {
                sim_scope *s = &sims[out.entries[i].site_id - 1];
                if (s->end - s->start >= longest_left) counted++;
                if (s->end - s->start < shortest_picked) shortest_picked = s->end - s->start;
            }
            if (ended > budget) assert_true(counted >= budget); /* at least `budget` as long as any left out */
        }
        frame_start = now;
    }
    /* every shown scope's shown parent contains it; shown siblings are in order */
    for (int i = 0; i < n_sims; i++) {
        sim_scope *s = &sims[i];
        if (!s->shown) continue;
        if (s->parent >= 0) {
            sim_scope *p = &sims[s->parent];
            assert_true(p->shown || p->end < 0); /* an ancestor is shown, or still open */
            if (p->shown) {
                assert_true(p->begin_d + DEVTOOLS_NEST_GAP_NS <= s->begin_d + 1e-6);
                assert_true(s->end_d <= p->end_d);
            }
        }
        for (int j = i + 1; j < n_sims; j++) {
            sim_scope *o = &sims[j];
            if (!o->shown || o->parent != s->parent || o->thread != s->thread) continue;
            assert_true(s->end_d <= o->begin_d || o->end_d <= s->begin_d);
            if (s->start < o->start || (s->start == o->start && s->end <= o->start)) assert_true(s->end_d <= o->begin_d);
        }
    }
    devtools_entries_free(e);
    free(e);
    free(threads);
}

static void test_simulated_programs_every_scope_nested(void **state) {
    (void)state;
    simulate(100 * US, 0);
    simulate(5 * US, 0);
}

static void test_simulated_programs_with_a_budget(void **state) {
    (void)state;
    simulate(100 * US, 8);
    simulate(5 * US, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_length_scopes_get_one_step_and_nest),
        cmocka_unit_test(test_zero_length_at_the_frame_end_stays_inside),
        cmocka_unit_test(test_a_crowded_frame_narrows_its_entries),
        cmocka_unit_test(test_budget_keeps_the_longest_and_their_ancestors),
        cmocka_unit_test(test_minimum_duration),
        cmocka_unit_test(test_open_parent_across_frames),
        cmocka_unit_test(test_simulated_programs_every_scope_nested),
        cmocka_unit_test(test_simulated_programs_with_a_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
