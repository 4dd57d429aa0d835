/* bench_capture.c: the .vor writer and reader on realistic metrics-only frames, and the
 * inline-versus-writer-thread comparison behind the writer's design.
 *
 * 100,000 frames of 8 columns: frame_ms (16.7 ms with jitter), memory_mb (a level that
 * moves by pages now and then), io_ms and io_MB (I/O on about a third of the frames),
 * cpu_ms (two threads' worth of CPU with noise), and three user metrics: loss (noisy,
 * decreasing), lr (constant with step decays), tokens_per_s (noisy). Printed:
 *   bytes per frame on disk           (target <= 48)
 *   recording cost per frame, inline  (target <= 2 us): encode + LZ4 + write(2)
 *   the same with a writer thread     (encode inline, LZ4 + write on a thread, bounded queue)
 *   reader frames per second          (target >= 2M)
 *   CRC-32C speed on the capture's own bytes, and its time as a share of LZ4 compressing
 *   the same bytes (a ratio from one run, so a busy machine slows both sides alike)
 * Medians of 5 runs. White-box: it drives the writer below the consumer list.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <lz4.h>

#include "capture_writer.h"
#include "crc32c.h"
#include "record_encoder.h"
#include "vor/reader.h"
#include "vor_internal.h"

#include "../common/bench_util.h"

#define FRAMES 100000
#define RUNS 5

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double uniform(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static vor_frame_record *frames;
static vor_user_value (*users)[3];

static void make_frames(uint32_t loss_id) {
    frames = calloc(FRAMES, sizeof *frames);
    users = calloc(FRAMES, sizeof *users);
    int64_t start = 0, memory = 512 * 1000 * 1000;
    double lr = 3e-4;
    for (int i = 0; i < FRAMES; i++) {
        vor_frame_record *r = &frames[i];
        r->index = (uint64_t)i;
        r->start_ns = start;
        r->duration_ns = (int64_t)(16.7e6 + (uniform() - 0.5) * 0.6e6);
        if (uniform() < 0.01) r->duration_ns += (int64_t)(uniform() * 20e6); /* a stall */
        start += r->duration_ns;
        r->overhead_ns = (int64_t)(900 + uniform() * 300);
        r->n_system = 5;
        r->system_present = 0x1F;
        if (uniform() < 0.05) memory += 4096 * (int64_t)(1 + uniform() * 16);
        if (uniform() < 0.002) memory += 8 * 1000 * 1000;
        int io = uniform() < 0.33;
        r->system_raw[0] = r->duration_ns;
        r->system_raw[1] = memory;
        r->system_raw[2] = io ? (int64_t)(100 + uniform() * 1900) : 0; /* us */
        r->system_raw[3] = io ? (int64_t)(65536 * (1 + (int)(uniform() * 15))) : 0;
        r->system_raw[4] = (int64_t)((double)r->duration_ns * (1.2 + uniform() * 0.4) / 1000); /* us */
        if (i > 0 && i % 10000 == 0) lr *= 0.5;
        users[i][0] = (vor_user_value){loss_id, 0, 0.05 + 3.9 * exp(-i / 20000.0) + (uniform() - 0.5) * 0.02};
        users[i][1] = (vor_user_value){loss_id + 1, 0, lr};
        users[i][2] = (vor_user_value){loss_id + 2, 0, 12000.0 + (uniform() - 0.5) * 800.0};
        r->n_user = 3;
        r->user = users[i];
    }
}

/* ---- Variant B: encode inline, compress and write on a thread ---- */

#define QUEUE_BYTES (4u << 20)
typedef struct queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint8_t *data;
    size_t head, tail; /* byte offsets, monotonically increasing */
    int done;
} queue;

typedef struct thread_writer {
    queue q;
    FILE *unused;
    int fd;
    pthread_t thread;
} thread_writer;

