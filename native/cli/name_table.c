/* name_table.c: interned strings (scope names, thread names) mapped to dense ids.
 *
 * Figures are kept by name, not by site: two sites called "update" are one row of a
 * summary. Interning once per site (stacks.c caches site -> name id) makes the per-scope
 * work an integer compare. Strings live in an arena of 64 KiB chunks (one
 * allocation per chunk, not per name); the index is an open-addressing table of ids
 * (FNV-1a hashes, linear probing, doubled at 50% load). The number of names is bounded
 * by the reader's limits on sites and threads, plus NAME_TABLE_SPARE for our own.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"

#define ARENA_CHUNK_BYTES (64u * 1024u)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, size;
    char data[];
} arena_chunk;

struct name_table {
    const char **names; /* id -> string */
    uint32_t *hashes;   /* id -> hash */
    uint32_t count, cap;
    uint32_t *slots;  /* id + 1, 0 = empty */
    uint32_t n_slots; /* a power of two */
    arena_chunk *chunks;
};

static uint32_t hash_string(const char *s, size_t n) {
    return vor_fnv1a32(s, n);
}

name_table *name_table_create(void) {
    name_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n_slots = 256;
    t->slots = calloc(t->n_slots, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    return t;
}

void name_table_destroy(name_table *t) {
    if (!t) return;
    for (arena_chunk *c = t->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(t->names);
    free(t->hashes);
    free(t->slots);
    free(t);
}

static const char *arena_copy(name_table *t, const char *s, size_t n) {
    arena_chunk *c = t->chunks;
    if (!c || c->size - c->used < n + 1) {
        size_t size = n + 1 > ARENA_CHUNK_BYTES ? n + 1 : ARENA_CHUNK_BYTES;
        c = malloc(sizeof *c + size);
        if (!c) return NULL;
        c->size = size;
        c->used = 0;
        c->next = t->chunks;
        t->chunks = c;
    }
    char *p = c->data + c->used;
    memcpy(p, s, n);
    p[n] = '\0';
    c->used += n + 1;
    return p;
}

static int grow_slots(name_table *t) {
    uint32_t n = t->n_slots * 2;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots) return -1;
    for (uint32_t id = 0; id < t->count; id++) {
        uint32_t i = t->hashes[id] & (n - 1);
        while (slots[i]) i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n;
    return 0;
}

uint32_t name_table_find(const name_table *t, const char *name) {
    size_t n = strlen(name);
    uint32_t h = hash_string(name, n);
    for (uint32_t i = h & (t->n_slots - 1); t->slots[i]; i = (i + 1) & (t->n_slots - 1)) {
        uint32_t id = t->slots[i] - 1;
        if (t->hashes[id] == h && strcmp(t->names[id], name) == 0) return id;
    }
    return NAME_NONE;
}

uint32_t name_table_intern(name_table *t, const char *name) {
    if (!name) name = "";
    size_t n = strlen(name);
    uint32_t h = hash_string(name, n);
    uint32_t i = h & (t->n_slots - 1);
    while (t->slots[i]) {
        uint32_t id = t->slots[i] - 1;
        if (t->hashes[id] == h && strcmp(t->names[id], name) == 0) return id;
        i = (i + 1) & (t->n_slots - 1);
    }
    if (t->count >= NAME_TABLE_MAX) return NAME_NONE;
    /* Keep the load under 50% (and always one empty slot, which ends every probe). */
    if ((t->count + 1) * 2 > t->n_slots) {
        if (grow_slots(t) != 0 && t->count + 2 > t->n_slots) return NAME_NONE;
        i = h & (t->n_slots - 1);
        while (t->slots[i]) i = (i + 1) & (t->n_slots - 1);
    }
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        const char **names = realloc(t->names, cap * sizeof *names);
        if (!names) return NAME_NONE;
        t->names = names;
        uint32_t *hashes = realloc(t->hashes, cap * sizeof *hashes);
        if (!hashes) return NAME_NONE;
        t->hashes = hashes;
        t->cap = cap;
    }
    const char *copy = arena_copy(t, name, n);
    if (!copy) return NAME_NONE;
    uint32_t id = t->count++;
    t->names[id] = copy;
    t->hashes[id] = h;
    t->slots[i] = id + 1;
    return id;
}

const char *name_table_get(const name_table *t, uint32_t id) {
    return id < t->count ? t->names[id] : "";
}

uint32_t name_table_count(const name_table *t) {
    return t->count;
}
