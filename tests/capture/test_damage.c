/* test_damage.c: a damaged byte costs the record it hits, and nothing else (format 1.1,
 * docs/FORMAT.md §3.2). A capture written by the real writer (flame frames on every second
 * frame, threads, renames, late metrics, constant ones) is damaged in every byte of every
 * record, and in every pair of bytes of a sample of records; each damaged copy must read as
 * the original minus at most the hit record, with the damage reported at that record's
 * offset, and never an error or a crash (the ASan+UBSan build runs this too). Damage fed in
 * small pieces, as a growing file, resynchronises the same way; a torn tail still waits;
 * damage in a 1.0 capture stays an error. */
#include "bytes.h"
#include "capture_support.h"
#include "crc32c.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAMES 14
#define MAX_RECORDS 64

typedef struct damage_case {
    uint8_t *bytes;
    size_t size;
    size_t offsets[MAX_RECORDS];
    uint32_t n_records;
    uint64_t digest[FRAMES];
} damage_case;

static damage_case sample;

/* What one read of a (damaged) capture gave. */
typedef struct read_result {
    vor_read_status last;
    uint32_t n_frames;
    uint64_t index[FRAMES + 4];
    uint64_t digest[FRAMES + 4];
    uint64_t damage_count;
    vor_reader_damage first_damage; /* its problem points into `problem` */
    char problem[128];
    int finished;
    char error[256];
} read_result;

static void read_all(vor_reader *r, read_result *out) {
    vor_reader_frame f;
    vor_read_status st;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        if (out->n_frames < FRAMES + 4) {
            out->index[out->n_frames] = f.index;
            out->digest[out->n_frames] = frame_digest(r, &f);
        }
        out->n_frames++;
    }
    out->last = st;
    snprintf(out->error, sizeof out->error, "%s", vor_reader_error(r));
    out->damage_count = vor_reader_damage_count(r);
    if (vor_reader_get_damage(r, 0, &out->first_damage)) {
        snprintf(out->problem, sizeof out->problem, "%s", out->first_damage.problem);
        out->first_damage.problem = out->problem;
    }
    out->finished = vor_reader_finished(r);
}

/* Reads bytes fed in pieces of `chunk` (0: all at once), calling next after each. */
static void read_memory(const uint8_t *bytes, size_t size, size_t chunk, read_result *out) {
    memset(out, 0, sizeof *out);
    vor_reader *r = vor_reader_open_memory();
    assert_non_null(r);
    if (chunk == 0) chunk = size;
    for (size_t at = 0; at < size; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        assert_int_equal(vor_reader_feed(r, bytes + at, n), 1);
        read_all(r, out);
    }
    vor_reader_close(r);
}

static void make_sample(void) {
    if (sample.bytes) return;
    const char *path = temp_path(".vor");
    setenv("VOR_RECORD_EVERY", "2", 1);
    start_recording(path, 1);
    capture_workload(FRAMES);
    vor_shutdown();
    session_teardown();
    unsetenv("VOR_RECORD_EVERY");
    sample.bytes = read_file(path, &sample.size);
    unlink(path);
    sample.n_records = record_offsets(sample.bytes, sample.size, sample.offsets, MAX_RECORDS);
    assert_int_equal(sample.n_records, FRAMES + 1); /* and the end record */
    print_message("sample capture: %zu bytes, %u records (first %zu bytes, flame %zu, metrics-only %zu)\n", sample.size,
                  sample.n_records, sample.offsets[1] - sample.offsets[0], sample.offsets[7] - sample.offsets[6],
                  sample.offsets[8] - sample.offsets[7]);
    read_result all;
    read_memory(sample.bytes, sample.size, 0, &all);
    assert_int_equal(all.last, VOR_READ_NOTHING_YET);
    assert_int_equal(all.n_frames, FRAMES);
    assert_int_equal(all.damage_count, 0);
    assert_int_equal(all.finished, 1);
    for (uint32_t i = 0; i < FRAMES; i++) {
        assert_int_equal(all.index[i], i);
        sample.digest[i] = all.digest[i];
    }
}

