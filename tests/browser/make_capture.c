/* make_capture.c: writes a synthetic capture with vor's own capture writer, fast: the frame
 * records a frame loop would build (two threads, about --scopes nested scopes per flame frame,
 * frame times around 16.6 ms with rare slow frames and one spike, user metrics), handed to
 * the writer directly, so a million frames take seconds instead of the hours a program running
 * at 60 frames a second would. The panel's browser tests and the whole-capture benchmark
 * (bench/web/whole_capture.bench.mjs) make their captures with it; nothing generated is kept.
 *
 *   vor_make_capture OUT --frames N [--scopes S] [--every K] [--spike-at F] [--seed X]
 *                        [--live-fps R --live-frames M] [--no-end]
 *
 * --every K: a flame frame on one frame in K (default 1). --spike-at F: frame F takes 278 ms.
 * --live-fps R: after the N frames, M more at R frames a second of real time (a capture still
 * being written, for live viewers); the program prints "LIVE" once the first N are written.
 * --no-end: leave out the end record (a capture cut short). Frame times are synthetic and
 * deterministic for a seed; the writer, the format and the file are vor's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture_writer.h"
#include "vor_internal.h"

enum { MAX_SCOPES = 4096 };

static vor_site sites[] = {
    {"update", "game_update", "game.c", 120, 0},   {"physics", "physics_step", "physics.c", 40, 0},
    {"collide", "collide_pairs", "physics.c", 88, 0}, {"integrate", "integrate_bodies", "physics.c", 132, 0},
    {"ai", "ai_think", "ai.c", 15, 0},              {"pathfind", "astar", "ai.c", 210, 0},
    {"render", "render_frame", "render.c", 30, 0},  {"cull", "frustum_cull", "render.c", 77, 0},
    {"draw batch", "draw_batch", "render.c", 140, 0}, {"upload", "upload_buffers", "gpu.c", 61, 0},
    {"present", "present", "render.c", 301, 0},     {"decode asset", "decode_asset", "assets.c", 54, 0},
    {"inflate", "inflate_block", "zlib.c", 400, 0},  {"parse", "parse_chunk", "assets.c", 120, 0},
};
enum { S_UPDATE, S_PHYSICS, S_COLLIDE, S_INTEGRATE, S_AI, S_PATHFIND, S_RENDER, S_CULL, S_DRAW, S_UPLOAD,
       S_PRESENT, S_DECODE, S_INFLATE, S_PARSE, N_SITES };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double uniform(void) { return (double)(next_random() >> 11) / 9007199254740992.0; }

typedef struct scope_list {
    vor_scope_record s[MAX_SCOPES];
    uint32_t n;
} scope_list;

/* Appends a scope after its children (end order): `fill` adds the children in [t0, t1]. */
static void add(scope_list *l, int site, uint32_t depth, int64_t t0, int64_t t1) {
    if (l->n < MAX_SCOPES) l->s[l->n++] = (vor_scope_record){sites[site].id, depth, t0, t1 - t0, 0, 0};
}

/* `count` children of one site spread over [t0, t1] with gaps, each with `grand` children. */
static void children(scope_list *l, int site, int grand_site, uint32_t depth, int64_t t0, int64_t t1, int count,
                     int grand) {
    if (count <= 0 || t1 <= t0) return;
    int64_t slot = (t1 - t0) / count;
    for (int i = 0; i < count; i++) {
        int64_t a = t0 + i * slot + (int64_t)(slot * 0.05 * uniform());
        int64_t b = a + (int64_t)(slot * (0.5 + 0.4 * uniform()));
        if (grand > 0 && grand_site >= 0) children(l, grand_site, -1, depth + 1, a, b, grand, 0);
        add(l, site, depth, a, b);
    }
}

