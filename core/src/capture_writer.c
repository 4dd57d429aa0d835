/* capture_writer.c: the .vor capture writer (VOR_RECORD), a frame-record consumer.
 *
 * Each frame record is encoded (record_encoder.c), compressed as one LZ4 block and
 * appended to the file with a single write(2) before vor_frame_mark() returns: every
 * record reaches the OS when written, so a crash loses at most the frame being written,
 * and a reader can tail the file while it grows.
 *
 * Blocks are compressed as a chain (LZ4 streaming): a block may refer to the 64 KiB of
 * decoded records before it. Small records barely compress alone; against their
 * predecessors the repeated structure of flame frames and declarations does. The cost
 * is that a reader decodes records in order, which it does anyway (declarations and
 * value deltas also depend on earlier records). The decoded records are laid out
 * back to back in `history`; when it fills, LZ4_saveDict moves the last 64 KiB to the
 * front.
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

#include "capture_format.h"
#include "capture_writer.h"
#include "crc32c.h"
#include "file_write.h"
#include "record_encoder.h"
#include "vor/reader.h"

#define HISTORY_MIN_BYTES (1024u * 1024u)

struct vor_capture_writer {
    int fd;
    uint64_t offset; /* bytes written to fd so far (vor_file_write_all keeps it) */
    char path[512];
    char label[768]; /* the consumer's name: "VOR_RECORD=path", then what failed */
    vor_capture_options options;
    vor_record_encoder *encoder;
    LZ4_stream_t *lz4;
    uint8_t *history;
    size_t history_capacity, history_used;
    vor_out raw;    /* the decoded record being written */
    vor_out framed; /* [u32 length][u32 CRC-32C][varint raw length][LZ4 block or raw bytes] */
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

/* Places `raw` after the previous records in history (moving the window if needed). */
static uint8_t *history_place(capture_writer *w, size_t n) {
    if (w->history_used + n <= w->history_capacity) return w->history + w->history_used;
    size_t capacity = w->history_capacity;
    if (capacity < VOR_CAPTURE_LZ4_WINDOW + n) capacity = VOR_CAPTURE_LZ4_WINDOW + n + HISTORY_MIN_BYTES;
    uint8_t *target = w->history;
    if (capacity != w->history_capacity) {
        target = malloc(capacity);
        if (target == NULL) return NULL;
    }
    /* Keep the last 64 KiB as the dictionary, at the front of the (new) buffer. */
    int kept = LZ4_saveDict(w->lz4, (char *)target, (int)VOR_CAPTURE_LZ4_WINDOW);
    if (target != w->history) {
        free(w->history);
        w->history = target;
        w->history_capacity = capacity;
    }
    w->history_used = (size_t)kept;
    return w->history + w->history_used;
}

/* Compresses w->raw and appends it to the file as [u32 length][u32 check]
 * [varint D<<1|stored][LZ4 block, or the D bytes themselves when the block would be
 * larger]; the check is the CRC-32C of every byte of the record but its own four. */
static int write_record(capture_writer *w) {
    size_t n = w->raw.size;
    uint8_t *dst = history_place(w, n);
    if (dst == NULL) {
        errno = ENOMEM;
        return 0;
    }
    memcpy(dst, w->raw.data, n);
    int bound = LZ4_compressBound((int)n);
    w->framed.size = 0;
    /* The block lands 16 bytes after the check, past room for the largest varint; a
     * stored record needs n bytes there, which the bound covers too. */
    if (!vor_out_reserve(&w->framed, (size_t)bound + 8 + 16)) {
        errno = ENOMEM;
        return 0;
    }
    vor_out_u32le(&w->framed, 0); /* length, patched below */
    vor_out_u32le(&w->framed, 0); /* check, patched below */
    size_t head_at = w->framed.size;
    uint8_t *block = w->framed.data + head_at + 16;
    int c = LZ4_compress_fast_continue(w->lz4, (const char *)dst, (char *)block, (int)n,
                                       (int)(w->framed.capacity - head_at - 16), 1);
    if (c <= 0) {
        errno = EINVAL;
        return 0;
    }
    w->history_used += n; /* the stream (and a reader's dictionary) now include it */
    int stored = (size_t)c >= n;
    vor_out_varint(&w->framed, (uint64_t)n << 1 | (uint64_t)stored);
    if (stored)
        vor_out_bytes(&w->framed, dst, n);
    else
        memmove(w->framed.data + w->framed.size, block, (size_t)c), w->framed.size += (size_t)c;
    uint8_t *p = w->framed.data;
    uint32_t payload = (uint32_t)(w->framed.size - 4);
    vor_put_u32le(p, payload);
    uint32_t check = vor_crc32c(vor_crc32c(0, p, 4), p + 8, w->framed.size - 8);
    vor_put_u32le(p + 4, check);
    return write_all(w, w->framed.data, w->framed.size);
}

static int writer_frame(void *state, const vor_frame_record *rec) {
    capture_writer *w = state;
    uint64_t nth = w->frames_seen++;
    int flame = w->options.flame && rec->n_scopes > 0 && (nth % w->options.every) == 0 &&
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
    free(w->history);
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
    w->history = malloc(HISTORY_MIN_BYTES);
    w->history_capacity = HISTORY_MIN_BYTES;
    w->fd = -1;
    if (w->encoder == NULL || w->lz4 == NULL || w->history == NULL) {
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
