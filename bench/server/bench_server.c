/*
 * bench_server.c - fan-out throughput and latency of the vor server (prints, asserts nothing).
 *
 * Usage: bench_server [RECORDS] [VIEWERS]        (defaults: 1000000 records, 20 viewers)
 *
 * The server runs in-process on its own thread on an ephemeral port of 127.0.0.1 and serves one
 * capture file: a 64-byte header (the magic, zero padding) then 64-byte records, roughly the size
 * of a small metrics record. Viewers are threads with a blocking websocket client.
 *   live     a writer appends RECORDS records as fast as it can (64 KiB writes) while VIEWERS
 *            follow from the start; when it is done each viewer asks to stop following and reads
 *            to the "end" message. Rate = VIEWERS x RECORDS / (first write -> last viewer done).
 *   replay   the finished file to VIEWERS viewers with ?follow=0 (catch-up speed).
 *   paced    100 records every 1/60 s for 3 s (a 60 fps program), each stamped with the time it
 *            was written; viewers measure write-to-receive latency (bounded below by the 50 ms
 *            growth poll, so expect ~25 ms on average).
 * Everything shares the machine's cores, so the figures are end-to-end, client work included.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_ws_client.h"
#include "server.h"

enum {
    RECORD_BYTES = 64,
    HEADER_BYTES = 64,
    WRITE_RECORDS = 1024,   /* records per write() in the live run: 64 KiB */
    PACED_FPS = 60,
    PACED_PER_FRAME = 100,
    PACED_SECONDS = 3,
    MAX_VIEWERS = 256
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the server thread ---- */

typedef struct server_thread {
    vor_server_options opts;
    pthread_t thread;
    atomic_int port;
    int rc;
} server_thread;

static void on_ready(void *user, const char *host, int port)
{
    (void)host;
    atomic_store(&((server_thread *)user)->port, port);
}

static void *server_main(void *arg)
{
    server_thread *s = arg;
    s->rc = vor_server_run(&s->opts);
    if (!atomic_load(&s->port))
        atomic_store(&s->port, -1);
    return NULL;
}

/* ---- viewers ---- */

typedef struct viewer {
    pthread_t thread;
    wsc client;
    int port;
    const char *path;
    int ok;                  /* connected */
    int ended;               /* got {"type":"end"} */
    uint64_t bytes;
    /* paced run: latencies in microseconds, one per record */
    int measure;
    unsigned char rec[RECORD_BYTES];
    size_t rec_fill;
    uint64_t offset;
    uint32_t *lat_us;
    size_t lat_count, lat_cap;
    atomic_int connected;
} viewer;

static void take_bytes(viewer *v, const unsigned char *p, size_t n)
{
    uint64_t t = now_ns();
    for (size_t i = 0; i < n; i++, v->offset++) {
        if (v->offset < HEADER_BYTES)
            continue;
        v->rec[v->rec_fill++] = p[i];
        if (v->rec_fill == RECORD_BYTES) {
            uint64_t stamp;
            memcpy(&stamp, v->rec, sizeof stamp);
            if (v->lat_count < v->lat_cap)
                v->lat_us[v->lat_count++] = (uint32_t)((t - stamp) / 1000);
            v->rec_fill = 0;
        }
    }
}

static void *viewer_main(void *arg)
{
    viewer *v = arg;
    int op;
    const unsigned char *p;
    size_t n;

    if (wsc_connect(&v->client, v->port, v->path) == 0)
        v->ok = 1;
    atomic_store(&v->connected, 1);
    while (v->ok && wsc_next(&v->client, &op, &p, &n) == 0) {
        if (op == 2) {
            v->bytes += n;
            if (v->measure)
                take_bytes(v, p, n);
        } else if (op == 1) {
            if (n >= 13 && !memcmp(p, "{\"type\":\"end\"", 13))
                v->ended = 1;
        } else if (op == 8) {
            break;
        }
    }
    wsc_close(&v->client);
    return NULL;
}

