/* record_decoder.c: decodes one decoded .vor record into a frame (docs/FORMAT.md §4): the
 * frame fields, declarations of columns, sites, threads and modules, system and user
 * values, drops and the flame frame, in format 1.1 (self-contained records) and 1.0
 * (records read against the ones before).
 *
 * Everything read is bounds-checked through vor_in (a short or malformed record sets
 * one flag), every count is checked against the bytes left before anything is
 * allocated for it, and tables only grow for declared ids up to the limits in reader.h:
 * a hostile record can make the reader allocate up to those limits (a declared site id
 * near 2^20 sizes the site table for it; scopes take at most sixteen times their
 * encoded size), never beyond. A record that is wrong is reported as malformed with what
 * was wrong; the caller decides what that costs (1.1: that record; 1.0: an error).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "capture_format.h"
#include "reader_internal.h"
#include "scope_order.h"

typedef struct decode {
    vor_reader *r;
    vor_in in;
    uint32_t minor;
    char *problem;
} decode;

static reader_decode_status malformed(decode *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static reader_decode_status malformed(decode *d, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(d->problem, READER_PROBLEM_BYTES, fmt, args);
    va_end(args);
    return DECODE_MALFORMED;
}

static reader_decode_status out_of_memory(decode *d, uint64_t at, const char *what) {
    vor_reader_fail(d->r, at, "out of memory for %s", what);
    return DECODE_FATAL;
}

static char *take_string(vor_in *in, int *oom) {
    size_t n;
    const uint8_t *s = vor_in_string(in, &n);
    if (in->failed) return NULL;
    if (n > VOR_CAPTURE_MAX_STRING) {
        in->failed = 1;
        return NULL;
    }
    char *c = vor_reader_strdup(s, n);
    if (c == NULL) *oom = 1;
    return c;
}

/* Grows a per-frame array to hold `need` entries (limit: `limit` entries). */
static int grow_frame_array(void **array, uint64_t *capacity, uint64_t need, size_t elem, uint64_t limit) {
    if (need <= *capacity) return 1;
    if (need > limit) return 0;
    uint64_t cap = *capacity ? *capacity : 16;
    while (cap < need) cap *= 2;
    if (cap > limit) cap = limit;
    void *p = realloc(*array, (size_t)cap * elem);
    if (p == NULL) return 0;
    *array = p;
    *capacity = cap;
    return 1;
}

/* ---- Declarations (§4.1) ---- */

static reader_decode_status read_columns(decode *d, uint64_t at) {
    vor_reader *r = d->r;
    uint64_t n = vor_in_varint(&d->in);
    if (d->in.failed || n > vor_in_left(&d->in)) return malformed(d, "malformed column declarations");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = vor_in_varint(&d->in);
        if (d->in.failed) return malformed(d, "malformed column declarations");
        if (id < r->system_count || id >= VOR_READER_MAX_COLUMNS)
            return malformed(d, "a record declares column %llu, outside %u..%u", (unsigned long long)id,
                             r->system_count, VOR_READER_MAX_COLUMNS - 1);
        if (!vor_reader_ensure_column(r, (uint32_t)id)) return out_of_memory(d, at, "columns");
        int oom = 0;
        char *name = take_string(&d->in, &oom), *unit = take_string(&d->in, &oom);
        if (d->in.failed || oom) {
            free(name);
            free(unit);
            return oom ? out_of_memory(d, at, "a name") : malformed(d, "malformed column declarations");
        }
        vor_reader_column *c = &r->columns[id];
        free((char *)c->name);
        free((char *)c->unit);
        c->id = (uint32_t)id;
        c->is_system = 0;
        c->name = name;
        c->unit = unit;
        if (id + 1 > r->column_count) r->column_count = (uint32_t)id + 1;
    }
    return DECODE_FRAME;
}