static void *writer_thread(void *arg) {
    thread_writer *tw = arg;
    LZ4_stream_t *lz4 = LZ4_createStream();
    uint8_t *record = malloc(1 << 20);
    vor_out framed = {NULL, 0, 0, (size_t)LZ4_compressBound(1 << 20) + 32, 0};
    for (;;) {
        pthread_mutex_lock(&tw->q.lock);
        while (tw->q.head == tw->q.tail && !tw->q.done) pthread_cond_wait(&tw->q.cond, &tw->q.lock);
        if (tw->q.head == tw->q.tail && tw->q.done) {
            pthread_mutex_unlock(&tw->q.lock);
            break;
        }
        size_t tail = tw->q.tail;
        pthread_mutex_unlock(&tw->q.lock);
        uint32_t n;
        memcpy(&n, tw->q.data + tail % QUEUE_BYTES, 4);
        for (uint32_t i = 0; i < n; i++) record[i] = tw->q.data[(tail + 4 + i) % QUEUE_BYTES];
        /* The writer's framing (format 1.1): each record compressed alone, checked. */
        if (!vor_frame_capture_record(record, n, lz4, &framed) || write(tw->fd, framed.data, framed.size) < 0)
            perror("bench write");
        pthread_mutex_lock(&tw->q.lock);
        tw->q.tail = tail + 4 + n;
        pthread_cond_signal(&tw->q.cond);
        pthread_mutex_unlock(&tw->q.lock);
    }
    free(record);
    free(framed.data);
    LZ4_freeStream(lz4);
    return NULL;
}

static double run_threaded(const char *path) {
    thread_writer tw;
    memset(&tw, 0, sizeof tw);
    pthread_mutex_init(&tw.q.lock, NULL);
    pthread_cond_init(&tw.q.cond, NULL);
    tw.q.data = malloc(QUEUE_BYTES);
    tw.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pthread_create(&tw.thread, NULL, writer_thread, &tw);
    vor_record_encoder *enc = vor_record_encoder_new();
    vor_out raw = {NULL, 0, 0, 1 << 20, 0};
    uint64_t t0 = now_ns();
    for (int i = 0; i < FRAMES; i++) {
        raw.size = 0;
        int dropped;
        vor_encode_frame(enc, &frames[i], 0, &raw, &dropped);
        uint32_t n = (uint32_t)raw.size;
        pthread_mutex_lock(&tw.q.lock);
        while (tw.q.head + 4 + n - tw.q.tail > QUEUE_BYTES) pthread_cond_wait(&tw.q.cond, &tw.q.lock);
        size_t head = tw.q.head;
        pthread_mutex_unlock(&tw.q.lock);
        for (uint32_t k = 0; k < 4; k++) tw.q.data[(head + k) % QUEUE_BYTES] = ((uint8_t *)&n)[k];
        for (uint32_t k = 0; k < n; k++) tw.q.data[(head + 4 + k) % QUEUE_BYTES] = raw.data[k];
        pthread_mutex_lock(&tw.q.lock);
        tw.q.head = head + 4 + n;
        pthread_cond_signal(&tw.q.cond);
        pthread_mutex_unlock(&tw.q.lock);
    }
    double per_frame = (double)(now_ns() - t0) / FRAMES;
    pthread_mutex_lock(&tw.q.lock);
    tw.q.done = 1;
    pthread_cond_signal(&tw.q.cond);
    pthread_mutex_unlock(&tw.q.lock);
    pthread_join(tw.thread, NULL);
    close(tw.fd);
    vor_record_encoder_free(enc);
    free(raw.data);
    free(tw.q.data);
    return per_frame;
}

