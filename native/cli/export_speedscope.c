/* export_speedscope.c: `vor export --format speedscope`: a capture in speedscope's own file
 * format (https://www.speedscope.app/file-format-schema.json), so speedscope opens it with
 * its names, threads and times exactly as vor reads them (its Chrome importer would fold
 * event args into names, and cannot know about compensation).
 *
 *     {"$schema": ..., "shared": {"frames": [{"name", "file", "line"}, ...]},
 *      "profiles": [{"type": "evented", "name": THREAD, "unit": "nanoseconds",
 *                    "startValue", "endValue", "events": [{"type": "O"|"C", "frame", "at"}]}]}
 *
 * One evented profile per thread (named by its newest name), frames shared by all of them:
 * one per distinct (name, file, line) of the sites, the file and line in the frame's own
 * fields and never in its name. Scopes reach this file through the stack engine
 * (stacks.c, its on_thread hook): per flame frame and thread it hands over each scope's
 * contribution, self and total time by the reading rules, compensated unless --raw, and
 * this file only lays them out in time:
 *   - each thread has its own timeline: the recorded clock less the compensation taken
 *     out so far (with --raw, the recorded clock itself). In a frame, top-level scopes
 *     keep their gaps; inside a scope its self-time gaps shrink in proportion to the
 *     compensation (self / recorded self), so a scope is exactly its compensated total
 *     wide, children nest inside their parent, and speedscope's totals and self times per
 *     name are `vor summary`'s;
 *   - runs as in the Chrome writer: consecutive flame frames form a run; a scope open at a
 *     frame's end stays open (no close event) and continues in the next frame of the run
 *     when that frame lists it again (same site, same start): one block across frames. A
 *     run ends at a frame without scopes, a skipped index or a gap in time; scopes still
 *     open then, or at the end, are closed at the end of the last frame that listed them.
 *     A scope that began before the run (or before --frames' first frame) starts at its
 *     start;
 *   - scopes whose parent was not recorded (format 1.0) stand under a
 *     "[parent not recorded]" frame, as in the other outputs.
 * Events of all threads arrive interleaved, frame by frame, while a profile's events must
 * be contiguous: each profile's events collect in a buffer (64 KiB, 16 MiB for all
 * profiles together) spilled to an unnamed temporary file when full, and are copied out at
 * the end. Memory: the buffers, the engine's per-frame scratch plus 37 bytes per scope of
 * the largest thread of a frame, the open scopes of each thread, 16 bytes per spilled
 * chunk, and the frame table (one entry per distinct site).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define SS_BUFFER_BYTES (64u * 1024u)         /* one profile's events before spilling */
#define SS_BUFFERED_MAX (16u * 1024u * 1024u) /* all profiles' buffers together */
#define SS_EVENT_BYTES 64                     /* the longest event text */
#define NONE UINT32_MAX

typedef struct ss_open {
    uint32_t site; /* NONE for the placeholder */
    uint32_t frame;
    int64_t start_ns; /* the scope's recorded start: who it is in the next frame */
} ss_open;

typedef struct ss_chunk {
    uint64_t offset, length;
} ss_chunk;

typedef struct ss_profile {
    uint32_t thread_id;
    char *buf;
    size_t len, cap;
    ss_chunk *chunks;
    uint32_t n_chunks, cap_chunks;
    ss_open *open; /* the scopes opened and not closed, outermost first */
    uint32_t n_open, cap_open;
    uint64_t run_id;            /* the run its open scopes belong to */
    uint64_t last_index;        /* the last frame that listed its scopes */
    int64_t removed;            /* ns the compensation took out of its timeline so far */
    int64_t start_at, last_end; /* its timeline's first frame start, last frame end */
    uint64_t events;
} ss_profile;

typedef struct ss_site {
    const char *reader_name; /* the reader's declaration the frame was made from */
    uint32_t frame;
} ss_site;

typedef struct ss_layout { /* per scope of the thread being laid out */
    int64_t *pos, *gaps, *children, *raw_cursor;
    uint32_t *chain;
    unsigned char *keep; /* stays open at the frame's end */
    uint32_t cap;
} ss_layout;

