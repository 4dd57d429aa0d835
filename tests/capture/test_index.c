/* test_index.c: random access to a 1.1 capture (capture_index.h, docs/FORMAT.md §4.8).
 * A capture written by the real writer (the workload of every kind of content: renamed
 * threads, a unit changed late, constant and stepwise metrics whose records say
 * "unchanged", flame frames) is indexed, from the file and from bytes fed in pieces; a
 * reader given the header, the state record of an entry and the bytes from the entry's
 * record on reads exactly the frames a reader of the whole file reads from there, the
 * constant and stepwise metrics included (without the state they are unknown). Also: entries
 * merge in pairs when full (frame times kept: min, max, sum, flame frames), a damaged
 * record costs only itself, a record is found from any position by its checks, and a
 * reader that skips scopes reads the same values.
 *
 * `test_index --write-resumed PATH` writes such a resumed stream (header, state, records
 * from the middle) to PATH: the independent reader must read it as the reference reader
 * does (compare_readers.py). */
#include "capture_format.h"
#include "capture_index.h"
#include "capture_support.h"

#include <math.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES 700

typedef struct whole {
    uint8_t *bytes;
    size_t size;
    uint64_t digest[FRAMES], index[FRAMES], offset[FRAMES];
    int64_t duration[FRAMES];
    int flame[FRAMES];
    uint32_t n;
} whole;

static whole W;
static const char *capture_path;

/* Digests of every frame of a reader of the whole file. */
static void read_whole(void) {
    vor_reader_frame f;
    vor_reader *r = open_or_fail(capture_path);
    W.n = 0;
    while (vor_reader_next(r, &f) == VOR_READ_FRAME) {
        assert_true(W.n < FRAMES);
        W.digest[W.n] = frame_digest(r, &f);
        W.index[W.n] = f.index;
        W.offset[W.n] = vor_reader_frame_offset(r);
        W.duration[W.n] = f.duration_ns;
        W.flame[W.n] = f.has_flame;
        W.n++;
    }
    vor_reader_close(r);
    W.bytes = read_file(capture_path, &W.size);
}

static int setup_capture(void **state) {
    (void)state;
    capture_path = temp_path(".vor");
    start_recording(capture_path, 1);
    capture_workload(FRAMES);
    capture_teardown(NULL);
    read_whole();
    assert_int_equal(W.n, FRAMES);
    return 0;
}

static int teardown_capture(void **state) {
    (void)state;
    free(W.bytes);
    unlink(capture_path);
    return 0;
}

static vor_capture_index *index_file(const char *path, uint32_t max_entries) {
    char err[512] = "";
    vor_capture_index *ix = vor_capture_index_open(path, max_entries, err, sizeof err);
    if (ix == NULL) fail_msg("%s", err);
    while (vor_capture_index_step(ix, 100) > 0) {
    }
    assert_string_equal(vor_capture_index_error(ix), "");
    return ix;
}

/* The stream a server sends for entry e: header, state, records from the entry on. */
static uint8_t *resumed_stream(vor_capture_index *ix, const uint8_t *bytes, size_t size, uint32_t e, size_t *n) {
    vor_index_entries en;
    vor_capture_index_entries(ix, &en);
    uint64_t from;
    uint32_t snap;
    assert_true(vor_capture_index_state_source(ix, e, &from, &snap));
    assert_true(from <= en.offset[e]);
    vor_out state = {0};
    state.max_capacity = 1u << 26;
    assert_true(vor_capture_index_state(ix, e, snap, bytes + from, (size_t)(en.offset[e] - from), &state));
    size_t hn;
    const uint8_t *header = vor_capture_index_header(ix, &hn);
    assert_non_null(header);
    *n = hn + state.size + (size - en.offset[e]);
    uint8_t *out = malloc(*n);
    memcpy(out, header, hn);
    memcpy(out + hn, state.data, state.size);
    memcpy(out + hn + state.size, bytes + en.offset[e], size - en.offset[e]);
    free(state.data);
    return out;
}

