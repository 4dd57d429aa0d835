/* bench_nvtx.c: what VOR_NVTX costs a scope.
 *
 * VOR_NVTX is decided once per process, so each measurement is a child process (this
 * program run again with --child) in one of four settings:
 *   off          VOR_NVTX unset: the hot path's one branch, not taken
 *   no tool      VOR_NVTX=1, no NVTX tool (no NVTX_INJECTION64_PATH): each range is NVTX's
 *                inline check of a null function pointer, plus vor's attribute set-up
 *   tool         VOR_NVTX=1 with the tests' fake tool (tests/gpu/fake_nvtx.c, built here)
 *                loaded by NVTX: each range reaches a callback that only counts (a real
 *                tool such as Nsight Systems adds its own recording to that)
 *   off again    as off: the noise between two identical runs, to read the others against
 * Each child times batches of 1,000 scopes (500 with one nested scope each, as bench_core's
 * frame), marks a frame after each, and prints the median of the batches in ns per scope.
 * The parent runs the four in turn RUNS times and prints each one's median and its ratio
 * to off. Means are not shown: on a shared machine they measure who else ran.
 *
 *   bench_nvtx            the table (make bench)
 *   bench_nvtx --child    one measurement, in the environment the parent set
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_child.h"
#include "bench_util.h"
#include "vor/vor.h"

#define BATCHES 5000
#define RUNS 7

static int child(void) {
    vor_enable();
    static double per_scope[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = now_ns();
        BENCH_FRAME_OF_1000_SCOPES();
        per_scope[b] = (double)(now_ns() - t0) / 1000.0;
        vor_frame_mark();
    }
    vor_shutdown();
    printf("%.2f\n", median(per_scope, BATCHES));
    return 0;
}

enum { OFF, NO_TOOL, TOOL, OFF_AGAIN, KINDS };
static const char *const kind_names[KINDS] = {"off (VOR_NVTX unset)", "VOR_NVTX=1, no tool",
                                              "VOR_NVTX=1, a tool (fake)", "off again"};

static void set_environment(const void *arg) {
    int kind = *(const int *)arg;
    unsetenv("FAKE_NVTX_LOG");
    unsetenv("FAKE_NVTX_MODE");
    setenv("VOR_NVTX", kind == NO_TOOL || kind == TOOL ? "1" : "0", 1);
    if (kind == TOOL)
        setenv("NVTX_INJECTION64_PATH", BENCH_FAKE_NVTX, 1);
    else
        unsetenv("NVTX_INJECTION64_PATH");
}

static double measure(const char *self, int kind) {
    char out[64];
    double ns = 0;
    if (!bench_run_child(self, set_environment, &kind, out, sizeof out) || sscanf(out, "%lf", &ns) != 1) {
        fprintf(stderr, "bench_nvtx: the child (%s) failed\n", kind_names[kind]);
        exit(1);
    }
    return ns;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child();
    char self[4096];
    bench_self_path(self, sizeof self);
    double v[KINDS][RUNS];
    for (int r = 0; r < RUNS; r++) /* in turn: drift on this shared machine hits all four */
        for (int k = 0; k < KINDS; k++) v[k][r] = measure(self, k);
    printf("VOR_NVTX: a scope (begin + end), batches of 1,000 between frame marks, median of %d batches per\n"
           "process, median of %d processes each\n", BATCHES, RUNS);
    double off = median(v[OFF], RUNS);
    for (int k = 0; k < KINDS; k++) {
        double m = k == OFF ? off : median(v[k], RUNS);
        printf("  %-28s %7.2f ns per scope   x%.3f of off   (%+.2f ns)\n", kind_names[k], m, m / off, m - off);
    }
    return 0;
}
