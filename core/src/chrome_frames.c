/* chrome_frames.c: the one Chrome trace writer (what it writes, the run and clipping rule
 * and the nesting guarantee are described in chrome_frames.h).
 *
 * Shape: per frame, the frame event; then, for a recorded frame, thread by thread: names
 * when new or renamed, each ended scope placed (in end order, the order frames list them)
 * and written parents first (scope_order.c's pre-order), the thread's open scopes kept
 * until its run ends; then the counters. Per thread the writer keeps what placing needs:
 * the disjoint "blocks" covering what was written in the current run (a new scope may
 * enclose whole blocks, never cut one) and a floor before which nothing may start (what
 * earlier runs covered). State of an earlier run is dropped lazily, when the thread next
 * appears (run_id), so ending a run costs nothing per thread but for the open scopes it
 * writes.
 *
 * Threads live in one array indexed by an open-addressing table (id -> entry), bounded by
 * VOR_CHROME_MAX_THREADS: beyond it an entry whose thread has no open scope and was not in
 * the current frame is reused (its state folded into a floor every new entry starts at).
 */
#include "chrome_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"
#include "scope_order.h"

#define SCOPE_CATEGORY "vor"
#define FRAME_CATEGORY "vor.frame"
#define FRAMES_ROW_NAME "frames"
#define NAME_BYTES 256u
#define SITE_LIMIT (VOR_READER_MAX_SITES + 1u)
#define LEGACY_BLOCKS 1024u /* blocks kept per thread when open scopes are not listed */

/* Placement flags of a written scope. */
#define CLIP_START 1u
#define CLIP_END 2u
#define UNWOUND 4u

typedef struct block {
    int64_t start, end;
    uint32_t min_depth; /* of the scopes it covers */
} block;

typedef struct thread_state {
    uint32_t id;
    uint32_t pending; /* 1 + position in w->pending while its open scopes wait; 0 = not */
    uint64_t tid;
    uint64_t name_hash;  /* of the name last written; 0 = not named yet */
    uint64_t last_frame; /* index of the last frame that listed it */
    uint64_t run_id;     /* the run its blocks and open scopes belong to */
    int64_t floor;       /* no scope may start before this */
    block *blocks;
    uint32_t n_blocks, cap_blocks;
    vor_reader_scope *open; /* open at the end of the frame `open_frame` (outermost first) */
    uint32_t n_open, cap_open;
    uint64_t open_frame;
    int64_t open_until; /* that frame's end */
} thread_state;

typedef struct placed {
    int64_t start, end;
    uint32_t flags;
} placed;

struct vor_chrome_frames {
    vor_chrome_json *json;
    vor_chrome_names names;
    uint64_t pid;
    int open_listed;

    vor_chrome_prepared *sites; /* by site id, prepared on first use of a known site */
    uint32_t site_capacity;

    thread_state *threads;
    uint32_t n_threads, thread_capacity;
    uint32_t *index; /* entry + 1, 0 = empty; a power of two, at least twice n_threads */
    uint32_t index_capacity;
    uint32_t *pending; /* entries whose open scopes wait for their run's end */
    uint32_t n_pending, pending_capacity;
    int64_t evicted_floor;

    int in_run;
    uint64_t run_id;
    int64_t run_start, run_end;
    uint64_t last_index;
    uint64_t frame_index; /* of the frame being written */
    int have_frame;
    int64_t last_frame_end;

    placed *placed; /* scratch, per scope of the largest thread */
    uint32_t *next;
    vor_scope_subtree *stack;
    int64_t *protect;
    uint8_t *continued;
    uint32_t scratch_capacity;

    vor_chrome_frames_stats stats;
    char name[NAME_BYTES];
};

/* ---- Small helpers ------------------------------------------------------------------------ */

