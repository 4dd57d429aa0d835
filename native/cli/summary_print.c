/* summary_print.c: prints what cmd_summary.c collected, as aligned text for people or as
 * one JSON object for scripts (`--json`). Both show the same facts (header, clock, frames,
 * drops by cause and thread, damaged records, compensation, metrics, top scopes); the
 * JSON keys are documented in the README ("vor summary --json").
 *
 * Text: times of frames and scopes in ms (µs for per-call means), metrics in their own
 * column's unit, shown beside them. Names and the path are shown with control characters
 * escaped (text.c: a scope named "\x1b[2J" cannot clear the terminal), long ones cut with
 * "..." to the column. JSON: times in integer nanoseconds, metrics in their
 * unit, non-finite or absent values as null.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME_WIDTH_MAX 40
#define UNIT_WIDTH_MAX 16

/* Shown width of a name in a column of at most `max` bytes. */
static int shown_width(const char *s, int max) {
    size_t n = cli_text_shown_length(s);
    return n > (size_t)max ? max : (int)n;
}

/* "2025-01-02T03:04:05.678Z", or "" when the header has no wall clock. */
static void wall_clock(char *buf, size_t cap, int64_t wall_epoch_ns, int64_t offset_ns) {
    buf[0] = '\0';
    if (wall_epoch_ns <= 0) return;
    int64_t t = wall_epoch_ns + offset_ns;
    time_t secs = (time_t)(t / 1000000000);
    int ms = (int)((t % 1000000000) / 1000000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) return;
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03dZ", date, ms);
}

/* ---- Top scopes ------------------------------------------------------------------------ */

typedef struct top_list {
    uint32_t *ids;
    uint32_t n;
} top_list;

static const stacks *sort_st; /* qsort has no context; single-threaded */
static int sort_by_self;

static int compare_scopes(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const stacks_name *sx = stacks_get_name(sort_st, x), *sy = stacks_get_name(sort_st, y);
    int64_t vx = sort_by_self ? sx->self_ns : sx->total_ns, vy = sort_by_self ? sy->self_ns : sy->total_ns;
    if (vx != vy) return vx > vy ? -1 : 1;
    return strcmp(name_table_get(sort_st->names, x), name_table_get(sort_st->names, y));
}

/* The names that were seen, sorted by total (or self) time, largest first. */
static top_list top_scopes(const stacks *st, int by_self) {
    top_list t = {NULL, 0};
    uint32_t n = name_table_count(st->names);
    if (n == 0) return t;
    t.ids = malloc((size_t)n * sizeof *t.ids);
    if (!t.ids) return t;
    for (uint32_t i = 0; i < n; i++) {
        if (stacks_name_used(stacks_get_name(st, i))) t.ids[t.n++] = i;
    }
    sort_st = st;
    sort_by_self = by_self;
    if (t.n > 1) qsort(t.ids, t.n, sizeof *t.ids, compare_scopes);
    return t;
}

/* ---- Text ---------------------------------------------------------------------------------- */

/* Columns: calls, total and self time in the flame frames, mean and max of the ended
 * calls, and the median self time per flame frame (a frame without the scope counts 0). */
