/* export_folded.c: `vor export --format folded`: every flame frame's scopes merged into
 * folded stacks, `thread;outer;inner VALUE`, VALUE = self time in ns summed over the flame
 * frames (compensated for the profiler's own cost unless --raw).
 *
 * The scopes go through the stack engine (stacks.c) into a native/flamegraph tree (one
 * node per distinct name path, bounded by --max-stacks), which writes itself as folded
 * text in name order: the same stacks `vor flamegraph` draws. Threads carry their newest
 * name, and names are written with control characters escaped (text.c), so printing the
 * output on a terminal cannot drive it. Memory grows with distinct stacks, never with
 * frames or calls. A capture without flame frames (recorded without VOR_RECORD_FLAME=1)
 * has no stacks: that is reported as bad input rather than written as an empty file that
 * would look like a broken export.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

int export_folded(export_job *job) {
    flamegraph_tree_options to = {false, false, job->max_stacks, 0};
    flamegraph_tree *tree = flamegraph_tree_create(&to);
    stacks st;
    memset(&st, 0, sizeof st);
    stacks_options so = {.tree = tree,
                         .thread_roots = job->thread_roots,
                         .raw = job->raw,
                         .max_frame_scopes = job->max_frame_scopes,
                         .weight = 1.0};
    if (!tree || stacks_init(&st, &so, job->capture->reader) != 0) {
        stacks_free(&st);
        flamegraph_tree_destroy(tree);
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }
    int status = 0, got;
    uint64_t flame_frames = 0;
    vor_reader_frame f;
    while ((got = export_next_frame(job, job->capture, &f)) == 1) {
        if (f.has_flame) {
            flame_frames++;
            status = cli_stacks_add(job->cmd, job->capture, &st, &f);
            if (status != 0) break;
        }
        cli_progress_update(job->progress, job->capture->frames, vor_reader_offset(job->capture->reader));
    }
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == 0) status = export_check_selection(job);
    if (status == 0 && flame_frames == 0)
        status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path,
                          job->has_frames ? "no flame frames in the frames selected (--frames)"
                                          : "no flame frames in this capture (record with VOR_RECORD_FLAME=1)");
    flamegraph_tree *written = NULL;
    if (status == 0) {
        flamegraph_status fs;
        written = stacks_final_tree(&st, job->capture->reader, &to, NULL, 1, &fs);
        if (!written) status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory writing stacks");
    }
    if (status == 0) {
        flamegraph_error err;
        errno = 0;
        flamegraph_status fs = flamegraph_write_folded(written, job->out->f, &err);
        if (fs == FLAMEGRAPH_ERR_NO_MEMORY)
            status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory writing stacks");
        /* A write error shows in the stream's error flag, reported when the output closes;
         * then these notes would only be noise (a closed pipe is quiet). */
        int written_ok = fflush(job->out->f) == 0 && !cli_output_failed(job->out);
        if (status == 0 && written_ok && st.stats.tree_refused)
            cli_note(job->cmd, job->capture->path,
                     "%llu scopes went beyond %zu distinct stacks; their time is in their nearest kept ancestor "
                     "(raise --max-stacks)",
                     (unsigned long long)st.stats.tree_refused, flamegraph_tree_get_stats(tree).max_nodes);
        if (status == 0 && written_ok && st.stats.parent_unknown)
            cli_note(job->cmd, job->capture->path,
                     "%llu scopes ended in a frame where their parent was not recorded (the capture does not list "
                     "the scopes open at that frame's end); they are under \"" STACKS_PLACEHOLDER "\"",
                     (unsigned long long)st.stats.parent_unknown);
    }
    flamegraph_tree_destroy(written);
    stacks_free(&st);
    flamegraph_tree_destroy(tree);
    return status;
}
