/* frame_view.c: encodes a frame record as a frame view, the flat self-contained layout
 * the panel reads (specified in docs/FORMAT.md, "Frame view").
 *
 * Unlike a capture record, a view carries absolute values and no declarations (ids are
 * resolved through the column/site/thread queries), so any single view can be read on
 * its own: the in-process ring can drop old ones freely and a reader can start
 * anywhere. Arrays are struct-of-arrays and 8-byte aligned so JavaScript can wrap them
 * in typed arrays without copying.
 */
#include <string.h>

#include "vor_internal.h"

#define VIEW_MAGIC 0x4D524656u /* "VFRM" little-endian */
#define VIEW_VERSION 1u
#define VIEW_HEADER_BYTES 64u

static size_t align8(size_t n) {
    return (n + 7u) & ~(size_t)7u;
}

static uint32_t count_values(const vor_frame_record *r) {
    uint32_t n = 0;
    for (uint32_t c = 0; c < r->n_system; c++)
        if (r->system_present & (1u << c)) n++;
    return n + r->n_user;
}

size_t vor_frame_view_size(const vor_frame_record *r, int with_scopes) {
    size_t n_scopes = with_scopes ? (size_t)r->n_scopes : 0;
    size_t n_threads = with_scopes ? r->n_threads : 0;
    size_t size = VIEW_HEADER_BYTES + (size_t)count_values(r) * 16u + n_threads * 8u;
    size = align8(size);
    size += n_scopes * (8u + 8u + 4u + 4u);
    return size;
}

static void put_u32(uint8_t *p, uint32_t v) {
    memcpy(p, &v, 4); /* the targets (x86-64, wasm32, arm64) are little-endian */
}

static void put_f64(uint8_t *p, double v) {
    memcpy(p, &v, 8);
}

void vor_frame_view_encode(const vor_frame_record *r, int with_scopes, uint8_t *out) {
    size_t size = vor_frame_view_size(r, with_scopes);
    uint32_t n_values = count_values(r);
    uint32_t n_threads = with_scopes ? r->n_threads : 0;
    uint32_t n_scopes = with_scopes ? (uint32_t)r->n_scopes : 0;
    memset(out, 0, size);
    put_u32(out + 0, VIEW_MAGIC);
    put_u32(out + 4, VIEW_VERSION);
    put_u32(out + 8, (uint32_t)size);
    put_u32(out + 12, with_scopes && n_scopes ? 1u : 0u);
    put_f64(out + 16, (double)r->index);
    put_f64(out + 24, (double)r->start_ns);
    put_f64(out + 32, (double)r->duration_ns);
    put_f64(out + 40, (double)r->overhead_ns);
    put_u32(out + 48, n_values);
    put_u32(out + 52, n_threads);
    put_u32(out + 56, n_scopes);
    put_u32(out + 60, (uint32_t)(r->dropped_scopes > 0xFFFFFFFFu ? 0xFFFFFFFFu : r->dropped_scopes));

    uint8_t *p = out + VIEW_HEADER_BYTES;
    for (uint32_t c = 0; c < r->n_system; c++) {
        if (!(r->system_present & (1u << c))) continue;
        vor_column col;
        double scale = vor_column_read(c, &col) ? col.scale : 1.0;
        put_u32(p, c);
        put_f64(p + 8, (double)r->system_raw[c] * scale);
        p += 16;
    }
    for (uint32_t u = 0; u < r->n_user; u++) {
        put_u32(p, r->user[u].column_id);
        put_f64(p + 8, r->user[u].value);
        p += 16;
    }
    for (uint32_t t = 0; t < n_threads; t++) {
        put_u32(p, r->threads[t].thread_id);
        put_u32(p + 4, r->threads[t].n_scopes);
        p += 8;
    }
    p = out + align8((size_t)(p - out));
    uint8_t *starts = p;
    uint8_t *durations = starts + (size_t)n_scopes * 8u;
    uint8_t *sites = durations + (size_t)n_scopes * 8u;
    uint8_t *depths = sites + (size_t)n_scopes * 4u;
    size_t k = 0;
    for (uint32_t t = 0; t < n_threads; t++) {
        const vor_thread_record *tr = &r->threads[t];
        for (uint32_t i = 0; i < tr->n_scopes; i++, k++) {
            put_f64(starts + k * 8u, (double)tr->scopes[i].start_ns);
            put_f64(durations + k * 8u, (double)tr->scopes[i].duration_ns);
            put_u32(sites + k * 4u, tr->scopes[i].site_id);
            put_u32(depths + k * 4u, tr->scopes[i].depth);
        }
    }
}
