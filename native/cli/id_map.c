/* id_map.c: a map from 32-bit ids (site ids, thread ids) to 32-bit values, bounded.
 *
 * Capture ids are sparse: a thread id may be 0xFFFFFFFF and an undeclared site id anything
 * below 2^32 (docs/FORMAT.md), so a table indexed by id would be sized by the largest id a
 * hostile file names. This one is sized by the number of distinct ids: open addressing
 * with linear probing, doubled at 50% load, 8 bytes per slot. At most `max` entries: past that, id_map_put refuses and
 * the caller counts what it left out, so memory is bounded by max, never by the input.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* A slot is empty when its value is ID_MAP_EMPTY (callers never store that value). */
typedef struct id_map_slot {
    uint32_t key;
    uint32_t value;
} id_map_slot;

static uint32_t slot_of(uint32_t id, uint32_t mask) {
    return (uint32_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

void id_map_init(id_map *m, uint32_t max) {
    memset(m, 0, sizeof *m);
    m->max = max ? max : 1;
}

void id_map_free(id_map *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}

uint32_t *id_map_find(const id_map *m, uint32_t id) {
    if (!m->slots) return NULL;
    uint32_t mask = m->n_slots - 1;
    for (uint32_t i = slot_of(id, mask);; i = (i + 1) & mask) {
        id_map_slot *s = &m->slots[i];
        if (s->value == ID_MAP_EMPTY) return NULL;
        if (s->key == id) return &s->value;
    }
}

static int grow(id_map *m) {
    uint32_t n = m->n_slots ? m->n_slots * 2 : 64;
    id_map_slot *slots = malloc((size_t)n * sizeof *slots);
    if (!slots) return -1;
    for (uint32_t k = 0; k < n; k++) slots[k].value = ID_MAP_EMPTY;
    for (uint32_t k = 0; k < m->n_slots; k++) {
        if (m->slots[k].value == ID_MAP_EMPTY) continue;
        uint32_t i = slot_of(m->slots[k].key, n - 1);
        while (slots[i].value != ID_MAP_EMPTY) i = (i + 1) & (n - 1);
        slots[i] = m->slots[k];
    }
    free(m->slots);
    m->slots = slots;
    m->n_slots = n;
    return 0;
}

uint32_t *id_map_put(id_map *m, uint32_t id, uint32_t value) {
    if (value == ID_MAP_EMPTY) return NULL;
    uint32_t *found = id_map_find(m, id);
    if (found) return found;
    if (m->count >= m->max) return NULL;
    if ((m->count + 1) * 2 > m->n_slots && grow(m) != 0) return NULL;
    uint32_t mask = m->n_slots - 1;
    uint32_t i = slot_of(id, mask);
    while (m->slots[i].value != ID_MAP_EMPTY) i = (i + 1) & mask;
    m->slots[i].key = id;
    m->slots[i].value = value;
    m->count++;
    return &m->slots[i].value;
}
