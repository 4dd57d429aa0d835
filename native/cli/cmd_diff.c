/* cmd_diff.c: `vor diff A B [--svg out.svg]`: how two captures of the same program differ,
 * scope by scope. Its main use: the native and the wasm run of the same example ("how much
 * slower is this code in the browser, and where?").
 *
 * The table has, per scope name present in either capture: calls, total time, mean and p95
 * time per flame frame in A and in B, and B/A of the means, sorted by the largest change in
 * time per frame (the scopes that cost the most extra time come first, whatever their
 * ratio). --svg draws a differential flame graph (B's widths, red where B is slower, blue
 * where faster) through native/flamegraph; when the captures have different numbers of
 * flame frames, B is scaled to A's count so that widths compare time per frame. The SVG
 * merges threads (no thread name at the bottom of the stacks): the native and the wasm run
 * of a program name their threads differently, so stacks match by their scope names alone
 * (a modelling choice, stated in the help and in the SVG's subtitle).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff_stats.h"
#include "flame_feed.h"
#include "flamegraph.h"

const char cmd_diff_help[] =
    "usage: vor diff A B [--svg OUT.svg] [--top N] [--json]\n"
    "\n"
    "Compares two captures scope by scope: calls, total time, and the mean and p95 time\n"
    "per flame frame (a frame without the scope counts as 0) in A and in B, with B/A of\n"
    "the means, sorted by the largest change in time per frame. Scopes are matched by\n"
    "name, so captures of different builds (native and wasm) compare. Both captures need\n"
    "flame frames (record with VOR_RECORD_FLAME=1).\n"
    "\n"
    "options:\n"
    "  --svg OUT.svg  also write a differential flame graph: B's widths, red where B is\n"
    "                 slower, blue where faster (B scaled to A's flame frame count).\n"
    "                 Threads are merged: stacks match by name path (their scope names\n"
    "                 from the outermost), whatever thread ran them. OUT.svg is replaced\n"
    "                 only once complete, and cannot be A or B.\n"
    "  --title TEXT   title of the SVG\n"
    "  --top N        rows of the table (default 40; 0 = all)\n"
    "  --json         print the table as JSON (times in ns)\n"
    "  -h, --help     this help\n"
    "\n"
    "exit status: 0 ok, 2 bad usage or bad input, 1 output could not be written.\n";

static const char *const CMD = "diff";

enum { OPT_SVG, OPT_TITLE, OPT_TOP, OPT_JSON, OPT_HELP };

static const cli_option diff_options[] = {
    {"svg", 0, 1, OPT_SVG}, {"title", 0, 1, OPT_TITLE}, {"top", 0, 1, OPT_TOP},
    {"json", 0, 0, OPT_JSON}, {"help", 'h', 0, OPT_HELP},
};

typedef struct diff_row {
    const char *name;
    diff_scope *a, *b; /* NULL when absent from that capture */
    double mean_a, mean_b, p95_a, p95_b;
} diff_row;

/* Reads a capture's flame frames into stats and, when `feed` is given, into its tree. */
static int read_capture(const char *path, diff_stats *stats, flame_feed *feed) {
    cli_capture c;
    int status = cli_capture_open(&c, CMD, path);
    if (status != CLI_EXIT_OK) return status;
    vor_reader_frame f;
    int got;
    while ((got = cli_capture_next(&c, &f)) == 1) {
        if (stats && diff_stats_add_frame(stats, c.reader, &f) != 0) {
            status = cli_fail(CLI_EXIT_IO, CMD, path, "out of memory");
            break;
        }
        if (feed && f.has_flame && flame_feed_frame(feed, c.reader, &f) != 0) {
            status = cli_fail(CLI_EXIT_IO, CMD, path, "out of memory");
            break;
        }
    }
    if (got < 0) status = CLI_EXIT_USAGE;
    cli_capture_close(&c);
    return status;
}

static int compare_rows(const void *x, const void *y) {
    const diff_row *a = x, *b = y;
    double da = fabs(a->mean_b - a->mean_a), db = fabs(b->mean_b - b->mean_a);
    if (da != db) return da < db ? 1 : -1;
    return strcmp(a->name, b->name);
}

#define NAME_COLUMN_MAX 48     /* bytes of a scope name in the text table */
#define SUBTITLE_PATH_SHOWN 160 /* bytes of each capture's path in the SVG's subtitle */

static void ms(char *out, size_t cap, double ns) {
    snprintf(out, cap, "%.3f", ns / 1e6);
}