typedef struct ss_export {
    export_job *job;
    const vor_reader *r;
    name_table *frames; /* frame keys -> frame ids (dense: the shared.frames index) */
    id_map site_map;    /* site id -> sites index */
    ss_site *sites;
    uint32_t n_sites, cap_sites;
    id_map thread_map; /* thread id -> profiles index */
    ss_profile *profiles;
    uint32_t n_profiles, cap_profiles;
    uint32_t placeholder_frame;
    FILE *spill;
    uint64_t spill_size;
    size_t buffered;
    int in_run;
    uint64_t run_id, last_index;
    int64_t run_end;
    int no_memory, spill_errno;
    ss_layout lay;
} ss_export;

/* ---- growing arrays ------------------------------------------------------------------- */

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size) {
    if (need <= *cap) return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) c = c > UINT32_MAX / 2 ? need : c * 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* ---- frames: one per distinct (name, file, line) ---------------------------------------- */

/* A frame's key: "<name length>|<name><file>|<line>", unambiguous whatever the texts hold. */
static uint32_t frame_for(ss_export *ex, const char *name, const char *file, uint32_t line) {
    size_t n = strlen(name), fl = strlen(file);
    char *key = malloc(n + fl + 48);
    if (!key) {
        ex->no_memory = 1;
        return 0;
    }
    snprintf(key, n + fl + 48, "%zu|%s%s|%u", n, name, file, line);
    uint32_t id = name_table_intern(ex->frames, key);
    free(key);
    if (id == NAME_NONE) {
        ex->no_memory = 1;
        return 0;
    }
    return id;
}

static uint32_t site_frame(ss_export *ex, uint32_t site_id) {
    const vor_reader_site *site = vor_reader_get_site(ex->r, site_id);
    const char *declared = site && site->name && site->name[0] ? site->name : NULL;
    uint32_t *slot = id_map_find(&ex->site_map, site_id);
    if (slot && declared && ex->sites[*slot].reader_name == declared) return ex->sites[*slot].frame;
    char fallback[32];
    snprintf(fallback, sizeof fallback, "site %u", site_id);
    uint32_t frame =
        frame_for(ex, declared ? declared : fallback, site && site->file ? site->file : "", site ? site->line : 0);
    if (!slot) {
        if (grow((void **)&ex->sites, &ex->cap_sites, ex->n_sites + 1, sizeof *ex->sites) != 0) return frame;
        slot = id_map_put(&ex->site_map, site_id, ex->n_sites);
        if (!slot) return frame; /* not cached: looked up again next time */
        ex->n_sites++;
    }
    ex->sites[*slot] = (ss_site){declared, frame};
    return frame;
}

/* ---- profiles and their events ----------------------------------------------------------- */

static ss_profile *profile_for(ss_export *ex, uint32_t thread_id) {
    uint32_t *slot = id_map_find(&ex->thread_map, thread_id);
    if (slot) return &ex->profiles[*slot];
    if (grow((void **)&ex->profiles, &ex->cap_profiles, ex->n_profiles + 1, sizeof *ex->profiles) != 0) return NULL;
    slot = id_map_put(&ex->thread_map, thread_id, ex->n_profiles);
    if (!slot) return NULL;
    ss_profile *p = &ex->profiles[ex->n_profiles++];
    memset(p, 0, sizeof *p);
    p->thread_id = thread_id;
    p->run_id = UINT64_MAX;
    return p;
}

static void spill(ss_export *ex, ss_profile *p) {
    if (p->len == 0 || ex->spill_errno) return;
    if (!ex->spill) {
        ex->spill = tmpfile();
        if (!ex->spill) {
            ex->spill_errno = errno ? errno : EIO;
            return;
        }
    }
    if (grow((void **)&p->chunks, &p->cap_chunks, p->n_chunks + 1, sizeof *p->chunks) != 0) {
        ex->no_memory = 1;
        return;
    }
    if (fwrite(p->buf, 1, p->len, ex->spill) != p->len) {
        ex->spill_errno = errno ? errno : EIO;
        return;
    }
    p->chunks[p->n_chunks++] = (ss_chunk){ex->spill_size, p->len};
    ex->spill_size += p->len;
    ex->buffered -= p->len;
    p->len = 0;
}

