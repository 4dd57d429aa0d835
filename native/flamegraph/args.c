/*
 * args.c: the command line of `vor flamegraph`, and its --help text.
 *
 * A table of options drives the `vor` command's one parser (native/args/arg_parser.h) rather
 * than getopt_long; the caller gets one message back and decides where it goes (exit status 2).
 * `vor diff` has its own command line (native/cli/cmd_diff.c), so nothing here is about two
 * inputs. Options and file names may come in any order, "--" ends the options, values come as the next
 * argument or after '=' (or glued to a short option: -oOUT). Nothing is allocated: strings in
 * the result point into argv.
 */
#include "flamegraph_internal.h"

#include <string.h>

#include "arg_parser.h"

typedef enum option_id {
    OPTION_FLAMECHART,
    OPTION_INVERTED,
    OPTION_REVERSE,
    OPTION_MIN_WIDTH,
    OPTION_PALETTE,
    OPTION_DETERMINISTIC,
    OPTION_SEED,
    OPTION_TITLE,
    OPTION_SUBTITLE,
    OPTION_NOTES,
    OPTION_IMAGE_WIDTH,
    OPTION_FONT_SIZE,
    OPTION_COUNT_NAME,
    OPTION_MAX_NODES,
    OPTION_FOLDED,
    OPTION_OUTPUT,
    OPTION_FRAMES,
    OPTION_THREAD,
    OPTION_RAW,
    OPTION_MAX_FRAME_SCOPES,
    OPTION_HELP,
} option_id;

typedef vor_arg_option option_spec;

static const option_spec option_specs[] = {
    { "flamechart", 0, false, OPTION_FLAMECHART },
    { "inverted", 'i', false, OPTION_INVERTED },
    { "reverse", 0, false, OPTION_REVERSE },
    { "min-width", 0, true, OPTION_MIN_WIDTH },
    { "palette", 0, true, OPTION_PALETTE },
    { "deterministic", 0, false, OPTION_DETERMINISTIC },
    { "seed", 0, true, OPTION_SEED },
    { "title", 0, true, OPTION_TITLE },
    { "subtitle", 0, true, OPTION_SUBTITLE },
    { "notes", 0, true, OPTION_NOTES },
    { "image-width", 0, true, OPTION_IMAGE_WIDTH },
    { "font-size", 0, true, OPTION_FONT_SIZE },
    { "count-name", 0, true, OPTION_COUNT_NAME },
    { "max-nodes", 0, true, OPTION_MAX_NODES },
    { "folded", 0, true, OPTION_FOLDED },
    { "output", 'o', true, OPTION_OUTPUT },
    { "frames", 0, true, OPTION_FRAMES },
    { "thread", 0, true, OPTION_THREAD },
    { "raw", 0, false, OPTION_RAW },
    { "max-frame-scopes", 0, true, OPTION_MAX_FRAME_SCOPES },
    { "help", 'h', false, OPTION_HELP },
};

#define OPTION_COUNT (sizeof option_specs / sizeof option_specs[0])

/* Bounds of the numeric options. */
#define MIN_IMAGE_WIDTH 100u
#define MAX_IMAGE_WIDTH 100000u
#define MIN_FONT_SIZE 4u
#define MAX_FONT_SIZE 200u
#define MIN_MAX_NODES 16u
#define MAX_FRAME_SCOPES (1u << 24)
#define EVERYTHING_MIN_WIDTH 1e-9 /* pixels: "--min-width 0" draws every frame */

static const char help_text[] =
    "Draws an interactive flame graph (SVG) from a capture or folded stacks.\n"
    "\n"
    "Layout:\n"
    "  --flamechart          keep time order: a frame merges only with the previous one of the\n"
    "                        same name (default: merge all frames with the same stack)\n"
    "  -i, --inverted        icicle graph: root at the top (default: root at the bottom)\n"
    "  --reverse             stack-reversed graph: leaf functions at the root\n"
    "  --min-width X[%]      omit frames narrower than X pixels, or X percent of the width;\n"
    "                        their time still counts in their parent (default: 0.1; 0 = all)\n"
    "  --image-width W       image width in pixels (default: 1200)\n"
    "  --font-size N         font size in pixels (default: 12)\n"
    "  --max-nodes N         most distinct frames kept; further stacks are dropped and\n"
    "                        reported (default: 1048576)\n"
    "\n"
    "Colours and text:\n"
    "  --palette P           hot (default), mem, io, red, green, blue, aqua, yellow, purple,\n"
    "                        orange\n"
    "  --deterministic       a name gets the same colour in every run and every graph\n"
    "                        (default: random shades of the palette)\n"
    "  --seed N              fix the random colours (N > 0), for reproducible files\n"
    "  --title T             title (default: Flame Graph, Flame Chart or Icicle Graph)\n"
    "  --subtitle S          a line under the title\n"
    "  --notes N             a notes line under the subtitle, also kept in <desc>\n"
    "  --count-name U        unit of the values: ns, us, ms or s show times (\"12.3 ms\"),\n"
    "                        any other word is printed after the number (default: samples)\n"
    "\n"
    "Input and output:\n"
    "  --folded FILE         read folded stacks (\"a;b;c 123\" lines) from FILE, - for stdin\n"
    "  -o, --output OUT      write the SVG to OUT\n"
    "  -h, --help            show this text\n"
    "\n"
    "Captures only:\n"
    "  --frames A..B         only frames A to B (A.., ..B and A work too)\n"
    "  --thread NAME         only the thread called NAME (its newest name)\n"
    "  --raw                 times as recorded (default: compensated for the profiler's own\n"
    "                        cost when the capture records it)\n"
    "  --max-frame-scopes N  scopes read from one frame (default 1048576, up to 16777216); a\n"
    "                        frame with more is an error (about 88 bytes of memory each)\n"
    "\n"
    "Options may come before or after the file names; -- ends the options.\n"
    "In the SVG: hover for details, click a frame to zoom, Search (or Ctrl+F) takes a regular\n"
    "expression or plain text, Escape resets.\n";

