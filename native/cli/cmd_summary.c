/* cmd_summary.c: `vor summary FILE [--json] [--top N] [--raw]`: what a capture holds, in
 * one screen: header facts, frame count and time span, per-metric min / mean / p95 / max,
 * drops and damage, and the scopes that took the most time (total and self), from one
 * streaming pass.
 *
 * This file parses the command line and collects; summary_print.c formats. Scope figures
 * come from the stack engine (stacks.c), like every other command's. Memory is bounded
 * whatever the capture's size: one frame at a time (at most --max-frame-scopes scopes),
 * per-column statistics (metric_stats.c) and per-name figures (bounded by the engine's
 * name limit).
 */
#include "cli.h"

#include <string.h>

const char cmd_summary_help[] =
    "usage: vor summary FILE [--json] [--top N] [--raw]\n"
    "\n"
    "Summarises a .vor capture: header facts (producer, process, pid, format version,\n"
    "clock source and resolution), frame count, time span and wall-clock start, per-metric\n"
    "min / mean / p95 / max over the frames that have the metric (NaN and infinities\n"
    "skipped and counted), the scopes the writer dropped (by cause and thread), damaged\n"
    "records skipped, and, for captures with flame frames, the top scopes by total and by\n"
    "self time with calls, mean and max.\n"
    "\n"
    "Times of scopes are their time inside the flame frames read (a scope that began in\n"
    "an earlier frame counts from the frame's start); self = time not spent in child\n"
    "scopes. They are compensated for the profiler's own cost (each child scope's\n"
    "calibrated cost is taken from its parent's self time) when the capture records that\n"
    "cost (format 1.1 and later); --raw shows raw times. A capture cut short (a crash, a\n"
    "writer still running) is summarised up to its last complete frame.\n"
    "\n"
    "options:\n"
    "  --json       print one JSON object instead of text (keys: see the README)\n"
    "  --top N      rows in each top-scopes table (default 10; 0 hides them)\n"
    "  --raw        no overhead compensation: times as recorded\n"
    "  --max-frame-scopes N\n"
    "               scopes read from one frame (default 1048576, up to 16777216); a frame\n"
    "               with more is an error (memory: about 88 bytes per scope of a frame)\n"
    "  -q, --quiet  no progress line on a terminal\n"
    "  -h, --help   this help\n"
    "\n"
    "p95 is the exact nearest-rank value while a metric has at most 65,536 values, and\n"
    "within 0.4% of it beyond (a log-linear histogram).\n"
    "\n"
    "exit status: 0 ok, 2 bad usage or bad input (missing file, not a capture, corrupt\n"
    "capture, a frame over --max-frame-scopes), 1 output could not be written.\n";

enum { OPT_JSON, OPT_TOP, OPT_RAW, OPT_MAX_FRAME_SCOPES, OPT_QUIET, OPT_HELP };

static const cli_option summary_options[] = {
    {"json", 0, 0, OPT_JSON},     {"top", 0, 1, OPT_TOP},
    {"raw", 0, 0, OPT_RAW},       {"max-frame-scopes", 0, 1, OPT_MAX_FRAME_SCOPES},
    {"quiet", 'q', 0, OPT_QUIET}, {"help", 'h', 0, OPT_HELP},
};

#define SUMMARY_DEFAULT_TOP 10u
#define SUMMARY_MAX_TOP 100000u

static const char *const CMD = "summary";

