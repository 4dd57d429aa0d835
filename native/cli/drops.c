/* drops.c: scopes the writer could not record, by cause and thread, for every output that
 * draws scopes (summary, flamegraph, diff): "how many were dropped, where, and why".
 *
 * Format 1.1 frames list their drops as (cause, thread, count); 1.0 frames only a total,
 * kept here as "cause not recorded" rather than guessed. Scopes left out on purpose
 * (VOR_MIN_DURATION_NS) are counted apart: they are not losses. Entries are per (cause,
 * thread) with the first and last frame index they occurred in and the thread's newest
 * name (kept, so that a report needs no open reader); past DROPS_MAX_ENTRIES
 * distinct pairs, further threads are merged per cause ("other threads"), so memory is
 * bounded whatever the capture holds. Counts saturate instead of wrapping.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static uint64_t add_sat_u64(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static const struct {
    uint32_t cause;
    const char *key, *text;
} causes[] = {
    {VOR_DROP_THREAD_BUFFER_FULL, "thread_buffer_full", "the thread's buffer was full"},
    {VOR_DROP_TOO_DEEP, "too_deep", "nested deeper than VOR_MAX_DEPTH"},
    {VOR_DROP_FRAME_FULL, "frame_full", "more scopes in the frame than its cap (max_frame_scopes)"},
    {VOR_DROP_THREAD_REFUSED, "thread_refused", "the thread got no buffer (too many threads or no memory)"},
    {VOR_DROP_SITE_TABLE_FULL, "site_table_full", "more scope sites than VOR_MAX_SITES"},
    {VOR_DROP_FILTERED, "filtered", "shorter than VOR_MIN_DURATION_NS (left out on purpose)"},
};

const char *drop_cause_key(uint32_t cause) {
    for (size_t i = 0; i < sizeof causes / sizeof *causes; i++)
        if (causes[i].cause == cause) return causes[i].key;
    return "unknown_cause";
}

const char *drop_cause_text(uint32_t cause) {
    for (size_t i = 0; i < sizeof causes / sizeof *causes; i++)
        if (causes[i].cause == cause) return causes[i].text;
    return "a cause this version of vor does not know";
}

void drop_stats_init(drop_stats *d) {
    memset(d, 0, sizeof *d);
}

void drop_stats_free(drop_stats *d) {
    free(d->entries);
    memset(d, 0, sizeof *d);
}

static drop_entry *entry_for(drop_stats *d, uint32_t cause, uint32_t thread_id, int any_thread) {
    for (uint32_t i = 0; i < d->n_entries; i++) {
        drop_entry *e = &d->entries[i];
        if (e->cause == cause && e->any_thread == any_thread && (any_thread || e->thread_id == thread_id)) return e;
    }
    if (d->n_entries >= DROPS_MAX_ENTRIES) return NULL;
    if (d->n_entries == d->cap_entries) {
        uint32_t cap = d->cap_entries ? d->cap_entries * 2 : 16;
        drop_entry *p = realloc(d->entries, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        d->entries = p;
        d->cap_entries = cap;
    }
    drop_entry *e = &d->entries[d->n_entries++];
    memset(e, 0, sizeof *e);
    e->cause = cause;
    e->thread_id = any_thread ? 0 : thread_id;
    e->any_thread = any_thread;
    return e;
}

/* Counts, and keeps the thread's newest name. */
static void count(drop_entry *e, const vor_reader *r, uint64_t n, uint64_t frame) {
    if (!e->any_thread) {
        const vor_reader_thread *th = vor_reader_get_thread(r, e->thread_id);
        if (th && th->name && th->name[0])
            snprintf(e->thread_name, sizeof e->thread_name, "%s", th->name);
        else if (!e->thread_name[0])
            snprintf(e->thread_name, sizeof e->thread_name, "thread %u", e->thread_id);
    }
    if (e->count == 0 || frame < e->first_frame) e->first_frame = frame;
    if (e->count == 0 || frame > e->last_frame) e->last_frame = frame;
    e->count = add_sat_u64(e->count, n);
}

void drop_stats_add(drop_stats *d, const vor_reader *r, const vor_reader_frame *f) {
    uint64_t listed = 0;
    for (uint32_t i = 0; i < f->n_drops; i++) {
        const vor_reader_drop *dr = &f->drops[i];
        if (dr->count == 0) continue;
        if (dr->cause == VOR_DROP_FILTERED) {
            d->filtered = add_sat_u64(d->filtered, dr->count);
            continue;
        }
        listed = add_sat_u64(listed, dr->count);
        /* Reserve the last entries for the per-cause merges. */
        drop_entry *e = d->n_entries + 8 < DROPS_MAX_ENTRIES ? entry_for(d, dr->cause, dr->thread_id, 0) : NULL;
        if (!e) e = entry_for(d, dr->cause, 0, 1);
        if (e)
            count(e, r, dr->count, f->index);
        else
            d->unattributed = add_sat_u64(d->unattributed, dr->count);
    }
    uint64_t total = f->dropped_scopes > listed ? f->dropped_scopes : listed;
    if (total > listed) { /* a 1.0 frame, or a total the list does not cover */
        d->unattributed = add_sat_u64(d->unattributed, total - listed);
        if (d->unattributed_frames == 0 || f->index < d->unattributed_first) d->unattributed_first = f->index;
        if (d->unattributed_frames == 0 || f->index > d->unattributed_last) d->unattributed_last = f->index;
        d->unattributed_frames++;
    }
    if (total) {
        d->total = add_sat_u64(d->total, total);
        d->frames_with_drops++;
        if (f->has_flame) d->in_flame_frames = add_sat_u64(d->in_flame_frames, total);
    }
}

