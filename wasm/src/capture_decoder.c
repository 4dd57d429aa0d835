/* capture_decoder.c: the panel's capture decoder: the C reader compiled to wasm, turning
 * the bytes of a .vor file (from a vor serve websocket or a dropped file, cut anywhere)
 * into declarations and frame views (docs/FORMAT.md, "Frame view").
 *
 * JS (wasm/site/capture_decoder.js) copies a chunk into the decoder's input buffer and
 * calls vor_wasm_decoder_push; the decoder feeds it to a memory reader, reads every
 * complete frame, and leaves the results in linear memory: for each frame, the JSON of
 * what it declares first (or nothing) and its view. JS copies them out before the next
 * push. Memory is bounded: input chunks are at most DECODER_CHUNK_BYTES, the reader
 * bounds what it holds, and the output buffers are reused from push to push.
 *
 * Damaged records (format 1.1) are skipped by the reader, which reads on; the decoder
 * counts them and describes each (vor_wasm_decoder_damage_count / _damage) so the page
 * can say so. Ids whose declarations were lost are not declared here: the panel names
 * them "site N" / "thread N" itself, and a column with a value comes as "column N" from
 * the reader, replaced when its declaration arrives (so a name change is sent too).
 */
#if defined(__EMSCRIPTEN__)

#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "declarations_json.h"
#include "thread_table.h"
#include "vor_internal.h"

#define DECODER_CHUNK_BYTES (1u << 20)
#define MAX_OUTPUT_BYTES (256u << 20)

typedef struct decoded_frame {
    size_t view_offset, view_size;
    size_t json_offset; /* into `json`; SIZE_MAX = no declarations */
} decoded_frame;

typedef struct vor_wasm_decoder {
    vor_reader *reader;
    uint8_t input[DECODER_CHUNK_BYTES];
    vor_out views, json;
    decoded_frame *frames;
    uint32_t n_frames, frames_capacity;
    uint32_t columns_sent, sites_sent;
    int clock_sent;
    char **column_names, **column_units; /* the name and unit last declared per column */
    uint32_t column_capacity;
    char damage_text[300];
    thread_table threads; /* threads declared, by id (thread_table.h) */
    vor_declarations_json declarations;
    char error[1300];
} vor_wasm_decoder;

static void forget_names(vor_wasm_decoder *d) {
    for (uint32_t i = 0; i < d->column_capacity; i++) {
        free(d->column_names[i]);
        free(d->column_units[i]);
    }
    free(d->column_names);
    free(d->column_units);
    d->column_names = d->column_units = NULL;
    d->column_capacity = 0;
    thread_table_clear(&d->threads);
    d->columns_sent = d->sites_sent = 0;
    d->clock_sent = 0;
}

EMSCRIPTEN_KEEPALIVE vor_wasm_decoder *vor_wasm_decoder_new(void) {
    vor_wasm_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->reader = vor_reader_open_memory();
    d->views.max_capacity = MAX_OUTPUT_BYTES;
    d->json.max_capacity = MAX_OUTPUT_BYTES;
    if (d->reader == NULL) {
        free(d);
        return NULL;
    }
    return d;
}

EMSCRIPTEN_KEEPALIVE void vor_wasm_decoder_reset(vor_wasm_decoder *d) {
    vor_reader_close(d->reader);
    d->reader = vor_reader_open_memory();
    forget_names(d);
    d->n_frames = 0;
    d->error[0] = '\0';
}

EMSCRIPTEN_KEEPALIVE void vor_wasm_decoder_free(vor_wasm_decoder *d) {
    if (d == NULL) return;
    vor_reader_close(d->reader);
    forget_names(d);
    free(d->views.data);
    free(d->json.data);
    free(d->frames);
    vor_declarations_free(&d->declarations);
    free(d);
}

/* Where JS copies the next chunk (at most vor_wasm_decoder_chunk_capacity() bytes). */
EMSCRIPTEN_KEEPALIVE uint8_t *vor_wasm_decoder_input(vor_wasm_decoder *d) {
    return d->input;
}

EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_decoder_chunk_capacity(void) {
    return DECODER_CHUNK_BYTES;
}

static int grow_columns(vor_wasm_decoder *d, uint32_t id) {
    if (id < d->column_capacity) return 1;
    uint32_t cap = d->column_capacity ? d->column_capacity : 64;
    while (cap <= id) cap *= 2;
    char **names = realloc(d->column_names, cap * sizeof *names);
    if (names == NULL) return 0;
    d->column_names = names;
    char **units = realloc(d->column_units, cap * sizeof *units);
    if (units == NULL) return 0;
    d->column_units = units;
    memset(names + d->column_capacity, 0, (cap - d->column_capacity) * sizeof *names);
    memset(units + d->column_capacity, 0, (cap - d->column_capacity) * sizeof *units);
    d->column_capacity = cap;
    return 1;
}

/* 1 if column `id` was not yet sent with this name and unit (it is recorded as sent). */
static int column_changed(vor_wasm_decoder *d, uint32_t id, const char *name, const char *unit) {
    if (!grow_columns(d, id)) return 1;
    if (d->column_names[id] && d->column_units[id] && strcmp(d->column_names[id], name) == 0 &&
        strcmp(d->column_units[id], unit) == 0)
        return 0;
    free(d->column_names[id]);
    free(d->column_units[id]);
    d->column_names[id] = strdup(name);
    d->column_units[id] = strdup(unit);
    return 1;
}

/* Declarations new with this frame: columns (and changed units), sites, threads. */
static void declare(vor_wasm_decoder *d, const vor_reader_frame *f) {
    vor_reader *r = d->reader;
    for (uint32_t v = 0; v < f->n_values; v++) {
        const vor_reader_column *c = vor_reader_get_column(r, f->values[v].column_id);
        if (c && column_changed(d, c->id, c->name, c->unit))
            vor_declarations_column(&d->declarations, c->id, c->name, c->unit, c->is_system);
    }
    uint32_t sites = vor_reader_site_count(r);
    for (uint32_t id = d->sites_sent + 1; id <= sites; id++) {
        const vor_reader_site *s = vor_reader_get_site(r, id);
        if (s) vor_declarations_site(&d->declarations, id, s->name, s->function, s->file, s->line, s->module_id);
    }
    d->sites_sent = sites;
    if (!d->clock_sent) { /* the capture's clock (format 1.1 header; unknown in 1.0) */
        const vor_reader_info *info = vor_reader_get_info(r);
        if (info)
            vor_declarations_clock(&d->declarations, info->clock_resolution_ns, info->clock_source,
                                   info->cross_origin_isolated);
        if (info) vor_declarations_costs(&d->declarations, info->scope_cost_ns, info->function_cost_ns);
        d->clock_sent = 1;
    }
    thread_table_make_room(&d->threads, f->n_threads);
    for (uint32_t t = 0; t < f->n_threads; t++) {
        uint32_t id = f->threads[t].thread_id;
        const vor_reader_thread *th = vor_reader_get_thread(r, id);
        if (th == NULL) continue; /* never declared: the panel names it "thread N" */
        if (!thread_table_seen(&d->threads, id, th->name)) vor_declarations_thread(&d->declarations, id, th->name);
    }
}

static int add_frame(vor_wasm_decoder *d, const vor_reader_frame *f) {
    if (d->n_frames == d->frames_capacity) {
        uint32_t cap = d->frames_capacity ? d->frames_capacity * 2 : 256;
        decoded_frame *p = realloc(d->frames, cap * sizeof *p);
        if (p == NULL) return 0;
        d->frames = p;
        d->frames_capacity = cap;
    }
    decoded_frame *out = &d->frames[d->n_frames];
    vor_declarations_begin(&d->declarations);
    declare(d, f);
    const char *json = vor_declarations_end(&d->declarations);
    out->json_offset = (size_t)-1;
    if (json) {
        out->json_offset = d->json.size;
        vor_out_bytes(&d->json, json, strlen(json) + 1);
    }
    size_t size = vor_frame_view_size(f, 1);
    if (!vor_out_reserve(&d->views, size)) return 0;
    out->view_offset = d->views.size;
    out->view_size = size;
    vor_frame_view_encode(f, 1, d->views.data + d->views.size);
    d->views.size += size;
    if (d->json.failed) return 0;
    d->n_frames++;
    return 1;
}

