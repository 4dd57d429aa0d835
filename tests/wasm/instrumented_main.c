/* instrumented_main.c: drives instrumented_code.c (not instrumented itself) for three
 * frames, so that VOR_TRACE holds one scope per instrumented call. */
#include <stdio.h>

#include <vor/vor.h>

#include "instrumented_code.h"

int main(void) {
    vor_enable();
    int total = 0;
    for (int frame = 0; frame < 3; frame++) {
        total += run_step();
        vor_frame_mark();
    }
    vor_shutdown();
    printf("%d\n", total);
    return 0;
}
