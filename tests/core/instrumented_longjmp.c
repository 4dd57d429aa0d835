/* instrumented_longjmp.c: compiled with -finstrument-functions (see CMakeLists.txt): a
 * recursion that ends in a longjmp to the function that called setjmp, so the exit hooks
 * of every level in between never run (test_longjmp.c checks vor closes them). */
#include <setjmp.h>

int instrumented_jump_over(int depth);
int instrumented_catcher(int depth);

static jmp_buf catcher_jump;

__attribute__((noinline)) int instrumented_jump_over(int depth) {
    if (depth < 0) return 0;
    if (depth == 0) longjmp(catcher_jump, 1);
    return instrumented_jump_over(depth - 1) + 1;
}

/* 1 when the jump came back, as it always does. */
__attribute__((noinline)) int instrumented_catcher(int depth) {
    if (setjmp(catcher_jump) == 0) return instrumented_jump_over(depth);
    return 1;
}

/* Void functions: compilers call their exit hook as a tail call. */
int instrumented_void_catcher(int depth);

__attribute__((noinline)) static void instrumented_void_leaf(int *count) {
    *count += 1;
}

__attribute__((noinline)) static void instrumented_void_thrower(int depth) {
    if (depth < 0) return;
    if (depth == 0) longjmp(catcher_jump, 1);
    instrumented_void_thrower(depth - 1);
}

/* 2: both leaves ran after the jump. */
__attribute__((noinline)) int instrumented_void_catcher(int depth) {
    int count = 0;
    if (setjmp(catcher_jump) == 0) instrumented_void_thrower(depth);
    instrumented_void_leaf(&count);
    instrumented_void_leaf(&count);
    return count;
}

/* Inlined functions keep their hooks (called from the caller's frame). */
int instrumented_calls_inlined(int x);

static inline __attribute__((always_inline)) int inlined_helper(int x) {
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

__attribute__((noinline)) int instrumented_calls_inlined(int x) {
    return inlined_helper(x) * inlined_helper(x + 1);
}