static void print_top_text(summary *s, FILE *out, int by_self) {
    top_list t = top_scopes(&s->st, by_self);
    if (t.n == 0) {
        free(t.ids);
        return;
    }
    uint32_t rows = t.n < s->top ? t.n : s->top;
    int width = 4;
    for (uint32_t i = 0; i < rows; i++) {
        int len = shown_width(name_table_get(s->st.names, t.ids[i]), NAME_WIDTH_MAX);
        if (len > width) width = len;
    }
    fprintf(out, "\ntop %u scopes by %s time%s\n", rows, by_self ? "self" : "total",
            t.n > rows ? "" : " (all of them)");
    fprintf(out, "%-*s %12s %14s %14s %12s %12s %14s\n", width, "name", "calls", "total ms", "self ms", "mean us",
            "max us", "self/frame us");
    for (uint32_t i = 0; i < rows; i++) {
        const stacks_name *st = stacks_get_name(&s->st, t.ids[i]);
        char calls[NUMFMT_BYTES], total[NUMFMT_BYTES], self[NUMFMT_BYTES], mean[NUMFMT_BYTES], max[NUMFMT_BYTES],
            median[NUMFMT_BYTES], name[NAME_WIDTH_MAX + 1];
        numfmt_count(calls, st->calls);
        snprintf(total, sizeof total, "%.3f", (double)st->total_ns / 1e6);
        snprintf(self, sizeof self, "%.3f", (double)st->self_ns / 1e6);
        if (st->calls) {
            snprintf(mean, sizeof mean, "%.3f", (double)st->duration_ns / 1e3 / (double)st->calls);
            snprintf(max, sizeof max, "%.3f", (double)st->max_ns / 1e3);
        } else {
            snprintf(mean, sizeof mean, "-");
            snprintf(max, sizeof max, "-");
        }
        snprintf(median, sizeof median, "%.3f", stacks_frame_percentile(&s->st, t.ids[i], 1, 50) / 1e3);
        fprintf(out, "%-*s %12s %14s %14s %12s %12s %14s\n", width,
                cli_text_show(name, sizeof name, name_table_get(s->st.names, t.ids[i])), calls, total, self, mean, max,
                median);
    }
    free(t.ids);
}

static void print_metrics_text(summary *s, FILE *out) {
    const vor_reader *r = s->reader;
    uint32_t n = vor_reader_column_count(r);
    int nw = 6, uw = 4;
    for (uint32_t id = 0; id < n; id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (!c) continue;
        if (shown_width(c->name, NAME_WIDTH_MAX) > nw) nw = shown_width(c->name, NAME_WIDTH_MAX);
        if (shown_width(c->unit, UNIT_WIDTH_MAX) > uw) uw = shown_width(c->unit, UNIT_WIDTH_MAX);
    }
    fprintf(out, "\n%-*s %-*s %10s %12s %12s %12s %12s\n", nw, "metric", uw, "unit", "frames", "min", "mean", "p95",
            "max");
    for (uint32_t id = 0; id < n; id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (!c) continue;
        metric_stat *m = (metric_stat *)metric_stats_get(&s->metrics, id);
        char frames[NUMFMT_BYTES], name[NAME_WIDTH_MAX + 1], unit[UNIT_WIDTH_MAX + 1];
        fprintf(out, "%-*s %-*s %10s", nw, cli_text_show(name, sizeof name, c->name), uw,
                cli_text_show(unit, sizeof unit, c->unit[0] ? c->unit : "-"), numfmt_count(frames, m ? m->frames : 0));
        if (m && m->frames) {
            char a[NUMFMT_BYTES], b[NUMFMT_BYTES], p[NUMFMT_BYTES], d[NUMFMT_BYTES];
            fprintf(out, " %12s %12s %12s %12s", numfmt_human(a, m->min), numfmt_human(b, metric_stat_mean(m)),
                    numfmt_human(p, metric_stat_p95(m)), numfmt_human(d, m->max));
        } else {
            fprintf(out, " %12s %12s %12s %12s", "-", "-", "-", "-");
        }
        if (m && m->nonfinite) fprintf(out, "  (%llu non-finite skipped)", (unsigned long long)m->nonfinite);
        if (m && m->frames && !quantile_is_exact(&m->q)) fputs("  (p95 within 0.4%)", out);
        if (id == 0 && s->st.compensating) fputs("  (compensated: less the profiler's own time)", out);
        fputc('\n', out);
    }
}

/* "tsc, resolution 1 ns" / "not recorded (format 1.0)". */
static void clock_text(const vor_reader_info *info, char *buf, size_t cap) {
    char source[64], res[NUMFMT_BYTES];
    if (!info || (!info->clock_resolution_ns && !(info->clock_source && info->clock_source[0]))) {
        snprintf(buf, cap, "source and resolution not recorded (format %u.%u capture)", info ? info->version_major : 0,
                 info ? info->version_minor : 0);
        return;
    }
    cli_text_show(source, sizeof source,
                  info->clock_source && info->clock_source[0] ? info->clock_source : "unknown source");
    if (info->clock_resolution_ns)
        snprintf(buf, cap, "%s, resolution %s ns", source, numfmt_count(res, info->clock_resolution_ns));
    else
        snprintf(buf, cap, "%s, resolution not recorded", source);
    size_t len = strlen(buf);
    if (info->cross_origin_isolated == 1)
        snprintf(buf + len, cap - len, " (page cross-origin isolated)");
    else if (info->cross_origin_isolated == 0)
        snprintf(buf + len, cap - len, " (page not cross-origin isolated: coarse timer; see the README)");
}

