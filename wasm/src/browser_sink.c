/* browser_sink.c: the browser sink, a frame-record consumer that puts vor's scopes and
 * frames on custom tracks of the Chrome DevTools Performance panel (WebAssembly builds).
 * The JavaScript half is wasm/js/devtools.js; the public settings are in vor/browser.h.
 *
 * Shape: everything a frame needs crosses from wasm to JavaScript in one call per frame.
 * The scopes are already in linear memory (the frame record's thread and scope arrays),
 * so the call passes pointers and JavaScript reads the records where they lie; names go
 * over once: each site, thread name and metric column is declared the first time a
 * frame needs it (a site's name and file:line are decoded to JS strings once and kept
 * in a JS table by site id, with the site's colour and a prepared detail object), and a
 * thread is declared again only when it is renamed. The call carries a small descriptor
 * (sink_frame_desc below; its layout is fixed by static asserts because devtools.js reads
 * it by offset). Declarations that do not fit the fixed batches go first, in extra calls;
 * in a steady state there is exactly one call per frame and nothing per scope in C.
 *
 * Options not taken: a JS call per scope (the naive baseline of bench/devtools: a string
 * decode and a wasm-to-JS transition for every scope); emitting from the scope hot path
 * (the hot path stays two clock reads and a few stores whatever DevTools does); filtering
 * short scopes in C (JavaScript reads each record's duration anyway, and it costs the same
 * there: see vor_browser_set_min_duration_ns for the figures).
 *
 * Time base: vor's clock in wasm is performance.now() on the main thread's timeline
 * (clock.h), so a scope at start_ns (since the session epoch) is at (epoch_ns +
 * start_ns) / 1e6 ms on the page's performance.now() timeline, which is what
 * performance.measure and console.timeStamp take. When the frame thread is a worker, its
 * own timeline starts later by the difference of the time origins, which epoch_ms takes
 * off (vor_wasm_realm_offset_ms).
 *
 * Settings (mode, track group, minimum duration) can change at any time from any thread;
 * the frame thread picks them up at its next frame. The page can change them from
 * JavaScript too (Module.vorDevtools): JavaScript raises a flag in linear memory and the
 * frame thread pulls the values at its next frame, so no function needs exporting.
 *
 * Memory, all static and bounded: batches of declarations (SITE_BATCH, THREAD_BATCH,
 * COLUMN_BATCH entries), the metric values of one frame, and a table of the threads
 * already declared (THREAD_TABLE_SLOTS, cleared when half full: names are declared again,
 * which DevTools does not notice). The JS tables are bounded by the same numbers: sites by
 * VOR_MAX_SITES, columns by VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS, threads by the
 * C table (devtools.js forgets its threads when this file does).
 *
 * Costs: nothing per scope in C. Per frame: a branch when the mode is off; otherwise a
 * name lookup (a short lock) per thread in the frame, the new declarations, and the JS
 * call. What JavaScript and the browser spend per scope is in vor/browser.h.
 */
#include "platform.h"

#if defined(__EMSCRIPTEN__) && defined(VOR_PLATFORM_WASM)

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "vor/browser.h"
#include "vor_internal.h"

/* ---- Capacities ------------------------------------------------------------------------ */

#define SITE_BATCH 256u          /* site declarations per JS call (4 KiB) */
#define THREAD_BATCH 32u         /* thread declarations per JS call (about 2 KiB) */
#define COLUMN_BATCH 64u         /* metric column declarations per JS call */
#define THREAD_TABLE_SLOTS 2048u /* threads known to JS; power of two, 2 x VOR_MAX_MAX_THREADS so
                                    that one frame's threads always fit after a clear */
#define ERROR_BYTES 160u         /* JS failure message */
#define MAX_METRICS (VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS)

/* Descriptor flags (devtools.js has the same values). */
enum {
    FLAG_EMIT = 1u,          /* emit the frame (else: declarations only) */
    FLAG_RESET = 2u,         /* a new session: forget every site, thread and column */
    FLAG_GROUP = 4u,         /* the track group changed: read `group` */
    FLAG_THREADS_RESET = 8u, /* forget every thread (the C table was cleared) */
};