static inline int64_t add_sat(int64_t a, int64_t b) {
    int64_t r;
    if (VOR_UNLIKELY(__builtin_add_overflow(a, b, &r))) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static uint64_t add_sat_u64(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t hash_name(const char *s) {
    uint64_t h = vor_fnv1a64_string(s);
    return h ? h : 1; /* 0 marks "not named yet" */
}

/* Grows *array (of `size`-byte items, capacity *cap) to hold `need`; 0 if memory is short. */
static int reserve(void **array, uint32_t *cap, uint64_t need, size_t size) {
    if (need <= *cap) return 1;
    if (need > UINT32_MAX) return 0;
    uint64_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    if (c > UINT32_MAX) c = UINT32_MAX;
    void *p = realloc(*array, (size_t)c * size);
    if (p == NULL) return 0;
    *array = p;
    *cap = (uint32_t)c;
    return 1;
}

static int reserve_scratch(vor_chrome_frames *w, uint64_t n) {
    if (n <= w->scratch_capacity) return 1;
    if (n > UINT32_MAX) return 0;
    uint32_t cap = w->scratch_capacity;
    uint32_t caps[5] = {cap, cap, cap, cap, cap};
    int ok = reserve((void **)&w->placed, &caps[0], n, sizeof *w->placed) &&
             reserve((void **)&w->next, &caps[1], n, sizeof *w->next) &&
             reserve((void **)&w->stack, &caps[2], n, sizeof *w->stack) &&
             reserve((void **)&w->protect, &caps[3], n, sizeof *w->protect) &&
             reserve((void **)&w->continued, &caps[4], n, sizeof *w->continued);
    uint32_t m = caps[0];
    for (int i = 1; i < 5; i++)
        if (caps[i] < m) m = caps[i];
    w->scratch_capacity = m; /* what every array holds (some may have grown further) */
    return ok;
}

/* ---- Names: sites, threads ------------------------------------------------------------------ */

/* A scope event's categories. Scope events carry no "args": speedscope names a trace event
 * by its name plus its args (JSON), so any arg would rename the scope there and split one
 * scope into many frames. What vor adds goes into "cat", the comma-separated categories
 * Perfetto and chrome://tracing show in the event's details, and which DevTools and
 * speedscope leave out of names: "vor", then "src:FILE:LINE" when the site has a source file, then
 * "clipped_start", "clipped_end", "unwound" for a scope cut at a run's start or end or
 * left by unwinding. Returns buf, or a malloc'ed string when it does not fit (NULL: out of
 * memory). */
static char *scope_category(const char *file, uint32_t line, uint32_t flags, char *buf, size_t cap) {
    const char *f1 = flags & CLIP_START ? ",clipped_start" : "";
    const char *f2 = flags & CLIP_END ? ",clipped_end" : "";
    const char *f3 = flags & UNWOUND ? ",unwound" : "";
    char src[32] = "";
    if (file) snprintf(src, sizeof src, ":%u", line);
    int n =
        snprintf(buf, cap, "%s%s%s%s%s%s%s", SCOPE_CATEGORY, file ? ",src:" : "", file ? file : "", src, f1, f2, f3);
    if (n < 0) return NULL;
    if ((size_t)n < cap) return buf;
    char *big = malloc((size_t)n + 1);
    if (big)
        snprintf(big, (size_t)n + 1, "%s%s%s%s%s%s%s", SCOPE_CATEGORY, file ? ",src:" : "", file ? file : "", src, f1,
                 f2, f3);
    return big;
}

#define CATEGORY_BYTES 512u

/* The prepared text of site `id`; NULL when it is unknown (asked again next time), its id
 * is too large to keep, or memory is short: the caller writes the event plainly. */
static const vor_chrome_prepared *prepare_site(vor_chrome_frames *w, uint32_t id);

static inline const vor_chrome_prepared *site_text(vor_chrome_frames *w, uint32_t id) {
    if (VOR_LIKELY(id < w->site_capacity && w->sites[id].bytes)) return &w->sites[id];
    return prepare_site(w, id);
}

static const vor_chrome_prepared *prepare_site(vor_chrome_frames *w, uint32_t id) {
    if (id >= SITE_LIMIT || w->names.site == NULL) return NULL;
    vor_chrome_site_info info = {NULL, NULL, 0};
    if (!w->names.site(w->names.ctx, id, &info)) return NULL;
    uint32_t old = w->site_capacity;
    if (!reserve((void **)&w->sites, &w->site_capacity, (uint64_t)id + 1, sizeof *w->sites)) return NULL;
    memset(w->sites + old, 0, (size_t)(w->site_capacity - old) * sizeof *w->sites);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "site %u", id);
    const char *name = info.name && info.name[0] ? info.name : fallback;
    const char *file = info.file && info.file[0] ? info.file : NULL;
    char buf[CATEGORY_BYTES];
    char *cat = scope_category(file, info.line, 0, buf, sizeof buf);
    int ok = cat && vor_chrome_prepare_complete(&w->sites[id], name, cat, NULL, 0);
    if (cat != buf) free(cat);
    return ok ? &w->sites[id] : NULL;
}

static uint64_t pick_tid(uint32_t id, uint64_t os_tid) {
    uint64_t tid = os_tid ? os_tid : (uint64_t)id + 1;                /* tid 0 would merge with the pid */
    if (tid == VOR_CHROME_FRAMES_TID) tid = ((uint64_t)1 << 32) + id; /* never on the frames row */
    return tid;
}

/* Writes the thread's names the first time and after a rename; returns its tid. */
static uint64_t name_thread(vor_chrome_frames *w, thread_state *t) {
    uint64_t os_tid = 0;
    int known = w->names.thread && w->names.thread(w->names.ctx, t->id, w->name, sizeof w->name, &os_tid);
    if (!known) os_tid = 0;
    if (!known || w->name[0] == '\0') snprintf(w->name, sizeof w->name, "thread %u", t->id);
    uint64_t h = hash_name(w->name);
    if (t->name_hash == 0) {
        t->tid = pick_tid(t->id, os_tid);
        vor_chrome_json_thread_name(w->json, w->pid, t->tid, w->name);
        vor_chrome_json_thread_sort_index(w->json, w->pid, t->tid, (int64_t)t->id);
    } else if (h != t->name_hash) {
        vor_chrome_json_thread_name(w->json, w->pid, t->tid, w->name);
    }
    t->name_hash = h;
    return t->tid;
}

/* ---- The thread table ------------------------------------------------------------------------ */

static uint32_t slot_of(uint32_t id, uint32_t mask) {
    return (id * 2654435761u) & mask;
}

static thread_state *find_thread(vor_chrome_frames *w, uint32_t id) {
    if (w->index_capacity == 0) return NULL;
    uint32_t mask = w->index_capacity - 1;
    for (uint32_t s = slot_of(id, mask);; s = (s + 1) & mask) {
        uint32_t e = w->index[s];
        if (e == 0) return NULL;
        if (w->threads[e - 1].id == id) return &w->threads[e - 1];
    }
}

static int rebuild_index(vor_chrome_frames *w, uint32_t capacity) {
    uint32_t *index = calloc(capacity, sizeof *index);
    if (index == NULL) return 0;
    uint32_t mask = capacity - 1;
    for (uint32_t e = 0; e < w->n_threads; e++) {
        uint32_t s = slot_of(w->threads[e].id, mask);
        while (index[s]) s = (s + 1) & mask;
        index[s] = e + 1;
    }
    free(w->index);
    w->index = index;
    w->index_capacity = capacity;
    return 1;
}

static int64_t last_block_end(const thread_state *t) {
    return t->n_blocks ? t->blocks[t->n_blocks - 1].end : INT64_MIN;
}

/* An entry to reuse once the table is full: no open scopes waiting, not in this frame,
 * the least recently seen. NULL if there is none. */
static thread_state *evict(vor_chrome_frames *w) {
    thread_state *best = NULL;
    for (uint32_t e = 0; e < w->n_threads; e++) {
        thread_state *t = &w->threads[e];
        if (t->pending || t->last_frame == w->frame_index) continue;
        if (best == NULL || t->last_frame < best->last_frame) best = t;
    }
    if (best == NULL) return NULL;
    int64_t end = last_block_end(best);
    if (best->floor > w->evicted_floor) w->evicted_floor = best->floor;
    if (end > w->evicted_floor) w->evicted_floor = end;
    return best;
}

static thread_state *add_thread(vor_chrome_frames *w, uint32_t id) {
    thread_state *t;
    if (w->n_threads == VOR_CHROME_MAX_THREADS) {
        t = evict(w);
        if (t == NULL) return NULL;
        block *blocks = t->blocks;
        vor_reader_scope *open = t->open;
        uint32_t cap_blocks = t->cap_blocks, cap_open = t->cap_open;
        memset(t, 0, sizeof *t);
        t->blocks = blocks, t->cap_blocks = cap_blocks;
        t->open = open, t->cap_open = cap_open;
        t->id = id;
        if (!rebuild_index(w, w->index_capacity)) return NULL;
    } else {
        if (!reserve((void **)&w->threads, &w->thread_capacity, (uint64_t)w->n_threads + 1, sizeof *w->threads))
            return NULL;
        if ((uint64_t)(w->n_threads + 1) * 2 > w->index_capacity) {
            uint32_t capacity = w->index_capacity ? w->index_capacity * 2 : 64;
            if (!rebuild_index(w, capacity)) return NULL;
        }
        t = &w->threads[w->n_threads];
        memset(t, 0, sizeof *t);
        t->id = id;
        uint32_t mask = w->index_capacity - 1, s = slot_of(id, mask);
        while (w->index[s]) s = (s + 1) & mask;
        w->index[s] = ++w->n_threads;
    }
    t->floor = w->evicted_floor;
    t->run_id = w->run_id;
    return t;
}

static void set_pending(vor_chrome_frames *w, thread_state *t, int on) {
    if (on && !t->pending) {
        if (!reserve((void **)&w->pending, &w->pending_capacity, (uint64_t)w->n_pending + 1, sizeof *w->pending)) {
            t->n_open = 0; /* cannot remember them: they are left out */
            return;
        }
        w->pending[w->n_pending++] = (uint32_t)(t - w->threads);
        t->pending = w->n_pending;
    } else if (!on && t->pending) {
        uint32_t at = t->pending - 1, last = w->pending[--w->n_pending];
        w->pending[at] = last;
        w->threads[last].pending = at + 1;
        t->pending = 0;
    }
}

/* ---- Placing: exact nesting ------------------------------------------------------------------ */

/* What placing works on: the thread's blocks in locals (the loops that place a frame's
 * scopes keep them in registers), written back by placer_done. */
typedef struct placer {
    block *blocks;
    uint32_t n;
    int64_t floor;
    uint64_t moved;
} placer;

static placer placer_of(const thread_state *t) {
    placer p = {t->blocks, t->n_blocks, t->floor, 0};
    return p;
}

static void placer_done(vor_chrome_frames *w, thread_state *t, const placer *p) {
    t->n_blocks = p->n;
    w->stats.adjusted += p->moved;
}

/* Places [a, b] (a scope at `depth`, arriving in end order) against what the thread has
 * written, into *out (moved, if it had to, counted). The caller reserved room for one more
 * block. */
static inline void place(placer *p, placed *out, int64_t a, int64_t b, uint32_t depth, uint32_t flags) {
    int64_t a0 = a, b0 = b;
    block *blocks = p->blocks;
    uint32_t n = p->n;
    if (a < p->floor) a = p->floor;
    if (b < a) b = a;
    if (n && b < blocks[n - 1].end) b = blocks[n - 1].end; /* never end before a written end */
    uint32_t min_depth = depth;
    while (n && blocks[n - 1].start >= a) { /* enclosed */
        if (blocks[n - 1].min_depth < min_depth) min_depth = blocks[n - 1].min_depth;
        n--;
    }
    if (n && blocks[n - 1].end > a) { /* would cut it: start where it ends */
        a = blocks[n - 1].end;
        if (b < a) b = a;
    }
    blocks[n].start = a;
    blocks[n].end = b;
    blocks[n].min_depth = min_depth;
    p->n = n + 1;
    p->moved += (a != a0) | (b != b0);
    out->start = a;
    out->end = b;
    out->flags = flags;
}

static void merge_blocks(thread_state *t, uint32_t first, uint32_t last) {
    if (last <= first) return;
    block *b = t->blocks;
    for (uint32_t i = first + 1; i <= last; i++)
        if (b[i].min_depth < b[first].min_depth) b[first].min_depth = b[i].min_depth;
    b[first].end = b[last].end;
    memmove(b + first + 1, b + last + 1, (size_t)(t->n_blocks - last - 1) * sizeof *b);
    t->n_blocks -= last - first;
}

/* Keeps the block list short after a frame. A later scope can only start at a known open
 * scope's start (open scopes listed) or, without that knowledge, anywhere no depth-0 scope
 * ended after. */
static void compact(vor_chrome_frames *w, thread_state *t, const vor_reader_scope *open, uint32_t n_open) {
    if (w->open_listed) {
        int64_t *p = w->protect; /* the open scopes' starts as they will be placed, sorted */
        for (uint32_t k = 0; k < n_open; k++) {
            int64_t v = open[k].start_ns < w->run_start ? w->run_start : open[k].start_ns;
            uint32_t j = k;
            while (j > 0 && p[j - 1] > v) p[j] = p[j - 1], j--;
            p[j] = v;
        }
        uint32_t out = 0, j = 0;
        for (uint32_t i = 0; i < t->n_blocks; i++) {
            if (out > 0) {
                int64_t lo = t->blocks[out - 1].end, hi = t->blocks[i].start;
                while (j < n_open && p[j] < lo) j++;
                if (!(j < n_open && p[j] <= hi)) { /* no open scope starts in the gap */
                    if (t->blocks[i].min_depth < t->blocks[out - 1].min_depth)
                        t->blocks[out - 1].min_depth = t->blocks[i].min_depth;
                    t->blocks[out - 1].end = t->blocks[i].end;
                    continue;
                }
            }
            t->blocks[out++] = t->blocks[i];
        }
        t->n_blocks = out;
    } else if (t->n_blocks > LEGACY_BLOCKS) {
        uint32_t last0 = 0;
        for (uint32_t i = 0; i < t->n_blocks; i++)
            if (t->blocks[i].min_depth == 0) last0 = i;
        merge_blocks(t, 0, last0);
        if (t->n_blocks > LEGACY_BLOCKS / 2) merge_blocks(t, 0, t->n_blocks / 2);
    }
}

/* A thread met in a new run: what earlier runs wrote becomes its floor. */
static void enter_run(vor_chrome_frames *w, thread_state *t) {
    if (t->run_id == w->run_id) return;
    int64_t end = last_block_end(t);
    if (end > t->floor) t->floor = end;
    t->n_blocks = 0;
    t->n_open = 0;
    t->run_id = w->run_id;
}

/* ---- Writing scopes ----------------------------------------------------------------------- */

static void write_scope_with_args(vor_chrome_frames *w, const vor_reader_scope *s, uint64_t tid, const placed *p,
                                  const vor_chrome_prepared *text);

static inline void write_scope(vor_chrome_frames *w, const vor_reader_scope *s, uint64_t tid, const placed *p) {
    const vor_chrome_prepared *text = site_text(w, s->site_id);
    if (VOR_LIKELY(text != NULL && p->flags == 0)) { /* most scopes: nothing to add */
        w->stats.scopes++;
        vor_chrome_json_complete_prepared(w->json, text, w->pid, tid, p->start, p->end - p->start, NULL, 0);
        return;
    }
    write_scope_with_args(w, s, tid, p, text);
}

/* A clipped or unwound scope (its flags in its categories), or one whose site has no
 * prepared text. */
static void write_scope_with_args(vor_chrome_frames *w, const vor_reader_scope *s, uint64_t tid, const placed *p,
                                  const vor_chrome_prepared *text) {
    (void)text;
    if (p->flags & (CLIP_START | CLIP_END)) w->stats.clipped++;
    w->stats.scopes++;
    vor_chrome_site_info info = {NULL, NULL, 0};
    int known = w->names.site && w->names.site(w->names.ctx, s->site_id, &info);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "site %u", s->site_id);
    const char *name = known && info.name && info.name[0] ? info.name : fallback;
    const char *file = known && info.file && info.file[0] ? info.file : NULL;
    char buf[CATEGORY_BYTES];
    char *cat = scope_category(file, info.line, p->flags, buf, sizeof buf);
    vor_chrome_json_complete(w->json, name, cat ? cat : SCOPE_CATEGORY, w->pid, tid, p->start, p->end - p->start, NULL,
                             0, NULL, 0);
    if (cat != buf) free(cat);
}

