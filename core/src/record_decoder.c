/* record_decoder.c: decodes one decoded .vor record into a frame (docs/FORMAT.md): the
 * frame fields, declarations of columns, sites and threads, system values (absolute or
 * delta), user values (XOR of the previous value), drops and the flame frame.
 *
 * Everything read is bounds-checked through vor_in (a short or malformed record sets
 * one flag), every count is checked against the bytes left before anything is
 * allocated for it, and tables only grow up to the limits in reader.h: a hostile record
 * can make the reader allocate up to those limits (a site id near 2^20 sizes the site
 * table for it; scopes take about six times their encoded size), never beyond.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "capture_format.h"
#include "reader_internal.h"
#include "scope_order.h"

char *vor_reader_strdup(const uint8_t *s, size_t n) {
    char *c = malloc(n + 1);
    if (c) {
        if (n) memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static char *take_string(vor_in *in) {
    size_t n;
    const uint8_t *s = vor_in_string(in, &n);
    if (in->failed) return NULL;
    if (n > VOR_CAPTURE_MAX_STRING) {
        in->failed = 1;
        return NULL;
    }
    char *c = vor_reader_strdup(s, n);
    if (c == NULL) in->failed = 1;
    return c;
}

/* Grows an array to hold index `need` (exclusive bound need+1), zeroing new entries. */
static int grow(void **array, uint64_t *capacity, uint64_t need, size_t elem, uint64_t limit) {
    if (need < *capacity) return 1;
    if (need >= limit) return 0;
    uint64_t cap = *capacity ? *capacity : 16;
    while (cap <= need) cap *= 2;
    if (cap > limit) cap = limit;
    void *p = realloc(*array, (size_t)cap * elem);
    if (p == NULL) return 0;
    memset((char *)p + (size_t)*capacity * elem, 0, (size_t)(cap - *capacity) * elem);
    *array = p;
    *capacity = cap;
    return 1;
}

static int ensure_column(vor_reader *r, uint32_t id) {
    uint64_t cap = r->column_capacity, cap2 = r->column_capacity;
    if (!grow((void **)&r->columns, &cap, id, sizeof *r->columns, VOR_READER_MAX_COLUMNS)) return 0;
    if (!grow((void **)&r->prev_user, &cap2, id, sizeof *r->prev_user, VOR_READER_MAX_COLUMNS)) return 0;
    r->column_capacity = (uint32_t)cap;
    return 1;
}

static vor_reader_thread *thread_slot(vor_reader *r, uint32_t id, int create) {
    if (r->thread_capacity == 0) {
        if (!create) return NULL;
        r->threads = calloc(64, sizeof *r->threads);
        if (r->threads == NULL) return NULL;
        r->thread_capacity = 64;
    }
    for (;;) {
        uint32_t mask = r->thread_capacity - 1;
        for (uint32_t probe = 0; probe <= mask; probe++) {
            reader_thread_slot *s = &r->threads[(id * 2654435761u + probe) & mask];
            if (s->used && s->thread.id == id) return &s->thread;
            if (!s->used) {
                if (!create) return NULL;
                if (r->thread_count * 2 >= r->thread_capacity) break; /* grow first */
                s->used = 1;
                s->thread.id = id;
                r->thread_count++;
                return &s->thread;
            }
        }
        if (!create || r->thread_capacity >= VOR_READER_MAX_THREADS * 2) return NULL;
        /* Rehash into twice the slots. */
        uint32_t old_cap = r->thread_capacity;
        reader_thread_slot *old = r->threads;
        reader_thread_slot *fresh = calloc(old_cap * 2, sizeof *fresh);
        if (fresh == NULL) return NULL;
        r->threads = fresh;
        r->thread_capacity = old_cap * 2;
        for (uint32_t i = 0; i < old_cap; i++) {
            if (!old[i].used) continue;
            uint32_t m = r->thread_capacity - 1;
            for (uint32_t probe = 0;; probe++) {
                reader_thread_slot *s = &r->threads[(old[i].thread.id * 2654435761u + probe) & m];
                if (!s->used) {
                    *s = old[i];
                    break;
                }
            }
        }
        free(old);
    }
}