const char *flamegraph_help_text(void)
{
    return help_text;
}

/* Digits only, no sign, no overflow. */
static bool parse_u64(const char *text, size_t length, uint64_t *value)
{
    if (length == 0)
        return false;
    uint64_t result = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        unsigned digit = (unsigned)(text[i] - '0');
        if (result > (UINT64_MAX - digit) / 10)
            return false;
        result = result * 10 + digit;
    }
    *value = result;
    return true;
}

/* A non-negative decimal number "12", "0.5", ".5"; locale-independent. */
static bool parse_decimal(const char *text, size_t length, double *value)
{
    double whole = 0.0, fraction = 0.0, scale = 1.0;
    size_t i = 0, digits = 0;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; i++, digits++)
        whole = whole * 10.0 + (text[i] - '0');
    if (i < length && text[i] == '.')
        for (i++; i < length && text[i] >= '0' && text[i] <= '9'; i++, digits++)
            if (scale < 1e15) {
                fraction = fraction * 10.0 + (text[i] - '0');
                scale *= 10.0;
            }
    if (i != length || digits == 0)
        return false;
    *value = whole + fraction / scale;
    return true;
}

static int usage_error(flamegraph_error *err, const char *format, const char *a, const char *b)
{
    fg_fail(err, FLAMEGRAPH_ERR_USAGE, 0, format, a, b);
    return FLAMEGRAPH_ARGS_USAGE_ERROR;
}

/* An unsigned option value within [low, high]. */
static int parse_bounded(const char *option, const char *value, uint64_t low, uint64_t high,
                         uint64_t *out, flamegraph_error *err)
{
    uint64_t number;
    if (!parse_u64(value, strlen(value), &number) || number < low || number > high) {
        fg_fail(err, FLAMEGRAPH_ERR_USAGE, 0, "%s: '%s' is not a whole number from %llu to %llu",
                option, value, (unsigned long long)low, (unsigned long long)high);
        return FLAMEGRAPH_ARGS_USAGE_ERROR;
    }
    *out = number;
    return FLAMEGRAPH_ARGS_OK;
}

static int parse_min_width(const char *value, flamegraph_svg_options *svg, flamegraph_error *err)
{
    size_t length = strlen(value);
    bool percent = false;
    if (length > 0 && value[length - 1] == '%') {
        percent = true;
        length--;
    } else if (length > 2 && strcmp(value + length - 2, "px") == 0) {
        length -= 2;
    }
    double width;
    if (!parse_decimal(value, length, &width) || (percent && width > 100.0))
        return usage_error(err,
                           "%s: '%s' is not a width (pixels such as 0.5, or a percentage of "
                           "the image such as 0.1%%)",
                           "--min-width", value);
    svg->min_width = width > 0 ? width : EVERYTHING_MIN_WIDTH;
    svg->min_width_is_percent = percent && width > 0;
    return FLAMEGRAPH_ARGS_OK;
}

bool flamegraph_parse_frame_range(const char *value, uint64_t *first_out, uint64_t *last_out)
{
    const char *dots = strstr(value, "..");
    uint64_t first = 0, last = UINT64_MAX;
    bool ok;
    if (dots == NULL) {
        ok = parse_u64(value, strlen(value), &first);
        last = first;
    } else {
        size_t first_length = (size_t)(dots - value);
        const char *rest = dots + 2;
        ok = (first_length > 0 || *rest != '\0') &&
             (first_length == 0 || parse_u64(value, first_length, &first)) &&
             (*rest == '\0' || parse_u64(rest, strlen(rest), &last));
    }
    if (!ok || first > last) return false;
    *first_out = first;
    *last_out = last;
    return true;
}