/* JS return codes of vor_devtools_js_frame. */
enum { JS_OK = 0, JS_FAILED = 1 };

/* ---- What devtools.js reads (layout fixed: it reads by offset) -------------------------- */

typedef struct sink_site_decl {
    uint32_t id;
    uint32_t line;
    const char *name; /* NUL-terminated UTF-8, at most VOR_MAX_NAME_BYTES read */
    const char *file; /* NULL when unknown */
} sink_site_decl;

typedef struct sink_thread_decl {
    uint32_t thread_id;
    char name[VOR_THREAD_NAME_BYTES];
} sink_thread_decl;

typedef struct sink_column_decl {
    uint32_t id;
    const char *name;
    const char *unit; /* "" when none */
} sink_column_decl;

typedef struct sink_frame_desc {
    double epoch_ms;        /* the session epoch on the performance.now() timeline */
    double start_ns;        /* frame start, ns since the epoch */
    double duration_ns;
    double index;
    double min_duration_ns;
    double n_scopes;
    double dropped;
    double overhead_ns;
    uint32_t flags;
    uint32_t mode;
    uint32_t n_threads;
    const vor_thread_record *threads;
    uint32_t n_system;
    const vor_user_value *system; /* system values already scaled (frame_ms, memory_mb, ...) */
    uint32_t n_user;
    const vor_user_value *user;
    uint32_t n_site_decls;
    const sink_site_decl *site_decls;
    uint32_t n_thread_decls;
    const sink_thread_decl *thread_decls;
    uint32_t n_column_decls;
    const sink_column_decl *column_decls;
    const char *group;
    char *error;
    uint32_t error_capacity;
} sink_frame_desc;

/* Settings written by Module.vorDevtools, pulled by the frame thread. */
typedef struct sink_pull {
    int32_t mode;      /* -1: unchanged */
    int32_t has_min;
    double min_ns;
    int32_t has_group;
    char group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1];
} sink_pull;

