/* pending_contracts.h: TEMPORARY, for the branch that brings capture format 1.1 before a
 * function it records is on main: vor_function_span_ns_locked (the calibrated cost of one
 * -finstrument-functions call; runtime), declared in vor_internal.h. Until it is merged
 * the encoder refers to it weakly: missing, it reads as 0, "unknown", which is what the
 * format says a reader gets from a writer that does not know. Nothing is implemented here.
 *
 * Remove this file when that function is on main: replace vor_pending_function_span_ns()
 * in record_encoder.c by vor_function_span_ns_locked().
 */
#ifndef VOR_PENDING_CONTRACTS_H
#define VOR_PENDING_CONTRACTS_H

#include "vor_internal.h"

#pragma weak vor_function_span_ns_locked

static inline double vor_pending_function_span_ns(void) {
    return vor_function_span_ns_locked ? vor_function_span_ns_locked() : 0.0;
}

#endif /* VOR_PENDING_CONTRACTS_H */
