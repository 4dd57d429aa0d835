/* capture_state.c: state records (docs/FORMAT.md §4.8), what a reader that starts in the
 * middle of a capture needs from the records before: every declaration (columns, sites,
 * threads, modules) and each user value with the frame it was read in (so "unchanged"
 * in the frames that follow resolves as it would have).
 *
 * A state record is written from what readers know: the declarations of one reader (an
 * index that read the capture, so the newest name of each id, as every consumer names
 * it) and the user values of another (one that read up to where the new reader starts).
 * Servers and tools put one after the capture's header and before the records they send
 * from the middle of a file; the writer never puts one in a capture. The record is framed
 * like any other (compressed when that is smaller, checked), so a reader takes it in
 * through its usual path.
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "capture_format.h"
#include "capture_index.h"
#include "reader_internal.h"
#include "record_encoder.h"

static void write_declarations(const vor_reader *r, vor_out *out) {
    uint32_t n = 0;
    for (uint32_t id = r->system_count; id < r->column_count; id++)
        if (r->columns[id].name) n++;
    vor_out_varint(out, n);
    for (uint32_t id = r->system_count; id < r->column_count; id++) {
        const vor_reader_column *c = &r->columns[id];
        if (!c->name) continue;
        vor_out_varint(out, id);
        vor_out_string(out, c->name, VOR_CAPTURE_MAX_STRING);
        vor_out_string(out, c->unit ? c->unit : "", VOR_CAPTURE_MAX_STRING);
    }
    n = 0;
    for (uint32_t id = 1; id <= r->site_count; id++)
        if (r->sites[id].name) n++;
    vor_out_varint(out, n);
    for (uint32_t id = 1; id <= r->site_count; id++) {
        const vor_reader_site *s = &r->sites[id];
        if (!s->name) continue;
        vor_out_varint(out, id);
        vor_out_string(out, s->name, VOR_CAPTURE_MAX_STRING);
        vor_out_string(out, s->function ? s->function : "", VOR_CAPTURE_MAX_STRING);
        vor_out_string(out, s->file ? s->file : "", VOR_CAPTURE_MAX_STRING);
        vor_out_varint(out, s->line);
        vor_out_varint(out, s->module_id);
        vor_out_varint(out, s->address);
    }
    n = 0;
    for (uint32_t i = 0; i < r->thread_capacity; i++)
        if (r->threads[i].used && r->threads[i].thread.name) n++;
    vor_out_varint(out, n);
    for (uint32_t i = 0; i < r->thread_capacity; i++) {
        const vor_reader_thread *t = &r->threads[i].thread;
        if (!r->threads[i].used || !t->name) continue;
        vor_out_varint(out, t->id);
        vor_out_string(out, t->name, VOR_CAPTURE_MAX_STRING);
        vor_out_varint(out, t->os_tid);
    }
    n = 0;
    for (uint32_t id = 1; id <= r->module_count; id++)
        if (r->modules[id].path) n++;
    vor_out_varint(out, n);
    for (uint32_t id = 1; id <= r->module_count; id++) {
        const vor_reader_module *m = &r->modules[id];
        if (!m->path) continue;
        vor_out_varint(out, id);
        vor_out_string(out, m->path, VOR_CAPTURE_MAX_STRING);
        vor_out_string(out, m->build_id ? m->build_id : "", VOR_CAPTURE_MAX_STRING);
        vor_out_varint(out, m->load_address);
    }
}

static void write_values(const vor_reader *r, vor_out *out) {
    uint32_t n = 0;
    for (uint32_t id = r->system_count; id < r->column_count; id++)
        if (r->user[id].known) n++;
    vor_out_varint(out, n);
    uint32_t prev = r->system_count - 1;
    for (uint32_t id = r->system_count; id < r->column_count; id++) {
        const reader_user_value *u = &r->user[id];
        if (!u->known) continue;
        vor_out_varint(out, id - prev - 1);
        vor_out_full_f64(out, u->value);
        vor_out_varint(out, u->known_at);
        prev = id;
    }
}

int vor_capture_state_encode(const vor_reader *declarations, const vor_reader *values, uint64_t next_index,
                             vor_out *framed) {
    vor_out raw = {0};
    raw.max_capacity = VOR_READER_MAX_RECORD_BYTES;
    uint64_t flags = 0;
    if (declarations && declarations->state > 0) flags |= VOR_STATE_DECLARATIONS;
    if (values && values->state > 0 && values->user) flags |= VOR_STATE_VALUES;
    vor_out_u8(&raw, VOR_RECORD_STATE);
    vor_out_varint(&raw, flags);
    vor_out_varint(&raw, next_index);
    if (flags & VOR_STATE_DECLARATIONS) write_declarations(declarations, &raw);
    if (flags & VOR_STATE_VALUES) write_values(values, &raw);
    int ok = !raw.failed;
    LZ4_stream_t *lz4 = ok ? LZ4_createStream() : NULL;
    ok = lz4 && vor_frame_capture_record(raw.data, raw.size, lz4, framed);
    LZ4_freeStream(lz4);
    free(raw.data);
    return ok;
}
