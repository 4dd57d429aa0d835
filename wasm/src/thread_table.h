/* thread_table.h: which threads an output already declared, under which name. Used by
 * the DevTools sink (browser_sink.c), the panel bridge (panel_bridge.c) and the capture
 * decoder (capture_decoder.c), which each declare a thread once, and again only when it
 * is renamed.
 *
 * An open-addressed table keyed by thread id (ids only grow and are never reused, so a
 * slot picked by id modulo a size would let two live threads evict each other every
 * frame). It is bounded: THREAD_TABLE_SLOTS entries, cleared when half full (the
 * threads of the next frames are then declared again, which every receiver accepts).
 * A name is kept as a 64-bit FNV-1a hash: a rename that kept the hash would go unseen.
 */
#ifndef VOR_WASM_THREAD_TABLE_H
#define VOR_WASM_THREAD_TABLE_H

#include <stdint.h>
#include <string.h>

#include "fnv1a.h"

/* A power of two, 2 x VOR_MAX_MAX_THREADS: a frame's threads always fit after a clear. */
#define THREAD_TABLE_SLOTS 2048u

typedef struct thread_slot {
    uint32_t key; /* thread id + 1; 0 = empty */
    uint32_t reserved;
    uint64_t name_hash;
} thread_slot;

typedef struct thread_table {
    uint32_t known; /* slots in use */
    thread_slot slots[THREAD_TABLE_SLOTS];
} thread_table;

static inline void thread_table_clear(thread_table *t) {
    memset(t, 0, sizeof *t);
}

/* Before a frame of `incoming` threads: clears the table if they might not fit under
 * half of it. Returns 1 if it was cleared (everything must be declared again). */
static inline int thread_table_make_room(thread_table *t, uint32_t incoming) {
    if (t->known + incoming <= THREAD_TABLE_SLOTS / 2) return 0;
    thread_table_clear(t);
    return 1;
}

static inline uint64_t thread_table_hash(const char *name) {
    return vor_fnv1a64_string(name);
}

/* 1 if thread `id` was declared under `name`; else records it as declared now and
 * returns 0 (the caller declares it). */
static inline int thread_table_seen(thread_table *t, uint32_t id, const char *name) {
    if (t->known >= THREAD_TABLE_SLOTS - 1) thread_table_clear(t); /* make_room not called: stay bounded */
    uint64_t h = thread_table_hash(name);
    uint32_t key = id + 1, mask = THREAD_TABLE_SLOTS - 1;
    thread_slot *slot;
    for (uint32_t probe = 0;; probe++) {
        slot = &t->slots[(key * 2654435761u + probe) & mask];
        if (slot->key == key || slot->key == 0) break;
    }
    if (slot->key == key && slot->name_hash == h) return 1;
    if (slot->key == 0) {
        slot->key = key;
        t->known++;
    }
    slot->name_hash = h;
    return 0;
}

#endif