/* CRC-32C and LZ4 over the same bytes, alternating so both see the same machine. */
static void crc_against_lz4(const char *path, double *crc_gbps, double *share_of_lz4) {
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return;
    fseek(f, 0, SEEK_END);
    n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc(n), *out = malloc((size_t)LZ4_compressBound((int)n));
    if (bytes == NULL || out == NULL || fread(bytes, 1, n, f) != n) n = 0;
    fclose(f);
    double crc_ns[RUNS], lz4_ns[RUNS];
    volatile uint32_t sink = 0;
    for (int run = 0; n && run < RUNS; run++) {
        uint64_t t0 = now_ns();
        sink ^= vor_crc32c(0, bytes, n);
        uint64_t t1 = now_ns();
        sink ^= (uint32_t)LZ4_compress_default((const char *)bytes, (char *)out, (int)n, LZ4_compressBound((int)n));
        uint64_t t2 = now_ns();
        crc_ns[run] = (double)(t1 - t0);
        lz4_ns[run] = (double)(t2 - t1);
    }
    if (n) {
        *crc_gbps = (double)n / median(crc_ns, RUNS);
        *share_of_lz4 = median(crc_ns, RUNS) / median(lz4_ns, RUNS);
    }
    free(bytes);
    free(out);
}

int main(void) {
    /* Register the user columns as a program would (ids after the system columns). */
    vor_record_metric("loss", 0);
    vor_record_metric("lr", 0);
    vor_record_metric("tokens_per_s", 0);
    uint32_t loss_id = 5;
    make_frames(loss_id);
    const char *path = "/tmp/vor-bench-capture.vor";
    const char *path_threaded = "/tmp/vor-bench-capture-threaded.vor";

    double inline_ns[RUNS], threaded_ns[RUNS], read_fps[RUNS];
    long bytes = 0;
    for (int run = 0; run < RUNS; run++) {
        vor_capture_options options = {0, 1, 0, 0};
        vor_capture_writer *w = vor_capture_writer_create(path, &options);
        if (w == NULL) return 1;
        uint64_t t0 = now_ns();
        for (int i = 0; i < FRAMES; i++) vor_capture_writer_frame(w, &frames[i]);
        inline_ns[run] = (double)(now_ns() - t0) / FRAMES;
        vor_capture_writer_close(w);

        threaded_ns[run] = run_threaded(path_threaded);

        char err[256];
        vor_reader *r = vor_reader_open(path, err, sizeof err);
        vor_reader_frame f;
        uint64_t n = 0;
        t0 = now_ns();
        while (vor_reader_next(r, &f) == VOR_READ_FRAME) n++;
        read_fps[run] = (double)n / ((double)(now_ns() - t0) / 1e9);
        if (n != FRAMES) fprintf(stderr, "bench_capture: read %llu frames of %d\n", (unsigned long long)n, FRAMES);
        vor_reader_close(r);
        FILE *fp = fopen(path, "rb");
        fseek(fp, 0, SEEK_END);
        bytes = ftell(fp);
        fclose(fp);
    }
    double crc_gbps = 0, crc_share = 0;
    crc_against_lz4(path, &crc_gbps, &crc_share);
    FILE *ft = fopen(path_threaded, "rb");
    fseek(ft, 0, SEEK_END);
    long bytes_threaded = ftell(ft);
    fclose(ft);
    printf("vor capture benchmark: %d metrics-only frames, 8 columns (median of %d runs)\n", FRAMES, RUNS);
    printf("  %-46s %8.1f B    (target <= 48; file %ld bytes, threaded variant %ld)\n", "bytes per frame on disk",
           (double)bytes / FRAMES, bytes, bytes_threaded);
    printf("  %-46s %8.2f us   (target <= 2 us)\n", "recording cost per frame, inline (chosen)", median(inline_ns, RUNS) / 1e3);
    printf("  %-46s %8.2f us\n", "recording cost per frame, writer thread", median(threaded_ns, RUNS) / 1e3);
    printf("  %-46s %8.2f M/s  (target >= 2 M/s)\n", "reader, frames per second", median(read_fps, RUNS) / 1e6);
    printf("  %-46s %8.2f GB/s (%.0f%% of LZ4 compressing the same bytes)\n", "CRC-32C record check", crc_gbps,
           crc_share * 100);
    unlink(path);
    unlink(path_threaded);
    return 0;
}