static reader_decode_status read_sites(decode *d, uint64_t at) {
    vor_reader *r = d->r;
    uint64_t n = vor_in_varint(&d->in);
    if (d->in.failed || n > vor_in_left(&d->in)) return malformed(d, "malformed site declarations");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = vor_in_varint(&d->in);
        if (d->in.failed) return malformed(d, "malformed site declarations");
        if (id == 0 || id > VOR_READER_MAX_SITES)
            return malformed(d, "a record declares scope site %llu, outside 1..%u", (unsigned long long)id,
                             VOR_READER_MAX_SITES);
        if (!vor_reader_ensure_site(r, (uint32_t)id)) return out_of_memory(d, at, "sites");
        int oom = 0;
        char *name = take_string(&d->in, &oom), *function = take_string(&d->in, &oom),
             *file = take_string(&d->in, &oom);
        uint64_t line = vor_in_varint(&d->in);
        uint64_t module_id = 0, address = 0;
        if (d->minor >= 1) {
            module_id = vor_in_varint(&d->in);
            address = vor_in_varint(&d->in);
        }
        if (d->in.failed || oom || module_id > VOR_CAPTURE_MAX_MODULE_ID) {
            free(name);
            free(function);
            free(file);
            return oom ? out_of_memory(d, at, "a name") : malformed(d, "malformed site declarations");
        }
        vor_reader_site *s = &r->sites[id];
        free((char *)s->name);
        free((char *)s->function);
        free((char *)s->file);
        s->id = (uint32_t)id;
        s->name = name;
        s->function = function;
        s->file = file;
        s->line = line > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)line;
        s->module_id = (uint32_t)module_id;
        s->address = address;
        if (id > r->site_count) r->site_count = (uint32_t)id;
    }
    return DECODE_FRAME;
}

static reader_decode_status read_threads(decode *d, uint64_t at) {
    uint64_t n = vor_in_varint(&d->in);
    if (d->in.failed || n > vor_in_left(&d->in)) return malformed(d, "malformed thread declarations");
    for (uint64_t i = 0; i < n; i++) {
        int oom = 0;
        uint64_t id = vor_in_varint(&d->in);
        char *name = take_string(&d->in, &oom);
        uint64_t tid = vor_in_varint(&d->in);
        if (d->in.failed || oom || id > 0xFFFFFFFFu) {
            free(name);
            return oom ? out_of_memory(d, at, "a name") : malformed(d, "malformed thread declarations");
        }
        vor_reader_thread *t = vor_reader_thread_slot(d->r, (uint32_t)id, 1);
        if (t == NULL) {
            free(name);
            return malformed(d, "more than %u threads declared", VOR_READER_MAX_THREADS);
        }
        free((char *)t->name);
        t->name = name;
        t->os_tid = tid;
    }
    return DECODE_FRAME;
}

static reader_decode_status read_modules(decode *d, uint64_t at) {
    vor_reader *r = d->r;
    uint64_t n = vor_in_varint(&d->in);
    if (d->in.failed || n > vor_in_left(&d->in)) return malformed(d, "malformed module declarations");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = vor_in_varint(&d->in);
        if (d->in.failed) return malformed(d, "malformed module declarations");
        if (id == 0 || id > VOR_CAPTURE_MAX_MODULE_ID)
            return malformed(d, "a record declares module %llu, outside 1..%u", (unsigned long long)id,
                             VOR_CAPTURE_MAX_MODULE_ID);
        if (!vor_reader_ensure_module(r, (uint32_t)id)) return out_of_memory(d, at, "modules");
        int oom = 0;
        char *path = take_string(&d->in, &oom), *build_id = take_string(&d->in, &oom);
        uint64_t load = vor_in_varint(&d->in);
        if (d->in.failed || oom) {
            free(path);
            free(build_id);
            return oom ? out_of_memory(d, at, "a name") : malformed(d, "malformed module declarations");
        }
        vor_reader_module *m = &r->modules[id];
        free((char *)m->path);
        free((char *)m->build_id);
        m->id = (uint32_t)id;
        m->path = path;
        m->build_id = build_id;
        m->load_address = load;
        if (id > r->module_count) r->module_count = (uint32_t)id;
    }
    return DECODE_FRAME;
}

static reader_decode_status read_declarations(decode *d, uint64_t at) {
    reader_decode_status s = read_columns(d, at);
    if (s == DECODE_FRAME) s = read_sites(d, at);
    if (s == DECODE_FRAME) s = read_threads(d, at);
    if (s == DECODE_FRAME && d->minor >= 1) s = read_modules(d, at);
    return s;
}