/* Decodes what `n` new bytes (already copied to the input buffer) complete. Returns the
 * number of frames now available, or -1 on an error (see vor_wasm_decoder_error). */
EMSCRIPTEN_KEEPALIVE int vor_wasm_decoder_push(vor_wasm_decoder *d, uint32_t n) {
    d->n_frames = 0;
    d->views.size = 0;
    d->json.size = 0;
    if (d->error[0]) return -1;
    if (n > DECODER_CHUNK_BYTES || !vor_reader_feed(d->reader, d->input, n)) {
        snprintf(d->error, sizeof d->error, "%s",
                 vor_reader_error(d->reader)[0] ? vor_reader_error(d->reader) : "decoder input refused");
        return -1;
    }
    vor_reader_frame f;
    vor_read_status st;
    while ((st = vor_reader_next(d->reader, &f)) == VOR_READ_FRAME) {
        if (!add_frame(d, &f)) {
            snprintf(d->error, sizeof d->error, "out of memory decoding frame %llu", (unsigned long long)f.index);
            return -1;
        }
    }
    if (st == VOR_READ_ERROR) {
        snprintf(d->error, sizeof d->error, "%s", vor_reader_error(d->reader));
        return d->n_frames ? (int)d->n_frames : -1;
    }
    return (int)d->n_frames;
}

EMSCRIPTEN_KEEPALIVE const uint8_t *vor_wasm_decoder_view(vor_wasm_decoder *d, uint32_t i) {
    return i < d->n_frames ? d->views.data + d->frames[i].view_offset : NULL;
}

EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_decoder_view_size(vor_wasm_decoder *d, uint32_t i) {
    return i < d->n_frames ? (uint32_t)d->frames[i].view_size : 0;
}

/* The declarations JSON to apply before frame i, or NULL. */
EMSCRIPTEN_KEEPALIVE const char *vor_wasm_decoder_declarations(vor_wasm_decoder *d, uint32_t i) {
    if (i >= d->n_frames || d->frames[i].json_offset == (size_t)-1) return NULL;
    return (const char *)d->json.data + d->frames[i].json_offset;
}

EMSCRIPTEN_KEEPALIVE const char *vor_wasm_decoder_error(vor_wasm_decoder *d) {
    return d->error;
}

EMSCRIPTEN_KEEPALIVE int vor_wasm_decoder_finished(vor_wasm_decoder *d) {
    return vor_reader_finished(d->reader);
}

/* Damaged records skipped so far (format 1.1; the capture reads on after each). */
EMSCRIPTEN_KEEPALIVE uint32_t vor_wasm_decoder_damage_count(vor_wasm_decoder *d) {
    uint64_t n = vor_reader_damage_count(d->reader);
    return n > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)n;
}

/* "damaged record at byte N (M bytes skipped): problem" for damaged record i (the first
 * VOR_READER_MAX_DAMAGE_REPORTS are described), or "" (valid until the next call). */
EMSCRIPTEN_KEEPALIVE const char *vor_wasm_decoder_damage(vor_wasm_decoder *d, uint32_t i) {
    vor_reader_damage damage;
    d->damage_text[0] = '\0';
    if (vor_reader_get_damage(d->reader, i, &damage))
        snprintf(d->damage_text, sizeof d->damage_text, "damaged record at byte %llu (%llu bytes skipped): %s",
                 (unsigned long long)damage.offset, (unsigned long long)damage.length, damage.problem);
    return d->damage_text;
}

#endif /* __EMSCRIPTEN__ */
