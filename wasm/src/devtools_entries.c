/* devtools_entries.c: the DevTools entry budget and display times (devtools_entries.h
 * says what and why). One frame at a time, on the frame thread; no global state. */
#include "devtools_entries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    F_KEEP = 1u,       /* shown in this frame (ended scopes) */
    F_ELIGIBLE = 2u,   /* not shorter than the minimum duration */
    F_PLACED = 4u,     /* its begin was placed in an earlier frame (begin_ns holds it) */
    F_MARK = 8u,       /* open scopes: a descendant was shown */
    F_ENTERED = 0x80u, /* the depth-first walk is inside it */
};

#define NONE UINT32_MAX
#define EVENT_END 1u /* events[] holds node << 1 | EVENT_END */

/* ---- Scratch --------------------------------------------------------------------------- */

static int grow(void **p, size_t n, size_t size) {
    void *q = realloc(*p, n * size);
    if (q == NULL) return -1;
    *p = q;
    return 0;
}

/* Per-scope arrays for `total` scopes (all threads) and `largest` (one thread). */
static int reserve(devtools_entries *e, size_t total, size_t ended) {
    if (total > e->cap_scopes) {
        size_t n = total + total / 2 + 64;
        if (grow((void **)&e->flags, n, sizeof *e->flags) || grow((void **)&e->child, n, sizeof *e->child) ||
            grow((void **)&e->sibling, n, sizeof *e->sibling) || grow((void **)&e->stack, n, sizeof *e->stack) ||
            grow((void **)&e->begin_ns, n, sizeof *e->begin_ns) || grow((void **)&e->end_ns, n, sizeof *e->end_ns) ||
            grow((void **)&e->events, 2 * n, sizeof *e->events) || grow((void **)&e->lo, 2 * n, sizeof *e->lo) ||
            grow((void **)&e->at, 2 * n, sizeof *e->at))
            return -1;
        e->cap_scopes = n;
    }
    if (ended > e->cap_durations) {
        size_t n = ended + ended / 2 + 64;
        if (grow((void **)&e->durations, n, sizeof *e->durations) || grow((void **)&e->entries, n, sizeof *e->entries))
            return -1;
        e->cap_durations = e->cap_entries = n;
    }
    return 0;
}

/* ---- Per-thread states ---------------------------------------------------------------- */

void devtools_entries_forget(devtools_entries *e) {
    for (uint32_t i = 0; i < DEVTOOLS_THREAD_SLOTS; i++) free(e->threads[i].open);
    memset(e->threads, 0, sizeof e->threads);
    e->known = 0;
}

void devtools_entries_free(devtools_entries *e) {
    devtools_entries_forget(e);
    free(e->flags);
    free(e->child);
    free(e->sibling);
    free(e->events);
    free(e->stack);
    free(e->lo);
    free(e->at);
    free(e->begin_ns);
    free(e->end_ns);
    free(e->durations);
    free(e->entries);
    memset(e, 0, sizeof *e);
}

static devtools_thread_state *thread_state(devtools_entries *e, uint32_t id) {
    uint32_t key = id + 1, mask = DEVTOOLS_THREAD_SLOTS - 1;
    for (int attempt = 0; attempt < 2; attempt++) {
        for (uint32_t probe = 0; probe < DEVTOOLS_THREAD_SLOTS; probe++) {
            devtools_thread_state *s = &e->threads[(key * 2654435761u + probe) & mask];
            if (s->key == key) return s;
            if (s->key == 0) {
                if (e->known >= DEVTOOLS_THREAD_SLOTS / 2) break; /* full enough: start afresh */
                s->key = key;
                e->known++;
                return s;
            }
        }
        devtools_entries_forget(e);
    }
    return NULL; /* not reached: an empty table has room */
}

/* ---- Selection ------------------------------------------------------------------------- */

/* The k-th largest (1 <= k <= n) of a[0..n); reorders a. Wirth's selection (Hoare's
 * partition), which splits runs of equal values evenly. */
