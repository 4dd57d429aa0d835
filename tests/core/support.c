/* support.c: fake clock, capturing logger and recording consumer for the core tests. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

uint64_t fake_now_ns;
captured_log captured;
recording rec;

static uint64_t fake_clock(void *user) {
    (void)user;
    return __atomic_load_n(&fake_now_ns, __ATOMIC_RELAXED);
}

void fake_clock_install(uint64_t start_ns) {
    fake_now_ns = start_ns;
    vor_testing_set_clock(fake_clock, NULL);
}

void fake_clock_remove(void) {
    vor_testing_set_clock(NULL, NULL);
}

static void capture_logger(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    if ((unsigned)item < VOR_LOG_ITEM_COUNT) {
        captured.count[item]++;
        snprintf(captured.last_message[item], sizeof captured.last_message[item], "%s", message);
    }
}

void setup_with_capture(vor_desc desc) {
    memset(&captured, 0, sizeof captured);
    desc.logger.func = capture_logger;
    desc.logger.user_data = NULL;
    assert_int_equal(vor_setup(&desc), 1);
}

static int record_frame(void *state, const vor_frame_record *r) {
    (void)state;
    rec.total_scopes += r->n_scopes;
    rec.total_dropped += r->dropped_scopes;
    for (uint32_t t = 0; t < r->n_threads; t++)
        for (uint32_t i = 0; i < r->threads[t].n_scopes; i++)
            rec.site_counts[r->threads[t].thread_id % 64][r->threads[t].scopes[i].site_id % 16]++;
    if (rec.n_frames >= RECORDED_FRAMES_MAX) return 0;
    recorded_frame *f = &rec.frames[rec.n_frames++];
    memset(f, 0, sizeof *f);
    f->index = r->index;
    f->start_ns = r->start_ns;
    f->duration_ns = r->duration_ns;
    f->overhead_ns = r->overhead_ns;
    f->n_system = r->n_system;
    f->system_present = r->system_present;
    memcpy(f->system_raw, r->system_raw, sizeof f->system_raw);
    f->n_user = r->n_user < 32 ? r->n_user : 32;
    memcpy(f->user, r->user, f->n_user * sizeof f->user[0]);
    f->n_scopes = r->n_scopes;
    f->dropped = r->dropped_scopes;
    f->n_drops = r->n_drops < 16 ? r->n_drops : 16;
    memcpy(f->drops, r->drops, f->n_drops * sizeof f->drops[0]);
    uint32_t keep = rec.keep_scopes_per_frame;
    if (keep && r->n_scopes) {
        uint32_t n = r->n_scopes < keep ? (uint32_t)r->n_scopes : keep;
        f->scopes = calloc(n, sizeof *f->scopes);
        assert_non_null(f->scopes);
        uint32_t k = 0;
        for (uint32_t t = 0; t < r->n_threads && k < n; t++) {
            for (uint32_t i = 0; i < r->threads[t].n_scopes && k < n; i++, k++) {
                const vor_scope_record *s = &r->threads[t].scopes[i];
                f->scopes[k] = (recorded_scope){r->threads[t].thread_id, s->site_id, s->depth, s->start_ns,
                                                s->duration_ns, s->parent, s->flags};
            }
        }
        f->kept = k;
    }
    uint32_t n_open = 0;
    for (uint32_t t = 0; t < r->n_threads; t++) n_open += r->threads[t].n_open;
    if (keep && n_open) {
        uint32_t n = n_open < keep ? n_open : keep;
        f->open = calloc(n, sizeof *f->open);
        assert_non_null(f->open);
        uint32_t k = 0;
        for (uint32_t t = 0; t < r->n_threads && k < n; t++) {
            const vor_thread_record *tr = &r->threads[t];
            for (uint32_t i = 0; i < tr->n_open && k < n; i++, k++) {
                const vor_scope_record *s = &tr->scopes[tr->n_scopes + i];
                f->open[k] = (recorded_scope){tr->thread_id, s->site_id, s->depth, s->start_ns, s->duration_ns,
                                              s->parent, s->flags};
            }
        }
        f->kept_open = k;
    }
    return 0;
}

void recording_free(void) {
    for (uint32_t i = 0; i < rec.n_frames; i++) {
        free(rec.frames[i].scopes);
        free(rec.frames[i].open);
    }
    memset(&rec, 0, sizeof rec);
}

void recording_attach(uint32_t keep_scopes_per_frame) {
    recording_free();
    rec.keep_scopes_per_frame = keep_scopes_per_frame;
    vor_consumer c = {"test recorder", NULL, record_frame, NULL, NULL};
    assert_int_equal(vor_frame_lock_acquire(), 1);
    assert_int_equal(vor_consumers_add(&c), 1);
    vor_frame_lock_release();
}

static int compare_interval(const void *a, const void *b) {
    const recorded_scope *x = a, *y = b;
    if (x->thread_id != y->thread_id) return x->thread_id < y->thread_id ? -1 : 1;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    int64_t xe = x->start_ns + x->duration_ns, ye = y->start_ns + y->duration_ns;
    if (xe != ye) return xe > ye ? -1 : 1;
    return x->depth < y->depth ? -1 : (x->depth > y->depth);
}

uint64_t count_partial_overlaps(recorded_scope *scopes, uint64_t n) {
    qsort(scopes, n, sizeof *scopes, compare_interval);
    int64_t stack_end[VOR_MAX_DEPTH + 1];
    uint32_t top = 0, thread = UINT32_MAX;
    uint64_t overlaps = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (scopes[i].thread_id != thread) {
            thread = scopes[i].thread_id;
            top = 0;
        }
        int64_t s = scopes[i].start_ns, e = s + scopes[i].duration_ns;
        while (top > 0 && stack_end[top - 1] <= s) top--;
        if (top > 0 && e > stack_end[top - 1]) overlaps++;
        if (top <= VOR_MAX_DEPTH) stack_end[top++] = e;
    }
    return overlaps;
}

uint64_t recorded_partial_overlaps(void) {
    uint64_t total = 0;
    for (uint32_t f = 0; f < rec.n_frames; f++) total += rec.frames[f].kept;
    recorded_scope *all = calloc(total ? total : 1, sizeof *all);
    assert_non_null(all);
    uint64_t n = 0;
    for (uint32_t f = 0; f < rec.n_frames; f++)
        for (uint32_t i = 0; i < rec.frames[f].kept; i++) all[n++] = rec.frames[f].scopes[i];
    uint64_t overlaps = count_partial_overlaps(all, n);
    free(all);
    return overlaps;
}

void session_teardown(void) {
    vor_shutdown();
    /* A scope this thread left open would still be open in the next test's session (a
     * session lists the scopes open when it started): end them, outside any session. */
    while (vor_tls_thread && vor_tls_thread->depth > 0) vor_scope_end();
    recording_free();
    fake_clock_remove();
    vor_desc defaults;
    memset(&defaults, 0, sizeof defaults);
    vor_setup(&defaults);
}