#define ASSERT_OFFSET(type, field, at) _Static_assert(offsetof(type, field) == (at), #type "." #field " moved")
_Static_assert(sizeof(void *) == 4, "devtools.js reads 32-bit pointers (wasm32)");
ASSERT_OFFSET(vor_scope_record, site_id, 0);
ASSERT_OFFSET(vor_scope_record, start_ns, 8);
ASSERT_OFFSET(vor_scope_record, duration_ns, 16);
_Static_assert(sizeof(vor_scope_record) == 24, "vor_scope_record is 24 bytes in devtools.js");
ASSERT_OFFSET(vor_thread_record, thread_id, 0);
ASSERT_OFFSET(vor_thread_record, n_scopes, 4);
ASSERT_OFFSET(vor_thread_record, scopes, 8);
_Static_assert(sizeof(vor_thread_record) == 12, "vor_thread_record is 12 bytes in devtools.js");
ASSERT_OFFSET(vor_user_value, column_id, 0);
ASSERT_OFFSET(vor_user_value, value, 8);
_Static_assert(sizeof(vor_user_value) == 16, "vor_user_value is 16 bytes in devtools.js");
ASSERT_OFFSET(sink_site_decl, line, 4);
ASSERT_OFFSET(sink_site_decl, name, 8);
ASSERT_OFFSET(sink_site_decl, file, 12);
_Static_assert(sizeof(sink_site_decl) == 16, "sink_site_decl is 16 bytes in devtools.js");
ASSERT_OFFSET(sink_thread_decl, name, 4);
_Static_assert(sizeof(sink_thread_decl) == 4 + VOR_THREAD_NAME_BYTES, "sink_thread_decl size");
_Static_assert(VOR_THREAD_NAME_BYTES == 64, "devtools.js: thread declarations are 68 bytes");
ASSERT_OFFSET(sink_column_decl, name, 4);
ASSERT_OFFSET(sink_column_decl, unit, 8);
_Static_assert(sizeof(sink_column_decl) == 12, "sink_column_decl is 12 bytes in devtools.js");
ASSERT_OFFSET(sink_frame_desc, start_ns, 8);
ASSERT_OFFSET(sink_frame_desc, duration_ns, 16);
ASSERT_OFFSET(sink_frame_desc, index, 24);
ASSERT_OFFSET(sink_frame_desc, min_duration_ns, 32);
ASSERT_OFFSET(sink_frame_desc, n_scopes, 40);
ASSERT_OFFSET(sink_frame_desc, dropped, 48);
ASSERT_OFFSET(sink_frame_desc, overhead_ns, 56);
ASSERT_OFFSET(sink_frame_desc, flags, 64);
ASSERT_OFFSET(sink_frame_desc, mode, 68);
ASSERT_OFFSET(sink_frame_desc, n_threads, 72);
ASSERT_OFFSET(sink_frame_desc, threads, 76);
ASSERT_OFFSET(sink_frame_desc, n_system, 80);
ASSERT_OFFSET(sink_frame_desc, system, 84);
ASSERT_OFFSET(sink_frame_desc, n_user, 88);
ASSERT_OFFSET(sink_frame_desc, user, 92);
ASSERT_OFFSET(sink_frame_desc, n_site_decls, 96);
ASSERT_OFFSET(sink_frame_desc, site_decls, 100);
ASSERT_OFFSET(sink_frame_desc, n_thread_decls, 104);
ASSERT_OFFSET(sink_frame_desc, thread_decls, 108);
ASSERT_OFFSET(sink_frame_desc, n_column_decls, 112);
ASSERT_OFFSET(sink_frame_desc, column_decls, 116);
ASSERT_OFFSET(sink_frame_desc, group, 120);
ASSERT_OFFSET(sink_frame_desc, error, 124);
ASSERT_OFFSET(sink_frame_desc, error_capacity, 128);
ASSERT_OFFSET(sink_pull, has_min, 4);
ASSERT_OFFSET(sink_pull, min_ns, 8);
ASSERT_OFFSET(sink_pull, has_group, 16);
ASSERT_OFFSET(sink_pull, group, 20);

/* ---- The JavaScript half (wasm/js/devtools.js) ------------------------------------------ */

/* 1 in a browser page or worker, 0 elsewhere (node). */
extern int vor_devtools_js_environment(void);
/* Session start: where the pull flag lives. */
extern void vor_devtools_js_open(int32_t *pull_flag);
/* Declarations (and, with FLAG_EMIT, the frame). JS_OK, or JS_FAILED with a message. */
extern int vor_devtools_js_frame(sink_frame_desc *desc);
/* Copies the settings the page set through Module.vorDevtools into *out. */
extern void vor_devtools_js_pull(sink_pull *out);
/* The mode in effect, for Module.vorDevtools.getMode(). */
extern void vor_devtools_js_mode(int mode);

/* ---- Settings (any thread) --------------------------------------------------------------- */

static int setting_mode = -1;        /* atomic; -1: the environment's default */
static uint64_t setting_min_ns;      /* atomic */
static uint32_t setting_group_version = 1; /* atomic; bumped by every change */
static vor_mutex setting_lock = VOR_MUTEX_INIT; /* guards setting_group */
static char setting_group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1] = VOR_BROWSER_DEFAULT_TRACK_GROUP;
static size_t setting_group_length = sizeof VOR_BROWSER_DEFAULT_TRACK_GROUP - 1;
static int environment = -1;         /* atomic; 1 browser, 0 elsewhere, -1 not asked yet */
static int turned_off;               /* atomic; set after a failure, cleared by set_mode */

static int in_browser(void) {
    int e = vor_atomic_load_relaxed(&environment);
    if (e < 0) {
        e = vor_devtools_js_environment() ? 1 : 0;
        vor_atomic_store_relaxed(&environment, e);
    }
    return e;
}

void vor_browser_set_mode(vor_browser_mode mode) {
    if (mode != VOR_BROWSER_OFF && mode != VOR_BROWSER_USER_TIMING && mode != VOR_BROWSER_FAST) {
        vor_log(VOR_LOG_BAD_SETTING, "vor_browser_set_mode(%d): not a vor_browser_mode; ignored", (int)mode);
        return;
    }
    vor_atomic_store_relaxed(&setting_mode, (int)mode);
    vor_atomic_store_relaxed(&turned_off, 0);
}