const vor_reader_thread *vor_reader_get_thread(const vor_reader *r, uint32_t id) {
    return r ? thread_slot((vor_reader *)r, id, 0) : NULL;
}

static int read_declarations(vor_reader *r, vor_in *in, uint64_t at) {
    uint64_t n = vor_in_varint(in);
    if (in->failed || n > vor_in_left(in)) goto bad;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = vor_in_varint(in);
        if (in->failed) goto bad;
        if (id < r->system_count || id >= VOR_READER_MAX_COLUMNS || !ensure_column(r, (uint32_t)id)) {
            vor_reader_fail(r, at, "a record declares column %llu, outside 0..%u", (unsigned long long)id,
                            VOR_READER_MAX_COLUMNS - 1);
            return 0;
        }
        char *name = take_string(in), *unit = take_string(in);
        if (in->failed) {
            free(name);
            free(unit);
            goto bad;
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
    n = vor_in_varint(in);
    if (in->failed || n > vor_in_left(in)) goto bad;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = vor_in_varint(in);
        if (in->failed) goto bad;
        uint64_t cap = r->site_capacity;
        if (id == 0 || !grow((void **)&r->sites, &cap, id, sizeof *r->sites, VOR_READER_MAX_SITES + 1)) {
            vor_reader_fail(r, at, "a record declares scope site %llu, outside 1..%u", (unsigned long long)id,
                            VOR_READER_MAX_SITES);
            return 0;
        }
        r->site_capacity = (uint32_t)cap;
        char *name = take_string(in), *function = take_string(in), *file = take_string(in);
        uint64_t line = vor_in_varint(in);
        if (in->failed) {
            free(name);
            free(function);
            free(file);
            goto bad;
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
        if (id > r->site_count) r->site_count = (uint32_t)id;
    }
    n = vor_in_varint(in);
    if (in->failed || n > vor_in_left(in)) goto bad;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = vor_in_varint(in);
        char *name = take_string(in);
        uint64_t tid = vor_in_varint(in);
        if (in->failed || id > 0xFFFFFFFFu) {
            free(name);
            goto bad;
        }
        vor_reader_thread *t = thread_slot(r, (uint32_t)id, 1);
        if (t == NULL) {
            free(name);
            vor_reader_fail(r, at, "more than %u threads declared", VOR_READER_MAX_THREADS);
            return 0;
        }
        free((char *)t->name);
        t->name = name;
        t->os_tid = tid;
    }
    return 1;
bad:
    vor_reader_fail(r, at, "malformed declarations in a frame record");
    return 0;
}

