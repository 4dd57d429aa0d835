/* test_format.c: what format 1.1 carries, through the real writer and reader: the clock's
 * facts and the calibrated costs in the header; each thread's open scopes, the unwound
 * flag and the parents the reader links (docs/FORMAT.md §4.5); drops by cause and thread;
 * modules of function sites; ids never declared, up to 2^32 - 1, named without sizing a
 * table; what one and two lost records cost (values, declarations); the frame view
 * (version 2) of such a frame.
 *
 * The frame records here are built by hand, with the shapes the frame assembly gives
 * them (open scopes after the ended ones, drops by cause), and handed to a capture writer
 * (vor_capture_writer_*), as the session's consumer list would.
 *
 * The rules a reader enforces (docs/FORMAT.md §5) are checked on records built byte by
 * byte, each framed as the writer frames records.
 *
 * `test_capture_format --write PATH` writes the crafted capture to PATH and exits, and
 * `--write-rules PATH` the one that breaks the rules: the independent reader is compared
 * with the reference reader on both (compare_readers.py).
 */
#include "capture_format.h"
#include "capture_support.h"
#include "capture_writer.h"
#include "record_encoder.h"

#include <lz4.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static vor_site site_outer = {"outer", "run", "crafted.c", 10, 0};
static vor_site site_child = {"child", "leaf", "crafted.c", 30, 0};
static vor_site site_thrower = {"thrower", "raise", "crafted.c", 40, 0};

#define FOREIGN_THREAD 0xFFFFFFFFu /* never declared */
#define FOREIGN_SITE 0xFFFFFFFFu

typedef struct crafted {
    uint32_t main_thread;
    vor_scope_record a_main[4], a_foreign[1], b_main[1];
    vor_thread_record a_threads[2], b_threads[1];
    vor_reader_drop drops[2];
    vor_user_value user[1];
    vor_frame_record a, b;
} crafted;

static vor_site *function_site; /* a -finstrument-functions site: this program's function */

/* Registers the sites (a real session gives them ids) and returns the main thread's id. */
static uint32_t register_sites(void) {
    fake_clock_install(1000);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    function_site = vor_function_site((void *)&register_sites);
    vor_site *sites[] = {&site_outer, &site_child, &site_thrower, function_site};
    for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++) {
        assert_int_equal(vor_scope_begin(sites[i]), 1);
        vor_scope_end();
    }
    vor_record_metric_unit("loss", "nats");
    vor_record_metric("loss", 0.25);
    vor_frame_mark();
    assert_true(site_child.id > 0 && function_site->id > 0);
    return vor_tls_thread->thread_id;
}

/* Frame A (index 7, [10,000, 11,000)): on the main thread `outer` began before it and is
 * still open; a function (a -finstrument-functions site) ran inside it with two children, the second closed by an
 * unwind. A thread never declared has an open scope of a site never declared. Frame B ends `outer`. */
static void build(crafted *c) {
    memset(c, 0, sizeof *c);
    c->main_thread = register_sites();
    vor_scope_record *m = c->a_main;
    m[0] = (vor_scope_record){site_child.id, 2, 10100, 100, 0, 0};
    m[1] = (vor_scope_record){site_thrower.id, 2, 10300, 50, 0, VOR_SCOPE_UNWOUND};
    m[2] = (vor_scope_record){function_site->id, 1, 10050, 400, 0, 0};
    m[3] = (vor_scope_record){site_outer.id, 0, 9500, 1500, 0, VOR_SCOPE_OPEN};
    c->a_foreign[0] = (vor_scope_record){FOREIGN_SITE, 0, 8000, 3000, 0, VOR_SCOPE_OPEN};
    c->a_threads[0] = (vor_thread_record){c->main_thread, 3, c->a_main, 1};
    c->a_threads[1] = (vor_thread_record){FOREIGN_THREAD, 0, c->a_foreign, 1};
    c->drops[0] = (vor_reader_drop){VOR_DROP_THREAD_BUFFER_FULL, c->main_thread, 5};
    c->drops[1] = (vor_reader_drop){VOR_DROP_FILTERED, c->main_thread, 7};
    uint32_t loss = 0;
    for (uint32_t id = 0; id < vor_column_count(); id++) {
        vor_column_info info;
        if (vor_column_get(id, &info) && strcmp(info.name, "loss") == 0) loss = id;
    }
    assert_true(loss > 0);
    c->user[0] = (vor_user_value){loss, 0, 0.25};
    vor_frame_record *a = &c->a;
    a->index = 7;
    a->start_ns = 10000;
    a->duration_ns = 1000;
    a->overhead_ns = 30;
    uint32_t n_system = 0;
    vor_system_columns(&n_system);
    a->n_system = n_system;
    a->system_present = 1u; /* frame_ms only: the mask is written */
    a->n_user = 1;
    a->user = c->user;
    a->n_threads = 2;
    a->threads = c->a_threads;
    a->n_scopes = 3;
    a->dropped_scopes = 5;
    a->n_drops = 2;
    a->drops = c->drops;
    c->b_main[0] = (vor_scope_record){site_outer.id, 0, 9500, 2000, 0, 0};
    c->b_threads[0] = (vor_thread_record){c->main_thread, 1, c->b_main, 0};
    c->b = *a;
    c->b.index = 8;
    c->b.start_ns = 11000;
    c->b.system_present = (1u << n_system) - 1;
    c->b.n_threads = 1;
    c->b.threads = c->b_threads;
    c->b.n_scopes = 1;
    c->b.dropped_scopes = 0;
    c->b.n_drops = 0;
    c->b.drops = NULL;
}