static int start_viewers(viewer *vs, int count, int port, const char *path, int measure, size_t lat_cap)
{
    for (int i = 0; i < count; i++) {
        memset(&vs[i], 0, sizeof vs[i]);
        vs[i].client.fd = -1;
        vs[i].port = port;
        vs[i].path = path;
        vs[i].measure = measure;
        if (measure) {
            vs[i].lat_us = malloc(lat_cap * sizeof *vs[i].lat_us);
            if (!vs[i].lat_us)
                return -1;
            vs[i].lat_cap = lat_cap;
        }
        if (pthread_create(&vs[i].thread, NULL, viewer_main, &vs[i]))
            return -1;
    }
    for (int i = 0; i < count; i++)
        while (!atomic_load(&vs[i].connected))
            sleep_us(1000);
    for (int i = 0; i < count; i++)
        if (!vs[i].ok)
            return -1;
    return 0;
}

static void stop_following(viewer *vs, int count)
{
    for (int i = 0; i < count; i++)
        if (wsc_send_text(&vs[i].client, "{\"type\":\"follow\",\"value\":false}"))
            fprintf(stderr, "bench_server: viewer %d: cannot send follow:false\n", i);
}

static int join_viewers(viewer *vs, int count, uint64_t want_bytes)
{
    int good = 0;
    for (int i = 0; i < count; i++) {
        pthread_join(vs[i].thread, NULL);
        if (vs[i].ended && vs[i].bytes == want_bytes)
            good++;
        else
            fprintf(stderr, "bench_server: viewer %d got %llu of %llu bytes%s\n", i,
                    (unsigned long long)vs[i].bytes, (unsigned long long)want_bytes,
                    vs[i].ended ? "" : " and no end message");
    }
    return good;
}

/* ---- the capture writer ---- */

static int write_all(FILE *f, const void *p, size_t n)
{
    if (fwrite(p, 1, n, f) != n || fflush(f))
        return -1;
    return 0;
}

