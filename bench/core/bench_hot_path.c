/* bench_hot_path.c: what one scope costs the code that calls it, in the form users write
 * (issue 13's targets): a function marked noinline holding one VOR_SCOPE, called at
 * nesting depth 3 (two scopes open around the loop), against the floor measured in the
 * same process: the same noinline function doing two raw rdtsc reads and two stores.
 *
 *   floor                 noinline function: 2 x rdtsc + 2 stores
 *   VOR_SCOPE enabled     noinline function holding one VOR_SCOPE (target <= 1.15x the floor)
 *   VOR_SCOPE disabled    the same with collection off, minus an empty noinline call
 *                         (target <= 0.5 ns)
 *   hook pair             the -finstrument-functions hooks a compiler inserts in a noinline
 *                         function (enter + exit), enabled, as a ratio to the floor
 *
 * Runs alternate (floor, scope, floor, scope, ...) and each figure is the median over runs
 * of the per-run ratio, so a slow stretch of this shared machine moves both sides. Frames
 * are marked between timed batches, outside the timing, so the ring never fills. Asserts
 * nothing; `make bench` runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>

#include <vor/vor.h>

#include "../common/bench_util.h"

#define RUNS 21
#define BATCH 20000
#define BATCHES 10

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

static volatile uint64_t sink_store[2];

__attribute__((noinline)) static void floor_call(void) {
    sink_store[0] = __rdtsc();
    sink_store[1] = __rdtsc();
}

__attribute__((noinline)) static void scope_call(void) {
    VOR_SCOPE("hot path");
}

__attribute__((noinline)) static void empty_call(void) {
    __asm__ volatile("" ::: "memory");
}

/* What -finstrument-functions makes of an empty function: the two hooks around its body. */
__attribute__((noinline)) static void hooked_call(void) {
    __cyg_profile_func_enter((void *)hooked_call, __builtin_return_address(0));
    __asm__ volatile("" ::: "memory");
    __cyg_profile_func_exit((void *)hooked_call, __builtin_return_address(0));
}

/* ns per call of `fn`, BATCHES x BATCH calls inside two open scopes (depth 3), a frame
 * marked after each batch outside the timing. */
static double timed(void (*fn)(void)) {
    uint64_t total = 0;
    for (int b = 0; b < BATCHES; b++) {
        VOR_SCOPE("depth 1");
        uint64_t t0;
        {
            VOR_SCOPE("depth 2");
            t0 = now_ns();
            for (int i = 0; i < BATCH; i++) fn();
            total += now_ns() - t0;
        }
        vor_frame_mark();
    }
    return (double)total / (BATCHES * BATCH);
}

int main(void) {
    vor_enable();
    double floor_ns[RUNS], scope_x[RUNS], hook_x[RUNS], off_ns[RUNS], scope_ns[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double fl = timed(floor_call);
        double sc = timed(scope_call);
        double hk = timed(hooked_call);
        vor_disable();
        double off = timed(scope_call) - timed(empty_call);
        vor_enable();
        floor_ns[r] = fl;
        scope_ns[r] = sc;
        scope_x[r] = sc / fl;
        hook_x[r] = hk / fl;
        off_ns[r] = off;
    }
    printf("vor hot path, noinline caller at depth 3 (median of %d runs, %d calls each)\n", RUNS, BATCH * BATCHES);
    printf("  %-46s %7.2f ns\n", "floor: noinline, 2 x rdtsc + 2 stores", median(floor_ns, RUNS));
    printf("  %-46s %7.2f ns   %.3fx the floor (target <= 1.15x)\n", "VOR_SCOPE enabled, noinline caller",
           median(scope_ns, RUNS), median(scope_x, RUNS));
    printf("  %-46s %7.2f ns   (target <= 0.5 ns)\n", "VOR_SCOPE disabled, over an empty call", median(off_ns, RUNS));
    printf("  %-46s %7.3fx the floor\n", "-finstrument-functions hook pair, enabled", median(hook_x, RUNS));
    vor_shutdown();
    return 0;
}
