/* gpu_workload.c: a program the GPU tests run against the fake NVML (fake_nvml.c), driven
 * by its arguments, a list of steps done in order:
 *
 *   metric NAME VALUE      vor_record_metric (before enable: a user column named early)
 *   enable                 vor_enable
 *   frames N               N frames of about 1 ms each
 *   sleep MS               sleeps (the real-driver test lets the poller run)
 *   wait DEV METRIC N      until the fake has answered N calls of METRIC on DEV (the
 *                          poller's progress, so a test knows which rounds were published)
 *   wait_hang              until a poller call hangs in the fake (its `hang` directive)
 *   release                lets the hanging call return
 *   shutdown               vor_shutdown
 *   fork                   a child process starts its own session (5 frames) and checks
 *                          that it made no NVML call; the parent waits for it
 *
 * Waits give up after 60 s (exit 3): a test that cannot make progress fails, it does not
 * hang. The fake's helpers are found in the library vor loaded (dlopen RTLD_NOLOAD).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vor/vor.h"

static void *fake(const char *name) {
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *fn = lib ? dlsym(lib, name) : NULL;
    if (fn == NULL) {
        fprintf(stderr, "gpu_workload: the fake NVML is not loaded (%s)\n", name);
        exit(4);
    }
    return fn;
}

static unsigned calls(unsigned dev, const char *metric) {
    unsigned (*fn)(unsigned, const char *);
    *(void **)&fn = fake("fake_nvml_calls");
    return fn(dev, metric);
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Waits for cond(arg) up to 60 s. */
static void wait_until(int (*cond)(const void *), const void *arg, const char *what) {
    for (int i = 0; i < 60000; i++) {
        if (cond(arg)) return;
        sleep_ms(1);
    }
    fprintf(stderr, "gpu_workload: timed out waiting for %s\n", what);
    exit(3);
}

typedef struct call_goal {
    unsigned dev, n;
    const char *metric;
} call_goal;

static int calls_reached(const void *arg) {
    const call_goal *g = arg;
    return calls(g->dev, g->metric) >= g->n;
}

static int hanging(const void *arg) {
    (void)arg;
    int (*fn)(void);
    *(void **)&fn = fake("fake_nvml_hanging");
    return fn();
}

static void frames(int n) {
    for (int i = 0; i < n; i++) {
        sleep_ms(1);
        vor_frame_mark();
    }
}

static void child_session(void) {
    static const char *const metrics[] = {"util", "mem", "power", "pcie_tx", "pcie_rx", "temp", "clock"};
    unsigned before[7];
    for (int m = 0; m < 7; m++) before[m] = calls(0, metrics[m]);
    vor_enable();
    frames(5);
    sleep_ms(300); /* three poll periods at the default rate: a poller would have called */
    frames(1);
    vor_shutdown();
    for (int m = 0; m < 7; m++)
        if (calls(0, metrics[m]) != before[m]) {
            fprintf(stderr, "gpu_workload: the forked child called NVML (%s)\n", metrics[m]);
            _exit(5);
        }
    _exit(0);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *step = argv[i];
        if (strcmp(step, "metric") == 0 && i + 2 < argc) {
            vor_record_metric(argv[i + 1], atof(argv[i + 2]));
            i += 2;
        } else if (strcmp(step, "enable") == 0) {
            vor_enable();
        } else if (strcmp(step, "frames") == 0 && i + 1 < argc) {
            frames(atoi(argv[++i]));
        } else if (strcmp(step, "sleep") == 0 && i + 1 < argc) {
            sleep_ms(atol(argv[++i]));
        } else if (strcmp(step, "wait") == 0 && i + 3 < argc) {
            call_goal g = {(unsigned)atoi(argv[i + 1]), (unsigned)atoi(argv[i + 3]), argv[i + 2]};
            wait_until(calls_reached, &g, "NVML calls");
            i += 3;
        } else if (strcmp(step, "wait_hang") == 0) {
            wait_until(hanging, NULL, "a hanging NVML call");
        } else if (strcmp(step, "release") == 0) {
            void (*fn)(void);
            *(void **)&fn = fake("fake_nvml_release");
            fn();
        } else if (strcmp(step, "shutdown") == 0) {
            vor_shutdown();
        } else if (strcmp(step, "fork") == 0) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) return 6;
            if (pid == 0) child_session();
            int status = 0;
            if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "gpu_workload: the forked child failed (status %d)\n", status);
                return 7;
            }
        } else {
            fprintf(stderr, "gpu_workload: bad step \"%s\"\n", step);
            return 2;
        }
    }
    return 0;
}