static void event(ss_export *ex, ss_profile *p, char type, uint32_t frame, int64_t at) {
    if (p->len + SS_EVENT_BYTES > p->cap) {
        if (p->cap >= SS_BUFFER_BYTES || ex->buffered >= SS_BUFFERED_MAX) spill(ex, p);
        if (p->len + SS_EVENT_BYTES > p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 1024;
            if (cap > SS_BUFFER_BYTES) cap = SS_BUFFER_BYTES;
            char *b = realloc(p->buf, cap);
            if (!b) {
                ex->no_memory = 1;
                return;
            }
            p->buf = b;
            p->cap = cap;
        }
    }
    if (ex->buffered >= SS_BUFFERED_MAX) /* many threads: make room in all of them */
        for (uint32_t i = 0; i < ex->n_profiles; i++) spill(ex, &ex->profiles[i]);
    int n = snprintf(p->buf + p->len, p->cap - p->len, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%lld}",
                     p->events ? "," : "", type, frame, (long long)at);
    if (n > 0 && (size_t)n < p->cap - p->len) {
        p->len += (size_t)n;
        ex->buffered += (size_t)n;
        p->events++;
    }
}

static void open_scope(ss_export *ex, ss_profile *p, uint32_t site, uint32_t frame, int64_t start_ns, int64_t at) {
    if (grow((void **)&p->open, &p->cap_open, p->n_open + 1, sizeof *p->open) != 0) {
        ex->no_memory = 1;
        return;
    }
    p->open[p->n_open++] = (ss_open){site, frame, start_ns};
    event(ex, p, 'O', frame, at);
}

static void close_scope(ss_export *ex, ss_profile *p, int64_t at) {
    if (p->n_open == 0) return;
    event(ex, p, 'C', p->open[--p->n_open].frame, at);
}

/* Closes the open scopes above depth `keep`, innermost first, at the end of the last frame
 * that listed them. */
static void close_down_to(ss_export *ex, ss_profile *p, uint32_t keep) {
    while (p->n_open > keep) close_scope(ex, p, p->last_end);
}

/* ---- laying out one thread of one frame ----------------------------------------------------- */

static int reserve_layout(ss_layout *l, uint32_t n) {
    if (n <= l->cap) return 0;
    uint32_t cap = l->cap ? l->cap : 256;
    while (cap < n) cap = cap > UINT32_MAX / 2 ? n : cap * 2;
#define GROW(field)                                                  \
    do {                                                             \
        void *q = realloc(l->field, (size_t)cap * sizeof *l->field); \
        if (!q) return -1;                                           \
        l->field = q;                                                \
    } while (0)
    GROW(pos);
    GROW(gaps);
    GROW(children);
    GROW(raw_cursor);
    GROW(chain);
    GROW(keep);
#undef GROW
    l->cap = cap;
    return 0;
}

/* Saturating arithmetic: crafted captures hold durations near 2^63, and the timeline keeps
 * its order when sums clamp. */
static int64_t sadd(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

static int64_t ssub(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r)) return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

static int64_t clipped_start(const vor_reader_scope *s, int64_t frame_start) {
    return s->start_ns > frame_start ? s->start_ns : frame_start;
}

/* How far into its parent child self-time gaps totalling `gaps` (of the parent's recorded
 * self time `raw_self`) reach once the parent's self time is `self`. */
static int64_t scaled(int64_t gaps, int64_t raw_self, int64_t self) {
    if (gaps <= 0 || raw_self <= 0) return 0;
    if (gaps >= raw_self) return self;
    int64_t v = (int64_t)llround((double)gaps * (double)self / (double)raw_self);
    return v < self ? (v < 0 ? 0 : v) : self;
}

/* Places scope c, the next child of `parent` (NONE: a top-level scope, in the thread's
 * frame whose own place is *root_*). */