/* Places open scopes open[0..n) clipped to `until` into out[0..n), innermost first (their
 * end order). */
static void place_open(const vor_chrome_frames *w, placer *p, const vor_reader_scope *open, uint32_t n, int64_t until,
                       placed *out) {
    for (uint32_t k = n; k-- > 0;) {
        int64_t a = open[k].start_ns;
        uint32_t flags = CLIP_END;
        if (a < w->run_start) a = w->run_start, flags |= CLIP_START;
        if (open[k].flags & VOR_SCOPE_UNWOUND) flags |= UNWOUND;
        place(p, &out[k], a, until, open[k].depth, flags);
    }
}

/* Writes the open scopes a thread kept, clipped to the end of the frame they were last
 * seen open in: its run ended, or the thread is absent from the frame being written (a
 * thread with an open scope at a frame's end is listed in it: it exited). */
static void flush_open(vor_chrome_frames *w, thread_state *t) {
    uint32_t n = t->n_open;
    set_pending(w, t, 0);
    t->n_open = 0;
    if (n == 0) return;
    if (!reserve_scratch(w, n) ||
        !reserve((void **)&t->blocks, &t->cap_blocks, (uint64_t)t->n_blocks + n + 1, sizeof *t->blocks)) {
        w->stats.scopes_lost += n;
        return;
    }
    placer pl = placer_of(t);
    place_open(w, &pl, t->open, n, t->open_until, w->placed);
    placer_done(w, t, &pl);
    for (uint32_t k = 0; k < n; k++) write_scope(w, &t->open[k], t->tid, &w->placed[k]);
}

