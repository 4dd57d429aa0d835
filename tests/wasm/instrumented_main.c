/* instrumented_main.c: drives instrumented_code.c (not instrumented itself) for three
 * frames, so that VOR_TRACE holds one scope per instrumented call, then prints the name of
 * every scope site ("site NAME"), which the browser test reads from the console. */
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
    for (uint32_t id = 1; id <= vor_site_count(); id++) {
        const vor_site *site = vor_site_get(id);
        if (site) printf("site %s\n", site->name);
    }
    vor_shutdown();
    printf("%d\n", total);
    return 0;
}