static void place(ss_export *ex, const stacks_scratch *k, const vor_reader_thread_scopes *ts, int64_t frame_start,
                  uint32_t parent, uint32_t c, int64_t *root_gaps, int64_t *root_children, int64_t *root_cursor,
                  int64_t root_pos) {
    ss_layout *l = &ex->lay;
    int64_t lo = clipped_start(&ts->scopes[c], frame_start);
    int64_t *gaps = parent == NONE ? root_gaps : &l->gaps[parent];
    int64_t *children = parent == NONE ? root_children : &l->children[parent];
    int64_t *cursor = parent == NONE ? root_cursor : &l->raw_cursor[parent];
    int64_t gap = ssub(lo, *cursor);
    if (gap > 0) *gaps = sadd(*gaps, gap);
    if (parent == NONE) {
        l->pos[c] = sadd(sadd(root_pos, *gaps), *children);
    } else {
        int64_t raw_self = ssub(k->contrib[parent], k->child_contrib[parent]);
        l->pos[c] = sadd(sadd(l->pos[parent], scaled(*gaps, raw_self, k->self[parent])), *children);
    }
    *children = sadd(*children, k->total[c]);
    int64_t end = sadd(lo, k->contrib[c]);
    if (end > *cursor) *cursor = end;
    l->gaps[c] = l->children[c] = 0;
    l->raw_cursor[c] = lo;
}

static void on_thread(void *ctx, const vor_reader_frame *f, const vor_reader_thread_scopes *ts,
                      const stacks_scratch *k) {
    ss_export *ex = ctx;
    uint32_t ne = ts->n_scopes, n = ts->n_scopes + ts->n_open;
    ss_profile *p = profile_for(ex, ts->thread_id);
    if (!p || reserve_layout(&ex->lay, n) != 0) {
        ex->no_memory = 1;
        return;
    }
    ss_layout *l = &ex->lay;
    int64_t fs = f->start_ns, fe = sadd(f->start_ns, f->duration_ns);
    int64_t fs_t = ssub(fs, p->removed); /* the frame's start on the thread's timeline */
    if (p->events == 0 && p->n_open == 0) p->start_at = fs_t;

    /* Scopes this frame continues: the chain of scopes that began before it, matched
     * against what the thread left open at its previous frame, in this run. */
    uint32_t matched = 0;
    int continues = p->run_id == ex->run_id && p->last_index + 1 == f->index;
    if (continues) {
        uint32_t parent = NONE, depth = 0;
        for (;;) {
            uint32_t found = NONE;
            if (parent == NONE) {
                for (uint32_t i = 0; i < n && found == NONE; i++)
                    if (k->parent[i] == VOR_PARENT_NONE && ts->scopes[i].start_ns < fs) found = i;
            } else {
                for (uint32_t c = k->first_child[parent]; c != NONE && found == NONE; c = k->next_sibling[c])
                    if (ts->scopes[c].start_ns < fs) found = c;
            }
            if (found == NONE || depth >= p->n_open || p->open[depth].site != ts->scopes[found].site_id ||
                p->open[depth].start_ns != ts->scopes[found].start_ns)
                break;
            l->chain[depth++] = found;
            parent = found;
        }
        matched = depth;
    }
    close_down_to(ex, p, matched);
    p->run_id = ex->run_id;

    /* Top-level scopes (and those without a recorded parent) in index order, each walked
     * parents first: place, open, then close on the way up unless it stays open. */
    int64_t root_gaps = 0, root_children = 0, root_cursor = fs;
    for (uint32_t r = 0; r < n; r++) {
        if (k->parent[r] != VOR_PARENT_NONE && k->parent[r] != VOR_PARENT_UNKNOWN) continue;
        int unknown = k->parent[r] == VOR_PARENT_UNKNOWN;
        uint32_t next_root = NONE;
        for (uint32_t j = r + 1; j < n && next_root == NONE; j++)
            if (k->parent[j] == VOR_PARENT_NONE || k->parent[j] == VOR_PARENT_UNKNOWN) next_root = j;
        place(ex, k, ts, fs, NONE, r, &root_gaps, &root_children, &root_cursor, fs_t);
        if (unknown && ex->placeholder_frame == NONE) ex->placeholder_frame = frame_for(ex, STACKS_PLACEHOLDER, "", 0);
        if (unknown) open_scope(ex, p, NONE, ex->placeholder_frame, INT64_MIN, l->pos[r]);
        uint32_t node = r, depth = 0;
        for (;;) {
            /* enter node */
            uint32_t parent = node == r ? NONE : k->parent[node];
            int later = node == r ? next_root != NONE : k->next_sibling[node] != NONE;
            l->keep[node] = !unknown && node >= ne && !later && (parent == NONE || l->keep[parent]);
            int continuing = !unknown && depth < matched && l->chain[depth] == node;
            if (!continuing)
                open_scope(ex, p, ts->scopes[node].site_id, site_frame(ex, ts->scopes[node].site_id),
                           ts->scopes[node].start_ns, l->pos[node]);
            if (k->first_child[node] != NONE) {
                uint32_t c = k->first_child[node];
                place(ex, k, ts, fs, node, c, NULL, NULL, NULL, 0);
                node = c;
                depth++;
                continue;
            }
            for (;;) { /* leave node */
                if (!l->keep[node]) close_scope(ex, p, sadd(l->pos[node], k->total[node]));
                if (node == r) break;
                if (k->next_sibling[node] != NONE) {
                    uint32_t c = k->next_sibling[node];
                    place(ex, k, ts, fs, k->parent[node], c, NULL, NULL, NULL, 0);
                    node = c;
                    break;
                }
                node = k->parent[node];
                depth--;
            }
            if (node == r) break;
        }
        if (unknown) close_scope(ex, p, sadd(l->pos[r], k->total[r]));
    }
    if (fe > root_cursor) root_gaps = sadd(root_gaps, ssub(fe, root_cursor));
    int64_t end_t = sadd(sadd(fs_t, root_gaps), root_children);
    p->removed = sadd(p->removed, ssub(ssub(fe, fs), ssub(end_t, fs_t)));
    p->last_end = end_t;
    p->last_index = f->index;
}

