/* test_parents.c: every scope of every live frame record has its true parent in the same
 * record (ended or open): never VOR_PARENT_UNKNOWN, across pauses (vor_disable /
 * vor_enable), drops (full buffers, too deep, full frames), scopes open across thousands
 * of frames, several threads, threads that exit with scopes open, and a session restart.
 *
 * A checking consumer looks at each record as it is made: per thread, open scopes are
 * outermost first with depth = position and flag VOR_SCOPE_OPEN; each parent is one level
 * up and contains its child in time; ended scopes end inside the frame; open ones run to
 * its end. Threads record random nests (real clock) while the main thread marks frames. */
#include "support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
    uint64_t frames, scopes, open, unknown, bad;
    char first_problem[256];
    /* Per thread (id % 64): the starts of its open scopes in the last frame that listed it. */
    uint32_t last_thread[64];
    uint64_t last_frame[64];
    int64_t last_end; /* the last frame's end: a pause leaves a gap */
    int64_t last_open_start[64][8];
    uint32_t last_open_n[64];
} chk;

static void problem(const char *fmt, uint64_t a, uint64_t b) {
    if (chk.bad++ == 0) snprintf(chk.first_problem, sizeof chk.first_problem, fmt, (unsigned long long)a, (unsigned long long)b);
}

static int check_frame(void *state, const vor_frame_record *r) {
    (void)state;
    chk.frames++;
    int64_t f0 = r->start_ns, f1 = r->start_ns + r->duration_ns;
    uint64_t ended = 0;
    for (uint32_t t = 0; t < r->n_threads; t++) {
        const vor_thread_record *tr = &r->threads[t];
        uint32_t n = tr->n_scopes + tr->n_open;
        ended += tr->n_scopes;
        chk.open += tr->n_open;
        for (uint32_t i = 0; i < n; i++) {
            const vor_scope_record *s = &tr->scopes[i];
            int open = i >= tr->n_scopes;
            int64_t end = s->start_ns + s->duration_ns;
            if (open) {
                if (s->flags != VOR_SCOPE_OPEN || s->depth != i - tr->n_scopes) problem("open scope %llu at depth %llu", i, s->depth);
                if (end != f1) problem("open scope ends at %llu, not the frame's end %llu", (uint64_t)end, (uint64_t)f1);
            } else {
                if (s->flags & VOR_SCOPE_OPEN) problem("ended scope %llu flagged open (%llu)", i, s->flags);
                if (end > f1) problem("ended scope ends at %llu after the frame's end %llu", (uint64_t)end, (uint64_t)f1);
                /* Before the frame's start only where its next sibling began or its parent ended
                 * (an end published after the last frame was assembled: frame_threads.c). */
                if (end < f0) {
                    int64_t sibling = INT64_MAX, parent_end = INT64_MAX;
                    uint32_t j = i + 1;
                    for (; j < tr->n_scopes; j++) {
                        if (tr->scopes[j].depth > s->depth) continue;
                        if (tr->scopes[j].depth == s->depth) sibling = tr->scopes[j].start_ns;
                        break;
                    }
                    if (j == tr->n_scopes && s->depth < tr->n_open) sibling = tr->scopes[tr->n_scopes + s->depth].start_ns;
                    if (s->parent < n) parent_end = tr->scopes[s->parent].start_ns + tr->scopes[s->parent].duration_ns;
                    if (sibling != end && parent_end != end)
                        problem("ended scope ends at %llu before the frame starting at %llu", (uint64_t)end, (uint64_t)f0);
                }
            }
            if (s->parent == VOR_PARENT_UNKNOWN) {
                chk.unknown++;
                continue;
            }
            if (s->depth == 0) {
                if (s->parent != VOR_PARENT_NONE) problem("depth 0 with parent %llu (%llu)", s->parent, 0);
                continue;
            }
            if (s->parent >= n) {
                problem("parent %llu out of %llu", s->parent, n);
                continue;
            }
            const vor_scope_record *p = &tr->scopes[s->parent];
            if (p->depth + 1 != s->depth) problem("parent at depth %llu of a scope at depth %llu", p->depth, s->depth);
            if (p->start_ns > s->start_ns) problem("parent starts at %llu after its child at %llu", (uint64_t)p->start_ns, (uint64_t)s->start_ns);
            if (p->start_ns + p->duration_ns < end) problem("parent ends at %llu before its child at %llu", (uint64_t)(p->start_ns + p->duration_ns), (uint64_t)end);
        }
        /* A scope open at this frame's end that began before the frame was listed open at
         * the last frame's end, at the same depth and start; or that frame listed instead
         * one that ended just before it (an end published late: it ends in this frame). */
        uint32_t slot = tr->thread_id % 64;
        int thread_dropped = 0; /* a scope dropped at its end may have been the one listed */
        for (uint32_t d = 0; d < r->n_drops; d++) thread_dropped |= r->drops[d].thread_id == tr->thread_id;
        if (chk.last_thread[slot] == tr->thread_id + 1 && chk.last_frame[slot] + 1 == r->index && chk.last_end == f0 &&
            !thread_dropped) {
            for (uint32_t k = 0; k < tr->n_open && k < 8 && k < chk.last_open_n[slot]; k++) {
                const vor_scope_record *s = &tr->scopes[tr->n_scopes + k];
                if (s->start_ns >= f0 || s->start_ns == chk.last_open_start[slot][k]) continue;
                int replaced = 0;
                for (uint32_t j = 0; j < tr->n_scopes; j++)
                    if (tr->scopes[j].depth == k && tr->scopes[j].start_ns == chk.last_open_start[slot][k] &&
                        tr->scopes[j].start_ns + tr->scopes[j].duration_ns <= s->start_ns)
                        replaced = 1;
                if (!replaced)
                    problem("an open scope's start moved from %llu to %llu", (uint64_t)chk.last_open_start[slot][k],
                            (uint64_t)s->start_ns);
            }
        }
        chk.last_thread[slot] = tr->thread_id + 1;
        chk.last_frame[slot] = r->index;
        chk.last_open_n[slot] = tr->n_open;
        for (uint32_t k = 0; k < tr->n_open && k < 8; k++) chk.last_open_start[slot][k] = tr->scopes[tr->n_scopes + k].start_ns;
    }
    chk.last_end = f1;
    if (ended != r->n_scopes) problem("n_scopes %llu, threads hold %llu", r->n_scopes, ended);
    chk.scopes += ended;
    return 0;
}

