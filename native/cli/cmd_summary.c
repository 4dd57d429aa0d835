/* cmd_summary.c: `vor summary FILE [--json] [--top N]`: what a capture holds, in one
 * screen: header facts, frame count and time span, per-metric min / mean / p95 / max,
 * and the scopes that took the most time (total and self), from one streaming pass.
 *
 * This file parses the command line and collects; summary_print.c formats. Memory is
 * bounded whatever the capture's size: one frame at a time, per-column statistics
 * (metric_stats.c) and per-name scope totals (bounded by the number of distinct names).
 */
#include "cli.h"

#include <string.h>

const char cmd_summary_help[] =
    "usage: vor summary FILE [--json] [--top N]\n"
    "\n"
    "Summarises a .vor capture: header facts (producer, process, pid, format version),\n"
    "frame count, time span and wall-clock start, per-metric min / mean / p95 / max over\n"
    "the frames that have the metric (NaN and infinities skipped and counted), and, for\n"
    "captures with flame frames, the top scopes by total and by self time (self = time\n"
    "not spent in child scopes) with calls and mean, plus scopes dropped by the writer.\n"
    "A capture cut short (a crash, a writer still running) is summarised up to its last\n"
    "complete frame.\n"
    "\n"
    "options:\n"
    "  --json       print one JSON object instead of text (keys: see the README)\n"
    "  --top N      rows in each top-scopes table (default 10; 0 hides them)\n"
    "  -q, --quiet  no progress line on a terminal\n"
    "  -h, --help   this help\n"
    "\n"
    "p95 is the exact nearest-rank value while a metric has at most 65,536 values, and\n"
    "within 0.4% of it beyond (a log-linear histogram).\n"
    "\n"
    "exit status: 0 ok, 2 bad usage or bad input (missing file, not a capture, corrupt\n"
    "capture), 1 output could not be written.\n";

enum { OPT_JSON, OPT_TOP, OPT_QUIET, OPT_HELP };

static const cli_option summary_options[] = {
    {"json", 0, 0, OPT_JSON},
    {"top", 0, 1, OPT_TOP},
    {"quiet", 'q', 0, OPT_QUIET},
    {"help", 'h', 0, OPT_HELP},
};

#define SUMMARY_DEFAULT_TOP 10u
#define SUMMARY_MAX_TOP 100000u

static const char *const CMD = "summary";

/* Adds one frame to the summary. Returns 0, or -1 when out of memory. */
static int collect_frame(summary *s, const vor_reader *r, const vor_reader_frame *f) {
    if (s->frames == 0) {
        s->first_index = f->index;
        s->first_start_ns = f->start_ns;
        s->last_end_ns = f->start_ns + f->duration_ns;
    }
    s->frames++;
    s->last_index = f->index;
    if (f->start_ns + f->duration_ns > s->last_end_ns) s->last_end_ns = f->start_ns + f->duration_ns;
    if (f->start_ns < s->first_start_ns) s->first_start_ns = f->start_ns;
    s->dropped_scopes += f->dropped_scopes;
    s->overhead_ns += f->overhead_ns;
    int rc = 0;
    for (uint32_t i = 0; i < f->n_values; i++)
        if (metric_stats_add(&s->metrics, f->values[i].column_id, f->values[i].value) != 0) rc = -1;
    if (f->has_flame) {
        s->flame_frames++;
        s->scopes += f->n_scopes;
        if (frame_scopes_add(&s->fs, r, f) != 0) rc = -1;
    }
    return rc;
}

int cmd_summary(int argc, char **argv) {
    cli_args args;
    if (cli_parse_args(argc - 1, argv + 1, summary_options, sizeof summary_options / sizeof *summary_options, &args) != 0)
        return cli_usage_error(CMD, "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_summary_help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count == 0) return cli_usage_error(CMD, "no capture file given");
    if (args.positional_count > 1) return cli_usage_error(CMD, "one capture at a time (got %d files)", args.positional_count);
    uint64_t top = SUMMARY_DEFAULT_TOP;
    if (args.values[OPT_TOP] && cli_parse_u64(args.values[OPT_TOP], 0, SUMMARY_MAX_TOP, &top) != 0)
        return cli_usage_error(CMD, "--top needs a number from 0 to %u, not '%s'", SUMMARY_MAX_TOP, args.values[OPT_TOP]);
    const char *path = args.positional[0];
    const char *role = "the capture being summarised"; /* `vor summary X >> X` */
    int status = cli_output_check(CMD, "stdout", NULL, &path, &role, 1);
    if (status != 0) return status;

    cli_capture cap;
    status = cli_capture_open(&cap, CMD, path);
    if (status != 0) return status;

    summary s;
    memset(&s, 0, sizeof s);
    s.path = path;
    s.reader = cap.reader;
    s.top = (uint32_t)top;
    metric_stats_init(&s.metrics);
    if (frame_scopes_init(&s.fs, NULL, 0, 1) != 0) {
        cli_capture_close(&cap);
        return cli_fail(CLI_EXIT_USAGE, CMD, path, "out of memory");
    }

    cli_progress progress;
    cli_progress_init(&progress, CMD, path, cap.file_size, !args.values[OPT_QUIET]);
    vor_reader_frame f;
    int got;
    int oom = 0;
    while ((got = cli_capture_next(&cap, &f)) == 1) {
        if (collect_frame(&s, cap.reader, &f) != 0) oom = 1;
        cli_progress_update(&progress, cap.frames, vor_reader_offset(cap.reader));
    }
    cli_progress_done(&progress);
    if (got < 0) status = CLI_EXIT_USAGE; /* the reader's message is printed */
    else if (oom) status = cli_fail(CLI_EXIT_USAGE, CMD, path, "out of memory while summarising");

    if (status == 0) {
        scope_tree_finish(s.fs.tree);
        cli_output out;
        status = cli_output_open(&out, CMD, NULL);
        if (status == 0) {
            if (args.values[OPT_JSON]) summary_print_json(&s, out.f);
            else summary_print_text(&s, out.f);
            status = cli_output_close(&out, 0, 0);
        }
    }
    frame_scopes_free(&s.fs);
    metric_stats_free(&s.metrics);
    cli_capture_close(&cap);
    return status;
}
