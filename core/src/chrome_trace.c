/* chrome_trace.c: the VOR_TRACE output, a consumer that writes every frame record as
 * Chrome Trace Event JSON (through the writer of chrome_json.c) as soon as it arrives.
 *
 * What one frame becomes, written at the end of the frame (one write() when it fits the
 * 64 KiB buffer; so a crash loses at most the frame being recorded, and nothing waits in
 * memory until exit):
 *   - "M" thread_name (+ thread_sort_index) for every thread seen for the first time or
 *     renamed since the last frame;
 *   - one "X" event named "frame" (cat "vor.frame", args index, scopes, dropped,
 *     overhead_ns) on a "frames" pseudo-thread (tid VOR_CHROME_FRAMES_TID, sorted first),
 *     so frame boundaries show as a row of their own above the threads;
 *   - one "X" event per scope: name = site name, cat "vor", args {file, line}, on
 *     pid = the process id, tid = the thread's OS tid (vor thread id + 1 where the OS gives
 *     none, as in the browser: a tid of 0 would be merged with the pid by Perfetto);
 *   - one "C" event per metric column that has a value in this frame, named after the
 *     column, args {"value": v} (system columns: raw * scale, e.g. frame_ms), stamped at
 *     the frame's start so each value covers the frame it describes. NaN and infinite
 *     values are omitted (not JSON).
 * ts values are microseconds (3 decimals, exact ns) since the session epoch, the time
 * base of every frame record. At open, before any frame: "[" and the process_name event
 * (args: name, vor_version, session_start_unix_us) and the frames row's names. Each
 * session writes its own file: a new session (vor_enable after vor_shutdown) with the
 * same path starts it again.
 *
 * Scopes arrive per thread in end order (children before their parent); they are
 * written in start order with parents before children (a linear post-order to pre-order
 * pass, see scope_order.h), which every viewer nests correctly even when a child starts at
 * the very nanosecond of its parent.
 *
 * Options not taken: "B"/"E" pairs (twice the events and bytes for what a frame record
 * already knows as start + duration); a write per event (a syscall each) or per N frames
 * (a crash would lose more than one frame); a writer thread (memory that grows or drops,
 * for a cost that bench/chrome puts far below the frame assembly's own).
 *
 * Memory: the writer's buffer, one prepared (pre-escaped) text per scope site used,
 * a small table of known threads (cleared if it ever fills: names are then written
 * again, which viewers accept) and scratch arrays as large as the largest thread of a
 * frame (bounded by max_frame_scopes). Everything runs on the frame thread under the
 * frame lock, like every consumer.
 */
#include "chrome_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_order.h"
#include "utf8.h"
#include "vor_internal.h"

#define SCOPE_CATEGORY "vor"
#define FRAME_CATEGORY "vor.frame"
#define FRAMES_ROW_NAME "frames"
#define MAX_COLUMNS (VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS)

typedef struct thread_entry {
    uint32_t key;       /* vor thread id + 1; 0 = empty slot */
    uint32_t version;   /* name version seen by the last rename check; 0 = not yet */
    uint64_t tid;
    uint64_t name_hash; /* of the name last written */
} thread_entry;

typedef struct column_entry {
    const char *name; /* NULL until looked up; valid for the process */
    double scale;
} column_entry;


typedef struct trace_state {
    vor_chrome_json *json;
    uint64_t pid;
    int failed;                 /* a frame returned nonzero: consumers.c reported it */
    thread_entry *threads;      /* open addressing, power-of-two capacity */
    uint32_t thread_capacity;
    uint32_t thread_count;
    vor_chrome_prepared *sites; /* by site id */
    uint32_t site_capacity;
    column_entry columns[MAX_COLUMNS];
    uint32_t *next;             /* pre-order links, one per scope of the largest thread */
    vor_scope_subtree *stack;
    uint32_t scratch_capacity;
    const char *path;
    size_t label_capacity;
    char *label;                /* the consumer's name: "VOR_TRACE=<path>[: <error>]" */
} trace_state;

