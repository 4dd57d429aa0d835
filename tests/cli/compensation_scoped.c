/* compensation_scoped.c: scoped_parent(), a VOR_SCOPE around the body of the compensation
 * test calling COMPENSATION_CALLS empty VOR_SCOPEs (not instrumented: only the scopes count). */
#include "compensation_body.h"
#include "vor/vor.h"

__attribute__((noinline)) static void empty_scope(void) {
    VOR_SCOPE("empty scope");
    __asm__ volatile("");
}

__attribute__((noinline)) uint64_t scoped_parent(uint64_t seed) {
    VOR_SCOPE("scoped parent");
    COMPENSATION_BODY(empty_scope);
}
