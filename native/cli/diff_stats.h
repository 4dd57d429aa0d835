/* diff_stats.h: per-scope statistics of one capture for `vor diff` (see diff_stats.c). */
#ifndef VOR_CLI_DIFF_STATS_H
#define VOR_CLI_DIFF_STATS_H

#include "cli.h"

typedef struct diff_stats {
    stacks st; /* calls, totals and per-frame figures per name (names: st.names) */
    drop_stats drops;
    uint64_t flame_frames;
} diff_stats;

/* `options` as for the stack engine (tree NULL and per_frame for the table). 0 or -1
 * (memory). */
int diff_stats_init(diff_stats *s, const stacks_options *options, const vor_reader *r);
/* Adds a frame and its drops (frames without scopes add nothing: they are not compared).
 * 0, or an exit status after a message naming the capture. */
int diff_stats_add_frame(diff_stats *s, const char *cmd, const cli_capture *c, const vor_reader_frame *f);
/* Per-frame figures of a name over all flame frames (absent = 0 in that frame). */
double diff_stats_mean_per_frame(const diff_stats *s, uint32_t name);
double diff_stats_p95_per_frame(diff_stats *s, uint32_t name);
/* The name id of `name`, or NAME_NONE. */
uint32_t diff_stats_find(const diff_stats *s, const char *name);
void diff_stats_free(diff_stats *s);

#endif
