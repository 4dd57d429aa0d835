/*
 * tree.c: the stack tree: interned names, one node per distinct path, totals, capacity.
 *
 * Shape and costs:
 * - Names are interned once into one growing arena (offsets, not pointers, so it may move), and
 *   nodes refer to them by id: memory grows with distinct nodes and distinct names only.
 * - A node's children are found through one open-addressing table keyed by (parent, name),
 *   merged mode only. Before hashing anything, each step first compares the name with the
 *   parent's most recently used child: consecutive stacks from a profiler share long prefixes, so
 *   that single compare usually settles the step. In flamechart mode that child is the only one
 *   a new frame may merge with, so no table is kept at all.
 * - Adding a stack resolves the existing prefix, checks the capacity for what is missing, and
 *   only then creates nodes and adds the value: a stack is either kept whole or dropped whole
 *   (counted in the stats), so the totals always add up.
 * - Scopes (profiler spans given in begin order with a depth) keep a stack of open scopes: the
 *   parent's node is known, so a scope costs one child look-up and its inclusive duration is
 *   added to its node directly. Reversed trees need each scope's own time, known only when the
 *   scope closes; they then insert that own time as a reversed stack.
 * Not done: per-node heap allocation, recursive walks (a parent id is always smaller than its
 * children's ids, later passes loop over ids).
 */
#include "flamegraph_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Initial capacities: small, so that tiny graphs (tests, one-frame captures) stay tiny. */
#define INITIAL_NODES 1024u
#define INITIAL_NAMES 256u
#define INITIAL_ARENA_BYTES (16u << 10)
#define INITIAL_NAME_SLOTS 512u
#define INITIAL_CHILD_SLOTS 2048u

uint64_t fg_hash_bytes(const char *bytes, size_t length)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < length; i++) {
        hash ^= (unsigned char)bytes[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

/* splitmix64's finaliser: spreads (parent, name) over the child table. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t child_key_hash(uint32_t parent, uint32_t name)
{
    return mix64(((uint64_t)parent << 32) | name);
}

/* Length of a C string, stopping at `limit` (names longer than that are truncated). */
static size_t bounded_length(const char *text, size_t limit)
{
    size_t length = 0;
    while (length < limit && text[length] != '\0')
        length++;
    return length;
}

/* Grows *array to hold at least `needed` elements, doubling, never above `limit`. */
static bool grow(void **array, size_t *capacity, size_t element_size, size_t needed, size_t limit)
{
    if (needed <= *capacity)
        return true;
    if (needed > limit)
        return false;
    size_t new_capacity = *capacity ? *capacity : 16;
    while (new_capacity < needed)
        new_capacity = new_capacity > limit / 2 ? limit : new_capacity * 2;
    if (new_capacity > SIZE_MAX / element_size)
        return false;
    void *moved = realloc(*array, new_capacity * element_size);
    if (moved == NULL)
        return false;
    *array = moved;
    *capacity = new_capacity;
    return true;
}

/* ----- name index -------------------------------------------------------------------------- */

uint32_t fg_tree_find_name(const flamegraph_tree *tree, const char *text, size_t length,
                           uint64_t hash)
{
    size_t mask = tree->name_slot_count - 1;
    uint64_t tag = hash >> 32;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        uint64_t slot = tree->name_slots[i];
        if (slot == 0)
            return FG_NONE;
        if ((slot >> 32) == tag) {
            uint32_t id = (uint32_t)slot - 1;
            const fg_name *name = &tree->names[id];
            if (name->length == length && memcmp(tree->arena + name->offset, text, length) == 0)
                return id;
        }
    }
}

static void name_slots_put(uint64_t *slots, size_t slot_count, uint64_t hash, uint32_t id)
{
    size_t mask = slot_count - 1;
    size_t i = (size_t)hash & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = ((hash >> 32) << 32) | ((uint64_t)id + 1);
}

static bool name_slots_grow(flamegraph_tree *tree)
{
    size_t count = tree->name_slot_count * 2;
    uint64_t *slots = calloc(count, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t id = 0; id < tree->name_count; id++)
        name_slots_put(slots, count, tree->names[id].hash, (uint32_t)id);
    free(tree->name_slots);
    tree->name_slots = slots;
    tree->name_slot_count = count;
    return true;
}

/* Returns the id of the name, adding it if new; FG_NONE when out of memory or past the arena cap
 * (the caller has checked the cap, so that means memory). */
static uint32_t intern_name(flamegraph_tree *tree, const char *text, size_t length, uint64_t hash)
{
    uint32_t id = fg_tree_find_name(tree, text, length, hash);
    if (id != FG_NONE)
        return id;
    if ((tree->name_count + 1) * 2 > tree->name_slot_count && !name_slots_grow(tree))
        return FG_NONE;
    if (!grow((void **)&tree->names, &tree->name_capacity, sizeof *tree->names,
              tree->name_count + 1, tree->options.max_nodes))
        return FG_NONE;
    if (!grow((void **)&tree->arena, &tree->arena_capacity, 1, tree->arena_used + length + 1,
              tree->options.max_name_bytes))
        return FG_NONE;
    memcpy(tree->arena + tree->arena_used, text, length);
    tree->arena[tree->arena_used + length] = '\0';
    id = (uint32_t)tree->name_count++;
    tree->names[id] = (fg_name){ .offset = (uint32_t)tree->arena_used,
                                 .length = (uint32_t)length,
                                 .hash = hash };
    tree->arena_used += length + 1;
    name_slots_put(tree->name_slots, tree->name_slot_count, hash, id);
    return id;
}

/* ----- child index (merged mode) ----------------------------------------------------------- */

uint32_t fg_tree_find_child(const flamegraph_tree *tree, uint32_t parent, uint32_t name)
{
    if (tree->child_slot_count == 0) { /* flamechart: only the most recent child is eligible */
        uint32_t last = tree->nodes[parent].last_child;
        return last != FG_NONE && tree->nodes[last].name == name ? last : FG_NONE;
    }
    uint64_t hash = child_key_hash(parent, name);
    size_t mask = tree->child_slot_count - 1;
    uint64_t tag = hash >> 32;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        uint64_t slot = tree->child_slots[i];
        if (slot == 0)
            return FG_NONE;
        if ((slot >> 32) == tag) {
            uint32_t id = (uint32_t)slot - 1;
            if (tree->nodes[id].parent == parent && tree->nodes[id].name == name)
                return id;
        }
    }
}