static FILE *create_capture(const char *path)
{
    unsigned char head[HEADER_BYTES] = {0};
    memcpy(head, "\x89VOR\r\n\x1a\n", 8);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    if (write_all(f, head, sizeof head)) {
        fclose(f);
        return NULL;
    }
    return f;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long records = argc > 1 ? atol(argv[1]) : 1000000;
    int nview = argc > 2 ? atoi(argv[2]) : 20;
    char dir[] = "/tmp/vor-bench-server-XXXXXX";
    char live_path[64], paced_path[64], live_url[32], replay_url[48], paced_url[32];
    static viewer vs[MAX_VIEWERS];
    server_thread srv;
    int rc = 1;

    if (records < WRITE_RECORDS || nview < 1 || nview > MAX_VIEWERS) {
        fprintf(stderr, "usage: bench_server [RECORDS >= %d] [VIEWERS 1-%d]\n", WRITE_RECORDS, MAX_VIEWERS);
        return 2;
    }
    records -= records % WRITE_RECORDS;
    if (!mkdtemp(dir)) {
        perror("bench_server: mkdtemp");
        return 1;
    }
    snprintf(live_path, sizeof live_path, "%s/live.vor", dir);
    snprintf(paced_path, sizeof paced_path, "%s/paced.vor", dir);
    FILE *live = create_capture(live_path);
    FILE *paced = create_capture(paced_path);
    if (!live || !paced) {
        perror("bench_server: creating captures");
        return 1;
    }

    memset(&srv, 0, sizeof srv);
    srv.opts.port = VOR_SERVER_PORT_ANY;
    srv.opts.site_dir = dir;
    srv.opts.max_viewers = nview;
    srv.opts.paths[0] = live_path;
    srv.opts.paths[1] = paced_path;
    srv.opts.path_count = 2;
    srv.opts.on_ready = on_ready;
    srv.opts.on_ready_user = &srv;
    if (pthread_create(&srv.thread, NULL, server_main, &srv))
        return 1;
    while (!atomic_load(&srv.port))
        sleep_us(1000);
    int port = atomic_load(&srv.port);
    if (port < 0) {
        fprintf(stderr, "bench_server: the server did not start\n");
        return 1;
    }
    snprintf(live_url, sizeof live_url, "/capture/0");
    snprintf(replay_url, sizeof replay_url, "/capture/0?follow=0");
    snprintf(paced_url, sizeof paced_url, "/capture/1");
    uint64_t total = HEADER_BYTES + (uint64_t)records * RECORD_BYTES;
    printf("vor server fan-out: %d viewers, %ld records of %d bytes (%.1f MB per viewer), chunks <= 64 KiB\n",
           nview, records, RECORD_BYTES, (double)total / 1e6);

    /* live: writer as fast as possible while viewers follow */
    {
        static unsigned char batch[WRITE_RECORDS * RECORD_BYTES];
        for (size_t i = 0; i < sizeof batch; i++)
            batch[i] = (unsigned char)(i * 31 + 7);
        if (start_viewers(vs, nview, port, live_url, 0, 0))
            goto out;
        double t0 = now_s();
        for (long r = 0; r < records; r += WRITE_RECORDS)
            if (write_all(live, batch, sizeof batch))
                goto out;
        double tw = now_s();
        stop_following(vs, nview);
        int good = join_viewers(vs, nview, total);
        double t1 = now_s();
        double recs = (double)records * nview;
        printf("  live     %10.0f records/s delivered  %8.1f MB/s  (writer %.0f records/s alone; "
               "%.3f s total, %.3f s after the last write; %d/%d viewers complete)\n",
               recs / (t1 - t0), recs * RECORD_BYTES / (t1 - t0) / 1e6, (double)records / (tw - t0),
               t1 - t0, t1 - tw, good, nview);
    }

    /* replay: the finished file, no following */
    {
        double t0 = now_s();
        if (start_viewers(vs, nview, port, replay_url, 0, 0))
            goto out;
        int good = join_viewers(vs, nview, total);
        double t1 = now_s();
        double recs = (double)records * nview;
        printf("  replay   %10.0f records/s delivered  %8.1f MB/s  (%.3f s; %d/%d viewers complete)\n",
               recs / (t1 - t0), recs * RECORD_BYTES / (t1 - t0) / 1e6, t1 - t0, good, nview);
    }

    /* paced: a 60 fps writer, latency per record */
    {
        const size_t nrec = (size_t)PACED_FPS * PACED_SECONDS * PACED_PER_FRAME;
        static unsigned char frame[PACED_PER_FRAME * RECORD_BYTES];
        if (start_viewers(vs, nview, port, paced_url, 1, nrec))
            goto out;
        double t0 = now_s();
        for (int f = 0; f < PACED_FPS * PACED_SECONDS; f++) {
            double due = t0 + (double)f / PACED_FPS;
            while (now_s() < due)
                sleep_us(500);
            uint64_t stamp = now_ns();
            for (int r = 0; r < PACED_PER_FRAME; r++)
                memcpy(frame + r * RECORD_BYTES, &stamp, sizeof stamp);
            if (write_all(paced, frame, sizeof frame))
                goto out;
        }
        sleep_us(200 * 1000);
        stop_following(vs, nview);
        int good = join_viewers(vs, nview, HEADER_BYTES + (uint64_t)nrec * RECORD_BYTES);
        size_t all = 0;
        for (int i = 0; i < nview; i++)
            all += vs[i].lat_count;
        uint32_t *lat = malloc((all ? all : 1) * sizeof *lat);
        if (!lat)
            goto out;
        size_t k = 0;
        for (int i = 0; i < nview; i++) {
            memcpy(lat + k, vs[i].lat_us, vs[i].lat_count * sizeof *lat);
            k += vs[i].lat_count;
            free(vs[i].lat_us);
            vs[i].lat_us = NULL;
        }
        qsort(lat, all, sizeof *lat, compare_u32);
        double sum = 0;
        for (size_t i = 0; i < all; i++)
            sum += lat[i];
        if (all)
            printf("  paced    %d records/s x %d viewers: write->receive latency mean %.1f ms, p50 %.1f ms, "
                   "p99 %.1f ms, max %.1f ms (%d/%d viewers complete)\n",
                   PACED_FPS * PACED_PER_FRAME, nview, sum / (double)all / 1000.0, lat[all / 2] / 1000.0,
                   lat[all * 99 / 100] / 1000.0, lat[all - 1] / 1000.0, good, nview);
        free(lat);
    }
    rc = 0;
out:
    vor_server_request_stop();
    pthread_join(srv.thread, NULL);
    fclose(live);
    fclose(paced);
    unlink(live_path);
    unlink(paced_path);
    rmdir(dir);
    if (rc)
        fprintf(stderr, "bench_server: failed (%s)\n", strerror(errno));
    return rc;
}
