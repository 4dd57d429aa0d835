/* record_encoder.c: encodes frame records and the capture header, format 1.1
 * (docs/FORMAT.md), and frames a record for the file.
 *
 * 1.1 records are self-contained, so that a damaged record costs that record only: the
 * frame index and start are absolute, system values absolute, the presence mask is in
 * every record that does not have all columns, and each record is compressed alone. Two
 * things still refer to earlier records, each for one record only: a user value is
 * written in full in the frame where it changed and in the next one, and one byte
 * "unchanged" otherwise (a constant metric costs one byte); a declaration is written in
 * the record of its first use and again in the next record. Losing any one record
 * therefore loses nothing else.
 *
 * Encoding is three-phase: the declarations a record needs are collected, the record is
 * written, and only then is the state (what is declared, what the next record repeats,
 * the values' history) committed, so a record that had to be re-encoded without its
 * scopes, or could not be encoded at all, leaves no half-declared state behind.
 */
#include "record_encoder.h"

#include <lz4.h>
#include <stdio.h>
#include <string.h>

#include "capture_format.h"
#include "crc32c.h"
#include "utf8.h"
#include "vor/reader.h"

#define MAX_COLUMNS (VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS)
#define THREAD_SLOTS VOR_MAX_MAX_THREADS /* a frame has at most this many threads */
#define THREAD_TABLE (2u * VOR_MAX_MAX_THREADS)
#define SITE_BITS (VOR_MAX_SITES / 8 + 1)
#define MODULE_BITS (VOR_CAPTURE_MAX_MODULE_ID / 8 + 1)

typedef struct declared_thread {
    uint32_t thread_id;
    int used;
    char name[VOR_THREAD_NAME_BYTES];
} declared_thread;

typedef struct thread_declaration {
    uint32_t thread_id;
    uint64_t os_tid;
    char name[VOR_THREAD_NAME_BYTES];
} thread_declaration;

typedef struct id_list {
    uint32_t *ids;
    uint32_t n, capacity;
} id_list;

/* A user column's recent history, as of the last record written. */
typedef struct user_history {
    uint64_t bits;      /* its value in the last record that listed it */
    uint64_t listed_in; /* that record's number (records counted from 1) */
    uint32_t same;      /* consecutive frames (consecutive indexes, all written) ending there with this value */
} user_history;

/* One kind of declaration: what this record declares for the first time, and what the
 * previous record declared for the first time (repeated in this one). */
typedef struct declaration_lists {
    id_list fresh, repeat;
} declaration_lists;

struct vor_record_encoder {
    int started;
    uint64_t records; /* records written */
    uint64_t prev_index;
    uint32_t n_system;
    user_history user[MAX_COLUMNS];
    uint32_t column_declared_version[MAX_COLUMNS]; /* unit_version + 1; 0 = not declared */
    uint8_t site_declared[SITE_BITS];
    uint32_t sites_declared_prefix; /* sites 1..this are all declared */
    uint8_t module_declared[MODULE_BITS];
    declared_thread threads[THREAD_TABLE]; /* open addressing by thread id */
    declaration_lists columns, sites, modules;
    /* Bits of the ids already in this record's lists (cleared after each attempt). */
    uint8_t column_listed[MAX_COLUMNS / 8 + 1];
    uint8_t site_listed[SITE_BITS];
    uint8_t module_listed[MODULE_BITS];
    /* Threads: declared afresh in this record, and in the previous one. */
    thread_declaration fresh_threads[THREAD_SLOTS], repeat_threads[THREAD_SLOTS];
    uint32_t n_fresh_threads, n_repeat_threads;
};

/* ---- Header ------------------------------------------------------------------------- */

