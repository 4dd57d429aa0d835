/* reader_tables.c: what a capture declares (columns, sites, threads, modules) and the
 * reader's queries over it.
 *
 * Columns, sites and modules are tables indexed by id, each growing only up to its limit
 * in reader.h / docs/FORMAT.md §5 and only for ids that are *declared*: an id merely used
 * by a scope or a value never sizes a table (a site id near 2^32 costs nothing; readers
 * name undeclared ones "site N"). Threads are an open-addressing table by id, since any
 * 32-bit id is valid, bounded by the number of threads declared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_format.h"
#include "reader_internal.h"

char *vor_reader_strdup(const uint8_t *s, size_t n) {
    char *c = malloc(n + 1);
    if (c) {
        if (n) memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Grows an array to hold index `need`, zeroing new entries; 0 past `limit` entries. */
static int grow(void **array, uint32_t *capacity, uint32_t need, size_t elem, uint32_t limit) {
    if (need < *capacity) return 1;
    if (need >= limit) return 0;
    uint64_t cap = *capacity ? *capacity : 16;
    while (cap <= need) cap *= 2;
    if (cap > limit) cap = limit;
    void *p = realloc(*array, (size_t)cap * elem);
    if (p == NULL) return 0;
    memset((char *)p + (size_t)*capacity * elem, 0, (size_t)(cap - *capacity) * elem);
    *array = p;
    *capacity = (uint32_t)cap;
    return 1;
}

int vor_reader_ensure_column(vor_reader *r, uint32_t id) {
    uint32_t cap = r->column_capacity, cap2 = r->column_capacity;
    if (!grow((void **)&r->columns, &cap, id, sizeof *r->columns, VOR_READER_MAX_COLUMNS)) return 0;
    if (!grow((void **)&r->user, &cap2, id, sizeof *r->user, VOR_READER_MAX_COLUMNS)) return 0;
    r->column_capacity = cap;
    return 1;
}

int vor_reader_name_undeclared_column(vor_reader *r, uint32_t id) {
    if (!vor_reader_ensure_column(r, id)) return 0;
    vor_reader_column *c = &r->columns[id];
    if (c->name != NULL) return 1;
    char name[32];
    int n = snprintf(name, sizeof name, "column %u", id);
    c->name = vor_reader_strdup((const uint8_t *)name, (size_t)n);
    c->unit = vor_reader_strdup((const uint8_t *)"", 0);
    if (c->name == NULL || c->unit == NULL) return 0;
    c->id = id;
    c->is_system = 0;
    if (id + 1 > r->column_count) r->column_count = id + 1;
    return 1;
}

int vor_reader_ensure_site(vor_reader *r, uint32_t id) {
    return grow((void **)&r->sites, &r->site_capacity, id, sizeof *r->sites, VOR_READER_MAX_SITES + 1);
}

int vor_reader_ensure_module(vor_reader *r, uint32_t id) {
    return grow((void **)&r->modules, &r->module_capacity, id, sizeof *r->modules, VOR_CAPTURE_MAX_MODULE_ID + 1);
}

static uint32_t thread_hash(uint32_t id) {
    return id * 2654435761u;
}

vor_reader_thread *vor_reader_thread_slot(vor_reader *r, uint32_t id, int create) {
    if (r->thread_capacity == 0) {
        if (!create) return NULL;
        r->threads = calloc(64, sizeof *r->threads);
        if (r->threads == NULL) return NULL;
        r->thread_capacity = 64;
    }
    for (;;) {
        uint32_t mask = r->thread_capacity - 1;
        for (uint32_t probe = 0; probe <= mask; probe++) {
            reader_thread_slot *s = &r->threads[(thread_hash(id) + probe) & mask];
            if (s->used && s->thread.id == id) return &s->thread;
            if (!s->used) {
                if (!create) return NULL;
                if (r->thread_count * 2 >= r->thread_capacity) break; /* grow first */
                s->used = 1;
                s->thread.id = id;
                r->thread_count++;
                return &s->thread;
            }
        }
        if (!create || r->thread_capacity >= VOR_READER_MAX_THREADS * 2) return NULL;
        /* Rehash into twice the slots. */
        uint32_t old_cap = r->thread_capacity;
        reader_thread_slot *old = r->threads;
        reader_thread_slot *fresh = calloc(old_cap * 2, sizeof *fresh);
        if (fresh == NULL) return NULL;
        r->threads = fresh;
        r->thread_capacity = old_cap * 2;
        for (uint32_t i = 0; i < old_cap; i++) {
            if (!old[i].used) continue;
            uint32_t m = r->thread_capacity - 1;
            for (uint32_t probe = 0;; probe++) {
                reader_thread_slot *s = &r->threads[(thread_hash(old[i].thread.id) + probe) & m];
                if (!s->used) {
                    *s = old[i];
                    break;
                }
            }
        }
        free(old);
    }
}

void vor_reader_tables_free(vor_reader *r) {
    for (uint32_t i = 0; i < r->column_capacity && r->columns; i++) {
        free((char *)r->columns[i].name);
        free((char *)r->columns[i].unit);
    }
    for (uint32_t i = 0; i < r->site_capacity && r->sites; i++) {
        free((char *)r->sites[i].name);
        free((char *)r->sites[i].function);
        free((char *)r->sites[i].file);
    }
    for (uint32_t i = 0; i < r->module_capacity && r->modules; i++) {
        free((char *)r->modules[i].path);
        free((char *)r->modules[i].build_id);
    }
    for (uint32_t i = 0; i < r->thread_capacity && r->threads; i++)
        if (r->threads[i].used) free((char *)r->threads[i].thread.name);
    free(r->columns);
    free(r->sites);
    free(r->modules);
    free(r->threads);
}

/* ---- Queries (reader.h) ---- */

uint32_t vor_reader_column_count(const vor_reader *r) {
    return r ? r->column_count : 0;
}

const vor_reader_column *vor_reader_get_column(const vor_reader *r, uint32_t id) {
    if (r == NULL || id >= r->column_count || r->columns[id].name == NULL) return NULL;
    return &r->columns[id];
}

uint32_t vor_reader_system_column_count(const vor_reader *r) {
    return r ? r->system_count : 0;
}

uint32_t vor_reader_site_count(const vor_reader *r) {
    return r ? r->site_count : 0;
}

const vor_reader_site *vor_reader_get_site(const vor_reader *r, uint32_t id) {
    if (r == NULL || id == 0 || id > r->site_count || r->sites[id].name == NULL) return NULL;
    return &r->sites[id];
}

const vor_reader_thread *vor_reader_get_thread(const vor_reader *r, uint32_t id) {
    if (r == NULL) return NULL;
    const vor_reader_thread *t = vor_reader_thread_slot((vor_reader *)r, id, 0);
    return t && t->name ? t : NULL;
}

const vor_reader_thread *vor_reader_next_thread(const vor_reader *r, uint32_t *cursor) {
    if (r == NULL || cursor == NULL) return NULL;
    for (; *cursor < r->thread_capacity; (*cursor)++) {
        const reader_thread_slot *s = &r->threads[*cursor];
        if (s->used && s->thread.name) {
            (*cursor)++;
            return &s->thread;
        }
    }
    return NULL;
}

uint32_t vor_reader_module_count(const vor_reader *r) {
    return r ? r->module_count : 0;
}

const vor_reader_module *vor_reader_get_module(const vor_reader *r, uint32_t id) {
    if (r == NULL || id == 0 || id > r->module_count || r->modules[id].path == NULL) return NULL;
    return &r->modules[id];
}