/* Reads a stream and checks its frames against the whole capture's from frame `first`. */
static void check_stream(const uint8_t *stream, size_t n, uint32_t first) {
    vor_reader *r = vor_reader_open_memory();
    assert_true(vor_reader_feed(r, stream, n));
    vor_reader_frame f;
    uint32_t k = first;
    while (vor_reader_next(r, &f) == VOR_READ_FRAME) {
        assert_true(k < W.n);
        assert_int_equal(f.index, W.index[k]);
        if (frame_digest(r, &f) != W.digest[k]) fail_msg("frame %llu reads differently", (unsigned long long)f.index);
        k++;
    }
    assert_int_equal(k, W.n);
    assert_true(vor_reader_finished(r));
    assert_int_equal(vor_reader_damage_count(r), 0);
    vor_reader_close(r);
}

static void test_entries_cover_every_frame(void **state) {
    (void)state;
    vor_capture_index *ix = index_file(capture_path, 0);
    vor_index_entries en;
    vor_capture_index_entries(ix, &en);
    assert_int_equal(en.stride, 1);
    assert_int_equal(en.count, W.n);
    for (uint32_t i = 0; i < W.n; i++) {
        assert_int_equal(en.offset[i], W.offset[i]);
        assert_int_equal(en.index[i], W.index[i]);
        assert_int_equal(en.frames[i], 1);
        assert_int_equal(en.flame[i], (uint32_t)W.flame[i]);
        assert_true(fabsf(en.max_ns[i] - (float)W.duration[i]) <= 1.0f);
    }
    assert_true(vor_capture_index_finished(ix));
    assert_true(vor_capture_index_random_access(ix));
    assert_int_equal(vor_capture_index_frames(ix), W.n);
    assert_int_equal(vor_capture_index_find(ix, W.index[300]), 300);
    assert_int_equal(vor_capture_index_find(ix, 0), 0);
    vor_capture_index_close(ix);
}

static void test_entries_merge_when_full(void **state) {
    (void)state;
    vor_capture_index *ix = index_file(capture_path, 64);
    vor_index_entries en;
    vor_capture_index_entries(ix, &en);
    assert_true(en.count <= 64);
    assert_int_equal(en.stride, 16); /* 700 frames in at most 64 entries */
    uint64_t frames = 0, flame = 0;
    for (uint32_t e = 0; e < en.count; e++) {
        uint32_t k = (uint32_t)frames;
        assert_int_equal(en.offset[e], W.offset[k]);
        assert_int_equal(en.index[e], W.index[k]);
        float mn = INFINITY, mx = 0;
        double sum = 0;
        uint32_t fl = 0;
        for (uint32_t i = k; i < k + en.frames[e]; i++) {
            float d = (float)W.duration[i];
            mn = d < mn ? d : mn;
            mx = d > mx ? d : mx;
            sum += d;
            fl += (uint32_t)W.flame[i];
        }
        assert_true(en.min_ns[e] == mn && en.max_ns[e] == mx); /* no spike lost in a merge */
        assert_true(fabs(en.sum_ns[e] - sum) <= sum * 1e-6);
        assert_int_equal(en.flame[e], fl);
        frames += en.frames[e];
        flame += fl;
    }
    assert_int_equal(frames, W.n);
    vor_capture_index_close(ix);
}

/* From every entry: the resumed stream reads as the whole file does from there. */
static void check_resume_everywhere(uint32_t max_entries) {
    vor_capture_index *ix = index_file(capture_path, max_entries);
    vor_index_entries en;
    vor_capture_index_entries(ix, &en);
    uint32_t first = 0;
    for (uint32_t e = 0; e < en.count; e++) {
        size_t n;
        uint8_t *stream = resumed_stream(ix, W.bytes, W.size, e, &n);
        check_stream(stream, n, first);
        free(stream);
        first += en.frames[e];
    }
    vor_capture_index_close(ix);
}

static void test_resume_at_any_entry(void **state) {
    (void)state;
    check_resume_everywhere(0);
}

static void test_resume_after_merges(void **state) {
    (void)state;
    check_resume_everywhere(64);
}

/* Without the state record the constant metric (written "unchanged") is unknown from the
 * middle: the state is what makes the values right. */