vor_browser_mode vor_browser_get_mode(void) {
    if (vor_atomic_load_relaxed(&turned_off)) return VOR_BROWSER_OFF;
    int m = vor_atomic_load_relaxed(&setting_mode);
    if (m >= 0) return (vor_browser_mode)m;
    return in_browser() ? VOR_BROWSER_USER_TIMING : VOR_BROWSER_OFF;
}

/* Length of s cut to at most max bytes without splitting a UTF-8 sequence. */
static size_t cut_at_character(const char *s, size_t length, size_t max) {
    if (length <= max) return length;
    size_t n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* s[n] continues a sequence */
    return n;
}

void vor_browser_set_track_group(const char *group) {
    if (group == NULL) {
        vor_log(VOR_LOG_NAME_NULL, "vor_browser_set_track_group");
        return;
    }
    size_t length = strlen(group);
    size_t kept = cut_at_character(group, length, VOR_BROWSER_TRACK_GROUP_MAX_BYTES);
    if (kept < length)
        vor_log(VOR_LOG_NAME_TOO_LONG, "track group \"%.40s...\" (DevTools track groups keep %u bytes)", group,
                (unsigned)VOR_BROWSER_TRACK_GROUP_MAX_BYTES);
    vor_mutex_lock(&setting_lock);
    memcpy(setting_group, group, kept);
    setting_group[kept] = '\0';
    setting_group_length = kept;
    vor_atomic_add_relaxed(&setting_group_version, 1u);
    vor_mutex_unlock(&setting_lock);
}

size_t vor_browser_get_track_group(char *buffer, size_t capacity) {
    vor_mutex_lock(&setting_lock);
    size_t length = setting_group_length;
    if (buffer != NULL && capacity > 0) {
        size_t n = length < capacity - 1 ? length : capacity - 1;
        memcpy(buffer, setting_group, n);
        buffer[n] = '\0';
    }
    vor_mutex_unlock(&setting_lock);
    return length;
}

void vor_browser_set_min_duration_ns(uint64_t ns) {
    vor_atomic_store_relaxed(&setting_min_ns, ns);
}

uint64_t vor_browser_get_min_duration_ns(void) {
    return vor_atomic_load_relaxed(&setting_min_ns);
}

/* ---- The consumer (frame thread, frame lock held) -------------------------------------- */

typedef struct thread_slot {
    uint32_t key; /* thread id + 1; 0 = empty */
    uint32_t reserved;
    uint64_t name_hash;
} thread_slot;

typedef struct sink_state {
    int open;                 /* a consumer is registered for the running session */
    int32_t pull_flag;        /* atomic: raised by Module.vorDevtools, lowered here */
    uint32_t flags_pending;   /* FLAG_RESET / FLAG_THREADS_RESET not yet told to JS */
    uint32_t group_version;   /* the version JS has; 0 = never told */
    int last_mode;            /* the mode JS was last told; -1 = none */
    uint32_t sites_declared;  /* sites 1..sites_declared are in the JS table */
    uint32_t columns_declared;
    uint32_t threads_known;
    thread_slot threads[THREAD_TABLE_SLOTS];
    sink_frame_desc desc;
    sink_site_decl site_decls[SITE_BATCH];
    sink_thread_decl thread_decls[THREAD_BATCH];
    sink_column_decl column_decls[COLUMN_BATCH];
    vor_user_value system[VOR_SYSTEM_COLUMNS_MAX];
    char group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1];
    char error[ERROR_BYTES];
} sink_state;

static sink_state sink;

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* Forgets what JS was told: everything is declared again at the next frame. */
static void forget_declarations(void) {
    sink.flags_pending = FLAG_RESET;
    sink.group_version = 0;
    sink.sites_declared = 0;
    sink.columns_declared = 0;
    sink.threads_known = 0;
    memset(sink.threads, 0, sizeof sink.threads);
    sink.desc.n_site_decls = sink.desc.n_thread_decls = sink.desc.n_column_decls = 0;
}

