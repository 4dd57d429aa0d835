/* record_encoder.c: encodes frame records and the capture header (docs/FORMAT.md).
 *
 * A metrics-only record must average a few dozen bytes on disk, and records are
 * compressed one at a time, so the encoding does most of the work: values are varints
 * of integers (ns, bytes) rather than doubles, slowly moving levels (memory) are stored
 * as the change from the previous frame, user metrics as the XOR of their bits with the
 * previous value (a constant costs one byte), frame index and start are implied by the
 * previous frame, and every name is declared once. Encoding is two-phase: the
 * declarations a record needs are collected, the record is written, and only then is
 * the state (what is declared, previous values) committed, so a record that had to be
 * re-encoded without its scopes leaves no half-declared state behind.
 */
#include "record_encoder.h"

#include <stdio.h>
#include <string.h>

#include "capture_format.h"
#include "crc32c.h"
#include "utf8.h"
#include "vor/reader.h"

#define MAX_COLUMNS (VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS)
#define THREAD_SLOTS VOR_MAX_MAX_THREADS /* a frame has at most this many threads */
#define THREAD_TABLE (2u * VOR_MAX_MAX_THREADS)

typedef struct declared_thread {
    uint32_t thread_id;
    int used;
    char name[VOR_THREAD_NAME_BYTES];
} declared_thread;

struct vor_record_encoder {
    int started;
    uint64_t prev_index;
    int64_t prev_start, prev_duration;
    int64_t prev_system[VOR_SYSTEM_COLUMNS_MAX];
    uint32_t prev_present;
    uint32_t n_system;
    int system_delta[VOR_SYSTEM_COLUMNS_MAX];
    double prev_user[MAX_COLUMNS];
    uint32_t column_declared_version[MAX_COLUMNS]; /* unit_version + 1; 0 = not declared */
    uint8_t site_declared[VOR_MAX_SITES / 8 + 1];
    declared_thread threads[THREAD_TABLE]; /* open addressing by thread id */
    /* Pending declarations of the record being encoded. */
    uint32_t new_columns[MAX_COLUMNS];
    uint32_t n_new_columns;
    uint32_t *new_sites;
    uint32_t n_new_sites, new_sites_capacity;
    uint32_t new_threads[THREAD_SLOTS];
    char new_thread_names[THREAD_SLOTS][VOR_THREAD_NAME_BYTES];
    uint64_t new_thread_tids[THREAD_SLOTS];
    uint32_t n_new_threads;
};

void vor_encode_capture_header(vor_out *out, const vor_capture_header_info *info) {
    vor_out body = {NULL, 0, 0, VOR_CAPTURE_MAX_HEADER_BODY, 0};
    vor_out_varint(&body, info->flame ? VOR_HEADER_FLAME : 0);
    vor_out_u64le(&body, (uint64_t)info->wall_epoch_ns);
    vor_out_varint(&body, 1); /* time unit: 1 ns */
    vor_out_string(&body, info->producer, 255);
    vor_out_string(&body, info->process, 255);
    vor_out_varint(&body, info->pid);
    uint32_t n = 0;
    const vor_system_column_def *defs = vor_system_columns(&n);
    vor_out_varint(&body, n);
    for (uint32_t i = 0; i < n; i++) {
        vor_out_varint(&body, i);
        vor_out_string(&body, defs[i].name, VOR_MAX_NAME_BYTES);
        vor_out_string(&body, defs[i].unit, VOR_MAX_NAME_BYTES);
        vor_out_u8(&body, defs[i].delta ? VOR_ENCODING_DELTA : VOR_ENCODING_ABSOLUTE);
        vor_out_f64le(&body, defs[i].scale);
    }
    size_t start = out->size;
    vor_out_bytes(out, VOR_CAPTURE_MAGIC, VOR_CAPTURE_MAGIC_BYTES);
    vor_out_u16le(out, VOR_FORMAT_VERSION_MAJOR);
    vor_out_u16le(out, VOR_FORMAT_VERSION_MINOR);
    vor_out_u32le(out, (uint32_t)body.size);
    vor_out_bytes(out, body.data, body.size);
    /* The header check: CRC-32C of everything after the magic. */
    if (!out->failed)
        vor_out_u32le(out, vor_crc32c(0, out->data + start + VOR_CAPTURE_MAGIC_BYTES,
                                      out->size - start - VOR_CAPTURE_MAGIC_BYTES));
    if (body.failed) out->failed = 1;
    free(body.data);
}

