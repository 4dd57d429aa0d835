/* stacks.c: the one stack engine of the `vor` command. summary, export --format folded,
 * flamegraph and diff all read a capture's scopes through it, so they agree on every
 * number.
 *
 * Per flame frame and thread it follows the reading rules of docs/FORMAT.md:
 *   - a scope's *contribution* is its time inside the frame, [max(start, frame start),
 *     min(end, frame end)] (a scope still open at the frame's end runs to that end);
 *   - its parent is the reader's `parent` index (FORMAT.md's one parent rule); a scope
 *     whose parent was not recorded (1.0 captures: it ended in a later frame) goes under
 *     an explicit "[parent not recorded]" frame, never under a guessed one;
 *   - self = contribution minus the children's contributions, never below zero; with
 *     overhead compensation (the default when the header has calibrated costs) each direct
 *     child also takes its calibrated cost (function_cost_ns for function sites,
 *     scope_cost_ns otherwise) from its parent's self time, again never below zero;
 *   - a scope's total is its self time plus its children's totals, so a parent is always
 *     at least as wide as its children; per name, a scope nested in one of the same name
 *     (recursion) adds its self time but not its total again, so no name has more time
 *     than the frames it ran in;
 *   - calls, mean and max come from the scopes that ended in the frames read;
 *   - with per_frame, each name's total and self time per flame frame also go into
 *     distributions (quantile.c; a frame without the name counts as 0), for medians and
 *     p95 that one long frame cannot skew the way it skews a mean.
 * Nothing crosses frames: each frame stands alone, which is what makes VOR_RECORD_EVERY,
 * VOR_RECORD_MAX_FRAMES and pauses harmless.
 *
 * One frame costs O(scopes): contributions, then children's sums in end order (children
 * before parents: ended scopes in order, then open ones innermost first), then one walk in
 * begin order through child lists, with enter and leave events (recursion counting, the
 * flame graph tree's begin-order scopes). Scratch is as large as the largest thread of one
 * frame; frames holding more than max_frame_scopes scopes are refused before anything is
 * allocated for them. Sums saturate at INT64_MAX instead of overflowing.
 *
 * Names: sites are looked up once and their names interned (name_table.c); an undeclared
 * site id is "site N". Threads are not named while reading: the tree's bottom frames are
 * keys (thread ids), renamed at the end to each thread's newest name (threads sharing a
 * name merge), because a thread renamed mid-run must carry its newest name everywhere.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define THREAD_KEY_PREFIX '\x01'
#define MORE_THREADS_KEY "\x01more"

typedef struct site_slot {
    const char *reader_name; /* the reader's name string the entry was made from; NULL: undeclared */
    uint32_t name;
} site_slot;

/* ---- saturating arithmetic ---------------------------------------------------------- */

