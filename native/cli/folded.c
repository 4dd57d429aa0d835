/* folded.c: writes a stack_trie as folded stacks, the text format of flamegraph.pl,
 * speedscope, inferno and `vor flamegraph --folded`:
 *
 *     main;update;physics 1234567
 *
 * one line per distinct stack with time of its own (self time, in ns), names joined by
 * ';' from the outermost. Children are visited in name order so that the output is the
 * same on every run (and diffs well). The path is kept in one buffer that grows and
 * shrinks with the walk, so each line costs its own length, not its depth times names.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

typedef struct walk {
    const stack_trie *trie;
    const name_table *names;
    FILE *out;
    char *path;
    size_t len, cap;
    uint32_t *scratch; /* children being visited, one range per level */
    size_t n_scratch, cap_scratch;
    int failed;
} walk;

/* qsort has no context argument; the command is single-threaded. */
static const walk *sort_walk;

static const char *node_name(const walk *w, uint32_t node) {
    uint32_t name = stack_trie_name(w->trie, node);
    return name == NAME_NONE ? "?" : name_table_get(w->names, name);
}

static int compare_by_name(const void *a, const void *b) {
    return strcmp(node_name(sort_walk, *(const uint32_t *)a), node_name(sort_walk, *(const uint32_t *)b));
}

static int reserve(walk *w, size_t extra) {
    if (w->len + extra + 1 <= w->cap) return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + extra + 1) cap *= 2;
    char *p = realloc(w->path, cap);
    if (!p) return -1;
    w->path = p;
    w->cap = cap;
    return 0;
}

/* Appends ";name" (no ';' at the start), with ';' -> ':' and line breaks -> ' '. */
static int push_name(walk *w, const char *name) {
    size_t n = strlen(name);
    if (reserve(w, n + 1) != 0) return -1;
    if (w->len) w->path[w->len++] = ';';
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        w->path[w->len++] = c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c;
    }
    w->path[w->len] = '\0';
    return 0;
}

static void visit(walk *w, uint32_t node) {
    size_t saved_len = w->len;
    if (node != 0 && push_name(w, node_name(w, node)) != 0) {
        w->failed = 1;
        return;
    }
    uint64_t self = stack_trie_self(w->trie, node);
    if (self > 0) fprintf(w->out, "%s %llu\n", node == 0 ? "[truncated]" : w->path, (unsigned long long)self);

    size_t start = w->n_scratch;
    for (uint32_t c = stack_trie_first_child(w->trie, node); c != STACK_TRIE_NONE; c = stack_trie_next_sibling(w->trie, c)) {
        if (w->n_scratch == w->cap_scratch) {
            size_t cap = w->cap_scratch ? w->cap_scratch * 2 : 256;
            uint32_t *s = realloc(w->scratch, cap * sizeof *s);
            if (!s) {
                w->failed = 1;
                break;
            }
            w->scratch = s;
            w->cap_scratch = cap;
        }
        w->scratch[w->n_scratch++] = c;
    }
    size_t end = w->n_scratch;
    sort_walk = w;
    qsort(w->scratch + start, end - start, sizeof *w->scratch, compare_by_name);
    for (size_t i = start; i < end && !w->failed; i++) visit(w, w->scratch[i]);
    w->n_scratch = start;
    w->len = saved_len;
    if (w->path) w->path[w->len] = '\0';
}

int folded_write(const stack_trie *trie, const name_table *names, FILE *out) {
    walk w = {trie, names, out, NULL, 0, 0, NULL, 0, 0, 0};
    visit(&w, 0);
    free(w.path);
    free(w.scratch);
    sort_walk = NULL;
    return w.failed ? -1 : 0;
}