/* The main thread's frame: update (physics, ai) then render (cull, draw batches) then present. */
static void main_frame(scope_list *l, int64_t start, int64_t dur, int budget) {
    l->n = 0;
    int64_t u0 = start + dur / 50, u1 = start + dur * 45 / 100;
    int64_t p1 = u0 + (u1 - u0) * 6 / 10;
    int physics_steps = 2 + budget / 40;
    children(l, S_COLLIDE, S_INTEGRATE, 2, u0 + 1000, p1 - 1000, physics_steps, 2);
    add(l, S_PHYSICS, 1, u0, p1);
    children(l, S_PATHFIND, -1, 2, p1 + 2000, u1 - 2000, 1 + budget / 30, 0);
    add(l, S_AI, 1, p1 + 1000, u1 - 1000);
    add(l, S_UPDATE, 0, u0, u1);
    int64_t r0 = u1 + dur / 100, r1 = start + dur * 93 / 100;
    add(l, S_CULL, 1, r0 + 500, r0 + (r1 - r0) / 10);
    int draws = budget - (int)l->n - 2;
    children(l, S_DRAW, S_UPLOAD, 1, r0 + (r1 - r0) / 10 + 500, r1 - 500, draws > 4 ? draws / 2 : 2, 1);
    add(l, S_RENDER, 0, r0, r1);
    add(l, S_PRESENT, 0, r1 + 1000, start + dur - 2000);
}

static void worker_frame(scope_list *l, int64_t start, int64_t dur) {
    l->n = 0;
    int jobs = 1 + (int)(uniform() * 3);
    for (int j = 0; j < jobs; j++) {
        int64_t a = start + (int64_t)(dur * (0.1 + 0.25 * j)), b = a + (int64_t)(dur * (0.1 + 0.1 * uniform()));
        int64_t m = a + (b - a) / 2;
        children(l, S_INFLATE, -1, 1, a + 100, m, 2, 0);
        children(l, S_PARSE, -1, 1, m + 100, b - 100, 1, 0);
        add(l, S_DECODE, 0, a, b);
    }
}

/* The worker thread stays alive (its name declared) until the end. */
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int worker_ready, worker_release;
static uint32_t worker_id;

static void *worker(void *arg) {
    (void)arg;
    vor_set_thread_name("asset worker");
    for (int s = S_DECODE; s <= S_PARSE; s++)
        if (vor_scope_begin(&sites[s])) vor_scope_end();
    pthread_mutex_lock(&gate);
    worker_id = vor_tls_thread->thread_id;
    worker_ready = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!worker_release) pthread_cond_wait(&gate_cond, &gate);
    pthread_mutex_unlock(&gate);
    return NULL;
}

