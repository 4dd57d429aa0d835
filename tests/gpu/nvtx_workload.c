/* nvtx_workload.c: a program the NVTX tests run (test_nvtx.py), driven by its arguments, a
 * list of steps done in order:
 *
 *   enable            vor_enable
 *   frames N          N frames: "frame_body" holding two "middle" each holding one "leaf"
 *   thread N          a second thread opens N "worker" scopes holding one "worker_leaf"
 *                     each (joined before the next step)
 *   functions N       N calls of nvtx_instrumented_leaf, which calls a static function,
 *                     both compiled with -finstrument-functions (nvtx_instrumented.c);
 *                     prints the static function's address
 *   deep N            N nested "deep" scopes (deeper than VOR_MAX_DEPTH: vor drops them)
 *   unbalanced        vor_scope_end() with nothing open
 *   across_disable    "across" opened, vor_disable, closed, vor_enable
 *   before_enable     "before" while collection is off (not recorded)
 *   shutdown          vor_shutdown
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vor/vor.h"

void nvtx_instrumented_leaf(void); /* nvtx_instrumented.c */
void *nvtx_static_helper_address(void);

static void leaf(void) {
    VOR_SCOPE("leaf");
}

static void middle(void) {
    VOR_SCOPE("middle");
    leaf();
}

static void *worker(void *arg) {
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++) {
        VOR_SCOPE("worker");
        {
            VOR_SCOPE("worker_leaf");
        }
    }
    return NULL;
}

static void deep(long n) {
    if (n == 0) return;
    VOR_SCOPE("deep");
    deep(n - 1);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *step = argv[i];
        long n = i + 1 < argc ? strtol(argv[i + 1], NULL, 10) : 0;
        if (strcmp(step, "enable") == 0) {
            vor_enable();
        } else if (strcmp(step, "frames") == 0) {
            for (long f = 0; f < n; f++) {
                {
                    VOR_SCOPE("frame_body");
                    middle();
                    middle();
                }
                vor_frame_mark();
            }
            i++;
        } else if (strcmp(step, "thread") == 0) {
            pthread_t t;
            if (pthread_create(&t, NULL, worker, (void *)(intptr_t)n) != 0) return 2;
            pthread_join(t, NULL);
            i++;
        } else if (strcmp(step, "functions") == 0) {
            printf("static %p\n", nvtx_static_helper_address());
            for (long k = 0; k < n; k++) nvtx_instrumented_leaf();
            i++;
        } else if (strcmp(step, "deep") == 0) {
            deep(n);
            i++;
        } else if (strcmp(step, "unbalanced") == 0) {
            vor_scope_end();
        } else if (strcmp(step, "across_disable") == 0) {
            static vor_site across = VOR_SITE_INIT("across");
            int began = vor_scope_begin(&across);
            vor_disable();
            if (began) vor_scope_end();
            vor_enable();
        } else if (strcmp(step, "before_enable") == 0) {
            VOR_SCOPE("before");
        } else if (strcmp(step, "shutdown") == 0) {
            vor_shutdown();
        } else {
            fprintf(stderr, "nvtx_workload: unknown step %s\n", step);
            return 2;
        }
    }
    return 0;
}