static int64_t add_sat(int64_t a, int64_t b) { /* both >= 0 */
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* ---- life cycle ------------------------------------------------------------------------ */

int stacks_init(stacks *s, const stacks_options *options, const vor_reader *r) {
    memset(s, 0, sizeof *s);
    s->opt = *options;
    if (s->opt.max_frame_scopes == 0) s->opt.max_frame_scopes = STACKS_DEFAULT_MAX_FRAME_SCOPES;
    if (!(s->opt.weight > 0)) s->opt.weight = 1.0;
    const vor_reader_info *info = vor_reader_get_info(r);
    s->scope_cost_ns = info && info->scope_cost_ns > 0 && isfinite(info->scope_cost_ns) ? info->scope_cost_ns : 0;
    s->function_cost_ns =
        info && info->function_cost_ns > 0 && isfinite(info->function_cost_ns) ? info->function_cost_ns : 0;
    s->costs_known = s->scope_cost_ns > 0 || s->function_cost_ns > 0;
    s->compensating = s->costs_known && !s->opt.raw;
    if (!s->compensating) s->scope_cost_ns = s->function_cost_ns = 0;
    s->exact_budget = STACKS_EXACT_BUDGET;
    s->names = name_table_create();
    id_map_init(&s->sites, STACKS_MAX_SITES);
    id_map_init(&s->threads, STACKS_MAX_THREADS);
    if (!s->names) return -1;
    s->more_names = name_table_intern(s->names, STACKS_MORE_NAMES);
    return s->more_names == NAME_NONE ? -1 : 0;
}

void stacks_free(stacks *s) {
    name_table_destroy(s->names);
    free(s->by_name);
    free(s->active);
    free(s->touched);
    for (uint32_t i = 0; i < s->cap_dist; i++) {
        if (!s->dist[i]) continue;
        quantile_free(&s->dist[i]->total);
        quantile_free(&s->dist[i]->self);
        free(s->dist[i]);
    }
    free(s->dist);
    free(s->site_slots);
    id_map_free(&s->sites);
    id_map_free(&s->threads);
    free(s->scratch.contrib);
    free(s->scratch.total);
    free(s->scratch.self);
    free(s->scratch.child_contrib);
    free(s->scratch.child_cost);
    free(s->scratch.parent);
    free(s->scratch.first_child);
    free(s->scratch.last_child);
    free(s->scratch.next_sibling);
    free(s->scratch.name);
    memset(s, 0, sizeof *s);
}

/* ---- names -------------------------------------------------------------------------------- */

/* Makes room for name ids below `count` in the per-name arrays. */
static int reserve_names(stacks *s, uint32_t count) {
    if (count <= s->cap_names) return 0;
    uint32_t cap = s->cap_names ? s->cap_names : 256;
    while (cap < count) cap *= 2;
    stacks_name *by = realloc(s->by_name, (size_t)cap * sizeof *by);
    if (by) s->by_name = by;
    uint32_t *active = realloc(s->active, (size_t)cap * sizeof *active);
    if (active) s->active = active;
    if (!by || !active) return -1;
    memset(by + s->cap_names, 0, (size_t)(cap - s->cap_names) * sizeof *by);
    memset(active + s->cap_names, 0, (size_t)(cap - s->cap_names) * sizeof *active);
    s->cap_names = cap;
    return 0;
}

static uint32_t intern(stacks *s, const char *name) {
    uint32_t id = name_table_intern(s->names, name);
    if (id == NAME_NONE) {
        s->stats.names_refused++;
        id = s->more_names;
    }
    return id;
}

/* The name id of a site: its declared name, or "site N". */
static uint32_t site_name(stacks *s, const vor_reader *r, uint32_t site_id) {
    const vor_reader_site *site = vor_reader_get_site(r, site_id);
    const char *declared = site && site->name && site->name[0] ? site->name : NULL;
    /* Consecutive scopes often share a site: the last answer first. */
    if (declared && site_id == s->last_site_id && declared == s->last_site_reader_name) return s->last_site_name;
    uint32_t *slot = id_map_find(&s->sites, site_id);
    if (slot && s->site_slots[*slot].reader_name == declared && declared) {
        s->last_site_id = site_id;
        s->last_site_reader_name = declared;
        return s->last_site_name = s->site_slots[*slot].name;
    }
    char fallback[32];
    snprintf(fallback, sizeof fallback, "site %u", site_id);
    uint32_t name = intern(s, declared ? declared : fallback);
    if (!slot && s->n_site_slots < STACKS_MAX_SITES) {
        if (s->n_site_slots == s->cap_site_slots) {
            uint32_t cap = s->cap_site_slots ? s->cap_site_slots * 2 : 256;
            site_slot *p = realloc(s->site_slots, (size_t)cap * sizeof *p);
            if (!p) return name; /* not cached: looked up again next time */
            s->site_slots = p;
            s->cap_site_slots = cap;
        }
        slot = id_map_put(&s->sites, site_id, s->n_site_slots);
        if (slot) s->n_site_slots++;
    }
    if (slot) s->site_slots[*slot] = (site_slot){declared, name};
    return name;
}

/* The cost one scope of `site_id` adds to its parent (0 when not compensating). */
static double child_cost(const stacks *s, const vor_reader *r, uint32_t site_id) {
    if (!s->compensating) return 0;
    const vor_reader_site *site = vor_reader_get_site(r, site_id);
    return stacks_site_is_function(site) ? s->function_cost_ns : s->scope_cost_ns;
}

int stacks_site_is_function(const vor_reader_site *site) {
    return site && site->module_id != 0;
}

/* ---- threads ------------------------------------------------------------------------------- */

/* The bottom frame of a thread's stacks in the tree: a key made from its id. */
static const char *thread_key(stacks *s, uint32_t thread_id, char buf[16]) {
    /* The map only bounds how many threads stay apart (STACKS_MAX_THREADS). */
    if (!id_map_find(&s->threads, thread_id) && !id_map_put(&s->threads, thread_id, s->threads.count)) {
        s->stats.threads_merged++;
        return MORE_THREADS_KEY;
    }
    buf[0] = THREAD_KEY_PREFIX;
    snprintf(buf + 1, 15, "%u", thread_id);
    return buf;
}

/* ---- one frame ---------------------------------------------------------------------------- */

static int reserve_scratch(stacks *s, uint32_t n) {
    stacks_scratch *k = &s->scratch;
    if (n <= k->cap) return 0;
    uint32_t cap = k->cap ? k->cap : 256;
    while (cap < n) cap = cap > UINT32_MAX / 2 ? n : cap * 2;
#define GROW(field)                                                  \
    do {                                                             \
        void *p = realloc(k->field, (size_t)cap * sizeof *k->field); \
        if (!p) return -1;                                           \
        k->field = p;                                                \
    } while (0)
    GROW(contrib);
    GROW(total);
    GROW(self);
    GROW(child_contrib);
    GROW(child_cost);
    GROW(parent);
    GROW(first_child);
    GROW(last_child);
    GROW(next_sibling);
    GROW(name);
#undef GROW
    k->cap = cap;
    return 0;
}

/* Adds to a name's figures of the current frame (total, self), listing it the first time. */
static void touch(stacks *s, uint32_t name, int64_t total, int64_t self) {
    stacks_name *st = &s->by_name[name];
    if (st->frame_stamp != s->frame_stamp) {
        st->frame_stamp = s->frame_stamp;
        st->frame_ns = 0;
        st->frame_self_ns = 0;
        if (s->n_touched == s->cap_touched) {
            uint32_t cap = s->cap_touched ? s->cap_touched * 2 : 64;
            uint32_t *p = realloc(s->touched, (size_t)cap * sizeof *p);
            if (!p) {
                s->stats.out_of_memory++;
                return;
            }
            s->touched = p;
            s->cap_touched = cap;
        }
        s->touched[s->n_touched++] = name;
    }
    st->frame_ns = add_sat(st->frame_ns, total);
    st->frame_self_ns = add_sat(st->frame_self_ns, self);
}

/* The value a total takes in the tree. */
static uint64_t tree_value(const stacks *s, int64_t ns) {
    if (ns <= 0) return 0;
    if (s->opt.weight == 1.0) return (uint64_t)ns;
    double v = (double)ns * s->opt.weight + 0.5;
    return v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
}

static void add_tree_scope(stacks *s, const char *name, uint32_t depth, int64_t ns) {
    flamegraph_status st = flamegraph_tree_add_scope(s->opt.tree, name, depth, tree_value(s, ns));
    if (st != FLAMEGRAPH_OK) s->stats.tree_refused++;
}

/* A scope met in the walk, parents first. */
static void enter(stacks *s, const vor_reader_thread_scopes *ts, uint32_t i, uint32_t depth) {
    stacks_scratch *k = &s->scratch;
    uint32_t name = k->name[i];
    stacks_name *st = &s->by_name[name];
    int outermost = s->active[name]++ == 0;
    st->self_ns = add_sat(st->self_ns, k->self[i]);
    if (outermost) st->total_ns = add_sat(st->total_ns, k->total[i]);
    touch(s, name, outermost ? k->total[i] : 0, k->self[i]);
    if (i < ts->n_scopes) {
        /* The full duration, less the compensation found inside this frame. */
        int64_t full = ts->scopes[i].duration_ns;
        if (s->compensating && k->contrib[i] > k->total[i]) full -= k->contrib[i] - k->total[i];
        if (full < 0) full = 0;
        st->calls++;
        st->duration_ns = add_sat(st->duration_ns, full);
        if (full > st->max_ns) st->max_ns = full;
    }
    if (s->opt.tree) add_tree_scope(s, name_table_get(s->names, name), depth, k->total[i]);
}

/* Walks the subtree of `root` in begin order: enter on the way down, leave on the way up. */
static void walk(stacks *s, const vor_reader_thread_scopes *ts, uint32_t root, uint32_t depth) {
    stacks_scratch *k = &s->scratch;
    uint32_t node = root;
    for (;;) {
        enter(s, ts, node, depth);
        if (k->first_child[node] != NONE) {
            node = k->first_child[node];
            depth++;
            continue;
        }
        for (;;) {
            s->active[k->name[node]]--;
            if (node == root) return;
            if (k->next_sibling[node] != NONE) {
                node = k->next_sibling[node];
                break;
            }
            node = k->parent[node];
            depth--;
        }
    }
}

static void add_thread(stacks *s, const vor_reader *r, const vor_reader_frame *f, const vor_reader_thread_scopes *ts) {
    stacks_scratch *k = &s->scratch;
    uint32_t ne = ts->n_scopes, n = ts->n_scopes + ts->n_open;
    int64_t frame_start = f->start_ns, frame_end = f->start_ns + f->duration_ns;

    /* Contributions, names, validated parents, child lists in index (= time) order. */
    uint32_t n_unknown = 0;
    for (uint32_t i = 0; i < n; i++) {
        const vor_reader_scope *sc = &ts->scopes[i];
        int64_t end;
        if (__builtin_add_overflow(sc->start_ns, sc->duration_ns, &end)) end = INT64_MAX;
        if (i >= ne) end = frame_end; /* open: runs to the frame's end */
        int64_t lo = sc->start_ns > frame_start ? sc->start_ns : frame_start;
        int64_t hi = end < frame_end ? end : frame_end;
        k->contrib[i] = hi > lo ? hi - lo : 0;
        k->name[i] = site_name(s, r, sc->site_id);
        k->child_contrib[i] = 0;
        k->total[i] = 0; /* children's totals, then the scope's own */
        k->child_cost[i] = 0;
        k->first_child[i] = k->last_child[i] = k->next_sibling[i] = NONE;
        uint32_t p = sc->parent;
        /* Ended scopes come after their children, open ones after their parent: anything
         * else is not a parent (and could not make a cycle). */
        int valid = i < ne ? (p != VOR_PARENT_NONE && p < n && p > i) : (p >= ne && p < i);
        if (valid) {
            k->parent[i] = p;
        } else {
            k->parent[i] = p == VOR_PARENT_NONE ? VOR_PARENT_NONE : VOR_PARENT_UNKNOWN;
            if (p != VOR_PARENT_NONE) n_unknown++;
        }
    }
    if (reserve_names(s, name_table_count(s->names)) != 0) {
        s->stats.out_of_memory++;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = k->parent[i];
        if (p >= n) continue;
        if (k->last_child[p] == NONE)
            k->first_child[p] = i;
        else
            k->next_sibling[k->last_child[p]] = i;
        k->last_child[p] = i;
    }

    /* Self and total, children first: ended scopes in order, then open ones innermost first. */
    int64_t top_total = 0, unknown_total = 0;
    for (uint32_t step = 0; step < n; step++) {
        uint32_t i = step < ne ? step : n - 1 - (step - ne);
        int64_t self = k->contrib[i] - k->child_contrib[i];
        if (self < 0) {
            self = 0;
            s->stats.children_longer++;
        }
        if (k->child_cost[i] > 0) {
            if ((double)self <= k->child_cost[i])
                self = 0;
            else
                self -= (int64_t)llround(k->child_cost[i]);
            if (self < 0) self = 0;
        }
        k->self[i] = self;
        k->total[i] = add_sat(k->total[i], self);
        uint32_t p = k->parent[i];
        if (p < n) {
            k->child_contrib[p] = add_sat(k->child_contrib[p], k->contrib[i]);
            k->total[p] = add_sat(k->total[p], k->total[i]);
            k->child_cost[p] += child_cost(s, r, ts->scopes[i].site_id);
        } else if (p == VOR_PARENT_NONE) {
            top_total = add_sat(top_total, k->total[i]);
        } else {
            unknown_total = add_sat(unknown_total, k->total[i]);
        }
    }

    /* Begin order: the thread's frame, scopes without a recorded parent under the
     * placeholder, then the top-level scopes, each walked parents first. */
    uint32_t base = 0;
    if (s->opt.tree && s->opt.thread_roots) {
        char key[16];
        add_tree_scope(s, thread_key(s, ts->thread_id, key), 0, add_sat(top_total, unknown_total));
        base = 1;
    }
    if (n_unknown) {
        s->stats.parent_unknown += n_unknown;
        if (s->opt.tree) add_tree_scope(s, STACKS_PLACEHOLDER, base, unknown_total);
        for (uint32_t i = 0; i < n; i++)
            if (k->parent[i] == VOR_PARENT_UNKNOWN) walk(s, ts, i, base + 1);
    }
    for (uint32_t i = 0; i < n; i++)
        if (k->parent[i] == VOR_PARENT_NONE) walk(s, ts, i, base);
    if (s->opt.tree) flamegraph_tree_end_scopes(s->opt.tree);
    if (s->opt.on_thread) s->opt.on_thread(s->opt.on_thread_ctx, f, ts, k);
}

/* The per-frame distributions of name `name`, made on first use. */
static stacks_frame_dist *dist_for(stacks *s, uint32_t name) {
    if (name >= s->cap_dist) {
        uint32_t cap = s->cap_dist ? s->cap_dist : 64;
        while (cap <= name) cap *= 2;
        stacks_frame_dist **p = realloc(s->dist, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        memset(p + s->cap_dist, 0, (size_t)(cap - s->cap_dist) * sizeof *p);
        s->dist = p;
        s->cap_dist = cap;
    }
    if (!s->dist[name]) {
        stacks_frame_dist *d = calloc(1, sizeof *d);
        if (!d) return NULL;
        quantile_init(&d->total, 0, &s->exact_budget);
        quantile_init(&d->self, 0, &s->exact_budget);
        s->dist[name] = d;
    }
    return s->dist[name];
}

/* Each name's time in this frame joins its distributions. */
static void add_frame_figures(stacks *s) {
    for (uint32_t k = 0; k < s->n_touched; k++) {
        const stacks_name *st = &s->by_name[s->touched[k]];
        stacks_frame_dist *d = dist_for(s, s->touched[k]);
        if (!d || quantile_add(&d->total, (double)st->frame_ns) != 0 ||
            quantile_add(&d->self, (double)st->frame_self_ns) != 0) {
            s->stats.out_of_memory++;
            return;
        }
        d->frames_with++;
    }
}

int stacks_add_frame(stacks *s, const vor_reader *r, const vor_reader_frame *f) {
    s->n_touched = 0;
    s->frame_stamp++;
    if (!f->has_flame) return STACKS_OK;
    uint64_t total = 0, largest = 0;
    for (uint32_t t = 0; t < f->n_threads; t++) {
        uint64_t n = (uint64_t)f->threads[t].n_scopes + f->threads[t].n_open;
        total += n;
        if (n > largest) largest = n;
    }
    s->frame_scopes = total;
    if (total > s->opt.max_frame_scopes) return STACKS_TOO_MANY;
    if (reserve_scratch(s, (uint32_t)largest) != 0) return STACKS_NO_MEMORY;
    s->stats.flame_frames++;
    uint64_t oom = s->stats.out_of_memory;
    for (uint32_t t = 0; t < f->n_threads; t++) {
        const vor_reader_thread_scopes *ts = &f->threads[t];
        if (ts->n_scopes + (uint64_t)ts->n_open == 0) continue;
        s->stats.scopes += ts->n_scopes;
        s->stats.open_scopes += ts->n_open;
        add_thread(s, r, f, ts);
    }
    if (s->opt.per_frame) add_frame_figures(s);
    return s->stats.out_of_memory != oom ? STACKS_NO_MEMORY : STACKS_OK;
}

/* ---- the tree to write ------------------------------------------------------------------- */

typedef struct relabel_context {
    const stacks *s;
    const vor_reader *r;
    const char *only_thread;
    int escape;
    char buf[FLAMEGRAPH_MAX_NAME_LENGTH * 6 + 8]; /* an escaped name: up to 6 bytes per byte */
} relabel_context;

static const char *shown(relabel_context *c, const char *name) {
    return c->escape ? cli_text_show(c->buf, sizeof c->buf, name) : name;
}

static const char *relabel_root(void *context, const char *key) {
    relabel_context *c = context;
    char fallback[32];
    const char *name = STACKS_MORE_THREADS;
    if (key[0] == THREAD_KEY_PREFIX && strcmp(key, MORE_THREADS_KEY) != 0) {
        uint32_t id = (uint32_t)strtoul(key + 1, NULL, 10);
        name = stacks_thread_name(c->r, id, fallback);
    }
    if (c->only_thread && strcmp(c->only_thread, name) != 0) return NULL;
    return shown(c, name);
}

static const char *relabel_name(void *context, const char *name) {
    relabel_context *c = context;
    return c->escape ? shown(c, name) : NULL;
}

const char *stacks_thread_name(const vor_reader *r, uint32_t id, char fallback[32]) {
    const vor_reader_thread *th = vor_reader_get_thread(r, id);
    if (th && th->name && th->name[0]) return th->name;
    snprintf(fallback, 32, "thread %u", id);
    return fallback;
}

flamegraph_tree *stacks_final_tree(stacks *s, const vor_reader *r, const flamegraph_tree_options *options,
                                   const char *only_thread, int escape, flamegraph_status *status) {
    relabel_context *c = malloc(sizeof *c);
    if (!c) {
        *status = FLAMEGRAPH_ERR_NO_MEMORY;
        return NULL;
    }
    c->s = s;
    c->r = r;
    c->only_thread = only_thread;
    c->escape = escape;
    flamegraph_relabel relabel = {s->opt.thread_roots ? relabel_root : NULL, relabel_name, c};
    flamegraph_tree *tree = flamegraph_tree_relabel(s->opt.tree, options, &relabel, status);
    free(c);
    return tree;
}

const stacks_name *stacks_get_name(const stacks *s, uint32_t name) {
    return name < s->cap_names && name < name_table_count(s->names) ? &s->by_name[name] : NULL;
}

int stacks_name_used(const stacks_name *n) {
    return n && (n->calls || n->total_ns || n->self_ns);
}

double stacks_frame_percentile(stacks *s, uint32_t name, int self, double p) {
    uint64_t n = s->stats.flame_frames;
    stacks_frame_dist *d = name < s->cap_dist ? s->dist[name] : NULL;
    if (n == 0 || d == NULL || d->frames_with == 0) return 0;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    uint64_t zeros = n - d->frames_with;
    if (rank <= zeros) return 0;
    /* The (rank - zeros)-th smallest of the frames that have the name. */
    uint64_t k = rank - zeros;
    return quantile_get(self ? &d->self : &d->total, 100.0 * ((double)k - 0.5) / (double)d->frames_with);
}

char *stacks_costs_text(const stacks *s, char *buf, size_t cap) {
    size_t len = 0;
    if (s->scope_cost_ns > 0)
        len = cli_append(buf, cap, len, "%.1f ns per child scope", s->scope_cost_ns);
    else
        len = cli_append(buf, cap, len, "child scopes not compensated (no scope cost recorded)");
    if (s->function_cost_ns > 0)
        cli_append(buf, cap, len, ", %.1f ns per child function", s->function_cost_ns);
    else
        cli_append(buf, cap, len, ", child functions not compensated (no function cost recorded)");
    return buf;
}