static void test_values_need_the_state(void **state) {
    (void)state;
    vor_capture_index *ix = index_file(capture_path, 0);
    size_t hn;
    const uint8_t *header = vor_capture_index_header(ix, &hn);
    uint32_t k = 400;
    size_t n = hn + (W.size - W.offset[k]);
    uint8_t *stream = malloc(n);
    memcpy(stream, header, hn);
    memcpy(stream + hn, W.bytes + W.offset[k], W.size - W.offset[k]);
    vor_reader *r = vor_reader_open_memory();
    assert_true(vor_reader_feed(r, stream, n));
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
    assert_int_equal(f.index, W.index[k]);
    assert_true(frame_digest(r, &f) != W.digest[k]);
    vor_reader_close(r);
    free(stream);
    vor_capture_index_close(ix);
}

static void test_memory_index_matches_the_file_index(void **state) {
    (void)state;
    vor_capture_index *a = index_file(capture_path, 64);
    vor_capture_index *b = vor_capture_index_open(NULL, 64, NULL, 0);
    assert_non_null(b);
    for (size_t at = 0; at < W.size; at += 997) {
        size_t n = W.size - at < 997 ? W.size - at : 997;
        assert_true(vor_capture_index_feed(b, W.bytes + at, n));
        assert_true(vor_capture_index_step(b, 1000) >= 0);
    }
    vor_index_entries ea, eb;
    vor_capture_index_entries(a, &ea);
    vor_capture_index_entries(b, &eb);
    assert_int_equal(ea.count, eb.count);
    assert_int_equal(ea.stride, eb.stride);
    for (uint32_t e = 0; e < ea.count; e++) {
        assert_int_equal(ea.offset[e], eb.offset[e]);
        assert_int_equal(ea.index[e], eb.index[e]);
        assert_true(ea.max_ns[e] == eb.max_ns[e] && ea.sum_ns[e] == eb.sum_ns[e]);
    }
    size_t ha, hb;
    const uint8_t *pa = vor_capture_index_header(a, &ha), *pb = vor_capture_index_header(b, &hb);
    assert_int_equal(ha, hb);
    assert_memory_equal(pa, pb, ha);
    /* the memory index's state, from bytes the caller reads itself */
    size_t n;
    uint8_t *stream = resumed_stream(b, W.bytes, W.size, 20, &n);
    check_stream(stream, n, 20 * eb.stride);
    free(stream);
    vor_capture_index_close(a);
    vor_capture_index_close(b);
}

static void test_damage_costs_one_record(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    uint8_t *copy = malloc(W.size);
    memcpy(copy, W.bytes, W.size);
    copy[W.offset[350] + 12] ^= 0x40; /* frame 350's body */
    write_file(path, copy, W.size);
    vor_capture_index *ix = index_file(path, 0);
    assert_int_equal(vor_capture_index_frames(ix), W.n - 1);
    vor_index_entries en;
    vor_capture_index_entries(ix, &en);
    assert_int_equal(en.index[350], W.index[351]);
    /* a stream from before the damage reads every frame but the damaged one */
    size_t n;
    uint8_t *stream = resumed_stream(ix, copy, W.size, 300, &n);
    vor_reader *r = vor_reader_open_memory();
    assert_true(vor_reader_feed(r, stream, n));
    vor_reader_frame f;
    uint32_t frames = 0;
    while (vor_reader_next(r, &f) == VOR_READ_FRAME) frames++;
    assert_int_equal(frames, W.n - 300 - 1);
    assert_int_equal(vor_reader_damage_count(r), 1);
    vor_reader_close(r);
    free(stream);
    vor_capture_index_close(ix);
    free(copy);
    unlink(path);
}

static void test_record_found_from_any_position(void **state) {
    (void)state;
    for (uint32_t k = 100; k < 110; k++) {
        size_t from = (size_t)W.offset[k] + 3; /* inside frame k's record */
        size_t at = from;
        while (at < W.size && vor_capture_intact_record(W.bytes + at, W.size - at) == 0) at++;
        assert_int_equal(at, W.offset[k + 1]);
        assert_int_equal(vor_capture_intact_record(W.bytes + at, W.size - at), W.offset[k + 2] - W.offset[k + 1]);
        /* a record cut short is not intact */
        assert_int_equal(vor_capture_intact_record(W.bytes + at, (size_t)(W.offset[k + 2] - W.offset[k + 1]) - 1), 0);
    }
}