vor_record_encoder *vor_record_encoder_new(void) {
    vor_record_encoder *e = calloc(1, sizeof *e);
    if (e == NULL) return NULL;
    uint32_t n = 0;
    const vor_system_column_def *defs = vor_system_columns(&n);
    e->n_system = n;
    for (uint32_t i = 0; i < n; i++) e->system_delta[i] = defs[i].delta;
    e->prev_present = (n >= 32) ? 0xFFFFFFFFu : ((1u << n) - 1u);
    return e;
}

void vor_record_encoder_free(vor_record_encoder *e) {
    if (e == NULL) return;
    free(e->new_sites);
    free(e);
}

static int site_is_declared(const vor_record_encoder *e, uint32_t id) {
    return id < VOR_MAX_SITES + 1 && (e->site_declared[id / 8] >> (id % 8) & 1);
}

/* The table entry of a thread id: its declaration, or the free slot it would take. When
 * the table fills up (ids are never reused, a long run can see many), it is cleared:
 * threads are then declared again, which a reader takes as a repeat. */
static declared_thread *thread_entry(vor_record_encoder *e, uint32_t thread_id) {
    for (int attempt = 0; attempt < 2; attempt++) {
        uint32_t h = thread_id * 2654435761u;
        for (uint32_t probe = 0; probe < THREAD_TABLE; probe++) {
            declared_thread *t = &e->threads[(h + probe) % THREAD_TABLE];
            if (!t->used || t->thread_id == thread_id) return t;
        }
        memset(e->threads, 0, sizeof e->threads);
    }
    return &e->threads[0];
}

static declared_thread *find_thread(vor_record_encoder *e, uint32_t thread_id) {
    declared_thread *t = thread_entry(e, thread_id);
    return (t->used && t->thread_id == thread_id) ? t : NULL;
}

/* Phase 1: what this record must declare. */
static int collect_declarations(vor_record_encoder *e, const vor_frame_record *rec, int with_flame) {
    e->n_new_columns = 0;
    e->n_new_sites = 0;
    e->n_new_threads = 0;
    for (uint32_t u = 0; u < rec->n_user; u++) {
        uint32_t id = rec->user[u].column_id;
        vor_column c;
        if (id >= MAX_COLUMNS || !vor_column_read(id, &c)) continue;
        if (e->column_declared_version[id] != c.unit_version + 1) e->new_columns[e->n_new_columns++] = id;
    }
    if (!with_flame) return 1;
    for (uint32_t t = 0; t < rec->n_threads; t++) {
        const vor_thread_record *tr = &rec->threads[t];
        char name[VOR_THREAD_NAME_BYTES];
        uint64_t tid = 0;
        if (!vor_thread_name_by_id(tr->thread_id, name, sizeof name, &tid)) snprintf(name, sizeof name, "thread %u", tr->thread_id);
        declared_thread *d = find_thread(e, tr->thread_id);
        if ((d == NULL || strcmp(d->name, name) != 0) && e->n_new_threads < THREAD_SLOTS) {
            uint32_t k = e->n_new_threads++;
            e->new_threads[k] = tr->thread_id;
            memcpy(e->new_thread_names[k], name, sizeof name);
            e->new_thread_tids[k] = tid;
        }
        for (uint32_t i = 0; i < tr->n_scopes; i++) {
            uint32_t id = tr->scopes[i].site_id;
            if (site_is_declared(e, id)) continue;
            /* Mark provisionally so a site used many times is listed once; undone below
             * if the record is re-encoded without scopes. */
            if (e->n_new_sites == e->new_sites_capacity) {
                uint32_t cap = e->new_sites_capacity ? e->new_sites_capacity * 2 : 64;
                uint32_t *p = realloc(e->new_sites, cap * sizeof *p);
                if (p == NULL) return 0;
                e->new_sites = p;
                e->new_sites_capacity = cap;
            }
            e->new_sites[e->n_new_sites++] = id;
            e->site_declared[id / 8] |= (uint8_t)(1u << (id % 8));
        }
    }
    return 1;
}