/* Which of the open scopes a thread kept from the previous frame `ts` lists again (as
 * ended or open: a scope that began before the frame, at the same depth, of the same
 * site): sets continued[k]; returns how many did not continue (the thread exited with
 * them open, having ended the deeper ones). */
static uint32_t mark_continued(const thread_state *t, const vor_reader_thread_scopes *ts, int64_t frame_start,
                               uint8_t *continued) {
    uint32_t p = t->n_open, listed = ts->n_scopes + ts->n_open, vanished = p;
    memset(continued, 0, p);
    for (uint32_t i = 0; i < listed; i++) {
        const vor_reader_scope *s = &ts->scopes[i];
        uint32_t d = s->depth;
        if (d < p && !continued[d] && t->open[d].depth == d && s->start_ns < frame_start &&
            s->site_id == t->open[d].site_id) {
            continued[d] = 1;
            vanished--;
        }
    }
    return vanished;
}

static void write_thread(vor_chrome_frames *w, const vor_reader_thread_scopes *ts, int ends_run, int64_t frame_start,
                         int64_t frame_end) {
    uint32_t n = ts->n_scopes, m = ts->n_open;
    thread_state *t = find_thread(w, ts->thread_id);
    if (t == NULL) t = add_thread(w, ts->thread_id);
    if (t == NULL) {
        w->stats.scopes_lost += n + (ends_run ? m : 0);
        return;
    }
    enter_run(w, t);
    t->last_frame = w->frame_index;
    uint64_t tid = name_thread(w, t);
    uint32_t p = t->n_open; /* kept from the previous frame of the run */
    if (!reserve_scratch(w, (uint64_t)n + m + p) ||
        !reserve((void **)&t->blocks, &t->cap_blocks, (uint64_t)t->n_blocks + n + m + p + 1, sizeof *t->blocks) ||
        (!ends_run && !reserve((void **)&t->open, &t->cap_open, (uint64_t)p + m, sizeof *t->open))) {
        w->stats.scopes_lost += n + m + p;
        t->n_open = 0;
        set_pending(w, t, 0);
        return;
    }
    uint32_t vanished = p ? mark_continued(t, ts, frame_start, w->continued) : 0;

    /* Place in end order: the ended scopes; the kept ones that vanished, ended after the
     * last of their descendants this frame shows; the open ones if the run ends here. */
    int64_t last_continued_end = t->open_until, run_start = w->run_start;
    placer pl = placer_of(t);
    placed *out = w->placed;
    for (uint32_t i = 0; i < n; i++) {
        const vor_reader_scope *s = &ts->scopes[i];
        int64_t a = s->start_ns, b = add_sat(s->start_ns, s->duration_ns);
        if (vanished && a < frame_start && b > last_continued_end) last_continued_end = b;
        uint32_t flags = s->flags & VOR_SCOPE_UNWOUND ? UNWOUND : 0;
        if (a < run_start) a = run_start, flags |= CLIP_START;
        place(&pl, &out[i], a, b, s->depth, flags);
    }
    placed *kept = w->placed + n + m;
    for (uint32_t k = p; vanished && k-- > 0;)
        if (!w->continued[k]) place_open(w, &pl, &t->open[k], 1, last_continued_end, &kept[k]);
    if (ends_run) place_open(w, &pl, ts->scopes + n, m, frame_end, w->placed + n);
    placer_done(w, t, &pl);

    /* Write parents first: vanished ones, the run's open ones (outermost first), then the
     * ended ones. */
    for (uint32_t k = 0; vanished && k < p; k++)
        if (!w->continued[k]) write_scope(w, &t->open[k], tid, &kept[k]);
    if (ends_run)
        for (uint32_t k = 0; k < m; k++) write_scope(w, &ts->scopes[n + k], tid, &w->placed[n + k]);
    for (uint32_t i = vor_scope_preorder(ts->scopes, n, w->next, w->stack); i != VOR_SCOPE_ORDER_END; i = w->next[i])
        write_scope(w, &ts->scopes[i], tid, &w->placed[i]);

    if (ends_run) {
        t->n_open = 0;
        set_pending(w, t, 0);
        return;
    }
    if (m) memcpy(t->open, ts->scopes + n, (size_t)m * sizeof *t->open);
    t->n_open = m;
    t->open_frame = w->frame_index;
    t->open_until = frame_end;
    set_pending(w, t, m > 0);
    compact(w, t, t->open, t->n_open);
}

