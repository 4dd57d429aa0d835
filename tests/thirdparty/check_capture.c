/* check_capture.c: reads a capture of a third-party driver (tests/thirdparty) with vor's
 * reader and checks what the thirdparty tests promise about it. One program, three checks:
 *
 *   check_capture names CAPTURE MIN_PERCENT [--no-lines]
 *       Of the -finstrument-functions functions the capture recorded, at least MIN_PERCENT
 *       are named (not `module+0x...`, `0x...`, `wasm-function[...]`, `table[...]`) and,
 *       unless --no-lines (wasm: the name section has no lines), have a file and a line.
 *   check_capture structure CAPTURE STEPS [--complete]
 *       Frames 0 .. STEPS-1, each once, in order. Per frame and thread, nesting is exact:
 *       every parent index points into the thread's scopes, a child is one level deeper and
 *       lies inside its parent, siblings do not overlap, durations are not negative, no
 *       scope ends outside its frame, and so no scope's self time (its time in the frame
 *       minus its children's, docs' reading rules) is negative. --complete: also every frame
 *       has scopes and none was dropped (the workload fits vor's default buffers).
 *   check_capture longjmp CAPTURE STEPS ROOT UNWOUND_NAME KINDS
 *       What the Lua driver's error steps (step % 4 == 2: error() and luaL_error inside
 *       pcall) and coroutine steps (step % 4 == 3: yields) must leave, longjmps that skip
 *       the ends of scopes: every frame holds exactly one ROOT scope, ended, at depth 0,
 *       and every other scope of the frame descends from it; nothing was dropped and
 *       nothing is still open at a frame's end; the frames of steps whose step % 4 is in
 *       KINDS (e.g. "23") hold scopes vor closed itself (VOR_SCOPE_UNWOUND), the others
 *       none; UNWOUND_NAME is among the unwound scopes of every error step; and the
 *       structure check's nesting rules hold in every frame. Exit status 3 when these
 *       expectations are unmet (what a vor that does not close skipped scopes gives: the
 *       stale ones break nesting and fill the depth limit), 1 when the capture is not
 *       even complete (frames missing, no end record).
 *
 * A site is a function of -finstrument-functions when it has a module (native, format 1.1),
 * no source file (wasm: the name section gives none), or its name is its function's (a
 * function site is named after itself; the drivers' VOR_SCOPE names never are).
 * Prints one line per finding and a summary; exit 0 when every check passes, 1 when one
 * fails, 2 on bad usage or a capture that cannot be read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vor/reader.h>

#define MAX_REPORTS 10

static int failures;
static int quiet; /* count failures without printing them (the longjmp check prints per frame) */

static void failure(const char *fmt, const char *what, uint64_t frame, uint32_t thread, uint32_t index) {
    if (++failures <= MAX_REPORTS && !quiet) {
        printf("FAIL frame %" PRIu64 " thread %u scope %u: ", frame, thread, index);
        printf(fmt, what);
        putchar('\n');
    }
}

static const char *site_name(vor_reader *r, uint32_t id) {
    const vor_reader_site *s = vor_reader_get_site(r, id);
    return s && s->name ? s->name : "(undeclared site)";
}

static int is_function_site(const vor_reader_site *s) {
    if (s->module_id != 0 || s->file == NULL || s->file[0] == '\0') return 1;
    return s->function != NULL && s->name != NULL && strcmp(s->name, s->function) == 0;
}

static int is_unnamed(const char *name) {
    if (strncmp(name, "wasm-function[", 14) == 0 || strncmp(name, "table[", 6) == 0) return 1;
    if (strncmp(name, "0x", 2) == 0) return 1;
    const char *plus = strstr(name, "+0x");
    return plus != NULL && plus[3] != '\0' && strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3);
}

static int64_t end_of(const vor_reader_scope *s) {
    return s->start_ns + s->duration_ns;
}

/* The time of `s` inside the frame [lo, hi] (the reading rules' contribution). */
static int64_t contribution(const vor_reader_scope *s, int64_t lo, int64_t hi) {
    int64_t a = s->start_ns > lo ? s->start_ns : lo;
    int64_t b = end_of(s) < hi ? end_of(s) : hi;
    return b > a ? b - a : 0;
}

typedef struct {
    uint64_t frames, scopes, unwound, open, dropped;
} totals;

