/* cmd_export.c: `vor export FILE --format chrome|folded|csv|speedscope [-o OUT] [--frames A..B]`:
 * converts a capture for other tools: Chrome Trace Event JSON (Perfetto, chrome://tracing,
 * DevTools), folded stacks (flamegraph.pl, inferno), CSV (spreadsheets, pandas) or
 * speedscope's own file format (speedscope.app). --frames selects the same frames in every
 * format (export_frames.c).
 *
 * This file checks the command line, opens the input and the output and hands them to
 * one export_<format>.c. Output goes to stdout unless -o names a file, which is written
 * as a temporary renamed over it at the end (output.c): a failure or Ctrl-C never leaves
 * it half-written, and an existing file survives. Long exports show progress on stderr
 * when it is a terminal.
 */
#include "cli.h"

#include <string.h>

const char cmd_export_help[] =
    "usage: vor export FILE --format chrome|folded|csv|speedscope [-o OUT] [--frames A..B]\n"
    "\n"
    "Converts a .vor capture. Output goes to stdout unless -o OUT is given.\n"
    "\n"
    "formats:\n"
    "  chrome   Chrome Trace Event JSON of the flame frames: one X event per scope, thread\n"
    "           names as M events, one C (counter) event per metric per frame. Opens\n"
    "           in Perfetto (ui.perfetto.dev), chrome://tracing and speedscope.\n"
    "  folded   folded stacks, one line per distinct stack: 'thread;outer;inner VALUE' with\n"
    "           VALUE the self time in ns inside the flame frames, summed (stacks merged by\n"
    "           name; a thread by its newest name; compensated for the profiler's own cost\n"
    "           when the capture records it, unless --raw; control characters escaped).\n"
    "           For flamegraph.pl, speedscope, inferno, 'vor flamegraph --folded'.\n"
    "  speedscope\n"
    "           speedscope's own JSON file format (www.speedscope.app): one evented profile\n"
    "           per thread (named by its newest name), frames shared, a scope's source file\n"
    "           and line in its frame's file/line, never in its name. Scopes spanning\n"
    "           consecutive flame frames are one block; times are compensated for the\n"
    "           profiler's own cost like folded's (each thread's timeline shortened by the\n"
    "           cost taken out), unless --raw.\n"
    "  csv      one row per frame: index, start_ms, duration_ms, then one column per metric\n"
    "           (header 'name (unit)'; an empty cell where a frame has no value, e.g.\n"
    "           before a metric's first value).\n"
    "\n"
    "options:\n"
    "  -f, --format F      chrome, folded, csv or speedscope (required)\n"
    "  -o, --output OUT    write to OUT instead of stdout ('-' is stdout); OUT is replaced\n"
    "                      only when the export succeeds (Ctrl-C or an error leaves it as\n"
    "                      it was); it cannot be the capture itself\n"
    "  --no-thread         folded: leave the thread name out of the stacks (threads merge)\n"
    "  --max-stacks N      folded: distinct stacks kept (2 to 16777216, default 1048576);\n"
    "                      the time of stacks beyond goes to their nearest kept ancestor,\n"
    "                      with a note\n"
    "  --raw               folded, speedscope: no overhead compensation, times as recorded\n"
    "  --frames A..B       only frames A to B (inclusive; also A.., ..B or A), in every\n"
    "                      format; a scope begun before A starts at A's start\n"
    "  --max-frame-scopes N\n"
    "                      scopes read from one frame (default 1048576, up to 16777216);\n"
    "                      a frame with more is an error (about 88 bytes of memory each)\n"
    "  -q, --quiet         no progress line on a terminal\n"
    "  -h, --help          this help\n"
    "\n"
    "A capture cut short (a crash, a writer still running) is exported up to its last\n"
    "complete frame. csv reads the capture twice (the columns first).\n"
    "\n"
    "exit status: 0 ok, 2 bad usage or bad input (missing file, not a capture, corrupt\n"
    "capture, no flame frames for folded), 1 output could not be written (also when\n"
    "stdout's reader went away, as in 'vor export ... | head': then without a message),\n"
    "130 / 143 / 129 interrupted by SIGINT / SIGTERM / SIGHUP while writing -o OUT.\n";

enum {
    OPT_FORMAT,
    OPT_OUTPUT,
    OPT_NO_THREAD,
    OPT_MAX_STACKS,
    OPT_RAW,
    OPT_MAX_FRAME_SCOPES,
    OPT_QUIET,
    OPT_HELP,
    OPT_FRAMES
};