/* ---- the file ------------------------------------------------------------------------------- */

static int copy_events(ss_export *ex, ss_profile *p, FILE *out) {
    char buf[16384];
    for (uint32_t c = 0; c < p->n_chunks; c++) {
        if (fseeko(ex->spill, (off_t)p->chunks[c].offset, SEEK_SET) != 0) return -1;
        uint64_t left = p->chunks[c].length;
        while (left > 0) {
            size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
            if (fread(buf, 1, want, ex->spill) != want) return -1;
            fwrite(buf, 1, want, out);
            left -= want;
        }
    }
    fwrite(p->buf, 1, p->len, out);
    return 0;
}

static void write_frame(FILE *out, const char *key) {
    /* "<name length>|<name><file>|<line>" */
    char *bar = strchr(key, '|');
    size_t n = (size_t)strtoull(key, NULL, 10);
    const char *name = bar + 1;
    const char *last_bar = strrchr(key, '|');
    unsigned long line = strtoul(last_bar + 1, NULL, 10);
    char *name_copy = strndup(name, n);
    char *file_copy = strndup(name + n, (size_t)(last_bar - (name + n)));
    fputs("{\"name\":", out);
    json_write_string(out, name_copy ? name_copy : "");
    if (file_copy && file_copy[0]) {
        fputs(",\"file\":", out);
        json_write_string(out, file_copy);
    }
    if (line > 0) fprintf(out, ",\"line\":%lu", line);
    putc('}', out);
    free(name_copy);
    free(file_copy);
}

static int write_file(ss_export *ex) {
    FILE *out = ex->job->out->f;
    const char *path = ex->job->capture->path;
    const char *base = strrchr(path, '/');
    fputs("{\"$schema\":\"" SS_SCHEMA "\",\"exporter\":\"vor export\",\"name\":", out);
    json_write_string(out, base ? base + 1 : path);
    fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
    uint32_t nf = name_table_count(ex->frames);
    for (uint32_t i = 0; i < nf; i++) {
        if (i) putc(',', out);
        write_frame(out, name_table_get(ex->frames, i));
    }
    fputs("]},\"profiles\":[", out);
    for (uint32_t i = 0; i < ex->n_profiles; i++) {
        ss_profile *p = &ex->profiles[i];
        char fallback[32];
        fputs(i ? ",\n{\"type\":\"evented\",\"name\":" : "\n{\"type\":\"evented\",\"name\":", out);
        json_write_string(out, stacks_thread_name(ex->r, p->thread_id, fallback));
        fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":%lld,\"endValue\":%lld,\"events\":[",
                (long long)p->start_at, (long long)p->last_end);
        if (copy_events(ex, p, out) != 0)
            return cli_fail(CLI_EXIT_USAGE, ex->job->cmd, path, "cannot read back the temporary file of events: %s",
                            strerror(errno ? errno : EIO));
        fputs("]}", out);
        if (cli_output_failed(ex->job->out)) return 0; /* reported when the output closes */
    }
    fputs("\n]}\n", out);
    return 0;
}

