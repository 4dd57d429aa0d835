/* capture_writer.c: the .vor capture writer (VOR_RECORD), a frame-record consumer.
 *
 * Each frame record is encoded (record_encoder.c), framed and
 * appended to the file with a single write(2) before vor_frame_mark() returns: every
 * record reaches the OS when written, so a crash loses at most the frame being written,
 * and a reader can tail the file while it grows.
 *
 * Each record is compressed alone (format 1.1: no LZ4 chain), framed with a checked
 * length and a CRC-32C (record_encoder.c: vor_frame_capture_record), so a reader that
 * meets a damaged record skips that record only and reads on.
 *
 * Why inline rather than on a writer thread: measured (docs/PERFORMANCE.md), a
 * metrics-only record costs about a microsecond inline, most of it the write(2) call;
 * handing it to a thread costs a wake-up of the same order, and the queue would hold
 * records a crash loses. Flame frames are where a thread would help; they are opt-in,
 * sampled (VOR_RECORD_EVERY) and capped (VOR_RECORD_MAX_FRAMES).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <lz4.h>

#include "capture_writer.h"
#include "file_write.h"
#include "record_encoder.h"
#include "vor/reader.h"

struct vor_capture_writer {
    int fd;
    uint64_t offset; /* bytes written to fd so far (vor_file_write_all keeps it) */
    char path[512];
    char label[768]; /* the consumer's name: "VOR_RECORD=path", then what failed */
    vor_capture_options options;
    vor_record_encoder *encoder;
    LZ4_stream_t *lz4; /* reset for each record: each is compressed alone */
    vor_out raw;     /* the decoded record being written */
    vor_out framed;  /* [u32 size][u16 size check][u32 CRC-32C][LZ4 block or the record itself] */
    uint64_t frames_seen, frames_written, flame_frames_written, flame_frames_dropped;
    int failed; /* a write failed: the file ends at the last good record */
};
typedef struct vor_capture_writer capture_writer;

/* The one place the capture reaches the OS: vor_file_write_all, so a write that would
 * cross the file-size limit fails with EFBIG (like a full disk) instead of raising
 * SIGXFSZ, which would end the program. Returns 1, or 0 with errno set. */
static int write_all(capture_writer *w, const uint8_t *p, size_t n) {
    int error = vor_file_write_all(w->fd, p, n, &w->offset);
    if (error == 0) return 1;
    errno = error;
    return 0;
}

/* Puts what failed in the consumer's name, which consumers.c reports once for this
 * file as it closes the capture: it stops there and keeps every record written before
 * (they read back). The program runs on. */
static void describe_write_failure(capture_writer *w, int error) {
    char limit[96] = "";
    if (error == EFBIG) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            snprintf(limit, sizeof limit, " (the next record would pass the file-size limit, ulimit -f, of %llu bytes)",
                     (unsigned long long)rl.rlim_cur);
    }
    snprintf(w->label, sizeof w->label, "VOR_RECORD=%s: %s%s; recording stopped, the capture keeps its first %llu frames",
             w->path, strerror(error), limit, (unsigned long long)w->frames_written);
}

/* Frames w->raw as one record and appends it to the file with one write. */
static int write_record(capture_writer *w) {
    if (!vor_frame_capture_record(w->raw.data, w->raw.size, w->lz4, &w->framed)) {
        errno = ENOMEM;
        return 0;
    }
    return write_all(w, w->framed.data, w->framed.size);
}

static int writer_frame(void *state, const vor_frame_record *rec) {
    capture_writer *w = state;
    uint64_t nth = w->frames_seen++;
    int flame = w->options.flame && vor_frame_record_has_scopes(rec) && (nth % w->options.every) == 0 &&
                (w->options.max_flame_frames == 0 || w->flame_frames_written < w->options.max_flame_frames);
    w->raw.size = 0;
    int dropped = 0;
    if (!vor_encode_frame(w->encoder, rec, flame, &w->raw, &dropped)) {
        w->failed = 1;
        vor_log(VOR_LOG_OUT_OF_MEMORY, "capture record for %s", w->path);
        return 1;
    }
    if (dropped) w->flame_frames_dropped++;
    else if (flame) w->flame_frames_written++;
    if (!write_record(w)) {
        w->failed = 1;
        describe_write_failure(w, errno);
        return 1;
    }
    w->frames_written++;
    return 0;
}

static void writer_close(void *state) {
    capture_writer *w = state;
    if (w->fd >= 0 && !w->failed) {
        w->raw.size = 0;
        vor_encode_end(&w->raw);
        if (!write_record(w)) {
            describe_write_failure(w, errno);
            vor_log_each(VOR_LOG_CONSUMER_FAILED, "%s", w->label);
        }
    }
    if (w->fd >= 0) close(w->fd);
    vor_record_encoder_free(w->encoder);
    if (w->lz4) LZ4_freeStream(w->lz4);
    free(w->raw.data);
    free(w->framed.data);
    free(w);
}

vor_capture_writer *vor_capture_writer_create(const char *path, const vor_capture_options *options) {
    capture_writer *w = calloc(1, sizeof *w);
    if (w == NULL) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "capture writer");
        return NULL;
    }
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->label, sizeof w->label, "VOR_RECORD=%s", path);
    w->options = *options;
    if (w->options.every == 0) w->options.every = 1;
    /* The stored length adds a few bytes to the decoded size: stay under the reader's limit. */
    w->raw.max_capacity = VOR_READER_MAX_RECORD_BYTES - 32;
    w->framed.max_capacity = (size_t)LZ4_compressBound((int)VOR_READER_MAX_RECORD_BYTES) + 32;
    w->encoder = vor_record_encoder_new();
    w->lz4 = LZ4_createStream();
    w->fd = -1;
    if (w->encoder == NULL || w->lz4 == NULL) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "capture writer");
        writer_close(w);
        return NULL;
    }
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_RECORD=%s: cannot create the capture: %s; recording is off", path,
                strerror(errno));
        writer_close(w);
        return NULL;
    }
    char producer[96];
#if defined(VOR_PLATFORM_WASM)
    snprintf(producer, sizeof producer, "vor %s emscripten-wasm32", VOR_VERSION_STRING);
#else
    snprintf(producer, sizeof producer, "vor %s linux-%s", VOR_VERSION_STRING,
#if defined(__x86_64__)
             "x86_64"
#elif defined(__aarch64__)
             "aarch64"
#else
             "other"
#endif
    );
#endif
    vor_capture_header_info info = {options->flame, vor_session_now.wall_epoch_ns, producer, vor_process_name(),
                                    (uint64_t)getpid()};
    w->raw.size = 0;
    vor_encode_capture_header(&w->raw, &info);
    if (w->raw.failed || !write_all(w, w->raw.data, w->raw.size)) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_RECORD=%s: cannot write the capture header: %s; recording is off", path,
                strerror(errno));
        writer_close(w);
        return NULL;
    }
    return w;
}

int vor_capture_writer_frame(vor_capture_writer *w, const vor_frame_record *record) {
    return writer_frame(w, record);
}

void vor_capture_writer_close(vor_capture_writer *w) {
    writer_close(w);
}

int vor_capture_open(const char *path, const vor_capture_options *options) {
    vor_capture_writer *w = vor_capture_writer_create(path, options);
    if (w == NULL) return 0;
    vor_consumer c = {w->label, w, writer_frame, NULL, writer_close};
    if (!vor_consumers_add(&c)) {
        writer_close(w);
        return 0;
    }
    return 1;
}