/* What the times are: compensated (with the costs), or raw and why. */
static const char *compensation_reason(const stacks *st) {
    if (st->compensating) return "compensated";
    if (st->costs_known) return "raw (--raw)";
    return "raw: the capture records no calibrated scope cost (format 1.0, or a writer that did not calibrate)";
}

static void print_damage_text(const vor_reader *r, FILE *out) {
    uint64_t n = vor_reader_damage_count(r);
    char count[NUMFMT_BYTES];
    if (n == 0) {
        fputs("damaged   none\n", out);
        return;
    }
    fprintf(out, "damaged   %s record%s skipped (each lost only itself):\n", numfmt_count(count, n), n == 1 ? "" : "s");
    for (uint32_t i = 0; i < n && i < VOR_READER_MAX_DAMAGE_REPORTS; i++) {
        vor_reader_damage d;
        if (!vor_reader_get_damage(r, i, &d)) break;
        char problem[160];
        fprintf(out, "          at byte %llu, %llu bytes: %s\n", (unsigned long long)d.offset,
                (unsigned long long)d.length, cli_text_show(problem, sizeof problem, d.problem ? d.problem : ""));
    }
    if (n > VOR_READER_MAX_DAMAGE_REPORTS)
        fprintf(out, "          (the first %u are listed)\n", VOR_READER_MAX_DAMAGE_REPORTS);
}

