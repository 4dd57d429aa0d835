/* export_chrome.c: `vor export --format chrome`: a capture as Chrome Trace Event JSON,
 * the same shape as the live VOR_TRACE output (core/src/chrome_trace.c), written through
 * the same streaming emitter (core/src/chrome_json.c), so a trace exported later and a
 * trace written live open alike in Perfetto, chrome://tracing and speedscope:
 *
 *   - "[" and an M process_name event (the capture's process name and pid; args
 *     vor_version, session_start_unix_us), then the "frames" pseudo-thread's names;
 *   - per frame: one X event "frame" (cat "vor.frame", args index, scopes, dropped,
 *     overhead_ns) on the frames row; M thread_name / thread_sort_index for each thread
 *     met for the first time (or renamed); one X event per scope (cat "vor", args file and
 *     line), parents before children (core scope_order.c); one C event per metric value, at the
 *     frame's start (NaN and infinities are omitted: JSON has no such numbers; counted).
 * tids are the OS thread ids the capture recorded (vor thread id + 1 where it has none),
 * timestamps microseconds with three decimals since the capture's time 0.
 *
 * Memory: the emitter's buffer, one pre-escaped text per site, a small per-thread table,
 * and scratch arrays as large as the largest thread of one frame. Nothing grows with the
 * number of frames.
 *
 * Tested against the live output: tests/cli (cli_e2e_chrome) records one run with both
 * VOR_RECORD and VOR_TRACE and checks that the export has exactly the live trace's events.
 *
 * Built only when the core library has the emitter (VOR_CLI_HAVE_CHROME_JSON, set by
 * CMakeLists.txt); otherwise this format reports plainly that it is not in the build.
 */
#include "cli.h"

#ifndef VOR_CLI_HAVE_CHROME_JSON

const int export_chrome_available = 0;

int export_chrome(export_job *job) {
    return cli_fail(CLI_EXIT_USAGE, job->cmd, NULL,
                    "--format chrome is not available in this build (the core library has no Chrome trace "
                    "emitter, core/src/chrome_json.c); use --format folded or csv");
}

#else

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_json.h"

#define SCOPE_CATEGORY "vor"
#define FRAME_CATEGORY "vor.frame"
#define FRAMES_ROW_NAME "frames"
#define CHROME_EXPORT_BUFFER_BYTES (1024u * 1024u)

const int export_chrome_available = 1;

typedef struct thread_seen {
    uint64_t tid;
    uint64_t name_hash; /* of the name last written; 0 = never written */
} thread_seen;

typedef struct chrome_export {
    vor_chrome_json *json;
    uint64_t pid;
    vor_chrome_prepared *sites; /* by site id, prepared on first use */
    uint32_t n_sites;
    thread_seen *threads;       /* by thread id */
    uint32_t n_threads;
    uint32_t *next;             /* pre-order links for the largest thread of a frame */
    scope_order_entry *stack;
    uint32_t scratch;
} chrome_export;

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603u; /* FNV-1a; never 0 in practice, 0 marks "unwritten" */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h ? h : 1;
}

static int grow(void **array, uint32_t *n, uint32_t need, size_t size, uint32_t limit) {
    if (need <= *n) return 0;
    if (need > limit) return -1;
    uint32_t cap = *n ? *n : 64;
    while (cap < need) cap *= 2;
    if (cap > limit) cap = limit;
    char *p = realloc(*array, (size_t)cap * size);
    if (!p) return -1;
    memset(p + (size_t)*n * size, 0, (size_t)(cap - *n) * size);
    *array = p;
    *n = cap;
    return 0;
}

/* The thread's tid; writes its names the first time and after a rename. */
static uint64_t thread_tid(chrome_export *e, const vor_reader *r, uint32_t id) {
    const vor_reader_thread *th = vor_reader_get_thread(r, id);
    uint64_t tid = th && th->os_tid ? th->os_tid : (uint64_t)id + 1;
    if (grow((void **)&e->threads, &e->n_threads, id + 1, sizeof *e->threads, VOR_READER_MAX_THREADS) != 0) return tid;
    thread_seen *t = &e->threads[id];
    char fallback[32];
    snprintf(fallback, sizeof fallback, "thread %u", id);
    const char *name = th && th->name && th->name[0] ? th->name : fallback;
    uint64_t h = hash_name(name);
    if (t->name_hash != h) {
        int first = t->name_hash == 0;
        t->tid = tid;
        t->name_hash = h;
        vor_chrome_json_thread_name(e->json, e->pid, tid, name);
        if (first) vor_chrome_json_thread_sort_index(e->json, e->pid, tid, (int64_t)id);
    }
    return t->tid;
}

static void write_scope(chrome_export *e, const vor_reader *r, const vor_reader_scope *s, uint64_t tid) {
    uint32_t id = s->site_id;
    if (grow((void **)&e->sites, &e->n_sites, id + 1, sizeof *e->sites, VOR_READER_MAX_SITES + 1u) == 0) {
        vor_chrome_prepared *p = &e->sites[id];
        if (!p->bytes) {
            const vor_reader_site *site = vor_reader_get_site(r, id);
            char fallback[32];
            snprintf(fallback, sizeof fallback, "site %u", id);
            const char *name = site && site->name && site->name[0] ? site->name : fallback;
            const char *file = site && site->file && site->file[0] ? site->file : NULL;
            vor_chrome_prepare_complete(p, name, SCOPE_CATEGORY, file, site ? site->line : 0);
        }
        if (p->bytes) {
            vor_chrome_json_complete_prepared(e->json, p, e->pid, tid, s->start_ns, s->duration_ns);
            return;
        }
    }
    vor_chrome_json_complete(e->json, "(unnamed)", SCOPE_CATEGORY, e->pid, tid, s->start_ns, s->duration_ns, NULL, 0,
                             NULL, 0);
}

