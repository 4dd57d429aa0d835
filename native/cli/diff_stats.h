/* diff_stats.h: per-scope statistics of one capture for `vor diff` (see diff_stats.c). */
#ifndef VOR_CLI_DIFF_STATS_H
#define VOR_CLI_DIFF_STATS_H

#include "cli.h"

typedef struct diff_scope {
    uint64_t calls;          /* scopes with this name, all flame frames, all threads */
    int64_t total_ns;        /* their durations summed (nested calls of a recursive scope count each) */
    uint64_t frames_with;    /* flame frames in which the name appears */
    int64_t frame_ns;        /* scratch: this frame's total */
    uint64_t frame_seen;     /* scratch: the frame number frame_ns belongs to */
    quantile per_frame;      /* per-frame totals of the frames where it appears */
} diff_scope;

typedef struct diff_stats {
    name_table *names;       /* scope names -> ids */
    diff_scope *scopes;      /* by name id */
    uint32_t capacity;
    uint32_t *touched;       /* names seen in the current frame */
    uint32_t n_touched, touched_capacity;
    uint64_t flame_frames;
    uint64_t exact_budget;   /* shared by the quantiles */
} diff_stats;

int diff_stats_init(diff_stats *s);
/* Adds a frame's scopes (frames without scopes are not counted). 0 or -1 (memory). */
int diff_stats_add_frame(diff_stats *s, const vor_reader *r, const vor_reader_frame *f);
/* Per-frame figures of a name over all flame frames (absent = 0 in that frame). */
double diff_stats_mean_per_frame(const diff_stats *s, const diff_scope *d);
double diff_stats_p95_per_frame(diff_stats *s, diff_scope *d);
/* The scope named `name`, or NULL. */
diff_scope *diff_stats_find(diff_stats *s, const char *name);
void diff_stats_free(diff_stats *s);

#endif
