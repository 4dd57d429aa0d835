/* string_pool.h: strings kept for the life of the process, each distinct one stored once
 * (the source files of function sites: many functions share one). Bounded: at most
 * VOR_STRING_POOL_BYTES of text in VOR_STRING_POOL_ENTRIES strings. Not locked: used by
 * the frame thread only.
 */
#ifndef VOR_STRING_POOL_H
#define VOR_STRING_POOL_H

#include "platform.h"

#define VOR_STRING_POOL_BYTES (1u << 20)
#define VOR_STRING_POOL_ENTRIES 8192u /* a power of two; the table is kept at most 3/4 full */

/* The pooled copy of `s` (the same pointer for equal strings); NULL when the pool is
 * full or out of memory. */
VOR_HIDDEN const char *vor_string_intern(const char *s);

#endif /* VOR_STRING_POOL_H */
