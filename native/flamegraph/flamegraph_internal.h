/*
 * flamegraph_internal.h: what the files of the flame graph library share and nobody else sees.
 *
 * The tree is stored as flat arrays indexed by 32-bit ids, not as linked heap nodes: one
 * allocation per array (grown by doubling up to the cap), ids instead of pointers so arrays may
 * move, and a parent id always smaller than its children's, which lets every later pass (totals,
 * layout, diff matching) run as a plain loop over ids instead of a recursion.
 * Tests may include this header to look inside (white-box tests).
 */
#ifndef VOR_FLAMEGRAPH_INTERNAL_H
#define VOR_FLAMEGRAPH_INTERNAL_H

#include "flamegraph.h"

#include <stdarg.h>

#define FG_NONE UINT32_MAX /* "no node" / "no name" */
#define FG_ROOT 0u         /* the root node's id */
#define FG_ROOT_NAME "all"

/* ----- tree ------------------------------------------------------------------------------- */

typedef struct fg_node {
    uint32_t parent;     /* FG_NONE for the root; always < this node's id otherwise */
    uint32_t name;       /* id in tree->names */
    uint32_t last_child; /* most recently created or visited child, FG_NONE if none: the flame
                            chart's merge rule and the merged mode's fast path */
    uint32_t depth;      /* root = 0 */
    double total;        /* value of this frame, children included */
} fg_node;

typedef struct fg_name {
    uint32_t offset; /* into tree->arena; the name is NUL-terminated there */
    uint32_t length; /* bytes, without the NUL */
    uint64_t hash;   /* fg_hash_bytes() of the name: index key and deterministic colour */
} fg_name;

typedef struct fg_open_scope {
    uint32_t node;       /* FG_NONE when dropped, or in reverse mode */
    uint32_t name;       /* FG_NONE when dropped */
    double duration;
    double children;     /* sum of the durations of its kept children */
} fg_open_scope;

struct flamegraph_tree {
    flamegraph_tree_options options; /* resolved: no zero left */

    fg_node *nodes;
    size_t node_count, node_capacity;

    fg_name *names;
    size_t name_count, name_capacity;
    char *arena;
    size_t arena_used, arena_capacity;

    /* Open-addressing indexes; a slot holds (hash high bits << 32) | (id + 1), 0 = empty. */
    uint64_t *name_slots;
    size_t name_slot_count;  /* power of two */
    uint64_t *child_slots;   /* merged mode only: key (parent, name) -> child id */
    size_t child_slot_count; /* power of two, 0 in flamechart mode */

    uint32_t *path;       /* scratch: node ids of the stack being added, FLAMEGRAPH_MAX_DEPTH */
    void *path_frames;    /* scratch: what is known of each frame being added (a type private to
                             tree.c), FLAMEGRAPH_MAX_DEPTH of them */
    fg_open_scope *open;  /* open scopes, FLAMEGRAPH_MAX_DEPTH, allocated on first use */
    size_t open_count;
    size_t open_dropped_from; /* open scopes at or above this depth are dropped; SIZE_MAX = none */

    size_t max_depth;
    uint64_t stacks;
    uint64_t dropped_stacks;
    double dropped_value;
};

/* 64-bit FNV-1a: stable across runs and machines (deterministic colours depend on it). */
uint64_t fg_hash_bytes(const char *bytes, size_t length);

static inline const char *fg_name_text(const flamegraph_tree *tree, uint32_t name)
{
    return tree->arena + tree->names[name].offset;
}

/* Look-ups that never insert (used by the diff to match B's frames in A). */
uint32_t fg_tree_find_name(const flamegraph_tree *tree, const char *text, size_t length,
                           uint64_t hash);
uint32_t fg_tree_find_child(const flamegraph_tree *tree, uint32_t parent, uint32_t name);

/* ----- errors ----------------------------------------------------------------------------- */