static void ss_free(ss_export *ex) {
    for (uint32_t i = 0; i < ex->n_profiles; i++) {
        free(ex->profiles[i].buf);
        free(ex->profiles[i].chunks);
        free(ex->profiles[i].open);
    }
    free(ex->profiles);
    free(ex->sites);
    id_map_free(&ex->site_map);
    id_map_free(&ex->thread_map);
    name_table_destroy(ex->frames);
    if (ex->spill) fclose(ex->spill);
    free(ex->lay.pos);
    free(ex->lay.gaps);
    free(ex->lay.children);
    free(ex->lay.raw_cursor);
    free(ex->lay.chain);
    free(ex->lay.keep);
}

int export_speedscope(export_job *job) {
    ss_export ex;
    memset(&ex, 0, sizeof ex);
    ex.job = job;
    ex.r = job->capture->reader;
    ex.frames = name_table_create();
    id_map_init(&ex.site_map, STACKS_MAX_SITES);
    id_map_init(&ex.thread_map, STACKS_MAX_THREADS);
    stacks st;
    memset(&st, 0, sizeof st);
    stacks_options so = {.raw = job->raw,
                         .max_frame_scopes = job->max_frame_scopes,
                         .weight = 1.0,
                         .on_thread = on_thread,
                         .on_thread_ctx = &ex};
    ex.placeholder_frame = NONE; /* made when first needed */
    if (!ex.frames || stacks_init(&st, &so, ex.r) != 0) {
        stacks_free(&st);
        ss_free(&ex);
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }
    int status = 0, got;
    uint64_t flame_frames = 0;
    vor_reader_frame f;
    while ((got = export_next_frame(job, job->capture, &f)) == 1) {
        /* The Chrome writer's runs: a frame without scopes, a skipped index or a gap ends one. */
        int64_t start = f.start_ns, end = sadd(f.start_ns, f.duration_ns);
        if (ex.in_run && (!f.has_flame || f.index != ex.last_index + 1 || start > ex.run_end)) ex.in_run = 0;
        if (f.has_flame) {
            if (!ex.in_run) ex.run_id++;
            ex.in_run = 1;
            ex.last_index = f.index;
            ex.run_end = end;
            flame_frames++;
            status = cli_stacks_add(job->cmd, job->capture, &st, &f);
            if (status != 0) break;
            if (ex.no_memory) {
                status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory at frame %llu",
                                  (unsigned long long)f.index);
                break;
            }
            if (ex.spill_errno) {
                status = cli_fail(CLI_EXIT_IO, job->cmd, job->capture->path, "cannot write a temporary file: %s",
                                  strerror(ex.spill_errno));
                break;
            }
        }
        cli_progress_update(job->progress, job->capture->frames, vor_reader_offset(job->capture->reader));
    }
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == 0) status = export_check_selection(job);
    if (status == 0 && flame_frames == 0)
        status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "%s",
                          job->has_frames ? "no flame frames in the frames selected (--frames)"
                                          : "no flame frames in this capture (record with VOR_RECORD_FLAME=1)");
    if (status == 0) {
        for (uint32_t i = 0; i < ex.n_profiles; i++) close_down_to(&ex, &ex.profiles[i], 0);
        if (ex.no_memory) status = cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }
    if (status == 0 && ex.spill && fflush(ex.spill) != 0)
        status =
            cli_fail(CLI_EXIT_IO, job->cmd, job->capture->path, "cannot write a temporary file: %s", strerror(errno));
    if (status == 0) status = write_file(&ex);
    if (status == 0 && !cli_output_failed(job->out) && st.stats.parent_unknown)
        cli_note(job->cmd, job->capture->path,
                 "%llu scopes ended in a frame where their parent was not recorded (the capture does not list "
                 "the scopes open at that frame's end); they are under \"" STACKS_PLACEHOLDER "\"",
                 (unsigned long long)st.stats.parent_unknown);
    stacks_free(&st);
    ss_free(&ex);
    return status;
}
