/* fnv1a.h: the one FNV-1a hash of vor's C code (32 and 64 bits), for its hash tables and
 * name fingerprints (columns, the string pool, the trace writer's thread names, the CLI's
 * name table, the browser sink's thread table).
 *
 * FNV-1a because the keys are short names and the tables probe linearly: it is small,
 * byte-at-a-time, and stable across runs and machines. Inline: the callers hash on their
 * own paths and the loop is a few instructions.
 */
#ifndef VOR_FNV1A_H
#define VOR_FNV1A_H

#include <stddef.h>
#include <stdint.h>

#define VOR_FNV1A32_INIT 2166136261u
#define VOR_FNV1A64_INIT 14695981039346656037u

static inline uint32_t vor_fnv1a32(const void *bytes, size_t n) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint32_t h = VOR_FNV1A32_INIT;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Of a NUL-terminated string. */
static inline uint64_t vor_fnv1a64_string(const char *s) {
    uint64_t h = VOR_FNV1A64_INIT;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

#endif /* VOR_FNV1A_H */
