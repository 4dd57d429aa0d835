/* test_writer_thread.c: VOR_RECORD_THREAD=1, the capture compressed and written on a
 * writer thread (capture_writer.c), against real files and the real reader:
 *   - the file is byte for byte the one the inline writer makes of the same records;
 *   - a flush (vor_flush_recording) puts every record handed over in the file, so a
 *     reader sees every frame marked so far; the end record comes at shutdown;
 *   - a write that fails (the file-size limit) stops the capture at the last good record,
 *     the program goes on, and the file reads back whole;
 *   - the thread runs (named vor-writer) only while such a capture is open.
 * Nothing here depends on timing: every check follows a flush, a close or a failure the
 * frame thread waits for. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "capture_support.h"
#include "capture_writer.h"
#include "scope_order.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* Frame i: up to 3,000 nested scopes of a few sites on one thread, two open at its end. */
typedef struct crafted_frame {
    vor_frame_record rec;
    vor_thread_record thread;
    vor_scope_record scopes[3002];
} crafted_frame;

static void craft(crafted_frame *c, uint64_t i) {
    memset(c, 0, sizeof *c);
    c->rec.index = i;
    c->rec.start_ns = (int64_t)(i * 16700000u);
    c->rec.duration_ns = 16700000;
    uint32_t n = next_random() % 3000;
    int64_t at = c->rec.start_ns + 10;
    for (uint32_t k = 0; k < n; k++) {
        vor_scope_record *s = &c->scopes[k];
        s->site_id = 1 + next_random() % 5;
        s->depth = 2 + (k % 3 == 2 ? 0 : 1); /* two children then their parent */
        s->start_ns = at;
        s->duration_ns = 1 + next_random() % 3000;
        s->flags = 0;
        at += s->duration_ns + 1;
    }
    for (uint32_t k = 0; k < 2; k++) {
        vor_scope_record *s = &c->scopes[n + k];
        s->site_id = 6 + k;
        s->depth = k;
        s->start_ns = c->rec.start_ns - 1000 + k;
        s->flags = VOR_SCOPE_OPEN;
    }
    vor_scopes_link_parents(c->scopes, n, 2, (uint32_t[8]){0}, 8);
    c->thread.thread_id = 1;
    c->thread.n_scopes = n;
    c->thread.n_open = 2;
    c->thread.scopes = c->scopes;
    c->rec.n_threads = 1;
    c->rec.threads = &c->thread;
    c->rec.n_scopes = n;
}

static crafted_frame frame_buffer;

/* Writes `frames` crafted frames (the same ones for the same seed); returns how many the
 * writer accepted before reporting a failure. */
static uint64_t write_frames(vor_capture_writer *w, uint64_t seed, uint64_t frames) {
    rng = seed;
    for (uint64_t i = 0; i < frames; i++) {
        craft(&frame_buffer, i);
        if (vor_capture_writer_frame(w, &frame_buffer.rec) != 0) return i;
    }
    return frames;
}

static int writer_threads_running(void) {
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "vor-writer", 10) == 0) n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

static void same_bytes_as_the_inline_writer(void **state) {
    (void)state;
    const char *inline_path = temp_path("inline.vor"), *thread_path = temp_path("thread.vor");
    vor_capture_options options = {1, 1, 0, 0};
    vor_capture_writer *w = vor_capture_writer_create(inline_path, &options);
    assert_non_null(w);
    assert_int_equal(write_frames(w, 42, 60), 60);
    vor_capture_writer_close(w);

    options.thread = 1;
    assert_int_equal(writer_threads_running(), 0);
    w = vor_capture_writer_create(thread_path, &options);
    assert_non_null(w);
    assert_int_equal(writer_threads_running(), 1);
    assert_int_equal(write_frames(w, 42, 60), 60);
    vor_capture_writer_close(w);
    assert_int_equal(writer_threads_running(), 0);

    size_t a_size = 0, b_size = 0;
    uint8_t *a = read_file(inline_path, &a_size), *b = read_file(thread_path, &b_size);
    assert_true(a_size > 60 * 100);
    assert_int_equal(a_size, b_size);
    assert_memory_equal(a, b, a_size);
    free(a);
    free(b);

    vor_reader *r = open_or_fail(thread_path);
    read_capture got = {0};
    collect_frames(r, &got);
    assert_int_equal(got.n_frames, 60);
    assert_true(vor_reader_finished(r));
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(inline_path);
    unlink(thread_path);
}

static void a_flush_puts_every_frame_in_the_file(void **state) {
    (void)state;
    const char *path = temp_path("flush.vor");
    setenv("VOR_RECORD_THREAD", "1", 1);
    start_recording(path, 1);
    assert_int_equal(writer_threads_running(), 1);
    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    for (int round = 1; round <= 3; round++) {
        for (int f = 0; f < 7; f++) {
            VOR_SCOPE("outer");
            for (int k = 0; k < 50; k++) {
                VOR_SCOPE("inner");
                fake_advance(100);
            }
            fake_advance(1000);
            vor_frame_mark();
        }
        vor_flush_recording();
        collect_frames(r, &got); /* what the file holds now */
        assert_int_equal(got.last, VOR_READ_NOTHING_YET);
        /* Frame 0 opened at vor_enable; 7 marks a round close frames 0 to 7 * round - 1. */
        assert_int_equal(got.n_frames, 7 * round);
        assert_int_equal(got.frames[got.n_frames - 1].index, 7 * round - 1);
        assert_int_equal(got.frames[got.n_frames - 1].n_scopes, 51);
    }
    capture_teardown(NULL);
    unsetenv("VOR_RECORD_THREAD");
    assert_int_equal(writer_threads_running(), 0);
    collect_frames(r, &got);
    assert_true(vor_reader_finished(r)); /* the end record, written at shutdown */
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
}

static void a_failed_write_stops_the_capture_at_its_last_good_record(void **state) {
    (void)state;
    const char *path = temp_path("limit.vor");
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    vor_capture_options options = {1, 1, 0, 1};
    vor_capture_writer *w = vor_capture_writer_create(path, &options);
    assert_non_null(w);
    struct rlimit small = saved;
    small.rlim_cur = 40000; /* a few records */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    uint64_t accepted = write_frames(w, 7, 1000);
    vor_capture_writer_close(w);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    assert_true(accepted < 1000); /* the failure reached the frame thread */

    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    /* Every record before the failure reads back; the one that failed is not there, and
     * the frame that learnt of it was not handed over. */
    assert_int_equal(got.last, VOR_READ_NOTHING_YET);
    assert_int_equal(got.n_frames + 1, accepted);
    for (uint32_t i = 0; i < got.n_frames; i++) assert_int_equal(got.frames[i].index, i);
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
}

int main(void) {
    signal(SIGXFSZ, SIG_IGN); /* vor never lets a write raise it; in case a check would */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_bytes_as_the_inline_writer),
        cmocka_unit_test(a_flush_puts_every_frame_in_the_file),
        cmocka_unit_test(a_failed_write_stops_the_capture_at_its_last_good_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
