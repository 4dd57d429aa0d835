/* bench_chrome.c: how fast Chrome Trace Event JSON is generated (target: >= 100 MB/s).
 * Asserts nothing; `make bench` runs it. Each figure is the median of RUNS runs.
 *
 *   writer, plain       vor_chrome_json_complete per event: name, cat, file and line
 *                       escaped every time, plus one counter per 100 events (what
 *                       `vor export --format chrome` does with a site table it has not
 *                       prepared), to /dev/null
 *   writer, prepared    the same events through per-site prepared text (what the VOR_TRACE
 *                       consumer does: only four numbers are formatted per event)
 *   VOR_TRACE consumer  a real session on the real clock: frames of 10,000 nested scopes
 *                       on one thread; MB/s = bytes of the trace file / time spent in
 *                       vor_frame_mark (which also drains and assembles the frame, so
 *                       this is the end-to-end figure); written to a tmpfs file
 *                       (/dev/shm, else /tmp; or the path given as the first argument)
 * MB = 10^6 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "chrome_json.h"
#include "vor_internal.h"

#include "../common/bench_util.h"

#define RUNS 7
#define EVENTS 1000000
#define N_SITES 64
#define FRAMES 60
#define SCOPES_PER_FRAME 10000

typedef struct site_text {
    char name[64];
    char file[96];
    uint32_t line;
    vor_chrome_prepared prepared;
} site_text;

static site_text sites[N_SITES];

static void make_sites(void) {
    static const char *const subsystems[] = {"physics", "render", "audio", "ai", "net", "io", "ui", "anim"};
    static const char *const verbs[] = {"update", "submit", "integrate", "decode", "resolve", "build", "flush", "step"};
    for (int i = 0; i < N_SITES; i++) {
        site_text *s = &sites[i];
        snprintf(s->name, sizeof s->name, "%s::%s_%d", subsystems[i % 8], verbs[(i / 8) % 8], i);
        snprintf(s->file, sizeof s->file, "/home/dev/project/src/%s/%s.c", subsystems[i % 8], verbs[(i / 8) % 8]);
        s->line = 40 + (uint32_t)i * 17;
        if (!vor_chrome_prepare_complete(&s->prepared, s->name, "vor", s->file, s->line)) {
            fprintf(stderr, "bench_chrome: out of memory\n");
            exit(1);
        }
    }
}

/* One run: EVENTS X events on 4 threads' worth of tids plus a counter every 100 events.
 * Returns MB/s and sets *bytes. */
static double run_writer(int prepared, uint64_t *bytes) {
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    vor_chrome_json *j = fd >= 0 ? vor_chrome_json_open_fd(fd, 1, 0) : NULL;
    if (j == NULL) {
        fprintf(stderr, "bench_chrome: cannot open /dev/null\n");
        exit(1);
    }
    int64_t ts = 1000;
    uint64_t t0 = now_ns();
    for (int i = 0; i < EVENTS; i++) {
        const site_text *s = &sites[(i * 7) % N_SITES];
        uint64_t tid = 41000 + (uint64_t)(i & 3);
        int64_t dur = 1000 + (i % 977) * 13;
        if (prepared)
            vor_chrome_json_complete_prepared(j, &s->prepared, 40999, tid, ts, dur, NULL, 0);
        else
            vor_chrome_json_complete(j, s->name, "vor", 40999, tid, ts, dur, s->file, s->line, NULL, 0);
        if (i % 100 == 99) {
            vor_chrome_json_counter(j, 40999, "frame_ms", ts, NULL, (double)(i % 1000) * 0.016667);
            vor_chrome_json_flush(j); /* a frame ends */
        }
        ts += 137;
    }
    vor_chrome_json_flush(j);
    uint64_t elapsed = now_ns() - t0;
    vor_chrome_json_stats stats;
    vor_chrome_json_get_stats(j, &stats);
    vor_chrome_json_close(j);
    *bytes = stats.bytes_written;
    return (double)stats.bytes_written / 1e6 / ((double)elapsed / 1e9);
}

static vor_site frame_sites[4] = {
    {"frame.update", "update", __FILE__, __LINE__, 0},
    {"physics.step", "step", __FILE__, __LINE__, 0},
    {"physics.collide", "collide", __FILE__, __LINE__, 0},
    {"render.submit", "submit", __FILE__, __LINE__, 0},
};

/* One run of the consumer: returns MB/s, sets *bytes and *events. */
static double run_consumer(const char *path, uint64_t *bytes, uint64_t *events) {
    unsetenv("VOR_TRACE");
    vor_enable();
    vor_mutex_lock(&vor_frame_lock);
    int ok = vor_chrome_trace_open(path, NULL);
    vor_mutex_unlock(&vor_frame_lock);
    if (!ok) {
        fprintf(stderr, "bench_chrome: cannot write %s\n", path);
        exit(1);
    }
    vor_frame_mark(); /* start on a frame boundary */
    uint64_t in_marks = 0;
    for (int f = 0; f < FRAMES; f++) {
        for (int i = 0; i < SCOPES_PER_FRAME / 4; i++) {
            vor_scope_begin(&frame_sites[0]);
            vor_scope_begin(&frame_sites[1]);
            vor_scope_begin(&frame_sites[2]);
            vor_scope_end();
            vor_scope_end();
            vor_scope_begin(&frame_sites[3]);
            vor_scope_end();
            vor_scope_end();
        }
        vor_record_metric("loss", 1.0 / (f + 1));
        uint64_t t0 = now_ns();
        vor_frame_mark();
        in_marks += now_ns() - t0;
    }
    vor_shutdown();
    struct stat st;
    *bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    *events = (uint64_t)FRAMES * SCOPES_PER_FRAME;
    return (double)*bytes / 1e6 / ((double)in_marks / 1e9);
}

int main(int argc, char **argv) {
    make_sites();
    double mbs[RUNS];
    uint64_t bytes = 0;

    for (int r = 0; r < RUNS; r++) mbs[r] = run_writer(0, &bytes);
    double plain = median(mbs, RUNS);
    printf("writer, plain        %7.0f MB/s  %6.2f M events/s  (%llu bytes per run, %d X + %d C events)\n", plain,
           plain * 1e6 / ((double)bytes / (EVENTS + EVENTS / 100)) / 1e6, (unsigned long long)bytes, EVENTS,
           EVENTS / 100);

    for (int r = 0; r < RUNS; r++) mbs[r] = run_writer(1, &bytes);
    double prepared = median(mbs, RUNS);
    printf("writer, prepared     %7.0f MB/s  %6.2f M events/s\n", prepared,
           prepared * 1e6 / ((double)bytes / (EVENTS + EVENTS / 100)) / 1e6);

    char default_path[64];
    snprintf(default_path, sizeof default_path, "%s/bench_chrome.%d.json", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (int)getpid());
    const char *path = argc > 1 ? argv[1] : default_path;
    uint64_t events = 0;
    for (int r = 0; r < RUNS; r++) mbs[r] = run_consumer(path, &bytes, &events);
    double consumer = median(mbs, RUNS);
    printf("VOR_TRACE consumer   %7.0f MB/s  %6.2f M scopes/s  (%llu bytes for %llu scopes in %d frames, to %s)\n",
           consumer, consumer * 1e6 / ((double)bytes / (double)events) / 1e6, (unsigned long long)bytes,
           (unsigned long long)events, FRAMES, path);
    unlink(path);
    for (int i = 0; i < N_SITES; i++) vor_chrome_prepared_free(&sites[i].prepared);
    return 0;
}