static int64_t add_sat(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* Adds one frame to the summary. Returns 0 or an exit status (after the message). */
static int collect_frame(summary *s, cli_capture *c, const vor_reader_frame *f) {
    int64_t end = f->start_ns + f->duration_ns; /* the reader keeps this in range */
    if (s->frames == 0) {
        s->first_index = f->index;
        s->first_start_ns = f->start_ns;
        s->last_end_ns = end;
    }
    s->frames++;
    s->last_index = f->index;
    if (end > s->last_end_ns) s->last_end_ns = end;
    if (f->start_ns < s->first_start_ns) s->first_start_ns = f->start_ns;
    s->overhead_ns = add_sat(s->overhead_ns, f->overhead_ns);
    drop_stats_add(s->drops, c->reader, f);
    for (uint32_t i = 0; i < f->n_values; i++) {
        double v = f->values[i].value;
        /* Frame time loses the profiler's own cost the capture attributes to the frame
         * (its calibrated cost per scope times the scopes, and the mark), when compensating. */
        if (f->values[i].column_id == 0 && s->st.compensating && f->duration_ns > 0)
            v *= (double)(f->duration_ns - (f->overhead_ns < f->duration_ns ? f->overhead_ns : f->duration_ns)) /
                 (double)f->duration_ns;
        if (metric_stats_add(&s->metrics, f->values[i].column_id, v) != 0)
            return cli_fail(CLI_EXIT_USAGE, CMD, s->path, "out of memory for the metric statistics");
    }
    if (f->has_flame) {
        s->flame_frames++;
        s->scopes += f->n_scopes;
        return cli_stacks_add(CMD, c, &s->st, f);
    }
    return 0;
}

int cmd_summary(int argc, char **argv) {
    cli_args args;
    if (cli_parse_args(argc - 1, argv + 1, summary_options, sizeof summary_options / sizeof *summary_options, &args) !=
        0)
        return cli_usage_error(CMD, "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_summary_help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count == 0) return cli_usage_error(CMD, "no capture file given");
    if (args.positional_count > 1)
        return cli_usage_error(CMD, "one capture at a time (got %d files)", args.positional_count);
    uint64_t top = SUMMARY_DEFAULT_TOP;
    if (args.values[OPT_TOP] && cli_parse_u64(args.values[OPT_TOP], 0, SUMMARY_MAX_TOP, &top) != 0)
        return cli_usage_error(CMD, "--top needs a number from 0 to %u, not '%s'", SUMMARY_MAX_TOP,
                               args.values[OPT_TOP]);
    uint64_t max_frame_scopes = 0;
    if (cli_parse_max_frame_scopes(CMD, args.values[OPT_MAX_FRAME_SCOPES], &max_frame_scopes) != 0)
        return CLI_EXIT_USAGE;
    const char *path = args.positional[0];
    const char *role = "the capture being summarised"; /* `vor summary X >> X` */
    int status = cli_output_check(CMD, "stdout", NULL, &path, &role, 1);
    if (status != 0) return status;

    cli_capture cap;
    status = cli_capture_open(&cap, CMD, path);
    if (status != 0) return status;
    cli_capture_set_max_frame_scopes(&cap, max_frame_scopes);

    summary s;
    drop_stats drops;
    memset(&s, 0, sizeof s);
    drop_stats_init(&drops);
    s.path = path;
    s.reader = cap.reader;
    s.top = (uint32_t)top;
    s.drops = &drops;
    metric_stats_init(&s.metrics);
    stacks_options so = {.tree = NULL,
                         .thread_roots = 0,
                         .raw = args.values[OPT_RAW] != NULL,
                         .max_frame_scopes = max_frame_scopes,
                         .weight = 1.0,
                         .per_frame = 1};
    if (stacks_init(&s.st, &so, cap.reader) != 0) {
        stacks_free(&s.st);
        cli_capture_close(&cap);
        return cli_fail(CLI_EXIT_USAGE, CMD, path, "out of memory");
    }

    cli_progress progress;
    cli_progress_init(&progress, CMD, path, cap.file_size, !args.values[OPT_QUIET]);
    vor_reader_frame f;
    int got;
    while ((got = cli_capture_next(&cap, &f)) == 1) {
        status = collect_frame(&s, &cap, &f);
        if (status != 0) break;
        cli_progress_update(&progress, cap.frames, vor_reader_offset(cap.reader));
    }
    cli_progress_done(&progress);
    if (got < 0) status = CLI_EXIT_USAGE; /* the reader's message is printed */

    if (status == 0) {
        drop_stats_sort(&drops);
        cli_output out;
        status = cli_output_open(&out, CMD, NULL);
        if (status == 0) {
            if (args.values[OPT_JSON])
                summary_print_json(&s, out.f);
            else
                summary_print_text(&s, out.f);
            status = cli_output_close(&out, 0, 0);
        }
    }
    stacks_free(&s.st);
    drop_stats_free(&drops);
    metric_stats_free(&s.metrics);
    cli_capture_close(&cap);
    return status;
}
