/* test_drops.c: what is dropped, and how the frame record says so. A full thread buffer
 * keeps outer scopes before inner ones; a full frame is shared fairly between threads
 * (never whole threads lost), by depth within each; every cause is reported per thread
 * (the frame record's drops); a site the table cannot hold drops its scope and the scopes
 * inside it, never leaving an orphan. */
#include "support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

/* ---- A consumer that keeps per-thread tallies of one frame record ---- */

#define MAX_T 16
static struct {
    uint32_t n_threads;
    uint32_t thread_id[MAX_T];
    uint64_t by_depth[MAX_T][8];
    uint64_t ended[MAX_T], open[MAX_T], unknown_parents;
    uint32_t n_drops;
    vor_reader_drop drops[64];
    uint64_t dropped;
} tally;

static int tally_frame(void *state, const vor_frame_record *r) {
    (void)state;
    memset(&tally, 0, sizeof tally);
    tally.n_threads = r->n_threads < MAX_T ? r->n_threads : MAX_T;
    for (uint32_t t = 0; t < tally.n_threads; t++) {
        const vor_thread_record *tr = &r->threads[t];
        tally.thread_id[t] = tr->thread_id;
        tally.ended[t] = tr->n_scopes;
        tally.open[t] = tr->n_open;
        for (uint32_t i = 0; i < tr->n_scopes + tr->n_open; i++) {
            const vor_scope_record *s = &tr->scopes[i];
            if (i < tr->n_scopes && s->depth < 8) tally.by_depth[t][s->depth]++;
            if (s->parent == VOR_PARENT_UNKNOWN) tally.unknown_parents++;
        }
    }
    tally.n_drops = r->n_drops < 64 ? r->n_drops : 64;
    memcpy(tally.drops, r->drops, tally.n_drops * sizeof r->drops[0]);
    tally.dropped = r->dropped_scopes;
    return 0;
}

static void start_session(vor_desc d) {
    setup_with_capture(d);
    vor_enable();
    vor_consumer c = {"tally", NULL, tally_frame, NULL, NULL};
    assert_int_equal(vor_frame_lock_acquire(), 1);
    assert_int_equal(vor_consumers_add(&c), 1);
    vor_frame_lock_release();
}

static uint64_t drop_count(uint32_t cause, uint32_t thread_id) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < tally.n_drops; i++)
        if (tally.drops[i].cause == cause && tally.drops[i].thread_id == thread_id) n += tally.drops[i].count;
    return n;
}

static int slot_of(uint32_t thread_id) {
    for (uint32_t t = 0; t < tally.n_threads; t++)
        if (tally.thread_id[t] == thread_id) return (int)t;
    return -1;
}

/* ---- A full buffer keeps outer scopes first ---- */

static void *nests_of_three(void *arg) {
    int n = *(int *)arg;
    static vor_site a = VOR_SITE_INIT("level 0"), b = VOR_SITE_INIT("level 1"), c = VOR_SITE_INIT("level 2");
    for (int i = 0; i < n; i++) {
        vor_scope_begin(&a);
        vor_scope_begin(&b);
        vor_scope_begin(&c);
        vor_scope_end();
        vor_scope_end();
        vor_scope_end();
    }
    return (void *)(uintptr_t)vor_tls_thread->thread_id;
}

static void full_buffer_keeps_outer_scopes_first(void **state) {
    (void)state;
    vor_desc d = {0};
    d.thread_buffer_scopes = 1024;
    start_session(d);
    pthread_t th;
    int n = 1000; /* 3,000 scopes for a buffer of 1,024 */
    void *id;
    assert_int_equal(pthread_create(&th, NULL, nests_of_three, &n), 0);
    assert_int_equal(pthread_join(th, &id), 0);
    vor_frame_mark();
    int t = slot_of((uint32_t)(uintptr_t)id);
    assert_true(t >= 0);
    assert_int_equal(tally.ended[t], 1024);
    assert_int_equal(tally.unknown_parents, 0);
    /* 341 nests fill 1,023 places; of the next nests only the outer scope fits (it needs
     * room for itself; level 1 for itself and level 0; level 2 for three). */
    assert_int_equal(tally.by_depth[t][0], 342);
    assert_int_equal(tally.by_depth[t][1], 341);
    assert_int_equal(tally.by_depth[t][2], 341);
    assert_int_equal(drop_count(VOR_DROP_THREAD_BUFFER_FULL, (uint32_t)(uintptr_t)id), 3000 - 1024);
    assert_int_equal(tally.dropped, 3000 - 1024);
}

/* ---- A full frame is shared fairly ---- */

static void *pairs(void *arg) {
    int n = *(int *)arg;
    static vor_site o = VOR_SITE_INIT("pair outer"), i_ = VOR_SITE_INIT("pair inner");
    for (int i = 0; i < n; i++) {
        vor_scope_begin(&o);
        vor_scope_begin(&i_);
        vor_scope_end();
        vor_scope_end();
    }
    return (void *)(uintptr_t)vor_tls_thread->thread_id;
}

