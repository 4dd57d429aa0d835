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
                                                s->duration_ns};
            }
        }
        f->kept = k;
    }
    return 0;
}

void recording_free(void) {
    for (uint32_t i = 0; i < rec.n_frames; i++) free(rec.frames[i].scopes);
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

void session_teardown(void) {
    vor_shutdown();
    recording_free();
    fake_clock_remove();
    vor_desc defaults;
    memset(&defaults, 0, sizeof defaults);
    vor_setup(&defaults);
}
