/* bench_hot_path.c: what one scope costs the code that calls it, in the form users write
 * (issue 13's targets): a function marked noinline holding one VOR_SCOPE, called at
 * nesting depth 3 (two scopes open around the loop), against the floor measured in the
 * same process: the same noinline function doing two raw clock reads and two stores
 * (rdtsc natively; emscripten_get_now() in wasm, the clock vor reads there).
 *
 *   floor                 noinline function: 2 clock reads + 2 stores
 *   VOR_SCOPE enabled     noinline function holding one VOR_SCOPE (target <= 1.15x natively,
 *                         <= 1.05x in wasm)
 *   VOR_SCOPE disabled    the same with collection off, less an empty noinline call
 *                         (target <= 0.5 ns)
 *   hook pair             the -finstrument-functions hooks a compiler inserts in a void
 *                         noinline function (enter + tail-called exit), enabled, against
 *                         the floor
 *
 * Built natively (build/native/bin/bench_hot_path) and for node (build/wasm/bin/
 * bench_hot_path.cjs, run by hot_path.bench.mjs). This machine is shared and noisy: the
 * configurations take turns in short batches (each about 0.2 ms) and a figure is the median
 * over the rounds of the ratio of two adjacent batches, so a slow stretch moves both sides.
 * A frame is marked after each round, outside the timing, so the ring never fills. Asserts
 * nothing; `make bench` runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vor/vor.h>

#include "../common/bench_util.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#define FLOOR_CLOCK() ((uint64_t)(emscripten_get_now() * 1e6))
#define FLOOR_NAME "2 x emscripten_get_now() + 2 stores"
#define ENABLED_TARGET 1.05
#define ROUNDS 301
#define BATCH 1000
#else
#include <x86intrin.h>
#define FLOOR_CLOCK() __rdtsc()
#define FLOOR_NAME "2 x rdtsc + 2 stores"
#define ENABLED_TARGET 1.15
#define ROUNDS 501
#define BATCH 10000
#endif

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

static volatile uint64_t sink_store[2];

__attribute__((noinline)) static void floor_call(void) {
    sink_store[0] = FLOOR_CLOCK();
    sink_store[1] = FLOOR_CLOCK();
}

__attribute__((noinline)) static void scope_call(void) {
    VOR_SCOPE("hot path");
}

__attribute__((noinline)) static void empty_call(void) {
    __asm__ volatile("" ::: "memory");
}

/* What -finstrument-functions makes of an empty void function: the two hooks around it. */
__attribute__((noinline)) static void hooked_call(void) {
    __cyg_profile_func_enter((void *)hooked_call, __builtin_return_address(0));
    __asm__ volatile("" ::: "memory");
    __cyg_profile_func_exit((void *)hooked_call, __builtin_return_address(0));
}

/* ns per call of `fn` over `n` calls. */
static double batch_of(void (*fn)(void), int n) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) fn();
    return (double)(now_ns() - t0) / n;
}

static double batch(void (*fn)(void)) {
    return batch_of(fn, BATCH);
}

int main(void) {
    vor_enable();
    static double floor_ns[ROUNDS], scope_ns[ROUNDS], scope_x[ROUNDS], hook_x[ROUNDS], off_ns[ROUNDS];
    for (int r = -10; r < ROUNDS; r++) { /* 10 rounds of warm-up */
        double fl, sc, hk, off, empty;
        {
            VOR_SCOPE("depth 1");
            VOR_SCOPE("depth 2");
            fl = batch(floor_call);
            sc = batch(scope_call);
            hk = batch(hooked_call);
        }
        vor_frame_mark();
        vor_disable();
        off = batch_of(scope_call, 20 * BATCH); /* about 1 ns each: longer batches */
        empty = batch_of(empty_call, 20 * BATCH);
        vor_enable();
        if (r < 0) continue;
        floor_ns[r] = fl;
        scope_ns[r] = sc;
        scope_x[r] = sc / fl;
        hook_x[r] = hk / fl;
        off_ns[r] = off - empty;
    }
    printf("vor hot path, noinline caller at depth 3 (median of %d rounds of %d calls each)\n", ROUNDS, BATCH);
    printf("  %-46s %7.2f ns\n", "floor: noinline, " FLOOR_NAME, median(floor_ns, ROUNDS));
    printf("  %-46s %7.2f ns   %.3fx the floor (target <= %.2fx)\n", "VOR_SCOPE enabled, noinline caller",
           median(scope_ns, ROUNDS), median(scope_x, ROUNDS), ENABLED_TARGET);
    printf("  %-46s %7.2f ns   (target <= 0.5 ns)\n", "VOR_SCOPE disabled, less an empty call",
           median(off_ns, ROUNDS));
    printf("  %-46s %7.3fx the floor\n", "-finstrument-functions hook pair, enabled", median(hook_x, ROUNDS));
    vor_shutdown();
    return 0;
}
