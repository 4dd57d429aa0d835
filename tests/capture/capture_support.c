/* capture_support.c: see capture_support.h. */
#include "capture_support.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *temp_path(const char *suffix) {
    static char paths[16][512];
    static unsigned next;
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0') dir = "/tmp";
    char *p = paths[next++ % 16];
    snprintf(p, 512, "%s/vor-test-%d-%u%s", dir, (int)getpid(), next, suffix);
    unlink(p);
    return p;
}

uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

void write_file(const char *path, const uint8_t *bytes, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (size) assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

uint32_t record_offsets(const uint8_t *bytes, size_t size, size_t *offsets, uint32_t cap) {
    assert_true(size >= 16);
    uint32_t body = (uint32_t)bytes[12] | (uint32_t)bytes[13] << 8 | (uint32_t)bytes[14] << 16 | (uint32_t)bytes[15] << 24;
    size_t at = 16 + body + 4; /* fixed part, body, header check */
    uint32_t n = 0;
    while (at + 4 <= size && n < cap) {
        uint32_t len = (uint32_t)bytes[at] | (uint32_t)bytes[at + 1] << 8 | (uint32_t)bytes[at + 2] << 16 |
                       (uint32_t)bytes[at + 3] << 24;
        if (at + 4 + len > size) break;
        offsets[n++] = at;
        at += 4 + len;
    }
    return n;
}

void collect_frames(vor_reader *r, read_capture *out) {
    vor_reader_frame f;
    for (;;) {
        vor_read_status st = vor_reader_next(r, &f);
        out->last = st;
        if (st != VOR_READ_FRAME) {
            snprintf(out->error, sizeof out->error, "%s", vor_reader_error(r));
            return;
        }
        if (out->n_frames == out->capacity) {
            out->capacity = out->capacity ? out->capacity * 2 : 64;
            out->frames = realloc(out->frames, out->capacity * sizeof *out->frames);
            assert_non_null(out->frames);
        }
        read_frame *rf = &out->frames[out->n_frames++];
        memset(rf, 0, sizeof *rf);
        rf->index = f.index;
        rf->start_ns = f.start_ns;
        rf->duration_ns = f.duration_ns;
        rf->overhead_ns = f.overhead_ns;
        rf->dropped = f.dropped_scopes;
        rf->n_values = f.n_values < 32 ? f.n_values : 32;
        memcpy(rf->values, f.values, rf->n_values * sizeof f.values[0]);
        rf->has_flame = f.has_flame;
        rf->n_scopes = f.n_scopes;
        if (f.n_scopes) {
            rf->scopes = calloc(f.n_scopes, sizeof *rf->scopes);
            assert_non_null(rf->scopes);
            uint64_t k = 0;
            for (uint32_t t = 0; t < f.n_threads; t++)
                for (uint32_t i = 0; i < f.threads[t].n_scopes; i++, k++) {
                    const vor_reader_scope *s = &f.threads[t].scopes[i];
                    rf->scopes[k] = (read_scope){f.threads[t].thread_id, s->site_id, s->depth, s->start_ns, s->duration_ns};
                }
        }
    }
}

void read_capture_free(read_capture *c) {
    for (uint32_t i = 0; i < c->n_frames; i++) free(c->frames[i].scopes);
    free(c->frames);
    memset(c, 0, sizeof *c);
}
