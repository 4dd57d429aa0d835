/*
 * flamegraph.h: the flame graph engine behind `vor flamegraph` and `vor diff --svg`.
 *
 * A self-contained C11 library (no dependency on the rest of vor) in five parts:
 *
 *   1. A stack tree. Stacks (lists of frame names, root first) or scopes (name, nesting depth,
 *      duration, in begin order) go in; the tree keeps one node per distinct path and the total
 *      value (nanoseconds, samples, ...) spent in it. Two modes:
 *        merged      children are merged by name, as flamegraph.pl does: the x axis is not time;
 *        flamechart  a frame merges only with its parent's most recent child of the same name,
 *                    so repeats that are not adjacent stay apart and time order is kept.
 *      `reverse` stores every stack leaf first (flamegraph.pl --reverse).
 *      Names are copied into an arena and interned; memory grows only with distinct nodes and
 *      is capped (FLAMEGRAPH_DEFAULT_MAX_NODES). Past the cap, stacks are counted as dropped and
 *      reported in flamegraph_tree_stats() and in the SVG notes, never a crash.
 *   2. A reader (and writer) for the folded stacks text format `frame;frame;frame COUNT`, as
 *      produced by the stackcollapse-* scripts, cargo flamegraph and `vor export --format folded`.
 *   3. An interactive SVG writer: one file with inline CSS and JavaScript and no external
 *      resource, so it works opened from disk. Hover shows name, value and share of the total;
 *      click zooms into a frame (its ancestors stay visible); Search (click "Search" or press
 *      Ctrl+F) takes a regular expression or plain text, highlights matches and prints the
 *      matched share of the total; Escape or "Reset Zoom" restores the view.
 *   4. A differential SVG: two merged trees A (before) and B (after); B's widths, frames coloured
 *      red where B is slower, blue where faster, white where unchanged.
 *   5. Command-line parsing for `vor flamegraph`, with a --help text.
 *
 * Typical use (what `vor flamegraph FILE -o out.svg` does):
 *
 *     flamegraph_options opt;
 *     flamegraph_error err;
 *     int rc = flamegraph_parse_args(argc, argv, &opt, &err);   // argv[0] = "flamegraph"
 *     if (rc == FLAMEGRAPH_ARGS_HELP)  { fputs(flamegraph_help_text(), stdout); return 0; }
 *     if (rc != FLAMEGRAPH_ARGS_OK)    { fprintf(stderr, "vor flamegraph: %s\n", err.message); return 2; }
 *     flamegraph_tree *tree = flamegraph_tree_create(&opt.tree);
 *     ... for each thread of each selected frame, for each scope in begin order:
 *             flamegraph_tree_add_scope(tree, name, depth, duration_ns);
 *         flamegraph_tree_end_scopes(tree);
 *     if (opt.svg.count_name == NULL) opt.svg.count_name = "ns";     // capture values are ns
 *     flamegraph_write_svg(tree, &opt.svg, out, &err);
 *     flamegraph_tree_destroy(tree);
 *
 * Conventions: every structure of options is zero-initialisable and zero means "the default",
 * written beside each field. Functions that can fail return a flamegraph_status and, when given
 * a flamegraph_error, fill it with a one-line message naming the file, line and problem.
 * Nothing here aborts or exits. Nothing is thread-safe: use one tree per thread, or lock.
 */
#ifndef VOR_FLAMEGRAPH_H
#define VOR_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version. MAJOR changes when a call or structure changes incompatibly, MINOR when something is
 * added, PATCH for fixes only. */
#define FLAMEGRAPH_VERSION_MAJOR 1
#define FLAMEGRAPH_VERSION_MINOR 0
#define FLAMEGRAPH_VERSION_PATCH 0
#define FLAMEGRAPH_VERSION_NUMBER \
    (FLAMEGRAPH_VERSION_MAJOR * 10000 + FLAMEGRAPH_VERSION_MINOR * 100 + FLAMEGRAPH_VERSION_PATCH)
