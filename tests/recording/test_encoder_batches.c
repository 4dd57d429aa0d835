/* test_encoder_batches.c: the record encoder writes a flame frame's scopes in batches
 * through unchecked pointer writes (record_encoder.c, bytes.h: vor_put_varint). Its bytes
 * must be exactly those of the checked writer (vor_out_varint per field), the layout of
 * docs/FORMAT.md: varints at every length boundary, and frames whose threads cross the
 * batch size, with deep, unwound, open, clamped and far-apart scopes. The reference here
 * is written field by field with the checked writer, independently of the encoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "capture_format.h"
#include "record_encoder.h"

static void varints_match_the_checked_writer(void **state) {
    (void)state;
    uint64_t values[200];
    uint32_t n = 0;
    values[n++] = 0;
    for (unsigned bits = 1; bits <= 64; bits++) {
        uint64_t top = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
        values[n++] = top;
        if (top < UINT64_MAX) values[n++] = top + 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        vor_out checked = {NULL, 0, 0, 64, 0};
        vor_out_varint(&checked, values[i]);
        uint8_t fast[VOR_VARINT_MAX_BYTES + 8];
        memset(fast, 0xEE, sizeof fast);
        uint8_t *end = vor_put_varint(fast, values[i]);
        assert_int_equal((size_t)(end - fast), checked.size);
        assert_memory_equal(fast, checked.data, checked.size);
        assert_int_equal(fast[checked.size], 0xEE); /* nothing written past it */
        free(checked.data);
    }
}

/* The flame part of a record (docs/FORMAT.md), field by field with the checked writer. */
static void reference_flame(const vor_frame_record *rec, vor_out *out) {
    vor_out_varint(out, rec->n_threads);
    int64_t frame_end = rec->start_ns + rec->duration_ns;
    for (uint32_t t = 0; t < rec->n_threads; t++) {
        const vor_thread_record *tr = &rec->threads[t];
        uint32_t n_open = tr->n_open < VOR_CAPTURE_MAX_OPEN_SCOPES ? tr->n_open : VOR_CAPTURE_MAX_OPEN_SCOPES;
        vor_out_varint(out, tr->thread_id);
        vor_out_varint(out, tr->n_scopes);
        vor_out_varint(out, n_open);
        int64_t prev = rec->start_ns;
        for (uint32_t i = 0; i < tr->n_scopes; i++) {
            const vor_scope_record *s = &tr->scopes[i];
            vor_out_varint(out, s->site_id);
            vor_out_varint(out, (uint64_t)s->depth << 1 | ((s->flags & VOR_SCOPE_UNWOUND) ? 1u : 0u));
            vor_out_svarint(out, s->start_ns - prev);
            vor_out_varint(out, (uint64_t)(s->duration_ns > 0 ? s->duration_ns : 0));
            prev = s->start_ns;
        }
        prev = rec->start_ns;
        for (uint32_t k = 0; k < n_open; k++) {
            const vor_scope_record *s = &tr->scopes[tr->n_scopes + k];
            int64_t start = s->start_ns < frame_end ? s->start_ns : frame_end;
            vor_out_varint(out, s->site_id);
            vor_out_svarint(out, start - prev);
            prev = start;
        }
    }
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void fill(vor_scope_record *s, uint32_t n, int64_t frame_start) {
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = next_random();
        s[i].site_id = (uint32_t)(r % 7 == 0 ? r >> 32 : 1 + r % 300); /* ids of 1 to 5 bytes */
        s[i].depth = (uint32_t)(r >> 8) % 300;
        s[i].flags = (r >> 20) % 5 == 0 ? VOR_SCOPE_UNWOUND : 0;
        int shift = (int)((r >> 24) % 50);
        s[i].start_ns = frame_start + (int64_t)((r >> 30) & ((1ull << shift) - 1)) - (int64_t)(r % 1000);
        s[i].duration_ns = (r >> 40) % 9 == 0 ? -5 : (int64_t)((next_random() >> (r % 64)) & 0x3FFFFFFFFFFFull);
        s[i].parent = VOR_PARENT_NONE;
    }
}

static void flame_frames_match_the_reference(void **state) {
    (void)state;
    /* Threads of 0, 1, 1023, 1024, 1025 and 5000 ended scopes (the batch is 1024), the
     * last with more open scopes than a record lists. */
    static const uint32_t ended[] = {0, 1, 1023, 1024, 1025, 5000};
    static const uint32_t open[] = {3, 0, 1, 17, 0, VOR_CAPTURE_MAX_OPEN_SCOPES + 10};
    enum { THREADS = sizeof ended / sizeof ended[0] };
    vor_thread_record threads[THREADS];
    uint32_t total = 0;
    for (uint32_t t = 0; t < THREADS; t++) total += ended[t] + open[t];
    vor_scope_record *scopes = calloc(total, sizeof *scopes);
    assert_non_null(scopes);
    vor_frame_record rec;
    memset(&rec, 0, sizeof rec);
    rec.index = 7;
    rec.start_ns = 123456789012;
    rec.duration_ns = 16700000;
    uint32_t at = 0;
    for (uint32_t t = 0; t < THREADS; t++) {
        threads[t].thread_id = t * 1000 + 1;
        threads[t].n_scopes = ended[t];
        threads[t].n_open = open[t];
        threads[t].scopes = scopes + at;
        fill(scopes + at, ended[t] + open[t], rec.start_ns);
        rec.n_scopes += ended[t];
        at += ended[t] + open[t];
    }
    rec.n_threads = THREADS;
    rec.threads = threads;

    vor_record_encoder *e = vor_record_encoder_new();
    assert_non_null(e);
    vor_out raw = {NULL, 0, 0, 64u << 20, 0};
    int dropped = 1;
    assert_int_equal(vor_encode_frame(e, &rec, 1, &raw, &dropped), 1);
    assert_int_equal(dropped, 0);
    vor_out want = {NULL, 0, 0, 64u << 20, 0};
    reference_flame(&rec, &want);
    assert_false(want.failed);
    /* The flame part ends the record. */
    assert_true(raw.size > want.size);
    assert_memory_equal(raw.data + raw.size - want.size, want.data, want.size);

    /* Too large for the record's cap: written without its scopes, not cut. */
    vor_out small = {NULL, 0, 0, want.size / 2, 0};
    assert_int_equal(vor_encode_frame(e, &rec, 1, &small, &dropped), 1);
    assert_int_equal(dropped, 1);
    assert_true(small.size < want.size / 2);

    free(raw.data);
    free(want.data);
    free(small.data);
    vor_record_encoder_free(e);
    free(scopes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(varints_match_the_checked_writer),
        cmocka_unit_test(flame_frames_match_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
