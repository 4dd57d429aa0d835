/* diff_stats.c: what `vor diff` compares, for one capture: per scope name, the calls, the
 * total time, and the distribution of its time per flame frame (mean and nearest-rank p95
 * over every flame frame, a frame without the scope counting as 0).
 *
 * The times come from the stack engine (stacks.c), as in every command: time inside the
 * frames, nested calls of one name counted once, compensated unless --raw. Names, not
 * sites, are the key: the two captures come from different builds (native and wasm) whose
 * site ids differ. The per-frame distributions are the engine's (per_frame): bounded
 * quantiles of the frames where a name appears, the others counting as zeros.
 */
#include "diff_stats.h"

#include <stdlib.h>
#include <string.h>

int diff_stats_init(diff_stats *s, const stacks_options *options, const vor_reader *r) {
    memset(s, 0, sizeof *s);
    drop_stats_init(&s->drops);
    return stacks_init(&s->st, options, r);
}

int diff_stats_add_frame(diff_stats *s, const char *cmd, const cli_capture *c, const vor_reader_frame *f) {
    if (!f->has_flame) return 0; /* drops too: what the comparison lacks is in the flame frames */
    drop_stats_add(&s->drops, c->reader, f);
    s->flame_frames++;
    return cli_stacks_add(cmd, c, &s->st, f);
}

double diff_stats_mean_per_frame(const diff_stats *s, uint32_t name) {
    const stacks_name *n = stacks_get_name(&s->st, name);
    return s->flame_frames && n ? (double)n->total_ns / (double)s->flame_frames : 0;
}

double diff_stats_p95_per_frame(diff_stats *s, uint32_t name) {
    return stacks_frame_percentile(&s->st, name, 0, 95);
}

uint32_t diff_stats_find(const diff_stats *s, const char *name) {
    return name_table_find(s->st.names, name);
}

void diff_stats_free(diff_stats *s) {
    stacks_free(&s->st);
    drop_stats_free(&s->drops);
    memset(s, 0, sizeof *s);
}