static void undo_site_marks(vor_record_encoder *e) {
    for (uint32_t i = 0; i < e->n_new_sites; i++) {
        uint32_t id = e->new_sites[i];
        e->site_declared[id / 8] &= (uint8_t) ~(1u << (id % 8));
    }
    e->n_new_sites = 0;
}

static void write_declarations(vor_record_encoder *e, vor_out *out) {
    vor_out_varint(out, e->n_new_columns);
    for (uint32_t i = 0; i < e->n_new_columns; i++) {
        vor_column c;
        vor_column_read(e->new_columns[i], &c);
        vor_out_varint(out, e->new_columns[i]);
        vor_out_string(out, c.name, VOR_MAX_NAME_BYTES);
        vor_out_string(out, c.unit, VOR_MAX_NAME_BYTES);
    }
    vor_out_varint(out, e->n_new_sites);
    for (uint32_t i = 0; i < e->n_new_sites; i++) {
        const vor_site *s = vor_site_get(e->new_sites[i]);
        vor_out_varint(out, e->new_sites[i]);
        vor_out_string(out, s ? s->name : "", VOR_MAX_NAME_BYTES);
        vor_out_string(out, s ? s->function : "", VOR_MAX_NAME_BYTES);
        vor_out_string(out, s ? s->file : "", VOR_MAX_FILE_BYTES);
        vor_out_varint(out, s ? s->line : 0);
    }
    vor_out_varint(out, e->n_new_threads);
    for (uint32_t i = 0; i < e->n_new_threads; i++) {
        vor_out_varint(out, e->new_threads[i]);
        vor_out_string(out, e->new_thread_names[i], VOR_THREAD_NAME_BYTES);
        vor_out_varint(out, e->new_thread_tids[i]);
    }
}

