/* diff_stats.c: what `vor diff` compares, for one capture: per scope name, the calls, the
 * total time, and the distribution of its time per flame frame (mean and nearest-rank p95
 * over every flame frame, a frame without the scope counting as 0).
 *
 * The times come from the stack engine (stacks.c), as in every command: time inside the
 * frames, nested calls of one name counted once, compensated unless --raw. Names, not
 * sites, are the key: the two captures come from different builds (native and wasm) whose
 * site ids differ. The per-frame distribution keeps only the frames where a name appears
 * (a bounded quantile, exact up to 65,536 values per name); the frames where it does not
 * appear are the zeros at the bottom of the distribution, accounted for when a percentile
 * is asked.
 */
#include "diff_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_EXACT_BUDGET (16u * 1024u * 1024u) /* exact per-frame values kept, all names */

int diff_stats_init(diff_stats *s, const stacks_options *options, const vor_reader *r) {
    memset(s, 0, sizeof *s);
    s->exact_budget = DIFF_EXACT_BUDGET;
    drop_stats_init(&s->drops);
    return stacks_init(&s->st, options, r);
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

int diff_stats_add_frame(diff_stats *s, const char *cmd, const cli_capture *c, const vor_reader_frame *f) {
    drop_stats_add(&s->drops, c->reader, f);
    if (!f->has_flame) return 0;
    s->flame_frames++;
    int status = cli_stacks_add(cmd, c, &s->st, f);
    if (status != 0) return status;
    for (uint32_t k = 0; k < s->st.n_touched; k++) {
        uint32_t name = s->st.touched[k];
        diff_scope *d = scope_for(s, name);
        if (d == NULL || quantile_add(&d->per_frame, (double)stacks_get_name(&s->st, name)->frame_ns) != 0)
            return cli_fail(CLI_EXIT_USAGE, cmd, c->path, "out of memory");
        d->frames_with++;
    }
    return 0;
}

double diff_stats_mean_per_frame(const diff_stats *s, uint32_t name) {
    const stacks_name *n = stacks_get_name(&s->st, name);
    return s->flame_frames && n ? (double)n->total_ns / (double)s->flame_frames : 0;
}

double diff_stats_p95_per_frame(diff_stats *s, uint32_t name) {
    uint64_t n = s->flame_frames;
    diff_scope *d = name < s->capacity ? &s->scopes[name] : NULL;
    if (n == 0 || d == NULL || d->frames_with == 0) return 0;
    uint64_t rank = (uint64_t)ceil(0.95 * (double)n);
    if (rank < 1) rank = 1;
    uint64_t zeros = n - d->frames_with;
    if (rank <= zeros) return 0;
    /* The (rank - zeros)-th smallest of the frames that have the scope. */
    uint64_t k = rank - zeros;
    double p = 100.0 * ((double)k - 0.5) / (double)d->frames_with;
    return quantile_get(&d->per_frame, p);
}

uint32_t diff_stats_find(const diff_stats *s, const char *name) { return name_table_find(s->st.names, name); }

void diff_stats_free(diff_stats *s) {
    for (uint32_t i = 0; i < s->capacity; i++) quantile_free(&s->scopes[i].per_frame);
    free(s->scopes);
    stacks_free(&s->st);
    drop_stats_free(&s->drops);
    memset(s, 0, sizeof *s);
}