/* ---- Frames ---------------------------------------------------------------------------------- */

static void write_frame_event(vor_chrome_frames *w, const vor_reader_frame *f, int64_t start, int64_t end) {
    static const char *const cause_keys[8] = {
        NULL,
        "dropped_thread_buffer_full",
        "dropped_too_deep",
        "dropped_frame_full",
        "dropped_thread_refused",
        "dropped_site_table_full",
        "filtered_min_duration",
        "dropped_other_cause",
    };
    uint64_t by_cause[8] = {0};
    for (uint32_t i = 0; i < f->n_drops; i++) {
        uint32_t c = f->drops[i].cause;
        if (c < VOR_DROP_THREAD_BUFFER_FULL || c > VOR_DROP_FILTERED) c = 7;
        by_cause[c] = add_sat_u64(by_cause[c], f->drops[i].count);
    }
    /* No args, as for scopes (speedscope would name each frame by them): the figures are
     * categories, "vor.frame,index:7,scopes:9,dropped:0,overhead_ns:5449[,CAUSE:N...]". */
    char cat[64 + 8 * 48];
    size_t n = (size_t)snprintf(cat, sizeof cat, "%s,index:%llu,scopes:%llu,dropped:%llu,overhead_ns:%lld",
                                FRAME_CATEGORY, (unsigned long long)f->index, (unsigned long long)f->n_scopes,
                                (unsigned long long)f->dropped_scopes, (long long)f->overhead_ns);
    for (uint32_t c = 1; c < 8; c++)
        if (by_cause[c] && n < sizeof cat)
            n += (size_t)snprintf(cat + n, sizeof cat - n, ",%s:%llu", cause_keys[c], (unsigned long long)by_cause[c]);
    vor_chrome_json_complete(w->json, "frame", cat, w->pid, VOR_CHROME_FRAMES_TID, start, end - start, NULL, 0, NULL,
                             0);
    w->stats.frames++;
}