static uint32_t column_named(const char *name) {
    for (uint32_t id = 0; id < vor_column_count(); id++) {
        vor_column_info info;
        if (vor_column_get(id, &info) && strcmp(info.name, name) == 0) return id;
    }
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: vor_make_capture OUT --frames N [--scopes S] [--every K] [--spike-at F] [--seed X] "
                    "[--live-fps R --live-frames M] [--no-end]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *out = argv[1];
    long long frames = -1, scopes = 120, every = 1, spike_at = -1, live_fps = 0, live_frames = 0;
    int end = 1;
    for (int i = 2; i < argc; i++) {
        long long *v = NULL;
        if (!strcmp(argv[i], "--frames")) v = &frames;
        else if (!strcmp(argv[i], "--scopes")) v = &scopes;
        else if (!strcmp(argv[i], "--every")) v = &every;
        else if (!strcmp(argv[i], "--spike-at")) v = &spike_at;
        else if (!strcmp(argv[i], "--live-fps")) v = &live_fps;
        else if (!strcmp(argv[i], "--live-frames")) v = &live_frames;
        else if (!strcmp(argv[i], "--seed")) {
            if (++i >= argc) usage();
            rng ^= strtoull(argv[i], NULL, 10) * 0x2545F4914F6CDD1Dull;
            continue;
        } else if (!strcmp(argv[i], "--no-end")) {
            end = 0;
            continue;
        } else usage();
        if (++i >= argc) usage();
        char *e;
        *v = strtoll(argv[i], &e, 10);
        if (*e || *v < 0) usage();
    }
    if (frames < 0 || scopes < 8 || scopes > MAX_SCOPES || every < 1) usage();

    vor_enable();
    vor_set_thread_name("main");
    for (int s = 0; s < S_DECODE; s++)
        if (vor_scope_begin(&sites[s])) vor_scope_end();
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_mutex_lock(&gate);
    while (!worker_ready) pthread_cond_wait(&gate_cond, &gate);
    pthread_mutex_unlock(&gate);
    vor_record_metric_unit("loss", "nats");
    vor_record_metric("loss", 1.0);
    vor_record_metric_unit("throughput", "items/s");
    vor_record_metric("throughput", 1.0);
    vor_frame_mark(); /* site ids and columns assigned */
    uint32_t main_id = vor_tls_thread->thread_id;
    vor_user_value user[2] = {{column_named("loss"), 0, 0}, {column_named("throughput"), 0, 0}};
    uint32_t n_system = 0;
    vor_system_columns(&n_system);

    vor_capture_options options = {1, (uint32_t)every, 0, 0};
    vor_capture_writer *w = vor_capture_writer_create(out, &options);
    if (!w) return 1;
    static scope_list main_scopes, worker_scopes;
    vor_thread_record threads[2];
    int64_t t = 1000000;
    long long total = frames + live_frames;
    struct timespec live0 = {0, 0};
    for (long long f = 0; f < total; f++) {
        if (f == frames && live_frames > 0) {
            printf("LIVE\n");
            fflush(stdout);
            clock_gettime(CLOCK_MONOTONIC, &live0);
        }
        if (f >= frames && live_fps > 0) { /* paced: frame f - frames at its time */
            double due = (double)(f - frames) / (double)live_fps;
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            double elapsed = (double)(now.tv_sec - live0.tv_sec) + (now.tv_nsec - live0.tv_nsec) / 1e9;
            if (due > elapsed) {
                struct timespec d = {(time_t)(due - elapsed), (long)(((due - elapsed) - (time_t)(due - elapsed)) * 1e9)};
                nanosleep(&d, NULL);
            }
        }
        double ms = 16.0 + 1.2 * uniform();
        if (uniform() < 0.0002) ms = 30 + 40 * uniform(); /* rare slow frames */
        if (f == spike_at) ms = 278.0;
        int64_t dur = (int64_t)(ms * 1e6);
        vor_frame_record rec;
        memset(&rec, 0, sizeof rec);
        rec.index = (uint64_t)f;
        rec.start_ns = t;
        rec.duration_ns = dur;
        rec.overhead_ns = 8000 + (int64_t)(4000 * uniform());
        rec.n_system = n_system;
        rec.system_present = n_system >= 32 ? 0xFFFFFFFFu : (1u << n_system) - 1u;
        rec.system_raw[0] = dur;
        for (uint32_t c = 1; c < n_system && c < VOR_SYSTEM_COLUMNS_MAX; c++)
            rec.system_raw[c] = (int64_t)(c == 1 ? 180e6 + f * 16 : 1000 * c + 500 * uniform());
        user[0].value = 2.0 / (1.0 + (double)f / 5000.0) + 0.05 * uniform();
        user[1].value = (double)(900 + (f / 100) % 50);
        rec.n_user = 2;
        rec.user = user;
        if (f % every == 0) {
            main_frame(&main_scopes, t, dur, (int)scopes);
            worker_frame(&worker_scopes, t, dur);
            threads[0] = (vor_thread_record){main_id, main_scopes.n, main_scopes.s, 0};
            threads[1] = (vor_thread_record){worker_id, worker_scopes.n, worker_scopes.s, 0};
            rec.n_threads = 2;
            rec.threads = threads;
            rec.n_scopes = main_scopes.n + worker_scopes.n;
        }
        if (vor_capture_writer_frame(w, &rec) != 0) return 1;
        t += dur;
    }
    if (end) {
        vor_capture_writer_close(w);
    } else {
        _Exit(0); /* no end record: as a killed program leaves it */
    }
    pthread_mutex_lock(&gate);
    worker_release = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate);
    pthread_join(th, NULL);
    vor_shutdown();
    return 0;
}
