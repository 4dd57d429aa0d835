/* symbolize_workload.c: a program whose functions only -finstrument-functions names, for
 * `vor symbolize` (test_cli_symbolize.py). The build runs a stripped copy of it, which
 * records its functions as module+offset; the unstripped file (same build id) names them.
 * SYMBOLIZE_VARIANT builds the same program with other code: another build id.
 *
 *     symbolize_workload FRAMES
 */
#include <stdlib.h>

#include "vor/vor.h"

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf_work(int n) {
    for (int i = 0; i < n; i++) sink += (unsigned long)i;
}

__attribute__((noinline)) void outer_work(int n) {
    leaf_work(n);
#ifdef SYMBOLIZE_VARIANT
    leaf_work(n / 3); /* other code: another build id */
#endif
    leaf_work(n / 2);
}

VOR_SKIP int main(int argc, char **argv) {
    int frames = argc > 1 ? atoi(argv[1]) : 10;
    vor_enable();
    for (int f = 0; f < frames; f++) {
        outer_work(1000);
        vor_frame_mark();
    }
    vor_shutdown();
    return 0;
}
