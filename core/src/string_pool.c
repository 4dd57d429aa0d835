/* string_pool.c: see string_pool.h. Text goes into 64 KiB blocks that are never freed
 * (sites point into them for the life of the process); an open-addressing table of
 * pointers finds an equal string already stored. Both are allocated on first use.
 */
#include "string_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"

#define BLOCK_BYTES (64u << 10)

static const char **table; /* VOR_STRING_POOL_ENTRIES slots, NULL = free */
static uint32_t entries;
static char *block; /* the block being filled */
static size_t block_used;
static size_t total_bytes; /* of all blocks */

static uint32_t hash_string(const char *s, size_t n) {
    return vor_fnv1a32(s, n);
}

const char *vor_string_intern(const char *s) {
    if (s == NULL) return NULL;
    size_t n = strlen(s);
    if (table == NULL && (table = calloc(VOR_STRING_POOL_ENTRIES, sizeof *table)) == NULL) return NULL;
    uint32_t mask = VOR_STRING_POOL_ENTRIES - 1, i = hash_string(s, n) & mask;
    for (; table[i] != NULL; i = (i + 1) & mask)
        if (strcmp(table[i], s) == 0) return table[i];
    if (entries >= VOR_STRING_POOL_ENTRIES / 4 * 3 || n + 1 > BLOCK_BYTES) return NULL;
    if (block == NULL || block_used + n + 1 > BLOCK_BYTES) {
        if (total_bytes + BLOCK_BYTES > VOR_STRING_POOL_BYTES || (block = malloc(BLOCK_BYTES)) == NULL) return NULL;
        total_bytes += BLOCK_BYTES;
        block_used = 0;
    }
    char *copy = block + block_used;
    memcpy(copy, s, n + 1);
    block_used += n + 1;
    table[i] = copy;
    entries++;
    return copy;
}
