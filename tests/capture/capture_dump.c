/* capture_dump.c: prints every frame of a capture as one JSON object per line, with names
 * resolved (test helper: the independent reader's output is compared with this). */
#include <math.h>
#include <stdio.h>

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
    if (argc != 2) {
        fprintf(stderr, "usage: capture_dump FILE\n");
        return 2;
    }
    char err[512];
    vor_reader *r = vor_reader_open(argv[1], err, sizeof err);
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
        printf("},\"scopes\":[");
        int first = 1;
        for (uint32_t t = 0; t < f.n_threads; t++) {
            const vor_reader_thread *th = vor_reader_get_thread(r, f.threads[t].thread_id);
            for (uint32_t i = 0; i < f.threads[t].n_scopes; i++) {
                const vor_reader_scope *s = &f.threads[t].scopes[i];
                const vor_reader_site *site = vor_reader_get_site(r, s->site_id);
                if (!first) putchar(',');
                first = 0;
                putchar('[');
                json_string(th ? th->name : "?");
                putchar(',');
                json_string(site ? site->name : "?");
                printf(",%u,%lld,%lld,", s->depth, (long long)s->start_ns, (long long)s->duration_ns);
                json_string(site ? site->file : "?");
                printf(",%u]", site ? site->line : 0);
            }
        }
        printf("]}\n");
    }
    int rc = st == VOR_READ_ERROR ? 2 : 0;
    if (rc) fprintf(stderr, "%s\n", vor_reader_error(r));
    vor_reader_close(r);
    return rc;
}