static void test_skipping_scopes_reads_the_same_values(void **state) {
    (void)state;
    vor_reader *a = open_or_fail(capture_path), *b = open_or_fail(capture_path);
    vor_reader_set_skip_flame(b, 1);
    vor_reader_frame fa, fb;
    uint32_t n = 0;
    while (vor_reader_next(a, &fa) == VOR_READ_FRAME) {
        assert_int_equal(vor_reader_next(b, &fb), VOR_READ_FRAME);
        assert_int_equal(fa.index, fb.index);
        assert_int_equal(fa.has_flame, fb.has_flame);
        assert_int_equal(fb.n_threads, 0);
        assert_int_equal(fa.n_values, fb.n_values);
        for (uint32_t i = 0; i < fa.n_values; i++) {
            assert_int_equal(fa.values[i].column_id, fb.values[i].column_id);
            assert_memory_equal(&fa.values[i].value, &fb.values[i].value, sizeof(double));
        }
        assert_int_equal(vor_reader_frame_offset(a), vor_reader_frame_offset(b));
        n++;
    }
    assert_int_equal(n, W.n);
    assert_int_equal(vor_reader_next(b, &fb), VOR_READ_NOTHING_YET);
    assert_true(vor_reader_finished(b));
    vor_reader_close(a);
    vor_reader_close(b);
}

/* A state record is a record kind a reader that does not know it skips: an end-to-end check
 * that it never produces a frame or damage of its own. */
static void test_declarations_only_state(void **state) {
    (void)state;
    vor_capture_index *ix = index_file(capture_path, 0);
    vor_out decl = {0};
    decl.max_capacity = 1u << 26;
    assert_true(vor_capture_index_declarations(ix, &decl));
    size_t hn;
    const uint8_t *header = vor_capture_index_header(ix, &hn);
    vor_reader *r = vor_reader_open_memory();
    assert_true(vor_reader_feed(r, header, hn));
    assert_true(vor_reader_feed(r, decl.data, decl.size));
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_NOTHING_YET);
    assert_int_equal(vor_reader_damage_count(r), 0);
    const vor_reader *all = vor_capture_index_reader(ix);
    assert_int_equal(vor_reader_site_count(r), vor_reader_site_count(all));
    for (uint32_t id = 1; id <= vor_reader_site_count(all); id++)
        if (vor_reader_get_site(all, id))
            assert_string_equal(vor_reader_get_site(r, id)->name, vor_reader_get_site(all, id)->name);
    assert_string_equal(vor_reader_get_column(r, vor_reader_system_column_count(r))->name,
                        vor_reader_get_column(all, vor_reader_system_column_count(all))->name);
    vor_reader_close(r);
    free(decl.data);
    vor_capture_index_close(ix);
}

static int write_resumed(const char *out) {
    setup_capture(NULL);
    vor_capture_index *ix = index_file(capture_path, 0);
    size_t n;
    uint8_t *stream = resumed_stream(ix, W.bytes, W.size, 333, &n);
    write_file(out, stream, n);
    free(stream);
    vor_capture_index_close(ix);
    teardown_capture(NULL);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--write-resumed") == 0) return write_resumed(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_cover_every_frame),
        cmocka_unit_test(test_entries_merge_when_full),
        cmocka_unit_test(test_resume_at_any_entry),
        cmocka_unit_test(test_resume_after_merges),
        cmocka_unit_test(test_values_need_the_state),
        cmocka_unit_test(test_memory_index_matches_the_file_index),
        cmocka_unit_test(test_damage_costs_one_record),
        cmocka_unit_test(test_record_found_from_any_position),
        cmocka_unit_test(test_skipping_scopes_reads_the_same_values),
        cmocka_unit_test(test_declarations_only_state),
    };
    return cmocka_run_group_tests(tests, setup_capture, teardown_capture);
}