/* ---- Names: threads, sites, columns, the process ------------------------------------- */

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static uint32_t round_up_pow2(uint32_t v) {
    uint32_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

/* The entry of thread `id`; *is_new when it was just added (the caller names it). */
static thread_entry *thread_lookup(trace_state *st, uint32_t id, int add, int *is_new) {
    uint32_t mask = st->thread_capacity - 1;
    uint32_t key = id + 1;
    if (is_new) *is_new = 0;
    for (uint32_t probe = 0;; probe++) {
        thread_entry *e = &st->threads[(key * 2654435761u + probe) & mask];
        if (e->key == key) return e;
        if (e->key == 0) {
            if (!add) return NULL;
            if (st->thread_count >= st->thread_capacity / 2) {
                /* Full: forget every thread (their names are written again when they
                 * next appear) rather than grow without bound. */
                memset(st->threads, 0, st->thread_capacity * sizeof *st->threads);
                st->thread_count = 0;
                return thread_lookup(st, id, add, is_new);
            }
            e->key = key;
            st->thread_count++;
            if (is_new) *is_new = 1;
            return e;
        }
    }
}

static uint64_t pick_tid(uint32_t thread_id, uint64_t os_tid) {
    return os_tid ? os_tid : (uint64_t)thread_id + 1;
}

/* A thread met for the first time: its names events. */
static void name_new_thread(trace_state *st, thread_entry *e, uint32_t thread_id) {
    char name[VOR_THREAD_NAME_BYTES];
    uint64_t os_tid = 0;
    if (!vor_thread_name_by_id(thread_id, name, sizeof name, &os_tid))
        snprintf(name, sizeof name, "thread %u", thread_id);
    e->tid = pick_tid(thread_id, os_tid);
    e->version = 0;
    e->name_hash = hash_name(name);
    vor_chrome_json_thread_name(st->json, st->pid, e->tid, name);
    vor_chrome_json_thread_sort_index(st->json, st->pid, e->tid, (int64_t)thread_id);
}

/* Renames since the last frame: live threads already named whose name version moved. */
static void check_renames(trace_state *st) {
    uint32_t slots = vor_thread_slot_count();
    for (uint32_t s = 0; s < slots; s++) {
        vor_thread *t = vor_thread_slot(s);
        if (t == NULL) continue;
        thread_entry *e = thread_lookup(st, t->thread_id, 0, NULL);
        if (e == NULL) continue;
        char name[VOR_THREAD_NAME_BYTES];
        uint32_t version = vor_thread_copy_name(t, name, sizeof name);
        if (version == e->version) continue;
        e->version = version;
        uint64_t h = hash_name(name);
        if (h == e->name_hash) continue;
        e->name_hash = h;
        vor_chrome_json_thread_name(st->json, st->pid, e->tid, name);
    }
}

/* The prepared text of site `id`, NULL if it cannot be had (the caller writes it plainly). */
static const vor_chrome_prepared *site_text(trace_state *st, uint32_t id) {
    if (id < st->site_capacity && st->sites[id].bytes) return &st->sites[id];
    if (id > VOR_MAX_SITES) return NULL;
    if (id >= st->site_capacity) {
        uint32_t capacity = st->site_capacity ? st->site_capacity : 256;
        while (capacity <= id) capacity *= 2;
        if (capacity > VOR_MAX_SITES + 1) capacity = VOR_MAX_SITES + 1;
        vor_chrome_prepared *grown = realloc(st->sites, capacity * sizeof *grown);
        if (grown == NULL) return NULL;
        memset(grown + st->site_capacity, 0, (capacity - st->site_capacity) * sizeof *grown);
        st->sites = grown;
        st->site_capacity = capacity;
    }
    const vor_site *site = vor_site_get(id);
    char name[VOR_MAX_NAME_BYTES + 1];
    const char *raw = site && site->name ? site->name : "(unnamed)";
    size_t n = vor_utf8_cut(raw, VOR_MAX_NAME_BYTES);
    memcpy(name, raw, n);
    name[n] = '\0';
    const char *file = site ? site->file : NULL;
    char *file_copy = NULL;
    if (file && strnlen(file, VOR_MAX_FILE_BYTES + 1) > VOR_MAX_FILE_BYTES) {
        size_t fn = vor_utf8_cut(file, VOR_MAX_FILE_BYTES);
        file_copy = malloc(fn + 1);
        if (file_copy == NULL) return NULL;
        memcpy(file_copy, file, fn);
        file_copy[fn] = '\0';
        file = file_copy;
    }
    int ok = vor_chrome_prepare_complete(&st->sites[id], name, SCOPE_CATEGORY, file, site ? site->line : 0);
    free(file_copy);
    return ok ? &st->sites[id] : NULL;
}

static const column_entry *column(trace_state *st, uint32_t id) {
    if (id >= MAX_COLUMNS) return NULL;
    column_entry *c = &st->columns[id];
    if (c->name == NULL) {
        vor_column col;
        if (!vor_column_read(id, &col) || col.name == NULL) return NULL;
        c->name = col.name;
        c->scale = col.is_system ? col.scale : 1.0;
    }
    return c;
}

static void process_name(char *out, size_t cap) {
#if defined(VOR_PLATFORM_LINUX)
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, out, cap - 1);
        close(fd);
        if (n > 0) {
            while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r')) n--;
            out[n] = '\0';
            if (n > 0) return;
        }
    }
    snprintf(out, cap, "%s", program_invocation_short_name);