static void write_thread(chrome_export *e, const vor_reader *r, const vor_reader_thread_scopes *t) {
    uint64_t tid = thread_tid(e, r, t->thread_id);
    if (t->n_scopes == 0) return;
    if (t->n_scopes > e->scratch) {
        uint32_t *next = malloc((size_t)t->n_scopes * sizeof *next);
        scope_order_entry *stack = malloc((size_t)t->n_scopes * sizeof *stack);
        if (next && stack) {
            free(e->next);
            free(e->stack);
            e->next = next;
            e->stack = stack;
            e->scratch = t->n_scopes;
        } else {
            free(next);
            free(stack);
        }
    }
    if (t->n_scopes > e->scratch) { /* no memory for the reordering: end order is valid JSON too */
        for (uint32_t i = 0; i < t->n_scopes; i++) write_scope(e, r, &t->scopes[i], tid);
        return;
    }
    for (uint32_t i = scope_preorder(t->scopes, t->n_scopes, e->next, e->stack); i != SCOPE_ORDER_END; i = e->next[i])
        write_scope(e, r, &t->scopes[i], tid);
}

static int write_frame(chrome_export *e, const vor_reader *r, const vor_reader_frame *f) {
    vor_chrome_arg args[4] = {
        {"index", VOR_CHROME_ARG_INT, NULL, (int64_t)f->index, 0},
        {"scopes", VOR_CHROME_ARG_INT, NULL, (int64_t)f->n_scopes, 0},
        {"dropped", VOR_CHROME_ARG_INT, NULL, (int64_t)f->dropped_scopes, 0},
        {"overhead_ns", VOR_CHROME_ARG_INT, NULL, f->overhead_ns, 0},
    };
    int rc = vor_chrome_json_complete(e->json, "frame", FRAME_CATEGORY, e->pid, VOR_CHROME_FRAMES_TID, f->start_ns,
                                      f->duration_ns, NULL, 0, args, 4);
    for (uint32_t t = 0; t < f->n_threads; t++) write_thread(e, r, &f->threads[t]);
    for (uint32_t i = 0; i < f->n_values; i++) {
        const vor_reader_column *c = vor_reader_get_column(r, f->values[i].column_id);
        if (c) vor_chrome_json_counter(e->json, e->pid, c->name, f->start_ns, NULL, f->values[i].value);
    }
    return rc;
}

static void write_preamble(chrome_export *e, const vor_reader *r) {
    const vor_reader_info *info = vor_reader_get_info(r);
    /* The producer reads "vor 0.1.0 linux-x86_64": the live writer's vor_version is the
     * second word. */
    char version[64] = "";
    const char *producer = info && info->producer ? info->producer : "";
    if (strncmp(producer, "vor ", 4) == 0) sscanf(producer + 4, "%63s", version);
    else snprintf(version, sizeof version, "%s", producer);
    vor_chrome_arg args[2] = {
        {"vor_version", VOR_CHROME_ARG_STRING, version, 0, 0},
        {"session_start_unix_us", VOR_CHROME_ARG_INT, NULL, info ? info->wall_epoch_ns / 1000 : 0, 0},
    };
    vor_chrome_json_process_name(e->json, e->pid, info && info->process ? info->process : "", args, 2);
    vor_chrome_json_thread_name(e->json, e->pid, VOR_CHROME_FRAMES_TID, FRAMES_ROW_NAME);
    vor_chrome_json_thread_sort_index(e->json, e->pid, VOR_CHROME_FRAMES_TID, -1);
}

int export_chrome(export_job *job) {
    chrome_export e;
    memset(&e, 0, sizeof e);
    const vor_reader *r = job->capture->reader;
    const vor_reader_info *info = vor_reader_get_info(r);
    e.pid = info ? info->pid : 0;
    e.json = vor_chrome_json_open_stream(job->out->f, 0, CHROME_EXPORT_BUFFER_BYTES);
    if (!e.json) return cli_fail(CLI_EXIT_USAGE, job->cmd, job->capture->path, "out of memory");
    write_preamble(&e, r);

    int status = 0, got;
    vor_reader_frame f;
    while ((got = cli_capture_next(job->capture, &f)) == 1) {
        if (write_frame(&e, r, &f) != 0) break; /* a write error: reported at close */
        cli_progress_update(job->progress, job->capture->frames, vor_reader_offset(job->capture->reader));
    }
    if (got < 0) status = CLI_EXIT_USAGE;
    vor_chrome_json_stats stats;
    vor_chrome_json_get_stats(e.json, &stats);
    int closed = vor_chrome_json_close(e.json); /* "\n]\n"; the stream stays open */
    if (status == 0 && (closed != 0 || stats.write_errno)) {
        status = cli_write_error(job->cmd, cli_output_name(job->out), job->out->path == NULL,
                                 stats.write_errno ? stats.write_errno : EIO, NULL);
    }
    if (status == 0 && stats.non_finite_omitted)
        cli_note(job->cmd, job->capture->path, "%llu NaN or infinite values were left out (JSON has no such numbers)",
                 (unsigned long long)stats.non_finite_omitted);
    for (uint32_t i = 0; i < e.n_sites; i++) vor_chrome_prepared_free(&e.sites[i]);
    free(e.sites);
    free(e.threads);
    free(e.next);
    free(e.stack);
    return status;
}

#endif /* VOR_CLI_HAVE_CHROME_JSON */
