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
#include "flamegraph.h"

const char cmd_diff_help[] = "usage: vor diff A B [--svg OUT.svg] [--top N] [--json] [--raw]\n"
                             "\n"
                             "Compares two captures scope by scope: calls, total time, and the mean and p95 time\n"
                             "per flame frame (a frame without the scope counts as 0) in A and in B, with B/A of\n"
                             "the means, sorted by the largest change in time per frame. Scopes are matched by\n"
                             "name, so captures of different builds (native and wasm) compare. Times are the\n"
                             "scopes' time inside the flame frames (a scope nested in one of the same name counted\n"
                             "once), compensated for the profiler's own cost when a capture records it. The\n"
                             "header lines say how many scopes each capture dropped in its flame frames, and why.\n"
                             "Both captures need flame frames (record with VOR_RECORD_FLAME=1).\n"
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
                             "  --raw          no overhead compensation: times as recorded\n"
                             "  --max-frame-scopes N\n"
                             "                 scopes read from one frame (default 1048576, up to 16777216); a\n"
                             "                 frame with more is an error (about 88 bytes of memory each)\n"
                             "  -h, --help     this help\n"
                             "\n"
                             "exit status: 0 ok, 2 bad usage or bad input, 1 output could not be written.\n";

static const char *const CMD = "diff";

enum { OPT_SVG, OPT_TITLE, OPT_TOP, OPT_JSON, OPT_RAW, OPT_MAX_FRAME_SCOPES, OPT_HELP };

static const cli_option diff_options[] = {
    {"svg", 0, 1, OPT_SVG},     {"title", 0, 1, OPT_TITLE}, {"top", 0, 1, OPT_TOP},
    {"json", 0, 0, OPT_JSON},   {"raw", 0, 0, OPT_RAW},     {"max-frame-scopes", 0, 1, OPT_MAX_FRAME_SCOPES},
    {"help", 'h', 0, OPT_HELP},
};

typedef struct diff_row {
    const char *name;
    const stacks_name *a, *b; /* NULL when absent from that capture */
    double mean_a, mean_b, p95_a, p95_b;
} diff_row;

/* Reads a capture's frames into `stats`, made with `options` (a tree for the SVG, or none
 * for the table). */
static int read_capture(const char *path, diff_stats *stats, const stacks_options *options) {
    cli_capture c;
    int status = cli_capture_open(&c, CMD, path);
    if (status != CLI_EXIT_OK) return status;
    cli_capture_set_max_frame_scopes(&c, options->max_frame_scopes);
    if (diff_stats_init(stats, options, c.reader) != 0) status = cli_fail(CLI_EXIT_IO, CMD, path, "out of memory");
    vor_reader_frame f;
    int got = 0;
    while (status == CLI_EXIT_OK && (got = cli_capture_next(&c, &f)) == 1)
        status = diff_stats_add_frame(stats, CMD, &c, &f);
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == CLI_EXIT_OK) drop_stats_sort(&stats->drops);
    cli_capture_close(&c);
    return status;
}

/* "1,234 scopes dropped (...); times compensated" for the header lines and the SVG. */
static void side_notes(char *buf, size_t cap, const diff_stats *s) {
    char drops[400];
    snprintf(buf, cap, "%s; times %s", drop_stats_line(&s->drops, drops, sizeof drops),
             s->st.compensating  ? "compensated"
             : s->st.costs_known ? "raw (--raw)"
                                 : "raw (no calibrated cost recorded)");
}

static int compare_rows(const void *x, const void *y) {
    const diff_row *a = x, *b = y;
    double da = fabs(a->mean_b - a->mean_a), db = fabs(b->mean_b - b->mean_a);
    if (da != db) return da < db ? 1 : -1;
    return strcmp(a->name, b->name);
}

#define NAME_COLUMN_MAX 48      /* bytes of a scope name in the text table */
#define SUBTITLE_PATH_SHOWN 160 /* bytes of each capture's path in the SVG's subtitle */

static void ms(char *out, size_t cap, double ns) {
    snprintf(out, cap, "%.3f", ns / 1e6);
}

