/* capture_dump.c: prints every frame of a capture as one JSON object per line, with names
 * resolved ("site N" / "thread N" for undeclared ids, docs/FORMAT.md §4.1): index, times,
 * values, units and the ended scopes [thread, site, depth, start, duration, file, line].
 * With --full, each frame also has its drops, each scope its parent and flags, the open
 * scopes follow each thread's ended ones, and a last line gives the damage the reader
 * skipped and whether the capture ended properly. (Test helper: the independent reader's
 * output is compared with this.)
 *
 *   capture_dump [--full] FILE */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vor/reader.h"

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void json_number(double v) {
    if (isnan(v)) printf("\"nan\"");
    else if (isinf(v)) printf(v > 0 ? "\"inf\"" : "\"-inf\"");
    else printf("%.17g", v);
}

int main(int argc, char **argv) {
    int full = argc == 3 && strcmp(argv[1], "--full") == 0;
    if (argc != 2 + full) {
        fprintf(stderr, "usage: capture_dump [--full] FILE\n");
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
                long long parent = s->parent == VOR_PARENT_NONE ? -1LL : s->parent == VOR_PARENT_UNKNOWN ? -2LL : (long long)s->parent;
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
