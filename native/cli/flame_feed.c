/* flame_feed.c: feeds the scopes of capture frames into a flame graph tree (the
 * native/flamegraph library), for `vor flamegraph` and `vor diff --svg`.
 *
 * Captures list a thread's scopes in end order with depths; the tree takes them in begin
 * order with depths that never skip a level. scope_preorder() gives the order; the depth
 * given to the tree is the number of the scope's ancestors present in the same frame, so a
 * scope whose parent ends in a later frame (a long "run" scope) starts a run of its own
 * instead of being refused. With thread roots, each thread's name is the bottom frame
 * (as in `vor export --format folded`), sized by the thread's top-level scopes.
 */
#include "flame_feed.h"

#include <stdlib.h>
#include <string.h>

int flame_feed_init(flame_feed *ff, flamegraph_tree *tree, int thread_roots, const char *only_thread, double weight) {
    memset(ff, 0, sizeof *ff);
    ff->tree = tree;
    ff->thread_roots = thread_roots;
    ff->only_thread = only_thread;
    ff->weight = weight > 0 ? weight : 1.0;
    return 0;
}

void flame_feed_free(flame_feed *ff) {
    free(ff->next);
    free(ff->stack);
    free(ff->depth_stack);
    free(ff->end_stack);
    memset(ff, 0, sizeof *ff);
}

static int reserve(flame_feed *ff, uint32_t n) {
    if (n <= ff->capacity) return 0;
    uint32_t cap = ff->capacity ? ff->capacity : 256;
    while (cap < n) cap *= 2;
    uint32_t *next = realloc(ff->next, cap * sizeof *next);
    if (next) ff->next = next;
    scope_order_entry *stack = realloc(ff->stack, cap * sizeof *stack);
    if (stack) ff->stack = stack;
    uint32_t *depths = realloc(ff->depth_stack, cap * sizeof *depths);
    if (depths) ff->depth_stack = depths;
    int64_t *ends = realloc(ff->end_stack, cap * sizeof *ends);
    if (ends) ff->end_stack = ends;
    if (!next || !stack || !depths || !ends) return -1;
    ff->capacity = cap;
    return 0;
}

/* Pops the open scopes that cannot be ancestors of `s`: as deep or deeper, or over before
 * it began. Returns how many stay open. */
static uint32_t ancestors_open(const flame_feed *ff, uint32_t open, const vor_reader_scope *s) {
    while (open > 0 && (ff->depth_stack[open - 1] >= s->depth || ff->end_stack[open - 1] <= s->start_ns)) open--;
    return open;
}

static void push(flame_feed *ff, uint32_t at, const vor_reader_scope *s) {
    ff->depth_stack[at] = s->depth;
    ff->end_stack[at] = s->start_ns + s->duration_ns;
}

static uint64_t scaled(const flame_feed *ff, int64_t ns) {
    if (ns <= 0) return 0;
    return ff->weight == 1.0 ? (uint64_t)ns : (uint64_t)((double)ns * ff->weight + 0.5);
}

int flame_feed_frame(flame_feed *ff, const vor_reader *r, const vor_reader_frame *f) {
    for (uint32_t t = 0; t < f->n_threads; t++) {
        const vor_reader_thread_scopes *ts = &f->threads[t];
        if (ts->n_scopes == 0) continue;
        const vor_reader_thread *thread = vor_reader_get_thread(r, ts->thread_id);
        const char *thread_name = thread && thread->name ? thread->name : "thread";
        if (ff->only_thread && strcmp(ff->only_thread, thread_name) != 0) continue;
        if (reserve(ff, ts->n_scopes) != 0) return -1;
        uint32_t first = scope_preorder(ts->scopes, ts->n_scopes, ff->next, ff->stack);

        uint32_t base = 0;
        if (ff->thread_roots) {
            /* The thread's frame: as wide as its top-level scopes (those with no ancestor here). */
            uint64_t top = 0;
            uint32_t open = 0;
            for (uint32_t i = first; i != SCOPE_ORDER_END; i = ff->next[i]) {
                open = ancestors_open(ff, open, &ts->scopes[i]);
                if (open == 0) top += scaled(ff, ts->scopes[i].duration_ns);
                push(ff, open++, &ts->scopes[i]);
            }
            if (flamegraph_tree_add_scope(ff->tree, thread_name, 0, top) != FLAMEGRAPH_OK) ff->refused++;
            base = 1;
        }
        uint32_t open = 0;
        for (uint32_t i = first; i != SCOPE_ORDER_END; i = ff->next[i]) {
            const vor_reader_scope *s = &ts->scopes[i];
            open = ancestors_open(ff, open, s);
            const vor_reader_site *site = vor_reader_get_site(r, s->site_id);
            const char *name = site && site->name ? site->name : "(unknown site)";
            flamegraph_status st = flamegraph_tree_add_scope(ff->tree, name, base + open, scaled(ff, s->duration_ns));
            if (st != FLAMEGRAPH_OK && st != FLAMEGRAPH_DROPPED) ff->refused++;
            push(ff, open++, s);
            ff->scopes++;
        }
        flamegraph_tree_end_scopes(ff->tree);
    }
    return 0;
}
