/* instrumented_code.c: compiled with -finstrument-functions (see CMakeLists.txt), so
 * every function here gets a scope without any macro, except the VOR_SKIP one. */
#include <vor/vor.h>

int instrumented_leaf(int x);
int instrumented_parent(int x);
int instrumented_skipped(int x);
int instrumented_calls_static(int x);

__attribute__((noinline)) int instrumented_leaf(int x) {
    return x * 3 + 1;
}

VOR_SKIP __attribute__((noinline)) int instrumented_skipped(int x) {
    return x - 1;
}

__attribute__((noinline)) int instrumented_parent(int x) {
    return instrumented_leaf(x) + instrumented_leaf(x + 1) + instrumented_skipped(x);
}

__attribute__((noinline)) static int hidden_helper(int x) {
    return x ^ 0x55;
}

__attribute__((noinline)) int instrumented_calls_static(int x) {
    return hidden_helper(x) + 1;
}