void vor_chrome_frames_end_run(vor_chrome_frames *w) {
    if (!w->in_run) return;
    while (w->n_pending) flush_open(w, &w->threads[w->pending[w->n_pending - 1]]);
    w->in_run = 0;
}

int vor_chrome_frames_write(vor_chrome_frames *w, const vor_reader_frame *f, unsigned flags) {
    int scopes = (flags & VOR_CHROME_FRAME_SCOPES) != 0;
    int64_t start = f->start_ns, end = add_sat(f->start_ns, f->duration_ns);
    if (w->have_frame && start < w->last_frame_end) start = w->last_frame_end; /* the frames row nests too */
    if (end < start) end = start;
    if (w->in_run && (!scopes || f->index != w->last_index + 1 || start > w->run_end)) vor_chrome_frames_end_run(w);
    if (scopes && !w->in_run) {
        w->in_run = 1;
        w->run_id++;
        w->run_start = start;
    }
    w->frame_index = f->index;
    write_frame_event(w, f, start, end);
    if (scopes) {
        int ends_run = (flags & VOR_CHROME_FRAME_ENDS_RUN) != 0;
        w->run_end = end;
        w->last_index = f->index;
        for (uint32_t i = 0; i < f->n_threads; i++) write_thread(w, &f->threads[i], ends_run, start, end);
        /* A thread absent from the frame has no open scope at its end (every scope that
         * overlaps a frame is listed in it): the ones it kept ended unseen (the thread
         * exited). They are written clipped to where they were last seen open. */
        for (uint32_t k = w->n_pending; k-- > 0;) {
            if (k >= w->n_pending) continue;
            thread_state *t = &w->threads[w->pending[k]];
            if (t->open_frame != f->index) flush_open(w, t);
        }
        if (ends_run) vor_chrome_frames_end_run(w);
    }
    for (uint32_t i = 0; i < f->n_values; i++) {
        const char *name = w->names.column ? w->names.column(w->names.ctx, f->values[i].column_id) : NULL;
        if (name) vor_chrome_json_counter(w->json, w->pid, name, start, NULL, f->values[i].value);
    }
    w->have_frame = 1;
    w->last_frame_end = end;
    vor_chrome_json_stats js;
    vor_chrome_json_get_stats(w->json, &js);
    return js.write_errno ? -1 : 0;
}