/* ---- Values (§4.3, §4.4) ---- */

static reader_decode_status read_values(decode *d, uint64_t at, uint32_t present, vor_reader_frame *f) {
    vor_reader *r = d->r;
    vor_in *in = &d->in;
    uint32_t k = 0;
    /* Room for every system value and as many user values as bytes are left. */
    uint64_t need = r->system_count + (uint64_t)vor_in_left(in) + 1;
    if (need > r->values_capacity) {
        if (need > VOR_READER_MAX_COLUMNS + READER_MAX_SYSTEM_COLUMNS)
            need = VOR_READER_MAX_COLUMNS + READER_MAX_SYSTEM_COLUMNS;
        if (need > r->values_capacity) {
            vor_reader_value *v = realloc(r->values, (size_t)need * sizeof *v);
            if (v == NULL) return out_of_memory(d, at, "values");
            r->values = v;
            r->values_capacity = (uint32_t)need;
        }
    }
    if (present & 1u) {
        r->values[k].column_id = 0;
        r->values[k].value = (double)f->duration_ns * r->system_scale[0];
        k++;
    }
    for (uint32_t c = 1; c < r->system_count; c++) {
        if (!(present & (1u << c))) continue;
        int64_t v = vor_in_svarint(in);
        if (r->system_encoding[c] == VOR_ENCODING_DELTA) {
            if (__builtin_add_overflow(v, r->prev_system[c], &v)) return malformed(d, "system value out of range");
            r->prev_system[c] = v;
        }
        r->values[k].column_id = c;
        r->values[k].value = (double)v * r->system_scale[c];
        k++;
    }
    uint64_t n_user = vor_in_varint(in);
    if (in->failed || n_user > vor_in_left(in)) return malformed(d, "malformed values in a frame record");
    uint64_t id = r->system_count - 1;
    for (uint64_t u = 0; u < n_user; u++) {
        uint64_t gap = vor_in_varint(in);
        if (in->failed || gap >= VOR_READER_MAX_COLUMNS) return malformed(d, "malformed values in a frame record");
        id += gap + 1;
        if (id >= VOR_READER_MAX_COLUMNS)
            return malformed(d, "a value for column %llu, outside the column ids", (unsigned long long)id);
        if (id >= r->column_count || r->columns[id].name == NULL) {
            if (d->minor == 0)
                return malformed(d, "a frame record has a value for undeclared column %llu", (unsigned long long)id);
            /* 1.1: its declarations were lost with damaged records; it is "column N". */
            if (!vor_reader_name_undeclared_column(r, (uint32_t)id)) return out_of_memory(d, at, "a column");
        }
        reader_user_value *uv = &r->user[id];
        double v;
        int known = 1;
        if (d->minor == 0) {
            v = vor_in_xor_f64(in, uv->value);
        } else {
            int unchanged;
            v = vor_in_full_f64(in, &unchanged);
            /* "Unchanged" is its value two frames back at most: known if the reader read
             * the frame before or the one before that. */
            if (unchanged) {
                known = uv->known && f->index - uv->known_at <= 2;
                v = uv->value;
            }
        }
        if (in->failed) return malformed(d, "malformed values in a frame record");
        uv->value = v;
        uv->known = known;
        uv->known_at = f->index;
        if (!known) continue; /* lost with two records in a row: left out until written in full */
        r->values[k].column_id = (uint32_t)id;
        r->values[k].value = v;
        k++;
    }
    f->n_values = k;
    f->values = r->values;
    return DECODE_FRAME;
}

/* ---- Drops (§4.6) ---- */

