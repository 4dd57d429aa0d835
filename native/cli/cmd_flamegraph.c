/* cmd_flamegraph.c: `vor flamegraph FILE -o out.svg`: a capture's flame frames (or folded
 * stacks from another profiler) merged into an interactive SVG flame graph, drawn by the
 * native/flamegraph library.
 *
 * Options are the library's (the ones users know from flamegraph.pl and cargo-flamegraph:
 * --flamechart --inverted --reverse --min-width --palette --deterministic --title --notes
 * --image-width, plus --frames A..B and --thread NAME to select what is merged, --raw).
 * Scopes reach the tree through the stack engine (stacks.c), one frame at a time, so memory
 * is the tree's (capped by --max-nodes; twice that while the drawn tree is made from the
 * engine's at the end) whatever the capture's size. The notes line under the title says
 * how many scopes the writer dropped in the frames drawn, by cause, and whether times are
 * compensated.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "flamegraph.h"

static const char *const CMD = "flamegraph";

#define FOLDED_SOURCE_SHOWN 160 /* bytes of the --folded path in the library's messages */
#define SUBTITLE_PATH_SHOWN 200 /* bytes of the capture's path in the SVG's subtitle */

/* Reads folded stacks from `path` ("-": stdin, which may be a pipe; a named file must be a
 * regular file, so that a FIFO without a writer cannot hang the command). */
static int from_folded(flamegraph_tree *tree, const char *path) {
    int is_stdin = strcmp(path, "-") == 0;
    const char *subject = is_stdin ? "stdin" : path;
    FILE *in = stdin;
    char source[FOLDED_SOURCE_SHOWN + 1];
    if (is_stdin) {
        struct stat st;
        if (fstat(STDIN_FILENO, &st) == 0 && S_ISDIR(st.st_mode))
            return cli_fail(CLI_EXIT_USAGE, CMD, subject, "is a directory, not a folded stacks file");
        snprintf(source, sizeof source, "%s", subject);
    } else {
        int fd = cli_input_open(CMD, path, CLI_INPUT_FOLDED, NULL);
        if (fd < 0) return CLI_EXIT_USAGE;
        in = fdopen(fd, "r");
        if (in == NULL) {
            int e = errno;
            close(fd);
            return cli_fail(CLI_EXIT_USAGE, CMD, path, "%s", strerror(e));
        }
        /* The library's messages start with this name: short enough to leave room for the
         * problem in its 512-byte message, and already escaped. */
        cli_text_show_middle(source, sizeof source, path, FOLDED_SOURCE_SHOWN);
    }
    flamegraph_folded_options fo;
    memset(&fo, 0, sizeof fo);
    fo.source_name = source;
    flamegraph_error err;
    flamegraph_status st = flamegraph_read_folded(tree, in, &fo, &err);
    if (in != stdin) fclose(in);
    if (st != FLAMEGRAPH_OK && st != FLAMEGRAPH_DROPPED)
        return cli_fail(CLI_EXIT_USAGE, CMD, NULL, "%s", err.message); /* names the file and line */
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    if (!(stats.total > 0) && stats.dropped_stacks == 0)
        return cli_fail(CLI_EXIT_USAGE, CMD, subject, "%s",
                        "no stacks: no 'frame;frame;... COUNT' line with a count above 0");
    return CLI_EXIT_OK;
}

/* What the capture part adds to the SVG's notes: drops, compensation, missing parents. */
typedef struct capture_notes {
    uint64_t flame_frames;
    char text[1024];
} capture_notes;

static void compose_notes(capture_notes *n, const stacks *st, const drop_stats *drops) {
    char line[512];
    size_t len =
        cli_append(n->text, sizeof n->text, 0, "%s in these frames", drop_stats_line(drops, line, sizeof line));
    if (st->compensating)
        len = cli_append(n->text, sizeof n->text, len, "; times compensated for the profiler's own cost (%s)",
                         stacks_costs_text(st, line, sizeof line));
    else
        len = cli_append(n->text, sizeof n->text, len, "; times raw%s",
                         st->costs_known ? " (--raw)" : " (no calibrated cost in the capture)");
    if (st->stats.parent_unknown)
        cli_append(n->text, sizeof n->text, len, "; %llu scopes under " STACKS_PLACEHOLDER,
                   (unsigned long long)st->stats.parent_unknown);
}

