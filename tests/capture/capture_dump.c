/* capture_dump.c: prints what the reader gives of a capture, for tests that compare it
 * with an independent computation. One tool, three listings:
 *
 *   capture_dump [--full] FILE
 *     every frame as one JSON object per line, with names resolved ("site N" / "thread N"
 *     for undeclared ids, docs/FORMAT.md §4.1): index, times, values, units and the ended
 *     scopes [thread, site, depth, start, duration, file, line]. With --full, each frame
 *     also has its drops, each scope its parent and flags, the open scopes follow each
 *     thread's ended ones, and a last line gives the damage the reader skipped and whether
 *     the capture ended properly. (tests/capture: the independent reader's output is
 *     compared with this; tests/wasm: the native and the wasm run.)
 *
 *   capture_dump --tsv FILE
 *     everything, one fact per line, tab-separated, so that the CLI tests
 *     (tests/cli/reading_rules.py) can compute expected numbers apart from the code
 *     under test (its own self-time and stack algorithms, its own percentiles):
 *
 *     info    VERSION PRODUCER PROCESS PID WALL_EPOCH_NS FLAME
 *     frame   INDEX START_NS DURATION_NS OVERHEAD_NS DROPPED HAS_FLAME N_SCOPES
 *     value   COLUMN_ID VALUE(%.17g)
 *     drop    CAUSE THREAD_ID COUNT
 *     scope   THREAD_ID THREAD_NAME SITE_NAME DEPTH START_NS DURATION_NS INDEX PARENT FLAGS OPEN FUNCTION
 *             (INDEX in the thread's scopes, ended then open; PARENT an index, -1 none,
 *             -2 not recorded; OPEN 1 for the scopes still open at the frame's end;
 *             FUNCTION 1 for a site of -finstrument-functions: module id set)
 *     costs   SCOPE_COST_NS FUNCTION_COST_NS  (after info)
 *     column  ID SYSTEM NAME UNIT          (at the end: every column declared)
 *     thread  ID NAME                      (at the end: each thread met, its newest name)
 *     end     FRAMES STATUS(ok|error) MESSAGE
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vor/reader.h"

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void json_number(double v) {
    if (isnan(v))
        printf("\"nan\"");
    else if (isinf(v))
        printf(v > 0 ? "\"inf\"" : "\"-inf\"");
    else
        printf("%.17g", v);
}

/* The --tsv listing: everything the reader gives, one fact per line, tab-separated (the
 * CLI tests compute their expected numbers from it; format at the top of this file).
 * Returns 1 when the file cannot be opened (after an "end" line saying why), else 0: a
 * read error is reported on the "end" line. */