static size_t record_end(uint32_t k) {
    return k + 1 < sample.n_records ? sample.offsets[k + 1] : sample.size;
}

/* The read of a copy damaged inside record k lost that record only, and said where. */
static void expect_only_record_lost(const read_result *got, uint32_t k, const char *what) {
    uint32_t want_frames = k < FRAMES ? FRAMES - 1 : FRAMES;
    int ok = got->last == VOR_READ_NOTHING_YET && got->n_frames == want_frames && got->damage_count == 1 &&
             got->first_damage.offset == sample.offsets[k] && got->finished == (k < FRAMES);
    for (uint32_t i = 0, j = 0; ok && i < FRAMES; i++) {
        if (i == k) continue;
        ok = got->index[j] == i && got->digest[j] == sample.digest[i];
        j++;
    }
    if (!ok)
        fail_msg("%s (record %u at byte %zu): status %d, %u frames, %llu damaged (first at %llu: %s), finished %d, %s",
                 what, k, sample.offsets[k], got->last, got->n_frames, (unsigned long long)got->damage_count,
                 (unsigned long long)got->first_damage.offset, got->damage_count ? got->first_damage.problem : "-",
                 got->finished, got->error);
}

static uint8_t pattern_for(size_t i, unsigned salt) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull + salt * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    uint8_t p = (uint8_t)(x * 0xBF58476D1CE4E5B9ull >> 56);
    return p ? p : 0x5A;
}

static void every_damaged_byte_costs_its_record_only(void **state) {
    (void)state;
    make_sample();
    uint8_t *bad = malloc(sample.size);
    assert_non_null(bad);
    for (uint32_t k = 0; k < sample.n_records; k++) {
        for (size_t i = sample.offsets[k]; i < record_end(k); i++) {
            for (unsigned salt = 0; salt < 3; salt++) {
                uint8_t p = salt == 0 ? 0xFF : salt == 1 ? (uint8_t)(1u << (i % 8)) : pattern_for(i, salt);
                memcpy(bad, sample.bytes, sample.size);
                bad[i] ^= p;
                read_result got;
                read_memory(bad, sample.size, 0, &got);
                char what[64];
                snprintf(what, sizeof what, "byte %zu ^ 0x%02x", i, p);
                expect_only_record_lost(&got, k, what);
            }
        }
    }
    free(bad);
}

static void every_two_damaged_bytes_of_a_sample_of_records_cost_that_record_only(void **state) {
    (void)state;
    make_sample();
    /* The first record (all the declarations), a flame frame with a new thread, a
     * metrics-only one that repeats declarations, and the end record. */
    const uint32_t picks[] = {0, 6, 7, FRAMES};
    uint8_t *bad = malloc(sample.size);
    assert_non_null(bad);
    for (size_t p = 0; p < sizeof picks / sizeof picks[0]; p++) {
        uint32_t k = picks[p];
        size_t from = sample.offsets[k], to = record_end(k);
        for (size_t i = from; i < to; i++) {
            for (size_t j = i + 1; j < to; j++) {
                memcpy(bad, sample.bytes, sample.size);
                bad[i] ^= pattern_for(i, (unsigned)j);
                bad[j] ^= pattern_for(j, (unsigned)i);
                read_result got;
                read_memory(bad, sample.size, 0, &got);
                char what[64];
                snprintf(what, sizeof what, "bytes %zu and %zu", i, j);
                expect_only_record_lost(&got, k, what);
            }
        }
    }
    free(bad);
}

/* Damage met while the input arrives in pieces (a growing file, a websocket): the reader
 * waits inside the damage and resynchronises as the bytes come, with the same result. */