/* ---- Life ------------------------------------------------------------------------------------ */

vor_chrome_frames *vor_chrome_frames_new(vor_chrome_json *json, const vor_chrome_frames_config *config) {
    vor_chrome_frames *w = calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    w->json = json;
    w->names = config->names;
    w->pid = config->pid;
    w->open_listed = config->open_scopes_listed;
    w->evicted_floor = INT64_MIN;
    vor_chrome_arg args[2] = {
        {"vor_version", VOR_CHROME_ARG_STRING, config->vor_version ? config->vor_version : "", 0, 0, 0},
        {"session_start_unix_us", VOR_CHROME_ARG_INT, NULL, config->wall_epoch_ns / 1000, 0, 0},
    };
    vor_chrome_json_process_name(json, w->pid, config->process_name ? config->process_name : "", args, 2);
    vor_chrome_json_thread_name(json, w->pid, VOR_CHROME_FRAMES_TID, FRAMES_ROW_NAME);
    vor_chrome_json_thread_sort_index(json, w->pid, VOR_CHROME_FRAMES_TID, -1);
    return w;
}

void vor_chrome_frames_get_stats(const vor_chrome_frames *w, vor_chrome_frames_stats *out) {
    *out = w->stats;
}

void vor_chrome_frames_finish(vor_chrome_frames *w) {
    if (w == NULL) return;
    vor_chrome_frames_end_run(w);
    for (uint32_t i = 0; i < w->site_capacity; i++) vor_chrome_prepared_free(&w->sites[i]);
    free(w->sites);
    for (uint32_t i = 0; i < w->n_threads; i++) {
        free(w->threads[i].blocks);
        free(w->threads[i].open);
    }
    free(w->threads);
    free(w->index);
    free(w->pending);
    free(w->placed);
    free(w->next);
    free(w->stack);
    free(w->protect);
    free(w->continued);
    free(w);
}