static void write_crafted(const char *path, crafted *c) {
    build(c);
    vor_capture_options options = {1, 1, 0, 0};
    vor_capture_writer *w = vor_capture_writer_create(path, &options);
    assert_non_null(w);
    assert_int_equal(vor_capture_writer_frame(w, &c->a), 0);
    assert_int_equal(vor_capture_writer_frame(w, &c->b), 0);
    vor_capture_writer_close(w);
}

/* Writes the crafted capture to `path` and opens it. */
static vor_reader *read_crafted(const char *path, crafted *c) {
    write_crafted(path, c);
    return open_or_fail(path);
}

static void header_carries_the_clock_facts_and_the_costs(void **state) {
    (void)state;
    crafted c;
    const char *path = temp_path(".vor");
    vor_reader *r = read_crafted(path, &c);
    assert_int_equal(vor_reader_poll_header(r), 1);
    const vor_reader_info *info = vor_reader_get_info(r);
    vor_clock_info clock = {0, "", -1};
    vor_clock_get_info(&clock);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->version_minor, 1);
    assert_int_equal(info->clock_resolution_ns, clock.resolution_ns);
    assert_string_equal(info->clock_source, clock.source);
    assert_int_equal(info->cross_origin_isolated, clock.cross_origin_isolated);
    /* What a child adds to its parent's self time: the empty span less the child's own. */
    assert_true(info->scope_cost_ns == vor_scope_self_cost_ns_locked());
    assert_true(info->scope_cost_ns > 0); /* calibrated before the header was written */
    assert_true(info->scope_cost_ns <= vor_empty_span_ns());
    /* The same for an empty function compiled with -finstrument-functions. */
    assert_true(info->function_cost_ns == vor_function_span_ns_locked());
    assert_true(info->function_cost_ns > 0);
    vor_reader_close(r);
    unlink(path);
}

static const vor_reader_thread_scopes *thread_of(const vor_reader_frame *f, uint32_t id) {
    for (uint32_t t = 0; t < f->n_threads; t++)
        if (f->threads[t].thread_id == id) return &f->threads[t];
    fail_msg("thread %u not in frame %llu", id, (unsigned long long)f->index);
    return NULL;
}

