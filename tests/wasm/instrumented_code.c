/* instrumented_code.c: functions compiled with -finstrument-functions for the wasm naming
 * test (instrumented_names.test.mjs): an extern function, a recursive one, a static one
 * called in a loop, and one kept out with VOR_SKIP. Per call of run_step: run_step 1,
 * square_sum 1, static_leaf 10, fib 15 (fib(5)), skipped_helper 1 (not recorded). */
#include <vor/vor.h>

#include "instrumented_code.h"

static volatile int sink;

static int static_leaf(int i) {
    sink += i;
    return i * i;
}

int square_sum(int n) {
    int total = 0;
    for (int i = 0; i < n; i++) total += static_leaf(i);
    return total;
}

int fib(int n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

VOR_SKIP int skipped_helper(int x) {
    return x + 1;
}

int run_step(void) {
    return square_sum(10) + fib(5) + skipped_helper(1);
}