static int read_flame(vor_reader *r, vor_in *in, uint64_t at, int64_t frame_start, vor_reader_frame *f) {
    uint64_t n_threads = vor_in_varint(in);
    if (in->failed || n_threads > vor_in_left(in) / 2) goto bad;
    uint64_t cap = r->frame_threads_capacity;
    if (n_threads && !grow((void **)&r->frame_threads, &cap, n_threads - 1, sizeof *r->frame_threads,
                           VOR_READER_MAX_THREADS)) {
        vor_reader_fail(r, at, "a flame frame lists %llu threads", (unsigned long long)n_threads);
        return 0;
    }
    r->frame_threads_capacity = (uint32_t)cap;
    uint64_t total = 0;
    for (uint64_t t = 0; t < n_threads; t++) {
        uint64_t id = vor_in_varint(in);
        uint64_t n = vor_in_varint(in);
        /* Each scope takes at least 4 bytes. */
        if (in->failed || id > 0xFFFFFFFFu || n > vor_in_left(in) / 4) goto bad;
        if (n && !grow((void **)&r->scopes, &r->scopes_capacity, total + n - 1, sizeof *r->scopes,
                       VOR_READER_MAX_RECORD_BYTES / 4)) {
            vor_reader_fail(r, at, "out of memory for %llu scopes", (unsigned long long)(total + n));
            return 0;
        }
        int64_t prev = frame_start;
        for (uint64_t i = 0; i < n; i++) {
            vor_reader_scope *s = &r->scopes[total + i];
            uint64_t site = vor_in_varint(in), depth = vor_in_varint(in);
            int64_t start;
            int overflow = __builtin_add_overflow(prev, vor_in_svarint(in), &start);
            uint64_t duration = vor_in_varint(in);
            int64_t end;
            if (in->failed || overflow || site > 0xFFFFFFFFu || depth > 0xFFFFFFFFu || duration > (uint64_t)INT64_MAX ||
                __builtin_add_overflow(start, (int64_t)duration, &end))
                goto bad;
            s->site_id = (uint32_t)site;
            s->depth = (uint32_t)depth;
            s->start_ns = start;
            s->duration_ns = (int64_t)duration;
            s->flags = 0;
            prev = start;
        }
        /* 1.0 captures list no open scopes: a parent that ended in another frame is unknown. */
        if (n) {
            uint32_t last_at[VOR_MAX_DEPTH];
            vor_scopes_link_parents(&r->scopes[total], (uint32_t)n, 0, last_at, VOR_MAX_DEPTH);
        }
        r->frame_threads[t].thread_id = (uint32_t)id;
        r->frame_threads[t].n_scopes = (uint32_t)n;
        r->frame_threads[t].n_open = 0;
        total += n;
    }
    /* Pointers after all growth is done. */
    uint64_t k = 0;
    for (uint64_t t = 0; t < n_threads; t++) {
        r->frame_threads[t].scopes = r->scopes ? r->scopes + k : NULL; /* all threads may be empty */
        k += r->frame_threads[t].n_scopes;
    }
    f->has_flame = 1;
    f->n_threads = (uint32_t)n_threads;
    f->threads = r->frame_threads;
    f->n_scopes = total;
    return 1;
bad:
    vor_reader_fail(r, at, "malformed flame frame in a frame record");
    return 0;
}