static int from_capture(flamegraph_tree **tree, const flamegraph_options *opt, const char *path, capture_notes *notes) {
    cli_capture c;
    int status = cli_capture_open(&c, CMD, path);
    if (status != CLI_EXIT_OK) return status;
    cli_capture_set_max_frame_scopes(&c, opt->max_frame_scopes);
    /* Scopes go into a tree in the engine's shape (thread keys, not reversed); the tree
     * drawn is made from it at the end with the user's options and the threads' names. */
    flamegraph_tree_options engine_options = opt->tree;
    engine_options.reverse = false;
    flamegraph_tree *engine_tree = flamegraph_tree_create(&engine_options);
    stacks st;
    memset(&st, 0, sizeof st);
    drop_stats drops;
    drop_stats_init(&drops);
    stacks_options so = {.tree = engine_tree,
                         .thread_roots = 1,
                         .raw = opt->raw,
                         .max_frame_scopes = opt->max_frame_scopes,
                         .weight = 1.0};
    if (!engine_tree || stacks_init(&st, &so, c.reader) != 0)
        status = cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
    cli_progress progress;
    cli_progress_init(&progress, CMD, path, c.file_size, 1);
    vor_reader_frame f;
    int got = 0;
    notes->flame_frames = 0;
    while (status == CLI_EXIT_OK && (got = cli_capture_next(&c, &f)) == 1) {
        cli_progress_update(&progress, c.frames, vor_reader_offset(c.reader));
        if (!f.has_flame) continue;
        if (opt->has_frames && (f.index < opt->frames_first || f.index > opt->frames_last)) continue;
        status = cli_stacks_add(CMD, &c, &st, &f);
        drop_stats_add(&drops, c.reader, &f);
        notes->flame_frames++;
    }
    cli_progress_done(&progress);
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == CLI_EXIT_OK) {
        flamegraph_status fs;
        *tree = stacks_final_tree(&st, c.reader, &opt->tree, opt->thread_name, 0, &fs);
        if (!*tree) status = cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
    }
    if (status == CLI_EXIT_OK && !(flamegraph_tree_get_stats(*tree).total > 0))
        status = cli_fail(CLI_EXIT_USAGE, CMD, path, "%s",
                          notes->flame_frames == 0 && !opt->has_frames
                              ? "the capture has no flame frames (record with VOR_RECORD_FLAME=1)"
                          : opt->has_frames || opt->thread_name
                              ? "no scopes in the frames and threads selected (--frames/--thread)"
                              : "the flame frames hold no scope time");
    if (status == CLI_EXIT_OK) {
        drop_stats_sort(&drops);
        compose_notes(notes, &st, &drops);
    }
    stacks_free(&st);
    drop_stats_free(&drops);
    flamegraph_tree_destroy(engine_tree);
    cli_capture_close(&c);
    return status;
}