static void open_scopes_unwound_scopes_parents_and_drops(void **state) {
    (void)state;
    crafted c;
    const char *path = temp_path(".vor");
    vor_reader *r = read_crafted(path, &c);
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
    assert_int_equal(f.index, 7);
    assert_int_equal(f.has_flame, 1);
    assert_int_equal(f.n_scopes, 3); /* ended ones */
    assert_int_equal(f.n_values, 2); /* frame_ms (the mask says so) and loss */
    const vor_reader_thread_scopes *m = thread_of(&f, c.main_thread);
    assert_int_equal(m->n_scopes, 3);
    assert_int_equal(m->n_open, 1);
    const uint32_t want_parent[] = {2, 2, 3, VOR_PARENT_NONE};
    const uint32_t want_flags[] = {0, VOR_SCOPE_UNWOUND, 0, VOR_SCOPE_OPEN};
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(m->scopes[i].site_id, c.a_main[i].site_id);
        assert_int_equal(m->scopes[i].depth, c.a_main[i].depth);
        assert_int_equal(m->scopes[i].start_ns, c.a_main[i].start_ns);
        assert_int_equal(m->scopes[i].parent, want_parent[i]);
        assert_int_equal(m->scopes[i].flags, want_flags[i]);
    }
    assert_int_equal(m->scopes[1].duration_ns, 50);
    assert_int_equal(m->scopes[3].duration_ns, 11000 - 9500); /* open: to the frame's end */
    /* The thread and the site that were never declared, ids 2^32 - 1: named by the
     * consumer, and no table sized by them. */
    const vor_reader_thread_scopes *foreign = thread_of(&f, FOREIGN_THREAD);
    assert_int_equal(foreign->n_scopes, 0);
    assert_int_equal(foreign->n_open, 1);
    assert_int_equal(foreign->scopes[0].site_id, FOREIGN_SITE);
    assert_int_equal(foreign->scopes[0].parent, VOR_PARENT_NONE);
    assert_null(vor_reader_get_thread(r, FOREIGN_THREAD));
    assert_null(vor_reader_get_site(r, FOREIGN_SITE));
    assert_true(vor_reader_site_count(r) <= function_site->id);
    assert_non_null(vor_reader_get_thread(r, c.main_thread));
    /* Drops by cause and thread, the filtered ones outside the total. */
    assert_int_equal(f.dropped_scopes, 5);
    assert_int_equal(f.n_drops, 2);
    assert_memory_equal(f.drops, c.drops, sizeof c.drops);
    /* Modules: a function site is declared with its module and offset, and the module with
     * its path, build id and load address (this program, found by the symbol reader). */
    const vor_reader_site *p = vor_reader_get_site(r, function_site->id);
    assert_non_null(p);
    uint32_t module_id = 0;
    uint64_t address = 0;
    assert_int_equal(vor_site_module_address(function_site, &module_id, &address), 1);
    vor_module_info want;
    assert_int_equal(vor_module_get(module_id, &want), 1);
    assert_int_equal(p->module_id, module_id);
    assert_int_equal(p->address, address);
    assert_string_equal(p->name, function_site->name);
    const vor_reader_module *mod = vor_reader_get_module(r, module_id);
    assert_non_null(mod);
    assert_string_equal(mod->path, want.path);
    assert_string_equal(mod->build_id, want.build_id);
    assert_int_equal(mod->load_address, want.load_address);
    assert_non_null(strstr(mod->path, "test_capture_format"));
    assert_int_equal(vor_reader_get_site(r, site_child.id)->module_id, 0);

    /* Frame B: `outer` ended; it is whole again. */
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
    assert_int_equal(f.index, 8);
    m = thread_of(&f, c.main_thread);
    assert_int_equal(m->n_scopes, 1);
    assert_int_equal(m->n_open, 0);
    assert_int_equal(m->scopes[0].duration_ns, 2000);
    assert_int_equal(m->scopes[0].parent, VOR_PARENT_NONE);
    assert_int_equal(f.n_values, 6); /* every system column, and loss */
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_NOTHING_YET);
    assert_int_equal(vor_reader_finished(r), 1);
    assert_int_equal(vor_reader_damage_count(r), 0);
    vor_reader_close(r);
    unlink(path);
}