static int64_t kth_largest(int64_t *a, size_t n, size_t k) {
    long long want = (long long)k - 1, l = 0, r = (long long)n - 1;
    while (l < r) {
        int64_t x = a[want];
        long long i = l, j = r;
        do {
            while (a[i] > x) i++;
            while (x > a[j]) j--;
            if (i <= j) {
                int64_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < want) l = i;
        if (want < i) r = j;
    }
    return a[want];
}

static int64_t duration_of(const vor_scope_record *s) {
    return s->duration_ns > 0 ? s->duration_ns : 0;
}

/* Marks the `budget` longest eligible ended scopes of every thread as kept. */
static void pick_longest(devtools_entries *e, const devtools_frame_in *in, const size_t *base, uint64_t eligible) {
    int64_t threshold = INT64_MIN;
    uint64_t above = 0, ties = UINT64_MAX;
    if (in->budget != 0 && eligible > in->budget) {
        size_t m = 0;
        for (uint32_t t = 0; t < in->n_threads; t++) {
            const vor_thread_record *tr = &in->threads[t];
            for (uint32_t i = 0; i < tr->n_scopes; i++)
                if (e->flags[base[t] + i] & F_ELIGIBLE) e->durations[m++] = duration_of(&tr->scopes[i]);
        }
        threshold = kth_largest(e->durations, m, in->budget);
        for (size_t i = 0; i < m; i++) above += e->durations[i] > threshold;
        ties = in->budget - above;
    }
    for (uint32_t t = 0; t < in->n_threads; t++) {
        const vor_thread_record *tr = &in->threads[t];
        for (uint32_t i = 0; i < tr->n_scopes; i++) {
            uint8_t *f = &e->flags[base[t] + i];
            if (!(*f & F_ELIGIBLE)) continue;
            int64_t d = duration_of(&tr->scopes[i]);
            if (d > threshold) {
                *f |= F_KEEP;
            } else if (d == threshold && ties > 0) {
                *f |= F_KEEP;
                ties--;
            }
        }
    }
}

/* The parent of scope i of a thread with n ended and o open scopes, or NONE. Ended scopes
 * point later (ended parents end after them; open ones follow the ended); open scope k's
 * parent is open scope k - 1. Anything else is treated as a top-level scope. */
static uint32_t parent_of(const vor_thread_record *tr, uint32_t i) {
    uint32_t n = tr->n_scopes, total = n + tr->n_open;
    if (i >= n) return i > n ? i - 1 : NONE;
    uint32_t p = tr->scopes[i].parent;
    return (p > i && p < total) ? p : NONE;
}

/* ---- One thread ------------------------------------------------------------------------ */

/* Finds the scopes whose begin an earlier frame placed: the thread's open scopes then,
 * which are now either still open (the same start and site at the same depth) or among
 * the ended ones (the first at that depth with that start and site). */
static void match_open(devtools_entries *e, devtools_thread_state *s, const vor_thread_record *tr, uint8_t *flags) {
    uint32_t n = tr->n_scopes, o = tr->n_open, k = s->n_open, j = 0;
    const vor_scope_record *sc = tr->scopes;
    for (; j < k && j < o; j++) {
        const devtools_open_begin *b = &s->open[j];
        if (sc[n + j].start_ns != b->start_ns || sc[n + j].site_id != b->site_id) break;
        flags[n + j] |= F_PLACED | (b->keep ? F_MARK : 0);
        e->begin_ns[n + j] = b->display_ns;
    }
    uint32_t first_ended = j, found = 0;
    uint8_t seen[VOR_MAX_DEPTH] = {0};
    if (k > VOR_MAX_DEPTH) k = VOR_MAX_DEPTH;
    for (uint32_t i = 0; i < n && first_ended + found < k; i++) {
        uint32_t d = sc[i].depth;
        if (d < first_ended || d >= k || seen[d]) continue;
        const devtools_open_begin *b = &s->open[d];
        if (sc[i].start_ns != b->start_ns || sc[i].site_id != b->site_id) continue;
        seen[d] = 1; /* the first at its depth only */
        flags[i] |= F_PLACED | (b->keep ? F_KEEP : 0);
        e->begin_ns[i] = b->display_ns;
        found++;
    }
}

/* Lays out one thread's shown scopes (see devtools_entries.h). Returns the width used. */
static double lay_out(devtools_entries *e, devtools_thread_state *s, const vor_thread_record *tr, uint8_t *flags,
                      const devtools_frame_in *in) {
    uint32_t n = tr->n_scopes, total = n + tr->n_open;
    const vor_scope_record *sc = tr->scopes;
    /* children lists of the shown ended scopes and every open one, in index order */
    uint32_t roots = NONE;
    for (uint32_t i = 0; i < total; i++) e->child[i] = NONE;
    for (uint32_t i = total; i-- > 0;) {
        if (i < n && !(flags[i] & F_KEEP)) continue;
        uint32_t p = parent_of(tr, i);
        uint32_t *head = p == NONE ? &roots : &e->child[p];
        e->sibling[i] = *head;
        *head = i;
    }
    /* the begins and ends in the order they happened (depth first); a begin an earlier
     * frame placed counts only under ancestors that were all placed too */
    uint32_t m = 0, top = 0;
    for (uint32_t r = roots; r != NONE; r = e->sibling[r]) {
        e->stack[top++] = r;
        while (top > 0) {
            uint32_t x = e->stack[top - 1];
            if (!(flags[x] & F_ENTERED)) {
                flags[x] |= F_ENTERED;
                uint32_t p = parent_of(tr, x);
                if ((flags[x] & F_PLACED) && p != NONE && !(flags[p] & F_PLACED)) flags[x] &= (uint8_t)~F_PLACED;
                if (!(flags[x] & F_PLACED)) e->events[m++] = x << 1;
                /* push children in reverse so the first is visited first: walk to count */
                uint32_t c = e->child[x], count = 0;
                for (; c != NONE; c = e->sibling[c]) count++;
                top += count;
                uint32_t slot = top;
                for (c = e->child[x]; c != NONE; c = e->sibling[c]) e->stack[--slot] = c;
                continue;
            }
            top--;
            flags[x] &= (uint8_t)~F_ENTERED;
            if (x < n) e->events[m++] = (x << 1) | EVENT_END;
        }
    }
    if (m == 0) return 0;
    double frame_end = (double)in->end_ns;
    double width = in->step_ns > DEVTOOLS_MIN_WIDTH_NS ? in->step_ns : DEVTOOLS_MIN_WIDTH_NS;
    double *at = e->at, *fwd = e->lo;
    for (;;) {
        /* forward: every event at its time or after the one before it, plus the gap */
        for (uint32_t q = 0; q < m; q++) {
            uint32_t x = e->events[q] >> 1;
            int is_end = (e->events[q] & EVENT_END) != 0;
            double time = (double)(is_end ? sc[x].start_ns + duration_of(&sc[x]) : sc[x].start_ns);
            int prev_begin = q > 0 ? !(e->events[q - 1] & EVENT_END) : s->last_was_begin;
            double gap = !prev_begin ? 0 : is_end ? width : DEVTOOLS_NEST_GAP_NS;
            double floor = q > 0 ? fwd[q - 1] + gap : (s->has_last ? s->last_ns + gap : -INFINITY);
            fwd[q] = time > floor ? time : floor;
        }
        /* backward: nothing past the frame's end */
        at[m - 1] = fwd[m - 1] < frame_end ? fwd[m - 1] : frame_end;
        for (uint32_t q = m - 1; q-- > 0;) {
            int next_end = (e->events[q + 1] & EVENT_END) != 0;
            double gap = (e->events[q] & EVENT_END) ? 0 : next_end ? width : DEVTOOLS_NEST_GAP_NS;
            double cap = at[q + 1] - gap;
            at[q] = fwd[q] < cap ? fwd[q] : cap;
        }
        /* the first event may not move before the last one placed, nor before the frame
         * (unless it truly lies before it: a begin whose placement was forgotten) */
        int first_end = (e->events[0] & EVENT_END) != 0;
        double first_gap = !s->last_was_begin ? 0 : first_end ? width : DEVTOOLS_NEST_GAP_NS;
        double least = s->has_last ? s->last_ns + first_gap : -INFINITY;
        uint32_t x0 = e->events[0] >> 1;
        double t0 = (double)(first_end ? sc[x0].start_ns + duration_of(&sc[x0]) : sc[x0].start_ns);
        double frame_floor = t0 < (double)in->start_ns ? t0 : (double)in->start_ns;
        if (frame_floor > least) least = frame_floor;
        if (at[0] >= least) break;
        if (width <= DEVTOOLS_MIN_WIDTH_NS) {
            memcpy(at, fwd, m * sizeof *at); /* does not fit even so: run past the frame's end */
            break;
        }
        width = width / 2 > DEVTOOLS_MIN_WIDTH_NS ? width / 2 : DEVTOOLS_MIN_WIDTH_NS;
    }
    for (uint32_t q = 0; q < m; q++) {
        uint32_t x = e->events[q] >> 1;
        if (e->events[q] & EVENT_END)
            e->end_ns[x] = at[q];
        else
            e->begin_ns[x] = at[q];
    }
    s->has_last = 1;
    s->last_ns = at[m - 1];
    s->last_was_begin = !(e->events[m - 1] & EVENT_END);
    return width;
}

/* Keeps the thread's open scopes (their placed begins) for the next frames. */
static int remember_open(devtools_entries *e, devtools_thread_state *s, const vor_thread_record *tr,
                         const uint8_t *flags) {
    uint32_t n = tr->n_scopes, o = tr->n_open;
    if (o > s->capacity) {
        devtools_open_begin *p = realloc(s->open, o * sizeof *p);
        if (p == NULL) {
            s->n_open = 0;
            return -1;
        }
        s->open = p;
        s->capacity = o;
    }
    for (uint32_t k = 0; k < o; k++) {
        devtools_open_begin *b = &s->open[k];
        b->start_ns = tr->scopes[n + k].start_ns;
        b->site_id = tr->scopes[n + k].site_id;
        b->display_ns = e->begin_ns[n + k];
        b->keep = (flags[n + k] & F_MARK) != 0;
    }
    s->n_open = o;
    return 0;
}

/* ---- The frame ------------------------------------------------------------------------- */

int devtools_entries_frame(devtools_entries *e, const devtools_frame_in *in, devtools_frame_out *out) {
    memset(out, 0, sizeof *out);
    out->min_width_ns = in->step_ns > DEVTOOLS_MIN_WIDTH_NS ? in->step_ns : DEVTOOLS_MIN_WIDTH_NS;
    size_t total = 0, ended = 0;
    for (uint32_t t = 0; t < in->n_threads; t++) {
        total += (size_t)in->threads[t].n_scopes + in->threads[t].n_open;
        ended += in->threads[t].n_scopes;
    }
    size_t base_stack[64];
    size_t *base = in->n_threads <= 64 ? base_stack : malloc(in->n_threads * sizeof *base);
    if (base == NULL || reserve(e, total, ended) != 0) {
        if (base != base_stack) free(base);
        out->left_out_budget = ended;
        return -1;
    }
    /* eligibility (minimum duration) */
    uint64_t eligible = 0;
    for (uint32_t t = 0, offset = 0; t < in->n_threads; t++) {
        const vor_thread_record *tr = &in->threads[t];
        base[t] = offset;
        for (uint32_t i = 0; i < tr->n_scopes + tr->n_open; i++) {
            int ok = i < tr->n_scopes && (uint64_t)duration_of(&tr->scopes[i]) >= in->min_duration_ns;
            e->flags[offset + i] = ok ? F_ELIGIBLE : 0;
            eligible += (uint64_t)ok;
        }
        offset += tr->n_scopes + tr->n_open;
    }
    pick_longest(e, in, base, eligible);

    int failed = 0;
    uint32_t n_entries = 0;
    for (uint32_t t = 0; t < in->n_threads; t++) {
        const vor_thread_record *tr = &in->threads[t];
        uint8_t *flags = &e->flags[base[t]];
        devtools_thread_state *s = thread_state(e, tr->thread_id);
        if (s == NULL) continue;
        uint32_t n = tr->n_scopes, o = tr->n_open;
        if (s->n_open > 0) match_open(e, s, tr, flags);
        /* ancestors of shown scopes: ended ones are shown, open ones will be */
        for (uint32_t i = 0; i < n; i++) {
            if (!(flags[i] & F_KEEP)) continue;
            uint32_t p = parent_of(tr, i);
            if (p == NONE) continue;
            if (p < n)
                flags[p] |= F_KEEP;
            else
                for (uint32_t k = n; k <= p; k++) flags[k] |= F_MARK;
        }
        for (uint32_t k = n + o; k-- > n;) /* an open scope marked before marks its ancestors */
            if ((flags[k] & F_MARK) && k > n) flags[k - 1] |= F_MARK;
        double width = lay_out(e, s, tr, flags, in);
        if (width > 0 && width < out->min_width_ns) out->min_width_ns = width;
        if (remember_open(e, s, tr, flags) != 0) failed = 1;
        for (uint32_t i = 0; i < n; i++) {
            if (!(flags[i] & F_KEEP)) {
                if (flags[i] & F_ELIGIBLE)
                    out->left_out_budget++;
                else
                    out->left_out_short++;
                continue;
            }
            devtools_entry *en = &e->entries[n_entries++];
            en->site_id = tr->scopes[i].site_id;
            en->thread = t;
            en->start_ns = e->begin_ns[i];
            en->end_ns = e->end_ns[i];
        }
    }
    if (base != base_stack) free(base);
    out->entries = e->entries;
    out->n_entries = n_entries;
    return failed ? -1 : 0;
}
