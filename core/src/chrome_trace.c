/* chrome_trace.c: the VOR_TRACE output, a consumer that writes the frame records of a
 * session as Chrome Trace Event JSON as they arrive, through the one trace writer
 * (chrome_frames.c, which `vor export --format chrome` uses too) and the JSON writer
 * (chrome_json.c). What the events are is described in chrome_frames.h; this file adds
 * only what is live:
 *   - the file: opened (created or truncated) at session start, written once per frame
 *     (one write() when the frame fits the 64 KiB buffer, through vor_file_write_all, so
 *     a file-size limit gives EFBIG, reported once, never SIGXFSZ), so a crash loses at
 *     most the frame being recorded; closed as strict JSON by vor_shutdown or the exit hook;
 *   - the names, from the site table (cut like every output cuts them, utf8.h), the
 *     thread registry and the metric columns;
 *   - volume: VOR_TRACE_EVERY=N writes frame 0, N, 2N, ... (frames counted from the
 *     trace's start), VOR_TRACE_MAX_FRAMES=N stops after N written frames. A frame not
 *     written is not in the file at all (no frame event, scopes or counters); each written
 *     frame is then a run of its own, so its open scopes are written with it, clipped to
 *     its end, and the file can be read as it grows.
 * ts values are microseconds (3 decimals, exact ns) since the session epoch, the time base
 * of every frame record. Each session writes its own file: a new session (vor_enable
 * after vor_shutdown) with the same path starts it again.
 *
 * Options not taken: "B"/"E" pairs (twice the events and bytes for what a frame record
 * already knows as start + duration); a write per event (a syscall each) or per N frames
 * (a crash would lose more than one frame); a writer thread (memory that grows or drops,
 * for a cost that bench/chrome puts far below the frame assembly's own).
 *
 * Memory: the writer's buffer and state (chrome_frames.h), a name cache per metric
 * column and the thread entries of the frame view. Everything runs on the frame thread
 * under the frame lock, like every consumer.
 */
#include "chrome_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_frames.h"
#include "utf8.h"
#include "vor_internal.h"

#define MAX_COLUMNS (VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS)

typedef struct trace_state {
    vor_chrome_json *json;
    vor_chrome_frames *frames;
    int failed;                       /* a frame returned nonzero: consumers.c reported it */
    uint64_t every, max_frames;       /* VOR_TRACE_EVERY (>= 1), VOR_TRACE_MAX_FRAMES (0 = none) */
    uint64_t seen, written;           /* frames received, frames written */
    const char *columns[MAX_COLUMNS]; /* names by column id, NULL until looked up */
    vor_reader_value values[MAX_COLUMNS];
    vor_reader_thread_scopes *threads; /* the frame view's thread entries */
    uint32_t thread_capacity;
    char site_name[VOR_MAX_NAME_BYTES + 1];
    char site_file[VOR_MAX_FILE_BYTES + 1];
    const char *path;
    size_t label_capacity;
    char *label; /* the consumer's name: "VOR_TRACE=<path>[: <error>]" */
} trace_state;

/* ---- Names: the live lookups of chrome_frames.h ------------------------------------------- */

static void copy_cut(char *out, const char *s, size_t max) {
    size_t n = vor_utf8_cut(s, max);
    memcpy(out, s, n);
    out[n] = '\0';
}

static int live_site(void *ctx, uint32_t id, vor_chrome_site_info *out) {
    trace_state *st = ctx;
    const vor_site *site = vor_site_get(id);
    if (site == NULL) return 0;
    copy_cut(st->site_name, site->name ? site->name : "", VOR_MAX_NAME_BYTES);
    copy_cut(st->site_file, site->file ? site->file : "", VOR_MAX_FILE_BYTES);
    out->name = st->site_name;
    out->file = st->site_file;
    out->line = site->line;
    return 1;
}

static int live_thread(void *ctx, uint32_t id, char *out, size_t cap, uint64_t *os_tid) {
    (void)ctx;
    return vor_thread_name_by_id(id, out, cap, os_tid);
}

static const char *live_column(void *ctx, uint32_t id) {
    trace_state *st = ctx;
    if (id >= MAX_COLUMNS) return NULL;
    if (st->columns[id] == NULL) {
        vor_column col;
        if (vor_column_read(id, &col)) st->columns[id] = col.name; /* valid for the session */
    }
    return st->columns[id];
}

/* ---- Frames --------------------------------------------------------------------------- */

/* Turns the consumer's name into the report of what failed. */
static void describe_failure(trace_state *st, int error) {
    snprintf(st->label, st->label_capacity, "VOR_TRACE=%s: %s", st->path, strerror(error ? error : EIO));
}

