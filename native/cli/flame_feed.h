/* flame_feed.h: capture frames into a flame graph tree (see flame_feed.c). */
#ifndef VOR_CLI_FLAME_FEED_H
#define VOR_CLI_FLAME_FEED_H

#include "cli.h"
#include "flamegraph.h"

typedef struct flame_feed {
    flamegraph_tree *tree;
    int thread_roots;        /* the thread name as each stack's bottom frame */
    const char *only_thread; /* NULL: every thread */
    double weight;           /* durations are multiplied by it (diff of unequal captures) */
    uint32_t *next;          /* scratch, per frame */
    scope_order_entry *stack;
    uint32_t *depth_stack;
    int64_t *end_stack;
    uint32_t capacity;
    uint64_t scopes, refused;
} flame_feed;

int flame_feed_init(flame_feed *ff, flamegraph_tree *tree, int thread_roots, const char *only_thread, double weight);
/* Feeds every (selected) thread's scopes of one frame. Returns 0, or -1 when out of memory. */
int flame_feed_frame(flame_feed *ff, const vor_reader *r, const vor_reader_frame *f);
void flame_feed_free(flame_feed *ff);

#endif
