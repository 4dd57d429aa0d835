/* fuzz_reader.c: libFuzzer target for the .vor reader.
 *
 * The input is fed to a memory reader in chunks whose sizes come from the input's first
 * byte (so torn tails, refeeding and resynchronisation after damage in a growing input
 * are exercised), every frame is read, every scope (ended and open) and drop looked at,
 * every declaration it refers to looked up (sites' modules too) and every damage report
 * read. The reader must never crash, hang or leak, whatever the bytes; ASan/UBSan (in the
 * same build) turn any slip into a failure. The fuzzing build skips the record checks
 * (not the size checks), so mutated records reach the decoder.
 * Seeds: real captures (see CMakeLists.txt), so mutations start from valid structure.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vor/reader.h"

static void touch_frame(vor_reader *r, const vor_reader_frame *f) {
    volatile uint64_t sink = f->index + (uint64_t)f->duration_ns;
    for (uint32_t i = 0; i < f->n_values; i++) {
        const vor_reader_column *c = vor_reader_get_column(r, f->values[i].column_id);
        if (c) sink += strlen(c->name) + strlen(c->unit);
    }
    for (uint32_t t = 0; t < f->n_threads; t++) {
        const vor_reader_thread *th = vor_reader_get_thread(r, f->threads[t].thread_id);
        if (th && th->name) sink += strlen(th->name);
        uint32_t n = f->threads[t].n_scopes + f->threads[t].n_open;
        for (uint32_t s = 0; s < n; s++) {
            const vor_reader_scope *scope = &f->threads[t].scopes[s];
            const vor_reader_site *site = vor_reader_get_site(r, scope->site_id);
            if (site) {
                sink += strlen(site->name) + site->line;
                const vor_reader_module *m = vor_reader_get_module(r, site->module_id);
                if (m) sink += strlen(m->path) + strlen(m->build_id);
            }
            sink += (uint64_t)scope->start_ns + (uint64_t)scope->duration_ns + scope->flags;
            /* A parent is an index inside the thread's scopes, or one of the two markers. */
            if (scope->parent != VOR_PARENT_NONE && scope->parent != VOR_PARENT_UNKNOWN && scope->parent >= n)
                __builtin_trap();
        }
    }
    for (uint32_t d = 0; d < f->n_drops; d++) sink += f->drops[d].count + f->drops[d].cause;
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    size_t chunk = (size_t)data[0] * 97 + 1; /* 1 .. 24736 bytes per feed */
    vor_reader *r = vor_reader_open_memory();
    if (r == NULL) return 0;
    size_t at = 0;
    vor_read_status st = VOR_READ_NOTHING_YET;
    while (st != VOR_READ_ERROR) {
        vor_reader_frame f;
        while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) touch_frame(r, &f);
        if (st == VOR_READ_ERROR || at >= size) break;
        size_t n = size - at < chunk ? size - at : chunk;
        if (!vor_reader_feed(r, data + at, n)) break;
        at += n;
    }
    (void)vor_reader_get_info(r);
    (void)vor_reader_error(r);
    for (uint32_t i = 0; i < vor_reader_damage_count(r) && i < VOR_READER_MAX_DAMAGE_REPORTS; i++) {
        vor_reader_damage d;
        if (!vor_reader_get_damage(r, i, &d) || strlen(d.problem) == 0) __builtin_trap();
    }
    vor_reader_close(r);
    return 0;
}
