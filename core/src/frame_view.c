/* frame_view.c: encodes a frame as a frame view, the flat self-contained layout the
 * panel reads (specified in docs/FORMAT.md, "Frame view").
 *
 * Unlike a capture record, a view carries absolute values and no declarations (ids are
 * resolved through the column/site/thread queries), so any single view can be read on
 * its own: the in-process ring can drop old ones freely and a reader can start
 * anywhere. Arrays are struct-of-arrays and 8-byte aligned so JavaScript can wrap them
 * in typed arrays without copying.
 *
 * One encoder serves both sources: frames decoded from a capture (vor_reader_frame) and
 * live frame records, which vor_frame_record_view() presents in the same shape (a frame
 * record's scopes are vor_reader_scope, so nothing is copied). Version 2 adds what true
 * stacks need: each thread's open scopes, each scope's parent and flags, drops by cause.
 */
#include <string.h>

#include "vor_internal.h"

#define VIEW_MAGIC 0x4D524656u /* "VFRM" little-endian */
#define VIEW_VERSION 2u
#define VIEW_HEADER_BYTES 72u

static size_t align8(size_t n) {
    return (n + 7u) & ~(size_t)7u;
}

void vor_frame_record_view(const vor_frame_record *rec, vor_reader_frame *out, vor_reader_value *values,
                           vor_reader_thread_scopes *threads) {
    memset(out, 0, sizeof *out);
    out->index = rec->index;
    out->start_ns = rec->start_ns;
    out->duration_ns = rec->duration_ns;
    out->overhead_ns = rec->overhead_ns;
    out->dropped_scopes = rec->dropped_scopes;
    uint32_t k = 0;
    for (uint32_t c = 0; c < rec->n_system; c++) {
        if (!(rec->system_present & (1u << c))) continue;
        vor_column col;
        double scale = vor_column_read(c, &col) ? col.scale : 1.0;
        values[k].column_id = c;
        values[k].value = (double)rec->system_raw[c] * scale;
        k++;
    }
    for (uint32_t u = 0; u < rec->n_user; u++) {
        values[k].column_id = rec->user[u].column_id;
        values[k].value = rec->user[u].value;
        k++;
    }
    out->n_values = k;
    out->values = values;
    int has_scopes = 0;
    for (uint32_t t = 0; t < rec->n_threads; t++) {
        threads[t].thread_id = rec->threads[t].thread_id;
        threads[t].n_scopes = rec->threads[t].n_scopes;
        threads[t].scopes = rec->threads[t].scopes;
        threads[t].n_open = rec->threads[t].n_open;
        has_scopes |= rec->threads[t].n_scopes + rec->threads[t].n_open > 0;
    }
    out->n_threads = rec->n_threads;
    out->threads = threads;
    out->n_scopes = rec->n_scopes;
    out->has_flame = has_scopes;
    out->n_drops = rec->n_drops;
    out->drops = rec->drops;
}

/* Scopes of all threads, ended and open. */
static size_t all_scopes(const vor_reader_frame *f, uint32_t *n_open) {
    size_t n = 0;
    uint32_t open = 0;
    for (uint32_t t = 0; t < f->n_threads; t++) {
        n += (size_t)f->threads[t].n_scopes + f->threads[t].n_open;
        open += f->threads[t].n_open;
    }
    *n_open = open;
    return n;
}

size_t vor_frame_view_size(const vor_reader_frame *f, int with_scopes) {
    uint32_t n_open = 0;
    size_t n_scopes = with_scopes ? all_scopes(f, &n_open) : 0;
    size_t n_threads = with_scopes ? f->n_threads : 0;
    size_t size = VIEW_HEADER_BYTES + (size_t)f->n_values * 16u + (size_t)f->n_drops * 16u + n_threads * 12u;
    size = align8(size);
    size += n_scopes * (8u + 8u + 4u + 4u + 4u + 4u);
    return size;
}

static void put_u32(uint8_t *p, uint32_t v) {
    memcpy(p, &v, 4); /* the targets (x86-64, wasm32, arm64) are little-endian */
}

static void put_f64(uint8_t *p, double v) {
    memcpy(p, &v, 8);
}

static uint32_t saturate_u32(uint64_t v) {
    return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)v;
}

void vor_frame_view_encode(const vor_reader_frame *f, int with_scopes, uint8_t *out) {
    size_t size = vor_frame_view_size(f, with_scopes);
    uint32_t n_threads = with_scopes ? f->n_threads : 0;
    uint32_t n_open = 0;
    size_t n_all = with_scopes ? all_scopes(f, &n_open) : 0;
    uint32_t n_ended = (uint32_t)(n_all - n_open);
    memset(out, 0, size);
    put_u32(out + 0, VIEW_MAGIC);
    put_u32(out + 4, VIEW_VERSION);
    put_u32(out + 8, (uint32_t)size);
    put_u32(out + 12, n_all ? 1u : 0u);
    put_f64(out + 16, (double)f->index);
    put_f64(out + 24, (double)f->start_ns);
    put_f64(out + 32, (double)f->duration_ns);
    put_f64(out + 40, (double)f->overhead_ns);
    put_u32(out + 48, f->n_values);
    put_u32(out + 52, n_threads);
    put_u32(out + 56, n_ended);
    put_u32(out + 60, saturate_u32(f->dropped_scopes));
    put_u32(out + 64, n_open);
    put_u32(out + 68, f->n_drops);

    uint8_t *p = out + VIEW_HEADER_BYTES;
    for (uint32_t v = 0; v < f->n_values; v++) {
        put_u32(p, f->values[v].column_id);
        put_f64(p + 8, f->values[v].value);
        p += 16;
    }
    for (uint32_t d = 0; d < f->n_drops; d++) {
        put_u32(p, f->drops[d].cause);
        put_u32(p + 4, f->drops[d].thread_id);
        put_f64(p + 8, (double)f->drops[d].count);
        p += 16;
    }
    for (uint32_t t = 0; t < n_threads; t++) {
        put_u32(p, f->threads[t].thread_id);
        put_u32(p + 4, f->threads[t].n_scopes);
        put_u32(p + 8, f->threads[t].n_open);
        p += 12;
    }
    p = out + align8((size_t)(p - out));
    uint8_t *starts = p;
    uint8_t *durations = starts + n_all * 8u;
    uint8_t *sites = durations + n_all * 8u;
    uint8_t *depths = sites + n_all * 4u;
    uint8_t *parents = depths + n_all * 4u;
    uint8_t *flags = parents + n_all * 4u;
    size_t k = 0;
    for (uint32_t t = 0; t < n_threads; t++) {
        const vor_reader_thread_scopes *tr = &f->threads[t];
        for (uint32_t i = 0; i < tr->n_scopes + tr->n_open; i++, k++) {
            const vor_reader_scope *s = &tr->scopes[i];
            put_f64(starts + k * 8u, (double)s->start_ns);
            put_f64(durations + k * 8u, (double)s->duration_ns);
            put_u32(sites + k * 4u, s->site_id);
            put_u32(depths + k * 4u, s->depth);
            put_u32(parents + k * 4u, s->parent);
            put_u32(flags + k * 4u, s->flags);
        }
    }
}