static reader_decode_status read_drops(decode *d, uint64_t at, vor_reader_frame *f) {
    vor_reader *r = d->r;
    f->dropped_scopes = vor_in_varint(&d->in);
    if (d->minor == 0) return d->in.failed ? malformed(d, "malformed drops in a frame record") : DECODE_FRAME;
    uint64_t n = vor_in_varint(&d->in);
    if (d->in.failed || n > vor_in_left(&d->in) / 3) return malformed(d, "malformed drops in a frame record");
    if (!grow_frame_array((void **)&r->drops, &r->drops_capacity, n, sizeof *r->drops, VOR_READER_MAX_RECORD_BYTES / 3))
        return out_of_memory(d, at, "drops");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t cause = vor_in_varint(&d->in), thread = vor_in_varint(&d->in), count = vor_in_varint(&d->in);
        if (d->in.failed || cause > 0xFFFFFFFFu || thread > 0xFFFFFFFFu)
            return malformed(d, "malformed drops in a frame record");
        r->drops[i] = (vor_reader_drop){(uint32_t)cause, (uint32_t)thread, count};
    }
    f->n_drops = (uint32_t)n;
    f->drops = r->drops;
    return DECODE_FRAME;
}

/* ---- Flame frame (§4.5) ---- */

/* One ended scope's fields (start relative to *prev). */
static int read_ended_scope(decode *d, int64_t *prev, vor_reader_scope *s) {
    uint64_t site = vor_in_varint(&d->in), depth = vor_in_varint(&d->in);
    int64_t start;
    int overflow = __builtin_add_overflow(*prev, vor_in_svarint(&d->in), &start);
    uint64_t duration = vor_in_varint(&d->in);
    int64_t end;
    uint32_t flags = 0;
    if (d->minor >= 1) {
        flags = (depth & 1) ? VOR_SCOPE_UNWOUND : 0;
        depth >>= 1;
    }
    if (d->in.failed || overflow || site > 0xFFFFFFFFu || depth > 0xFFFFFFFFu || duration > (uint64_t)INT64_MAX ||
        __builtin_add_overflow(start, (int64_t)duration, &end))
        return 0;
    *s = (vor_reader_scope){(uint32_t)site, (uint32_t)depth, start, (int64_t)duration, VOR_PARENT_UNKNOWN, flags};
    *prev = start;
    return 1;
}

static reader_decode_status read_flame(decode *d, uint64_t at, vor_reader_frame *f) {
    vor_reader *r = d->r;
    vor_in *in = &d->in;
    int64_t frame_end = f->start_ns + f->duration_ns;
    uint64_t n_threads = vor_in_varint(in);
    if (in->failed || n_threads > vor_in_left(in) / 2) return malformed(d, "malformed flame frame in a frame record");
    uint64_t cap = r->frame_threads_capacity;
    if (!grow_frame_array((void **)&r->frame_threads, &cap, n_threads, sizeof *r->frame_threads,
                          VOR_READER_MAX_THREADS))
        return n_threads > VOR_READER_MAX_THREADS
                   ? malformed(d, "a flame frame lists %llu threads", (unsigned long long)n_threads)
                   : out_of_memory(d, at, "threads");
    r->frame_threads_capacity = (uint32_t)cap;
    uint64_t total = 0, ended = 0;
    for (uint64_t t = 0; t < n_threads; t++) {
        uint64_t id = vor_in_varint(in);
        uint64_t n = vor_in_varint(in);
        uint64_t n_open = d->minor >= 1 ? vor_in_varint(in) : 0;
        /* An ended scope takes at least 4 bytes, an open one 2. */
        if (in->failed || id > 0xFFFFFFFFu || n > vor_in_left(in) / 4 || n_open > VOR_CAPTURE_MAX_OPEN_SCOPES ||
            n_open > vor_in_left(in) / 2)
            return malformed(d, "malformed flame frame in a frame record");
        if (r->max_frame_scopes && total + n + n_open > r->max_frame_scopes) { /* before allocating */
            vor_reader_fail(r, at, "frame %llu holds more than %llu scopes, the limit set for this reader",
                            (unsigned long long)f->index, (unsigned long long)r->max_frame_scopes);
            return DECODE_FATAL;
        }
        if (!grow_frame_array((void **)&r->scopes, &r->scopes_capacity, total + n + n_open, sizeof *r->scopes,
                              VOR_READER_MAX_RECORD_BYTES / 2))
            return out_of_memory(d, at, "scopes");
        vor_reader_scope *scopes = r->scopes ? r->scopes + total : NULL; /* NULL: no scope yet, none here */
        int64_t prev = f->start_ns;
        for (uint64_t i = 0; i < n; i++)
            if (!read_ended_scope(d, &prev, &scopes[i])) return malformed(d, "malformed scope in a flame frame");
        prev = f->start_ns;
        for (uint64_t k = 0; k < n_open; k++) {
            uint64_t site = vor_in_varint(in);
            int64_t start;
            if (__builtin_add_overflow(prev, vor_in_svarint(in), &start) || in->failed || site > 0xFFFFFFFFu)
                return malformed(d, "malformed open scope in a flame frame");
            /* Open at the frame's end: its duration so far. */
            int64_t duration = start < frame_end ? frame_end - start : 0;
            scopes[n + k] =
                (vor_reader_scope){(uint32_t)site, (uint32_t)k, start, duration, VOR_PARENT_UNKNOWN, VOR_SCOPE_OPEN};
            prev = start;
        }
        /* The parent rule (§4.5), the one implementation every reader uses. */
        uint32_t last_at[VOR_MAX_DEPTH];
        if (n + n_open > 0) vor_scopes_link_parents(scopes, (uint32_t)n, (uint32_t)n_open, last_at, VOR_MAX_DEPTH);
        r->frame_threads[t] = (vor_reader_thread_scopes){(uint32_t)id, (uint32_t)n, NULL, (uint32_t)n_open};
        total += n + n_open;
        ended += n;
    }
    /* Pointers after all growth is done. */
    uint64_t k = 0;
    for (uint64_t t = 0; t < n_threads; t++) {
        r->frame_threads[t].scopes = r->scopes ? r->scopes + k : NULL; /* all threads may be empty */
        k += r->frame_threads[t].n_scopes + r->frame_threads[t].n_open;
    }
    f->has_flame = 1;
    f->n_threads = (uint32_t)n_threads;
    f->threads = r->frame_threads;
    f->n_scopes = ended;
    return DECODE_FRAME;
}

