/*
 * diff.c: the differential flame graph: B (after) drawn with its own widths, coloured by how
 * each frame changed from A (before).
 *
 * Matching is by name path, done once as a loop over B's ids (parents first): a B frame's match
 * is the A child, of its parent's match, with the same name. Colour is the relative change of
 * the frame's total, (B - A) / max(A, B) in [-1, 1]: +1 for a frame new in B, about +0.5 when
 * it doubled, -0.5 when it halved, 0 (white) when equal. This is symmetric in the ratio, unlike
 * (B - A) / A, which would make every slowdown look worse than the matching speed-up.
 * Frames that exist only in A cannot be drawn at B's scale; their count and time go in the
 * notes line. With diff_normalize, A is scaled to B's total first, so that a longer run does not
 * paint everything red.
 */
#include "flamegraph_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct diff_painter {
    const flamegraph_tree *before, *after;
    const uint32_t *before_of; /* per B node: the matching A node, or FG_NONE */
    double before_scale;       /* 1, or B total / A total when normalising */
    const char *count_name;
} diff_painter;

static double before_value(const diff_painter *painter, uint32_t id)
{
    uint32_t match = painter->before_of[id];
    return match == FG_NONE ? 0.0 : painter->before->nodes[match].total * painter->before_scale;
}

static fg_rgb diff_color(void *context, uint32_t id)
{
    const diff_painter *painter = context;
    double before = before_value(painter, id);
    double after = painter->after->nodes[id].total;
    double larger = before > after ? before : after;
    return fg_diff_color(larger > 0 ? (after - before) / larger : 0.0);
}

static void diff_details(void *context, fg_out *out, uint32_t id)
{
    const diff_painter *painter = context;
    double before = before_value(painter, id);
    double after = painter->after->nodes[id].total;
    fg_out_value(out, after, painter->count_name);
    fg_out_str(out, ", ");
    fg_out_percent(out, after, painter->after->nodes[FG_ROOT].total);
    if (painter->before_of[id] == FG_NONE) {
        fg_out_str(out, "; new, not in before");
        return;
    }
    fg_out_str(out, "; before ");
    fg_out_value(out, before, painter->count_name);
    fg_out_str(out, ", ");
    if (after == before) {
        fg_out_str(out, "unchanged");
        return;
    }
    if (before > 0) {
        if (after > before)
            fg_out_char(out, '+');
        fg_out_percent(out, after - before, before);
    } else {
        fg_out_str(out, "was 0");
    }
}

/* Fills before_of[] and counts A's frames that have no counterpart in B (the topmost of each
 * missing subtree, so that time is not counted twice). Returns false when out of memory. */
static bool match_frames(const flamegraph_tree *before, const flamegraph_tree *after,
                         uint32_t *before_of, size_t *only_before_count, double *only_before_value)
{
    uint32_t *name_in_before = malloc(after->name_count * sizeof *name_in_before);
    bool *matched = calloc(before->node_count, sizeof *matched);
    if (name_in_before == NULL || matched == NULL) {
        free(name_in_before);
        free(matched);
        return false;
    }
    for (size_t name = 0; name < after->name_count; name++) {
        const fg_name *entry = &after->names[name];
        name_in_before[name] = fg_tree_find_name(before, after->arena + entry->offset,
                                                 entry->length, entry->hash);
    }
    before_of[FG_ROOT] = FG_ROOT;
    matched[FG_ROOT] = true;
    for (size_t id = 1; id < after->node_count; id++) {
        const fg_node *node = &after->nodes[id];
        uint32_t parent = before_of[node->parent];
        uint32_t name = name_in_before[node->name];
        uint32_t match = parent == FG_NONE || name == FG_NONE
                             ? FG_NONE
                             : fg_tree_find_child(before, parent, name);
        before_of[id] = match;
        if (match != FG_NONE)
            matched[match] = true;
    }
    *only_before_count = 0;
    *only_before_value = 0.0;
    for (size_t id = 1; id < before->node_count; id++) {
        const fg_node *node = &before->nodes[id];
        if (!matched[id] && matched[node->parent] && node->total > 0) {
            (*only_before_count)++;
            *only_before_value += node->total;
        }
    }
    free(name_in_before);
    free(matched);
    return true;
}

