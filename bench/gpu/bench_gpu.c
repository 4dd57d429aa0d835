/* bench_gpu.c: what the GPU rows cost vor_frame_mark.
 *
 * The GPU columns are decided once per process, so each measurement is a child process
 * (this program run again with --child): "off" with VOR_GPU=0, "on" with the fake NVML
 * (tests/gpu/fake_nvml.c, built here) first on LD_LIBRARY_PATH and every NVML call made to
 * busy-wait 50 us, so that the poller thread really competes for the CPU: a round of six
 * readings (seven calls) holds a core for 350 us. Each child times vor_frame_mark on frames
 * of 1,000 scopes (as bench_core) and prints the median. The parent runs children in turn
 * off, on, off again, and prints the median of each kind, on/off, and off again/off: the
 * noise of this machine between two identical runs, against which on/off is read. For the
 * default rate (10 Hz) and for 100 Hz (the poller busy 3.5% of a core). Means are not
 * shown: on a shared machine they measure who else ran.
 *
 *   bench_gpu            the table (make bench)
 *   bench_gpu --child    one measurement, in the environment the parent set
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_child.h"
#include "bench_util.h"
#include "vor/vor.h"

#define FRAMES 20000
#define RUNS 5

static int child(void) {
    vor_enable();
    static double mark_ns[FRAMES];
    for (int f = 0; f < FRAMES; f++) {
        BENCH_FRAME_OF_1000_SCOPES();
        uint64_t t0 = now_ns();
        vor_frame_mark();
        mark_ns[f] = (double)(now_ns() - t0);
    }
    vor_column_info c;
    int gpu = 0;
    for (uint32_t id = 0; id < vor_column_count(); id++)
        if (vor_column_get(id, &c) && strcmp(c.name, "gpu_util") == 0) gpu = 1;
    vor_shutdown();
    printf("%d %.1f\n", gpu, median(mark_ns, FRAMES));
    return 0;
}

typedef struct setting {
    const char *script, *hz;
    int on;
} setting;

static void set_environment(const void *arg) {
    const setting *s = arg;
    setenv("LD_LIBRARY_PATH", BENCH_FAKE_NVML_DIR, 1);
    setenv("FAKE_NVML_SCRIPT", s->script, 1);
    setenv("VOR_GPU", s->on ? "1" : "0", 1);
    setenv("VOR_GPU_POLL_HZ", s->hz, 1);
}

/* Runs one child with `on` (the fake NVML at `hz`) or off; returns its median in ns. */
static double measure(const char *self, const char *script, int on, const char *hz) {
    setting s = {script, hz, on};
    char out[128];
    int gpu = -1;
    double ns = 0;
    if (!bench_run_child(self, set_environment, &s, out, sizeof out) || sscanf(out, "%d %lf", &gpu, &ns) != 2 ||
        gpu != on) {
        fprintf(stderr, "bench_gpu: the child (%s) failed or did not %s the fake NVML\n", on ? "on" : "off",
                on ? "load" : "skip");
        exit(1);
    }
    return ns;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child();
    char self[4096];
    bench_self_path(self, sizeof self);
    char script[] = "/tmp/bench_gpu_XXXXXX";
    int sfd = mkstemp(script);
    if (sfd < 0) return 1;
    const char *text = "devices 1\nspin_us 50\nvalue 0 util 50\nvalue 0 mem 1000000000\nvalue 0 power 200000\n"
                       "value 0 pcie_tx 1000\nvalue 0 pcie_rx 1000\nvalue 0 temp 60\nvalue 0 clock 1500\n";
    if (write(sfd, text, strlen(text)) != (ssize_t)strlen(text)) return 1;
    close(sfd);

    printf("vor_frame_mark, frames of 1,000 scopes, %d frames per process, median of %d processes each\n", FRAMES,
           RUNS);
    printf("  fake NVML: every call busy-waits 50 us (a round: 7 calls, 350 us of CPU)\n");
    const char *rates[] = {"10", "100"};
    for (int r = 0; r < 2; r++) {
        double off[RUNS], on[RUNS], again[RUNS];
        for (int i = 0; i < RUNS; i++) { /* in turn: drift on this shared machine hits all three */
            off[i] = measure(self, script, 0, rates[r]);
            on[i] = measure(self, script, 1, rates[r]);
            again[i] = measure(self, script, 0, rates[r]);
        }
        double m_off = median(off, RUNS), m_on = median(on, RUNS), m_again = median(again, RUNS);
        printf("  %-30s off %6.2f us, on %6.2f us, off again %6.2f us:  on/off %.3f  (noise: off again/off %.3f)\n",
               r == 0 ? "VOR_GPU_POLL_HZ=10 (default)" : "VOR_GPU_POLL_HZ=100", m_off / 1000.0, m_on / 1000.0,
               m_again / 1000.0, m_on / m_off, m_again / m_off);
    }
    unlink(script);
    return 0;
}
