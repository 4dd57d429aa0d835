/* export_frames.c: `vor export --frames A..B`, the same selection for every format.
 *
 * Every export reads its frames through export_next_frame(), so the range means the same
 * thing in chrome, folded, csv and speedscope: the frames whose index is in [A, B]. Frames
 * before A are read and skipped (a capture has no index to seek with); reading stops at
 * the first frame past B, so exporting the start of a long capture does not read the rest.
 * A scope that began before A is cut at the first selected frame's start, as the reading
 * rules cut it at any frame's start. A range that selects nothing is an error naming the
 * frames the capture has, never an empty file.
 */
#include "cli.h"

int export_next_frame(export_job *job, cli_capture *c, vor_reader_frame *f) {
    if (job->range_passed) return 0;
    int got;
    while ((got = cli_capture_next(c, f)) == 1) {
        if (job->frames_met++ == 0) job->met_first = f->index;
        job->met_last = f->index;
        if (!job->has_frames || (f->index >= job->frames_first && f->index <= job->frames_last)) {
            job->frames_selected++;
            return 1;
        }
        if (f->index > job->frames_last) {
            job->range_passed = 1;
            return 0;
        }
        cli_progress_update(job->progress, c->frames, vor_reader_offset(c->reader));
    }
    return got;
}

int export_check_selection(export_job *job) {
    if (!job->has_frames || job->frames_selected > 0) return 0;
    char range[64];
    if (job->frames_last == UINT64_MAX)
        snprintf(range, sizeof range, "%llu..", (unsigned long long)job->frames_first);
    else
        snprintf(range, sizeof range, "%llu..%llu", (unsigned long long)job->frames_first,
                 (unsigned long long)job->frames_last);
    if (job->frames_met == 0 || job->range_passed)
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path,
                        "--frames %s selects no frame: the capture has no frame in that range", range);
    return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path,
                    "--frames %s selects no frame: the capture's frames are %llu to %llu", range,
                    (unsigned long long)job->met_first, (unsigned long long)job->met_last);
}

void export_restart_selection(export_job *job) {
    job->frames_selected = job->frames_met = job->met_first = job->met_last = 0;
    job->range_passed = 0;
}