/* Hands the declarations gathered so far to JS (and the frame when `flags` has
 * FLAG_EMIT). Returns 0 on success, else the sink is turned off (reported once). */
static int call_js(uint32_t flags) {
    sink_frame_desc *d = &sink.desc;
    d->flags = flags | sink.flags_pending;
    d->error = sink.error;
    d->error_capacity = ERROR_BYTES;
    sink.error[0] = '\0';
    int r = vor_devtools_js_frame(d);
    sink.flags_pending = 0;
    d->flags = 0;
    d->n_site_decls = d->n_thread_decls = d->n_column_decls = 0;
    if (r == JS_OK) return 0;
    forget_declarations(); /* JS may have dropped part of them; a re-armed sink starts afresh */
    vor_atomic_store_relaxed(&turned_off, 1);
    vor_log(VOR_LOG_CONSUMER_FAILED, "DevTools browser sink: %s; the sink is off (vor_browser_set_mode re-arms it)",
            sink.error[0] ? sink.error : "the JavaScript side failed");
    return -1;
}

static int declare_sites(void) {
    uint32_t registered = vor_site_count();
    while (sink.sites_declared < registered) {
        if (sink.desc.n_site_decls == SITE_BATCH && call_js(0) != 0) return -1;
        uint32_t id = sink.sites_declared + 1;
        const vor_site *site = vor_site_get(id);
        sink_site_decl *decl = &sink.site_decls[sink.desc.n_site_decls++];
        decl->id = id;
        decl->name = site && site->name ? site->name : "(unnamed)";
        decl->file = site ? site->file : NULL;
        decl->line = site ? site->line : 0;
        sink.sites_declared = id;
    }
    return 0;
}

static int declare_columns(void) {
    uint32_t count = vor_column_count();
    if (count > MAX_METRICS) count = MAX_METRICS;
    while (sink.columns_declared < count) {
        if (sink.desc.n_column_decls == COLUMN_BATCH && call_js(0) != 0) return -1;
        vor_column column;
        uint32_t id = sink.columns_declared++;
        if (!vor_column_read(id, &column) || column.name == NULL) continue;
        sink_column_decl *decl = &sink.column_decls[sink.desc.n_column_decls++];
        decl->id = id;
        decl->name = column.name;
        decl->unit = column.unit ? column.unit : "";
    }
    return 0;
}

/* Declares the threads of this frame that JS does not know under their current name. */
static int declare_threads(const vor_frame_record *rec) {
    if (sink.threads_known + rec->n_threads > THREAD_TABLE_SLOTS / 2) {
        memset(sink.threads, 0, sizeof sink.threads);
        sink.threads_known = 0;
        sink.flags_pending |= FLAG_THREADS_RESET;
    }
    for (uint32_t i = 0; i < rec->n_threads; i++) {
        uint32_t id = rec->threads[i].thread_id;
        char name[VOR_THREAD_NAME_BYTES];
        if (!vor_thread_name_by_id(id, name, sizeof name, NULL)) snprintf(name, sizeof name, "thread %u", id);
        uint64_t h = hash_name(name);
        uint32_t key = id + 1, mask = THREAD_TABLE_SLOTS - 1;
        thread_slot *slot = NULL;
        for (uint32_t probe = 0;; probe++) {
            slot = &sink.threads[(key * 2654435761u + probe) & mask];
            if (slot->key == key || slot->key == 0) break;
        }
        if (slot->key == key && slot->name_hash == h) continue;
        if (slot->key == 0) {
            slot->key = key;
            sink.threads_known++;
        }
        slot->name_hash = h;
        if (sink.desc.n_thread_decls == THREAD_BATCH && call_js(0) != 0) return -1;
        sink_thread_decl *decl = &sink.thread_decls[sink.desc.n_thread_decls++];
        decl->thread_id = id;
        memcpy(decl->name, name, sizeof name);
    }
    return 0;
}