static void attach_checker(void) {
    vor_consumer c = {"parent checker", NULL, check_frame, NULL, NULL};
    assert_int_equal(vor_frame_lock_acquire(), 1);
    assert_int_equal(vor_consumers_add(&c), 1);
    vor_frame_lock_release();
}

static void expect_no_problem(void) {
    if (chk.bad) fail_msg("%llu problems; first: %s", (unsigned long long)chk.bad, chk.first_problem);
    assert_int_equal(chk.unknown, 0);
}

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

/* ---- Random nests on worker threads ---- */

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static vor_site sites[8] = {
    {"n0", NULL, NULL, 0, 0}, {"n1", NULL, NULL, 0, 0}, {"n2", NULL, NULL, 0, 0}, {"n3", NULL, NULL, 0, 0},
    {"n4", NULL, NULL, 0, 0}, {"n5", NULL, NULL, 0, 0}, {"n6", NULL, NULL, 0, 0}, {"n7", NULL, NULL, 0, 0},
};

/* Opens `depth` levels (some of them left open across many frames by looping inside). */
static void nest(uint64_t *rng, int depth, int max_depth) {
    if (depth >= max_depth) return;
    if (!vor_scope_begin(&sites[depth % 8])) return;
    int children = (int)(rng_next(rng) % 4);
    for (int c = 0; c < children; c++) nest(rng, depth + 1, max_depth);
    vor_scope_end();
}

static int stop_workers, workers_started;

/* Waits until `n` workers have begun their long scope (before any pause). */
static void wait_for_workers(int n) {
    while (__atomic_load_n(&workers_started, __ATOMIC_ACQUIRE) < n) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

typedef struct worker_arg {
    uint64_t seed;
    int max_depth;
    int leave_open; /* exit with this many scopes open */
    int iterations; /* 0: until stopped */
    int left_open;  /* out: scopes it exited with, as recorded */
} worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    uint64_t rng = a->seed;
    static vor_site long_open = {"open for a long time", NULL, NULL, 0, 0};
    int began = vor_scope_begin(&long_open); /* open for the whole run */
    __atomic_fetch_add(&workers_started, 1, __ATOMIC_RELEASE);
    for (int i = 0; a->iterations == 0 || i < a->iterations; i++) {
        if (a->iterations == 0 && __atomic_load_n(&stop_workers, __ATOMIC_ACQUIRE)) break;
        nest(&rng, 1, a->max_depth);
    }
    a->left_open = began;
    for (int i = 0; i < a->leave_open; i++) a->left_open += vor_scope_begin(&sites[i % 8]);
    if (began && !a->leave_open) {
        vor_scope_end();
        a->left_open = 0;
    }
    return NULL;
}

static void start_session(vor_desc d) {
    setup_with_capture(d);
    memset(&chk, 0, sizeof chk);
    vor_enable();
    attach_checker();
}

/* Several threads, frames marked all the while, a pause in the middle, threads that exit
 * with scopes open, a main-thread scope open across everything. */
