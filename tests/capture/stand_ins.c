/* stand_ins.c: TEMPORARY stand-in, in this test program only, for a function that
 * vor_internal.h declares and another branch implements: vor_function_span_ns_locked
 * (runtime). Until it lands, the library refers to it weakly (core/src/pending_contracts.h)
 * and this weak definition gives the capture encoder a known value to write, so the test
 * can check that it reaches the reader. Once the real one is linked it takes over (a
 * strong definition wins) and the test, which compares the reader with this same
 * function, keeps passing. Delete this file with pending_contracts.h. */
#include "vor_internal.h"

__attribute__((weak)) double vor_function_span_ns_locked(void) {
    return 42.5;
}