/* ---- Frame records (§4) ---- */

/* The frame's index, start, duration and overhead. */
static reader_decode_status read_frame_times(decode *d, vor_reader_frame *f) {
    vor_reader *r = d->r;
    vor_in *in = &d->in;
    uint64_t index = vor_in_varint(in);
    uint64_t start = vor_in_varint(in); /* 1.0: svarint, read below */
    uint64_t duration = vor_in_varint(in);
    uint64_t overhead = vor_in_varint(in);
    if (in->failed || duration > (uint64_t)INT64_MAX || overhead > (uint64_t)INT64_MAX)
        return malformed(d, "malformed frame record");
    if (d->minor == 0) {
        /* Index and start against the previous frame. */
        uint64_t expected = r->started ? r->prev_index + 1 : 0;
        int64_t expected_start = 0;
        if (__builtin_add_overflow(expected, index, &f->index)) return malformed(d, "frame index out of range");
        if ((r->started && __builtin_add_overflow(r->prev_start, r->prev_duration, &expected_start)) ||
            __builtin_add_overflow(expected_start, vor_unzigzag(start), &f->start_ns))
            return malformed(d, "frame start out of range");
    } else {
        if (start > (uint64_t)INT64_MAX) return malformed(d, "frame start out of range");
        if (r->started && index <= r->prev_index)
            return malformed(d, "frame index %llu does not follow %llu", (unsigned long long)index,
                             (unsigned long long)r->prev_index);
        f->index = index;
        f->start_ns = (int64_t)start;
    }
    f->duration_ns = (int64_t)duration;
    f->overhead_ns = (int64_t)overhead;
    int64_t end;
    if (__builtin_add_overflow(f->start_ns, f->duration_ns, &end)) return malformed(d, "frame end out of range");
    return DECODE_FRAME;
}