void summary_print_text(summary *s, FILE *out) {
    const vor_reader_info *info = vor_reader_get_info(s->reader);
    char a[NUMFMT_BYTES], b[NUMFMT_BYTES], c[NUMFMT_BYTES], wall[64], line[512];
    fputs("capture   ", out);
    cli_text_fputs(out, s->path);
    fputc('\n', out);
    if (info) {
        fprintf(out, "format    %u.%u, written by ", info->version_major, info->version_minor);
        cli_text_fputs(out, info->producer && info->producer[0] ? info->producer : "(unknown)");
        fputs("\nprocess   ", out);
        cli_text_fputs(out, info->process && info->process[0] ? info->process : "(unknown)");
        fprintf(out, " (pid %llu)\n", (unsigned long long)info->pid);
    }
    clock_text(info, line, sizeof line);
    fprintf(out, "clock     %s\n", line);
    uint32_t n_columns = vor_reader_column_count(s->reader), n_system = vor_reader_system_column_count(s->reader);
    fprintf(out, "columns   %u (%u system, %u user)\n", n_columns, n_system, n_columns - n_system);
    if (s->frames == 0) {
        fprintf(out, "frames    0\n");
    } else {
        fprintf(out, "frames    %s (index %llu to %llu)", numfmt_count(a, s->frames),
                (unsigned long long)s->first_index, (unsigned long long)s->last_index);
        if (s->flame_frames) fprintf(out, ", %s with flame scopes", numfmt_count(b, s->flame_frames));
        fputc('\n', out);
        int64_t span;
        if (__builtin_sub_overflow(s->last_end_ns, s->first_start_ns, &span)) span = INT64_MAX;
        fprintf(out, "span      %.6f s (first frame's start to last frame's end)\n", (double)span / 1e9);
        wall_clock(wall, sizeof wall, info ? info->wall_epoch_ns : 0, s->first_start_ns);
        fprintf(out, "started   %s\n", wall[0] ? wall : "(no wall clock in the header)");
    }
    if (s->flame_frames) {
        fprintf(out, "scopes    %s ended in the flame frames", numfmt_count(b, s->scopes));
        if (s->st.stats.open_scopes)
            fprintf(out, ", %s still open at a frame's end", numfmt_count(c, s->st.stats.open_scopes));
        fputc('\n', out);
        if (s->st.compensating)
            fprintf(out, "times     compensated for the profiler's own cost: %s (--raw for raw times)\n",
                    stacks_costs_text(&s->st, line, sizeof line));
        else
            fprintf(out, "times     %s\n", compensation_reason(&s->st));
    }
    drop_stats_print_text(s->drops, out);
    if (s->frames) {
        fprintf(out, "overhead  %.3f ms (the profiler's own time, all frames)\n", (double)s->overhead_ns / 1e6);
    }
    print_damage_text(s->reader, out);
    fprintf(out, "ended     %s\n",
            vor_reader_finished(s->reader) ? "properly (the writer closed the capture)"
                                           : "without an end record (still being written, or the "
                                             "program stopped without vor_shutdown)");

    print_metrics_text(s, out);
    if (s->top > 0) {
        print_top_text(s, out, 0);
        print_top_text(s, out, 1);
    }
    const stacks_stats *ts = &s->st.stats;
    if (ts->parent_unknown)
        fprintf(out,
                "\nnote: %s scopes ended in a frame where their parent was not recorded (the capture does not "
                "list the scopes open at that frame's end, as format 1.0 cannot); they are counted under "
                "\"" STACKS_PLACEHOLDER "\"\n",
                numfmt_count(a, ts->parent_unknown));
    if (ts->children_longer)
        fprintf(out, "note: irregular timing: %s scopes were shorter than their children (self time taken as 0)\n",
                numfmt_count(a, ts->children_longer));
    if (ts->names_refused)
        fprintf(out,
                "note: %s scopes had names beyond the %u distinct names kept; they are counted as \"" STACKS_MORE_NAMES
                "\"\n",
                numfmt_count(a, ts->names_refused), NAME_TABLE_MAX);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void print_top_json(summary *s, json_writer *w, const char *key, int by_self) {
    top_list t = top_scopes(&s->st, by_self);
    uint32_t rows = t.n < s->top ? t.n : s->top;
    json_array_begin(w, key);
    for (uint32_t i = 0; i < rows; i++) {
        const stacks_name *st = stacks_get_name(&s->st, t.ids[i]);
        json_object_begin(w, NULL);
        json_string(w, "name", name_table_get(s->st.names, t.ids[i]));
        json_uint(w, "calls", st->calls);
        json_int(w, "total_ns", st->total_ns);
        json_int(w, "self_ns", st->self_ns);
        if (st->calls) {
            json_double(w, "mean_ns", (double)st->duration_ns / (double)st->calls);
            json_int(w, "max_ns", st->max_ns);
        } else {
            json_null(w, "mean_ns");
            json_null(w, "max_ns");
        }
        json_double(w, "self_p50_ns", stacks_frame_percentile(&s->st, t.ids[i], 1, 50));
        json_object_end(w);
    }
    json_array_end(w);
    free(t.ids);
}

static void print_damage_json(const vor_reader *r, json_writer *w) {
    uint64_t n = vor_reader_damage_count(r);
    json_object_begin(w, "damaged_records");
    json_uint(w, "count", n);
    json_array_begin(w, "records");
    for (uint32_t i = 0; i < n && i < VOR_READER_MAX_DAMAGE_REPORTS; i++) {
        vor_reader_damage d;
        if (!vor_reader_get_damage(r, i, &d)) break;
        json_object_begin(w, NULL);
        json_uint(w, "offset", d.offset);
        json_uint(w, "length", d.length);
        json_string(w, "problem", d.problem ? d.problem : "");
        json_object_end(w);
    }
    json_array_end(w);
    json_object_end(w);
}

void summary_print_json(summary *s, FILE *out) {
    const vor_reader_info *info = vor_reader_get_info(s->reader);
    json_writer w;
    json_begin(&w, out, 1);
    json_object_begin(&w, NULL);
    json_string(&w, "file", s->path);
    char version[32], wall[64];
    snprintf(version, sizeof version, "%u.%u", info ? info->version_major : 0, info ? info->version_minor : 0);
    json_string(&w, "format_version", version);
    json_string(&w, "producer", info ? info->producer : "");
    json_string(&w, "process", info ? info->process : "");
    json_uint(&w, "pid", info ? info->pid : 0);
    json_bool(&w, "flame_requested", info ? info->flame : 0);
    json_int(&w, "wall_epoch_ns", info ? info->wall_epoch_ns : 0);
    wall_clock(wall, sizeof wall, info ? info->wall_epoch_ns : 0, s->first_start_ns);
    if (wall[0] && s->frames)
        json_string(&w, "wall_clock_start", wall);
    else
        json_null(&w, "wall_clock_start");
    json_bool(&w, "finished", vor_reader_finished(s->reader));
    json_uint(&w, "frames", s->frames);
    if (s->frames) {
        json_uint(&w, "first_index", s->first_index);
        json_uint(&w, "last_index", s->last_index);
        json_int(&w, "start_ns", s->first_start_ns);
        json_int(&w, "end_ns", s->last_end_ns);
        int64_t span;
        if (__builtin_sub_overflow(s->last_end_ns, s->first_start_ns, &span)) span = INT64_MAX;
        json_int(&w, "span_ns", span);
    } else {
        json_null(&w, "first_index");
        json_null(&w, "last_index");
        json_null(&w, "start_ns");
        json_null(&w, "end_ns");
        json_null(&w, "span_ns");
    }
    json_uint(&w, "flame_frames", s->flame_frames);
    json_uint(&w, "scopes", s->scopes);
    json_uint(&w, "open_scopes", s->st.stats.open_scopes);
    json_uint(&w, "dropped_scopes", s->drops->total);
    json_int(&w, "overhead_ns", s->overhead_ns);

    json_object_begin(&w, "clock");
    if (info && info->clock_resolution_ns)
        json_uint(&w, "resolution_ns", info->clock_resolution_ns);
    else
        json_null(&w, "resolution_ns");
    if (info && info->clock_source && info->clock_source[0])
        json_string(&w, "source", info->clock_source);
    else
        json_null(&w, "source");
    if (info && info->cross_origin_isolated >= 0)
        json_bool(&w, "cross_origin_isolated", info->cross_origin_isolated);
    else
        json_null(&w, "cross_origin_isolated");
    json_object_end(&w);

    json_object_begin(&w, "compensation");
    json_bool(&w, "on", s->st.compensating);
    json_double(&w, "scope_cost_ns", info ? info->scope_cost_ns : 0);
    json_double(&w, "function_cost_ns", info ? info->function_cost_ns : 0);
    json_string(&w, "times", compensation_reason(&s->st));
    json_object_end(&w);

    drop_stats_print_json(s->drops, &w, "drops");
    print_damage_json(s->reader, &w);

    json_array_begin(&w, "metrics");
    uint32_t n = vor_reader_column_count(s->reader);
    for (uint32_t id = 0; id < n; id++) {
        const vor_reader_column *c = vor_reader_get_column(s->reader, id);
        if (!c) continue;
        metric_stat *m = (metric_stat *)metric_stats_get(&s->metrics, id);
        int has = m && m->frames;
        json_object_begin(&w, NULL);
        json_uint(&w, "id", c->id);
        json_string(&w, "name", c->name);
        json_string(&w, "unit", c->unit);
        json_bool(&w, "system", c->is_system);
        json_uint(&w, "frames", m ? m->frames : 0);
        json_uint(&w, "nonfinite", m ? m->nonfinite : 0);
        json_double(&w, "min", has ? m->min : NAN);
        json_double(&w, "mean", has ? metric_stat_mean(m) : NAN);
        json_double(&w, "p95", has ? metric_stat_p95(m) : NAN);
        json_double(&w, "max", has ? m->max : NAN);
        json_bool(&w, "p95_exact", has ? quantile_is_exact(&m->q) : 1);
        json_bool(&w, "compensated", id == 0 && s->st.compensating);
        json_object_end(&w);
    }
    json_array_end(&w);

    print_top_json(s, &w, "top_by_total", 0);
    print_top_json(s, &w, "top_by_self", 1);
    const stacks_stats *ts = &s->st.stats;
    json_object_begin(&w, "scope_notes");
    json_uint(&w, "parent_not_recorded", ts->parent_unknown);
    json_uint(&w, "children_longer", ts->children_longer);
    json_uint(&w, "names_beyond_limit", ts->names_refused);
    json_object_end(&w);
    json_object_end(&w);
    json_end(&w);
}
