/* compensation_workload.c: measures, in one process, a function that calls many empty
 * instrumented functions both ways: uninstrumented (the same body compiled without
 * instrumentation, timed with CLOCK_MONOTONIC) and recorded by vor (VOR_RECORD with
 * VOR_RECORD_FLAME=1), one call of each per frame, interleaved so that both see the same
 * machine. Prints "plain_median_ns N" (the median over the frames); test_cli_compensation.py
 * compares it with the median self time per frame `vor summary` reports.
 *
 *     compensation_workload FRAMES
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "compensation_body.h"
#include "vor/vor.h"

__attribute__((noinline)) static void empty_plain(void) { __asm__ volatile(""); }

__attribute__((noinline)) static uint64_t plain_parent(uint64_t seed) { COMPENSATION_BODY(empty_plain); }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int frames = argc > 1 ? atoi(argv[1]) : 0;
    if (frames < 1) {
        fprintf(stderr, "usage: compensation_workload FRAMES\n");
        return 2;
    }
    int64_t *plain = malloc((size_t)frames * sizeof *plain);
    if (!plain) return 1;
    volatile uint64_t sink = 1;
    vor_set_thread_name("main");
    vor_enable();
    for (int f = 0; f < frames; f++) {
        int64_t t0 = now_ns();
        sink = plain_parent(sink);
        plain[f] = now_ns() - t0;
        sink = instrumented_parent(sink);
        sink = scoped_parent(sink);
        vor_frame_mark();
    }
    vor_shutdown();
    qsort(plain, (size_t)frames, sizeof *plain, compare);
    printf("plain_median_ns %lld\n", (long long)plain[frames / 2]);
    free(plain);
    return sink == 0 ? 0 : 0; /* the work is kept: sink is volatile */
}