static void damage_in_a_growing_input_resynchronises_the_same(void **state) {
    (void)state;
    make_sample();
    uint8_t *bad = malloc(sample.size);
    assert_non_null(bad);
    const uint32_t picks[] = {1, 6, 9};
    for (size_t p = 0; p < sizeof picks / sizeof picks[0]; p++) {
        uint32_t k = picks[p];
        for (size_t at = 0; at < 10; at += 3) { /* size, size check, record check */
            for (size_t chunk = 1; chunk <= 61; chunk += 12) {
                memcpy(bad, sample.bytes, sample.size);
                bad[sample.offsets[k] + at] ^= 0x24;
                read_result got;
                read_memory(bad, sample.size, chunk, &got);
                char what[64];
                snprintf(what, sizeof what, "head byte %zu fed in %zu-byte pieces", at, chunk);
                expect_only_record_lost(&got, k, what);
            }
        }
    }
    /* And through a file that grows past the damage. */
    memcpy(bad, sample.bytes, sample.size);
    bad[sample.offsets[4] + 2] ^= 0x01;
    const char *path = temp_path(".vor");
    size_t cut = sample.offsets[4] + 30;
    write_file(path, bad, cut);
    vor_reader *r = open_or_fail(path);
    read_result got;
    memset(&got, 0, sizeof got);
    read_all(r, &got);
    assert_int_equal(got.last, VOR_READ_NOTHING_YET);
    assert_int_equal(got.n_frames, 4);
    assert_int_equal(got.damage_count, 1); /* reported as soon as it is seen */
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(bad + cut, 1, sample.size - cut, f), sample.size - cut);
    fclose(f);
    read_all(r, &got);
    vor_reader_close(r);
    unlink(path);
    assert_int_equal(got.n_frames, FRAMES - 1);
    assert_int_equal(got.damage_count, 1);
    assert_int_equal(got.first_damage.offset, sample.offsets[4]);
    assert_int_equal(got.first_damage.length, sample.offsets[5] - sample.offsets[4]);
    free(bad);
}

/* A size that passes its check but points past the end: damage when an intact record
 * follows, a torn tail (wait) when none does. */
static void a_size_past_the_end_is_damage_only_if_an_intact_record_follows(void **state) {
    (void)state;
    make_sample();
    uint8_t *bad = malloc(sample.size);
    assert_non_null(bad);
    for (uint32_t k = 0; k < sample.n_records; k++) {
        memcpy(bad, sample.bytes, sample.size);
        uint8_t *head = bad + sample.offsets[k];
        uint32_t size = (uint32_t)(sample.size * 3);
        vor_put_u32le(head, size);
        uint32_t check = vor_crc32c(0, head, 4) & 0xFFFFu;
        head[4] = (uint8_t)check;
        head[5] = (uint8_t)(check >> 8);
        read_result got;
        read_memory(bad, sample.size, 0, &got);
        if (k < sample.n_records - 1) {
            expect_only_record_lost(&got, k, "size forged past the end");
            assert_int_equal(got.first_damage.length, sample.offsets[k + 1] - sample.offsets[k]);
            assert_non_null(strstr(got.first_damage.problem, "points past the end"));
        } else {
            /* The last record: nothing intact follows, so it is a tail still arriving. */
            assert_int_equal(got.last, VOR_READ_NOTHING_YET);
            assert_int_equal(got.n_frames, FRAMES);
            assert_int_equal(got.damage_count, 0);
            assert_int_equal(got.finished, 0);
        }
    }
    free(bad);
}

static void torn_tails_wait_at_every_byte(void **state) {
    (void)state;
    make_sample();
    for (size_t cut = sample.offsets[0]; cut < sample.size; cut++) {
        read_result got;
        read_memory(sample.bytes, cut, 0, &got);
        uint32_t whole = 0;
        while (whole < sample.n_records && record_end(whole) <= cut) whole++;
        if (got.last != VOR_READ_NOTHING_YET || got.damage_count != 0 ||
            got.n_frames != (whole < FRAMES ? whole : FRAMES))
            fail_msg("cut at %zu: status %d, %u frames, %llu damaged: %s", cut, got.last, got.n_frames,
                     (unsigned long long)got.damage_count, got.error);
    }
}

