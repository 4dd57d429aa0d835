/* diff_stats.c: what `vor diff` compares, for one capture: per scope name, the calls, the
 * total time, and the distribution of its time per flame frame (mean and nearest-rank p95
 * over every flame frame, a frame without the scope counting as 0).
 *
 * Names, not sites, are the key: the two captures come from different builds (native and
 * wasm) whose site ids differ. The per-frame distribution keeps only the frames where a
 * name appears (a bounded quantile, exact up to 65,536 values per name); the frames where
 * it does not appear are the zeros at the bottom of the distribution, accounted for when a
 * percentile is asked.
 */
#include "diff_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_EXACT_BUDGET (16u * 1024u * 1024u) /* exact per-frame values kept, all names */

int diff_stats_init(diff_stats *s) {
    memset(s, 0, sizeof *s);
    s->names = name_table_create();
    s->exact_budget = DIFF_EXACT_BUDGET;
    return s->names ? 0 : -1;
}

static diff_scope *scope_for(diff_stats *s, uint32_t id) {
    if (id >= s->capacity) {
        uint32_t cap = s->capacity ? s->capacity * 2 : 256;
        while (cap <= id) cap *= 2;
        diff_scope *p = realloc(s->scopes, cap * sizeof *p);
        if (p == NULL) return NULL;
        for (uint32_t i = s->capacity; i < cap; i++) {
            memset(&p[i], 0, sizeof p[i]);
            quantile_init(&p[i].per_frame, 0, &s->exact_budget);
        }
        s->scopes = p;
        s->capacity = cap;
    }
    return &s->scopes[id];
}

static int touch(diff_stats *s, uint32_t id) {
    if (s->n_touched == s->touched_capacity) {
        uint32_t cap = s->touched_capacity ? s->touched_capacity * 2 : 64;
        uint32_t *p = realloc(s->touched, cap * sizeof *p);
        if (p == NULL) return -1;
        s->touched = p;
        s->touched_capacity = cap;
    }
    s->touched[s->n_touched++] = id;
    return 0;
}

int diff_stats_add_frame(diff_stats *s, const vor_reader *r, const vor_reader_frame *f) {
    if (!f->has_flame) return 0;
    uint64_t frame_number = ++s->flame_frames;
    s->n_touched = 0;
    for (uint32_t t = 0; t < f->n_threads; t++) {
        for (uint32_t i = 0; i < f->threads[t].n_scopes; i++) {
            const vor_reader_scope *sc = &f->threads[t].scopes[i];
            const vor_reader_site *site = vor_reader_get_site(r, sc->site_id);
            uint32_t id = name_table_intern(s->names, site && site->name ? site->name : "(unknown site)");
            diff_scope *d = id == NAME_NONE ? NULL : scope_for(s, id);
            if (d == NULL) return -1;
            d->calls++;
            d->total_ns += sc->duration_ns;
            if (d->frame_seen != frame_number) {
                if (touch(s, id) != 0) return -1;
                d->frame_seen = frame_number;
                d->frame_ns = 0;
            }
            d->frame_ns += sc->duration_ns;
        }
    }
    for (uint32_t k = 0; k < s->n_touched; k++) {
        diff_scope *d = &s->scopes[s->touched[k]];
        d->frames_with++;
        if (quantile_add(&d->per_frame, (double)d->frame_ns) != 0) return -1;
    }
    return 0;
}

double diff_stats_mean_per_frame(const diff_stats *s, const diff_scope *d) {
    return s->flame_frames ? (double)d->total_ns / (double)s->flame_frames : 0;
}

double diff_stats_p95_per_frame(diff_stats *s, diff_scope *d) {
    uint64_t n = s->flame_frames;
    if (n == 0 || d->frames_with == 0) return 0;
    uint64_t rank = (uint64_t)ceil(0.95 * (double)n);
    if (rank < 1) rank = 1;
    uint64_t zeros = n - d->frames_with;
    if (rank <= zeros) return 0;
    /* The (rank - zeros)-th smallest of the frames that have the scope. */
    uint64_t k = rank - zeros;
    double p = 100.0 * ((double)k - 0.5) / (double)d->frames_with;
    return quantile_get(&d->per_frame, p);
}

diff_scope *diff_stats_find(diff_stats *s, const char *name) {
    uint32_t n = name_table_count(s->names);
    for (uint32_t id = 0; id < n; id++)
        if (strcmp(name_table_get(s->names, id), name) == 0) return &s->scopes[id];
    return NULL;
}

void diff_stats_free(diff_stats *s) {
    for (uint32_t i = 0; i < s->capacity; i++) quantile_free(&s->scopes[i].per_frame);
    free(s->scopes);
    free(s->touched);
    name_table_destroy(s->names);
    memset(s, 0, sizeof *s);
}