static int compare_entries(const void *a, const void *b) {
    const drop_entry *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    if (x->cause != y->cause) return x->cause < y->cause ? -1 : 1;
    if (x->any_thread != y->any_thread) return x->any_thread ? 1 : -1;
    return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

void drop_stats_sort(drop_stats *d) {
    if (d->n_entries > 1) qsort(d->entries, d->n_entries, sizeof *d->entries, compare_entries);
}

/* "thread NAME" or "other threads". */
static void where(char *buf, size_t cap, const drop_entry *e) {
    char shown[96];
    if (e->any_thread)
        snprintf(buf, cap, "other threads");
    else
        snprintf(buf, cap, "thread %s", cli_text_show(shown, sizeof shown, e->thread_name));
}

char *drop_stats_line(const drop_stats *d, char *buf, size_t cap) {
    char n[NUMFMT_BYTES];
    if (d->total == 0) {
        cli_append(buf, cap, 0, "no scopes dropped");
        return buf;
    }
    size_t len = cli_append(buf, cap, 0, "%s scopes dropped", numfmt_count(n, d->total));
    for (uint32_t i = 0; i < d->n_entries && i < 3; i++)
        len = cli_append(buf, cap, len, "%s%s: %s", i ? "; " : " (", drop_cause_key(d->entries[i].cause),
                         numfmt_count(n, d->entries[i].count));
    if (d->unattributed)
        len = cli_append(buf, cap, len, "%scause not recorded: %s", d->n_entries ? "; " : " (",
                         numfmt_count(n, d->unattributed));
    if (d->n_entries || d->unattributed) cli_append(buf, cap, len, "%s)", d->n_entries > 3 ? "; ..." : "");
    return buf;
}

void drop_stats_print_text(const drop_stats *d, FILE *out) {
    char n[NUMFMT_BYTES], a[NUMFMT_BYTES], place[160];
    if (d->total == 0) {
        fputs("dropped   none\n", out);
    } else {
        fprintf(out, "dropped   %s scopes not recorded, in %s frames (%s of them in flame frames):\n",
                numfmt_count(n, d->total), numfmt_count(a, d->frames_with_drops),
                numfmt_count(place, d->in_flame_frames));
        for (uint32_t i = 0; i < d->n_entries; i++) {
            const drop_entry *e = &d->entries[i];
            where(place, sizeof place, e);
            fprintf(out, "          %12s  %s, %s, frames %llu to %llu\n", numfmt_count(n, e->count),
                    drop_cause_text(e->cause), place, (unsigned long long)e->first_frame,
                    (unsigned long long)e->last_frame);
        }
        if (d->unattributed)
            fprintf(out,
                    "          %12s  cause and thread not in the capture (a format 1.0 writer, or more causes than a "
                    "frame lists), frames %llu to %llu\n",
                    numfmt_count(n, d->unattributed), (unsigned long long)d->unattributed_first,
                    (unsigned long long)d->unattributed_last);
    }
    if (d->filtered)
        fprintf(out, "filtered  %s scopes shorter than VOR_MIN_DURATION_NS left out on purpose\n",
                numfmt_count(n, d->filtered));
}

void drop_stats_print_json(const drop_stats *d, json_writer *w, const char *key) {
    json_object_begin(w, key);
    json_uint(w, "total", d->total);
    json_uint(w, "frames", d->frames_with_drops);
    json_uint(w, "in_flame_frames", d->in_flame_frames);
    json_uint(w, "cause_not_recorded", d->unattributed);
    json_uint(w, "filtered", d->filtered);
    json_array_begin(w, "by_cause");
    for (uint32_t i = 0; i < d->n_entries; i++) {
        const drop_entry *e = &d->entries[i];
        json_object_begin(w, NULL);
        json_string(w, "cause", drop_cause_key(e->cause));
        json_uint(w, "cause_code", e->cause);
        if (e->any_thread) {
            json_null(w, "thread_id");
            json_string(w, "thread", "other threads");
        } else {
            json_uint(w, "thread_id", e->thread_id);
            json_string(w, "thread", e->thread_name);
        }
        json_uint(w, "count", e->count);
        json_uint(w, "first_frame", e->first_frame);
        json_uint(w, "last_frame", e->last_frame);
        json_object_end(w);
    }
    json_array_end(w);
    json_object_end(w);
}