static void print_text(FILE *out, const char *path_a, const char *path_b, const diff_stats *sa, const diff_stats *sb,
                       const diff_row *rows, size_t n) {
    fputs("A: ", out);
    cli_text_fputs(out, path_a);
    fprintf(out, " (%llu flame frames)\nB: ", (unsigned long long)sa->flame_frames);
    cli_text_fputs(out, path_b);
    fprintf(out, " (%llu flame frames)\n", (unsigned long long)sb->flame_frames);
    fprintf(out, "times in ms; mean and p95 are per flame frame (a frame without the scope counts 0)\n\n");
    int width = 5;
    for (size_t i = 0; i < n; i++) {
        size_t len = cli_text_shown_length(rows[i].name);
        if (len > (size_t)width) width = len > NAME_COLUMN_MAX ? NAME_COLUMN_MAX : (int)len;
    }
    fprintf(out, "%-*s %9s %9s %11s %11s %9s %9s %9s %9s %8s\n", width, "scope", "calls A", "calls B", "total A",
            "total B", "mean A", "mean B", "p95 A", "p95 B", "B/A");
    for (size_t i = 0; i < n; i++) {
        const diff_row *r = &rows[i];
        char ta[32], tb[32], ma[32], mb[32], pa[32], pb[32], ratio[32], name[NAME_COLUMN_MAX + 1];
        ms(ta, sizeof ta, r->a ? (double)r->a->total_ns : 0);
        ms(tb, sizeof tb, r->b ? (double)r->b->total_ns : 0);
        ms(ma, sizeof ma, r->mean_a);
        ms(mb, sizeof mb, r->mean_b);
        ms(pa, sizeof pa, r->p95_a);
        ms(pb, sizeof pb, r->p95_b);
        if (r->mean_a > 0)
            snprintf(ratio, sizeof ratio, "%.2fx", r->mean_b / r->mean_a);
        else
            snprintf(ratio, sizeof ratio, "%s", r->mean_b > 0 ? "new" : "-");
        if (r->b == NULL) snprintf(ratio, sizeof ratio, "gone");
        fprintf(out, "%-*s %9llu %9llu %11s %11s %9s %9s %9s %9s %8s\n", width, cli_text_show(name, sizeof name, r->name),
                (unsigned long long)(r->a ? r->a->calls : 0), (unsigned long long)(r->b ? r->b->calls : 0), ta, tb,
                ma, mb, pa, pb, ratio);
    }
}

static void json_side(json_writer *w, const char *key, const diff_scope *d, double mean, double p95) {
    json_object_begin(w, key);
    json_uint(w, "calls", d ? d->calls : 0);
    json_int(w, "total_ns", d ? d->total_ns : 0);
    json_double(w, "mean_ns", mean);
    json_double(w, "p95_ns", p95);
    json_object_end(w);
}

static void print_json(FILE *out, const char *path_a, const char *path_b, const diff_stats *sa, const diff_stats *sb,
                       const diff_row *rows, size_t n) {
    json_writer w;
    json_begin(&w, out, 1);
    json_object_begin(&w, NULL);
    json_object_begin(&w, "a");
    json_string(&w, "file", path_a);
    json_uint(&w, "flame_frames", sa->flame_frames);
    json_object_end(&w);
    json_object_begin(&w, "b");
    json_string(&w, "file", path_b);
    json_uint(&w, "flame_frames", sb->flame_frames);
    json_object_end(&w);
    json_array_begin(&w, "scopes");
    for (size_t i = 0; i < n; i++) {
        const diff_row *r = &rows[i];
        json_object_begin(&w, NULL);
        json_string(&w, "name", r->name);
        json_side(&w, "a", r->a, r->mean_a, r->p95_a);
        json_side(&w, "b", r->b, r->mean_b, r->p95_b);
        if (r->mean_a > 0)
            json_double(&w, "ratio", r->mean_b / r->mean_a);
        else
            json_null(&w, "ratio");
        json_object_end(&w);
    }
    json_array_end(&w);
    json_object_end(&w);
    json_end(&w);
}

static int write_svg(const char *svg_path, const char *title, const char *path_a, const char *path_b,
                     uint64_t frames_a, uint64_t frames_b) {
    flamegraph_tree_options to;
    memset(&to, 0, sizeof to);
    flamegraph_tree *ta = flamegraph_tree_create(&to), *tb = flamegraph_tree_create(&to);
    int status = (ta && tb) ? CLI_EXIT_OK : cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
    flame_feed fa, fb;
    flame_feed_init(&fa, ta, 0, NULL, 1.0);
    flame_feed_init(&fb, tb, 0, NULL, frames_b ? (double)frames_a / (double)frames_b : 1.0);
    if (status == CLI_EXIT_OK) status = read_capture(path_a, NULL, &fa);
    if (status == CLI_EXIT_OK) status = read_capture(path_b, NULL, &fb);
    if (status == CLI_EXIT_OK) {
        char subtitle[1024], shown_a[SUBTITLE_PATH_SHOWN + 1], shown_b[SUBTITLE_PATH_SHOWN + 1];
        snprintf(subtitle, sizeof subtitle, "A: %s (%llu flame frames) → B: %s (%llu)%s; threads merged; stacks match by name path",
                 cli_text_show_middle(shown_a, sizeof shown_a, path_a, SUBTITLE_PATH_SHOWN), (unsigned long long)frames_a,
                 cli_text_show_middle(shown_b, sizeof shown_b, path_b, SUBTITLE_PATH_SHOWN), (unsigned long long)frames_b,
                 frames_a != frames_b ? ", B scaled to A's frame count" : "");
        flamegraph_svg_options so;
        memset(&so, 0, sizeof so);
        so.title = title ? title : "vor diff: red = slower in B, blue = faster";
        so.subtitle = subtitle;
        so.count_name = "ns";
        cli_output out;
        status = cli_output_open(&out, CMD, svg_path);
        if (status == CLI_EXIT_OK) {
            flamegraph_error err;
            errno = 0;
            flamegraph_status st = flamegraph_write_diff_svg(ta, tb, &so, out.f, &err);
            int write_errno = errno;
            if (st == FLAMEGRAPH_ERR_WRITE)
                status = cli_write_error(CMD, cli_output_name(&out), out.path == NULL, write_errno, "cannot write the SVG");
            else if (st != FLAMEGRAPH_OK && st != FLAMEGRAPH_DROPPED && st != FLAMEGRAPH_ERR_EMPTY)
                status = cli_fail(CLI_EXIT_IO, CMD, svg_path, "%s", err.message);
            status = cli_output_close(&out, status, status != CLI_EXIT_OK);
        }
    }
    flame_feed_free(&fa);
    flame_feed_free(&fb);
    flamegraph_tree_destroy(ta);
    flamegraph_tree_destroy(tb);
    return status;
}