/* The version the library was built as, e.g. "1.0.0". */
const char *flamegraph_version_string(void);

/* ---------------------------------------------------------------------------------------------
 * Capacities. An empty tree takes about 200 KiB (mostly per-stack scratch). A node costs 40 to
 * 60 bytes while building (node, child index) plus, once per distinct name, the name and ~40
 * bytes; writing an SVG or folded text borrows about 40 bytes more per node, then frees it.
 * ------------------------------------------------------------------------------------------- */
#define FLAMEGRAPH_DEFAULT_MAX_NODES (1u << 20)       /* nodes per tree: ~60 MiB at the cap */
#define FLAMEGRAPH_LIMIT_MAX_NODES (1u << 24)         /* largest max_nodes accepted */
#define FLAMEGRAPH_DEFAULT_MAX_NAME_BYTES (64u << 20) /* bytes of distinct names per tree */
#define FLAMEGRAPH_MAX_NAME_LENGTH 4096u              /* bytes; longer names are truncated */
#define FLAMEGRAPH_MAX_DEPTH 4096u                    /* frames per stack; deeper ones are dropped */
#define FLAMEGRAPH_DEFAULT_MAX_LINE_BYTES (256u << 10) /* folded input line, without newline */
#define FLAMEGRAPH_MAX_INPUTS 8u                      /* positional file names on a command line */

/* ---------------------------------------------------------------------------------------------
 * Status codes and errors. One list makes both the enum and the texts.
 * ------------------------------------------------------------------------------------------- */
#define FLAMEGRAPH_STATUS_LIST(X)                                                        \
    X(FLAMEGRAPH_OK, "success")                                                          \
    X(FLAMEGRAPH_DROPPED, "stack dropped: the tree's node or name capacity is reached")  \
    X(FLAMEGRAPH_ERR_ARGUMENT, "invalid argument")                                       \
    X(FLAMEGRAPH_ERR_NO_MEMORY, "out of memory")                                         \
    X(FLAMEGRAPH_ERR_READ, "read error")                                                 \
    X(FLAMEGRAPH_ERR_WRITE, "write error")                                               \
    X(FLAMEGRAPH_ERR_LINE_TOO_LONG, "line too long")                                     \
    X(FLAMEGRAPH_ERR_MISSING_COUNT, "missing count at the end of the line")              \
    X(FLAMEGRAPH_ERR_BAD_COUNT, "count is not a non-negative number")                    \
    X(FLAMEGRAPH_ERR_EMPTY_STACK, "no frame before the count")                           \
    X(FLAMEGRAPH_ERR_TOO_DEEP, "too many frames in one stack")                           \
    X(FLAMEGRAPH_ERR_BINARY, "NUL byte: not a text file")                                \
    X(FLAMEGRAPH_ERR_EMPTY, "no stacks to draw")                                         \
    X(FLAMEGRAPH_ERR_MODE, "differential graphs need two merged trees of the same direction") \
    X(FLAMEGRAPH_ERR_USAGE, "bad command line")

typedef enum flamegraph_status {
#define FLAMEGRAPH_STATUS_ENUM(name, text) name,
    FLAMEGRAPH_STATUS_LIST(FLAMEGRAPH_STATUS_ENUM)
#undef FLAMEGRAPH_STATUS_ENUM
    FLAMEGRAPH_STATUS_COUNT
} flamegraph_status;

/* "FLAMEGRAPH_ERR_BAD_COUNT" for FLAMEGRAPH_ERR_BAD_COUNT; "?" when out of range. */
const char *flamegraph_status_name(flamegraph_status status);
/* The short English text of a status ("count is not a non-negative number"). */
const char *flamegraph_status_text(flamegraph_status status);

#define FLAMEGRAPH_ERROR_MESSAGE_BYTES 512u
/* Filled by failing calls that take one. `message` is one line without a trailing newline,
 * e.g. "perf.folded:12: count is not a non-negative number: 'abc'". `line` is the 1-based input
 * line for the folded reader, 0 otherwise. */