static int dump_tsv(const char *path) {
    char err[512];
    vor_reader *r = vor_reader_open(path, err, sizeof err);
    if (!r) {
        printf("end\t0\terror\t%s\n", err);
        return 1;
    }
    vor_reader_frame f;
    vor_read_status st;
    static uint32_t seen[4096];
    uint32_t n_seen = 0;
    uint64_t frames = 0;
    int header_printed = 0;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        if (!header_printed) {
            const vor_reader_info *in = vor_reader_get_info(r);
            printf("info\t%u.%u\t%s\t%s\t%llu\t%lld\t%d\n", in->version_major, in->version_minor, in->producer,
                   in->process, (unsigned long long)in->pid, (long long)in->wall_epoch_ns, in->flame);
            printf("costs\t%.17g\t%.17g\n", in->scope_cost_ns, in->function_cost_ns);
            header_printed = 1;
        }
        frames++;
        printf("frame\t%llu\t%lld\t%lld\t%lld\t%llu\t%d\t%llu\n", (unsigned long long)f.index, (long long)f.start_ns,
               (long long)f.duration_ns, (long long)f.overhead_ns, (unsigned long long)f.dropped_scopes, f.has_flame,
               (unsigned long long)f.n_scopes);
        for (uint32_t i = 0; i < f.n_values; i++)
            printf("value\t%u\t%.17g\n", f.values[i].column_id, f.values[i].value);
        for (uint32_t i = 0; i < f.n_drops; i++)
            printf("drop\t%u\t%u\t%llu\n", f.drops[i].cause, f.drops[i].thread_id,
                   (unsigned long long)f.drops[i].count);
        for (uint32_t t = 0; t < f.n_threads; t++) {
            const vor_reader_thread *th = vor_reader_get_thread(r, f.threads[t].thread_id);
            uint32_t k = 0;
            while (k < n_seen && seen[k] != f.threads[t].thread_id) k++;
            if (k == n_seen && n_seen < sizeof seen / sizeof *seen) seen[n_seen++] = f.threads[t].thread_id;
            uint32_t n = f.threads[t].n_scopes + f.threads[t].n_open;
            for (uint32_t i = 0; i < n; i++) {
                const vor_reader_scope *s = &f.threads[t].scopes[i];
                const vor_reader_site *site = vor_reader_get_site(r, s->site_id);
                long long parent = s->parent == VOR_PARENT_NONE      ? -1
                                   : s->parent == VOR_PARENT_UNKNOWN ? -2
                                                                     : (long long)s->parent;
                char fallback[32];
                snprintf(fallback, sizeof fallback, "site %u", s->site_id);
                printf("scope\t%u\t%s\t%s\t%u\t%lld\t%lld\t%u\t%lld\t%u\t%d\t%d\n", f.threads[t].thread_id,
                       th ? th->name : "?", site && site->name && site->name[0] ? site->name : fallback, s->depth,
                       (long long)s->start_ns, (long long)s->duration_ns, i, parent, s->flags,
                       i >= f.threads[t].n_scopes, site && site->module_id != 0);
            }
        }
    }
    for (uint32_t id = 0; id < vor_reader_column_count(r); id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (c) printf("column\t%u\t%d\t%s\t%s\n", c->id, c->is_system, c->name, c->unit);
    }
    for (uint32_t k = 0; k < n_seen; k++) {
        const vor_reader_thread *th = vor_reader_get_thread(r, seen[k]);
        printf("thread\t%u\t%s\n", seen[k], th && th->name ? th->name : "");
    }
    printf("end\t%llu\t%s\t%s\n", (unsigned long long)frames, st == VOR_READ_ERROR ? "error" : "ok",
           vor_reader_error(r));
    vor_reader_close(r);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--tsv") == 0) return dump_tsv(argv[2]);
    int full = argc == 3 && strcmp(argv[1], "--full") == 0;
    if (argc != 2 + full) {
        fprintf(stderr, "usage: capture_dump [--full | --tsv] FILE\n");
        return 2;
    }
    char err[512];
    vor_reader *r = vor_reader_open(argv[1 + full], err, sizeof err);
    if (r == NULL) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    vor_reader_frame f;
    vor_read_status st;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        printf("{\"index\":%llu,\"start\":%lld,\"duration\":%lld,\"overhead\":%lld,\"dropped\":%llu,\"values\":{",
               (unsigned long long)f.index, (long long)f.start_ns, (long long)f.duration_ns, (long long)f.overhead_ns,
               (unsigned long long)f.dropped_scopes);
        for (uint32_t i = 0; i < f.n_values; i++) {
            const vor_reader_column *c = vor_reader_get_column(r, f.values[i].column_id);
            if (i) putchar(',');
            json_string(c->name);
            putchar(':');
            json_number(f.values[i].value);
        }
        printf("},\"units\":{");
        for (uint32_t i = 0; i < f.n_values; i++) {
            const vor_reader_column *c = vor_reader_get_column(r, f.values[i].column_id);
            if (i) putchar(',');
            json_string(c->name);
            putchar(':');
            json_string(c->unit);
        }
        printf("}");
        if (full) {
            printf(",\"drops\":[");
            for (uint32_t i = 0; i < f.n_drops; i++)
                printf("%s[%u,%u,%llu]", i ? "," : "", f.drops[i].cause, f.drops[i].thread_id,
                       (unsigned long long)f.drops[i].count);
            printf("]");
        }
        printf(",\"scopes\":[");
        int first = 1;
        for (uint32_t t = 0; t < f.n_threads; t++) {
            const vor_reader_thread *th = vor_reader_get_thread(r, f.threads[t].thread_id);
            char thread_name[32], site_name[32];
            snprintf(thread_name, sizeof thread_name, "thread %u", f.threads[t].thread_id);
            for (uint32_t i = 0; i < f.threads[t].n_scopes + (full ? f.threads[t].n_open : 0); i++) {
                const vor_reader_scope *s = &f.threads[t].scopes[i];
                const vor_reader_site *site = vor_reader_get_site(r, s->site_id);
                snprintf(site_name, sizeof site_name, "site %u", s->site_id);
                if (!first) putchar(',');
                first = 0;
                putchar('[');
                json_string(th ? th->name : thread_name);
                putchar(',');
                json_string(site ? site->name : site_name);
                printf(",%u,%lld,%lld,", s->depth, (long long)s->start_ns, (long long)s->duration_ns);
                json_string(site ? site->file : "");
                printf(",%u", site ? site->line : 0);
                long long parent = s->parent == VOR_PARENT_NONE      ? -1LL
                                   : s->parent == VOR_PARENT_UNKNOWN ? -2LL
                                                                     : (long long)s->parent;
                if (full) printf(",%lld,%u", parent, s->flags);
                putchar(']');
            }
        }
        printf("]}\n");
    }
    if (full) printf("{\"end\":{\"finished\":%s,\"damage\":[", vor_reader_finished(r) ? "true" : "false");
    for (uint32_t i = 0; i < vor_reader_damage_count(r); i++) {
        vor_reader_damage d;
        if (!vor_reader_get_damage(r, i, &d)) break;
        if (full) printf("%s[%llu,%llu]", i ? "," : "", (unsigned long long)d.offset, (unsigned long long)d.length);
        fprintf(stderr, "damaged record at byte %llu (%llu bytes skipped): %s\n", (unsigned long long)d.offset,
                (unsigned long long)d.length, d.problem);
    }
    if (full) printf("]}}\n");
    int rc = st == VOR_READ_ERROR ? 2 : 0;
    if (rc) fprintf(stderr, "%s\n", vor_reader_error(r));
    vor_reader_close(r);
    return rc;
}
