/* stand_ins.c: TEMPORARY stand-ins, in this test program only, for functions that
 * vor_internal.h declares and other branches implement (vor_clock_get_info and
 * vor_function_span_ns_locked: runtime; vor_module_get and vor_site_module_address:
 * names). Until those land, the library refers to them weakly (core/src/pending_contracts.h)
 * and these weak definitions give the capture encoder known values to write, so the test
 * can check that they reach the reader. Once the real ones are linked they take over (a
 * strong definition wins) and the test, which compares the reader with these same
 * functions, keeps passing. Delete this file with pending_contracts.h. */
#include "vor_internal.h"

const vor_site *stand_in_function_site; /* the one site given a module */

__attribute__((weak)) void vor_clock_get_info(vor_clock_info *out) {
    out->resolution_ns = 7;
    out->source = "stand-in clock";
    out->cross_origin_isolated = 1;
}

__attribute__((weak)) double vor_function_span_ns_locked(void) {
    return 42.5;
}

__attribute__((weak)) int vor_module_get(uint32_t id, vor_module_info *out) {
    if (id != 3) return 0;
    *out = (vor_module_info){3, "/opt/lib/libstand-in.so", "0123456789abcdef", 0x7f0000001000ull};
    return 1;
}

__attribute__((weak)) int vor_site_module_address(const vor_site *site, uint32_t *module_id, uint64_t *address) {
    if (site == NULL || site != stand_in_function_site) return 0;
    *module_id = 3;
    *address = 0x1234;
    return 1;
}