static const cli_option export_options[] = {
    {"format", 'f', 1, OPT_FORMAT},
    {"output", 'o', 1, OPT_OUTPUT},
    {"no-thread", 0, 0, OPT_NO_THREAD},
    {"max-stacks", 0, 1, OPT_MAX_STACKS},
    {"raw", 0, 0, OPT_RAW},
    {"max-frame-scopes", 0, 1, OPT_MAX_FRAME_SCOPES},
    {"quiet", 'q', 0, OPT_QUIET},
    {"help", 'h', 0, OPT_HELP},
    {"frames", 0, 1, OPT_FRAMES},
};

#define EXPORT_MIN_STACKS 2u

static const char *const CMD = "export";

typedef int (*export_fn)(export_job *job);

static const struct {
    const char *name;
    export_fn run;
} formats[] = {
    {"chrome", export_chrome},
    {"folded", export_folded},
    {"csv", export_csv},
    {"speedscope", export_speedscope},
};

int cmd_export(int argc, char **argv) {
    cli_args args;
    if (cli_parse_args(argc - 1, argv + 1, export_options, sizeof export_options / sizeof *export_options, &args) != 0)
        return cli_usage_error(CMD, "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_export_help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count == 0) return cli_usage_error(CMD, "no capture file given");
    if (args.positional_count > 1)
        return cli_usage_error(CMD, "one capture at a time (got %d files)", args.positional_count);
    const char *format = args.values[OPT_FORMAT];
    if (!format) return cli_usage_error(CMD, "missing --format (chrome, folded, csv or speedscope)");
    export_fn run = NULL;
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (strcmp(format, formats[i].name) == 0) run = formats[i].run;
    if (!run) return cli_usage_error(CMD, "unknown format '%s' (chrome, folded, csv or speedscope)", format);
    int folded = strcmp(format, "folded") == 0, speedscope = strcmp(format, "speedscope") == 0;
    if (!folded && (args.values[OPT_NO_THREAD] || args.values[OPT_MAX_STACKS]))
        return cli_usage_error(CMD, "--no-thread and --max-stacks apply to --format folded only");
    if (!folded && !speedscope && args.values[OPT_RAW])
        return cli_usage_error(CMD, "--raw applies to --format folded and speedscope (chrome and csv are raw)");
    uint64_t frames_first = 0, frames_last = UINT64_MAX;
    if (args.values[OPT_FRAMES] && !flamegraph_parse_frame_range(args.values[OPT_FRAMES], &frames_first, &frames_last))
        return cli_usage_error(CMD, "--frames: '%s' is not a frame range (" FLAMEGRAPH_FRAME_RANGE_FORMS ")",
                               args.values[OPT_FRAMES]);
    uint64_t max_stacks = 0, max_frame_scopes = 0;
    if (args.values[OPT_MAX_STACKS] &&
        cli_parse_u64(args.values[OPT_MAX_STACKS], EXPORT_MIN_STACKS, FLAMEGRAPH_LIMIT_MAX_NODES, &max_stacks) != 0)
        return cli_usage_error(CMD, "--max-stacks needs a number from %u to %u, not '%s'", EXPORT_MIN_STACKS,
                               FLAMEGRAPH_LIMIT_MAX_NODES, args.values[OPT_MAX_STACKS]);
    if (cli_parse_max_frame_scopes(CMD, args.values[OPT_MAX_FRAME_SCOPES], &max_frame_scopes) != 0)
        return CLI_EXIT_USAGE;
    const char *path = args.positional[0];

    /* The output replaces OUT when done: never when OUT is the capture itself. */
    const char *role = "the capture being exported";
    int status = cli_output_check(CMD, "-o", args.values[OPT_OUTPUT], &path, &role, 1);
    if (status != 0) return status;

    cli_capture capture;
    status = cli_capture_open(&capture, CMD, path);
    if (status != 0) return status;
    cli_capture_set_max_frame_scopes(&capture, max_frame_scopes);
    cli_output out;
    status = cli_output_open(&out, CMD, args.values[OPT_OUTPUT]);
    if (status != 0) {
        cli_capture_close(&capture);
        return status;
    }
    cli_progress progress;
    cli_progress_init(&progress, CMD, path, capture.file_size, !args.values[OPT_QUIET]);
    export_job job = {.cmd = CMD,
                      .capture = &capture,
                      .out = &out,
                      .progress = &progress,
                      .thread_roots = !args.values[OPT_NO_THREAD],
                      .max_stacks = (uint32_t)max_stacks,
                      .raw = args.values[OPT_RAW] != NULL,
                      .max_frame_scopes = max_frame_scopes,
                      .has_frames = args.values[OPT_FRAMES] != NULL,
                      .frames_first = frames_first,
                      .frames_last = frames_last};
    status = run(&job);
    cli_progress_done(&progress);
    status = cli_output_close(&out, status, status != 0);
    cli_capture_close(&capture);
    return status;
}