/* Phase 2: the bytes. */
static void write_frame(vor_record_encoder *e, const vor_frame_record *rec, int with_flame, vor_out *out) {
    int declarations = e->n_new_columns || e->n_new_sites || e->n_new_threads;
    int presence = rec->system_present != e->prev_present;
    int flame = with_flame && rec->n_scopes > 0;
    uint64_t flags = (declarations ? VOR_FRAME_DECLARATIONS : 0) | (presence ? VOR_FRAME_PRESENCE : 0) |
                     (rec->dropped_scopes ? VOR_FRAME_DROPS : 0) | (flame ? VOR_FRAME_FLAME : 0);
    vor_out_u8(out, VOR_RECORD_FRAME);
    vor_out_varint(out, flags);
    uint64_t expected_index = e->started ? e->prev_index + 1 : 0;
    int64_t expected_start = e->started ? e->prev_start + e->prev_duration : 0;
    vor_out_varint(out, rec->index - expected_index);
    vor_out_svarint(out, rec->start_ns - expected_start);
    vor_out_varint(out, (uint64_t)rec->duration_ns);
    vor_out_varint(out, (uint64_t)(rec->overhead_ns > 0 ? rec->overhead_ns : 0));
    if (declarations) write_declarations(e, out);
    if (presence) vor_out_varint(out, rec->system_present);

    /* System values, column 0 (frame_ms) being the duration. */
    for (uint32_t c = 1; c < e->n_system; c++) {
        if (!(rec->system_present & (1u << c))) continue;
        int64_t v = rec->system_raw[c];
        vor_out_svarint(out, e->system_delta[c] ? v - e->prev_system[c] : v);
    }

    /* User values: ids as gaps, values XOR the column's previous value. */
    vor_out_varint(out, rec->n_user);
    uint32_t prev_id = e->n_system - 1;
    for (uint32_t u = 0; u < rec->n_user; u++) {
        uint32_t id = rec->user[u].column_id;
        vor_out_varint(out, id - prev_id - 1);
        vor_out_xor_f64(out, rec->user[u].value, id < MAX_COLUMNS ? e->prev_user[id] : 0.0);
        prev_id = id;
    }

    if (rec->dropped_scopes) vor_out_varint(out, rec->dropped_scopes);

    if (flame) {
        vor_out_varint(out, rec->n_threads);
        for (uint32_t t = 0; t < rec->n_threads; t++) {
            const vor_thread_record *tr = &rec->threads[t];
            vor_out_varint(out, tr->thread_id);
            vor_out_varint(out, tr->n_scopes);
            int64_t prev_start = rec->start_ns;
            for (uint32_t i = 0; i < tr->n_scopes; i++) {
                const vor_scope_record *s = &tr->scopes[i];
                vor_out_varint(out, s->site_id);
                vor_out_varint(out, s->depth);
                vor_out_svarint(out, s->start_ns - prev_start);
                vor_out_varint(out, (uint64_t)(s->duration_ns > 0 ? s->duration_ns : 0));
                prev_start = s->start_ns;
            }
        }
    }
}

static void commit(vor_record_encoder *e, const vor_frame_record *rec) {
    e->started = 1;
    e->prev_index = rec->index;
    e->prev_start = rec->start_ns;
    e->prev_duration = rec->duration_ns;
    for (uint32_t c = 1; c < e->n_system; c++)
        if (rec->system_present & (1u << c)) e->prev_system[c] = rec->system_raw[c];
    e->prev_present = rec->system_present;
    for (uint32_t u = 0; u < rec->n_user; u++)
        if (rec->user[u].column_id < MAX_COLUMNS) e->prev_user[rec->user[u].column_id] = rec->user[u].value;
    for (uint32_t i = 0; i < e->n_new_columns; i++) {
        vor_column c;
        if (vor_column_read(e->new_columns[i], &c)) e->column_declared_version[e->new_columns[i]] = c.unit_version + 1;
    }
    for (uint32_t i = 0; i < e->n_new_threads; i++) {
        declared_thread *d = thread_entry(e, e->new_threads[i]);
        d->used = 1;
        d->thread_id = e->new_threads[i];
        memcpy(d->name, e->new_thread_names[i], sizeof d->name);
    }
    /* Site marks were set while collecting. */
    e->n_new_sites = 0;
}

int vor_encode_frame(vor_record_encoder *e, const vor_frame_record *rec, int with_flame, vor_out *out,
                     int *flame_dropped) {
    *flame_dropped = 0;
    if (!collect_declarations(e, rec, with_flame)) {
        undo_site_marks(e);
        with_flame = 0;
        *flame_dropped = 1;
        if (!collect_declarations(e, rec, 0)) return 0;
    }
    size_t start = out->size;
    write_frame(e, rec, with_flame, out);
    if (out->failed && with_flame) {
        /* Too large with its scopes: keep the metrics, drop the flame frame. */
        undo_site_marks(e);
        out->failed = 0;
        out->size = start;
        *flame_dropped = 1;
        collect_declarations(e, rec, 0);
        write_frame(e, rec, 0, out);
    }
    if (out->failed) {
        out->size = start;
        return 0;
    }
    commit(e, rec);
    return 1;
}

void vor_encode_end(vor_out *out) {
    vor_out_u8(out, VOR_RECORD_END);
}
