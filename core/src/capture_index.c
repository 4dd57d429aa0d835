/* capture_index.c: the index of a capture's frame records and the state for reading from
 * any of them (capture_index.h says what is kept and why; docs/FORMAT.md §4.8 the state
 * record). One reader, skipping scopes, reads the capture once, front to back; a growing
 * capture is indexed as it grows (step again later). Memory: the entry arrays (bounded by
 * max_entries: neighbours merge when full), the snapshots (bounded by a budget: every
 * other one goes when full), the header copy and the reader's own (bounded) state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_format.h"
#include "capture_index.h"
#include "platform.h"
#include "reader_internal.h"

/* One snapshot: where reading resumes and the user values known there. */
typedef struct snapshot {
    uint64_t offset;      /* the reader's offset: the next record to read */
    size_t values_at;     /* into snapshot_values */
    uint32_t n_values;
} snapshot;

typedef struct snapshot_value {
    uint32_t column;
    double value;
    uint64_t read_in;
} snapshot_value;

struct vor_capture_index {
    vor_reader *reader;
    int memory;
    char error[1300];
    uint32_t max_entries, capacity, count, stride, last_frames;
    uint64_t frames;
    uint64_t *offset, *index;
    int64_t *start;
    float *min, *max, *sum;
    uint32_t *nframes, *flame;
    snapshot *snaps;
    uint32_t n_snaps, snaps_capacity;
    snapshot_value *values;
    size_t n_values, values_capacity;
    uint64_t snap_every;
    uint8_t *header;
    size_t header_size;
    vor_out pending_header; /* memory input: bytes fed before the header was read */
};

static int index_fail(vor_capture_index *ix, const char *what) {
    snprintf(ix->error, sizeof ix->error, "%s", what);
    return -1;
}

vor_capture_index *vor_capture_index_open(const char *path, uint32_t max_entries, char *err, size_t err_capacity) {
    vor_capture_index *ix = calloc(1, sizeof *ix);
    if (ix == NULL) {
        if (err && err_capacity) snprintf(err, err_capacity, "out of memory");
        return NULL;
    }
    if (max_entries == 0) max_entries = VOR_INDEX_DEFAULT_MAX_ENTRIES;
    if (max_entries < VOR_INDEX_MIN_MAX_ENTRIES) max_entries = VOR_INDEX_MIN_MAX_ENTRIES;
    uint32_t pow2 = VOR_INDEX_MIN_MAX_ENTRIES;
    while (pow2 <= max_entries / 2) pow2 *= 2;
    ix->max_entries = pow2;
    ix->stride = 1;
    ix->snap_every = VOR_INDEX_SNAPSHOT_EVERY;
    ix->memory = path == NULL;
    ix->reader = path ? vor_reader_open(path, err, err_capacity) : vor_reader_open_memory();
    ix->pending_header.max_capacity = VOR_CAPTURE_MAX_HEADER_BODY + 64;
    if (!ix->reader) { /* the reader said why */
        if (!path && err && err_capacity) snprintf(err, err_capacity, "out of memory");
        vor_capture_index_close(ix);
        return NULL;
    }
    vor_reader_set_skip_flame(ix->reader, 1);
    return ix;
}

void vor_capture_index_close(vor_capture_index *ix) {
    if (ix == NULL) return;
    vor_reader_close(ix->reader);
    free(ix->offset);
    free(ix->index);
    free(ix->start);
    free(ix->min);
    free(ix->max);
    free(ix->sum);
    free(ix->nframes);
    free(ix->flame);
    free(ix->snaps);
    free(ix->values);
    free(ix->header);
    free(ix->pending_header.data);
    free(ix);
}

int vor_capture_index_feed(vor_capture_index *ix, const void *bytes, size_t n) {
    if (ix == NULL || !ix->memory || ix->error[0]) return 0;
    if (ix->header == NULL && !ix->pending_header.failed &&
        ix->pending_header.size < ix->pending_header.max_capacity) {
        size_t room = ix->pending_header.max_capacity - ix->pending_header.size;
        vor_out_bytes(&ix->pending_header, bytes, n < room ? n : room);
    }
    return vor_reader_feed(ix->reader, bytes, n);
}