static void print_text(FILE *out, const char *path_a, const char *path_b, const diff_stats *sa, const diff_stats *sb,
                       const diff_row *rows, size_t n) {
    char notes[512];
    fputs("A: ", out);
    cli_text_fputs(out, path_a);
    side_notes(notes, sizeof notes, sa);
    fprintf(out, " (%llu flame frames; %s)\nB: ", (unsigned long long)sa->flame_frames, notes);
    cli_text_fputs(out, path_b);
    side_notes(notes, sizeof notes, sb);
    fprintf(out, " (%llu flame frames; %s)\n", (unsigned long long)sb->flame_frames, notes);
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
        fprintf(out, "%-*s %9llu %9llu %11s %11s %9s %9s %9s %9s %8s\n", width,
                cli_text_show(name, sizeof name, r->name), (unsigned long long)(r->a ? r->a->calls : 0),
                (unsigned long long)(r->b ? r->b->calls : 0), ta, tb, ma, mb, pa, pb, ratio);
    }
}

static void json_side(json_writer *w, const char *key, const stacks_name *d, double mean, double p95) {
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
    const char *paths[2] = {path_a, path_b};
    const diff_stats *sides[2] = {sa, sb};
    for (int k = 0; k < 2; k++) {
        json_object_begin(&w, k ? "b" : "a");
        json_string(&w, "file", paths[k]);
        json_uint(&w, "flame_frames", sides[k]->flame_frames);
        json_bool(&w, "compensated", sides[k]->st.compensating);
        drop_stats_print_json(&sides[k]->drops, &w, "drops");
        json_object_end(&w);
    }
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
                     const diff_stats *table_a, const diff_stats *table_b, int raw, uint64_t max_frame_scopes) {
    uint64_t frames_a = table_a->flame_frames, frames_b = table_b->flame_frames;
    flamegraph_tree_options to;
    memset(&to, 0, sizeof to);
    flamegraph_tree *ta = flamegraph_tree_create(&to), *tb = flamegraph_tree_create(&to);
    int status = (ta && tb) ? CLI_EXIT_OK : cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
    /* Threads merged (no thread frames): stacks match by name path. */
    stacks_options oa = {
        .tree = ta, .thread_roots = 0, .raw = raw, .max_frame_scopes = max_frame_scopes, .weight = 1.0};
    stacks_options ob = {.tree = tb,
                         .thread_roots = 0,
                         .raw = raw,
                         .max_frame_scopes = max_frame_scopes,
                         .weight = frames_b ? (double)frames_a / (double)frames_b : 1.0};
    diff_stats sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    if (status == CLI_EXIT_OK) status = read_capture(path_a, &sa, &oa);
    if (status == CLI_EXIT_OK) status = read_capture(path_b, &sb, &ob);
    if (status == CLI_EXIT_OK) {
        char subtitle[1024], notes[1200], notes_a[512], notes_b[512], shown_a[SUBTITLE_PATH_SHOWN + 1],
            shown_b[SUBTITLE_PATH_SHOWN + 1];
        snprintf(subtitle, sizeof subtitle,
                 "A: %s (%llu flame frames) → B: %s (%llu)%s; threads merged; stacks match by name path",
                 cli_text_show_middle(shown_a, sizeof shown_a, path_a, SUBTITLE_PATH_SHOWN),
                 (unsigned long long)frames_a,
                 cli_text_show_middle(shown_b, sizeof shown_b, path_b, SUBTITLE_PATH_SHOWN),
                 (unsigned long long)frames_b, frames_a != frames_b ? ", B scaled to A's frame count" : "");
        side_notes(notes_a, sizeof notes_a, table_a);
        side_notes(notes_b, sizeof notes_b, table_b);
        snprintf(notes, sizeof notes, "A: %s. B: %s", notes_a, notes_b);
        flamegraph_svg_options so;
        memset(&so, 0, sizeof so);
        so.title = title ? title : "vor diff: red = slower in B, blue = faster";
        so.subtitle = subtitle;
        so.notes = notes;
        so.count_name = "ns";
        cli_output out;
        status = cli_output_open(&out, CMD, svg_path);
        if (status == CLI_EXIT_OK) {
            flamegraph_error err;
            errno = 0;
            flamegraph_status st = flamegraph_write_diff_svg(ta, tb, &so, out.f, &err);
            int write_errno = errno;
            if (st == FLAMEGRAPH_ERR_WRITE)
                status =
                    cli_write_error(CMD, cli_output_name(&out), out.path == NULL, write_errno, "cannot write the SVG");
            else if (st != FLAMEGRAPH_OK && st != FLAMEGRAPH_DROPPED && st != FLAMEGRAPH_ERR_EMPTY)
                status = cli_fail(CLI_EXIT_IO, CMD, svg_path, "%s", err.message);
            status = cli_output_close(&out, status, status != CLI_EXIT_OK);
        }
    }
    diff_stats_free(&sa);
    diff_stats_free(&sb);
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
    uint64_t top = 40, max_frame_scopes = 0;
    if (args.values[OPT_TOP] && cli_parse_u64(args.values[OPT_TOP], 0, 1000000, &top) != 0)
        return cli_usage_error(CMD, "--top: '%s' is not a number of rows", args.values[OPT_TOP]);
    if (cli_parse_max_frame_scopes(CMD, args.values[OPT_MAX_FRAME_SCOPES], &max_frame_scopes) != 0)
        return CLI_EXIT_USAGE;
    int raw = args.values[OPT_RAW] != NULL;
    const char *path_a = args.positional[0], *path_b = args.positional[1];
    /* --svg replaces its file when done, and the table goes to stdout: neither may be A or B. */
    const char *inputs[2] = {path_a, path_b}, *roles[2] = {"capture A", "capture B"};
    int status = cli_output_check(CMD, "--svg", NULL, inputs, roles, 2);
    if (status == CLI_EXIT_OK && args.values[OPT_SVG])
        status = cli_output_check(CMD, "--svg", args.values[OPT_SVG], inputs, roles, 2);
    if (status != CLI_EXIT_OK) return status;

    diff_stats sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    stacks_options table = {.tree = NULL,
                            .thread_roots = 0,
                            .raw = raw,
                            .max_frame_scopes = max_frame_scopes,
                            .weight = 1.0,
                            .per_frame = 1};
    status = read_capture(path_a, &sa, &table);
    if (status == CLI_EXIT_OK) status = read_capture(path_b, &sb, &table);
    if (status == CLI_EXIT_OK && (sa.flame_frames == 0 || sb.flame_frames == 0))
        status = cli_fail(CLI_EXIT_USAGE, CMD, sa.flame_frames == 0 ? path_a : path_b, "%s",
                          "the capture has no flame frames (record with VOR_RECORD_FLAME=1)");

    diff_row *rows = NULL;
    size_t n = 0;
    if (status == CLI_EXIT_OK) {
        uint32_t na = name_table_count(sa.st.names), nb = name_table_count(sb.st.names);
        rows = calloc((size_t)na + nb + 1, sizeof *rows);
        if (rows == NULL) status = cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
        for (uint32_t id = 0; rows && id < na; id++) {
            const stacks_name *a = stacks_get_name(&sa.st, id);
            if (!stacks_name_used(a)) continue; /* a name interned but never given time */
            diff_row *r = &rows[n++];
            r->name = name_table_get(sa.st.names, id);
            r->a = a;
            r->b = stacks_get_name(&sb.st, diff_stats_find(&sb, r->name));
            r->mean_a = diff_stats_mean_per_frame(&sa, id);
            r->p95_a = diff_stats_p95_per_frame(&sa, id);
        }
        for (uint32_t id = 0; rows && id < nb; id++) {
            const stacks_name *b = stacks_get_name(&sb.st, id);
            if (!stacks_name_used(b)) continue;
            const char *name = name_table_get(sb.st.names, id);
            const stacks_name *a = stacks_get_name(&sa.st, diff_stats_find(&sa, name));
            if (stacks_name_used(a)) continue; /* a row already */
            diff_row *r = &rows[n++];
            r->name = name;
            r->b = b;
        }
        for (size_t i = 0; i < n; i++) {
            diff_row *r = &rows[i];
            if (r->a && !r->b) continue;
            uint32_t id = diff_stats_find(&sb, r->name);
            r->mean_b = diff_stats_mean_per_frame(&sb, id);
            r->p95_b = diff_stats_p95_per_frame(&sb, id);
            if (!stacks_name_used(r->b)) r->b = NULL;
        }
        if (n > 1) qsort(rows, n, sizeof *rows, compare_rows);
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
        status =
            write_svg(args.values[OPT_SVG], args.values[OPT_TITLE], path_a, path_b, &sa, &sb, raw, max_frame_scopes);
    free(rows);
    diff_stats_free(&sa);
    diff_stats_free(&sb);
    return status;
}
