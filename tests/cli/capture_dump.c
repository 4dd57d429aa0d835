/* capture_dump.c: prints everything the reader gives, one fact per line, tab-separated,
 * so that the CLI tests (test_cli_e2e.py) can compute expected numbers independently of
 * the code under test (its own self-time and stack algorithms, its own percentiles).
 *
 *     info    VERSION PRODUCER PROCESS PID WALL_EPOCH_NS FLAME
 *     frame   INDEX START_NS DURATION_NS OVERHEAD_NS DROPPED HAS_FLAME N_SCOPES
 *     value   COLUMN_ID VALUE(%.17g)
 *     scope   THREAD_ID THREAD_NAME SITE_NAME DEPTH START_NS DURATION_NS
 *     column  ID SYSTEM NAME UNIT          (at the end: every column declared)
 *     end     FRAMES STATUS(ok|error) MESSAGE
 */
#include <stdio.h>

#include "vor/reader.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: capture_dump FILE\n");
        return 2;
    }
    char err[512];
    vor_reader *r = vor_reader_open(argv[1], err, sizeof err);
    if (!r) {
        printf("end\t0\terror\t%s\n", err);
        return 1;
    }
    vor_reader_frame f;
    vor_read_status st;
    uint64_t frames = 0;
    int header_printed = 0;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        if (!header_printed) {
            const vor_reader_info *in = vor_reader_get_info(r);
            printf("info\t%u.%u\t%s\t%s\t%llu\t%lld\t%d\n", in->version_major, in->version_minor, in->producer, in->process,
                   (unsigned long long)in->pid, (long long)in->wall_epoch_ns, in->flame);
            header_printed = 1;
        }
        frames++;
        printf("frame\t%llu\t%lld\t%lld\t%lld\t%llu\t%d\t%llu\n", (unsigned long long)f.index, (long long)f.start_ns,
               (long long)f.duration_ns, (long long)f.overhead_ns, (unsigned long long)f.dropped_scopes, f.has_flame,
               (unsigned long long)f.n_scopes);
        for (uint32_t i = 0; i < f.n_values; i++) printf("value\t%u\t%.17g\n", f.values[i].column_id, f.values[i].value);
        for (uint32_t t = 0; t < f.n_threads; t++) {
            const vor_reader_thread *th = vor_reader_get_thread(r, f.threads[t].thread_id);
            for (uint32_t i = 0; i < f.threads[t].n_scopes; i++) {
                const vor_reader_scope *s = &f.threads[t].scopes[i];
                const vor_reader_site *site = vor_reader_get_site(r, s->site_id);
                printf("scope\t%u\t%s\t%s\t%u\t%lld\t%lld\n", f.threads[t].thread_id, th ? th->name : "?",
                       site ? site->name : "?", s->depth, (long long)s->start_ns, (long long)s->duration_ns);
            }
        }
    }
    for (uint32_t id = 0; id < vor_reader_column_count(r); id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (c) printf("column\t%u\t%d\t%s\t%s\n", c->id, c->is_system, c->name, c->unit);
    }
    printf("end\t%llu\t%s\t%s\n", (unsigned long long)frames, st == VOR_READ_ERROR ? "error" : "ok", vor_reader_error(r));
    vor_reader_close(r);
    return 0;
}
