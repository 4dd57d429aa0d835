/* stack_trie.c: the hash of name paths behind folded stacks and flame aggregation.
 *
 * A stack such as main;update;physics is a path of names from the root. Each distinct
 * path is one node: (parent node, name id) looked up in one chained hash table, so
 * adding a scope under a known parent costs one hash probe whatever the path's length,
 * and the path itself is never built until output. Each node keeps its self time.
 *
 * Scopes arrive children first (end order), so a scope's node is often created before
 * its parent is known. scope_tree.c parks such nodes under a detached "group" node and,
 * when the parent ends, moves them over with stack_trie_adopt(): a node whose name is
 * new under the parent is re-keyed in O(1) (its own children stay attached to it); one
 * whose name exists is merged into it, recursively. Nodes live in one array indexed by
 * 32-bit ids with a free list, 32 bytes each plus 4 for the bucket.
 *
 * Bounded: at most max_nodes live nodes. A creation past the cap is refused and counted;
 * the caller then adds the time to the nearest node that exists (scope_tree.c), so the
 * totals stay right and only the detail is lost.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define NONE STACK_TRIE_NONE

typedef struct trie_node {
    uint32_t parent;       /* NONE: the root, a group, or a free node */
    uint32_t name;         /* name id; NAME_NONE for the root and groups */
    uint32_t first_child;
    uint32_t next_sibling;
    uint32_t hash_next;    /* bucket chain; the free list when free */
    uint32_t in_use;
    uint64_t self;
} trie_node;

struct stack_trie {
    trie_node *nodes;
    uint32_t n_nodes, cap_nodes; /* array slots used / allocated */
    uint32_t live, max_nodes;
    uint32_t free_list;
    uint32_t *buckets;           /* node id chains; NONE = empty */
    uint32_t n_buckets;          /* a power of two */
    uint64_t refused;
};

static uint32_t key_hash(uint32_t parent, uint32_t name) {
    uint64_t k = ((uint64_t)parent << 32 | name) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 32);
}

stack_trie *stack_trie_create(uint32_t max_nodes) {
    if (max_nodes == 0) max_nodes = STACK_TRIE_DEFAULT_MAX_NODES;
    if (max_nodes > STACK_TRIE_LIMIT_MAX_NODES) max_nodes = STACK_TRIE_LIMIT_MAX_NODES;
    if (max_nodes < 1) max_nodes = 1;
    stack_trie *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->max_nodes = max_nodes;
    t->free_list = NONE;
    t->n_buckets = 1024;
    t->buckets = malloc(t->n_buckets * sizeof *t->buckets);
    t->cap_nodes = 1024 < max_nodes ? 1024 : max_nodes;
    t->nodes = malloc(t->cap_nodes * sizeof *t->nodes);
    if (!t->buckets || !t->nodes) {
        stack_trie_destroy(t);
        return NULL;
    }
    memset(t->buckets, 0xff, t->n_buckets * sizeof *t->buckets);
    /* Node 0: the root. */
    t->nodes[0] = (trie_node){NONE, NAME_NONE, NONE, NONE, NONE, 1, 0};
    t->n_nodes = 1;
    t->live = 1;
    return t;
}

void stack_trie_destroy(stack_trie *t) {
    if (!t) return;
    free(t->nodes);
    free(t->buckets);
    free(t);
}

static void grow_buckets(stack_trie *t) {
    uint32_t n = t->n_buckets * 2;
    uint32_t *b = malloc(n * sizeof *b);
    if (!b) return; /* longer chains, still correct */
    memset(b, 0xff, n * sizeof *b);
    for (uint32_t id = 0; id < t->n_nodes; id++) {
        trie_node *x = &t->nodes[id];
        if (!x->in_use || x->parent == NONE) continue;
        uint32_t h = key_hash(x->parent, x->name) & (n - 1);
        x->hash_next = b[h];
        b[h] = id;
    }
    free(t->buckets);
    t->buckets = b;
    t->n_buckets = n;
}

static uint32_t alloc_node(stack_trie *t) {
    if (t->live >= t->max_nodes) {
        t->refused++;
        return NONE;
    }
    uint32_t id;
    if (t->free_list != NONE) {
        id = t->free_list;
        t->free_list = t->nodes[id].hash_next;
    } else {
        if (t->n_nodes == t->cap_nodes) {
            uint32_t cap = t->cap_nodes * 2;
            if (cap > t->max_nodes) cap = t->max_nodes;
            trie_node *nodes = cap > t->cap_nodes ? realloc(t->nodes, (size_t)cap * sizeof *nodes) : NULL;
            if (!nodes) {
                t->refused++;
                return NONE;
            }
            t->nodes = nodes;
            t->cap_nodes = cap;
        }
        id = t->n_nodes++;
    }
    t->nodes[id] = (trie_node){NONE, NAME_NONE, NONE, NONE, NONE, 1, 0};
    t->live++;
    return id;
}

static void free_node(stack_trie *t, uint32_t id) {
    t->nodes[id].in_use = 0;
    t->nodes[id].parent = NONE;
    t->nodes[id].hash_next = t->free_list;
    t->free_list = id;
    t->live--;
}

static uint32_t lookup(const stack_trie *t, uint32_t parent, uint32_t name) {
    uint32_t id = t->buckets[key_hash(parent, name) & (t->n_buckets - 1)];
    while (id != NONE && (t->nodes[id].parent != parent || t->nodes[id].name != name)) id = t->nodes[id].hash_next;
    return id;
}

