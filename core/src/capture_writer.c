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
 * Inline by default: a metrics-only record costs about a microsecond, most of it the
 * write(2) call, and each record is in the OS when vor_frame_mark() returns. Flame frames
 * cost more per scope than the frame thread may want to pay (LZ4 is about half of it:
 * docs/PERFORMANCE.md), so VOR_RECORD_THREAD=1 moves compression, check and write to a
 * writer thread, with ONE record in its hands at a time: vor_frame_mark encodes its record,
 * waits (rarely: only when the previous record is not written yet, a frame shorter than
 * its compression) until the writer is idle, and hands the record over. So a killed
 * program still loses at most one frame, the one being written, but that may be the frame
 * vor_frame_mark has just returned from, which is why it is an option. Flushing and
 * closing wait for the writer; a failed write is reported by the frame thread at its
 * next frame (the writer thread never logs). The thread blocks every signal, and exists
 * only in a process that asked for it; wasm has no threads and writes inline.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
    /* VOR_RECORD_THREAD=1: the writer thread and the one record in its hands. */
    int threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work, idle;
    vor_out handed;  /* the record being compressed and written (the writer's) */
    int pending;     /* under lock: `handed` is not written yet */
    int quit;        /* under lock: the writer ends once idle */
    int write_error; /* under lock: errno of the writer's failed write, 0 = none */
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

/* ---- The writer thread (VOR_RECORD_THREAD=1) ------------------------------------------ */

#if !defined(VOR_PLATFORM_WASM)
static void *writer_thread(void *arg) {
    capture_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->pending && !w->quit) pthread_cond_wait(&w->work, &w->lock);
        if (!w->pending) break; /* quit, idle */
        pthread_mutex_unlock(&w->lock);
        int error = 0;
        if (!vor_frame_capture_record(w->handed.data, w->handed.size, w->lz4, &w->framed))
            error = ENOMEM;
        else if (!write_all(w, w->framed.data, w->framed.size))
            error = errno;
        pthread_mutex_lock(&w->lock);
        if (error) {
            w->write_error = error;
        } else {
            w->frames_written++;
        }
        w->pending = 0;
        pthread_cond_broadcast(&w->idle);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Starts the writer thread with every signal blocked (the program's handlers never run
 * on it). 0 if it cannot: the capture is then written inline. */
static int start_writer_thread(capture_writer *w) {
    if (pthread_mutex_init(&w->lock, NULL) != 0) return 0;
    if (pthread_cond_init(&w->work, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    if (pthread_cond_init(&w->idle, NULL) != 0) {
        pthread_cond_destroy(&w->work);
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int error = pthread_create(&w->thread, NULL, writer_thread, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (error != 0) {
        pthread_cond_destroy(&w->idle);
        pthread_cond_destroy(&w->work);
        pthread_mutex_destroy(&w->lock);
        errno = error;
        return 0;
    }
#if defined(__GLIBC__)
    pthread_setname_np(w->thread, "vor-writer");
#endif
    w->threaded = 1;
    return 1;
}

/* Waits until the writer holds no record; returns its write error (0 = none). Lock held
 * on return. */
static int wait_idle_locked(capture_writer *w) {
    pthread_mutex_lock(&w->lock);
    while (w->pending) pthread_cond_wait(&w->idle, &w->lock);
    return w->write_error;
}

/* Hands w->raw to the writer once it is idle (the two buffers swap). 0 if the previous
 * record failed to be written (errno set). */
static int hand_over(capture_writer *w) {
    int error = wait_idle_locked(w);
    if (error == 0) {
        vor_out t = w->handed;
        w->handed = w->raw;
        w->raw = t;
        w->pending = 1;
        pthread_cond_signal(&w->work);
    }
    pthread_mutex_unlock(&w->lock);
    errno = error;
    return error == 0;
}

static void stop_writer_thread(capture_writer *w) {
    wait_idle_locked(w);
    w->quit = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->lock);
    w->threaded = 0;
}
#else
static int start_writer_thread(capture_writer *w) {
    (void)w;
    errno = ENOSYS;
    return 0;
}
static int hand_over(capture_writer *w) {
    (void)w;
    return 0;
}
static int wait_idle_locked(capture_writer *w) {
    (void)w;
    return 0;
}
static void stop_writer_thread(capture_writer *w) {
    (void)w;
}
#endif

static void writer_flush(void *state) {
    capture_writer *w = state;
    if (!w->threaded) return;
    wait_idle_locked(w);
    pthread_mutex_unlock(&w->lock);
}

/* ---- Frames -------------------------------------------------------------------------- */

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
    if (w->threaded) {
        if (!hand_over(w)) { /* the previous record's write failed */
            w->failed = 1;
            describe_write_failure(w, errno);
            return 1;
        }
        return 0;
    }
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
    if (w->threaded) {
        int error = wait_idle_locked(w);
        pthread_mutex_unlock(&w->lock);
        stop_writer_thread(w);
        if (error && !w->failed) { /* the last record handed over was not written */
            w->failed = 1;
            describe_write_failure(w, error);
            vor_log_each(VOR_LOG_CONSUMER_FAILED, "%s", w->label);
        }
    }
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
    free(w->handed.data);
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
    w->handed.max_capacity = w->raw.max_capacity;
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
    vor_capture_header_info info = {options->flame, vor_session_now.wall_epoch_ns, vor_producer_name(), vor_process_name(),
                                    (uint64_t)getpid()};
    w->raw.size = 0;
    vor_encode_capture_header(&w->raw, &info);
    if (w->raw.failed || !write_all(w, w->raw.data, w->raw.size)) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_RECORD=%s: cannot write the capture header: %s; recording is off", path,
                strerror(errno));
        writer_close(w);
        return NULL;
    }
    if (options->thread && !start_writer_thread(w))
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_RECORD_THREAD=1: cannot start the writer thread (%s); %s is written "
                     "inline", strerror(errno), path);
    return w;
}

int vor_capture_writer_frame(vor_capture_writer *w, const vor_frame_record *record) {
    return writer_frame(w, record);
}

void vor_capture_writer_flush(vor_capture_writer *w) {
    writer_flush(w);
}

void vor_capture_writer_close(vor_capture_writer *w) {
    writer_close(w);
}

int vor_capture_open(const char *path, const vor_capture_options *options) {
    vor_capture_writer *w = vor_capture_writer_create(path, options);
    if (w == NULL) return 0;
    vor_consumer c = {w->label, w, writer_frame, writer_flush, writer_close};
    if (!vor_consumers_add(&c)) {
        writer_close(w);
        return 0;
    }
    return 1;
}