typedef struct flamegraph_error {
    flamegraph_status status;
    uint64_t line;
    char message[FLAMEGRAPH_ERROR_MESSAGE_BYTES];
} flamegraph_error;

/* ---------------------------------------------------------------------------------------------
 * 1. Stack tree
 * ------------------------------------------------------------------------------------------- */
typedef struct flamegraph_tree flamegraph_tree;

typedef struct flamegraph_tree_options {
    bool flamechart;       /* false (default): merged by name path; true: time order kept */
    bool reverse;          /* false (default); true: stacks stored leaf first */
    size_t max_nodes;      /* 0 = FLAMEGRAPH_DEFAULT_MAX_NODES; at most FLAMEGRAPH_LIMIT_MAX_NODES;
                              the root counts as one node */
    size_t max_name_bytes; /* 0 = FLAMEGRAPH_DEFAULT_MAX_NAME_BYTES */
} flamegraph_tree_options;

typedef struct flamegraph_tree_stats {
    size_t node_count;      /* distinct nodes, root included */
    size_t max_nodes;       /* the cap in force */
    size_t name_count;      /* distinct names */
    size_t name_bytes;      /* bytes of the name arena in use */
    size_t max_depth;       /* deepest stack stored, in frames */
    double total;           /* value of the root: everything kept */
    uint64_t stacks;        /* stacks and scopes accepted */
    uint64_t dropped_stacks; /* stacks and scopes refused (cap reached, too deep, bad depth) */
    double dropped_value;   /* their value: not in `total` for stacks; for scopes it stays
                               counted in the enclosing scope */
} flamegraph_tree_stats;

/* Creates an empty tree (one root node named "all"). `options` may be NULL (all defaults).
 * Returns NULL when out of memory or when options->max_nodes exceeds FLAMEGRAPH_LIMIT_MAX_NODES. */
flamegraph_tree *flamegraph_tree_create(const flamegraph_tree_options *options);
/* Frees the tree and every name in it. NULL is accepted. */
void flamegraph_tree_destroy(flamegraph_tree *tree);

/* Adds `value` to the stack `names[0..depth)` given root first (flamegraph.pl semantics: value is
 * the leaf's own, every frame on the path gets it in its total). Names are copied; the caller's
 * strings may be reused at once. Names longer than FLAMEGRAPH_MAX_NAME_LENGTH are truncated.
 * A zero value is ignored; depth 0 adds to the root.
 * Returns FLAMEGRAPH_OK, FLAMEGRAPH_DROPPED when the stack did not fit (capacity reached or depth
 * above FLAMEGRAPH_MAX_DEPTH: nothing of it is added, it is counted in the stats), or
 * FLAMEGRAPH_ERR_ARGUMENT for NULL arguments. Cost: O(depth) string compares in the common case
 * (the previous stack shares a prefix), plus one hash look-up per frame otherwise. */
flamegraph_status flamegraph_tree_add_stack(flamegraph_tree *tree, const char *const *names,
                                            size_t depth, uint64_t value);
/* Same with a fractional value (folded input allows "12.5"). Negative, NaN or infinite values
 * give FLAMEGRAPH_ERR_ARGUMENT. */
flamegraph_status flamegraph_tree_add_stack_fractional(flamegraph_tree *tree,
                                                       const char *const *names, size_t depth,
                                                       double value);

/* Adds one scope of a thread: its name, its nesting depth (0 = outermost) and its inclusive
 * duration (children included). Scopes must come in begin order, parents before children, as a
 * profiler's flame frame stores them; a scope at depth d closes the open scopes at depth >= d.
 * Call flamegraph_tree_end_scopes() when a thread's run of scopes ends (another thread or frame
 * follows, or before writing). A scope whose depth skips a level (depth > number of open scopes)
 * is refused with FLAMEGRAPH_ERR_ARGUMENT and counted as dropped, as are its children.
 * A dropped scope's time stays in its parent's own time. Cost: O(1) per scope in the forward
 * direction; O(depth) when the tree is reversed (each scope then becomes a stack of its own time).
 * To group by thread, add the thread name as a depth-0 scope and shift the others by one. */
