/* bench_core.c: the cost of the core's hot paths, printed beside the floor measured in
 * the same run (this machine is shared and noisy, so ratios matter more than absolute
 * figures). Asserts nothing; `make bench` runs it.
 *
 *   floor (rdtsc)        two raw timestamp reads + two stores per iteration
 *   floor (clock_gettime) two CLOCK_MONOTONIC reads + two stores
 *   VOR_SCOPE enabled    begin + end through the public API, ns per scope (frames are
 *                        marked between timed batches, outside the timing)
 *   ... incl. drain      the same plus vor_frame_mark's per-scope share
 *   VOR_SCOPE disabled   collection off: the inline flag test
 *   vor_frame_mark       a frame of 1,000 scopes, system sampling included
 *   2-thread scaling     per-scope cost with two threads recording at once vs one
 * Each figure is the median of RUNS runs.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <vor/vor.h>

#include "../common/bench_util.h"

#define RUNS 11
#define SCOPES_PER_RUN 10000000
#define BATCH 50000

static volatile uint64_t sink_store[2];

static double floor_rdtsc(void) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < SCOPES_PER_RUN; i++) {
        sink_store[0] = __rdtsc();
        sink_store[1] = __rdtsc();
    }
    return (double)(now_ns() - t0) / SCOPES_PER_RUN;
}

static double floor_clock_gettime(void) {
    int n = SCOPES_PER_RUN / 4;
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        sink_store[0] = (uint64_t)a.tv_nsec;
        clock_gettime(CLOCK_MONOTONIC, &b);
        sink_store[1] = (uint64_t)b.tv_nsec;
    }
    return (double)(now_ns() - t0) / n;
}

/* Enabled scopes: returns hot-path ns per scope; *with_drain gets the amortized total. */
static double enabled_scopes(double *with_drain) {
    uint64_t timed = 0, mark = 0;
    for (int done = 0; done < SCOPES_PER_RUN; done += BATCH) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            VOR_SCOPE("bench");
        }
        uint64_t t1 = now_ns();
        vor_frame_mark();
        mark += now_ns() - t1;
        timed += t1 - t0;
    }
    *with_drain = (double)(timed + mark) / SCOPES_PER_RUN;
    return (double)timed / SCOPES_PER_RUN;
}

static double disabled_scopes(void) {
    vor_disable();
    uint64_t t0 = now_ns();
    for (int i = 0; i < SCOPES_PER_RUN; i++) {
        VOR_SCOPE("bench disabled");
        __asm__ volatile("" ::: "memory");
    }
    double r = (double)(now_ns() - t0) / SCOPES_PER_RUN;
    vor_enable();
    return r;
}

static double empty_loop(void) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < SCOPES_PER_RUN; i++) __asm__ volatile("" ::: "memory");
    return (double)(now_ns() - t0) / SCOPES_PER_RUN;
}

static double frame_mark_1000(void) {
    enum { FRAMES = 500 };
    uint64_t total = 0;
    for (int f = 0; f < FRAMES; f++) {
        BENCH_FRAME_OF_1000_SCOPES();
        uint64_t t0 = now_ns();
        vor_frame_mark();
        total += now_ns() - t0;
    }
    return (double)total / FRAMES;
}

/* Two persistent worker threads, so their buffers are warm after the first round; the
 * main thread drains between rounds. A round runs one or both workers at once. */
#define SCALING_SCOPES 1000000
static pthread_barrier_t round_start, round_done;
static int round_threads, quit_workers;
static double worker_ns[2];

static void *scaling_worker(void *arg) {
    int id = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&round_start);
        if (quit_workers) return NULL;
        if (id < round_threads) {
            uint64_t t0 = now_ns();
            for (int i = 0; i < SCALING_SCOPES; i++) {
                VOR_SCOPE("scaling");
            }
            worker_ns[id] = (double)(now_ns() - t0) / SCALING_SCOPES;
        }
        pthread_barrier_wait(&round_done);
    }
}

static double scaling(int threads) {
    round_threads = threads;
    pthread_barrier_wait(&round_start);
    pthread_barrier_wait(&round_done);
    vor_frame_mark(); /* drain while the workers wait */
    return threads == 1 ? worker_ns[0] : (worker_ns[0] + worker_ns[1]) / 2;
}

int main(void) {
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.thread_buffer_scopes = 1u << 20; /* room for SCALING_SCOPES per thread */
    desc.max_frame_scopes = 1u << 21;
    vor_setup(&desc);
    vor_enable();

    pthread_t workers[2];
    pthread_barrier_init(&round_start, NULL, 3);
    pthread_barrier_init(&round_done, NULL, 3);
    for (int i = 0; i < 2; i++) pthread_create(&workers[i], NULL, scaling_worker, (void *)(intptr_t)i);
    scaling(2); /* warm both buffers */

    double r_floor[RUNS], r_floor_cg[RUNS], r_on[RUNS], r_drain[RUNS], r_off[RUNS], r_empty[RUNS], r_mark[RUNS],
        r_one[RUNS], r_two[RUNS];
    for (int r = 0; r < RUNS; r++) {
        r_floor[r] = floor_rdtsc();
        r_floor_cg[r] = floor_clock_gettime();
        r_on[r] = enabled_scopes(&r_drain[r]);
        r_off[r] = disabled_scopes();
        r_empty[r] = empty_loop();
        r_mark[r] = frame_mark_1000();
        r_one[r] = scaling(1);
        r_two[r] = scaling(2);
    }
    quit_workers = 1;
    pthread_barrier_wait(&round_start);
    for (int i = 0; i < 2; i++) pthread_join(workers[i], NULL);

    double floor_tsc = median(r_floor, RUNS), floor_cg = median(r_floor_cg, RUNS);
    double on = median(r_on, RUNS), drain = median(r_drain, RUNS);
    double off = median(r_off, RUNS), empty = median(r_empty, RUNS);
    double mark = median(r_mark, RUNS), one = median(r_one, RUNS), two = median(r_two, RUNS);

    printf("vor core benchmark (median of %d runs; %d scopes per run)\n", RUNS, SCOPES_PER_RUN);
    printf("  %-44s %9.2f ns\n", "floor: 2 x rdtsc + 2 stores", floor_tsc);
    printf("  %-44s %9.2f ns\n", "floor: 2 x clock_gettime + 2 stores", floor_cg);
    printf("  %-44s %9.2f ns   %.2fx the rdtsc floor (target <= 1.3x)\n", "VOR_SCOPE enabled, begin+end", on,
           on / floor_tsc);
    printf("  %-44s %9.2f ns\n", "VOR_SCOPE enabled, incl. frame_mark share", drain);
    printf("  %-44s %9.2f ns   (empty loop %.2f ns; target <= 1 ns)\n", "VOR_SCOPE disabled", off, empty);
    printf("  %-44s %9.2f us   (target <= 20 us)\n", "vor_frame_mark, 1,000 scopes", mark / 1000.0);
    printf("  %-44s %9.2f ns\n", "1 thread, per scope", one);
    printf("  %-44s %9.2f ns   %.2fx one thread\n", "2 threads at once, per scope", two, two / one);
    printf("  %-44s %9.2f ns\n", "vor_empty_span_ns()", vor_empty_span_ns());
    vor_shutdown();
    return 0;
}