/* Keeps the header's bytes once the reader has read it (the offset is then its end). */
static int keep_header(vor_capture_index *ix) {
    if (ix->header) return 1;
    int h = vor_reader_poll_header(ix->reader);
    if (h <= 0) return h;
    size_t n = (size_t)vor_reader_offset(ix->reader);
    ix->header = malloc(n);
    if (ix->header == NULL) return -1;
    if (ix->memory) {
        if (ix->pending_header.size < n) return -1;
        memcpy(ix->header, ix->pending_header.data, n);
        free(ix->pending_header.data);
        ix->pending_header = (vor_out){0};
    } else {
        const uint8_t *p = vor_reader_input(ix->reader, 0, n);
        if (p == NULL) return -1;
        memcpy(ix->header, p, n);
    }
    ix->header_size = n;
    return 1;
}

/* Room for one more entry: the arrays grow (doubling) up to max_entries. */
static int entry_room(vor_capture_index *ix) {
    if (ix->count < ix->capacity) return 1;
    uint32_t cap = ix->capacity ? ix->capacity * 2 : 1024;
    if (cap > ix->max_entries) cap = ix->max_entries;
#define GROW(field)                                                     \
    do {                                                                \
        void *p = realloc(ix->field, (size_t)cap * sizeof *ix->field); \
        if (p == NULL) return 0;                                        \
        ix->field = p;                                                  \
    } while (0)
    GROW(offset);
    GROW(index);
    GROW(start);
    GROW(min);
    GROW(max);
    GROW(sum);
    GROW(nframes);
    GROW(flame);
#undef GROW
    ix->capacity = cap;
    return 1;
}

/* Merges entries in pairs: the stride doubles, the count halves. */
static void coarsen(vor_capture_index *ix) {
    uint32_t half = ix->count / 2;
    for (uint32_t i = 0; i < half; i++) {
        uint32_t a = 2 * i, b = a + 1;
        ix->offset[i] = ix->offset[a];
        ix->index[i] = ix->index[a];
        ix->start[i] = ix->start[a];
        ix->min[i] = ix->min[a] < ix->min[b] ? ix->min[a] : ix->min[b];
        ix->max[i] = ix->max[a] > ix->max[b] ? ix->max[a] : ix->max[b];
        ix->sum[i] = ix->sum[a] + ix->sum[b];
        ix->nframes[i] = ix->nframes[a] + ix->nframes[b];
        ix->flame[i] = ix->flame[a] + ix->flame[b];
    }
    ix->count = half;
    ix->stride *= 2;
}

/* Drops every other snapshot (the first stays): the interval doubles. */
static void thin_snapshots(vor_capture_index *ix) {
    uint32_t k = 0;
    size_t v = 0;
    for (uint32_t i = 0; i < ix->n_snaps; i += 2) {
        snapshot s = ix->snaps[i];
        memmove(ix->values + v, ix->values + s.values_at, s.n_values * sizeof *ix->values);
        s.values_at = v;
        v += s.n_values;
        ix->snaps[k++] = s;
    }
    ix->n_snaps = k;
    ix->n_values = v;
    ix->snap_every *= 2;
}