void vor_encode_capture_header(vor_out *out, const vor_capture_header_info *info) {
    vor_clock_info clock = {0, "", -1};
    vor_clock_get_info(&clock);
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
        vor_out_u8(&body, VOR_ENCODING_ABSOLUTE); /* 1.1: every value absolute */
        vor_out_f64le(&body, defs[i].scale);
    }
    /* 1.1 fields. */
    vor_out_varint(&body, clock.resolution_ns);
    vor_out_string(&body, clock.source ? clock.source : "", VOR_MAX_NAME_BYTES);
    vor_out_u8(&body, clock.cross_origin_isolated < 0   ? VOR_ISOLATION_UNKNOWN
                      : clock.cross_origin_isolated > 0 ? VOR_ISOLATION_YES
                                                        : VOR_ISOLATION_NO);
    vor_out_f64le(&body, vor_scope_self_cost_ns_locked());
    vor_out_f64le(&body, vor_function_span_ns_locked());

    size_t start = out->size;
    vor_out_bytes(out, VOR_CAPTURE_MAGIC, VOR_CAPTURE_MAGIC_BYTES);
    vor_out_u16le(out, VOR_FORMAT_VERSION_MAJOR);
    vor_out_u16le(out, VOR_FORMAT_VERSION_MINOR);
    vor_out_u32le(out, (uint32_t)body.size);
    /* B's own check, then the body, then the check of everything after the magic. */
    if (!out->failed) vor_out_u32le(out, vor_crc32c(0, out->data + start + VOR_CAPTURE_MAGIC_BYTES, 8));
    vor_out_bytes(out, body.data, body.size);
    if (!out->failed)
        vor_out_u32le(out, vor_crc32c(0, out->data + start + VOR_CAPTURE_MAGIC_BYTES,
                                      out->size - start - VOR_CAPTURE_MAGIC_BYTES));
    if (body.failed) out->failed = 1;
    free(body.data);
}

/* ---- State ---------------------------------------------------------------------------- */

vor_record_encoder *vor_record_encoder_new(void) {
    vor_record_encoder *e = calloc(1, sizeof *e);
    if (e == NULL) return NULL;
    uint32_t n = 0;
    vor_system_columns(&n);
    e->n_system = n;
    return e;
}

static void lists_free(declaration_lists *l) {
    free(l->fresh.ids);
    free(l->repeat.ids);
}

void vor_record_encoder_free(vor_record_encoder *e) {
    if (e == NULL) return;
    lists_free(&e->columns);
    lists_free(&e->sites);
    lists_free(&e->modules);
    free(e);
}

static int bit_get(const uint8_t *bits, uint32_t i) {
    return bits[i / 8] >> (i % 8) & 1;
}

