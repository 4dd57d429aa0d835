/* frame_scopes.c: feeds the scopes of reader frames into a scope_tree, for `vor summary`
 * (per-name calls, total and self time) and `vor export --format folded` (stacks).
 *
 * The reader names scopes by site id and threads by thread id; stacks and tables are by
 * name. Each id is looked up and interned once (site -> name id, thread -> name id),
 * so the per-scope cost is an array index. Unknown ids (a capture naming a site it never
 * declared) get a readable stand-in, "site 17" / "thread 3", rather than failing.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int frame_scopes_init(frame_scopes *fs, stack_trie *trie, int thread_roots, int keep_by_name) {
    memset(fs, 0, sizeof *fs);
    fs->names = name_table_create();
    fs->tree = scope_tree_create(trie);
    fs->thread_roots = thread_roots;
    fs->keep_by_name = keep_by_name;
    if (!fs->names || !fs->tree) {
        frame_scopes_free(fs);
        return -1;
    }
    return 0;
}

void frame_scopes_free(frame_scopes *fs) {
    scope_tree_destroy(fs->tree);
    name_table_destroy(fs->names);
    free(fs->site_names);
    free(fs->thread_names);
    free(fs->by_name);
    memset(fs, 0, sizeof *fs);
}

/* Grows a NAME_NONE-filled id -> name id map to hold `id`. */
static int grow_map(uint32_t **map, uint32_t *n, uint32_t id, uint32_t limit) {
    if (id < *n) return 0;
    if (id >= limit) return -1;
    uint32_t cap = *n ? *n : 64;
    while (cap <= id) cap *= 2;
    if (cap > limit) cap = limit;
    uint32_t *m = realloc(*map, (size_t)cap * sizeof *m);
    if (!m) return -1;
    for (uint32_t i = *n; i < cap; i++) m[i] = NAME_NONE;
    *map = m;
    *n = cap;
    return 0;
}

static uint32_t site_name(frame_scopes *fs, const vor_reader *r, uint32_t site_id) {
    if (grow_map(&fs->site_names, &fs->n_site_names, site_id, VOR_READER_MAX_SITES + 1u) != 0) return NAME_NONE;
    uint32_t *slot = &fs->site_names[site_id];
    if (*slot == NAME_NONE) {
        const vor_reader_site *s = vor_reader_get_site(r, site_id);
        char fallback[32];
        snprintf(fallback, sizeof fallback, "site %u", site_id);
        *slot = name_table_intern(fs->names, s && s->name && s->name[0] ? s->name : fallback);
    }
    return *slot;
}

static uint32_t thread_name(frame_scopes *fs, const vor_reader *r, uint32_t thread_id) {
    if (!fs->thread_roots) return NAME_NONE;
    if (grow_map(&fs->thread_names, &fs->n_thread_names, thread_id, VOR_READER_MAX_THREADS) != 0) return NAME_NONE;
    uint32_t *slot = &fs->thread_names[thread_id];
    if (*slot == NAME_NONE) {
        const vor_reader_thread *th = vor_reader_get_thread(r, thread_id);
        char fallback[32];
        snprintf(fallback, sizeof fallback, "thread %u", thread_id);
        *slot = name_table_intern(fs->names, th && th->name && th->name[0] ? th->name : fallback);
    }
    return *slot;
}

static scope_name_stat *name_stat(frame_scopes *fs, uint32_t name) {
    if (name >= fs->n_by_name) {
        uint32_t cap = fs->n_by_name ? fs->n_by_name : 64;
        while (cap <= name) cap *= 2;
        scope_name_stat *b = realloc(fs->by_name, (size_t)cap * sizeof *b);
        if (!b) return NULL;
        memset(b + fs->n_by_name, 0, (size_t)(cap - fs->n_by_name) * sizeof *b);
        fs->by_name = b;
        fs->n_by_name = cap;
    }
    return &fs->by_name[name];
}

int frame_scopes_add(frame_scopes *fs, const vor_reader *r, const vor_reader_frame *frame) {
    int rc = 0;
    for (uint32_t i = 0; i < frame->n_threads; i++) {
        const vor_reader_thread_scopes *th = &frame->threads[i];
        uint32_t root = thread_name(fs, r, th->thread_id);
        for (uint32_t j = 0; j < th->n_scopes; j++) {
            const vor_reader_scope *sc = &th->scopes[j];
            scope_tree_scope s = {site_name(fs, r, sc->site_id), sc->depth, sc->duration_ns};
            if (s.name == NAME_NONE) {
                rc = -1; /* out of memory; the scope still counts towards its parent's time */
                s.name = name_table_intern(fs->names, "?");
            }
            int64_t self = 0;
            if (scope_tree_add(fs->tree, th->thread_id, root, &s, &self) != 0) continue;
            if (fs->keep_by_name && s.name != NAME_NONE) {
                scope_name_stat *st = name_stat(fs, s.name);
                if (!st) {
                    rc = -1;
                    continue;
                }
                st->calls++;
                st->total_ns += sc->duration_ns;
                st->self_ns += self;
            }
        }
    }
    return rc;
}
