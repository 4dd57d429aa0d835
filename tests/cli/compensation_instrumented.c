/* compensation_instrumented.c: compiled with -finstrument-functions (tests/cli/CMakeLists.txt):
 * instrumented_parent() calls COMPENSATION_CALLS empty instrumented functions. (The
 * VOR_SCOPE variant lives in compensation_scoped.c: vor.h's inline helpers are not marked
 * no_instrument_function, so a VOR_SCOPE in an instrumented file nests badly.) */
#include "compensation_body.h"

__attribute__((noinline)) void empty_instrumented(void) { __asm__ volatile(""); }

__attribute__((noinline)) uint64_t instrumented_parent(uint64_t seed) { COMPENSATION_BODY(empty_instrumented); }
