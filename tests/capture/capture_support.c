/* capture_support.c: see capture_support.h. */
#include "capture_support.h"

#include <math.h>
#include <pthread.h>
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

/* The bytes a record takes at `at` (head included), per the capture's version. */
size_t record_length_at(const uint8_t *bytes, size_t size, size_t at) {
    uint32_t field = (uint32_t)bytes[at] | (uint32_t)bytes[at + 1] << 8 | (uint32_t)bytes[at + 2] << 16 |
                     (uint32_t)bytes[at + 3] << 24;
    (void)size;
    return capture_minor(bytes) >= 1 ? 10 + (size_t)(field & 0x7FFFFFFFu) : 4 + (size_t)field;
}

unsigned capture_minor(const uint8_t *bytes) {
    return (unsigned)bytes[10] | (unsigned)bytes[11] << 8;
}

size_t capture_header_bytes(const uint8_t *bytes) {
    uint32_t body =
        (uint32_t)bytes[12] | (uint32_t)bytes[13] << 8 | (uint32_t)bytes[14] << 16 | (uint32_t)bytes[15] << 24;
    return capture_minor(bytes) >= 1 ? 20 + body + 4 : 16 + body + 4;
}

uint32_t record_offsets(const uint8_t *bytes, size_t size, size_t *offsets, uint32_t cap) {
    assert_true(size >= 16);
    size_t at = capture_header_bytes(bytes);
    size_t head = capture_minor(bytes) >= 1 ? 10 : 4;
    uint32_t n = 0;
    while (at + head <= size && n < cap) {
        size_t len = record_length_at(bytes, size, at);
        if (at + len > size) break;
        offsets[n++] = at;
        at += len;
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
                    rf->scopes[k] =
                        (read_scope){f.threads[t].thread_id, s->site_id, s->depth, s->start_ns, s->duration_ns};
                }
        }
    }
}

void read_capture_free(read_capture *c) {
    for (uint32_t i = 0; i < c->n_frames; i++) free(c->frames[i].scopes);
    free(c->frames);
    memset(c, 0, sizeof *c);
}

int capture_teardown(void **state) {
    (void)state;
    session_teardown();
    unsetenv("VOR_RECORD");
    unsetenv("VOR_RECORD_FLAME");
    unsetenv("VOR_RECORD_EVERY");
    unsetenv("VOR_RECORD_MAX_FRAMES");
    return 0;
}

void start_recording(const char *path, int flame) {
    setenv("VOR_RECORD", path, 1);
    if (flame) setenv("VOR_RECORD_FLAME", "1", 1);
    fake_clock_install(1000);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(4096);
}

vor_reader *open_or_fail(const char *path) {
    char err[512];
    vor_reader *r = vor_reader_open(path, err, sizeof err);
    if (r == NULL) fail_msg("%s", err);
    return r;
}

typedef struct worker_job {
    int frame;
} worker_job;

static void *worker(void *arg) {
    worker_job *job = arg;
    vor_set_thread_name(job->frame < 5 ? "loader" : "loader (renamed)");
    VOR_SCOPE("load");
    fake_advance(3);
    {
        VOR_SCOPE("decode");
        fake_advance(2);
    }
    return NULL;
}

void capture_workload(int frames) {
    vor_record_metric_unit("loss", "nats");
    for (int f = 0; f < frames; f++) {
        {
            VOR_SCOPE("step");
            fake_advance(100);
            for (int i = 0; i < 3; i++) {
                VOR_SCOPE("inner");
                fake_advance(10 + (uint64_t)i);
            }
            pthread_t th;
            worker_job job = {f};
            assert_int_equal(pthread_create(&th, NULL, worker, &job), 0);
            assert_int_equal(pthread_join(th, NULL), 0);
        }
        vor_record_metric("loss", f == 7 ? NAN : 4.0 / (f + 1));
        vor_record_metric("constant", 1.5);
        vor_record_metric("stepwise", (double)(f / 4));
        if (f >= 10) vor_record_metric("late metric", f * 0.5);
        if (f == 12) vor_record_metric_unit("late metric", "widgets");
        vor_record_io(1000 * (uint64_t)f, 10 * (uint64_t)f);
        fake_advance(1000 + (uint64_t)f);
        vor_frame_mark();
    }
}

/* ---- Frame digests ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
    return fnv(h, s, strlen(s) + 1);
}

uint64_t frame_digest(vor_reader *r, const vor_reader_frame *f) {
    uint64_t h = 0xCBF29CE484222325ull;
    h = fnv(h, &f->index, sizeof f->index);
    h = fnv(h, &f->start_ns, sizeof f->start_ns);
    h = fnv(h, &f->duration_ns, sizeof f->duration_ns);
    h = fnv(h, &f->overhead_ns, sizeof f->overhead_ns);
    h = fnv(h, &f->dropped_scopes, sizeof f->dropped_scopes);
    for (uint32_t i = 0; i < f->n_values; i++) {
        const vor_reader_column *c = vor_reader_get_column(r, f->values[i].column_id);
        assert_non_null(c); /* never NULL for a value's column */
        h = fnv_str(fnv_str(h, c->name), c->unit);
        h = fnv(h, &f->values[i].value, sizeof f->values[i].value);
    }
    for (uint32_t i = 0; i < f->n_drops; i++) h = fnv(h, &f->drops[i], sizeof f->drops[i]);
    for (uint32_t t = 0; t < f->n_threads; t++) {
        const vor_reader_thread *th = vor_reader_get_thread(r, f->threads[t].thread_id);
        char name[32];
        snprintf(name, sizeof name, "thread %u", f->threads[t].thread_id);
        h = fnv_str(h, th ? th->name : name);
        for (uint32_t i = 0; i < f->threads[t].n_scopes + f->threads[t].n_open; i++) {
            const vor_reader_scope *sc = &f->threads[t].scopes[i];
            const vor_reader_site *site = vor_reader_get_site(r, sc->site_id);
            snprintf(name, sizeof name, "site %u", sc->site_id);
            h = fnv_str(h, site ? site->name : name);
            h = fnv_str(h, site ? site->file : "");
            h = fnv(h, &sc->depth, sizeof sc->depth);
            h = fnv(h, &sc->start_ns, sizeof sc->start_ns);
            h = fnv(h, &sc->duration_ns, sizeof sc->duration_ns);
            h = fnv(h, &sc->parent, sizeof sc->parent);
            h = fnv(h, &sc->flags, sizeof sc->flags);
        }
    }
    return h;
}