int cmd_flamegraph(int argc, char **argv) {
    flamegraph_options opt;
    flamegraph_error err;
    int rc = flamegraph_parse_args(argc, argv, &opt, &err);
    if (rc == FLAMEGRAPH_ARGS_HELP) {
        fputs("usage: vor flamegraph FILE -o out.svg [--frames A..B] [--thread NAME] [options]\n"
              "       vor flamegraph --folded STACKS.txt -o out.svg [options]\n"
              "\n"
              "FILE is a capture with flame frames (VOR_RECORD_FLAME=1); stacks are merged by\n"
              "name path, each thread's (newest) name at the bottom; values are nanoseconds of\n"
              "time inside the flame frames, compensated for the profiler's own cost when the\n"
              "capture records it (--raw: as recorded). Scopes whose parent the capture does\n"
              "not record (format 1.0) stand under '[parent not recorded]'. The notes line says\n"
              "how many scopes the writer dropped, and why. --folded reads the `a;b;c count`\n"
              "text of other profilers instead (a file, or - for stdin).\n"
              "The SVG goes to stdout without -o; -o OUT is replaced only once the SVG is\n"
              "complete (an error or Ctrl-C leaves it as it was) and cannot be the input.\n"
              "Exit status: 0 ok, 2 bad usage or bad input (no flame frames, no stacks),\n"
              "1 output could not be written.\n\n",
              stdout);
        fputs(flamegraph_help_text(), stdout);
        return CLI_EXIT_OK;
    }
    if (rc != FLAMEGRAPH_ARGS_OK) return cli_usage_error(CMD, "%s", err.message);
    if (opt.folded_path == NULL && opt.input_count != 1)
        return cli_usage_error(CMD, "give one capture FILE (or --folded FILE), got %zu", opt.input_count);
    if (opt.folded_path != NULL && opt.input_count != 0)
        return cli_usage_error(CMD, "--folded takes the place of a capture FILE; give one or the other");
    if (opt.output_path == NULL && isatty(STDOUT_FILENO))
        return cli_usage_error(CMD, "give -o out.svg (or redirect stdout)");
    const char *source = opt.folded_path ? opt.folded_path : opt.inputs[0];
    /* The SVG replaces -o's file when done: never the input it is drawn from. */
    const char *role = opt.folded_path ? "the folded stacks file being drawn" : "the capture being drawn";
    int status = cli_output_check(CMD, "-o", opt.output_path, &source, &role, 1);
    if (status != CLI_EXIT_OK) return status;

    if (opt.folded_path && (opt.raw || opt.max_frame_scopes || opt.has_frames || opt.thread_name))
        return cli_usage_error(CMD,
                               "--frames, --thread, --raw and --max-frame-scopes apply to a capture, not to --folded");
    if (!opt.max_frame_scopes) opt.max_frame_scopes = STACKS_DEFAULT_MAX_FRAME_SCOPES;

    flamegraph_tree *tree = NULL;
    capture_notes notes;
    memset(&notes, 0, sizeof notes);
    if (opt.folded_path) {
        tree = flamegraph_tree_create(&opt.tree);
        status = tree ? from_folded(tree, opt.folded_path) : cli_fail(CLI_EXIT_IO, CMD, NULL, "out of memory");
    } else {
        status = from_capture(&tree, &opt, source, &notes);
    }
    if (status != CLI_EXIT_OK) {
        flamegraph_tree_destroy(tree);
        return status;
    }

    char subtitle[512], shown_path[SUBTITLE_PATH_SHOWN + 1], shown_thread[128], all_notes[2048];
    if (opt.svg.count_name == NULL) opt.svg.count_name = opt.folded_path ? "samples" : "ns";
    if (opt.svg.subtitle == NULL && !opt.folded_path) {
        snprintf(subtitle, sizeof subtitle, "%s: %llu flame frame%s%s%s",
                 cli_text_show_middle(shown_path, sizeof shown_path, source, SUBTITLE_PATH_SHOWN),
                 (unsigned long long)notes.flame_frames, notes.flame_frames == 1 ? "" : "s",
                 opt.thread_name ? ", thread " : "",
                 opt.thread_name ? cli_text_show(shown_thread, sizeof shown_thread, opt.thread_name) : "");
        opt.svg.subtitle = subtitle;
    }
    if (!opt.folded_path) {
        snprintf(all_notes, sizeof all_notes, "%s%s%s", opt.svg.notes ? opt.svg.notes : "", opt.svg.notes ? "; " : "",
                 notes.text);
        opt.svg.notes = all_notes;
    }
    cli_output out;
    status = cli_output_open(&out, CMD, opt.output_path);
    if (status == CLI_EXIT_OK) {
        errno = 0;
        flamegraph_status st = flamegraph_write_svg(tree, &opt.svg, out.f, &err);
        int write_errno = errno;
        if (st == FLAMEGRAPH_ERR_WRITE)
            status = cli_write_error(CMD, cli_output_name(&out), out.path == NULL, write_errno, "cannot write the SVG");
        else if (st != FLAMEGRAPH_OK && st != FLAMEGRAPH_DROPPED && st != FLAMEGRAPH_ERR_EMPTY)
            status = cli_fail(CLI_EXIT_IO, CMD, cli_output_name(&out), "%s", err.message);
        status = cli_output_close(&out, status, status != CLI_EXIT_OK);
    }
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    if (stats.dropped_stacks)
        cli_note(CMD, source, "%llu stacks beyond --max-nodes were left out (see the SVG's notes)",
                 (unsigned long long)stats.dropped_stacks);
    flamegraph_tree_destroy(tree);
    return status;
}