/* The frame view of frame A, at the offsets docs/FORMAT.md §7 gives. */
static void frame_view_version_2_carries_open_scopes_parents_flags_and_drops(void **state) {
    (void)state;
    crafted c;
    const char *path = temp_path(".vor");
    vor_reader *r = read_crafted(path, &c);
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
    size_t size = vor_frame_view_size(&f, 1);
    uint8_t *v = calloc(1, size);
    assert_non_null(v);
    vor_frame_view_encode(&f, 1, v);
    uint32_t u[18];
    memcpy(u, v, sizeof u);
    assert_int_equal(u[0], 0x4D524656u);
    assert_int_equal(u[1], 2);
    assert_int_equal(u[2], size);
    assert_int_equal(u[3], 1);
    assert_int_equal(u[12], 2); /* values */
    assert_int_equal(u[13], 2); /* threads */
    assert_int_equal(u[14], 3); /* ended scopes */
    assert_int_equal(u[15], 5); /* dropped */
    assert_int_equal(u[16], 2); /* open scopes */
    assert_int_equal(u[17], 2); /* drop entries */
    size_t at = 72 + 2 * 16;    /* after the values: drops */
    uint32_t cause, thread;
    double count;
    memcpy(&cause, v + at + 16, 4);
    memcpy(&thread, v + at + 20, 4);
    memcpy(&count, v + at + 24, 8);
    assert_int_equal(cause, VOR_DROP_FILTERED);
    assert_int_equal(thread, c.main_thread);
    assert_true(count == 7);
    at += 2 * 16; /* threads */
    uint32_t t0[3], t1[3];
    memcpy(t0, v + at, 12);
    memcpy(t1, v + at + 12, 12);
    assert_int_equal(t0[1], 3);
    assert_int_equal(t0[2], 1);
    assert_int_equal(t1[2], 1);
    at = (at + 24 + 7) & ~(size_t)7;
    size_t n = 5; /* 3 + 1 open on the main thread, 1 open on the other */
    assert_int_equal(size, at + n * 32);
    double start3, dur3;
    uint32_t parents[5], flags[5];
    memcpy(&start3, v + at + 3 * 8, 8);
    memcpy(&dur3, v + at + n * 8 + 3 * 8, 8);
    memcpy(parents, v + at + n * 24, sizeof parents);
    memcpy(flags, v + at + n * 28, sizeof flags);
    assert_true(start3 == 9500 && dur3 == 1500);
    const uint32_t want_parents[5] = {2, 2, 3, VOR_PARENT_NONE, VOR_PARENT_NONE};
    const uint32_t want_flags[5] = {0, VOR_SCOPE_UNWOUND, 0, VOR_SCOPE_OPEN, VOR_SCOPE_OPEN};
    assert_memory_equal(parents, want_parents, sizeof parents);
    assert_memory_equal(flags, want_flags, sizeof flags);
    /* Without scopes: drops stay, threads and scopes go. */
    size_t small = vor_frame_view_size(&f, 0);
    assert_int_equal(small, 72 + 2 * 16 + 2 * 16);
    free(v);
    vor_reader_close(r);
    unlink(path);
}

/* A real capture with records k and k + 1 lost: frame k + 2 has every value that was
 * written in full; a value "unchanged" since before the loss is unknown and left out until
 * written in full again. One lost record costs nothing else. */
static void what_one_and_two_lost_records_cost(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    start_recording(path, 0);
    capture_workload(14);
    vor_shutdown();
    size_t size;
    uint8_t *bytes = read_file(path, &size);
    unlink(path);
    size_t offsets[32];
    assert_int_equal(record_offsets(bytes, size, offsets, 32), 15);

    for (int lost = 1; lost <= 2; lost++) {
        uint8_t *bad = malloc(size);
        memcpy(bad, bytes, size);
        for (int k = 8; k < 8 + lost; k++) bad[offsets[k] + 12] ^= 0x80; /* record check fails */
        vor_reader *r = vor_reader_open_memory();
        assert_int_equal(vor_reader_feed(r, bad, size), 1);
        vor_reader_frame f;
        uint32_t frames = 0;
        while (vor_reader_next(r, &f) == VOR_READ_FRAME) {
            frames++;
            int has_constant = 0, has_stepwise = 0, has_loss = 0;
            for (uint32_t i = 0; i < f.n_values; i++) {
                const char *name = vor_reader_get_column(r, f.values[i].column_id)->name;
                has_constant |= strcmp(name, "constant") == 0;
                has_stepwise |= strcmp(name, "stepwise") == 0;
                has_loss |= strcmp(name, "loss") == 0;
            }
            assert_true(has_loss);
            /* "stepwise" changes on frames 8 and 12: unchanged on 10 and 11. */
            int unknown = lost == 2 && f.index >= 10;
            assert_int_equal(has_constant, !unknown);
            assert_int_equal(has_stepwise, !unknown || f.index >= 12);
        }
        assert_int_equal(frames, 14 - lost);
        assert_int_equal(vor_reader_damage_count(r), 1);
        vor_reader_close(r);
        free(bad);
    }

    /* The records that declare the first columns (0 and its repeat in 1) both lost: the
     * values still come, under "column N". */
    uint8_t *bad = malloc(size);
    memcpy(bad, bytes, size);
    bad[offsets[0] + 12] ^= 0x80;
    bad[offsets[1] + 12] ^= 0x80;
    vor_reader *r = vor_reader_open_memory();
    assert_int_equal(vor_reader_feed(r, bad, size), 1);
    vor_reader_frame f;
    uint64_t named = 0; /* bit per column id named "column N" */
    uint32_t frames = 0;
    while (vor_reader_next(r, &f) == VOR_READ_FRAME) {
        assert_true(f.index >= 2);
        frames++;
        for (uint32_t i = 0; i < f.n_values; i++) {
            const vor_reader_column *col = vor_reader_get_column(r, f.values[i].column_id);
            assert_non_null(col);
            char want[32];
            snprintf(want, sizeof want, "column %u", col->id);
            if (strcmp(col->name, want) == 0 && col->id < 64) named |= 1ull << col->id;
        }
    }
    assert_int_equal(frames, 12);
    /* loss (in full every frame) and stepwise (in full from frame 4); constant, whose last
     * full values were in the lost records, stays unknown; the late metric is declared. */
    assert_int_equal(__builtin_popcountll(named), 2);
    vor_reader_close(r);
    free(bad);
    free(bytes);
}