int cmd_diff(int argc, char **argv) {
    cli_args args;
    if (cli_parse_args(argc - 1, argv + 1, diff_options, sizeof diff_options / sizeof diff_options[0], &args) != 0)
        return cli_usage_error(CMD, "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_diff_help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count != 2)
        return cli_usage_error(CMD, "give two captures, A and B (got %d file names)", args.positional_count);
    uint64_t top = 40;
    if (args.values[OPT_TOP] && cli_parse_u64(args.values[OPT_TOP], 0, 1000000, &top) != 0)
        return cli_usage_error(CMD, "--top: '%s' is not a number of rows", args.values[OPT_TOP]);
    const char *path_a = args.positional[0], *path_b = args.positional[1];
    /* --svg replaces its file when done, and the table goes to stdout: neither may be A or B. */
    const char *inputs[2] = {path_a, path_b}, *roles[2] = {"capture A", "capture B"};
    int status = cli_output_check(CMD, "--svg", NULL, inputs, roles, 2);
    if (status == CLI_EXIT_OK && args.values[OPT_SVG])
        status = cli_output_check(CMD, "--svg", args.values[OPT_SVG], inputs, roles, 2);
    if (status != CLI_EXIT_OK) return status;

    diff_stats sa, sb;
    if (diff_stats_init(&sa) != 0 || diff_stats_init(&sb) != 0) return cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
    status = read_capture(path_a, &sa, NULL);
    if (status == CLI_EXIT_OK) status = read_capture(path_b, &sb, NULL);
    if (status == CLI_EXIT_OK && (sa.flame_frames == 0 || sb.flame_frames == 0))
        status = cli_fail(CLI_EXIT_USAGE, CMD, sa.flame_frames == 0 ? path_a : path_b, "%s",
                          "the capture has no flame frames (record with VOR_RECORD_FLAME=1)");

    diff_row *rows = NULL;
    size_t n = 0;
    if (status == CLI_EXIT_OK) {
        uint32_t na = name_table_count(sa.names), nb = name_table_count(sb.names);
        rows = calloc((size_t)na + nb + 1, sizeof *rows);
        if (rows == NULL) status = cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
        for (uint32_t id = 0; rows && id < na; id++) {
            diff_row *r = &rows[n++];
            r->name = name_table_get(sa.names, id);
            r->a = &sa.scopes[id];
            r->b = diff_stats_find(&sb, r->name);
        }
        for (uint32_t id = 0; rows && id < nb; id++) {
            const char *name = name_table_get(sb.names, id);
            if (diff_stats_find(&sa, name)) continue;
            diff_row *r = &rows[n++];
            r->name = name;
            r->b = &sb.scopes[id];
        }
        for (size_t i = 0; i < n; i++) {
            diff_row *r = &rows[i];
            r->mean_a = r->a ? diff_stats_mean_per_frame(&sa, r->a) : 0;
            r->mean_b = r->b ? diff_stats_mean_per_frame(&sb, r->b) : 0;
            r->p95_a = r->a ? diff_stats_p95_per_frame(&sa, r->a) : 0;
            r->p95_b = r->b ? diff_stats_p95_per_frame(&sb, r->b) : 0;
        }
        qsort(rows, n, sizeof *rows, compare_rows);
        if (top && n > top) n = (size_t)top;
    }
    if (status == CLI_EXIT_OK) {
        if (args.values[OPT_JSON])
            print_json(stdout, path_a, path_b, &sa, &sb, rows, n);
        else
            print_text(stdout, path_a, path_b, &sa, &sb, rows, n);
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) status = cli_write_error(CMD, "stdout", 1, errno, NULL);
    }
    if (status == CLI_EXIT_OK && args.values[OPT_SVG])
        status = write_svg(args.values[OPT_SVG], args.values[OPT_TITLE], path_a, path_b, sa.flame_frames, sb.flame_frames);
    free(rows);
    diff_stats_free(&sa);
    diff_stats_free(&sb);
    return status;
}
