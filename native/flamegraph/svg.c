/*
 * svg.c: the interactive SVG document: geometry, header, embedded viewer, one <g> per frame.
 *
 * The document is one file with its CSS and script inline (viewer.css, viewer.js, compiled in),
 * so that it works when opened straight from disk, with no network and no other file.
 * Each drawn frame is written as
 *     <g><title>NAME (DETAILS)</title><rect x y width height fill/><text x y>LABEL</text></g>
 * The <title> gives the browser's own tooltip and is where the viewer reads a frame's full name
 * and details from (the text before the last " ("), so the name is stored once; the label is the
 * name trimmed to the rectangle with "..", omitted when fewer than three characters fit.
 * x and width are pixels with two decimals; the viewer derives zoom and search from them.
 *
 * The plain and the differential graphs differ only in how a frame is coloured and what its
 * details say: both go through fg_svg_write_document() with a painter (fg_frame_painter).
 * Costs: one layout (layout.c), then one pass over the drawn frames writing into fg_out's fixed
 * buffer; nothing is allocated per frame.
 */
#include "flamegraph_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIDE_PAD 10                 /* pixels left and right of the frames */
#define FONT_WIDTH 0.59             /* average glyph width / font size, for trimming labels */
#define LABEL_PAD 3                 /* pixels between a frame's left edge and its label */
#define DEFAULT_IMAGE_WIDTH 1200u   /* pixels */
#define DEFAULT_FONT_SIZE 12u       /* pixels */
#define DEFAULT_FRAME_HEIGHT 16u    /* pixels */
#define DEFAULT_MIN_WIDTH 0.1       /* pixels */
#define SEARCH_COLOR "rgb(230,0,230)"
#define FONT_FAMILY "Verdana, DejaVu Sans, sans-serif"

/* ----- values ------------------------------------------------------------------------------ */

/* Nanoseconds per unit when count_name is a time unit. */
static bool time_unit(const char *count_name, double *ns_per_unit)
{
    static const struct {
        const char *name;
        double ns;
    } units[] = { { "ns", 1.0 }, { "us", 1e3 }, { "\xC2\xB5s", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(count_name, units[i].name) == 0) {
            *ns_per_unit = units[i].ns;
            return true;
        }
    }
    return false;
}

/* Three significant digits for numbers of a few digits: 1.23, 12.3, 123. */
static int decimals_for(double value)
{
    return value < 9.995 ? 2 : value < 99.95 ? 1 : 0;
}

/* A whole number with thousands separators: 1,234,567. */
static void out_grouped(fg_out *out, uint64_t value)
{
    char digits[32];
    size_t count = 0, group = 0;
    do {
        if (group == 3) {
            digits[sizeof digits - 1 - count++] = ',';
            group = 0;
        }
        digits[sizeof digits - 1 - count++] = (char)('0' + value % 10);
        value /= 10;
        group++;
    } while (value != 0);
    fg_out_bytes(out, digits + sizeof digits - count, count);
}

void fg_out_value(fg_out *out, double value, const char *count_name)
{
    if (count_name == NULL)
        count_name = "samples";
    double ns_per_unit;
    if (time_unit(count_name, &ns_per_unit)) {
        double ns = value * ns_per_unit;
        const char *unit = "ns";
        double shown = ns;
        if (ns >= 999.5e6) {
            unit = "s";
            shown = ns / 1e9;
        } else if (ns >= 999.5e3) {
            unit = "ms";
            shown = ns / 1e6;
        } else if (ns >= 999.5) {
            unit = "\xC2\xB5s";
            shown = ns / 1e3;
        }
        bool whole_ns = unit[0] == 'n' && shown == floor(shown);
        fg_out_fixed(out, shown, whole_ns ? 0 : decimals_for(shown));
        fg_out_char(out, ' ');
        fg_out_str(out, unit);
        return;
    }
    if (value == floor(value) && value >= 0 && value < 9.2e18)
        out_grouped(out, (uint64_t)value);
    else
        fg_out_fixed(out, value, 2);
    if (count_name[0] != '\0') {
        fg_out_char(out, ' ');
        fg_out_xml(out, count_name, strlen(count_name), SIZE_MAX);
    }
}

void fg_out_percent(fg_out *out, double part, double whole)
{
    fg_out_fixed(out, whole > 0 ? part / whole * 100.0 : 0.0, 2);
    fg_out_char(out, '%');
}