flamegraph_status flamegraph_tree_add_scope(flamegraph_tree *tree, const char *name, size_t depth,
                                            uint64_t duration);
/* Closes every open scope. Needed between threads and frames, and before writing a reversed tree. */
void flamegraph_tree_end_scopes(flamegraph_tree *tree);

/* Counters describing the tree (see flamegraph_tree_stats). */
flamegraph_tree_stats flamegraph_tree_get_stats(const flamegraph_tree *tree);

/* How flamegraph_tree_relabel() renames frames. Each callback gets a frame's name and
 * returns the name to use (the text is copied at once, so a callback may reuse one buffer).
 * `root` returns NULL to leave the frame out, with everything above it; `name` returns
 * NULL for unchanged. Either callback may be NULL (names unchanged). */
typedef struct flamegraph_relabel {
    const char *(*root)(void *context, const char *name); /* frames right above the root */
    const char *(*name)(void *context, const char *name); /* every other frame, once per name */
    void *context;
} flamegraph_relabel;

/* A new tree, built with `options` (reverse, flamechart, capacity: it may differ from the
 * source's), holding the source's stacks with their frames renamed by `relabel`: frames that
 * get the same name under the same parent merge, values add up. The source must not be
 * reversed (FLAMEGRAPH_ERR_ARGUMENT); a flame chart copied into a flame chart keeps its time
 * order. The source's dropped stacks stay counted in the copy. Returns NULL with *status
 * set when out of memory. Memory: the copy, plus about 30 bytes per source node while
 * copying. */
flamegraph_tree *flamegraph_tree_relabel(const flamegraph_tree *source,
                                         const flamegraph_tree_options *options,
                                         const flamegraph_relabel *relabel,
                                         flamegraph_status *status);

/* ---------------------------------------------------------------------------------------------
 * 2. Folded stacks: `frame;frame;frame COUNT` per line
 * ------------------------------------------------------------------------------------------- */
typedef struct flamegraph_folded_options {
    size_t max_line_bytes;   /* 0 = FLAMEGRAPH_DEFAULT_MAX_LINE_BYTES */
    const char *source_name; /* file name used in messages; NULL = "<input>" */
} flamegraph_folded_options;

/* Reads folded stacks from `in` until EOF into `tree`, one line at a time (memory: one buffer of
 * max_line_bytes). Accepted: LF or CRLF line ends, blank lines, spaces or tabs between stack and
 * count and at the end of the line, a UTF-8 byte-order mark, integer or fractional counts ("3",
 * "2.5"). Frames are separated by ';'. Lines with a zero count add nothing.
 * Refused, stopping at the first such line with its number in err: a line without a count, a count
 * that is not a non-negative decimal number, no frame before the count, more than
 * FLAMEGRAPH_MAX_DEPTH frames, a line longer than max_line_bytes, a NUL byte.
 * Stacks dropped at the tree's capacity are not errors: see flamegraph_tree_get_stats().
 * Stacks read before an error stay in the tree. Returns FLAMEGRAPH_OK or the error. */
flamegraph_status flamegraph_read_folded(flamegraph_tree *tree, FILE *in,
                                         const flamegraph_folded_options *options,
                                         flamegraph_error *err);

/* Writes the tree as folded stacks: one line per node with time of its own, in the order the
 * SVG draws them (siblings by name when merged, in time order for a flame chart); a reversed
 * tree is written as stored, leaf first. This is also how `vor export --format folded` can be
 * made: scopes in with flamegraph_tree_add_scope(), folded text out. Counts are
 * integers when whole, else decimal. A one-frame stack whose name is empty or blank is written
 * as '?', and a blank line comes first if the first line would start with a byte-order mark. ';' inside a name is written as ':' and line breaks as
 * spaces so that the output reads back. Returns FLAMEGRAPH_OK, FLAMEGRAPH_ERR_NO_MEMORY or
 * FLAMEGRAPH_ERR_WRITE. */
