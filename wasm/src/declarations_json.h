/* declarations_json.h: builds the declarations the panel consumes, as JSON text:
 *   {"columns":[{"id":0,"name":"frame_ms","unit":"ms","system":true}],
 *    "sites":[{"id":1,"name":"update","function":"update","file":"main.c","line":12}],
 *    "threads":[{"id":0,"name":"main"}],
 *    "clock":{"resolution_ns":100000,"source":"performance.now","cross_origin_isolated":false},
 *    "costs":{"scope_ns":21.5,"function_ns":48.0}}
 * (a function site, one with a module, carries "module":N; "costs" is the capture header's
 * calibrated cost of one scope and one function hook, which the panel's scope table
 * compensates for as the CLI does)
 * (any member may be absent; cross_origin_isolated is null where it does not apply). Used by the panel bridge (live
 * names) and the capture decoder (names read from a capture), so both hand the panel the same shape. Strings are cut as
 * a capture cuts them (at a UTF-8 character boundary, core/src/utf8.h). */
#ifndef VOR_DECLARATIONS_JSON_H
#define VOR_DECLARATIONS_JSON_H

#include <stdint.h>

#include "bytes.h"

typedef struct vor_declarations_json {
    vor_out columns, sites, threads, clock, costs, text;
} vor_declarations_json;

/* Starts a new set (the previous text is discarded). */
void vor_declarations_begin(vor_declarations_json *d);
void vor_declarations_column(vor_declarations_json *d, uint32_t id, const char *name, const char *unit, int is_system);
void vor_declarations_site(vor_declarations_json *d, uint32_t id, const char *name, const char *function,
                           const char *file, uint32_t line, uint32_t module_id);
void vor_declarations_thread(vor_declarations_json *d, uint32_t id, const char *name);
/* The clock scopes were timed with: its step (0: unknown, nothing is declared), its source
 * ("performance.now", "tsc", ...; "" unknown) and whether the page was cross-origin
 * isolated (1, 0, -1: not a page, or unknown). */
void vor_declarations_clock(vor_declarations_json *d, uint64_t resolution_ns, const char *source, int isolated);
/* The calibrated costs (ns) of one scope and one function hook; nothing is declared when
 * neither is a positive finite number (unknown: the panel shows raw times). */
void vor_declarations_costs(vor_declarations_json *d, double scope_ns, double function_ns);
/* The JSON text (NUL-terminated), or NULL if nothing was declared or memory ran out. */
const char *vor_declarations_end(vor_declarations_json *d);
void vor_declarations_free(vor_declarations_json *d);

#endif