static int parse_frames(const char *value, flamegraph_options *out, flamegraph_error *err)
{
    uint64_t first, last;
    if (!flamegraph_parse_frame_range(value, &first, &last))
        return usage_error(err, "%s: '%s' is not a frame range (" FLAMEGRAPH_FRAME_RANGE_FORMS ")",
                           "--frames", value);
    out->has_frames = true;
    out->frames_first = first;
    out->frames_last = last;
    return FLAMEGRAPH_ARGS_OK;
}

static int apply_option(const option_spec *spec, const char *value, flamegraph_options *out,
                        flamegraph_error *err)
{
    uint64_t number = 0;
    int rc = FLAMEGRAPH_ARGS_OK;
    switch (spec->id) {
    case OPTION_FLAMECHART: out->tree.flamechart = true; break;
    case OPTION_INVERTED: out->svg.inverted = true; break;
    case OPTION_REVERSE: out->tree.reverse = true; break;
    case OPTION_DETERMINISTIC: out->svg.deterministic = true; break;
    case OPTION_RAW: out->raw = true; break;
    case OPTION_HELP: return FLAMEGRAPH_ARGS_HELP;
    case OPTION_MIN_WIDTH: return parse_min_width(value, &out->svg, err);
    case OPTION_FRAMES: return parse_frames(value, out, err);
    case OPTION_PALETTE:
        if (!flamegraph_palette_from_name(value, &out->svg.palette))
            return usage_error(err,
                               "%s: unknown palette '%s' (one of hot, mem, io, red, green, blue, "
                               "aqua, yellow, purple, orange)",
                               "--palette", value);
        break;
    case OPTION_SEED:
        rc = parse_bounded("--seed", value, 1, UINT64_MAX, &number, err);
        out->svg.color_seed = number;
        break;
    case OPTION_IMAGE_WIDTH:
        rc = parse_bounded("--image-width", value, MIN_IMAGE_WIDTH, MAX_IMAGE_WIDTH, &number, err);
        out->svg.image_width = (unsigned)number;
        break;
    case OPTION_FONT_SIZE:
        rc = parse_bounded("--font-size", value, MIN_FONT_SIZE, MAX_FONT_SIZE, &number, err);
        out->svg.font_size = (unsigned)number;
        break;
    case OPTION_MAX_NODES:
        rc = parse_bounded("--max-nodes", value, MIN_MAX_NODES, FLAMEGRAPH_LIMIT_MAX_NODES,
                           &number, err);
        out->tree.max_nodes = (size_t)number;
        break;
    case OPTION_MAX_FRAME_SCOPES:
        rc = parse_bounded("--max-frame-scopes", value, 1, MAX_FRAME_SCOPES, &number, err);
        out->max_frame_scopes = number;
        break;
    case OPTION_TITLE: out->svg.title = value; break;
    case OPTION_SUBTITLE: out->svg.subtitle = value; break;
    case OPTION_NOTES: out->svg.notes = value; break;
    case OPTION_COUNT_NAME: out->svg.count_name = value; break;
    case OPTION_FOLDED: out->folded_path = value; break;
    case OPTION_OUTPUT: out->output_path = value; break;
    case OPTION_THREAD: out->thread_name = value; break;
    }
    return rc;
}

int flamegraph_parse_args(int argc, char **argv, flamegraph_options *out, flamegraph_error *err)
{
    flamegraph_error ignored;
    if (err == NULL)
        err = &ignored;
    fg_clear_error(err);
    if (out == NULL || argc < 0 || (argc > 0 && argv == NULL))
        return usage_error(err, "%s%s", "flamegraph_parse_args: no result structure", "");
    memset(out, 0, sizeof *out);

    vor_arg_parser parser;
    vor_arg_parser_init(&parser, argc, argv, 1, option_specs, OPTION_COUNT);
    for (;;) {
        const option_spec *spec;
        const char *value;
        switch (vor_arg_next(&parser, &spec, &value)) {
        case VOR_ARG_DONE:
            return FLAMEGRAPH_ARGS_OK;
        case VOR_ARG_POSITIONAL:
            if (out->input_count == FLAMEGRAPH_MAX_INPUTS) {
                fg_fail(err, FLAMEGRAPH_ERR_USAGE, 0, "too many file names: '%s' (at most %u)",
                        value, FLAMEGRAPH_MAX_INPUTS);
                return FLAMEGRAPH_ARGS_USAGE_ERROR;
            }
            out->inputs[out->input_count++] = value;
            break;
        case VOR_ARG_ERROR:
            if (parser.error_kind == VOR_ARG_UNEXPECTED_VALUE)
                return usage_error(err, "option '--%s' takes no value (in '%s')", parser.option->long_name,
                                   parser.arg);
            if (parser.error_kind == VOR_ARG_MISSING_VALUE)
                return usage_error(err, "option '%s' needs a value%s", parser.arg, "");
            return usage_error(err, "unknown option '%s'%s", parser.arg, "");
        case VOR_ARG_OPTION: {
            int rc = apply_option(spec, value, out, err);
            if (rc != FLAMEGRAPH_ARGS_OK)
                return rc; /* --help wins over whatever follows it */
            break;
        }
        }
    }
}