/* Start order, shallower first on equal starts (a parent before its first child). */
static const vor_reader_scope *sorting;
static int by_start(const void *a, const void *b) {
    const vor_reader_scope *x = &sorting[*(const uint32_t *)a], *y = &sorting[*(const uint32_t *)b];
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    return 0;
}

/* Nesting, sibling order and self time of one thread's scopes in one frame. */
static void check_thread(vor_reader *r, const vor_reader_frame *f, const vor_reader_thread_scopes *t) {
    uint32_t n = t->n_scopes + t->n_open;
    int64_t lo = f->start_ns, hi = f->start_ns + f->duration_ns;
    int64_t *child_time = calloc(n ? n : 1, sizeof *child_time);
    int64_t *last_child_end = malloc((n ? n : 1) * sizeof *last_child_end);
    uint32_t *last_child = malloc((n ? n : 1) * sizeof *last_child);
    if (!child_time || !last_child_end || !last_child) {
        fprintf(stderr, "check_capture: out of memory\n");
        exit(2);
    }
    for (uint32_t i = 0; i < n; i++) last_child[i] = UINT32_MAX;
    /* Children in start order per parent: scopes[] is in end order, so sort the indices. */
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        fprintf(stderr, "check_capture: out of memory\n");
        exit(2);
    }
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    sorting = t->scopes;
    qsort(order, n, sizeof *order, by_start);
    int top_seen = 0;
    int64_t top_end = 0;
    for (uint32_t o = 0; o < n; o++) {
        uint32_t i = order[o];
        const vor_reader_scope *s = &t->scopes[i];
        const char *name = site_name(r, s->site_id);
        if (s->duration_ns < 0) failure("%s has a negative duration", name, f->index, t->thread_id, i);
        if (i < t->n_scopes && (end_of(s) > hi || end_of(s) < lo))
            failure("%s ended outside its frame", name, f->index, t->thread_id, i);
        if (s->parent == VOR_PARENT_NONE) {
            if (s->depth != 0) failure("%s has no parent but is not at depth 0", name, f->index, t->thread_id, i);
            if (top_seen && s->start_ns < top_end) failure("%s overlaps the previous outermost scope", name, f->index, t->thread_id, i);
            top_seen = 1;
            top_end = end_of(s);
            continue;
        }
        if (s->parent == VOR_PARENT_UNKNOWN) {
            failure("%s: parent unknown", name, f->index, t->thread_id, i);
            continue;
        }
        if (s->parent >= n) {
            failure("%s: parent index out of the thread's scopes", name, f->index, t->thread_id, i);
            continue;
        }
        const vor_reader_scope *p = &t->scopes[s->parent];
        if (s->depth != p->depth + 1) failure("%s is not one level below its parent", name, f->index, t->thread_id, i);
        if (s->start_ns < p->start_ns || end_of(s) > end_of(p))
            failure("%s is not inside its parent", name, f->index, t->thread_id, i);
        if (last_child[s->parent] != UINT32_MAX && s->start_ns < last_child_end[s->parent])
            failure("%s overlaps its previous sibling", name, f->index, t->thread_id, i);
        last_child[s->parent] = i;
        last_child_end[s->parent] = end_of(s);
        child_time[s->parent] += contribution(s, lo, hi);
    }
    for (uint32_t i = 0; i < n; i++)
        if (contribution(&t->scopes[i], lo, hi) - child_time[i] < 0)
            failure("%s has a negative self time", site_name(r, t->scopes[i].site_id), f->index, t->thread_id, i);
    free(order);
    free(child_time);
    free(last_child_end);
    free(last_child);
}

static vor_reader *open_capture(const char *path) {
    char err[512];
    vor_reader *r = vor_reader_open(path, err, sizeof err);
    if (r == NULL) {
        fprintf(stderr, "check_capture: %s\n", err);
        exit(2);
    }
    return r;
}

static void read_to_end(vor_reader *r, vor_read_status st) {
    if (st == VOR_READ_ERROR) {
        fprintf(stderr, "check_capture: %s\n", vor_reader_error(r));
        exit(2);
    }
    if (!vor_reader_finished(r)) {
        printf("FAIL the capture has no end record (the writer did not close it)\n");
        failures++;
    }
    if (vor_reader_damage_count(r) != 0) {
        printf("FAIL %" PRIu64 " damaged records\n", vor_reader_damage_count(r));
        failures++;
    }
}

