/* pending_contracts.h: TEMPORARY, for the branch that brings capture format 1.1 before the
 * functions it records are on main. vor_internal.h declares vor_clock_get_info (runtime),
 * vor_module_get and vor_site_module_address (names) and vor_function_span_ns_locked
 * (runtime); until their implementations are merged, the encoder refers to them weakly:
 * a missing one reads as "unknown" (0, "", -1), which is what the format says a reader
 * gets from a writer that does not know. Nothing is implemented here.
 *
 * Remove this file when those functions are on main: replace each vor_pending_X(...)
 * call in record_encoder.c by the function itself.
 */
#ifndef VOR_PENDING_CONTRACTS_H
#define VOR_PENDING_CONTRACTS_H

#include "vor_internal.h"

#pragma weak vor_clock_get_info
#pragma weak vor_module_get
#pragma weak vor_site_module_address
#pragma weak vor_function_span_ns_locked

static inline void vor_pending_clock_info(vor_clock_info *out) {
    if (vor_clock_get_info) vor_clock_get_info(out);
}

static inline double vor_pending_function_span_ns(void) {
    return vor_function_span_ns_locked ? vor_function_span_ns_locked() : 0.0;
}

static inline int vor_pending_module_get(uint32_t id, vor_module_info *out) {
    return vor_module_get ? vor_module_get(id, out) : 0;
}

static inline int vor_pending_site_module_address(const vor_site *site, uint32_t *module_id, uint64_t *address) {
    return vor_site_module_address ? vor_site_module_address(site, module_id, address) : 0;
}

#endif /* VOR_PENDING_CONTRACTS_H */