/* ----- geometry ---------------------------------------------------------------------------- */

typedef struct svg_geometry {
    unsigned width, height;    /* of the image */
    unsigned font_size, frame_height;
    double frame_width;        /* pixels spanned by the root */
    unsigned title_y;          /* baselines of the header lines */
    unsigned subtitle_y, notes_y;
    unsigned frames_top;       /* y of the first row of frames */
    unsigned bottom_pad;       /* below the last row: the details line */
    double text_offset;        /* label baseline below a frame's top */
    bool inverted;
} svg_geometry;

static unsigned clamp_unsigned(unsigned value, unsigned fallback, unsigned low, unsigned high)
{
    if (value == 0)
        value = fallback;
    return value < low ? low : value > high ? high : value;
}

static void resolve_geometry(svg_geometry *geometry, const flamegraph_svg_options *options,
                             bool has_subtitle, bool has_notes)
{
    memset(geometry, 0, sizeof *geometry);
    geometry->width = clamp_unsigned(options->image_width, DEFAULT_IMAGE_WIDTH, 4 * SIDE_PAD,
                                     1000000u);
    geometry->font_size = clamp_unsigned(options->font_size, DEFAULT_FONT_SIZE, 4, 200);
    geometry->frame_height = clamp_unsigned(options->frame_height, DEFAULT_FRAME_HEIGHT, 2, 500);
    geometry->frame_width = (double)geometry->width - 2.0 * SIDE_PAD;
    unsigned line = geometry->font_size + 6;
    geometry->title_y = geometry->font_size * 2;
    unsigned last = geometry->title_y;
    if (has_subtitle)
        geometry->subtitle_y = last += line;
    if (has_notes)
        geometry->notes_y = last += line;
    geometry->frames_top = last + geometry->font_size;
    geometry->bottom_pad = geometry->font_size * 2 + 10;
    geometry->text_offset =
        (geometry->frame_height - 1) / 2.0 + geometry->font_size * 0.35;
    geometry->inverted = options->inverted;
}

/* ----- document parts ---------------------------------------------------------------------- */

static void out_attr_fixed(fg_out *out, const char *name, double value)
{
    fg_out_char(out, ' ');
    fg_out_str(out, name);
    fg_out_str(out, "=\"");
    fg_out_fixed(out, value, 2);
    fg_out_char(out, '"');
}

static void out_attr_u64(fg_out *out, const char *name, uint64_t value)
{
    fg_out_char(out, ' ');
    fg_out_str(out, name);
    fg_out_str(out, "=\"");
    fg_out_u64(out, value);
    fg_out_char(out, '"');
}

static void out_text_element(fg_out *out, const char *id, const char *extra_attributes, double x,
                             unsigned y, const char *text)
{
    fg_out_str(out, "<text id=\"");
    fg_out_str(out, id);
    fg_out_char(out, '"');
    if (extra_attributes != NULL)
        fg_out_str(out, extra_attributes);
    out_attr_fixed(out, "x", x);
    out_attr_u64(out, "y", y);
    fg_out_char(out, '>');
    fg_out_xml(out, text, strlen(text), SIZE_MAX);
    fg_out_str(out, "</text>\n");
}

