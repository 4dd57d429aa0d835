/* capture_workload.c: an instrumented program with a known shape, run by the CLI tests
 * with VOR_RECORD=path VOR_RECORD_FLAME=1 to produce real captures.
 *
 *     capture_workload FRAMES [--delay-ms MS] [--odd-names]
 *
 * Threads and scopes (names are what the tests check; times are real and vary):
 *   main:   run (one explicit scope around the whole loop, ending in the last frame, so
 *           its children wait across frames for their parent)
 *             frame_body
 *               physics > collide
 *               render           (called twice on even frames: stacks merge by name)
 *   worker: load > decode        (in lock-step with main through two barriers)
 * Metrics: "score" (unit "points") = 1.5 * i from frame 0; "loss" (unit "nats") only
 * from frame FRAMES/2 on (a column first appearing mid-run), NaN at frame FRAMES-2 and
 * +infinity at FRAMES-3 when those are in the second half.
 * --delay-ms sleeps between frames (tests that tail a growing capture).
 * --span-mark: the main thread's "step" scope spans each frame mark: it begins before the
 *   mark with "child before the mark" inside it, and ends early in the next frame after
 *   "child after the mark" (a scope whose parent is in another frame). Its stacks:
 *   run;step;child before the mark, run;step;child after the mark; frame_body is never
 *   inside step.
 * --pause: collection is off (vor_disable) for frames 7 to 9 of every 20.
 * --burst: small thread buffers (1,024 scopes) and, every 4th frame, 3,000 "tick" scopes
 *   inside the worker's "load": the writer drops some, and says why.
 * --odd-names adds names that must not reach a terminal or a JSON file as they are: a
 * metric ODD_METRIC, a scope ODD_SCOPE inside frame_body, and the worker thread named
 * ODD_THREAD (escape sequences, a newline, invalid UTF-8: a stray byte, an overlong '/',
 * a surrogate, a value above U+10FFFF).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vor/vor.h"

#define ODD_METRIC "odd\x1b[2J\nmetric\xff"
#define ODD_SCOPE "scope\x1b]0;pwned\x07\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"
#define ODD_THREAD "thr\x1b[31m\r\xfe"

static pthread_barrier_t frame_start, frame_done;
static int odd_names, burst;
static volatile int stop_worker, burst_now;
static volatile uint64_t sink;

/* Busy work for about `us` microseconds, so that every scope has a self time. */
static void spin_us(uint64_t us) {
    uint64_t end = vor_now_ns() + us * 1000u;
    while (vor_now_ns() < end) sink++;
}

static void *worker(void *arg) {
    (void)arg;
    vor_set_thread_name(odd_names ? ODD_THREAD : "worker");
    for (;;) {
        pthread_barrier_wait(&frame_start);
        if (stop_worker) break;
        {
            VOR_SCOPE("load");
            spin_us(5);
            if (burst && burst_now) {
                for (int k = 0; k < 3000; k++) {
                    VOR_SCOPE("tick");
                    sink++;
                }
            }
            {
                VOR_SCOPE("decode");
                spin_us(10);
            }
        }
        pthread_barrier_wait(&frame_done);
    }
    return NULL;
}

static void frame_body(int i) {
    VOR_SCOPE("frame_body");
    spin_us(3);
    if (odd_names) {
        VOR_SCOPE(ODD_SCOPE);
        spin_us(2);
    }
    {
        VOR_SCOPE("physics");
        spin_us(20);
        {
            VOR_SCOPE("collide");
            spin_us(10);
        }
    }
    {
        VOR_SCOPE("render");
        spin_us(15);
    }
    if (i % 2 == 0) {
        VOR_SCOPE("render");
        spin_us(5);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr,
                "usage: capture_workload FRAMES [--delay-ms MS] [--odd-names] [--span-mark] [--pause] [--burst]\n");
        return 2;
    }
    int frames = atoi(argv[1]);
    long delay_ms = 0;
    int span_mark = 0, pause = 0;
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "--delay-ms") == 0 && a + 1 < argc)
            delay_ms = atol(argv[++a]);
        else if (strcmp(argv[a], "--odd-names") == 0)
            odd_names = 1;
        else if (strcmp(argv[a], "--span-mark") == 0)
            span_mark = 1;
        else if (strcmp(argv[a], "--pause") == 0)
            pause = 1;
        else if (strcmp(argv[a], "--burst") == 0)
            burst = 1;
    }
    if (burst) {
        vor_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.thread_buffer_scopes = 1024;
        vor_setup(&desc);
    }
    if (frames < 1) frames = 1;

    vor_set_thread_name("main");
    vor_record_metric_unit("score", "points");
    vor_record_metric_unit("loss", "nats");
    pthread_barrier_init(&frame_start, NULL, 2);
    pthread_barrier_init(&frame_done, NULL, 2);
    vor_enable();
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0) return 1;

    static vor_site run_site = VOR_SITE_INIT("run");
    static vor_site step_site = VOR_SITE_INIT("step");
    int run_open = vor_scope_begin(&run_site);
    int step_open = 0;
    for (int i = 0; i < frames; i++) {
        burst_now = i % 4 == 0;
        pthread_barrier_wait(&frame_start);
        if (step_open) { /* the step begun before the last mark */
            {
                VOR_SCOPE("child after the mark");
                spin_us(8);
            }
            vor_scope_end();
            step_open = 0;
        }
        frame_body(i);
        pthread_barrier_wait(&frame_done);
        vor_record_metric("score", 1.5 * i);
        if (odd_names) vor_record_metric(ODD_METRIC, i);
        if (i >= frames / 2) {
            double loss = 1.0 / (i + 1);
            if (i == frames - 2) loss = NAN;
            if (i == frames - 3) loss = INFINITY;
            vor_record_metric("loss", loss);
        }
        if (span_mark && i < frames - 1) {
            step_open = vor_scope_begin(&step_site);
            VOR_SCOPE("child before the mark");
            spin_us(6);
        }
        if (i == frames - 1 && run_open) vor_scope_end();
        vor_frame_mark();
        if (pause && i % 20 == 6) vor_disable();
        if (pause && i % 20 == 9) vor_enable();
        if (delay_ms > 0) {
            struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    stop_worker = 1;
    pthread_barrier_wait(&frame_start);
    pthread_join(th, NULL);
    vor_shutdown();
    return 0;
}