static void child_slots_put(uint64_t *slots, size_t slot_count, uint32_t parent, uint32_t name,
                            uint32_t id)
{
    uint64_t hash = child_key_hash(parent, name);
    size_t mask = slot_count - 1;
    size_t i = (size_t)hash & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = ((hash >> 32) << 32) | ((uint64_t)id + 1);
}

static bool child_slots_grow(flamegraph_tree *tree)
{
    size_t count = tree->child_slot_count * 2;
    uint64_t *slots = calloc(count, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t id = 1; id < tree->node_count; id++)
        child_slots_put(slots, count, tree->nodes[id].parent, tree->nodes[id].name, (uint32_t)id);
    free(tree->child_slots);
    tree->child_slots = slots;
    tree->child_slot_count = count;
    return true;
}

/* Appends a node; the caller has checked the node cap. FG_NONE when out of memory. */
static uint32_t create_node(flamegraph_tree *tree, uint32_t parent, uint32_t name)
{
    if (!grow((void **)&tree->nodes, &tree->node_capacity, sizeof *tree->nodes,
              tree->node_count + 1, tree->options.max_nodes))
        return FG_NONE;
    if (tree->child_slot_count != 0 && (tree->node_count + 1) * 2 > tree->child_slot_count &&
        !child_slots_grow(tree))
        return FG_NONE;
    uint32_t id = (uint32_t)tree->node_count++;
    uint32_t depth = parent == FG_NONE ? 0 : tree->nodes[parent].depth + 1;
    tree->nodes[id] = (fg_node){ .parent = parent, .name = name, .last_child = FG_NONE,
                                 .depth = depth, .total = 0.0 };
    if (parent != FG_NONE) {
        tree->nodes[parent].last_child = id;
        if (tree->child_slot_count != 0)
            child_slots_put(tree->child_slots, tree->child_slot_count, parent, name, id);
    }
    if (depth > tree->max_depth)
        tree->max_depth = depth;
    return id;
}

/* ----- one step down the tree -------------------------------------------------------------- */

/* What is known about a frame being looked up: filled lazily, the hash only when needed. */
typedef struct frame_lookup {
    const char *text;
    size_t length;
    uint64_t hash;
    uint32_t name; /* FG_NONE: not interned (or not looked up) */
    bool hashed;
} frame_lookup;

