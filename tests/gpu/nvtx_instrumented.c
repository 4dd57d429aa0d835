/* nvtx_instrumented.c: functions compiled with -finstrument-functions, so the NVTX tests see
 * the ranges of function scopes: nvtx_instrumented_leaf is in the dynamic symbol table (the
 * workload links with -rdynamic) and its range has its name; nvtx_static_helper is static, so
 * dladdr cannot name it and its range has its address (nvtx_ranges.c). */
void nvtx_instrumented_leaf(void);
__attribute__((no_instrument_function)) void *nvtx_static_helper_address(void);

static volatile int sink;

__attribute__((noinline)) static void nvtx_static_helper(void) {
    sink++;
}

void nvtx_instrumented_leaf(void) {
    nvtx_static_helper();
}

void *nvtx_static_helper_address(void) {
    return (void *)nvtx_static_helper;
}
