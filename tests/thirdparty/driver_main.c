/* driver_main.c: runs a third-party driver (driver.h) in steps, one vor_frame_mark per step.
 *
 *   DRIVER [--steps N] [--warmup W] [--scale K] [--collection-off] [--scopes-per-frame N]
 *          [driver options]
 *
 * --collection-off never calls vor_enable(): the instrumented code then pays only the
 * disabled path (a branch per scope, the -finstrument-functions hooks' early return),
 * the "collection off" row of the overhead table. Outputs come from the environment as in
 * any program (VOR_RECORD, VOR_RECORD_FLAME, VOR_TRACE, ...). --scopes-per-frame N gives
 * vor_setup() room for N scopes per frame (a thread's buffer and the frame record); without
 * it vor's defaults apply, which the default workloads (--scale 1) stay within.
 *
 * Prints `checksum HEX` (the same natively and in wasm: the same work was done) and
 * `steps_ns N`, the wall time of the N steps alone (no start-up, no wasm compilation, no
 * shutdown), and `steps_cpu_ns N`, the process's CPU time over the same steps (natively,
 * and in wasm under node), which bench/thirdparty compares: unlike wall time, it does not
 * count the time the process waited for a core on a loaded machine. --warmup W runs W steps (and
 * frames) first, outside that time: the first steps also pay for page faults, wasm tier-up
 * and vor naming the functions it meets first. Exit status 0 when every step
 * succeeded, 1 when one failed, 2 on bad usage. The driver's own code is never compiled
 * with -finstrument-functions (only the library is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vor/vor.h>

#include "driver.h"

static int parse_count(const char *option, const char *text, int *out) {
    char *end = NULL;
    long v = text ? strtol(text, &end, 10) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || v < 1 || v > 16777216) {
        fprintf(stderr, "%s: %s needs a count from 1 to 16777216 (got '%s')\n", driver_name, option, text ? text : "");
        return 0;
    }
    *out = (int)v;
    return 1;
}

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
/* Emscripten's clocks are all wall clocks; under node, process.cpuUsage() is the process's
 * CPU time (every thread of node's, which after the warm-up steps is the program's), in us.
 * -1 in a page. */
EM_JS(double, node_cpu_us, (), {
    if (typeof process !== 'object' || typeof process.cpuUsage !== 'function') return -1;
    var u = process.cpuUsage();
    return u.user + u.system;
});
static int64_t cpu_ns(void) {
    return (int64_t)(node_cpu_us() * 1000.0);
}
#else
static int64_t cpu_ns(void) {
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}
#endif

int main(int argc, char **argv) {
    int steps = driver_default_steps, warmup = 0, scale = 1, collect = 1, capacity = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0) {
            if (!parse_count("--steps", i + 1 < argc ? argv[++i] : NULL, &steps)) return 2;
        } else if (strcmp(argv[i], "--warmup") == 0) {
            if (!parse_count("--warmup", i + 1 < argc ? argv[++i] : NULL, &warmup)) return 2;
        } else if (strcmp(argv[i], "--scale") == 0) {
            if (!parse_count("--scale", i + 1 < argc ? argv[++i] : NULL, &scale)) return 2;
        } else if (strcmp(argv[i], "--scopes-per-frame") == 0) {
            if (!parse_count("--scopes-per-frame", i + 1 < argc ? argv[++i] : NULL, &capacity)) return 2;
        } else if (strcmp(argv[i], "--collection-off") == 0) {
            collect = 0;
        } else {
            int taken = strncmp(argv[i], "--", 2) == 0 && i + 1 < argc ? driver_option(argv[i] + 2, argv[i + 1]) : 0;
            if (taken < 0) return 2;
            if (taken == 0) {
                fprintf(stderr,
                        "usage: %s [--steps N] [--warmup W] [--scale K] [--collection-off] [--scopes-per-frame N]%s\n",
                        driver_name, driver_usage);
                return 2;
            }
            i++;
        }
    }
    if (driver_init(scale) != 0) return 1;
    if (capacity) vor_setup(&(vor_desc){.thread_buffer_scopes = (uint32_t)capacity, .max_frame_scopes = (uint32_t)capacity});
    vor_set_thread_name(driver_name);
    if (collect) vor_enable();
    uint64_t checksum = 0;
    int failed = 0;
    int64_t t0 = 0, c0 = 0;
    for (int step = 0; step < warmup + steps && !failed; step++) {
        if (step == warmup) {
            t0 = clock_ns(CLOCK_MONOTONIC);
            c0 = cpu_ns();
        }
        failed = driver_step(step, &checksum) != 0;
        vor_frame_mark();
    }
    int64_t t1 = clock_ns(CLOCK_MONOTONIC), c1 = cpu_ns();
    driver_finish();
    vor_shutdown();
    printf("checksum %016llx\n", (unsigned long long)checksum);
    printf("steps_ns %lld\n", (long long)(t1 - t0));
    if (c0 >= 0) printf("steps_cpu_ns %lld\n", (long long)(c1 - c0));
    return failed ? 1 : 0;
}
