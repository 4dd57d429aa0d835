/* fuzz_reader.c: libFuzzer target for the .vor reader.
 *
 * The input is fed to a memory reader in chunks whose sizes come from the input's first
 * byte (so torn tails and refeeding are exercised), every frame is read and every
 * declaration it refers to is looked up. The reader must never crash, hang or leak,
 * whatever the bytes; ASan/UBSan (in the same build) turn any slip into a failure.
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
        for (uint32_t s = 0; s < f->threads[t].n_scopes; s++) {
            const vor_reader_site *site = vor_reader_get_site(r, f->threads[t].scopes[s].site_id);
            if (site) sink += strlen(site->name) + site->line;
            sink += (uint64_t)f->threads[t].scopes[s].start_ns;
        }
    }
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
    vor_reader_close(r);
    return 0;
}