static void hash_insert(stack_trie *t, uint32_t id) {
    trie_node *x = &t->nodes[id];
    uint32_t h = key_hash(x->parent, x->name) & (t->n_buckets - 1);
    x->hash_next = t->buckets[h];
    t->buckets[h] = id;
}

static void hash_remove(stack_trie *t, uint32_t id) {
    trie_node *x = &t->nodes[id];
    uint32_t *link = &t->buckets[key_hash(x->parent, x->name) & (t->n_buckets - 1)];
    while (*link != NONE && *link != id) link = &t->nodes[*link].hash_next;
    if (*link == id) *link = x->hash_next;
    x->hash_next = NONE;
}

/* Links `id` (its parent field set, not yet in the hash) under its parent. */
static void attach(stack_trie *t, uint32_t id) {
    trie_node *x = &t->nodes[id];
    hash_insert(t, id);
    x->next_sibling = t->nodes[x->parent].first_child;
    t->nodes[x->parent].first_child = id;
}

uint32_t stack_trie_child(stack_trie *t, uint32_t parent, uint32_t name) {
    if (parent == NONE || parent >= t->n_nodes) return NONE;
    uint32_t id = lookup(t, parent, name);
    if (id != NONE) return id;
    id = alloc_node(t);
    if (id == NONE) return NONE;
    t->nodes[id].parent = parent;
    t->nodes[id].name = name;
    attach(t, id);
    if (t->live > t->n_buckets) grow_buckets(t);
    return id;
}

uint32_t stack_trie_group(stack_trie *t) { return alloc_node(t); }

void stack_trie_add_self(stack_trie *t, uint32_t node, uint64_t ns) {
    if (node < t->n_nodes) t->nodes[node].self += ns;
}

/* Moves `id` (a child of some other node, already unlinked from its sibling list) under
 * `parent`, merging with a same-named child if there is one. */
static void move_under(stack_trie *t, uint32_t id, uint32_t parent) {
    uint32_t existing = lookup(t, parent, t->nodes[id].name);
    hash_remove(t, id);
    if (existing == NONE) {
        t->nodes[id].parent = parent;
        attach(t, id);
        return;
    }
    t->nodes[existing].self += t->nodes[id].self;
    uint32_t c = t->nodes[id].first_child;
    while (c != NONE) {
        uint32_t next = t->nodes[c].next_sibling;
        move_under(t, c, existing);
        c = next;
    }
    free_node(t, id);
}

void stack_trie_adopt(stack_trie *t, uint32_t group, uint32_t parent) {
    if (group == NONE || group >= t->n_nodes || parent == NONE || parent >= t->n_nodes || group == parent) return;
    uint32_t c = t->nodes[group].first_child;
    while (c != NONE) {
        uint32_t next = t->nodes[c].next_sibling;
        move_under(t, c, parent);
        c = next;
    }
    t->nodes[parent].self += t->nodes[group].self;
    t->nodes[group].first_child = NONE;
    if (group != 0) free_node(t, group);
}

static uint64_t collapse_subtree(stack_trie *t, uint32_t id) {
    uint64_t sum = t->nodes[id].self;
    uint32_t c = t->nodes[id].first_child;
    while (c != NONE) {
        uint32_t next = t->nodes[c].next_sibling;
        sum += collapse_subtree(t, c);
        c = next;
    }
    if (t->nodes[id].parent != NONE) hash_remove(t, id);
    if (id != 0) free_node(t, id);
    return sum;
}

uint64_t stack_trie_collapse(stack_trie *t, uint32_t node) {
    if (node == NONE || node >= t->n_nodes || !t->nodes[node].in_use) return 0;
    uint32_t parent = t->nodes[node].parent;
    if (parent != NONE) { /* unlink from the sibling list */
        uint32_t *link = &t->nodes[parent].first_child;
        while (*link != NONE && *link != node) link = &t->nodes[*link].next_sibling;
        if (*link == node) *link = t->nodes[node].next_sibling;
    }
    if (node == 0) { /* the root stays; its children go */
        uint64_t sum = t->nodes[0].self;
        uint32_t c = t->nodes[0].first_child;
        while (c != NONE) {
            uint32_t next = t->nodes[c].next_sibling;
            sum += collapse_subtree(t, c);
            c = next;
        }
        t->nodes[0].first_child = NONE;
        t->nodes[0].self = 0;
        return sum;
    }
    return collapse_subtree(t, node);
}

stack_trie_stats stack_trie_get_stats(const stack_trie *t) {
    stack_trie_stats s = {t->live, t->max_nodes, t->refused};
    return s;
}

uint32_t stack_trie_name(const stack_trie *t, uint32_t node) { return node < t->n_nodes ? t->nodes[node].name : NAME_NONE; }
uint64_t stack_trie_self(const stack_trie *t, uint32_t node) { return node < t->n_nodes ? t->nodes[node].self : 0; }
uint32_t stack_trie_first_child(const stack_trie *t, uint32_t node) {
    return node < t->n_nodes ? t->nodes[node].first_child : NONE;
}
uint32_t stack_trie_next_sibling(const stack_trie *t, uint32_t node) {
    return node < t->n_nodes ? t->nodes[node].next_sibling : NONE;
}