/* ---- Rules a reader enforces, on records built by hand ---- */

static uint32_t n_system_columns(void) {
    uint32_t n = 0;
    vor_system_columns(&n);
    return n;
}

/* Kind, flags, index, start, duration, overhead 0. */
static void frame_head(vor_out *o, uint64_t flags, uint64_t index, uint64_t start, uint64_t duration) {
    vor_out_u8(o, VOR_RECORD_FRAME);
    vor_out_varint(o, flags);
    vor_out_varint(o, index);
    vor_out_varint(o, start);
    vor_out_varint(o, duration);
    vor_out_varint(o, 0);
}

/* System values (all present, 0) and `n_user` user values for columns S, S+1, ... */
static void frame_values(vor_out *o, uint32_t n_user) {
    for (uint32_t c = 1; c < n_system_columns(); c++) vor_out_svarint(o, 0);
    vor_out_varint(o, n_user);
    for (uint32_t u = 0; u < n_user; u++) {
        vor_out_varint(o, 0);
        vor_out_full_f64(o, 1.5 + u);
    }
}

typedef struct rule_capture {
    vor_out bytes;
    size_t offsets[16];
    uint32_t n;
} rule_capture;

static void add_record(rule_capture *c, vor_out *raw) {
    LZ4_stream_t *lz4 = LZ4_createStream();
    vor_out framed = {NULL, 0, 0, 1u << 20, 0};
    assert_int_equal(vor_frame_capture_record(raw->data, raw->size, lz4, &framed), 1);
    c->offsets[c->n++] = c->bytes.size;
    vor_out_bytes(&c->bytes, framed.data, framed.size);
    free(framed.data);
    LZ4_freeStream(lz4);
    raw->size = 0;
}

/* Records 1, 3, 6, 7 and 8 break a rule; 4 is a kind this reader does not know; 5 has a
 * flag this reader does not know, and a section after what it knows; 9 has a value for a
 * column never declared. */
static void build_rule_capture(rule_capture *c) {
    memset(c, 0, sizeof *c);
    c->bytes.max_capacity = 1u << 20;
    vor_capture_header_info info = {1, 0, "vor test", "rules", 1};
    vor_encode_capture_header(&c->bytes, &info);
    uint32_t S = n_system_columns();
    vor_out r = {NULL, 0, 0, 1u << 20, 0};
    frame_head(&r, 0, 0, 0, 1000); /* 0: fine */
    frame_values(&r, 0);
    add_record(c, &r);
    frame_head(&r, VOR_FRAME_PRESENCE, 1, 1000, 1000); /* 1: a presence bit at S */
    vor_out_varint(&r, (1u << S) | 1u);
    frame_values(&r, 0);
    add_record(c, &r);
    frame_head(&r, 0, 1, 1000, 1000); /* 2: fine */
    frame_values(&r, 0);
    add_record(c, &r);
    frame_head(&r, 0, 1, 2000, 1000); /* 3: index 1 again */
    frame_values(&r, 0);
    add_record(c, &r);
    vor_out_u8(&r, 9); /* 4: an unknown kind */
    vor_out_varint(&r, 12345);
    add_record(c, &r);
    frame_head(&r, 0x10, 2, 2000, 1000); /* 5: an unknown flag; its section follows */
    frame_values(&r, 0);
    vor_out_bytes(&r, "\xff\xff\xff", 3);
    add_record(c, &r);
    frame_head(&r, 0, 3, (uint64_t)INT64_MAX, 1); /* 6: start + duration past 2^63 - 1 */
    frame_values(&r, 0);
    add_record(c, &r);
    frame_head(&r, VOR_FRAME_FLAME, 3, 3000, 1000); /* 7: 257 open scopes on a thread */
    frame_values(&r, 0);
    vor_out_varint(&r, 1);
    vor_out_varint(&r, 0);
    vor_out_varint(&r, 0);
    vor_out_varint(&r, 257);
    for (int k = 0; k < 257; k++) {
        vor_out_varint(&r, 1);
        vor_out_svarint(&r, 0);
    }
    add_record(c, &r);
    frame_head(&r, VOR_FRAME_FLAME, 3, 3000, 1000); /* 8: a scope lasting 2^63 ns */
    frame_values(&r, 0);
    vor_out_varint(&r, 1);
    vor_out_varint(&r, 0);
    vor_out_varint(&r, 1);
    vor_out_varint(&r, 0);
    vor_out_varint(&r, 1);
    vor_out_varint(&r, 2);
    vor_out_svarint(&r, 0);
    vor_out_varint(&r, (uint64_t)INT64_MAX + 1);
    add_record(c, &r);
    frame_head(&r, 0, 3, 3000, 1000); /* 9: a value for column S, never declared */
    frame_values(&r, 1);
    add_record(c, &r);
    vor_encode_end(&r);
    add_record(c, &r);
    free(r.data);
}