static void out_svg_open(fg_out *out, unsigned width, unsigned height)
{
    fg_out_str(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    fg_out_str(out, "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\"");
    out_attr_u64(out, "width", width);
    out_attr_u64(out, "height", height);
    fg_out_str(out, " viewBox=\"0 0 ");
    fg_out_u64(out, width);
    fg_out_char(out, ' ');
    fg_out_u64(out, height);
    fg_out_str(out, "\">\n");
}

/* The notes line: caller's notes, the writer's own (diff), stacks dropped at the cap. Empty
 * pieces are skipped; pieces are joined by "; ". Returns whether anything was written. */
static bool out_notes(fg_out *out, const char *notes, const char *extra_notes,
                      const flamegraph_tree *tree, const char *count_name)
{
    bool any = false;
    if (notes != NULL && notes[0] != '\0') {
        fg_out_xml(out, notes, strlen(notes), SIZE_MAX);
        any = true;
    }
    if (extra_notes != NULL && extra_notes[0] != '\0') {
        if (any)
            fg_out_str(out, "; ");
        fg_out_xml(out, extra_notes, strlen(extra_notes), SIZE_MAX);
        any = true;
    }
    if (tree->dropped_stacks > 0) {
        if (any)
            fg_out_str(out, "; ");
        out_grouped(out, tree->dropped_stacks);
        fg_out_str(out, " stacks dropped at the capacity of ");
        out_grouped(out, tree->options.max_nodes);
        fg_out_str(out, " nodes (");
        fg_out_value(out, tree->dropped_value, count_name);
        fg_out_char(out, ')');
        any = true;
    }
    return any;
}

static bool has_notes(const char *notes, const char *extra_notes, const flamegraph_tree *tree)
{
    return (notes != NULL && notes[0] != '\0') || (extra_notes != NULL && extra_notes[0] != '\0') ||
           tree->dropped_stacks > 0;
}

static void out_header(fg_out *out, const svg_geometry *geometry, const char *title,
                       const flamegraph_svg_options *options, const char *extra_notes,
                       const flamegraph_tree *tree)
{
    out_svg_open(out, geometry->width, geometry->height);
    if (has_notes(options->notes, extra_notes, tree)) {
        fg_out_str(out, "<desc id=\"notes-text\">");
        out_notes(out, options->notes, extra_notes, tree, options->count_name);
        fg_out_str(out, "</desc>\n");
    }
    fg_out_str(out, "<style type=\"text/css\"><![CDATA[\ntext { font-family: " FONT_FAMILY
                    "; font-size: ");
    fg_out_u64(out, geometry->font_size);
    fg_out_str(out, "px; }\n#title { font-size: ");
    fg_out_u64(out, geometry->font_size + 5);
    fg_out_str(out, "px; }\n");
    fg_out_str(out, fg_viewer_css);
    fg_out_str(out, "]]></style>\n");

    /* Only numbers and fixed words go into the script: names are read from the document. */
    fg_out_str(out, "<script type=\"text/ecmascript\"><![CDATA[\nvar vorFlamegraphConfig = {");
    fg_out_str(out, "sidePad: ");
    fg_out_u64(out, SIDE_PAD);
    fg_out_str(out, ", frameWidth: ");
    fg_out_fixed(out, geometry->frame_width, 2);
    fg_out_str(out, ", fontSize: ");
    fg_out_u64(out, geometry->font_size);
    fg_out_str(out, ", fontWidth: ");
    fg_out_fixed(out, FONT_WIDTH, 2);
    fg_out_str(out, ", labelPad: ");
    fg_out_u64(out, LABEL_PAD);
    fg_out_str(out, ", textOffset: ");
    fg_out_fixed(out, geometry->text_offset, 2);
    fg_out_str(out, ", inverted: ");
    fg_out_str(out, geometry->inverted ? "true" : "false");
    fg_out_str(out, ", searchColor: \"" SEARCH_COLOR "\"};\n");
    fg_out_str(out, fg_viewer_js);
    fg_out_str(out, "]]></script>\n");

    fg_out_str(out, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
                    "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
                    "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/></linearGradient></defs>\n");
    fg_out_str(out, "<rect id=\"background-rect\" x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" "
                    "fill=\"url(#background)\"/>\n");

    double middle = geometry->width / 2.0;
    out_text_element(out, "title", NULL, middle, geometry->title_y, title);
    if (geometry->subtitle_y != 0)
        out_text_element(out, "subtitle", NULL, middle, geometry->subtitle_y, options->subtitle);
    if (geometry->notes_y != 0) {
        fg_out_str(out, "<text id=\"notes\"");
        out_attr_fixed(out, "x", middle);
        out_attr_u64(out, "y", geometry->notes_y);
        fg_out_char(out, '>');
        out_notes(out, options->notes, extra_notes, tree, options->count_name);
        fg_out_str(out, "</text>\n");
    }
    unsigned bottom_text_y = geometry->height - geometry->bottom_pad / 2;
    out_text_element(out, "details", NULL, SIDE_PAD, bottom_text_y, " ");
    out_text_element(out, "unzoom", " class=\"button hide\"", SIDE_PAD, geometry->title_y,
                     "Reset Zoom");
    out_text_element(out, "search", " class=\"button\"", geometry->width - SIDE_PAD,
                     geometry->title_y, "Search");
    out_text_element(out, "matched", NULL, geometry->width - SIDE_PAD, bottom_text_y, " ");
}

/* A frame's label: the whole name if it fits, else its start and "..", else nothing. */
static void out_label(fg_out *out, const char *name, size_t length, double x, double y,
                      double width, const svg_geometry *geometry)
{
    double fit_chars = floor((width - 2 * LABEL_PAD) / (geometry->font_size * FONT_WIDTH));
    if (fit_chars < 3)
        return;
    size_t chars = fg_xml_char_count(name, length);
    fg_out_str(out, "<text");
    out_attr_fixed(out, "x", x + LABEL_PAD);
    out_attr_fixed(out, "y", y + geometry->text_offset);
    fg_out_char(out, '>');
    if ((double)chars <= fit_chars) {
        fg_out_xml(out, name, length, SIZE_MAX);
    } else {
        fg_out_xml(out, name, length, (size_t)fit_chars - 2);
        fg_out_str(out, "..");
    }
    fg_out_str(out, "</text>");
}

static void out_frames(fg_out *out, const flamegraph_tree *tree, const fg_layout *layout,
                       const svg_geometry *geometry, double scale, const fg_frame_painter *painter)
{
    fg_out_str(out, "<g id=\"frames\">\n");
    for (size_t k = 0; k < layout->drawn_count; k++) {
        uint32_t id = layout->order[k];
        const fg_node *node = &tree->nodes[id];
        const fg_name *name = &tree->names[node->name];
        const char *text = tree->arena + name->offset;
        /* Rounded once, so that the label and the viewer see the same numbers. */
        double x = floor((SIDE_PAD + layout->x[id] * scale) * 100.0 + 0.5) / 100.0;
        double width = floor(layout->width[id] * scale * 100.0 + 0.5) / 100.0;
        unsigned y = geometry->inverted
                         ? geometry->frames_top + node->depth * geometry->frame_height
                         : geometry->height - geometry->bottom_pad -
                               (node->depth + 1) * geometry->frame_height;
        fg_rgb color = painter->color(painter->context, id);

        fg_out_str(out, "<g><title>");
        fg_out_xml(out, text, name->length, SIZE_MAX);
        fg_out_str(out, " (");
        painter->details(painter->context, out, id);
        fg_out_str(out, ")</title><rect");
        out_attr_fixed(out, "x", x);
        out_attr_u64(out, "y", y);
        out_attr_fixed(out, "width", width);
        out_attr_u64(out, "height", geometry->frame_height - 1);
        fg_out_str(out, " fill=\"rgb(");
        fg_out_u64(out, color.r);
        fg_out_char(out, ',');
        fg_out_u64(out, color.g);
        fg_out_char(out, ',');
        fg_out_u64(out, color.b);
        fg_out_str(out, ")\"/>");
        out_label(out, text, name->length, x, y, width, geometry);
        fg_out_str(out, "</g>\n");
    }
    fg_out_str(out, "</g>\n");
}

/* A small valid document for a tree with nothing in it. */
static void out_empty_document(fg_out *out, const svg_geometry *geometry, const char *title)
{
    unsigned height = geometry->font_size * 6;
    out_svg_open(out, geometry->width, height);
    fg_out_str(out, "<text x=\"");
    fg_out_fixed(out, geometry->width / 2.0, 2);
    fg_out_str(out, "\" y=\"");
    fg_out_u64(out, height / 2);
    fg_out_str(out, "\" text-anchor=\"middle\" font-family=\"" FONT_FAMILY "\" font-size=\"");
    fg_out_u64(out, geometry->font_size + 5);
    fg_out_str(out, "\">");
    fg_out_xml(out, title, strlen(title), SIZE_MAX);
    fg_out_str(out, ": no stacks to draw</text>\n</svg>\n");
}

flamegraph_status fg_svg_write_document(const flamegraph_tree *tree,
                                        const flamegraph_svg_options *options,
                                        const char *default_title, const char *extra_notes,
                                        const fg_frame_painter *painter, FILE *file,
                                        flamegraph_error *err)
{
    const char *title = options->title != NULL ? options->title : default_title;
    bool has_subtitle = options->subtitle != NULL && options->subtitle[0] != '\0';
    svg_geometry geometry;
    resolve_geometry(&geometry, options, has_subtitle, has_notes(options->notes, extra_notes, tree));

    fg_out *out = malloc(sizeof *out); /* 64 KiB: too big for some threads' stacks */
    if (out == NULL)
        return fg_fail(err, FLAMEGRAPH_ERR_NO_MEMORY, 0, "out of memory for the output buffer");
    fg_out_init(out, file);

    double total = tree->nodes[FG_ROOT].total;
    if (!(total > 0.0)) {
        out_empty_document(out, &geometry, title);
        bool written = fg_out_finish(out);
        free(out);
        if (!written)
            return fg_fail(err, FLAMEGRAPH_ERR_WRITE, 0, "cannot write the SVG");
        return fg_fail(err, FLAMEGRAPH_ERR_EMPTY, 0, "no stacks to draw: the input is empty");
    }

    double scale = geometry.frame_width / total; /* pixels per unit of value */
    double min_pixels = options->min_width > 0 ? options->min_width : DEFAULT_MIN_WIDTH;
    if (options->min_width > 0 && options->min_width_is_percent)
        min_pixels = geometry.frame_width * options->min_width / 100.0;
    fg_layout layout;
    if (fg_layout_build(&layout, tree, min_pixels / scale) != FLAMEGRAPH_OK) {
        free(out);
        return fg_fail(err, FLAMEGRAPH_ERR_NO_MEMORY, 0, "out of memory laying out %zu frames",
                       tree->node_count);
    }
    geometry.height = geometry.frames_top + (layout.max_drawn_depth + 1) * geometry.frame_height +
                      geometry.bottom_pad;

    out_header(out, &geometry, title, options, extra_notes, tree);
    out_frames(out, tree, &layout, &geometry, scale, painter);
    fg_out_str(out, "</svg>\n");
    fg_layout_free(&layout);
    bool written = fg_out_finish(out);
    free(out);
    if (!written)
        return fg_fail(err, FLAMEGRAPH_ERR_WRITE, 0, "cannot write the SVG");
    fg_clear_error(err);
    return FLAMEGRAPH_OK;
}

/* ----- the plain graph --------------------------------------------------------------------- */

typedef struct plain_painter {
    const flamegraph_tree *tree;
    flamegraph_palette palette;
    bool deterministic;
    uint64_t random_state;
    const char *count_name;
} plain_painter;

static fg_rgb plain_color(void *context, uint32_t id)
{
    plain_painter *painter = context;
    if (painter->deterministic) {
        uint32_t name = painter->tree->nodes[id].name;
        return fg_palette_color_for_hash(painter->palette, painter->tree->names[name].hash);
    }
    uint64_t bits = fg_random_next(&painter->random_state);
    return fg_palette_color(painter->palette, (double)(bits & 0xFFFF) / 65535.0,
                            (double)((bits >> 16) & 0xFFFF) / 65535.0,
                            (double)((bits >> 32) & 0xFFFF) / 65535.0);
}

static void plain_details(void *context, fg_out *out, uint32_t id)
{
    plain_painter *painter = context;
    const fg_node *nodes = painter->tree->nodes;
    fg_out_value(out, nodes[id].total, painter->count_name);
    fg_out_str(out, ", ");
    fg_out_percent(out, nodes[id].total, nodes[FG_ROOT].total);
}

/* A seed that differs between runs, for the random colours when none is pinned. */
static uint64_t clock_seed(void)
{
    uint64_t seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
    seed ^= (uint64_t)clock() << 17;
    seed ^= (uint64_t)(uintptr_t)&seed;
    return seed;
}

flamegraph_status flamegraph_write_svg(const flamegraph_tree *tree,
                                       const flamegraph_svg_options *options, FILE *out,
                                       flamegraph_error *err)
{
    if (tree == NULL || out == NULL)
        return fg_fail(err, FLAMEGRAPH_ERR_ARGUMENT, 0, "flamegraph_write_svg: no tree or no file");
    flamegraph_svg_options resolved = options ? *options : (flamegraph_svg_options){ 0 };
    if ((unsigned)resolved.palette >= (unsigned)FLAMEGRAPH_PALETTE_COUNT)
        return fg_fail(err, FLAMEGRAPH_ERR_ARGUMENT, 0, "unknown palette number %d",
                       (int)resolved.palette);
    plain_painter context = {
        .tree = tree,
        .palette = resolved.palette,
        .deterministic = resolved.deterministic,
        .random_state = resolved.color_seed != 0 ? resolved.color_seed : clock_seed(),
        .count_name = resolved.count_name,
    };
    fg_frame_painter painter = { plain_color, plain_details, &context };
    const char *title = tree->options.flamechart ? "Flame Chart"
                        : resolved.inverted      ? "Icicle Graph"
                                                 : "Flame Graph";
    return fg_svg_write_document(tree, &resolved, title, NULL, &painter, out, err);
}
