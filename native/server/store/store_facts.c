/*
 * store_facts.c - what the index says about one capture, computed frame by frame from the C
 * reader: its producer, process, start, frames, span, whether it ended properly, and per scope
 * name the calls, total and self time (the top ones by self and by total, every name for the
 * full-text search).
 *
 * Times follow the reading rules every consumer uses (docs/ARCHITECTURE.md, "Reading rules"):
 * a scope's contribution to a flame frame is its time inside the frame; self time is its
 * contribution minus its children's (parent indices from the reader, which applies
 * vor_scopes_link_parents), and each direct child costs its parent the calibrated cost of one
 * scope (function_cost_ns for -finstrument-functions sites, scope_cost_ns otherwise), clamped
 * at zero. Calls count scopes that ended in the frames read. So "total" and "self" here are
 * what `vor summary` prints for the same capture.
 *
 * Memory: per-frame work arrays grow to the largest thread of a frame; totals are kept per site
 * id in an open-addressed table (ids that are only used never size anything: at most
 * FACTS_MAX_SITES distinct sites are tracked, the rest counted under "(other sites)"), and
 * folded into names once, when the facts are asked for.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FACTS_MAX_SITES = 1 << 17, FACTS_OTHER = 0xFFFFFFFFu };

typedef struct site_stat {
    uint32_t site;     /* FACTS_OTHER for the overflow bucket */
    bool used;
    uint64_t calls;
    int64_t total_ns, self_ns;
} site_stat;

struct facts_builder {
    site_stat *sites;
    uint32_t cap, count;
    site_stat other;
    int64_t *self;       /* per scope of the current thread */
    int64_t *contrib;
    uint64_t work_cap;
    uint64_t frames, flame_frames;
    bool have_first;
    int64_t first_start, last_end;
};

facts_builder *facts_builder_new(void)
{
    facts_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->cap = 1024;
    b->sites = calloc(b->cap, sizeof *b->sites);
    if (!b->sites) {
        free(b);
        return NULL;
    }
    b->other.site = FACTS_OTHER;
    return b;
}