static void rules_a_reader_enforces_cost_the_record_that_breaks_them(void **state) {
    (void)state;
    rule_capture c;
    build_rule_capture(&c);
    vor_reader *r = vor_reader_open_memory();
    assert_int_equal(vor_reader_feed(r, c.bytes.data, c.bytes.size), 1);
    vor_reader_frame f;
    uint64_t want[] = {0, 1, 2, 3};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(vor_reader_next(r, &f), VOR_READ_FRAME);
        assert_int_equal(f.index, want[i]);
    }
    /* The value of the column never declared: "column S". */
    assert_int_equal(f.n_values, n_system_columns() + 1);
    const vor_reader_column *col = vor_reader_get_column(r, f.values[f.n_values - 1].column_id);
    char name[32];
    snprintf(name, sizeof name, "column %u", n_system_columns());
    assert_string_equal(col->name, name);
    assert_true(f.values[f.n_values - 1].value == 1.5);
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_NOTHING_YET);
    assert_int_equal(vor_reader_finished(r), 1);
    const uint32_t damaged[] = {1, 3, 6, 7, 8};
    const char *problems[] = {"system columns the header does not have", "does not follow", "frame end out of range",
                              "malformed flame frame", "malformed scope"};
    assert_int_equal(vor_reader_damage_count(r), 5);
    for (uint32_t i = 0; i < 5; i++) {
        vor_reader_damage d;
        assert_int_equal(vor_reader_get_damage(r, i, &d), 1);
        assert_int_equal(d.offset, c.offsets[damaged[i]]);
        assert_int_equal(d.length, c.offsets[damaged[i] + 1] - c.offsets[damaged[i]]);
        if (strstr(d.problem, problems[i]) == NULL) fail_msg("damage %u: %s", i, d.problem);
    }
    vor_reader_close(r);
    free(c.bytes.data);
}

int main(int argc, char **argv) {
    vor_calibrate(); /* with the real clock (the tests use a fake one): a cost to write */
    if (argc == 3 && strcmp(argv[1], "--write-rules") == 0) {
        rule_capture c;
        build_rule_capture(&c);
        write_file(argv[2], c.bytes.data, c.bytes.size);
        free(c.bytes.data);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        crafted c;
        write_crafted(argv[2], &c);
        session_teardown();
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(header_carries_the_clock_facts_and_the_costs, capture_teardown),
        cmocka_unit_test_teardown(open_scopes_unwound_scopes_parents_and_drops, capture_teardown),
        cmocka_unit_test_teardown(frame_view_version_2_carries_open_scopes_parents_flags_and_drops, capture_teardown),
        cmocka_unit_test_teardown(what_one_and_two_lost_records_cost, capture_teardown),
        cmocka_unit_test_teardown(rules_a_reader_enforces_cost_the_record_that_breaks_them, capture_teardown),
    };
    return cmocka_run_group_tests_name("capture format 1.1", tests, NULL, NULL);
}