/* Sets err (if not NULL) to status, line and a printf-formatted message; returns status. */
flamegraph_status fg_fail(flamegraph_error *err, flamegraph_status status, uint64_t line,
                          const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void fg_clear_error(flamegraph_error *err);

/* ----- layout (layout.c) ------------------------------------------------------------------ */

/* Where each frame goes, in value units (the SVG writer scales to pixels). Arrays are indexed by
 * node id; `order` lists the drawn nodes in depth-first pre-order, siblings left to right. */
typedef struct fg_layout {
    double *x;         /* left edge; 0 = left edge of the root */
    double *width;     /* the node's total, clipped to its parent's right edge */
    uint32_t *order;   /* drawn nodes */
    size_t drawn_count;
    uint32_t max_drawn_depth;
    uint32_t *children;     /* scratch and sibling lists: children of p are */
    uint32_t *child_start;  /* children[child_start[p] .. child_start[p + 1]) */
} fg_layout;

/* Lays out `tree`: siblings sorted by name (merged) or kept in creation = time order
 * (flamechart); nodes narrower than `min_value` are not drawn and neither are their descendants.
 * Returns FLAMEGRAPH_OK or FLAMEGRAPH_ERR_NO_MEMORY (layout then holds nothing to free). */
flamegraph_status fg_layout_build(fg_layout *layout, const flamegraph_tree *tree, double min_value);
void fg_layout_free(fg_layout *layout);

/* ----- buffered output with XML escaping (xml_out.c) --------------------------------------- */

#define FG_OUT_BUFFER_BYTES (64u << 10)

typedef struct fg_out {
    FILE *file;
    size_t used;
    bool failed; /* a write failed: everything after is skipped */
    char buffer[FG_OUT_BUFFER_BYTES];
} fg_out;

/* `file` NULL = memory mode: output stays in `buffer` (what does not fit is dropped and
 * `failed` is set); used to compose short texts with the same formatting. */
void fg_out_init(fg_out *out, FILE *file);
/* Flushes the buffer and the FILE; returns false if any write failed. */
bool fg_out_finish(fg_out *out);
void fg_out_bytes(fg_out *out, const char *bytes, size_t length);
void fg_out_str(fg_out *out, const char *text);
void fg_out_char(fg_out *out, char c);
void fg_out_u64(fg_out *out, uint64_t value);
/* `value` rounded to `decimals` (0..6) places, trailing zeros kept: "12.30". */
void fg_out_fixed(fg_out *out, double value, int decimals);
/* `value` with at most 6 decimals and no trailing zeros ("3", "2.5"): the folded count form. */
void fg_out_count(fg_out *out, double value);
/* Writes text for XML content or a quoted attribute: & < > " ' escaped, invalid UTF-8 bytes and
 * characters XML forbids (controls other than tab/LF/CR, U+FFFE, U+FFFF) replaced by U+FFFD.
 * Writes at most `max_chars` characters (SIZE_MAX = all). */
void fg_out_xml(fg_out *out, const char *text, size_t length, size_t max_chars);
/* Number of characters fg_out_xml() would write for the whole text. */
size_t fg_xml_char_count(const char *text, size_t length);
void fg_out_printf(fg_out *out, const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ----- colours (palette.c) ---------------------------------------------------------------- */

typedef struct fg_rgb {
    uint8_t r, g, b;
} fg_rgb;

/* A colour of `palette` from three numbers in [0, 1] (position inside the palette's range). */
fg_rgb fg_palette_color(flamegraph_palette palette, double v1, double v2, double v3);
/* The colour a name always gets (deterministic mode), from its hash. */
fg_rgb fg_palette_color_for_hash(flamegraph_palette palette, uint64_t hash);
/* splitmix64 step: the random colours' generator, seedable for tests. */
uint64_t fg_random_next(uint64_t *state);
/* The differential colour of a relative change in [-1, 1]: red > 0, blue < 0, white at 0. */
fg_rgb fg_diff_color(double relative_change);

/* ----- value formatting (svg.c) ----------------------------------------------------------- */

/* Writes a value with its unit, escaped: "12.3 ms" when count_name is a time unit (ns, us, ms,
 * s), else "1,234 samples" or "2.50 samples"; count_name NULL = "samples", "" = no unit. */
void fg_out_value(fg_out *out, double value, const char *count_name);
/* Writes part/whole as a percentage with two decimals: "45.60%". */
void fg_out_percent(fg_out *out, double part, double whole);

/* ----- the embedded viewer (generated from viewer.js and viewer.css) ----------------------- */
extern const char fg_viewer_js[];
extern const char fg_viewer_css[];

/* ----- the SVG document, shared by the plain and the differential writers (svg.c) ---------- */

/* Per-frame hooks: the plain writer colours by palette, the diff writer by change. */
typedef struct fg_frame_painter {
    /* Colour of node `id`. */
    fg_rgb (*color)(void *context, uint32_t id);
    /* Writes the details after the name inside <title>, e.g. "12.3 ms, 45.60%" (escaped). */
    void (*details)(void *context, fg_out *out, uint32_t id);
    void *context;
} fg_frame_painter;

/* Writes the whole document for `tree` with the given painter; `default_title` is used when
 * options->title is NULL; `extra_notes` (may be NULL) is appended to the notes line. */
flamegraph_status fg_svg_write_document(const flamegraph_tree *tree,
                                        const flamegraph_svg_options *options,
                                        const char *default_title, const char *extra_notes,
                                        const fg_frame_painter *painter, FILE *file,
                                        flamegraph_error *err);

#endif /* VOR_FLAMEGRAPH_INTERNAL_H */
