/*
 * layout.c: where each frame of a tree goes: sibling order, x extent, which frames are drawn.
 *
 * All passes are loops over node ids, relying on parent id < child id (see tree.c):
 *   1. group children by parent with one counting sort (stable, so a group stays in creation
 *      order, which in a flame chart is time order);
 *   2. merged trees: rank the distinct names once (byte order, like flamegraph.pl's sorted input),
 *      then sort each group by rank: integer compares instead of string compares per pair;
 *   3. x extents: a parent's children are laid side by side from its left edge; a child whose
 *      total would run past its parent (inconsistent timings in a capture) is clipped;
 *   4. depth-first walk from the root with an explicit stack, skipping frames narrower than the
 *      minimum and everything under them; this gives the drawing order, which depends only on
 *      the tree's content, not on the order stacks arrived in.
 * Memory: about 40 bytes per node, allocated once per layout (never per node).
 */
#include "flamegraph_internal.h"

#include <stdlib.h>
#include <string.h>

typedef int (*compare_ids)(const void *context, uint32_t a, uint32_t b);

/* Stable merge sort of ids with a context (C11's qsort has none); `scratch` holds `count`. */
static void merge_sort_ids(uint32_t *ids, uint32_t *scratch, size_t count, compare_ids compare,
                           const void *context)
{
    if (count < 2)
        return;
    if (count <= 12) { /* small groups, the common case: insertion sort */
        for (size_t i = 1; i < count; i++) {
            uint32_t id = ids[i];
            size_t j = i;
            while (j > 0 && compare(context, ids[j - 1], id) > 0) {
                ids[j] = ids[j - 1];
                j--;
            }
            ids[j] = id;
        }
        return;
    }
    size_t half = count / 2;
    merge_sort_ids(ids, scratch, half, compare, context);
    merge_sort_ids(ids + half, scratch, count - half, compare, context);
    size_t left = 0, right = half, out = 0;
    while (left < half && right < count)
        scratch[out++] = compare(context, ids[right], ids[left]) < 0 ? ids[right++] : ids[left++];
    while (left < half)
        scratch[out++] = ids[left++];
    while (right < count)
        scratch[out++] = ids[right++];
    memcpy(ids, scratch, count * sizeof *ids);
}

static int compare_name_bytes(const void *context, uint32_t a, uint32_t b)
{
    const flamegraph_tree *tree = context;
    const fg_name *name_a = &tree->names[a], *name_b = &tree->names[b];
    size_t common = name_a->length < name_b->length ? name_a->length : name_b->length;
    int order = memcmp(tree->arena + name_a->offset, tree->arena + name_b->offset, common);
    if (order != 0)
        return order;
    return (name_a->length > name_b->length) - (name_a->length < name_b->length);
}

typedef struct rank_context {
    const flamegraph_tree *tree;
    const uint32_t *rank_of_name;
} rank_context;

static int compare_node_names(const void *context, uint32_t a, uint32_t b)
{
    const rank_context *ranks = context;
    uint32_t rank_a = ranks->rank_of_name[ranks->tree->nodes[a].name];
    uint32_t rank_b = ranks->rank_of_name[ranks->tree->nodes[b].name];
    return (rank_a > rank_b) - (rank_a < rank_b);
}

void fg_layout_free(fg_layout *layout)
{
    free(layout->x);
    free(layout->width);
    free(layout->order);
    free(layout->children);
    free(layout->child_start);
    memset(layout, 0, sizeof *layout);
}

