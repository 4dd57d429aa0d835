/* nvtx_instrumented.c: one function compiled with -finstrument-functions, so the NVTX
 * tests see the ranges of function scopes (named by address: nvtx_ranges.c). */
void nvtx_instrumented_leaf(void);

static volatile int sink;

void nvtx_instrumented_leaf(void) {
    sink++;
}