/* "before 1.20 s, after 1.35 s (+12.50%); only in before, not drawn: 3 frames, 2.10 ms" */
static void compose_notes(char *text, size_t size, const flamegraph_tree *before,
                          const flamegraph_tree *after, size_t only_before_count,
                          double only_before_value, const char *count_name, bool normalized)
{
    fg_out *out = malloc(sizeof *out);
    text[0] = '\0';
    if (out == NULL)
        return;
    fg_out_init(out, NULL);
    double total_before = before->nodes[FG_ROOT].total, total_after = after->nodes[FG_ROOT].total;
    fg_out_str(out, "before ");
    fg_out_value(out, total_before, count_name);
    fg_out_str(out, ", after ");
    fg_out_value(out, total_after, count_name);
    if (total_before > 0) {
        fg_out_str(out, " (");
        if (total_after >= total_before)
            fg_out_char(out, '+');
        fg_out_percent(out, total_after - total_before, total_before);
        fg_out_char(out, ')');
    }
    if (normalized)
        fg_out_str(out, ", before scaled to after's total");
    if (only_before_count > 0) {
        fg_out_str(out, "; only in before, not drawn: ");
        fg_out_u64(out, only_before_count);
        fg_out_str(out, only_before_count == 1 ? " frame, " : " frames, ");
        fg_out_value(out, only_before_value, count_name);
    }
    size_t length = out->used < size - 1 ? out->used : size - 1;
    memcpy(text, out->buffer, length);
    text[length] = '\0';
    free(out);
}

flamegraph_status flamegraph_write_diff_svg(const flamegraph_tree *before,
                                            const flamegraph_tree *after,
                                            const flamegraph_svg_options *options, FILE *out,
                                            flamegraph_error *err)
{
    if (before == NULL || after == NULL || out == NULL)
        return fg_fail(err, FLAMEGRAPH_ERR_ARGUMENT, 0,
                       "flamegraph_write_diff_svg: missing tree or file");
    if (before->options.flamechart || after->options.flamechart ||
        before->options.reverse != after->options.reverse)
        return fg_fail(err, FLAMEGRAPH_ERR_MODE, 0,
                       "a differential graph needs two merged trees (no --flamechart) built in "
                       "the same direction");
    flamegraph_svg_options resolved = options ? *options : (flamegraph_svg_options){ 0 };
    if (resolved.subtitle == NULL)
        resolved.subtitle = "red: slower in after, blue: faster, white: unchanged; "
                            "stronger colour = larger relative change";

    uint32_t *before_of = malloc(after->node_count * sizeof *before_of);
    size_t only_before_count = 0;
    double only_before_value = 0.0;
    if (before_of == NULL ||
        !match_frames(before, after, before_of, &only_before_count, &only_before_value)) {
        free(before_of);
        return fg_fail(err, FLAMEGRAPH_ERR_NO_MEMORY, 0, "out of memory matching %zu frames",
                       after->node_count);
    }
    double total_before = before->nodes[FG_ROOT].total, total_after = after->nodes[FG_ROOT].total;
    bool normalize = resolved.diff_normalize && total_before > 0 && total_after > 0;
    diff_painter context = {
        .before = before,
        .after = after,
        .before_of = before_of,
        .before_scale = normalize ? total_after / total_before : 1.0,
        .count_name = resolved.count_name,
    };
    char notes[FLAMEGRAPH_ERROR_MESSAGE_BYTES];
    compose_notes(notes, sizeof notes, before, after, only_before_count, only_before_value,
                  resolved.count_name, normalize);
    fg_frame_painter painter = { diff_color, diff_details, &context };
    flamegraph_status status = fg_svg_write_document(after, &resolved, "Differential Flame Graph",
                                                     notes, &painter, out, err);
    free(before_of);
    return status;
}