flamegraph_status flamegraph_write_folded(const flamegraph_tree *tree, FILE *out,
                                          flamegraph_error *err);

/* ---------------------------------------------------------------------------------------------
 * 3. SVG
 * ------------------------------------------------------------------------------------------- */
typedef enum flamegraph_palette {
    FLAMEGRAPH_PALETTE_HOT = 0, /* default: reds, oranges, yellows */
    FLAMEGRAPH_PALETTE_MEM,
    FLAMEGRAPH_PALETTE_IO,
    FLAMEGRAPH_PALETTE_RED,
    FLAMEGRAPH_PALETTE_GREEN,
    FLAMEGRAPH_PALETTE_BLUE,
    FLAMEGRAPH_PALETTE_AQUA,
    FLAMEGRAPH_PALETTE_YELLOW,
    FLAMEGRAPH_PALETTE_PURPLE,
    FLAMEGRAPH_PALETTE_ORANGE,
    FLAMEGRAPH_PALETTE_COUNT
} flamegraph_palette;

/* "hot" -> FLAMEGRAPH_PALETTE_HOT, ...; false for an unknown name. */
bool flamegraph_palette_from_name(const char *name, flamegraph_palette *out);
/* The name of a palette ("hot"); "?" when out of range. */
const char *flamegraph_palette_name(flamegraph_palette palette);

typedef struct flamegraph_svg_options {
    const char *title;      /* NULL = "Flame Graph", "Flame Chart", "Icicle Graph" or
                               "Differential Flame Graph" */
    const char *subtitle;   /* NULL = none; a line under the title */
    const char *notes;      /* NULL = none; a line under the subtitle and in <desc> */
    const char *count_name; /* NULL = "samples". "ns", "us", "ms" or "s" show values as times
                               ("12.3 ms"); any other word follows the number ("1,234 samples") */
    flamegraph_palette palette; /* default FLAMEGRAPH_PALETTE_HOT; ignored by the diff */
    bool inverted;          /* false (default): root at the bottom; true: icicle, root on top */
    bool deterministic;     /* false (default): colours drawn at random per frame from the palette,
                               like flamegraph.pl; true: a name's colour is a hash of the name, the
                               same in every run and every graph */
    uint64_t color_seed;    /* random colours only: 0 = seeded from the clock; else a fixed seed
                               gives identical output every run */
    double min_width;       /* 0 = 0.1: frames narrower than this are not drawn (their time still
                               counts in their parent), nor are their descendants */
    bool min_width_is_percent; /* false (default): min_width in pixels; true: percent of the width
                               of the whole graph */
    unsigned image_width;   /* pixels; 0 = 1200 */
    unsigned font_size;     /* pixels; 0 = 12 */
    unsigned frame_height;  /* pixels; 0 = 16 */
    bool diff_normalize;    /* diff only: scale A so that its total equals B's before comparing */
} flamegraph_svg_options;

/* Writes `tree` as an interactive SVG to `out` (buffered; `out` is not closed). `options` may be
 * NULL. With an empty tree (total 0), writes a small valid SVG saying so and returns
 * FLAMEGRAPH_ERR_EMPTY. Stacks dropped at the tree's capacity are reported in the notes line.
 * Memory: about 40 bytes per node for the layout, freed before returning. Open scopes are not
 * seen: call flamegraph_tree_end_scopes() first.
 * Returns FLAMEGRAPH_OK, FLAMEGRAPH_ERR_EMPTY, FLAMEGRAPH_ERR_NO_MEMORY or FLAMEGRAPH_ERR_WRITE. */
flamegraph_status flamegraph_write_svg(const flamegraph_tree *tree,
                                       const flamegraph_svg_options *options, FILE *out,
                                       flamegraph_error *err);

/* ---------------------------------------------------------------------------------------------
 * 4. Differential SVG
 * ------------------------------------------------------------------------------------------- */