/* ---- names ---- */
static int check_names(const char *path, double min_percent, int want_lines) {
    vor_reader *r = open_capture(path);
    uint8_t *seen = calloc(VOR_READER_MAX_SITES + 1, 1);
    vor_reader_frame f;
    vor_read_status st;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME)
        for (uint32_t t = 0; t < f.n_threads; t++)
            for (uint32_t i = 0; i < f.threads[t].n_scopes + f.threads[t].n_open; i++)
                if (f.threads[t].scopes[i].site_id <= VOR_READER_MAX_SITES) seen[f.threads[t].scopes[i].site_id] = 1;
    read_to_end(r, st);
    uint32_t functions = 0, named = 0, located = 0, shown = 0;
    for (uint32_t id = 1; id <= vor_reader_site_count(r) && id <= VOR_READER_MAX_SITES; id++) {
        const vor_reader_site *s = vor_reader_get_site(r, id);
        if (!seen[id] || s == NULL || !is_function_site(s)) continue;
        functions++;
        int ok_name = !is_unnamed(s->name);
        int ok_line = s->file && s->file[0] && s->line > 0;
        named += ok_name;
        located += ok_name && ok_line;
        if ((!ok_name || (want_lines && !ok_line)) && shown++ < MAX_REPORTS)
            printf("  %s%s (%s:%u)\n", ok_name ? "no file or line: " : "unnamed: ", s->name, s->file ? s->file : "", s->line);
    }
    double pn = functions ? 100.0 * named / functions : 0, pl = functions ? 100.0 * located / functions : 0;
    printf("%u functions recorded: %u named (%.2f%%), %u with file and line (%.2f%%)\n", functions, named, pn,
           located, pl);
    int ok = failures == 0 && functions > 0 && pn >= min_percent && (!want_lines || pl >= min_percent);
    if (!ok) printf("FAIL fewer than %.2f%% of the recorded functions are named%s\n", min_percent,
                    want_lines ? " with file and line" : "");
    free(seen);
    vor_reader_close(r);
    return ok ? 0 : 1;
}

/* ---- structure ---- */
static int check_structure(const char *path, uint64_t steps, int complete) {
    vor_reader *r = open_capture(path);
    vor_reader_frame f;
    vor_read_status st;
    totals tot = {0};
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        if (f.index != tot.frames) {
            printf("FAIL frame %" PRIu64 " where frame %" PRIu64 " was expected\n", f.index, tot.frames);
            failures++;
        }
        tot.frames++;
        tot.dropped += f.dropped_scopes;
        uint64_t in_frame = 0;
        for (uint32_t t = 0; t < f.n_threads; t++) {
            const vor_reader_thread_scopes *th = &f.threads[t];
            check_thread(r, &f, th);
            in_frame += th->n_scopes + th->n_open;
            tot.open += th->n_open;
            for (uint32_t i = 0; i < th->n_scopes + th->n_open; i++) tot.unwound += (th->scopes[i].flags & VOR_SCOPE_UNWOUND) != 0;
        }
        tot.scopes += in_frame;
        if (complete && (!f.has_flame || in_frame == 0 || f.dropped_scopes != 0)) {
            printf("FAIL frame %" PRIu64 ": %" PRIu64 " scopes, %" PRIu64 " dropped (expected scopes and no drops)\n",
                   f.index, in_frame, f.dropped_scopes);
            failures++;
        }
    }
    read_to_end(r, st);
    if (tot.frames != steps) {
        printf("FAIL %" PRIu64 " frames, expected %" PRIu64 "\n", tot.frames, steps);
        failures++;
    }
    printf("%" PRIu64 " frames, %" PRIu64 " scopes (%" PRIu64 " unwound, %" PRIu64 " open at a frame's end), %" PRIu64
           " dropped; %d problems\n",
           tot.frames, tot.scopes, tot.unwound, tot.open, tot.dropped, failures);
    vor_reader_close(r);
    return failures ? 1 : 0;
}

