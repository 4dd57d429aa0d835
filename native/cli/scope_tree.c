/* scope_tree.c: turns each thread's scopes, which come in end order with their depths,
 * into parent/child relations: self times (duration minus the direct children's
 * durations) and, optionally, stacks in a stack_trie.
 *
 * End order puts children before their parent: [gc, c1, c2, p] for p(c1(gc), c2). The
 * algorithm keeps, per thread, a stack of *pending entries*: each is the run of sibling
 * scopes at one depth that ended since the last scope above them ended, waiting for that
 * parent. Depths strictly increase from the bottom entry (the thread's root, depth 0)
 * to the top. When a scope at depth d arrives:
 *   - every entry deeper than d holds its children (the one at d+1 directly; deeper ones
 *     mean a level is missing, e.g. a scope the writer dropped: adopted all the same);
 *     their total duration is subtracted from its duration to give its self time;
 *   - it joins the entry at depth d if the top one is at d, else it opens one.
 * A scope whose parent ends in a later frame is simply still pending when the frame
 * ends: the state lives across frames, because a thread's scopes are in end order across
 * frames too. Each entry's members are merged by name (one trie group per entry), so a
 * long-running outer scope that ends only at exit costs memory for its distinct child
 * stacks, not for its calls. Scopes still pending at the end of the input belonged to
 * scopes that never ended; scope_tree_finish() puts them under their thread's root.
 *
 * Cost: O(1) amortised per scope, plus for stacks one trie probe and, when its parent
 * ends, one move or merge per distinct child path.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
    uint32_t depth;
    uint32_t node;       /* trie: the thread root (bottom entry) or a group; NONE if none */
    int64_t total_ns;    /* durations of the member scopes: their parent's children time */
    uint64_t extra_self; /* self time of members that got no trie node (cap reached) */
    uint64_t scopes;     /* member scopes, for the unfinished count */
} pending;

typedef struct thread_state {
    pending *stack;
    uint32_t n, cap;
} thread_state;

struct scope_tree {
    stack_trie *trie;
    thread_state *threads; /* indexed by thread id */
    uint32_t n_threads;
    scope_tree_stats stats;
    int finished;
};

scope_tree *scope_tree_create(stack_trie *trie) {
    scope_tree *t = calloc(1, sizeof *t);
    if (t) t->trie = trie;
    return t;
}

void scope_tree_destroy(scope_tree *t) {
    if (!t) return;
    for (uint32_t i = 0; i < t->n_threads; i++) free(t->threads[i].stack);
    free(t->threads);
    free(t);
}

static thread_state *get_thread(scope_tree *t, uint32_t thread, uint32_t root_name) {
    if (thread >= VOR_READER_MAX_THREADS) return NULL;
    if (thread >= t->n_threads) {
        uint32_t n = t->n_threads ? t->n_threads : 8;
        while (n <= thread) n *= 2;
        thread_state *ts = realloc(t->threads, (size_t)n * sizeof *ts);
        if (!ts) return NULL;
        memset(ts + t->n_threads, 0, (size_t)(n - t->n_threads) * sizeof *ts);
        t->threads = ts;
        t->n_threads = n;
    }
    thread_state *ts = &t->threads[thread];
    if (!ts->stack) {
        ts->stack = malloc(8 * sizeof *ts->stack);
        if (!ts->stack) return NULL;
        ts->cap = 8;
        ts->n = 1;
        uint32_t root = STACK_TRIE_NONE;
        if (t->trie) {
            root = root_name == NAME_NONE ? 0 : stack_trie_child(t->trie, 0, root_name);
            if (root == STACK_TRIE_NONE) root = 0; /* cap reached: the thread merges into the root */
        }
        ts->stack[0] = (pending){0, root, 0, 0, 0};
    }
    return ts;
}

int scope_tree_add(scope_tree *t, uint32_t thread, uint32_t root_name, const scope_tree_scope *s, int64_t *self_ns) {
    *self_ns = 0;
    if (s->depth >= SCOPE_TREE_MAX_DEPTH) {
        t->stats.too_deep++;
        return -1;
    }
    thread_state *ts = get_thread(t, thread, root_name);
    if (!ts) {
        t->stats.out_of_memory++;
        return -1;
    }
    if (ts->n == ts->cap) { /* room for one more entry; at most SCOPE_TREE_MAX_DEPTH + 1 */
        pending *p = realloc(ts->stack, (size_t)ts->cap * 2 * sizeof *p);
        if (!p) {
            t->stats.out_of_memory++;
            return -1;
        }
        ts->stack = p;
        ts->cap *= 2;
    }
    uint32_t d = s->depth;
    /* Entries deeper than d hold this scope's children: indices k .. n-1. */
    uint32_t k = ts->n;
    while (k > 1 && ts->stack[k - 1].depth > d) k--;
    int64_t children_ns = 0;
    for (uint32_t i = k; i < ts->n; i++) {
        children_ns += ts->stack[i].total_ns;
        if (ts->stack[i].depth != d + 1) t->stats.skipped_level++;
    }
    int64_t self = s->duration_ns - children_ns;
    if (self < 0) {
        t->stats.negative_self++;
        self = 0;
    }
    *self_ns = self;

    /* The entry this scope joins: the one at depth d, or a new one at index k. */
    int join = ts->stack[k - 1].depth == d;
    uint32_t target_node = join ? ts->stack[k - 1].node : STACK_TRIE_NONE;
    uint64_t extra = 0;
    if (t->trie) {
        if (!join) target_node = stack_trie_group(t->trie);
        uint32_t node = target_node != STACK_TRIE_NONE ? stack_trie_child(t->trie, target_node, s->name) : STACK_TRIE_NONE;
        if (node != STACK_TRIE_NONE) {
            stack_trie_add_self(t->trie, node, (uint64_t)self);
            for (uint32_t i = k; i < ts->n; i++) {
                stack_trie_adopt(t->trie, ts->stack[i].node, node);
                stack_trie_add_self(t->trie, node, ts->stack[i].extra_self);
            }
        } else { /* no node: the time waits in the entry for the nearest ancestor that has one */
            extra = (uint64_t)self;
            for (uint32_t i = k; i < ts->n; i++) extra += stack_trie_collapse(t->trie, ts->stack[i].node) + ts->stack[i].extra_self;
        }
    }
    if (!join) {
        ts->stack[k] = (pending){d, target_node, 0, 0, 0};
        ts->n = k + 1;
    } else {
        ts->n = k;
    }
    pending *target = &ts->stack[ts->n - 1];
    target->total_ns += s->duration_ns;
    target->extra_self += extra;
    target->scopes++;
    t->stats.scopes++;
    return 0;
}

void scope_tree_finish(scope_tree *t) {
    if (t->finished) return;
    t->finished = 1;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        thread_state *ts = &t->threads[i];
        if (!ts->stack) continue;
        uint32_t root = ts->stack[0].node;
        for (uint32_t j = ts->n; j-- > 1;) {
            t->stats.unfinished += ts->stack[j].scopes;
            if (t->trie) {
                stack_trie_adopt(t->trie, ts->stack[j].node, root);
                stack_trie_add_self(t->trie, root, ts->stack[j].extra_self);
            }
        }
        if (t->trie) stack_trie_add_self(t->trie, root, ts->stack[0].extra_self);
        ts->n = 1;
        ts->stack[0].extra_self = 0;
    }
}

scope_tree_stats scope_tree_get_stats(const scope_tree *t) { return t->stats; }