/* Sorts each sibling group by name; returns false when out of memory. */
static bool sort_siblings_by_name(fg_layout *layout, const flamegraph_tree *tree, uint32_t *scratch)
{
    size_t name_count = tree->name_count;
    uint32_t *sorted_names = malloc(name_count * sizeof *sorted_names);
    uint32_t *rank_of_name = malloc(name_count * sizeof *rank_of_name);
    if (sorted_names == NULL || rank_of_name == NULL) {
        free(sorted_names);
        free(rank_of_name);
        return false;
    }
    for (size_t i = 0; i < name_count; i++)
        sorted_names[i] = (uint32_t)i;
    merge_sort_ids(sorted_names, scratch, name_count, compare_name_bytes, tree);
    for (size_t i = 0; i < name_count; i++)
        rank_of_name[sorted_names[i]] = (uint32_t)i;
    rank_context ranks = { tree, rank_of_name };
    for (size_t parent = 0; parent < tree->node_count; parent++) {
        uint32_t begin = layout->child_start[parent], end = layout->child_start[parent + 1];
        merge_sort_ids(layout->children + begin, scratch, end - begin, compare_node_names, &ranks);
    }
    free(sorted_names);
    free(rank_of_name);
    return true;
}

flamegraph_status fg_layout_build(fg_layout *layout, const flamegraph_tree *tree, double min_value)
{
    memset(layout, 0, sizeof *layout);
    size_t count = tree->node_count;
    size_t scratch_count = count > tree->name_count ? count : tree->name_count;
    layout->x = malloc(count * sizeof *layout->x);
    layout->width = malloc(count * sizeof *layout->width);
    layout->order = malloc(count * sizeof *layout->order);
    layout->children = malloc(count * sizeof *layout->children);
    layout->child_start = calloc(count + 1, sizeof *layout->child_start);
    uint32_t *scratch = malloc((scratch_count + 1) * sizeof *scratch);
    if (layout->x == NULL || layout->width == NULL || layout->order == NULL ||
        layout->children == NULL || layout->child_start == NULL || scratch == NULL) {
        free(scratch);
        fg_layout_free(layout);
        return FLAMEGRAPH_ERR_NO_MEMORY;
    }

    /* 1. Children grouped by parent, in id order within a group. */
    const fg_node *nodes = tree->nodes;
    for (size_t id = 1; id < count; id++)
        layout->child_start[nodes[id].parent + 1]++;
    for (size_t p = 0; p < count; p++)
        layout->child_start[p + 1] += layout->child_start[p];
    memcpy(scratch, layout->child_start, count * sizeof *scratch); /* next free slot per group */
    for (size_t id = 1; id < count; id++)
        layout->children[scratch[nodes[id].parent]++] = (uint32_t)id;

    /* 2. Merged trees: siblings in name order. */
    if (!tree->options.flamechart && !sort_siblings_by_name(layout, tree, scratch)) {
        free(scratch);
        fg_layout_free(layout);
        return FLAMEGRAPH_ERR_NO_MEMORY;
    }

    /* 3. Extents. */
    layout->x[FG_ROOT] = 0.0;
    layout->width[FG_ROOT] = nodes[FG_ROOT].total;
    for (size_t parent = 0; parent < count; parent++) {
        double cursor = layout->x[parent];
        double end = cursor + layout->width[parent];
        for (uint32_t k = layout->child_start[parent]; k < layout->child_start[parent + 1]; k++) {
            uint32_t child = layout->children[k];
            double width = nodes[child].total;
            if (width > end - cursor)
                width = end - cursor > 0 ? end - cursor : 0.0;
            layout->x[child] = cursor;
            layout->width[child] = width;
            cursor += width;
        }
    }

    /* 4. Drawn frames, depth first, left to right. `scratch` is the stack (each node is pushed
     * at most once, so `count` entries suffice). */
    size_t stack_size = 0;
    if (layout->width[FG_ROOT] > 0.0)
        scratch[stack_size++] = FG_ROOT;
    while (stack_size > 0) {
        uint32_t id = scratch[--stack_size];
        layout->order[layout->drawn_count++] = id;
        if (nodes[id].depth > layout->max_drawn_depth)
            layout->max_drawn_depth = nodes[id].depth;
        for (uint32_t k = layout->child_start[id + 1]; k > layout->child_start[id]; k--) {
            uint32_t child = layout->children[k - 1];
            double width = layout->width[child];
            if (width > 0.0 && width >= min_value)
                scratch[stack_size++] = child;
        }
    }
    free(scratch);
    return FLAMEGRAPH_OK;
}