/* Applies what the page set through Module.vorDevtools since the last frame. */
static void pull_page_settings(void) {
    if (!vor_atomic_load_relaxed(&sink.pull_flag)) return;
    vor_atomic_store_relaxed(&sink.pull_flag, 0);
    sink_pull pull;
    memset(&pull, 0, sizeof pull);
    pull.mode = -1;
    vor_devtools_js_pull(&pull);
    if (pull.mode >= 0) vor_browser_set_mode((vor_browser_mode)pull.mode);
    if (pull.has_min) vor_browser_set_min_duration_ns(pull.min_ns > 0 ? (uint64_t)pull.min_ns : 0);
    if (pull.has_group) {
        pull.group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES] = '\0';
        vor_browser_set_track_group(pull.group);
    }
}

static int sink_frame(void *state, const vor_frame_record *rec) {
    (void)state;
    pull_page_settings();
    int mode = (int)vor_browser_get_mode();
    if (mode != sink.last_mode) {
        sink.last_mode = mode;
        vor_devtools_js_mode(mode);
    }
    if (mode == VOR_BROWSER_OFF) return 0;

    uint32_t version = vor_atomic_load_relaxed(&setting_group_version);
    uint32_t flags = FLAG_EMIT;
    if (version != sink.group_version) {
        vor_browser_get_track_group(sink.group, sizeof sink.group);
        sink.group_version = version;
        flags |= FLAG_GROUP;
    }
    if (declare_sites() != 0 || declare_columns() != 0 || declare_threads(rec) != 0) return 0;

    uint32_t n_defs = 0, n_system = 0;
    const vor_system_column_def *defs = vor_system_columns(&n_defs);
    for (uint32_t i = 0; i < rec->n_system && i < n_defs && i < VOR_SYSTEM_COLUMNS_MAX; i++) {
        if (!(rec->system_present & (1u << i))) continue;
        sink.system[n_system].column_id = i;
        sink.system[n_system].reserved = 0;
        sink.system[n_system].value = (double)rec->system_raw[i] * defs[i].scale;
        n_system++;
    }

    sink_frame_desc *d = &sink.desc;
    d->epoch_ms = (double)vor_session_now.epoch_ns / 1e6 - vor_wasm_realm_offset_ms();
    d->start_ns = (double)rec->start_ns;
    d->duration_ns = (double)rec->duration_ns;
    d->index = (double)rec->index;
    d->min_duration_ns = (double)vor_browser_get_min_duration_ns();
    d->n_scopes = (double)rec->n_scopes;
    d->dropped = (double)rec->dropped_scopes;
    d->overhead_ns = (double)rec->overhead_ns;
    d->mode = (uint32_t)mode;
    d->n_threads = rec->n_threads;
    d->threads = rec->threads;
    d->n_system = n_system;
    d->system = sink.system;
    d->n_user = rec->n_user;
    d->user = rec->user;
    d->group = sink.group;
    (void)call_js(flags);
    return 0; /* failures turn the sink off but keep it registered, so it can be re-armed */
}

static void sink_close(void *state) {
    (void)state;
    sink.open = 0;
}

void vor_browser_sink_open(void) {
    if (sink.open) return;
    /* A new session: JS forgets everything at the first frame it gets (which may run in
     * another thread's JavaScript realm than the last session's). */
    memset(&sink.desc, 0, sizeof sink.desc);
    forget_declarations();
    sink.last_mode = -1;
    sink.desc.site_decls = sink.site_decls;
    sink.desc.thread_decls = sink.thread_decls;
    sink.desc.column_decls = sink.column_decls;
    in_browser();
    vor_devtools_js_open(&sink.pull_flag);
    vor_consumer c = {"DevTools browser sink", NULL, sink_frame, NULL, sink_close};
    if (vor_consumers_add(&c))
        sink.open = 1;
    else
        vor_log(VOR_LOG_CONSUMER_FAILED, "DevTools browser sink: no room for another output (VOR_MAX_CONSUMERS)");
}

#endif /* __EMSCRIPTEN__ && VOR_PLATFORM_WASM */