static void lookup_name(const flamegraph_tree *tree, frame_lookup *frame)
{
    if (!frame->hashed) {
        frame->hash = fg_hash_bytes(frame->text, frame->length);
        frame->name = fg_tree_find_name(tree, frame->text, frame->length, frame->hash);
        frame->hashed = true;
    }
}

/* The existing child of `parent` for `frame`, or FG_NONE. */
static uint32_t find_child_for(const flamegraph_tree *tree, uint32_t parent, frame_lookup *frame)
{
    uint32_t last = tree->nodes[parent].last_child;
    if (last != FG_NONE) {
        const fg_name *name = &tree->names[tree->nodes[last].name];
        if (name->length == frame->length &&
            memcmp(tree->arena + name->offset, frame->text, frame->length) == 0)
            return last;
    }
    if (tree->child_slot_count == 0) /* flamechart: nothing else may merge */
        return FG_NONE;
    lookup_name(tree, frame);
    return frame->name == FG_NONE ? FG_NONE : fg_tree_find_child(tree, parent, frame->name);
}

/* ----- adding stacks ----------------------------------------------------------------------- */

static void count_dropped(flamegraph_tree *tree, double value)
{
    tree->dropped_stacks++;
    tree->dropped_value += value;
}

/* The common insertion: frames[0..depth) root first, already reversed if the tree is. */
static flamegraph_status add_frames(flamegraph_tree *tree, frame_lookup *frames, size_t depth,
                                    double value)
{
    uint32_t *path = tree->path;
    uint32_t parent = FG_ROOT;
    size_t level = 0;
    for (; level < depth; level++) {
        uint32_t child = find_child_for(tree, parent, &frames[level]);
        if (child == FG_NONE)
            break;
        path[level] = child;
        parent = child;
    }
    if (level < depth) {
        /* Check the capacity for everything missing before creating anything. */
        size_t new_bytes = 0, new_names = 0;
        for (size_t i = level; i < depth; i++) {
            lookup_name(tree, &frames[i]);
            if (frames[i].name == FG_NONE) {
                new_bytes += frames[i].length + 1;
                new_names++;
            }
        }
        if (depth - level > tree->options.max_nodes - tree->node_count ||
            new_names > tree->options.max_nodes - tree->name_count ||
            new_bytes > tree->options.max_name_bytes - tree->arena_used) {
            count_dropped(tree, value);
            return FLAMEGRAPH_DROPPED;
        }
        for (; level < depth; level++) {
            frame_lookup *frame = &frames[level];
            uint32_t name = frame->name != FG_NONE
                                ? frame->name
                                : intern_name(tree, frame->text, frame->length, frame->hash);
            uint32_t child = name == FG_NONE ? FG_NONE : create_node(tree, parent, name);
            if (child == FG_NONE) {
                /* Out of memory midway: the nodes made so far have total 0 and draw nothing. */
                count_dropped(tree, value);
                return FLAMEGRAPH_ERR_NO_MEMORY;
            }
            path[level] = child;
            parent = child;
        }
    }
    tree->nodes[FG_ROOT].total += value;
    parent = FG_ROOT;
    for (size_t i = 0; i < depth; i++) {
        tree->nodes[path[i]].total += value;
        tree->nodes[parent].last_child = path[i]; /* the fast path for the next stack */
        parent = path[i];
    }
    tree->stacks++;
    return FLAMEGRAPH_OK;
}

flamegraph_status flamegraph_tree_add_stack_fractional(flamegraph_tree *tree,
                                                       const char *const *names, size_t depth,
                                                       double value)
{
    if (tree == NULL || (names == NULL && depth > 0) || !(value >= 0.0) || isinf(value))
        return FLAMEGRAPH_ERR_ARGUMENT;
    if (value == 0.0)
        return FLAMEGRAPH_OK;
    if (depth > FLAMEGRAPH_MAX_DEPTH) {
        count_dropped(tree, value);
        return FLAMEGRAPH_DROPPED;
    }
    frame_lookup *frames = (frame_lookup *)tree->path_frames;
    for (size_t i = 0; i < depth; i++) {
        const char *text = names[tree->options.reverse ? depth - 1 - i : i];
        if (text == NULL)
            return FLAMEGRAPH_ERR_ARGUMENT;
        frames[i] = (frame_lookup){ .text = text,
                                    .length = bounded_length(text, FLAMEGRAPH_MAX_NAME_LENGTH),
                                    .name = FG_NONE };
    }
    return add_frames(tree, frames, depth, value);
}

