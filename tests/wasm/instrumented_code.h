/* instrumented_code.h: the instrumented functions of instrumented_code.c. */
#ifndef VOR_TEST_INSTRUMENTED_CODE_H
#define VOR_TEST_INSTRUMENTED_CODE_H
int square_sum(int n);
int fib(int n);
int skipped_helper(int x);
int run_step(void);
#endif