/* Bytes after an end record are never read. */
static void nothing_after_an_end_record_is_read(void **state) {
    (void)state;
    make_sample();
    size_t size = sample.size * 2;
    uint8_t *twice = malloc(size);
    assert_non_null(twice);
    memcpy(twice, sample.bytes, sample.size);
    size_t header = capture_header_bytes(sample.bytes);
    memcpy(twice + sample.size, sample.bytes + header, sample.size - header); /* records again */
    read_result got;
    read_memory(twice, size - header, 0, &got);
    assert_int_equal(got.last, VOR_READ_NOTHING_YET);
    assert_int_equal(got.n_frames, FRAMES);
    assert_int_equal(got.damage_count, 0);
    assert_int_equal(got.finished, 1);
    /* A stream that goes on after the end: taken and dropped, memory stays bounded. */
    vor_reader *r = vor_reader_open_memory();
    assert_int_equal(vor_reader_feed(r, sample.bytes, sample.size), 1);
    vor_reader_frame f;
    while (vor_reader_next(r, &f) == VOR_READ_FRAME) continue;
    assert_int_equal(vor_reader_finished(r), 1);
    static uint8_t chunk[1 << 20];
    for (int i = 0; i < 80; i++) assert_int_equal(vor_reader_feed(r, chunk, sizeof chunk), 1);
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_NOTHING_YET);
    vor_reader_close(r);
    free(twice);
}

/* 1.0 captures cannot resynchronise (their records depend on the ones before): damage
 * there stays an error naming the offset, as the 1.0 reader had it. */
static void damage_in_a_1_0_capture_is_an_error(void **state) {
    (void)state;
    size_t size;
    uint8_t *bytes = read_file(VOR_TEST_DATA_DIR "/capture-1.0.vor", &size);
    assert_int_equal(capture_minor(bytes), 0);
    size_t offsets[MAX_RECORDS];
    uint32_t n = record_offsets(bytes, size, offsets, MAX_RECORDS);
    assert_int_equal(n, 13);
    read_result got;
    read_memory(bytes, size, 0, &got);
    assert_int_equal(got.last, VOR_READ_NOTHING_YET);
    assert_int_equal(got.n_frames, 12);
    assert_int_equal(got.finished, 1);
    bytes[offsets[3] + 9] ^= 0x10;
    read_memory(bytes, size, 0, &got);
    assert_int_equal(got.last, VOR_READ_ERROR);
    assert_int_equal(got.n_frames, 3);
    char where[64];
    snprintf(where, sizeof where, "at byte %zu", offsets[3]);
    assert_non_null(strstr(got.error, "record check value does not match"));
    assert_non_null(strstr(got.error, where));
    free(bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(every_damaged_byte_costs_its_record_only, capture_teardown),
        cmocka_unit_test_teardown(every_two_damaged_bytes_of_a_sample_of_records_cost_that_record_only,
                                  capture_teardown),
        cmocka_unit_test_teardown(damage_in_a_growing_input_resynchronises_the_same, capture_teardown),
        cmocka_unit_test_teardown(a_size_past_the_end_is_damage_only_if_an_intact_record_follows, capture_teardown),
        cmocka_unit_test_teardown(torn_tails_wait_at_every_byte, capture_teardown),
        cmocka_unit_test_teardown(nothing_after_an_end_record_is_read, capture_teardown),
        cmocka_unit_test_teardown(damage_in_a_1_0_capture_is_an_error, capture_teardown),
    };
    int failed = cmocka_run_group_tests_name("capture damage", tests, NULL, NULL);
    free(sample.bytes);
    return failed;
}
