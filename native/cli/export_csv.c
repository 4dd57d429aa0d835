/* export_csv.c: `vor export --format csv`: one row per frame.
 *
 *     index,start_ms,duration_ms,frame_ms (ms),memory_mb (MB),...,loss
 *     0,0.000000,16.667000,16.667,512.3,...,
 *     1,16.667000,16.701000,16.701,512.3,...,2.31
 *
 * A user metric may first appear in the middle of a run, and the header must name every
 * column before the first row. Rather than hold rows in memory (a capture can be GB),
 * the capture is read twice: the first pass only learns the columns (and counts the
 * frames), the second writes, stopping at the same frame so that a capture still
 * growing meanwhile gives a consistent table. A cell is empty when its frame has no
 * value for the column (before the metric's first value, or a system value the platform
 * did not report). Columns are the declared ones, in id order: ids may be sparse, and an id
 * never declared has no column (not an empty "column N"). Header cells are whole, however
 * long. Numbers are written so that they read back exactly.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Pass 1: columns and frame count. Returns 0 or an exit status. */
static int learn_columns(export_job *job, uint64_t *frames) {
    vor_reader_frame f;
    int got;
    job->progress->phase = "pass 1 of 2 (columns)";
    while ((got = cli_capture_next(job->capture, &f)) == 1)
        cli_progress_update(job->progress, job->capture->frames, vor_reader_offset(job->capture->reader) / 2);
    if (got < 0) return CLI_EXIT_USAGE;
    *frames = job->capture->frames;
    return 0;
}

/* The header row: one cell per declared column, "name (unit)" or "name", whole whatever
 * its length. Ids that were never declared have no column (ids may be sparse). Returns 0
 * or -1 (out of memory). */
static int write_header(FILE *out, const vor_reader *r, uint32_t n_columns) {
    fputs("index,start_ms,duration_ms", out);
    for (uint32_t id = 0; id < n_columns; id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (!c) continue;
        size_t n = strlen(c->name), u = strlen(c->unit);
        char *cell = malloc(n + u + 4);
        if (!cell) return -1;
        memcpy(cell, c->name, n);
        if (u) {
            memcpy(cell + n, " (", 2);
            memcpy(cell + n + 2, c->unit, u);
            memcpy(cell + n + 2 + u, ")", 2);
        } else {
            cell[n] = '\0';
        }
        putc(',', out);
        csv_write_field(out, cell);
        free(cell);
    }
    putc('\n', out);
    return 0;
}

int export_csv(export_job *job) {
    uint64_t frames = 0;
    int status = learn_columns(job, &frames);
    if (status != 0) return status;
    uint32_t n_columns = vor_reader_column_count(job->capture->reader);

    /* Pass 2 on a fresh reader. */
    cli_capture second;
    status = cli_capture_open(&second, job->cmd, job->capture->path);
    if (status != 0) return status;
    cli_capture_set_max_frame_scopes(&second, job->max_frame_scopes);
    double *row = malloc(((size_t)n_columns + 1) * sizeof *row);
    uint64_t *stamp = calloc((size_t)n_columns + 1, sizeof *stamp);          /* frame number + 1 when set */
    uint32_t *declared = malloc(((size_t)n_columns + 1) * sizeof *declared); /* the header's ids */
    uint32_t n_declared = 0;
    for (uint32_t id = 0; declared && id < n_columns; id++)
        if (vor_reader_get_column(job->capture->reader, id)) declared[n_declared++] = id;
    if (!row || !stamp || !declared) {
        free(declared);
        free(row);
        free(stamp);
        cli_capture_close(&second);
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }
    FILE *out = job->out->f;
    job->progress->phase = "pass 2 of 2 (rows)";
    if (write_header(out, job->capture->reader, n_columns) != 0) { /* the first reader knows every column */
        free(row);
        free(stamp);
        free(declared);
        cli_capture_close(&second);
        return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    }
    vor_reader_frame f;
    int got = 0;
    char a[NUMFMT_BYTES], b[NUMFMT_BYTES];
    export_restart_selection(job); /* pass 1 read every frame; --frames picks the rows */
    while (second.frames < frames && (got = export_next_frame(job, &second, &f)) == 1) {
        uint64_t mark = second.frames; /* >= 1, distinct per frame */
        for (uint32_t i = 0; i < f.n_values; i++) {
            uint32_t id = f.values[i].column_id;
            if (id >= n_columns) continue; /* declared after pass 1 ended: not in the header */
            row[id] = f.values[i].value;
            stamp[id] = mark;
        }
        fprintf(out, "%llu,%s,%s", (unsigned long long)f.index, numfmt_ns_as_ms(a, f.start_ns),
                numfmt_ns_as_ms(b, f.duration_ns));
        for (uint32_t k = 0; k < n_declared; k++) {
            putc(',', out);
            if (stamp[declared[k]] == mark) fputs(numfmt_double(a, row[declared[k]]), out);
        }
        putc('\n', out);
        cli_progress_update(job->progress, second.frames,
                            job->capture->file_size / 2 + vor_reader_offset(second.reader) / 2);
        if (cli_output_failed(job->out)) break; /* a full disk, a closed pipe: reported at close */
    }
    if (got < 0)
        status = CLI_EXIT_USAGE;
    else if (cli_output_failed(job->out))
        status = 0;
    else if ((status = export_check_selection(job)) != 0)
        ;
    else if (second.frames < frames && !job->range_passed)
        status =
            cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path,
                     "the capture changed while it was exported (%llu frames on the first pass, %llu on the second)",
                     (unsigned long long)frames, (unsigned long long)second.frames);
    free(row);
    free(stamp);
    free(declared);
    cli_capture_close(&second);
    return status;
}