flamegraph_status flamegraph_tree_add_stack(flamegraph_tree *tree, const char *const *names,
                                            size_t depth, uint64_t value)
{
    return flamegraph_tree_add_stack_fractional(tree, names, depth, (double)value);
}

/* ----- adding scopes ----------------------------------------------------------------------- */

/* Closes the innermost open scope: its duration counts among its parent's children; in a
 * reversed tree its own time is inserted now as a leaf-first stack. */
static void close_top_scope(flamegraph_tree *tree)
{
    fg_open_scope *scope = &tree->open[--tree->open_count];
    bool dropped = tree->open_count >= tree->open_dropped_from;
    if (tree->open_count <= tree->open_dropped_from)
        tree->open_dropped_from = SIZE_MAX;
    if (dropped)
        return;
    if (tree->open_count > 0)
        tree->open[tree->open_count - 1].children += scope->duration;
    if (!tree->options.reverse)
        return;
    double own = scope->duration - scope->children;
    if (!(own > 0.0))
        return;
    /* Leaf first: the closing scope, then its ancestors. Names are interned already, so the
     * arena does not move while the frames point into it. */
    size_t depth = tree->open_count + 1;
    frame_lookup *frames = (frame_lookup *)tree->path_frames;
    for (size_t i = 0; i < depth; i++) {
        uint32_t name = tree->open[depth - 1 - i].name;
        frames[i] = (frame_lookup){ .text = fg_name_text(tree, name),
                                    .length = tree->names[name].length,
                                    .hash = tree->names[name].hash,
                                    .name = name,
                                    .hashed = true };
    }
    (void)add_frames(tree, frames, depth, own);
}

void flamegraph_tree_end_scopes(flamegraph_tree *tree)
{
    if (tree == NULL)
        return;
    while (tree->open_count > 0)
        close_top_scope(tree);
}

flamegraph_status flamegraph_tree_add_scope(flamegraph_tree *tree, const char *name, size_t depth,
                                            uint64_t duration)
{
    if (tree == NULL || name == NULL)
        return FLAMEGRAPH_ERR_ARGUMENT;
    if (tree->open == NULL) {
        tree->open = malloc(FLAMEGRAPH_MAX_DEPTH * sizeof *tree->open);
        if (tree->open == NULL)
            return FLAMEGRAPH_ERR_NO_MEMORY;
    }
    double value = (double)duration;
    if (depth > tree->open_count) {
        /* A skipped level: the input is inconsistent; refuse the scope, keep the open ones. */
        count_dropped(tree, value);
        return FLAMEGRAPH_ERR_ARGUMENT;
    }
    if (depth >= FLAMEGRAPH_MAX_DEPTH) {
        count_dropped(tree, value);
        return FLAMEGRAPH_DROPPED;
    }
    while (tree->open_count > depth)
        close_top_scope(tree);

    fg_open_scope *scope = &tree->open[tree->open_count];
    *scope = (fg_open_scope){ .node = FG_NONE, .name = FG_NONE, .duration = value };
    tree->open_count++;
    if (tree->open_dropped_from < tree->open_count) { /* inside a dropped scope */
        tree->dropped_stacks++;
        return FLAMEGRAPH_DROPPED;
    }

    frame_lookup frame = { .text = name,
                           .length = bounded_length(name, FLAMEGRAPH_MAX_NAME_LENGTH),
                           .name = FG_NONE };
    flamegraph_status status = FLAMEGRAPH_OK;
    if (tree->options.reverse) {
        /* Only the name now; the node is made when the scope closes and its own time is known. */
        lookup_name(tree, &frame);
        if (frame.name == FG_NONE) {
            if (tree->name_count >= tree->options.max_nodes ||
                frame.length + 1 > tree->options.max_name_bytes - tree->arena_used)
                status = FLAMEGRAPH_DROPPED;
            else if ((frame.name = intern_name(tree, frame.text, frame.length, frame.hash)) ==
                     FG_NONE)
                status = FLAMEGRAPH_ERR_NO_MEMORY;
        }
        scope->name = frame.name;
    } else {
        uint32_t parent = depth == 0 ? FG_ROOT : tree->open[depth - 1].node;
        uint32_t child = find_child_for(tree, parent, &frame);
        if (child == FG_NONE) {
            lookup_name(tree, &frame);
            if (tree->node_count >= tree->options.max_nodes ||
                (frame.name == FG_NONE &&
                 (tree->name_count >= tree->options.max_nodes ||
                  frame.length + 1 > tree->options.max_name_bytes - tree->arena_used))) {
                status = FLAMEGRAPH_DROPPED;
            } else {
                uint32_t id = frame.name != FG_NONE
                                  ? frame.name
                                  : intern_name(tree, frame.text, frame.length, frame.hash);
                child = id == FG_NONE ? FG_NONE : create_node(tree, parent, id);
                if (child == FG_NONE)
                    status = FLAMEGRAPH_ERR_NO_MEMORY;
            }
        }
        if (child != FG_NONE) {
            tree->nodes[parent].last_child = child;
            tree->nodes[child].total += value;
            if (depth == 0)
                tree->nodes[FG_ROOT].total += value;
            scope->node = child;
            scope->name = tree->nodes[child].name;
        }
    }
    if (status != FLAMEGRAPH_OK) {
        tree->open_dropped_from = tree->open_count - 1;
        count_dropped(tree, value);
        return status;
    }
    tree->stacks++;
    return FLAMEGRAPH_OK;
}