/* Draws `after` (B) with its widths. Each frame is matched by name path with `before` (A) and
 * coloured by the relative change of its total, (B - A) / max(A, B): red when slower in B, blue
 * when faster, intensity proportional to the change, white when equal; frames new in B are full
 * red. Hover shows both values and the change. Frames only in A are not drawn; their number and
 * time are written in the notes line. Both trees must be merged (not flamechart) and have the
 * same `reverse`; else FLAMEGRAPH_ERR_MODE. Other returns as flamegraph_write_svg(). */
flamegraph_status flamegraph_write_diff_svg(const flamegraph_tree *before,
                                            const flamegraph_tree *after,
                                            const flamegraph_svg_options *options, FILE *out,
                                            flamegraph_error *err);

/* ---------------------------------------------------------------------------------------------
 * 5. Command line
 * ------------------------------------------------------------------------------------------- */
typedef struct flamegraph_options {
    flamegraph_tree_options tree; /* --flamechart --reverse --max-nodes */
    flamegraph_svg_options svg;   /* everything that shapes the picture */
    const char *output_path;      /* -o/--output; NULL = not given (caller's default) */
    const char *folded_path;      /* --folded FILE: read folded stacks from FILE ("-" = stdin) */
    bool has_frames;              /* --frames given */
    uint64_t frames_first;        /* --frames A..B, inclusive; "A.." leaves frames_last at */
    uint64_t frames_last;         /* UINT64_MAX, "..B" leaves frames_first at 0, "A" is A..A */
    const char *thread_name;      /* --thread NAME; NULL = every thread */
    bool raw;                     /* --raw: capture times without overhead compensation */
    uint64_t max_frame_scopes;    /* --max-frame-scopes N; 0 = the caller's default */
    const char *inputs[FLAMEGRAPH_MAX_INPUTS]; /* positional arguments, in order */
    size_t input_count;
} flamegraph_options;

#define FLAMEGRAPH_ARGS_OK 0          /* parsed; *out is complete */
#define FLAMEGRAPH_ARGS_HELP 1        /* -h/--help seen: print flamegraph_help_text(), exit 0 */
#define FLAMEGRAPH_ARGS_USAGE_ERROR 2 /* err->message says what is wrong: print it, exit 2 */

/* Parses argv[1..argc) (argv[0] is the command's name and skipped) into *out, which is zeroed
 * first. Options may stand before or after positional file names; "--" ends options; values
 * may be given as "--opt VALUE" or "--opt=VALUE" ("-o OUT" or "-oOUT"); "-" alone is a
 * positional (stdin). The last of a repeated option wins. Strings in *out point into argv.
 * Options: --flamechart --inverted/-i --reverse --min-width X[%] --palette P --deterministic
 * --seed N --title T --subtitle S --notes N --image-width W --font-size N --count-name U
 * --max-nodes N --folded FILE -o/--output OUT --frames A..B --thread NAME --raw
 * --max-frame-scopes N -h/--help.
 * Returns FLAMEGRAPH_ARGS_OK, FLAMEGRAPH_ARGS_HELP or FLAMEGRAPH_ARGS_USAGE_ERROR (with err, if
 * not NULL, holding one message such as "--palette: unknown palette 'pink' (one of hot, ...)"). */
int flamegraph_parse_args(int argc, char **argv, flamegraph_options *out, flamegraph_error *err);

/* --frames' value: "A..B", "A..", "..B" or "A" (inclusive frame indices, A <= B; "A.." ends
 * at UINT64_MAX, "..B" starts at 0). Returns true with the range, false when `value` is not
 * one (the message to print: FLAMEGRAPH_FRAME_RANGE_FORMS). vor export uses it too. */
#define FLAMEGRAPH_FRAME_RANGE_FORMS "A..B, A.., ..B or A, with A <= B"
bool flamegraph_parse_frame_range(const char *value, uint64_t *first, uint64_t *last);

/* The text for --help: every option above with its default. Static storage, ends in '\n'. */
const char *flamegraph_help_text(void);

#ifdef __cplusplus
}
#endif

#endif /* VOR_FLAMEGRAPH_H */