static reader_decode_status decode_frame(decode *d, uint64_t at, vor_reader_frame *f) {
    vor_reader *r = d->r;
    memset(f, 0, sizeof *f);
    uint64_t flags = vor_in_varint(&d->in);
    if (d->in.failed) return malformed(d, "malformed frame record");
    reader_decode_status s = read_frame_times(d, f);
    if (s != DECODE_FRAME) return s;
    if ((flags & VOR_FRAME_DECLARATIONS) && (s = read_declarations(d, at)) != DECODE_FRAME) return s;
    /* 1.0: the mask holds until changed; 1.1: a record without one has every column. */
    uint32_t all = r->system_count >= 32 ? 0xFFFFFFFFu : (1u << r->system_count) - 1u;
    uint32_t present = d->minor >= 1 ? all : r->prev_present;
    if (flags & VOR_FRAME_PRESENCE) {
        uint64_t mask = vor_in_varint(&d->in);
        if (d->in.failed || mask >> r->system_count)
            return malformed(d, "a frame record names system columns the header does not have");
        present = (uint32_t)mask;
    }
    if ((s = read_values(d, at, present, f)) != DECODE_FRAME) return s;
    if ((flags & VOR_FRAME_DROPS) && (s = read_drops(d, at, f)) != DECODE_FRAME) return s;
    if ((flags & VOR_FRAME_FLAME) && r->skip_flame) {
        f->has_flame = 1; /* the frame has scopes; this reader was asked not to decode them */
    } else if ((flags & VOR_FRAME_FLAME) && (s = read_flame(d, at, f)) != DECODE_FRAME) {
        return s;
    }
    /* Sections of flags this reader does not know come last: they are skipped. */

    r->started = 1;
    r->prev_index = f->index;
    r->prev_start = f->start_ns;
    r->prev_duration = f->duration_ns;
    r->prev_present = present;
    return DECODE_FRAME;
}

/* ---- State records (§4.8): declarations and user values for a reader starting mid-capture ---- */

static reader_decode_status decode_state(decode *d, uint64_t at) {
    vor_reader *r = d->r;
    vor_in *in = &d->in;
    uint64_t flags = vor_in_varint(in);
    (void)vor_in_varint(in); /* the index of the frame the state precedes: informative */
    if (in->failed) return malformed(d, "malformed state record");
    reader_decode_status s;
    if ((flags & VOR_STATE_DECLARATIONS) && (s = read_declarations(d, at)) != DECODE_FRAME) return s;
    if (!(flags & VOR_STATE_VALUES)) return DECODE_NO_FRAME;
    uint64_t n = vor_in_varint(in);
    if (in->failed || n > vor_in_left(in)) return malformed(d, "malformed values in a state record");
    uint64_t id = r->system_count - 1;
    for (uint64_t u = 0; u < n; u++) {
        uint64_t gap = vor_in_varint(in);
        if (in->failed || gap >= VOR_READER_MAX_COLUMNS) return malformed(d, "malformed values in a state record");
        id += gap + 1;
        if (id >= VOR_READER_MAX_COLUMNS)
            return malformed(d, "a state value for column %llu, outside the column ids", (unsigned long long)id);
        int unchanged;
        double v = vor_in_full_f64(in, &unchanged);
        uint64_t read_in = vor_in_varint(in);
        if (in->failed || unchanged) return malformed(d, "malformed values in a state record");
        if (id >= r->column_count || r->columns[id].name == NULL)
            if (!vor_reader_name_undeclared_column(r, (uint32_t)id)) return out_of_memory(d, at, "a column");
        r->user[id] = (reader_user_value){v, read_in, 1};
    }
    return DECODE_NO_FRAME;
}

reader_decode_status vor_decode_record(vor_reader *r, const uint8_t *p, size_t n, uint64_t at, vor_reader_frame *frame,
                                       char problem[READER_PROBLEM_BYTES]) {
    decode d = {r, {p, p + n, 0}, r->info.version_minor, problem};
    problem[0] = '\0';
    uint8_t kind = vor_in_u8(&d.in);
    if (d.in.failed) return malformed(&d, "empty record");
    switch (kind) {
    case VOR_RECORD_FRAME: return decode_frame(&d, at, frame);
    case VOR_RECORD_END: r->finished = 1; return DECODE_NO_FRAME;
    case VOR_RECORD_STATE:
        if (d.minor >= 1) return decode_state(&d, at);
        return DECODE_NO_FRAME;      /* 1.0 streams cannot be resumed: skipped like any unknown kind */
    default: return DECODE_NO_FRAME; /* a kind from a newer minor version: skipped */
    }
}