/* ----- life cycle and stats ---------------------------------------------------------------- */

flamegraph_tree *flamegraph_tree_create(const flamegraph_tree_options *options)
{
    flamegraph_tree_options resolved = options ? *options : (flamegraph_tree_options){ 0 };
    if (resolved.max_nodes == 0)
        resolved.max_nodes = FLAMEGRAPH_DEFAULT_MAX_NODES;
    if (resolved.max_name_bytes == 0)
        resolved.max_name_bytes = FLAMEGRAPH_DEFAULT_MAX_NAME_BYTES;
    if (resolved.max_nodes > FLAMEGRAPH_LIMIT_MAX_NODES ||
        resolved.max_name_bytes > UINT32_MAX || resolved.max_name_bytes < sizeof FG_ROOT_NAME)
        return NULL;

    flamegraph_tree *tree = calloc(1, sizeof *tree);
    if (tree == NULL)
        return NULL;
    tree->options = resolved;
    tree->open_dropped_from = SIZE_MAX;
    tree->name_slot_count = INITIAL_NAME_SLOTS;
    tree->name_slots = calloc(tree->name_slot_count, sizeof *tree->name_slots);
    if (!resolved.flamechart) {
        tree->child_slot_count = INITIAL_CHILD_SLOTS;
        tree->child_slots = calloc(tree->child_slot_count, sizeof *tree->child_slots);
    }
    tree->path = malloc(FLAMEGRAPH_MAX_DEPTH * sizeof *tree->path);
    tree->path_frames = malloc(FLAMEGRAPH_MAX_DEPTH * sizeof(frame_lookup));
    bool ok = tree->name_slots != NULL && tree->path != NULL && tree->path_frames != NULL &&
              (resolved.flamechart || tree->child_slots != NULL) &&
              grow((void **)&tree->nodes, &tree->node_capacity, sizeof *tree->nodes,
                   INITIAL_NODES < resolved.max_nodes ? INITIAL_NODES : resolved.max_nodes,
                   resolved.max_nodes) &&
              grow((void **)&tree->names, &tree->name_capacity, sizeof *tree->names,
                   INITIAL_NAMES < resolved.max_nodes ? INITIAL_NAMES : resolved.max_nodes,
                   resolved.max_nodes) &&
              grow((void **)&tree->arena, &tree->arena_capacity, 1,
                   INITIAL_ARENA_BYTES < resolved.max_name_bytes ? INITIAL_ARENA_BYTES
                                                                 : resolved.max_name_bytes,
                   resolved.max_name_bytes);
    uint32_t root_name = FG_NONE;
    if (ok)
        root_name = intern_name(tree, FG_ROOT_NAME, sizeof FG_ROOT_NAME - 1,
                                fg_hash_bytes(FG_ROOT_NAME, sizeof FG_ROOT_NAME - 1));
    if (!ok || root_name == FG_NONE || create_node(tree, FG_NONE, root_name) != FG_ROOT) {
        flamegraph_tree_destroy(tree);
        return NULL;
    }
    return tree;
}

void flamegraph_tree_destroy(flamegraph_tree *tree)
{
    if (tree == NULL)
        return;
    free(tree->nodes);
    free(tree->names);
    free(tree->arena);
    free(tree->name_slots);
    free(tree->child_slots);
    free(tree->path);
    free(tree->path_frames);
    free(tree->open);
    free(tree);
}