/* ---- longjmp ---- */
static int check_longjmp(const char *path, uint64_t steps, const char *root, const char *unwound_name,
                         const char *kinds) {
    vor_reader *r = open_capture(path);
    vor_reader_frame f;
    vor_read_status st;
    int unmet = 0;
    uint64_t frames = 0;
    quiet = 1;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        frames++;
        char kind = (char)('0' + f.index % 4);
        int longjmp_step = strchr(kinds, kind) != NULL;
        uint64_t scopes = 0, roots = 0, unwound = 0, named_unwound = 0, outside = 0, open = 0;
        int nesting = 0;
        for (uint32_t t = 0; t < f.n_threads; t++) {
            const vor_reader_thread_scopes *th = &f.threads[t];
            int before = failures; /* nesting problems here are longjmp's consequences: unmet */
            check_thread(r, &f, th);
            nesting += failures - before;
            failures = before;
            open += th->n_open;
            uint32_t n = th->n_scopes + th->n_open;
            scopes += n;
            for (uint32_t i = 0; i < n; i++) {
                const vor_reader_scope *s = &th->scopes[i];
                const char *name = site_name(r, s->site_id);
                if (s->flags & VOR_SCOPE_UNWOUND) {
                    unwound++;
                    if (strcmp(name, unwound_name) == 0) named_unwound++;
                }
                if (strcmp(name, root) == 0 && s->depth == 0 && i < th->n_scopes) {
                    roots++;
                    continue;
                }
                /* Walk up to depth 0: it must be the root. */
                uint32_t k = i, hops = 0;
                while (th->scopes[k].parent < n && hops++ <= n) k = th->scopes[k].parent;
                if (strcmp(site_name(r, th->scopes[k].site_id), root) != 0) outside++;
            }
        }
        /* One line per frame: what happened, then what is wrong with it. */
        printf("frame %" PRIu64 " (kind %c): %" PRIu64 " scopes, %" PRIu64 " '%s' at depth 0, %" PRIu64
               " outside it, %" PRIu64 " unwound (%" PRIu64 " '%s'), %" PRIu64 " open at the end, %" PRIu64
               " dropped, %d nesting problems\n",
               f.index, kind, scopes, roots, root, outside, unwound, named_unwound, unwound_name, open,
               f.dropped_scopes, nesting);
        int was = unmet;
        unmet += nesting;
        if (roots != 1) unmet++;
        if (outside || f.dropped_scopes || open) unmet++;
        if (longjmp_step && unwound == 0) unmet++;
        if (!longjmp_step && unwound != 0) unmet++;
        if (kind == '2' && named_unwound == 0) unmet++;
        if (unmet != was)
            printf("  UNMET: %s%s%s%s%s%s\n", roots != 1 ? "not one root; " : "",
                   outside ? "scopes outside the root; " : "", f.dropped_scopes ? "drops; " : "",
                   open ? "scopes left open; " : "",
                   longjmp_step && unwound == 0 ? "no unwound scope in a longjmp step; " : "",
                   !longjmp_step && unwound ? "unwound scopes in a step without longjmp; " : "");
        if (kind == '2' && named_unwound == 0) printf("  UNMET: an error step without an unwound '%s'\n", unwound_name);
        if (nesting) printf("  UNMET: nesting is not exact (parents unknown or wrong)\n");
    }
    quiet = 0;
    read_to_end(r, st);
    if (frames != steps) {
        printf("FAIL %" PRIu64 " frames, expected %" PRIu64 "\n", frames, steps);
        failures++;
    }
    printf("%" PRIu64 " frames; %d longjmp expectations unmet%s\n", frames, unmet, failures ? "; the capture is incomplete" : "");
    vor_reader_close(r);
    if (failures) return 1;
    return unmet ? 3 : 0;
}

static uint64_t count_arg(const char *text) {
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v == 0) {
        fprintf(stderr, "check_capture: '%s' is not a positive count\n", text);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "names") == 0 && argc <= 5) {
        int lines = argc == 5 ? strcmp(argv[4], "--no-lines") != 0 : 1;
        if (argc == 5 && lines) goto usage;
        return check_names(argv[2], atof(argv[3]), lines);
    }
    if (argc >= 4 && argc <= 5 && strcmp(argv[1], "structure") == 0) {
        if (argc == 5 && strcmp(argv[4], "--complete") != 0) goto usage;
        return check_structure(argv[2], count_arg(argv[3]), argc == 5);
    }
    if (argc == 7 && strcmp(argv[1], "longjmp") == 0 && strspn(argv[6], "0123") == strlen(argv[6]))
        return check_longjmp(argv[2], count_arg(argv[3]), argv[4], argv[5], argv[6]);
usage:
    fprintf(stderr, "usage: check_capture names CAPTURE MIN_PERCENT [--no-lines]\n"
                    "       check_capture structure CAPTURE STEPS [--complete]\n"
                    "       check_capture longjmp CAPTURE STEPS ROOT UNWOUND_NAME KINDS\n");
    return 2;
}
