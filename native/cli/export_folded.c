/* export_folded.c: `vor export --format folded`: every flame frame's scopes merged into
 * folded stacks, `thread;outer;inner VALUE`, VALUE = self time in ns summed over the run.
 *
 * The scopes go through scope_tree.c into a stack_trie (one node per distinct name
 * path, bounded by --max-stacks), then folded.c writes the trie in name order. Memory
 * grows with distinct stacks, never with frames or calls. A capture without flame frames
 * (recorded without VOR_RECORD_FLAME=1) has no stacks: that is reported as bad input
 * rather than written as an empty file that would look like a broken export.
 */
#include "cli.h"

int export_folded(export_job *job) {
    stack_trie *trie = stack_trie_create(job->max_stacks);
    frame_scopes fs;
    if (!trie || frame_scopes_init(&fs, trie, job->thread_roots, 0) != 0) {
        stack_trie_destroy(trie);
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }
    int status = 0, got;
    uint64_t flame_frames = 0;
    vor_reader_frame f;
    while ((got = cli_capture_next(job->capture, &f)) == 1) {
        if (f.has_flame) {
            flame_frames++;
            if (frame_scopes_add(&fs, job->capture->reader, &f) != 0) {
                status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory at frame %llu",
                                  (unsigned long long)f.index);
                break;
            }
        }
        cli_progress_update(job->progress, job->capture->frames, vor_reader_offset(job->capture->reader));
    }
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == 0 && flame_frames == 0)
        status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path,
                          "no flame frames in this capture (record with VOR_RECORD_FLAME=1)");
    if (status == 0) {
        scope_tree_finish(fs.tree);
        if (folded_write(trie, fs.names, job->out->f) != 0)
            status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory while writing stacks");
        stack_trie_stats ts = stack_trie_get_stats(trie);
        if (status == 0 && ts.refused)
            cli_note(job->cmd, job->capture->path,
                     "%llu scopes went beyond %u distinct stacks; their time is in their nearest kept ancestor "
                     "(raise --max-stacks)",
                     (unsigned long long)ts.refused, ts.max_nodes);
    }
    frame_scopes_free(&fs);
    stack_trie_destroy(trie);
    return status;
}