static void bit_set(uint8_t *bits, uint32_t i, int on) {
    if (on)
        bits[i / 8] |= (uint8_t)(1u << (i % 8));
    else
        bits[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

static int list_add(id_list *l, uint32_t id) {
    if (l->n == l->capacity) {
        uint32_t cap = l->capacity ? l->capacity * 2 : 64;
        uint32_t *p = realloc(l->ids, cap * sizeof *p);
        if (p == NULL) return 0;
        l->ids = p;
        l->capacity = cap;
    }
    l->ids[l->n++] = id;
    return 1;
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

static int thread_listed(const thread_declaration *list, uint32_t n, uint32_t thread_id) {
    for (uint32_t i = 0; i < n; i++)
        if (list[i].thread_id == thread_id) return 1;
    return 0;
}

int vor_frame_record_has_scopes(const vor_frame_record *rec) {
    if (rec->n_scopes > 0) return 1;
    for (uint32_t t = 0; t < rec->n_threads; t++)
        if (rec->threads[t].n_open > 0) return 1;
    return 0;
}

/* ---- Phase 1: what this record declares ------------------------------------------------ */

/* Forgets the lists of an attempt (nothing persistent was changed by collecting). */
static void forget_attempt(vor_record_encoder *e) {
    for (uint32_t i = 0; i < e->columns.fresh.n; i++) bit_set(e->column_listed, e->columns.fresh.ids[i], 0);
    for (uint32_t i = 0; i < e->sites.fresh.n; i++) bit_set(e->site_listed, e->sites.fresh.ids[i], 0);
    for (uint32_t i = 0; i < e->modules.fresh.n; i++) bit_set(e->module_listed, e->modules.fresh.ids[i], 0);
    e->columns.fresh.n = e->sites.fresh.n = e->modules.fresh.n = 0;
    e->n_fresh_threads = 0;
}

static void collect_thread(vor_record_encoder *e, uint32_t thread_id) {
    if (e->n_fresh_threads == THREAD_SLOTS || thread_listed(e->fresh_threads, e->n_fresh_threads, thread_id)) return;
    thread_declaration d = {thread_id, 0, {0}};
    if (!vor_thread_name_by_id(thread_id, d.name, sizeof d.name, &d.os_tid)) return; /* readers name it "thread N" */
    declared_thread *known = thread_entry(e, thread_id);
    if (known->used && known->thread_id == thread_id && strcmp(known->name, d.name) == 0) return;
    e->fresh_threads[e->n_fresh_threads++] = d;
}

static int collect_site(vor_record_encoder *e, uint32_t id) {
    if (id == 0 || id > VOR_MAX_SITES || bit_get(e->site_declared, id) || bit_get(e->site_listed, id)) return 1;
    const vor_site *s = vor_site_get(id);
    if (s == NULL) return 1; /* readers name it "site N" */
    if (!list_add(&e->sites.fresh, id)) return 0;
    bit_set(e->site_listed, id, 1);
    uint32_t module_id = 0;
    uint64_t address = 0;
    if (vor_site_module_address(s, &module_id, &address) && module_id > 0 &&
        module_id <= VOR_CAPTURE_MAX_MODULE_ID && !bit_get(e->module_declared, module_id) &&
        !bit_get(e->module_listed, module_id)) {
        if (!list_add(&e->modules.fresh, module_id)) return 0;
        bit_set(e->module_listed, module_id, 1);
    }
    return 1;
}

static int collect_declarations(vor_record_encoder *e, const vor_frame_record *rec, int with_flame) {
    forget_attempt(e);
    for (uint32_t u = 0; u < rec->n_user; u++) {
        uint32_t id = rec->user[u].column_id;
        vor_column c;
        if (id >= MAX_COLUMNS || bit_get(e->column_listed, id) || !vor_column_read(id, &c)) continue;
        if (e->column_declared_version[id] == c.unit_version + 1) continue;
        if (!list_add(&e->columns.fresh, id)) return 0;
        bit_set(e->column_listed, id, 1);
    }
    for (uint32_t d = 0; d < rec->n_drops; d++) collect_thread(e, rec->drops[d].thread_id);
    if (!with_flame) return 1;
    for (uint32_t t = 0; t < rec->n_threads; t++) {
        const vor_thread_record *tr = &rec->threads[t];
        collect_thread(e, tr->thread_id);
        /* Every site registered so far is declared (true after the first frames of most
         * programs): the frame's ids need no look, they are declared or never will be. */
        if (e->sites_declared_prefix >= vor_site_count()) continue;
        uint32_t previous = 0; /* a site just looked at needs no second look */
        for (uint32_t i = 0; i < tr->n_scopes + tr->n_open; i++) {
            uint32_t id = tr->scopes[i].site_id;
            if (id == previous) continue;
            previous = id;
            if (!collect_site(e, id)) return 0;
        }
    }
    return 1;
}

/* ---- Phase 2: the bytes ------------------------------------------------------------------ */

static void write_site(vor_out *out, uint32_t id) {
    const vor_site *s = vor_site_get(id);
    uint32_t module_id = 0;
    uint64_t address = 0;
    if (s == NULL || !vor_site_module_address(s, &module_id, &address) || module_id > VOR_CAPTURE_MAX_MODULE_ID)
        module_id = 0, address = 0;
    vor_out_varint(out, id);
    vor_out_string(out, s ? s->name : "", VOR_MAX_NAME_BYTES);
    vor_out_string(out, s ? s->function : "", VOR_MAX_NAME_BYTES);
    vor_out_string(out, s ? s->file : "", VOR_MAX_FILE_BYTES);
    vor_out_varint(out, s ? s->line : 0);
    vor_out_varint(out, module_id);
    vor_out_varint(out, address);
}

static void write_module(vor_out *out, uint32_t id) {
    vor_module_info m = {id, "", "", 0};
    if (!vor_module_get(id, &m)) m.path = m.build_id = "", m.load_address = 0;
    vor_out_varint(out, id);
    vor_out_string(out, m.path ? m.path : "", VOR_MAX_FILE_BYTES);
    vor_out_string(out, m.build_id ? m.build_id : "", VOR_MAX_NAME_BYTES);
    vor_out_varint(out, m.load_address);
}

static void write_column(vor_out *out, uint32_t id) {
    vor_column c;
    if (!vor_column_read(id, &c)) c.name = c.unit = "";
    vor_out_varint(out, id);
    vor_out_string(out, c.name, VOR_MAX_NAME_BYTES);
    vor_out_string(out, c.unit, VOR_MAX_NAME_BYTES);
}

/* Writes a list's fresh ids then its repeats (those not fresh again), with their count. */
static void write_list(vor_out *out, const declaration_lists *l, const uint8_t *listed, void (*write)(vor_out *, uint32_t)) {
    uint32_t n = l->fresh.n;
    for (uint32_t i = 0; i < l->repeat.n; i++) n += !bit_get(listed, l->repeat.ids[i]);
    vor_out_varint(out, n);
    for (uint32_t i = 0; i < l->fresh.n; i++) write(out, l->fresh.ids[i]);
    for (uint32_t i = 0; i < l->repeat.n; i++)
        if (!bit_get(listed, l->repeat.ids[i])) write(out, l->repeat.ids[i]);
}

static void write_thread(vor_out *out, const thread_declaration *d) {
    vor_out_varint(out, d->thread_id);
    vor_out_string(out, d->name, VOR_THREAD_NAME_BYTES);
    vor_out_varint(out, d->os_tid);
}

static int has_declarations(const vor_record_encoder *e) {
    return e->columns.fresh.n || e->columns.repeat.n || e->sites.fresh.n || e->sites.repeat.n || e->n_fresh_threads ||
           e->n_repeat_threads || e->modules.fresh.n || e->modules.repeat.n;
}

static void write_declarations(vor_record_encoder *e, vor_out *out) {
    write_list(out, &e->columns, e->column_listed, write_column);
    write_list(out, &e->sites, e->site_listed, write_site);
    uint32_t n = e->n_fresh_threads;
    for (uint32_t i = 0; i < e->n_repeat_threads; i++)
        n += !thread_listed(e->fresh_threads, e->n_fresh_threads, e->repeat_threads[i].thread_id);
    vor_out_varint(out, n);
    for (uint32_t i = 0; i < e->n_fresh_threads; i++) write_thread(out, &e->fresh_threads[i]);
    for (uint32_t i = 0; i < e->n_repeat_threads; i++)
        if (!thread_listed(e->fresh_threads, e->n_fresh_threads, e->repeat_threads[i].thread_id))
            write_thread(out, &e->repeat_threads[i]);
    write_list(out, &e->modules, e->module_listed, write_module);
}

static uint64_t bits_of(double v) {
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* 1 when the value may be written as "unchanged": it is the same in this frame, the one
 * before and the one before that, and the writer wrote those frames' records in a row. */
static int value_unchanged(const vor_record_encoder *e, const vor_frame_record *rec, uint32_t id, uint64_t bits) {
    if (id >= MAX_COLUMNS || !e->started || rec->index != e->prev_index + 1) return 0;
    const user_history *h = &e->user[id];
    return h->listed_in == e->records && h->bits == bits && h->same >= 2;
}

/* Scopes are written in batches: room for a batch's worst case is reserved once, then its
 * fields go through unchecked pointer writes (bytes.h: vor_put_varint), the same bytes as
 * vor_out_varint at a fraction of the cost (a frame thread writes every recorded scope
 * here). A batch that cannot get its room (the record's cap) fails the record, which is
 * then written without its scopes (vor_encode_frame). */
#define FLAME_BATCH 1024u
#define ENDED_MAX_BYTES (4u * VOR_VARINT_MAX_BYTES)
#define OPEN_MAX_BYTES (2u * VOR_VARINT_MAX_BYTES)

static void write_ended(const vor_scope_record *s, uint32_t n, int64_t frame_start, vor_out *out) {
    int64_t prev_start = frame_start;
    for (uint32_t done = 0; done < n;) {
        uint32_t batch = n - done < FLAME_BATCH ? n - done : FLAME_BATCH;
        if (!vor_out_reserve(out, (size_t)batch * ENDED_MAX_BYTES)) return;
        uint8_t *p = out->data + out->size;
        for (const vor_scope_record *e = s + done, *end = e + batch; e < end; e++) {
            uint64_t depth = (uint64_t)e->depth << 1 | ((e->flags & VOR_SCOPE_UNWOUND) ? 1u : 0u);
            if ((e->site_id | depth) < 0x80) { /* the usual case: one byte each */
                p[0] = (uint8_t)e->site_id;
                p[1] = (uint8_t)depth;
                p += 2;
            } else {
                p = vor_put_varint(p, e->site_id);
                p = vor_put_varint(p, depth);
            }
            p = vor_put_varint(p, vor_zigzag(e->start_ns - prev_start));
            p = vor_put_varint(p, (uint64_t)(e->duration_ns > 0 ? e->duration_ns : 0));
            prev_start = e->start_ns;
        }
        out->size = (size_t)(p - out->data);
        done += batch;
    }
}

static void write_flame(const vor_frame_record *rec, vor_out *out) {
    vor_out_varint(out, rec->n_threads);
    int64_t frame_end = rec->start_ns + rec->duration_ns;
    for (uint32_t t = 0; t < rec->n_threads; t++) {
        const vor_thread_record *tr = &rec->threads[t];
        uint32_t n_open = tr->n_open < VOR_CAPTURE_MAX_OPEN_SCOPES ? tr->n_open : VOR_CAPTURE_MAX_OPEN_SCOPES;
        vor_out_varint(out, tr->thread_id);
        vor_out_varint(out, tr->n_scopes);
        vor_out_varint(out, n_open);
        write_ended(tr->scopes, tr->n_scopes, rec->start_ns, out);
        /* Open scopes: at most VOR_CAPTURE_MAX_OPEN_SCOPES, one reservation. */
        if (!vor_out_reserve(out, (size_t)n_open * OPEN_MAX_BYTES)) return;
        uint8_t *p = out->data + out->size;
        int64_t prev_start = rec->start_ns;
        for (uint32_t k = 0; k < n_open; k++) {
            const vor_scope_record *s = &tr->scopes[tr->n_scopes + k];
            int64_t start = s->start_ns < frame_end ? s->start_ns : frame_end;
            p = vor_put_varint(p, s->site_id);
            p = vor_put_varint(p, vor_zigzag(start - prev_start));
            prev_start = start;
        }
        out->size = (size_t)(p - out->data);
    }
}

static void write_frame(vor_record_encoder *e, const vor_frame_record *rec, int with_flame, vor_out *out) {
    uint32_t all = e->n_system >= 32 ? 0xFFFFFFFFu : (1u << e->n_system) - 1u;
    uint32_t present = rec->system_present & all;
    int declarations = has_declarations(e);
    int drops = rec->dropped_scopes > 0 || rec->n_drops > 0;
    int flame = with_flame && vor_frame_record_has_scopes(rec);
    uint64_t flags = (declarations ? VOR_FRAME_DECLARATIONS : 0) | (present != all ? VOR_FRAME_PRESENCE : 0) |
                     (drops ? VOR_FRAME_DROPS : 0) | (flame ? VOR_FRAME_FLAME : 0);
    vor_out_u8(out, VOR_RECORD_FRAME);
    vor_out_varint(out, flags);
    vor_out_varint(out, rec->index);
    vor_out_varint(out, (uint64_t)(rec->start_ns > 0 ? rec->start_ns : 0));
    vor_out_varint(out, (uint64_t)(rec->duration_ns > 0 ? rec->duration_ns : 0));
    vor_out_varint(out, (uint64_t)(rec->overhead_ns > 0 ? rec->overhead_ns : 0));
    if (declarations) write_declarations(e, out);
    if (present != all) vor_out_varint(out, present);

    /* System values, absolute; column 0 (frame_ms) is the duration. */
    for (uint32_t c = 1; c < e->n_system; c++)
        if (present & (1u << c)) vor_out_svarint(out, rec->system_raw[c]);

    /* User values: ids as gaps; each value in full or "unchanged". */
    vor_out_varint(out, rec->n_user);
    uint32_t prev_id = e->n_system - 1;
    for (uint32_t u = 0; u < rec->n_user; u++) {
        uint32_t id = rec->user[u].column_id;
        vor_out_varint(out, id - prev_id - 1);
        uint64_t bits = bits_of(rec->user[u].value);
        if (value_unchanged(e, rec, id, bits))
            vor_out_u8(out, VOR_VALUE_UNCHANGED);
        else
            vor_out_full_f64(out, rec->user[u].value);
        prev_id = id;
    }

    if (drops) {
        vor_out_varint(out, rec->dropped_scopes);
        vor_out_varint(out, rec->n_drops);
        for (uint32_t d = 0; d < rec->n_drops; d++) {
            vor_out_varint(out, rec->drops[d].cause);
            vor_out_varint(out, rec->drops[d].thread_id);
            vor_out_varint(out, rec->drops[d].count);
        }
    }
    if (flame) write_flame(rec, out);
}

/* ---- Phase 3: commit ------------------------------------------------------------------- */

static void swap_lists(declaration_lists *l) {
    id_list t = l->repeat;
    l->repeat = l->fresh;
    l->fresh = t;
    l->fresh.n = 0;
}

static void commit(vor_record_encoder *e, const vor_frame_record *rec) {
    int consecutive = e->started && rec->index == e->prev_index + 1;
    for (uint32_t u = 0; u < rec->n_user; u++) {
        uint32_t id = rec->user[u].column_id;
        if (id >= MAX_COLUMNS) continue;
        user_history *h = &e->user[id];
        uint64_t bits = bits_of(rec->user[u].value);
        if (consecutive && h->listed_in == e->records && h->bits == bits) {
            if (h->same < 0xFFFFFFFFu) h->same++;
        } else {
            h->same = 1;
        }
        h->bits = bits;
        h->listed_in = e->records + 1;
    }
    e->records++;
    e->started = 1;
    e->prev_index = rec->index;

    for (uint32_t i = 0; i < e->columns.fresh.n; i++) {
        vor_column c;
        uint32_t id = e->columns.fresh.ids[i];
        if (vor_column_read(id, &c)) e->column_declared_version[id] = c.unit_version + 1;
    }
    for (uint32_t i = 0; i < e->sites.fresh.n; i++) bit_set(e->site_declared, e->sites.fresh.ids[i], 1);
    while (e->sites_declared_prefix < VOR_MAX_SITES && bit_get(e->site_declared, e->sites_declared_prefix + 1))
        e->sites_declared_prefix++;
    for (uint32_t i = 0; i < e->modules.fresh.n; i++) bit_set(e->module_declared, e->modules.fresh.ids[i], 1);
    for (uint32_t i = 0; i < e->n_fresh_threads; i++) {
        declared_thread *d = thread_entry(e, e->fresh_threads[i].thread_id);
        d->used = 1;
        d->thread_id = e->fresh_threads[i].thread_id;
        memcpy(d->name, e->fresh_threads[i].name, sizeof d->name);
    }
    /* This record's fresh declarations are the next record's repeats. */
    for (uint32_t i = 0; i < e->columns.fresh.n; i++) bit_set(e->column_listed, e->columns.fresh.ids[i], 0);
    for (uint32_t i = 0; i < e->sites.fresh.n; i++) bit_set(e->site_listed, e->sites.fresh.ids[i], 0);
    for (uint32_t i = 0; i < e->modules.fresh.n; i++) bit_set(e->module_listed, e->modules.fresh.ids[i], 0);
    swap_lists(&e->columns);
    swap_lists(&e->sites);
    swap_lists(&e->modules);
    memcpy(e->repeat_threads, e->fresh_threads, e->n_fresh_threads * sizeof e->fresh_threads[0]);
    e->n_repeat_threads = e->n_fresh_threads;
    e->n_fresh_threads = 0;
}

int vor_encode_frame(vor_record_encoder *e, const vor_frame_record *rec, int with_flame, vor_out *out,
                     int *flame_dropped) {
    *flame_dropped = 0;
    size_t start = out->size;
    if (with_flame) {
        if (collect_declarations(e, rec, 1)) {
            write_frame(e, rec, 1, out);
            if (!out->failed) {
                commit(e, rec);
                return 1;
            }
        }
        /* Too large with its scopes (or no memory for its declarations): keep the metrics. */
        out->failed = 0;
        out->size = start;
        *flame_dropped = 1;
    }
    if (collect_declarations(e, rec, 0)) {
        write_frame(e, rec, 0, out);
        if (!out->failed) {
            commit(e, rec);
            return 1;
        }
    }
    forget_attempt(e);
    out->size = start;
    return 0;
}

void vor_encode_end(vor_out *out) {
    vor_out_u8(out, VOR_RECORD_END);
}

/* ---- Framing ---------------------------------------------------------------------------- */

int vor_frame_capture_record(const uint8_t *raw, size_t n, void *lz4_stream, vor_out *framed) {
    framed->size = 0;
    int bound = LZ4_compressBound((int)n);
    if (bound <= 0 || !vor_out_reserve(framed, VOR_RECORD_HEAD_BYTES + 10 + (size_t)bound)) return 0;
    uint8_t *p = framed->data;
    /* Compressed: [varint D][block], kept only when smaller than the record itself. */
    uint8_t d[10];
    size_t d_len = 0;
    for (uint64_t v = n; ; v >>= 7) {
        d[d_len++] = (uint8_t)(v >= 0x80 ? (v & 0x7F) | 0x80 : v);
        if (v < 0x80) break;
    }
    uint8_t *block = p + VOR_RECORD_HEAD_BYTES + d_len;
    /* A stream reset before each record: a block that refers to nothing before it, without
     * the 16 KiB clear that LZ4_compress_fast_extState does on every call. */
    LZ4_resetStream_fast((LZ4_stream_t *)lz4_stream);
    int c = LZ4_compress_fast_continue((LZ4_stream_t *)lz4_stream, (const char *)raw, (char *)block, (int)n, bound, 1);
    size_t body;
    uint32_t size_field;
    if (c > 0 && d_len + (size_t)c < n) {
        memcpy(p + VOR_RECORD_HEAD_BYTES, d, d_len);
        body = d_len + (size_t)c;
        size_field = (uint32_t)body | VOR_RECORD_COMPRESSED;
    } else {
        memcpy(p + VOR_RECORD_HEAD_BYTES, raw, n);
        body = n;
        size_field = (uint32_t)body;
    }
    vor_put_u32le(p, size_field);
    uint32_t size_check = vor_crc32c(0, p, 4) & 0xFFFFu;
    p[4] = (uint8_t)size_check;
    p[5] = (uint8_t)(size_check >> 8);
    uint32_t check = vor_crc32c(vor_crc32c(0, p, 6), p + VOR_RECORD_HEAD_BYTES, body);
    vor_put_u32le(p + 6, check);
    framed->size = VOR_RECORD_HEAD_BYTES + body;
    return 1;
}