static int take_snapshot(vor_capture_index *ix) {
    const vor_reader *r = ix->reader;
    uint32_t n = 0;
    for (uint32_t id = r->system_count; id < r->column_count; id++)
        if (r->user && r->user[id].known) n++;
    size_t bytes = (ix->n_snaps + 1) * sizeof(snapshot) + (ix->n_values + n) * sizeof(snapshot_value);
    if (bytes > VOR_INDEX_SNAPSHOT_BUDGET_BYTES && ix->n_snaps > 1) thin_snapshots(ix);
    if (ix->n_snaps == ix->snaps_capacity) {
        uint32_t cap = ix->snaps_capacity ? ix->snaps_capacity * 2 : 64;
        snapshot *p = realloc(ix->snaps, cap * sizeof *p);
        if (p == NULL) return 0;
        ix->snaps = p;
        ix->snaps_capacity = cap;
    }
    if (ix->n_values + n > ix->values_capacity) {
        size_t cap = ix->values_capacity ? ix->values_capacity : 256;
        while (cap < ix->n_values + n) cap *= 2;
        snapshot_value *p = realloc(ix->values, cap * sizeof *p);
        if (p == NULL) return 0;
        ix->values = p;
        ix->values_capacity = cap;
    }
    snapshot *s = &ix->snaps[ix->n_snaps++];
    s->offset = vor_reader_offset(r);
    s->values_at = ix->n_values;
    s->n_values = n;
    for (uint32_t id = r->system_count; id < r->column_count; id++) {
        if (!r->user || !r->user[id].known) continue;
        ix->values[ix->n_values++] = (snapshot_value){id, r->user[id].value, r->user[id].known_at};
    }
    return 1;
}

static int add_frame(vor_capture_index *ix, const vor_reader_frame *f) {
    float d = (float)f->duration_ns;
    if (ix->count > 0 && ix->last_frames < ix->stride) {
        uint32_t e = ix->count - 1;
        if (d < ix->min[e]) ix->min[e] = d;
        if (d > ix->max[e]) ix->max[e] = d;
        ix->sum[e] += d;
        ix->nframes[e]++;
        ix->flame[e] += f->has_flame ? 1u : 0u;
        ix->last_frames++;
        return 1;
    }
    if (ix->count == ix->max_entries) coarsen(ix);
    if (!entry_room(ix)) return 0;
    uint32_t e = ix->count++;
    ix->offset[e] = vor_reader_frame_offset(ix->reader);
    ix->index[e] = f->index;
    ix->start[e] = f->start_ns;
    ix->min[e] = ix->max[e] = ix->sum[e] = d;
    ix->nframes[e] = 1;
    ix->flame[e] = f->has_flame ? 1u : 0u;
    ix->last_frames = 1;
    return 1;
}

int vor_capture_index_step(vor_capture_index *ix, uint32_t max_frames) {
    if (ix == NULL) return -1;
    if (ix->error[0]) return -1;
    int h = keep_header(ix);
    if (h < 0) {
        const char *e = vor_reader_error(ix->reader);
        return index_fail(ix, e[0] ? e : "out of memory");
    }
    if (h == 0) return 0;
    if (ix->n_snaps == 0 && !take_snapshot(ix)) return index_fail(ix, "out of memory");
    int done = 0;
    vor_reader_frame f;
    while ((uint32_t)done < max_frames) {
        vor_read_status st = vor_reader_next(ix->reader, &f);
        if (st == VOR_READ_ERROR) return index_fail(ix, vor_reader_error(ix->reader));
        if (st == VOR_READ_NOTHING_YET) break;
        if (!add_frame(ix, &f)) return index_fail(ix, "out of memory");
        ix->frames++;
        done++;
        if (ix->frames % ix->snap_every == 0 && !take_snapshot(ix)) return index_fail(ix, "out of memory");
    }
    return done;
}

const char *vor_capture_index_error(const vor_capture_index *ix) {
    return ix ? ix->error : "no index";
}

void vor_capture_index_entries(const vor_capture_index *ix, vor_index_entries *out) {
    *out = (vor_index_entries){ix->count, ix->stride, ix->offset, ix->index, ix->start, ix->min, ix->max, ix->sum,
                               ix->nframes, ix->flame};
}

uint64_t vor_capture_index_frames(const vor_capture_index *ix) {
    return ix->frames;
}

uint64_t vor_capture_index_offset(const vor_capture_index *ix) {
    return vor_reader_offset(ix->reader);
}

int vor_capture_index_finished(const vor_capture_index *ix) {
    return vor_reader_finished(ix->reader);
}

