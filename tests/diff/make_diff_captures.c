/* make_diff_captures.c: writes two captures with exactly known scope durations (a fake
 * clock), for the `vor diff` test: make_diff_captures A.vor B.vor
 *
 *   A: 4 frames; each frame: "step" 1000 ns containing "work" 600 ns; "io" 100 ns in
 *      frames 0 and 1 only.
 *   B: 5 frames; each frame: "step" 2000 ns containing "work" 1500 ns; frame 4 also has
 *      a second "work" of 500 ns (so work totals 2000 there); no "io"; "new" 50 ns in
 *      every frame.
 * check_diff.py computes the expected table from this description by hand. */
#include <stdio.h>
#include <stdlib.h>

#include "vor_testing.h"
#include "vor/vor.h"

static uint64_t now_ns = 1000000;
static uint64_t fake_now(void *u) {
    (void)u;
    return now_ns;
}

static void scope(vor_site *site, uint64_t ns) {
    if (vor_scope_begin(site)) {
        now_ns += ns;
        vor_scope_end();
    }
}

static vor_site step_site = {"step", NULL, __FILE__, __LINE__, 0}; /* file scope: no __func__ */
static vor_site work_site = {"work", NULL, __FILE__, __LINE__, 0}; /* file scope: no __func__ */
static vor_site io_site = {"io", NULL, __FILE__, __LINE__, 0}; /* file scope: no __func__ */
static vor_site new_site = {"new", NULL, __FILE__, __LINE__, 0}; /* file scope: no __func__ */

static void record_a(void) {
    for (int f = 0; f < 4; f++) {
        if (vor_scope_begin(&step_site)) {
            now_ns += 200;
            scope(&work_site, 600);
            now_ns += 200;
            vor_scope_end();
        }
        if (f < 2) scope(&io_site, 100);
        now_ns += 5000;
        vor_frame_mark();
    }
}

static void record_b(void) {
    for (int f = 0; f < 5; f++) {
        if (vor_scope_begin(&step_site)) {
            now_ns += 250;
            scope(&work_site, f == 4 ? 1000 : 1500);
            if (f == 4) scope(&work_site, 500);
            now_ns += 250;
            vor_scope_end();
        }
        scope(&new_site, 50);
        now_ns += 5000;
        vor_frame_mark();
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: make_diff_captures A.vor B.vor\n");
        return 2;
    }
    vor_testing_set_clock(fake_now, NULL);
    setenv("VOR_RECORD_FLAME", "1", 1);
    setenv("VOR_RECORD", argv[1], 1);
    vor_enable();
    record_a();
    vor_shutdown();
    setenv("VOR_RECORD", argv[2], 1);
    vor_enable();
    record_b();
    vor_shutdown();
    return 0;
}