static void parents_are_known_across_pauses_threads_and_exits(void **state) {
    (void)state;
    vor_desc d = {0};
    start_session(d);
    static vor_site main_open = {"main, open across everything", NULL, NULL, 0, 0};
    assert_int_equal(vor_scope_begin(&main_open), 1);
    stop_workers = 0;
    pthread_t th[4];
    worker_arg args[4] = {{11, 7, 0, 0, 0}, {22, 5, 0, 0, 0}, {33, 9, 3, 3000, 0}, {44, 6, 2, 5000, 0}};
    workers_started = 0;
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    wait_for_workers(4);
    uint64_t rng = 99;
    for (int f = 0; f < 4000; f++) {
        if (f % 3 == 0) nest(&rng, 1, 4);
        if (f == 1500) {
            vor_disable();
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
            vor_enable();
        }
        vor_frame_mark();
    }
    __atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    vor_frame_mark();
    vor_scope_end();
    vor_frame_mark();
    assert_true(chk.frames > 4000);
    assert_true(chk.scopes > 1000);
    assert_true(chk.open > 4000);
    vor_counters c;
    vor_get_counters(&c);
    /* What the workers left open (a scope begun during the pause is not recorded). */
    assert_int_equal(c.open_at_exit, args[2].left_open + args[3].left_open);
    assert_true(c.open_at_exit > 0);
    expect_no_problem();
}

/* Small buffers, a shallow frame cap and nests deeper than VOR_MAX_DEPTH: scopes are
 * dropped, and no kept one loses its parent. */
static void *deep_worker(void *p) {
    (void)p;
    static vor_site deep = {"deep", NULL, NULL, 0, 0};
    for (int round = 0; round < 200; round++) {
        int levels = round % 2 ? VOR_MAX_DEPTH + 10 : 40;
        for (int i = 0; i < levels; i++) vor_scope_begin(&deep);
        for (int i = 0; i < levels; i++) vor_scope_end();
    }
    return NULL;
}

static void parents_are_known_when_scopes_are_dropped(void **state) {
    (void)state;
    vor_desc d = {0};
    d.thread_buffer_scopes = 1024;
    d.max_frame_scopes = 300;
    start_session(d);
    stop_workers = 0;
    pthread_t th[3];
    worker_arg args[2] = {{5, 12, 0, 0, 0}, {6, 8, 0, 0, 0}};
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    assert_int_equal(pthread_create(&th[2], NULL, deep_worker, NULL), 0);
    for (int f = 0; f < 3000; f++) {
        if (f % 500 == 0) {
            struct timespec ts = {0, 2000000}; /* let the buffers overflow */
            nanosleep(&ts, NULL);
        }
        vor_frame_mark();
    }
    __atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    vor_frame_mark();
    vor_counters c;
    vor_get_counters(&c);
    assert_true(c.scopes_dropped > 0);
    expect_no_problem();
}

/* A thread with a scope open across vor_shutdown() and a new session: its children in the
 * new session find it (with its true start, before the new session's time 0). */
static int phase;
static void *across_sessions_worker(void *p) {
    (void)p;
    static vor_site outer = {"open across sessions", NULL, NULL, 0, 0};
    static vor_site inner = {"inner", NULL, NULL, 0, 0};
    int began = vor_scope_begin(&outer);
    __atomic_store_n(&phase, began ? 1 : -1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) < 2 && began) {
        if (vor_scope_begin(&inner)) vor_scope_end();
    }
    if (began) vor_scope_end();
    return NULL;
}

static void parents_are_known_across_a_session_restart(void **state) {
    (void)state;
    vor_desc d = {0};
    start_session(d);
    static vor_site main_outer = {"main across sessions", NULL, NULL, 0, 0};
    assert_int_equal(vor_scope_begin(&main_outer), 1);
    phase = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, across_sessions_worker, NULL), 0);
    while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) == 0) { /* its outer scope begins in this session */
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(phase, 1);
    for (int f = 0; f < 200; f++) vor_frame_mark();
    vor_shutdown();
    recording_free();
    setup_with_capture(d);
    memset(&chk, 0, sizeof chk);
    vor_enable();
    attach_checker();
    recording_attach(64);
    for (int f = 0; f < 200; f++) {
        {
            VOR_SCOPE("child in the new session");
        }
        vor_frame_mark();
    }
    __atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    vor_scope_end();
    vor_frame_mark();
    expect_no_problem();
    /* The main thread's old scope is listed open with a start before time 0. */
    int seen = 0;
    for (uint32_t f = 0; f < rec.n_frames && !seen; f++)
        for (uint32_t i = 0; i < rec.frames[f].kept_open; i++)
            if (rec.frames[f].open[i].start_ns < 0) seen = 1;
    assert_true(seen);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(parents_are_known_across_pauses_threads_and_exits, teardown),
        cmocka_unit_test_teardown(parents_are_known_when_scopes_are_dropped, teardown),
        cmocka_unit_test_teardown(parents_are_known_across_a_session_restart, teardown),
    };
    return cmocka_run_group_tests_name("parents", tests, NULL, NULL);
}