static vor_read_status decode_frame(vor_reader *r, vor_in *in, uint64_t at, vor_reader_frame *f) {
    uint64_t flags = vor_in_varint(in);
    uint64_t index_delta = vor_in_varint(in);
    int64_t start_gap = vor_in_svarint(in);
    uint64_t duration = vor_in_varint(in);
    uint64_t overhead = vor_in_varint(in);
    if (in->failed || duration > (uint64_t)INT64_MAX || overhead > (uint64_t)INT64_MAX) {
        vor_reader_fail(r, at, "malformed frame record");
        return VOR_READ_ERROR;
    }
    memset(f, 0, sizeof *f);
    f->index = (r->started ? r->prev_index + 1 : 0) + index_delta;
    int64_t expected_start = 0;
    if ((r->started && __builtin_add_overflow(r->prev_start, r->prev_duration, &expected_start)) ||
        __builtin_add_overflow(expected_start, start_gap, &f->start_ns)) {
        vor_reader_fail(r, at, "frame start out of range: corrupt capture");
        return VOR_READ_ERROR;
    }
    f->duration_ns = (int64_t)duration;
    f->overhead_ns = (int64_t)overhead;
    int64_t end;
    if (__builtin_add_overflow(f->start_ns, f->duration_ns, &end)) {
        vor_reader_fail(r, at, "frame end out of range: corrupt capture");
        return VOR_READ_ERROR;
    }

    if ((flags & VOR_FRAME_DECLARATIONS) && !read_declarations(r, in, at)) return VOR_READ_ERROR;
    uint32_t present = r->prev_present;
    if (flags & VOR_FRAME_PRESENCE) {
        uint64_t mask = vor_in_varint(in);
        if (in->failed || mask >> r->system_count) {
            vor_reader_fail(r, at, "a frame record names system columns the header does not have");
            return VOR_READ_ERROR;
        }
        present = (uint32_t)mask;
    }

    /* Values: system ones present, then user ones. */
    uint32_t need = r->system_count + r->column_count + 1;
    if (need > r->values_capacity) {
        vor_reader_value *v = realloc(r->values, need * sizeof *v);
        if (v == NULL) {
            vor_reader_fail(r, at, "out of memory");
            return VOR_READ_ERROR;
        }
        r->values = v;
        r->values_capacity = need;
    }
    uint32_t k = 0;
    if (present & 1u) {
        r->values[k].column_id = 0;
        r->values[k].value = (double)f->duration_ns * r->system_scale[0];
        k++;
    }
    for (uint32_t c = 1; c < r->system_count; c++) {
        if (!(present & (1u << c))) continue;
        int64_t v = vor_in_svarint(in);
        if (r->system_encoding[c] == VOR_ENCODING_DELTA && __builtin_add_overflow(v, r->prev_system[c], &v)) {
            vor_reader_fail(r, at, "system value out of range: corrupt capture");
            return VOR_READ_ERROR;
        }
        r->prev_system[c] = v;
        r->values[k].column_id = c;
        r->values[k].value = (double)v * r->system_scale[c];
        k++;
    }
    uint64_t n_user = vor_in_varint(in);
    if (in->failed || n_user > vor_in_left(in)) {
        vor_reader_fail(r, at, "malformed values in a frame record");
        return VOR_READ_ERROR;
    }
    uint64_t id = r->system_count ? r->system_count - 1 : 0;
    for (uint64_t u = 0; u < n_user; u++) {
        uint64_t gap = vor_in_varint(in);
        if (gap >= VOR_READER_MAX_COLUMNS) in->failed = 1; /* ids only increase, within the table */
        id += gap + 1;
        if (in->failed || id >= r->column_count || r->columns[id].name == NULL || k >= r->values_capacity) {
            vor_reader_fail(r, at, "a frame record has a value for undeclared column %llu", (unsigned long long)id);
            return VOR_READ_ERROR;
        }
        double v = vor_in_xor_f64(in, r->prev_user[id]);
        r->prev_user[id] = v;
        r->values[k].column_id = (uint32_t)id;
        r->values[k].value = v;
        k++;
    }
    f->n_values = k;
    f->values = r->values;
    if (flags & VOR_FRAME_DROPS) f->dropped_scopes = vor_in_varint(in);
    if (in->failed) {
        vor_reader_fail(r, at, "malformed frame record");
        return VOR_READ_ERROR;
    }
    if ((flags & VOR_FRAME_FLAME) && !read_flame(r, in, at, f->start_ns, f)) return VOR_READ_ERROR;
    /* Sections of flags this reader does not know come last: they are skipped. */

    r->started = 1;
    r->prev_index = f->index;
    r->prev_start = f->start_ns;
    r->prev_duration = f->duration_ns;
    r->prev_present = present;
    return VOR_READ_FRAME;
}

vor_read_status vor_decode_record(vor_reader *r, const uint8_t *p, size_t n, uint64_t at, vor_reader_frame *frame) {
    vor_in in = {p, p + n, 0};
    uint8_t kind = vor_in_u8(&in);
    if (in.failed) {
        vor_reader_fail(r, at, "empty record");
        return VOR_READ_ERROR;
    }
    switch (kind) {
    case VOR_RECORD_FRAME:
        return decode_frame(r, &in, at, frame);
    case VOR_RECORD_END:
        r->finished = 1;
        return VOR_READ_NOTHING_YET;
    default:
        return VOR_READ_NOTHING_YET; /* a kind from a newer minor version: skipped */
    }
}