#else
    /* The browser or node: no /proc, and argv[0] is "this.program". */
    snprintf(out, cap, "%s", "vor (WebAssembly)");
#endif
}

/* ---- Frames --------------------------------------------------------------------------- */

/* Grows the pre-order scratch to n scopes; 0 if memory is short. */
static int reserve_scratch(trace_state *st, uint32_t n) {
    if (n <= st->scratch_capacity) return 1;
    uint32_t capacity = round_up_pow2(n);
    uint32_t *next = malloc((size_t)capacity * sizeof *next);
    vor_scope_subtree *stack = malloc((size_t)capacity * sizeof *stack);
    if (next == NULL || stack == NULL) {
        free(next);
        free(stack);
        vor_log(VOR_LOG_OUT_OF_MEMORY, "Chrome trace scratch for %u scopes (written in end order)", n);
        return 0;
    }
    free(st->next);
    free(st->stack);
    st->next = next;
    st->stack = stack;
    st->scratch_capacity = capacity;
    return 1;
}

static void write_scope(trace_state *st, const vor_scope_record *r, uint64_t tid) {
    const vor_chrome_prepared *text = site_text(st, r->site_id);
    if (text) {
        vor_chrome_json_complete_prepared(st->json, text, st->pid, tid, r->start_ns, r->duration_ns);
        return;
    }
    const vor_site *site = vor_site_get(r->site_id);
    vor_chrome_json_complete(st->json, site && site->name ? site->name : "(unnamed)", SCOPE_CATEGORY, st->pid, tid,
                             r->start_ns, r->duration_ns, site ? site->file : NULL, site ? site->line : 0, NULL, 0);
}

static void write_thread(trace_state *st, const vor_thread_record *t) {
    int is_new;
    thread_entry *e = thread_lookup(st, t->thread_id, 1, &is_new);
    if (is_new) name_new_thread(st, e, t->thread_id);
    uint64_t tid = e->tid;
    if (t->n_scopes == 0) return;
    if (!reserve_scratch(st, t->n_scopes)) {
        for (uint32_t i = 0; i < t->n_scopes; i++) write_scope(st, &t->scopes[i], tid);
        return;
    }
    for (uint32_t i = vor_scope_preorder((const vor_reader_scope *)t->scopes, t->n_scopes, st->next, st->stack); i != VOR_SCOPE_ORDER_END; i = st->next[i])
        write_scope(st, &t->scopes[i], tid);
}

static void write_counters(trace_state *st, const vor_frame_record *r) {
    uint32_t n_system = r->n_system < VOR_SYSTEM_COLUMNS_MAX ? r->n_system : VOR_SYSTEM_COLUMNS_MAX;
    for (uint32_t i = 0; i < n_system; i++) {
        if (!(r->system_present & (1u << i))) continue;
        const column_entry *c = column(st, i);
        if (c) vor_chrome_json_counter(st->json, st->pid, c->name, r->start_ns, NULL, (double)r->system_raw[i] * c->scale);
    }
    for (uint32_t i = 0; i < r->n_user; i++) {
        const column_entry *c = column(st, r->user[i].column_id);
        if (c) vor_chrome_json_counter(st->json, st->pid, c->name, r->start_ns, NULL, r->user[i].value);
    }
}

/* Turns the consumer's name into the report of what failed. */
static void describe_failure(trace_state *st, int error) {
    snprintf(st->label, st->label_capacity, "VOR_TRACE=%s: %s", st->path, strerror(error ? error : EIO));
}

static int trace_frame(void *state, const vor_frame_record *r) {
    trace_state *st = state;
    check_renames(st);

    vor_chrome_arg frame_args[4] = {
        {"index", VOR_CHROME_ARG_INT, NULL, (int64_t)r->index, 0},
        {"scopes", VOR_CHROME_ARG_INT, NULL, (int64_t)r->n_scopes, 0},
        {"dropped", VOR_CHROME_ARG_INT, NULL, (int64_t)r->dropped_scopes, 0},
        {"overhead_ns", VOR_CHROME_ARG_INT, NULL, r->overhead_ns, 0},
    };
    vor_chrome_json_complete(st->json, "frame", FRAME_CATEGORY, st->pid, VOR_CHROME_FRAMES_TID, r->start_ns,
                             r->duration_ns, NULL, 0, frame_args, 4);
    for (uint32_t t = 0; t < r->n_threads; t++) write_thread(st, &r->threads[t]);
    write_counters(st, r);

    if (vor_chrome_json_flush(st->json) != 0) {
        vor_chrome_json_stats stats;
        vor_chrome_json_get_stats(st->json, &stats);
        describe_failure(st, stats.write_errno);
        st->failed = 1;
        return 1;
    }
    return 0;
}

