/* capture_index_wasm.c: the capture index (core/src/capture_index.h) for the panel in the
 * browser, so a .vor file opened on the page is navigable whole, as `vor serve` makes a served
 * one: the page reads the file once in chunks and feeds them here (the index keeps its entries
 * and value snapshots, not the bytes), then reads any range back from the file itself
 * (File.slice) and asks here for the state record that lets the decoder start there.
 *
 * JS side: wasm/site/capture_decoder.js (createCaptureIndex). Memory: the index's own bound
 * (at most 2^20 entries of 44 bytes, 16 MiB of snapshots), the input chunk, and the state
 * record being built.
 */
#if defined(__EMSCRIPTEN__)

#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "capture_index.h"

#define INDEX_CHUNK_BYTES (1u << 20)

typedef struct vor_wasm_index {
    vor_capture_index *ix;
    uint8_t input[INDEX_CHUNK_BYTES];
    vor_out state;
    vor_index_entries entries;
    const char *refused; /* why input was not taken, when it was not */
} vor_wasm_index;

EMSCRIPTEN_KEEPALIVE vor_wasm_index *vor_wasm_index_new(uint32_t max_entries) {
    vor_wasm_index *w = calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    w->ix = vor_capture_index_open(NULL, max_entries, NULL, 0);
    if (w->ix == NULL) {
        free(w);
        return NULL;
    }
    w->state.max_capacity = 64u << 20;
    return w;
}

EMSCRIPTEN_KEEPALIVE void vor_wasm_index_free(vor_wasm_index *w) {
    if (w == NULL) return;
    vor_capture_index_close(w->ix);
    free(w->state.data);
    free(w);
}

EMSCRIPTEN_KEEPALIVE uint8_t *vor_wasm_index_input(vor_wasm_index *w) {
    return w->input;
}

EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_index_chunk_capacity(void) {
    return INDEX_CHUNK_BYTES;
}

/* Takes `n` bytes from the input buffer and indexes every frame they complete. Returns
 * the frames indexed, or -1 (vor_wasm_index_error says why). */
EMSCRIPTEN_KEEPALIVE int vor_wasm_index_push(vor_wasm_index *w, uint32_t n) {
    if (n > INDEX_CHUNK_BYTES || !vor_capture_index_feed(w->ix, w->input, n)) {
        w->refused = "the index did not take the bytes (a record larger than 64 MiB?)";
        return -1;
    }
    int total = 0;
    for (;;) {
        int k = vor_capture_index_step(w->ix, 4096);
        if (k < 0) return -1;
        if (k == 0) break;
        total += k;
    }
    return total;
}

EMSCRIPTEN_KEEPALIVE const char *vor_wasm_index_error(vor_wasm_index *w) {
    const char *e = vor_capture_index_error(w->ix);
    return e[0] || !w->refused ? e : w->refused;
}

/* Refreshes the entry arrays (call after a push); returns their count. */
EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_index_count(vor_wasm_index *w) {
    vor_capture_index_entries(w->ix, &w->entries);
    return w->entries.count;
}

EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_index_stride(vor_wasm_index *w) {
    return w->entries.stride;
}

/* Pointers to the entry arrays (valid until the next push): 0 offset (u64), 1 index (u64),
 * 2 start (i64), 3 min, 4 max, 5 sum (f32 ns), 6 frames, 7 flame (u32). */
EMSCRIPTEN_KEEPALIVE const void *vor_wasm_index_array(vor_wasm_index *w, int which) {
    const vor_index_entries *e = &w->entries;
    switch (which) {
    case 0: return e->offset;
    case 1: return e->index;
    case 2: return e->start_ns;
    case 3: return e->min_ns;
    case 4: return e->max_ns;
    case 5: return e->sum_ns;
    case 6: return e->frames;
    case 7: return e->flame;
    default: return NULL;
    }
}

/* 1 end record read, 2 random access (format 1.1), 4 the header was read. */
EMSCRIPTEN_KEEPALIVE int vor_wasm_index_flags(vor_wasm_index *w) {
    size_t n;
    return (vor_capture_index_finished(w->ix) ? 1 : 0) | (vor_capture_index_random_access(w->ix) ? 2 : 0) |
           (vor_capture_index_header(w->ix, &n) ? 4 : 0);
}

EMSCRIPTEN_KEEPALIVE double vor_wasm_index_frames(vor_wasm_index *w) {
    return (double)vor_capture_index_frames(w->ix);
}

EMSCRIPTEN_KEEPALIVE double vor_wasm_index_offset(vor_wasm_index *w) {
    return (double)vor_capture_index_offset(w->ix);
}

EMSCRIPTEN_KEEPALIVE const uint8_t *vor_wasm_index_header(vor_wasm_index *w) {
    size_t n;
    return vor_capture_index_header(w->ix, &n);
}

EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_index_header_size(vor_wasm_index *w) {
    size_t n;
    vor_capture_index_header(w->ix, &n);
    return (uint32_t)n;
}

/* Where the state of entry e is computed from: the byte offset (returned, -1 when none) and
 * the snapshot (vor_wasm_index_state's `snapshot`), through *snapshot. */
EMSCRIPTEN_KEEPALIVE double vor_wasm_index_state_source(vor_wasm_index *w, uint32_t e, uint32_t *snapshot) {
    uint64_t from;
    if (!vor_capture_index_state_source(w->ix, e, &from, snapshot)) return -1;
    return (double)from;
}

/* The state record for entry e from `bytes` (the file's bytes from the state source to the
 * entry), held until the next call: its address, its size through *size; NULL on failure. */
EMSCRIPTEN_KEEPALIVE const uint8_t *vor_wasm_index_state(vor_wasm_index *w, uint32_t e, uint32_t snapshot,
                                                         const uint8_t *bytes, uint32_t n, uint32_t *size) {
    w->state.size = 0;
    w->state.failed = 0;
    if (!vor_capture_index_state(w->ix, e, snapshot, bytes, n, &w->state)) return NULL;
    *size = (uint32_t)w->state.size;
    return w->state.data;
}

/* The state record with the declarations read so far and no values (for records found
 * without the index: the newest of a file still being indexed); NULL on failure. */
EMSCRIPTEN_KEEPALIVE const uint8_t *vor_wasm_index_declarations(vor_wasm_index *w, uint32_t *size) {
    w->state.size = 0;
    w->state.failed = 0;
    if (!vor_capture_index_declarations(w->ix, &w->state)) return NULL;
    *size = (uint32_t)w->state.size;
    return w->state.data;
}

/* In bytes [0, n) of a 1.1 capture: the first position where an intact record starts (found by
 * its checks, docs/FORMAT.md 3.2), or -1; *end: the end of the run of intact records from it. */
EMSCRIPTEN_KEEPALIVE int vor_wasm_find_records(const uint8_t *p, uint32_t n, uint32_t *end) {
    uint32_t q = 0;
    size_t len = 0;
    while (q < n && (len = vor_capture_intact_record(p + q, n - q)) == 0) q++;
    if (q >= n) return -1;
    uint32_t e = q;
    while (e < n && (len = vor_capture_intact_record(p + e, n - e)) > 0) e += (uint32_t)len;
    *end = e;
    return (int)q;
}

#endif