const vor_reader *vor_capture_index_reader(const vor_capture_index *ix) {
    return ix->reader;
}

int vor_capture_index_random_access(const vor_capture_index *ix) {
    const vor_reader_info *info = vor_reader_get_info(ix->reader);
    return info && info->version_minor >= 1;
}

const uint8_t *vor_capture_index_header(const vor_capture_index *ix, size_t *n) {
    *n = ix->header_size;
    return ix->header;
}

long vor_capture_index_pread(const vor_capture_index *ix, void *buf, size_t n, uint64_t offset) {
    if (ix->memory || ix->reader->fd < 0) {
        errno = EBADF;
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t got = pread(ix->reader->fd, (uint8_t *)buf + done, n - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) break;
        done += (size_t)got;
    }
    return (long)done;
}

size_t vor_capture_index_memory(const vor_capture_index *ix) {
    return (size_t)ix->capacity * (3 * 8 + 5 * 4) + ix->snaps_capacity * sizeof(snapshot) +
           ix->values_capacity * sizeof(snapshot_value) + ix->header_size + ix->pending_header.capacity;
}

int64_t vor_capture_index_find(const vor_capture_index *ix, uint64_t frame_index) {
    if (ix->count == 0) return -1;
    uint32_t lo = 0, hi = ix->count; /* the first entry whose index is past frame_index */
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (ix->index[m] <= frame_index) lo = m + 1;
        else hi = m;
    }
    return lo > 0 ? (int64_t)lo - 1 : 0;
}

int vor_capture_index_state_source(const vor_capture_index *ix, uint32_t e, uint64_t *from, uint32_t *snapshot_id) {
    if (e >= ix->count || ix->n_snaps == 0) return 0;
    uint64_t at = ix->offset[e];
    uint32_t lo = 0, hi = ix->n_snaps; /* the last snapshot at or before the entry */
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (ix->snaps[m].offset <= at) lo = m + 1;
        else hi = m;
    }
    if (lo == 0) return 0;
    *snapshot_id = lo - 1;
    *from = ix->snaps[lo - 1].offset;
    return 1;
}

int vor_capture_index_state(const vor_capture_index *ix, uint32_t e, uint32_t snapshot_id, const uint8_t *bytes,
                            size_t n, vor_out *framed) {
    if (e >= ix->count || snapshot_id >= ix->n_snaps || ix->header == NULL) return 0;
    const snapshot *s = &ix->snaps[snapshot_id];
    if (s->offset > ix->offset[e] || n != ix->offset[e] - s->offset) return 0;
    /* A reader that starts from the snapshot's values and reads up to the entry. */
    vor_reader *r = vor_reader_open_memory();
    if (r == NULL) return 0;
    vor_reader_set_skip_flame(r, 1);
    int ok = vor_reader_feed(r, ix->header, ix->header_size) && vor_reader_poll_header(r) == 1;
    for (uint32_t i = 0; ok && i < s->n_values; i++) {
        const snapshot_value *v = &ix->values[s->values_at + i];
        ok = vor_reader_name_undeclared_column(r, v->column);
        if (ok) r->user[v->column] = (reader_user_value){v->value, v->read_in, 1};
    }
    vor_reader_frame f;
    for (size_t at = 0; ok && at < n;) {
        size_t chunk = n - at < (16u << 20) ? n - at : (16u << 20);
        ok = vor_reader_feed(r, bytes + at, chunk);
        at += chunk;
        vor_read_status st = VOR_READ_FRAME;
        while (ok && st == VOR_READ_FRAME) st = vor_reader_next(r, &f);
        if (st == VOR_READ_ERROR) ok = 0;
    }
    ok = ok && vor_capture_state_encode(ix->reader, r, ix->index[e], framed);
    vor_reader_close(r);
    return ok;
}

int vor_capture_index_declarations(const vor_capture_index *ix, vor_out *framed) {
    if (ix->header == NULL) return 0;
    return vor_capture_state_encode(ix->reader, NULL, 0, framed);
}