static void trace_flush(void *state) {
    trace_state *st = state;
    vor_chrome_json_flush(st->json); /* an error surfaces at the next frame or at close */
}

static void free_state(trace_state *st) {
    for (uint32_t i = 0; i < st->site_capacity; i++) vor_chrome_prepared_free(&st->sites[i]);
    free(st->sites);
    free(st->threads);
    free(st->next);
    free(st->stack);
    free((void *)st->path);
    free(st);
}

static void trace_close(void *state) {
    trace_state *st = state;
    if (vor_chrome_json_close(st->json) != 0 && !st->failed) {
        describe_failure(st, errno);
        vor_log(VOR_LOG_CONSUMER_FAILED, "%s", st->label);
    }
    free_state(st);
}

/* ---- Opening -------------------------------------------------------------------------- */

/* "[", the process and the frames row: written (and flushed) before the first frame. */
static void write_preamble(trace_state *st) {
    char name[256];
    process_name(name, sizeof name);
    vor_chrome_arg args[2] = {
        {"vor_version", VOR_CHROME_ARG_STRING, VOR_VERSION_STRING, 0, 0},
        {"session_start_unix_us", VOR_CHROME_ARG_INT, NULL, vor_session_now.wall_epoch_ns / 1000, 0},
    };
    vor_chrome_json_process_name(st->json, st->pid, name, args, 2);
    vor_chrome_json_thread_name(st->json, st->pid, VOR_CHROME_FRAMES_TID, FRAMES_ROW_NAME);
    vor_chrome_json_thread_sort_index(st->json, st->pid, VOR_CHROME_FRAMES_TID, -1);
}

int vor_chrome_trace_open_buffered(const char *path, size_t buffer_bytes) {
    if (path == NULL || *path == '\0') {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_TRACE is empty");
        return 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int error = errno;
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_TRACE=%s: %s", path, strerror(error));
        return 0;
    }
    size_t path_bytes = strlen(path) + 1;
    size_t label_capacity = path_bytes + 160;
    trace_state *st = calloc(1, sizeof *st);
    char *strings = malloc(path_bytes + label_capacity);
    uint32_t thread_capacity = round_up_pow2(vor_settings_now.max_threads * 4u);
    if (thread_capacity < 64) thread_capacity = 64;
    thread_entry *threads = calloc(thread_capacity, sizeof *threads);
    vor_chrome_json *json = vor_chrome_json_open_fd(fd, 1, buffer_bytes);
    if (st == NULL || strings == NULL || threads == NULL || json == NULL) {
        if (json)
            vor_chrome_json_close(json);
        else
            close(fd);
        free(st);
        free(strings);
        free(threads);
        vor_log(VOR_LOG_OUT_OF_MEMORY, "VOR_TRACE=%s: the trace writer's buffers", path);
        return 0;
    }
    memcpy(strings, path, path_bytes);
    st->path = strings;
    st->label = strings + path_bytes;
    st->label_capacity = label_capacity;
    snprintf(st->label, label_capacity, "VOR_TRACE=%s", path);
    st->json = json;
    st->threads = threads;
    st->thread_capacity = thread_capacity;
    st->pid = (uint64_t)getpid();

    write_preamble(st);
    if (vor_chrome_json_flush(json) != 0) {
        vor_chrome_json_stats stats;
        vor_chrome_json_get_stats(json, &stats);
        vor_log(VOR_LOG_BAD_ENVIRONMENT, "VOR_TRACE=%s: %s", path, strerror(stats.write_errno));
        vor_chrome_json_close(json);
        free_state(st);
        return 0;
    }
    vor_consumer c = {st->label, st, trace_frame, trace_flush, trace_close};
    if (!vor_consumers_add(&c)) {
        vor_log(VOR_LOG_CONSUMER_FAILED, "VOR_TRACE=%s: more than %d outputs", path, VOR_MAX_CONSUMERS);
        vor_chrome_json_close(json); /* leaves a valid, empty trace */
        free_state(st);
        return 0;
    }
    return 1;
}

int vor_chrome_trace_open(const char *path) {
    return vor_chrome_trace_open_buffered(path, 0);
}
