/* export_chrome.c: `vor export --format chrome`: a capture as Chrome Trace Event JSON,
 * written by the one trace writer the live VOR_TRACE output uses (core/src/chrome_frames.c),
 * so a trace exported later and a trace written live are the same events: this file only
 * hands the writer the capture's frames and names (the reader's declarations).
 *
 * Every frame gets its frame event and counters; a flame frame's scopes are written too,
 * runs of consecutive flame frames following the clipping rule of chrome_frames.h (a
 * metrics-only frame, a pause or a damaged record between two flame frames ends a run).
 * Scopes still open at the end of the capture are written clipped to its last flame frame.
 * Captures of format 1.1 and later list open scopes; in a 1.0 capture a scope spanning frames
 * is seen only when it ends.
 *
 * Memory: the writer's buffer and state; nothing grows with the number of frames.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_frames.h"
#include "cli.h"

#define CHROME_EXPORT_BUFFER_BYTES (1024u * 1024u)

static int capture_site(void *ctx, uint32_t id, vor_chrome_site_info *out) {
    const vor_reader_site *site = vor_reader_get_site(ctx, id);
    if (site == NULL) return 0;
    out->name = site->name;
    out->file = site->file;
    out->line = site->line;
    return 1;
}

static int capture_thread(void *ctx, uint32_t id, char *out, size_t cap, uint64_t *os_tid) {
    const vor_reader_thread *th = vor_reader_get_thread(ctx, id);
    if (th == NULL || cap == 0) return 0;
    const char *name = th->name ? th->name : "";
    size_t n = strnlen(name, cap - 1); /* asked every frame: no printf */
    memcpy(out, name, n);
    out[n] = '\0';
    *os_tid = th->os_tid;
    return 1;
}

static const char *capture_column(void *ctx, uint32_t id) {
    const vor_reader_column *c = vor_reader_get_column(ctx, id);
    return c ? c->name : NULL;
}

int export_chrome(export_job *job) {
    vor_reader *r = job->capture->reader;
    const vor_reader_info *info = vor_reader_get_info(r);
    /* The producer reads "vor 0.1.0 linux-x86_64": the live writer's vor_version is the
     * second word. */
    char version[64] = "";
    const char *producer = info && info->producer ? info->producer : "";
    if (strncmp(producer, "vor ", 4) == 0)
        sscanf(producer + 4, "%63s", version);
    else
        snprintf(version, sizeof version, "%s", producer);

    vor_chrome_frames_config config;
    memset(&config, 0, sizeof config);
    config.names.ctx = r;
    config.names.site = capture_site;
    config.names.thread = capture_thread;
    config.names.column = capture_column;
    config.pid = info ? info->pid : 0;
    config.process_name = info && info->process ? info->process : "";
    config.vor_version = version;
    config.wall_epoch_ns = info ? info->wall_epoch_ns : 0;
    config.open_scopes_listed = info && (info->version_major > 1 || info->version_minor >= 1);

    vor_chrome_json *json = vor_chrome_json_open_stream(job->out->f, 0, CHROME_EXPORT_BUFFER_BYTES);
    vor_chrome_frames *w = json ? vor_chrome_frames_new(json, &config) : NULL;
    if (w == NULL) {
        vor_chrome_json_close(json);
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }

    int status = 0, got;
    vor_reader_frame f;
    while ((got = export_next_frame(job, job->capture, &f)) == 1) {
        if (vor_chrome_frames_write(w, &f, f.has_flame ? VOR_CHROME_FRAME_SCOPES : 0) != 0)
            break; /* a write error: reported at close */
        cli_progress_update(job->progress, job->capture->frames, vor_reader_offset(job->capture->reader));
    }
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == 0) status = export_check_selection(job);
    vor_chrome_frames_end_run(w); /* scopes still open at the end, clipped */
    vor_chrome_frames_stats fstats;
    vor_chrome_frames_get_stats(w, &fstats);
    vor_chrome_frames_finish(w);
    vor_chrome_json_stats stats;
    vor_chrome_json_get_stats(json, &stats);
    int closed = vor_chrome_json_close(json); /* "\n]\n"; the stream stays open */
    if (status == 0 && (closed != 0 || stats.write_errno)) {
        status = cli_write_error(job->cmd, cli_output_name(job->out), job->out->path == NULL,
                                 stats.write_errno ? stats.write_errno : EIO, NULL);
    }
    if (status == 0 && stats.non_finite_omitted)
        cli_note(job->cmd, job->capture->path, "%llu NaN or infinite values were left out (JSON has no such numbers)",
                 (unsigned long long)stats.non_finite_omitted);
    if (status == 0 && fstats.adjusted)
        cli_note(job->cmd, job->capture->path,
                 "%llu scopes had times that do not nest; they were moved to the nearest times that do",
                 (unsigned long long)fstats.adjusted);
    if (status == 0 && fstats.scopes_lost)
        cli_note(job->cmd, job->capture->path, "%llu scopes were left out (out of memory, or more than %u threads)",
                 (unsigned long long)fstats.scopes_lost, VOR_CHROME_MAX_THREADS);
    return status;
}