static int trace_frame(void *state, const vor_frame_record *r) {
    trace_state *st = state;
    uint64_t nth = st->seen++;
    if (nth % st->every != 0 || (st->max_frames && st->written >= st->max_frames)) return 0;
    st->written++;
    if (r->n_threads > st->thread_capacity) {
        vor_reader_thread_scopes *grown = realloc(st->threads, (size_t)r->n_threads * sizeof *grown);
        if (grown == NULL) {
            vor_log(VOR_LOG_OUT_OF_MEMORY, "VOR_TRACE=%s: a frame of %u threads (frame skipped)", st->path,
                    r->n_threads);
            return 0;
        }
        st->threads = grown;
        st->thread_capacity = r->n_threads;
    }
    vor_reader_frame view;
    vor_frame_record_view(r, &view, st->values, st->threads);
    unsigned flags = VOR_CHROME_FRAME_SCOPES;
    if (st->every > 1 || (st->max_frames && st->written == st->max_frames)) flags |= VOR_CHROME_FRAME_ENDS_RUN;
    vor_chrome_frames_write(st->frames, &view, flags);

    if (vor_chrome_json_flush(st->json) != 0) {
        vor_chrome_json_stats stats;
        vor_chrome_json_get_stats(st->json, &stats);
        describe_failure(st, stats.write_errno);
        st->failed = 1;
        return 1;
    }
    return 0;
}

static void trace_flush(void *state) {
    trace_state *st = state;
    vor_chrome_json_flush(st->json); /* an error surfaces at the next frame or at close */
}

static void free_state(trace_state *st) {
    free(st->threads);
    free((void *)st->path);
    free(st);
}

static void trace_close(void *state) {
    trace_state *st = state;
    vor_chrome_frames_finish(st->frames); /* scopes still open (`main`...), clipped to the last frame */
    if (vor_chrome_json_close(st->json) != 0 && !st->failed) {
        describe_failure(st, errno);
        vor_log(VOR_LOG_CONSUMER_FAILED, "%s", st->label);
    }
    free_state(st);
}

/* ---- Opening -------------------------------------------------------------------------- */

int vor_chrome_trace_open(const char *path, const vor_chrome_trace_options *options) {
    if (path == NULL || *path == '\0') {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_TRACE is empty");
        return 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int error = errno;
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_TRACE=%s: %s", path, strerror(error));
        return 0;
    }
    size_t path_bytes = strlen(path) + 1;
    size_t label_capacity = path_bytes + 160;
    trace_state *st = calloc(1, sizeof *st);
    char *strings = malloc(path_bytes + label_capacity);
    vor_chrome_json *json = vor_chrome_json_open_fd(fd, 1, options ? options->buffer_bytes : 0);
    if (st == NULL || strings == NULL || json == NULL) {
        if (json)
            vor_chrome_json_close(json);
        else
            close(fd);
        free(st);
        free(strings);
        vor_log(VOR_LOG_OUT_OF_MEMORY, "VOR_TRACE=%s: the trace writer's buffers", path);
        return 0;
    }
    memcpy(strings, path, path_bytes);
    st->path = strings;
    st->label = strings + path_bytes;
    st->label_capacity = label_capacity;
    snprintf(st->label, label_capacity, "VOR_TRACE=%s", path);
    st->json = json;
    st->every = options && options->every ? options->every : 1;
    st->max_frames = options ? options->max_frames : 0;

    vor_chrome_frames_config config;
    memset(&config, 0, sizeof config);
    config.names.ctx = st;
    config.names.site = live_site;
    config.names.thread = live_thread;
    config.names.column = live_column;
    config.pid = (uint64_t)getpid();
    config.process_name = vor_process_name(); /* the capture's name for this process too */
    config.vor_version = VOR_VERSION_STRING;
    config.wall_epoch_ns = vor_session_now.wall_epoch_ns;
    config.open_scopes_listed = 1; /* frame records list each thread's open scopes */
    st->frames = vor_chrome_frames_new(json, &config);
    if (st->frames == NULL) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "VOR_TRACE=%s: the trace writer's buffers", path);
        vor_chrome_json_close(json);
        free_state(st);
        return 0;
    }
    if (vor_chrome_json_flush(json) != 0) { /* "[", the process and the frames row, before any frame */
        vor_chrome_json_stats stats;
        vor_chrome_json_get_stats(json, &stats);
        vor_log(VOR_LOG_BAD_ENVIRONMENT, "VOR_TRACE=%s: %s", path, strerror(stats.write_errno));
        vor_chrome_frames_finish(st->frames);
        vor_chrome_json_close(json);
        free_state(st);
        return 0;
    }
    vor_consumer c = {st->label, st, trace_frame, trace_flush, trace_close};
    if (!vor_consumers_add(&c)) {
        vor_log(VOR_LOG_CONSUMER_FAILED, "VOR_TRACE=%s: more than %d outputs", path, VOR_MAX_CONSUMERS);
        vor_chrome_frames_finish(st->frames);
        vor_chrome_json_close(json); /* leaves a valid, empty trace */
        free_state(st);
        return 0;
    }
    return 1;
}