void facts_builder_free(facts_builder *b)
{
    if (!b)
        return;
    free(b->sites);
    free(b->self);
    free(b->contrib);
    free(b);
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

static int grow(facts_builder *b)
{
    uint32_t ncap = b->cap * 2;
    site_stat *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    for (uint32_t i = 0; i < b->cap; i++)
        if (b->sites[i].used) {
            uint32_t h = hash32(b->sites[i].site) & (ncap - 1);
            while (ns[h].used)
                h = (h + 1) & (ncap - 1);
            ns[h] = b->sites[i];
        }
    free(b->sites);
    b->sites = ns;
    b->cap = ncap;
    return 0;
}

static site_stat *site_slot(facts_builder *b, uint32_t site)
{
    uint32_t h = hash32(site) & (b->cap - 1);
    while (b->sites[h].used) {
        if (b->sites[h].site == site)
            return &b->sites[h];
        h = (h + 1) & (b->cap - 1);
    }
    if (b->count >= FACTS_MAX_SITES)
        return &b->other;
    if ((b->count + 1) * 4 > b->cap * 3) {
        if (grow(b))
            return &b->other;
        return site_slot(b, site);
    }
    b->sites[h].used = true;
    b->sites[h].site = site;
    b->count++;
    return &b->sites[h];
}

static double child_cost(const vor_reader *r, const vor_reader_info *info, uint32_t site)
{
    const vor_reader_site *s = vor_reader_get_site(r, site);
    bool function = s && (s->module_id != 0 || s->address != 0);
    return function ? info->function_cost_ns : info->scope_cost_ns;
}

int facts_builder_add(facts_builder *b, const vor_reader *r, const vor_reader_frame *f)
{
    const vor_reader_info *info = vor_reader_get_info(r);
    int64_t fstart = f->start_ns, fend = f->start_ns + f->duration_ns;
    if (!b->have_first) {
        b->have_first = true;
        b->first_start = fstart;
    }
    if (fend > b->last_end)
        b->last_end = fend;
    b->frames++;
    if (!f->has_flame)
        return 0;
    b->flame_frames++;
    for (uint32_t t = 0; t < f->n_threads; t++) {
        const vor_reader_thread_scopes *ts = &f->threads[t];
        uint64_t n = (uint64_t)ts->n_scopes + ts->n_open;
        if (n > b->work_cap) {
            uint64_t cap = b->work_cap ? b->work_cap : 256;
            while (cap < n)
                cap *= 2;
            int64_t *s = realloc(b->self, cap * sizeof *s);
            if (!s)
                return -1;
            b->self = s;
            int64_t *c = realloc(b->contrib, cap * sizeof *c);
            if (!c)
                return -1;
            b->contrib = c;
            b->work_cap = cap;
        }
        for (uint64_t i = 0; i < n; i++) {
            const vor_reader_scope *s = &ts->scopes[i];
            int64_t a = s->start_ns > fstart ? s->start_ns : fstart;
            int64_t e = s->start_ns + s->duration_ns < fend ? s->start_ns + s->duration_ns : fend;
            b->contrib[i] = e > a ? e - a : 0;
            b->self[i] = b->contrib[i];
        }
        for (uint64_t i = 0; i < n; i++) {
            uint32_t p = ts->scopes[i].parent;
            if (p < n) {
                double cost = info ? child_cost(r, info, ts->scopes[i].site_id) : 0;
                b->self[p] -= b->contrib[i] + (int64_t)cost;
            }
        }
        for (uint64_t i = 0; i < n; i++) {
            site_stat *st = site_slot(b, ts->scopes[i].site_id);
            st->total_ns += b->contrib[i];
            st->self_ns += b->self[i] > 0 ? b->self[i] : 0;
            if (i < ts->n_scopes)
                st->calls++;
        }
    }
    return 0;
}

void store_facts_clear(capture_facts *f)
{
    free(f->names);
    free(f->rows);
    memset(f, 0, sizeof *f);
}

/* ---- names ---- */

typedef struct name_stat {
    char *name;
    uint64_t calls;
    int64_t total_ns, self_ns;
} name_stat;

typedef struct name_map {
    name_stat *slots;
    uint32_t cap, count;
} name_map;

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static name_stat *name_slot(name_map *m, const char *name)
{
    uint32_t h = hash_str(name) & (m->cap - 1);
    while (m->slots[h].name) {
        if (!strcmp(m->slots[h].name, name))
            return &m->slots[h];
        h = (h + 1) & (m->cap - 1);
    }
    if (!(m->slots[h].name = strdup(name)))
        return NULL;
    m->count++;
    return &m->slots[h];
}

static int by_total(const void *a, const void *b)
{
    const name_stat *x = a, *y = b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : strcmp(x->name, y->name);
}

static int by_self(const void *a, const void *b)
{
    const name_stat *x = a, *y = b;
    return x->self_ns < y->self_ns ? 1 : x->self_ns > y->self_ns ? -1 : strcmp(x->name, y->name);
}

static void copy_top(store_top_scope *dst, const name_stat *src)
{
    snprintf(dst->name, sizeof dst->name, "%s", src->name);
    dst->total_ns = src->total_ns;
    dst->self_ns = src->self_ns;
    dst->calls = src->calls;
}

static void site_name(const vor_reader *r, uint32_t site, char *out, size_t cap)
{
    const vor_reader_site *s = site == FACTS_OTHER ? NULL : vor_reader_get_site(r, site);
    if (site == FACTS_OTHER)
        snprintf(out, cap, "(other sites)");
    else if (s && s->name && s->name[0])
        snprintf(out, cap, "%s", s->name);
    else
        snprintf(out, cap, "site %u", site);
}

int facts_builder_result(facts_builder *b, const vor_reader *r, capture_facts *out)
{
    const vor_reader_info *info = vor_reader_get_info(r);
    store_facts_clear(out);
    if (info) {
        snprintf(out->producer, sizeof out->producer, "%s", info->producer ? info->producer : "");
        snprintf(out->process, sizeof out->process, "%s", info->process ? info->process : "");
        out->pid = info->pid;
        out->wasm = strstr(out->producer, "wasm") != NULL || strstr(out->producer, "emscripten") != NULL;
        out->version_minor = info->version_minor;
        out->start_ms = (info->wall_epoch_ns + (b->have_first ? b->first_start : 0)) / 1000000;
    }
    out->frames = b->frames;
    out->flame_frames = b->flame_frames;
    out->span_ns = b->have_first ? b->last_end - b->first_start : 0;
    out->ended = vor_reader_finished(r) == 1;

    name_map m = {0};
    m.cap = 64;
    while (m.cap < (b->count + 1) * 2)
        m.cap *= 2;
    m.slots = calloc(m.cap, sizeof *m.slots);
    if (!m.slots)
        return -1;
    int rc = 0;
    char name[STORE_SCOPE_NAME_MAX_BYTES + 1];
    for (uint32_t i = 0; i <= b->cap && rc == 0; i++) {
        const site_stat *st = i < b->cap ? &b->sites[i] : &b->other;
        if (i < b->cap ? !st->used : st->calls == 0 && st->total_ns == 0)
            continue;
        site_name(r, st->site, name, sizeof name);
        name_stat *ns = name_slot(&m, name);
        if (!ns) {
            rc = -1;
            break;
        }
        ns->calls += st->calls;
        ns->total_ns += st->total_ns;
        ns->self_ns += st->self_ns;
    }
    /* Compact, then sort. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < m.cap; i++)
        if (m.slots[i].name)
            m.slots[n++] = m.slots[i];
    if (rc == 0) {
        qsort(m.slots, n, sizeof *m.slots, by_self);
        for (uint32_t i = 0; i < n && i < STORE_TOP_SCOPES; i++)
            copy_top(&out->top_self[out->n_top_self++], &m.slots[i]);
        qsort(m.slots, n, sizeof *m.slots, by_total);
        for (uint32_t i = 0; i < n && i < STORE_TOP_SCOPES; i++)
            copy_top(&out->top_total[out->n_top_total++], &m.slots[i]);
        uint32_t rows = n < STORE_MAX_SCOPE_ROWS ? n : STORE_MAX_SCOPE_ROWS;
        out->rows = rows ? calloc(rows, sizeof *out->rows) : NULL;
        if (rows && !out->rows)
            rc = -1;
        for (uint32_t i = 0; i < rows && rc == 0; i++)
            copy_top(&out->rows[i], &m.slots[i]);
        out->n_rows = rc == 0 ? rows : 0;
        size_t len = 0;
        uint32_t listed = n < STORE_MAX_SCOPE_NAMES ? n : STORE_MAX_SCOPE_NAMES;
        for (uint32_t i = 0; i < listed; i++)
            len += strlen(m.slots[i].name) + 1;
        out->names = malloc(len + 1);
        if (!out->names)
            rc = -1;
        for (uint32_t i = 0; i < listed && rc == 0; i++) {
            size_t l = strlen(m.slots[i].name);
            for (size_t k = 0; k < l; k++) /* one name per line */
                out->names[out->names_len + k] = m.slots[i].name[k] == '\n' ? ' ' : m.slots[i].name[k];
            out->names_len += l;
            out->names[out->names_len++] = '\n';
        }
        if (out->names)
            out->names[out->names_len] = '\0';
    }
    for (uint32_t i = 0; i < n; i++)
        free(m.slots[i].name);
    free(m.slots);
    return rc;
}