flamegraph_tree_stats flamegraph_tree_get_stats(const flamegraph_tree *tree)
{
    flamegraph_tree_stats stats = { 0 };
    if (tree == NULL)
        return stats;
    stats.node_count = tree->node_count;
    stats.max_nodes = tree->options.max_nodes;
    stats.name_count = tree->name_count;
    stats.name_bytes = tree->arena_used;
    stats.max_depth = tree->max_depth;
    stats.total = tree->nodes[FG_ROOT].total;
    stats.stacks = tree->stacks;
    stats.dropped_stacks = tree->dropped_stacks;
    stats.dropped_value = tree->dropped_value;
    return stats;
}

/* ----- relabelled copies ------------------------------------------------------------------- */

/* A label's text, copied: the callbacks may reuse their buffer on the next call. */
static char *copy_label(const char *text)
{
    size_t length = bounded_length(text, FLAMEGRAPH_MAX_NAME_LENGTH);
    char *copy = malloc(length + 1);
    if (copy != NULL) {
        memcpy(copy, text, length);
        copy[length] = '\0';
    }
    return copy;
}

flamegraph_tree *flamegraph_tree_relabel(const flamegraph_tree *source,
                                         const flamegraph_tree_options *options,
                                         const flamegraph_relabel *relabel,
                                         flamegraph_status *status)
{
    *status = FLAMEGRAPH_ERR_NO_MEMORY;
    if (source == NULL || source->options.reverse) {
        *status = FLAMEGRAPH_ERR_ARGUMENT;
        return NULL;
    }
    flamegraph_tree *copy = flamegraph_tree_create(options);
    size_t nodes = source->node_count, names = source->name_count;
    double *children_total = calloc(nodes, sizeof *children_total);
    char **node_label = calloc(nodes, sizeof *node_label); /* frames at depth 1 */
    char **name_label = calloc(names, sizeof *name_label); /* every other frame, by name */
    bool *left_out = calloc(nodes, sizeof *left_out);
    const char **path = malloc(FLAMEGRAPH_MAX_DEPTH * sizeof *path);
    bool ok = copy != NULL && children_total != NULL && node_label != NULL && name_label != NULL &&
              left_out != NULL && path != NULL;
    for (size_t id = 1; ok && id < nodes; id++)
        children_total[source->nodes[id].parent] += source->nodes[id].total;
    /* Parents come before their children (smaller ids): one pass labels and copies. */
    for (size_t id = 1; ok && id < nodes; id++) {
        const fg_node *node = &source->nodes[id];
        const char *text = fg_name_text(source, node->name);
        if (node->depth == 1) {
            const char *label = relabel && relabel->root ? relabel->root(relabel->context, text) : text;
            if (label == NULL) {
                left_out[id] = true;
                continue;
            }
            ok = (node_label[id] = copy_label(label)) != NULL;
        } else if (left_out[node->parent]) {
            left_out[id] = true;
            continue;
        } else if (name_label[node->name] == NULL) {
            const char *label = relabel && relabel->name ? relabel->name(relabel->context, text) : text;
            ok = (name_label[node->name] = copy_label(label ? label : text)) != NULL;
        }
        double own = node->total - children_total[id];
        if (!ok || !(own > 0.0) || node->depth > FLAMEGRAPH_MAX_DEPTH)
            continue;
        for (uint32_t at = (uint32_t)id; at != FG_ROOT; at = source->nodes[at].parent) {
            const fg_node *step = &source->nodes[at];
            path[step->depth - 1] = step->depth == 1 ? node_label[at] : name_label[step->name];
        }
        flamegraph_status added = flamegraph_tree_add_stack_fractional(copy, path, node->depth, own);
        ok = added != FLAMEGRAPH_ERR_NO_MEMORY && added != FLAMEGRAPH_ERR_ARGUMENT;
    }
    /* What the source itself dropped stays counted. */
    if (ok) {
        copy->dropped_stacks += source->dropped_stacks;
        copy->dropped_value += source->dropped_value;
    }
    for (size_t id = 0; node_label != NULL && id < nodes; id++)
        free(node_label[id]);
    for (size_t id = 0; name_label != NULL && id < names; id++)
        free(name_label[id]);
    free(children_total);
    free(node_label);
    free(name_label);
    free(left_out);
    free(path);
    if (!ok) {
        flamegraph_tree_destroy(copy);
        return NULL;
    }
    *status = FLAMEGRAPH_OK;
    return copy;
}