static void full_frame_is_shared_fairly_by_depth(void **state) {
    (void)state;
    vor_desc d = {0};
    d.max_frame_scopes = 8000;
    start_session(d);
    /* 8 threads ending 2,000 scopes each and 2 ending 200: 16,400 for a cap of 8,000. */
    pthread_t th[10];
    int big = 1000, small = 100;
    uint32_t ids[10];
    for (int i = 0; i < 10; i++) assert_int_equal(pthread_create(&th[i], NULL, pairs, i < 8 ? &big : &small), 0);
    for (int i = 0; i < 10; i++) {
        void *id;
        assert_int_equal(pthread_join(th[i], &id), 0);
        ids[i] = (uint32_t)(uintptr_t)id;
    }
    vor_frame_mark();
    assert_int_equal(tally.unknown_parents, 0);
    uint64_t total = 0;
    for (int i = 0; i < 10; i++) {
        int t = slot_of(ids[i]);
        assert_true(t >= 0); /* no thread lost whole */
        total += tally.ended[t];
        if (i >= 8) {
            assert_int_equal(tally.ended[t], 200); /* below the share: kept whole */
            assert_int_equal(drop_count(VOR_DROP_FRAME_FULL, ids[i]), 0);
        } else {
            /* (8,000 - 2 x 200) / 8 = 950 each, all of them outer scopes. */
            assert_int_equal(tally.ended[t], 950);
            assert_int_equal(tally.by_depth[t][0], 950);
            assert_int_equal(drop_count(VOR_DROP_FRAME_FULL, ids[i]), 2000 - 950);
        }
    }
    assert_int_equal(total, 8000);
    assert_int_equal(tally.dropped, 16400 - 8000);
    assert_int_equal(captured.count[VOR_LOG_FRAME_RECORD_FULL], 1);
}

/* ---- Causes per thread ---- */

static void *refused(void *arg) {
    (void)arg;
    static vor_site s = VOR_SITE_INIT("refused");
    for (int i = 0; i < 3; i++)
        if (vor_scope_begin(&s)) vor_scope_end();
    return NULL;
}

static void drops_name_cause_and_thread(void **state) {
    (void)state;
    vor_desc d = {0};
    d.max_threads = 1; /* the main thread only */
    start_session(d);
    static vor_site deep = VOR_SITE_INIT("deep");
    for (int i = 0; i < VOR_MAX_DEPTH + 5; i++) vor_scope_begin(&deep);
    for (int i = 0; i < VOR_MAX_DEPTH + 5; i++) vor_scope_end();
    uint32_t me = vor_tls_thread->thread_id;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, refused, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    vor_frame_mark();
    assert_int_equal(drop_count(VOR_DROP_TOO_DEEP, me), 5);
    assert_int_equal(drop_count(VOR_DROP_THREAD_REFUSED, 0), 3);
    assert_int_equal(tally.dropped, 8);
    assert_int_equal(tally.unknown_parents, 0);
}

/* ---- The site table full: the scope and those inside it go ---- */

static vor_site *sites;

static vor_site known = {"a known site", NULL, __FILE__, __LINE__, 0};
static uint32_t n_sites;

static void *many_sites(void *arg) {
    (void)arg;
    assert_true(vor_scope_begin(&known)); /* gets an id in the frame below if there is room */
    vor_scope_end();
    for (uint32_t i = 0; i + 1 < n_sites; i++) {
        vor_scope_begin(&sites[i]);
        vor_scope_end();
    }
    /* The last site, which gets no id, with a child whose site is known. */
    vor_scope_begin(&sites[n_sites - 1]);
    {
        VOR_SCOPE("a known site, registered now");
    }
    vor_scope_end();
    return (void *)(uintptr_t)vor_tls_thread->thread_id;
}

static void site_table_full_drops_the_scope_and_its_children(void **state) {
    (void)state;
    vor_desc d = {0};
    d.thread_buffer_scopes = 1u << 17;
    start_session(d);
    {
        VOR_SCOPE("a known site, registered now");
    }
    vor_frame_mark();
    uint32_t free_ids = VOR_MAX_SITES - vor_site_count();
    n_sites = free_ids + 2;
    sites = calloc(n_sites, sizeof *sites); /* kept: the site table points into it */
    assert_non_null(sites);
    for (uint32_t i = 0; i < n_sites; i++) sites[i].name = "many";
    pthread_t th;
    void *id;
    assert_int_equal(pthread_create(&th, NULL, many_sites, NULL), 0);
    assert_int_equal(pthread_join(th, &id), 0);
    vor_frame_mark();
    assert_int_equal(tally.unknown_parents, 0);
    /* Every scope whose site got no id, and the child inside the last one. */
    uint64_t unregistered = known.id == 0;
    for (uint32_t i = 0; i < n_sites; i++) unregistered += sites[i].id == 0;
    assert_true(unregistered >= 2);
    assert_int_equal(drop_count(VOR_DROP_SITE_TABLE_FULL, (uint32_t)(uintptr_t)id), unregistered + 1);
    assert_int_equal(vor_site_count(), VOR_MAX_SITES);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(full_buffer_keeps_outer_scopes_first, teardown),
        cmocka_unit_test_teardown(full_frame_is_shared_fairly_by_depth, teardown),
        cmocka_unit_test_teardown(drops_name_cause_and_thread, teardown),
        cmocka_unit_test_teardown(site_table_full_drops_the_scope_and_its_children, teardown), /* last */
    };
    return cmocka_run_group_tests_name("drops", tests, NULL, NULL);
}
