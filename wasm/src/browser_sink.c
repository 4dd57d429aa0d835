/* browser_sink.c: the browser sink, a frame-record consumer that puts vor's scopes and
 * frames on custom tracks of the Chrome DevTools Performance panel (WebAssembly builds).
 * The JavaScript half is wasm/js/devtools.js; the public settings are in vor/browser.h.
 *
 * Shape: everything a frame needs crosses from wasm to JavaScript in one call per frame.
 * Which scopes are shown and where is decided here first (devtools_entries.c: the entry
 * budget, the minimum duration, and display times that give every scope at least one
 * clock step without breaking nesting); the entries are then in linear memory, so the
 * call passes a pointer and JavaScript reads them where they lie; names go
 * over once: each site, thread name and metric column is declared the first time a
 * frame needs it (a site's name and file:line are decoded to JS strings once and kept
 * in a JS table by site id, with the site's colour and a prepared detail object), and a
 * thread is declared again only when it is renamed. The call carries a small descriptor
 * (sink_frame_desc below; its layout is fixed by static asserts because devtools.js reads
 * it by offset). Declarations that do not fit the fixed batches go first, in extra calls;
 * in a steady state there is exactly one call per frame.
 *
 * The clock: vor_clock_get_info (clock.c) measures performance.now()'s step and whether the
 * page is cross-origin isolated when the session starts; the step is the width of a
 * zero-length scope, both go on every frame entry, and a page that is not isolated gets one
 * console warning (devtools.js).
 *
 * Options not taken: a JS call per scope (the naive baseline of bench/devtools: a string
 * decode and a wasm-to-JS transition for every scope); emitting from the scope hot path
 * (the hot path stays two clock reads and a few stores whatever DevTools does); choosing
 * entries in JavaScript (the budget and the layout are per-thread tree walks that are
 * cheaper in C, and C tests them natively).
 *
 * Time base: vor's clock in wasm is performance.now() on the main thread's timeline
 * (clock.h), so a scope at start_ns (since the session epoch) is at (epoch_ns +
 * start_ns) / 1e6 ms on the page's performance.now() timeline, which is what
 * performance.measure and console.timeStamp take. When the frame thread is a worker, its
 * own timeline starts later by the difference of the time origins, which epoch_ms takes
 * off (vor_wasm_realm_offset_ms).
 *
 * Settings (mode, track group, minimum duration, entry budget) can change at any time from any thread;
 * the frame thread picks them up at its next frame. The page can change them from
 * JavaScript too (Module.vorDevtools), and the thread whose JavaScript does so need not be
 * the frame thread (a pthreads build whose frame loop runs in a worker, -sPROXY_TO_PTHREAD):
 * each thread has its own JavaScript realm, so nothing the page keeps in JavaScript would
 * reach the frame thread. So the page's requests and the mode in effect live in linear
 * memory (page_settings below): a constructor, which Emscripten runs on the main thread
 * before any pthread exists, hands its address to the main thread's devtools.js (and the
 * sink hands it again to the realm that opens a session and to the frame thread's);
 * JavaScript writes a request under a small spin lock (Atomics) and raises `pending`; the
 * frame thread pulls it at its next frame and writes back the mode in effect, which
 * Module.vorDevtools.getMode() reads. No function needs exporting.
 *
 * Names: a site's name reaches DevTools cut as every other output cuts it (at most
 * VOR_MAX_NAME_BYTES, at a UTF-8 character boundary: core/src/utf8.h); the length is
 * computed here and handed over with the name.
 *
 * Memory, all static and bounded: batches of declarations (SITE_BATCH, THREAD_BATCH,
 * COLUMN_BATCH entries), the metric values of one frame, and a table of the threads
 * already declared (thread_table.h: THREAD_TABLE_SLOTS, cleared when half full: names
 * are declared again, which DevTools does not notice). The JS tables are bounded by the
 * same numbers: sites by VOR_MAX_SITES, columns by VOR_SYSTEM_COLUMNS_MAX +
 * VOR_MAX_USER_COLUMNS, threads by the C table (devtools.js forgets its threads when this
 * file does).
 *
 * Costs: per scope in C, a few passes of the entry selection and layout (tens of ns). Per
 * frame: a branch when the mode is off; otherwise a name lookup (a short lock) per thread
 * in the frame, the new declarations, and the JS call. What JavaScript and the browser
 * spend per scope is in vor/browser.h.
 */
#include "platform.h"

#if defined(__EMSCRIPTEN__) && defined(VOR_PLATFORM_WASM)

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "devtools_entries.h"
#include "thread_table.h"
#include "utf8.h"
#include "vor/browser.h"
#include "vor_internal.h"

/* ---- Capacities ------------------------------------------------------------------------ */

#define SITE_BATCH 256u  /* site declarations per JS call (4 KiB) */
#define THREAD_BATCH 32u /* thread declarations per JS call (about 2 KiB) */
#define COLUMN_BATCH 64u /* metric column declarations per JS call */
#define ERROR_BYTES 160u /* JS failure message */
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
    const char *name;    /* UTF-8; JS reads name_bytes of it */
    const char *file;    /* NULL when unknown */
    uint32_t name_bytes; /* the name cut as every output cuts it (utf8.h) */
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
    double epoch_ms; /* the session epoch on the performance.now() timeline */
    double start_ns; /* frame start, ns since the epoch */
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
    void *settings;                /* &page_settings, for the frame thread's realm */
    double left_out_budget;        /* ended scopes the entry budget left out */
    double left_out_short;         /* ended scopes the minimum duration left out */
    double clock_step_ns;          /* the clock's measured step; 0: unknown */
    double min_width_ns;           /* the width a zero-length scope got (one step, less in a crowded frame) */
    const devtools_entry *entries; /* what to show (devtools_entries.h) */
    uint32_t n_entries;
    int32_t cross_origin_isolated; /* 1, 0, or -1: unknown */
    uint32_t budget;               /* the entry budget in effect (0: none) */
    uint32_t reserved;
} sink_frame_desc;

/* What the page asks through Module.vorDevtools, and the mode in effect (linear memory,
 * shared by every thread's JavaScript). Written by JS and by pull_page_settings only under
 * `lock`. */
typedef struct page_settings_t {
    int32_t lock;           /* 0 free, 1 held (Atomics.compareExchange / __atomic CAS) */
    int32_t pending;        /* 1: a request below waits for the frame thread */
    int32_t mode;           /* requested mode; -1: none */
    int32_t mode_in_effect; /* the mode at the last frame (or last pull); -1: no frame yet */
    double min_ns;          /* requested minimum duration (ns, >= 0, clamped to 2^64 by JS) */
    int32_t has_min;
    int32_t has_group;
    char group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1]; /* requested track group (if has_group) */
    int32_t has_budget;
    uint32_t budget; /* requested entry budget (if has_budget) */
} page_settings_t;

#define ASSERT_OFFSET(type, field, at) _Static_assert(offsetof(type, field) == (at), #type "." #field " moved")
_Static_assert(sizeof(void *) == 4, "devtools.js reads 32-bit pointers (wasm32)");
ASSERT_OFFSET(vor_scope_record, site_id, 0);
ASSERT_OFFSET(vor_scope_record, start_ns, 8);
ASSERT_OFFSET(vor_scope_record, duration_ns, 16);
_Static_assert(sizeof(vor_scope_record) == 32, "vor_scope_record is 32 bytes in devtools.js");
ASSERT_OFFSET(vor_thread_record, thread_id, 0);
ASSERT_OFFSET(vor_thread_record, n_scopes, 4);
ASSERT_OFFSET(vor_thread_record, scopes, 8);
ASSERT_OFFSET(vor_thread_record, n_open, 12);
_Static_assert(sizeof(vor_thread_record) == 16, "vor_thread_record is 16 bytes in devtools.js");
ASSERT_OFFSET(vor_user_value, column_id, 0);
ASSERT_OFFSET(vor_user_value, value, 8);
_Static_assert(sizeof(vor_user_value) == 16, "vor_user_value is 16 bytes in devtools.js");
ASSERT_OFFSET(sink_site_decl, line, 4);
ASSERT_OFFSET(sink_site_decl, name, 8);
ASSERT_OFFSET(sink_site_decl, file, 12);
ASSERT_OFFSET(sink_site_decl, name_bytes, 16);
_Static_assert(sizeof(sink_site_decl) == 20, "sink_site_decl is 20 bytes in devtools.js");
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
ASSERT_OFFSET(sink_frame_desc, settings, 132);
ASSERT_OFFSET(sink_frame_desc, left_out_budget, 136);
ASSERT_OFFSET(sink_frame_desc, left_out_short, 144);
ASSERT_OFFSET(sink_frame_desc, clock_step_ns, 152);
ASSERT_OFFSET(sink_frame_desc, min_width_ns, 160);
ASSERT_OFFSET(sink_frame_desc, entries, 168);
ASSERT_OFFSET(sink_frame_desc, n_entries, 172);
ASSERT_OFFSET(sink_frame_desc, cross_origin_isolated, 176);
ASSERT_OFFSET(sink_frame_desc, budget, 180);
ASSERT_OFFSET(devtools_entry, thread, 4);
ASSERT_OFFSET(devtools_entry, start_ns, 8);
ASSERT_OFFSET(devtools_entry, end_ns, 16);
_Static_assert(sizeof(devtools_entry) == 24, "devtools_entry is 24 bytes in devtools.js");
ASSERT_OFFSET(page_settings_t, pending, 4);
ASSERT_OFFSET(page_settings_t, mode, 8);
ASSERT_OFFSET(page_settings_t, mode_in_effect, 12);
ASSERT_OFFSET(page_settings_t, min_ns, 16);
ASSERT_OFFSET(page_settings_t, has_min, 24);
ASSERT_OFFSET(page_settings_t, has_group, 28);
ASSERT_OFFSET(page_settings_t, group, 32);
ASSERT_OFFSET(page_settings_t, has_budget, 96);
ASSERT_OFFSET(page_settings_t, budget, 100);
_Static_assert(VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1 == 64, "devtools.js writes a 64-byte group");

/* ---- The JavaScript half (wasm/js/devtools.js) ------------------------------------------ */

/* 1 in a browser page or worker, 0 elsewhere (node). */
extern int vor_devtools_js_environment(void);
/* Where the page's settings live (this realm's Module.vorDevtools writes there from now on). */
extern void vor_devtools_js_settings(page_settings_t *settings);
/* Declarations (and, with FLAG_EMIT, the frame). JS_OK, or JS_FAILED with a message. */
extern int vor_devtools_js_frame(sink_frame_desc *desc);
/* A session starts with this clock: a page that is not cross-origin isolated gets one
 * console warning (once per JavaScript realm) naming the headers that fix it. */
extern void vor_devtools_js_clock(int cross_origin_isolated, double step_ns);

/* ---- Settings (any thread) --------------------------------------------------------------- */

static int setting_mode = -1;                                      /* atomic; -1: the environment's default */
static uint64_t setting_min_ns;                                    /* atomic */
static uint32_t setting_budget = VOR_BROWSER_DEFAULT_ENTRY_BUDGET; /* atomic */
static uint32_t setting_group_version = 1;                         /* atomic; bumped by every change */
static vor_mutex setting_lock = VOR_MUTEX_INIT;                    /* guards setting_group */
static char setting_group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1] = VOR_BROWSER_DEFAULT_TRACK_GROUP;
static size_t setting_group_length = sizeof VOR_BROWSER_DEFAULT_TRACK_GROUP - 1;
static int environment = -1; /* atomic; 1 browser, 0 elsewhere, -1 not asked yet */
static int turned_off;       /* atomic; set after a failure, cleared by set_mode */
static page_settings_t page_settings = {.mode = -1, .mode_in_effect = -1};

/* Runs on the main thread at start-up, before main() and before any pthread exists:
 * the page's Module.vorDevtools learns where to write. */
__attribute__((constructor)) static void hand_settings_to_js(void) {
    vor_devtools_js_settings(&page_settings);
}

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

void vor_browser_set_track_group(const char *group) {
    if (group == NULL) {
        vor_log(VOR_LOG_NAME_NULL, "vor_browser_set_track_group");
        return;
    }
    size_t length = strlen(group);
    size_t kept = vor_utf8_cut(group, VOR_BROWSER_TRACK_GROUP_MAX_BYTES);
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

void vor_browser_set_entry_budget(uint32_t entries) {
    vor_atomic_store_relaxed(&setting_budget, entries);
}

uint32_t vor_browser_get_entry_budget(void) {
    return vor_atomic_load_relaxed(&setting_budget);
}

/* ---- The consumer (frame thread, frame lock held) -------------------------------------- */

typedef struct sink_state {
    int open;                /* a consumer is registered for the running session */
    uint32_t flags_pending;  /* FLAG_RESET / FLAG_THREADS_RESET not yet told to JS */
    uint32_t group_version;  /* the version JS has; 0 = never told */
    int last_mode;           /* the mode JS was last told; -1 = none */
    uint32_t sites_declared; /* sites 1..sites_declared are in the JS table */
    uint32_t columns_declared;
    thread_table threads;     /* threads JS knows, under which name */
    int entries_stale;        /* frames went by unseen: forget the open scopes placed */
    vor_clock_info clock;     /* measured when the session started */
    devtools_entries entries; /* budget and display times (devtools_entries.h) */
    sink_frame_desc desc;
    sink_site_decl site_decls[SITE_BATCH];
    sink_thread_decl thread_decls[THREAD_BATCH];
    sink_column_decl column_decls[COLUMN_BATCH];
    vor_user_value system[VOR_SYSTEM_COLUMNS_MAX];
    char group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1];
    char error[ERROR_BYTES];
} sink_state;

static sink_state sink;

/* Forgets what JS was told: everything is declared again at the next frame. */
static void forget_declarations(void) {
    sink.flags_pending = FLAG_RESET;
    sink.group_version = 0;
    sink.sites_declared = 0;
    sink.columns_declared = 0;
    thread_table_clear(&sink.threads);
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
        decl->name_bytes = (uint32_t)vor_utf8_cut(decl->name, VOR_MAX_NAME_BYTES);
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
    /* Cleared before the frame, never during it: JS forgets its threads first thing. */
    if (thread_table_make_room(&sink.threads, rec->n_threads)) sink.flags_pending |= FLAG_THREADS_RESET;
    for (uint32_t i = 0; i < rec->n_threads; i++) {
        uint32_t id = rec->threads[i].thread_id;
        char name[VOR_THREAD_NAME_BYTES];
        if (!vor_thread_name_by_id(id, name, sizeof name, NULL)) snprintf(name, sizeof name, "thread %u", id);
        if (thread_table_seen(&sink.threads, id, name)) continue;
        if (sink.desc.n_thread_decls == THREAD_BATCH && call_js(0) != 0) return -1;
        sink_thread_decl *decl = &sink.thread_decls[sink.desc.n_thread_decls++];
        decl->thread_id = id;
        memcpy(decl->name, name, sizeof name);
    }
    return 0;
}

/* A duration in ns from a double: NaN and negatives are 0, anything past the range of
 * uint64_t is UINT64_MAX (a plain conversion is undefined there, and gives 0 in wasm). */
static uint64_t saturate_ns(double ns) {
    if (!(ns > 0)) return 0;
    if (ns >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)ns;
}

static void settings_lock(void) {
    for (;;) {
        int32_t expected = 0;
        if (vor_atomic_cas(&page_settings.lock, &expected, 1)) return;
    }
}

static void settings_unlock(void) {
    vor_atomic_store_release(&page_settings.lock, 0);
}

/* Applies what the page asked through Module.vorDevtools since the last frame. */
static void pull_page_settings(void) {
    if (!vor_atomic_load_acquire(&page_settings.pending)) return;
    settings_lock();
    page_settings_t asked = page_settings;
    page_settings.pending = 0;
    page_settings.mode = -1;
    page_settings.has_min = 0;
    page_settings.has_group = 0;
    page_settings.has_budget = 0;
    /* Under the lock, so getMode() never sees the request gone and the old mode. */
    if (asked.mode >= VOR_BROWSER_OFF && asked.mode <= VOR_BROWSER_FAST) page_settings.mode_in_effect = asked.mode;
    settings_unlock();
    if (asked.mode >= 0) vor_browser_set_mode((vor_browser_mode)asked.mode);
    if (asked.has_min) vor_browser_set_min_duration_ns(saturate_ns(asked.min_ns));
    if (asked.has_budget) vor_browser_set_entry_budget(asked.budget);
    if (asked.has_group) {
        asked.group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES] = '\0';
        vor_browser_set_track_group(asked.group);
    }
}

static int sink_frame(void *state, const vor_frame_record *rec) {
    (void)state;
    pull_page_settings();
    int mode = (int)vor_browser_get_mode();
    if (mode != sink.last_mode) {
        sink.last_mode = mode;
        vor_atomic_store_release(&page_settings.mode_in_effect, mode);
    }
    if (mode == VOR_BROWSER_OFF) {
        sink.entries_stale = 1;
        return 0;
    }
    if (sink.entries_stale) {
        devtools_entries_forget(&sink.entries);
        sink.entries_stale = 0;
    }

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

    devtools_frame_in in = {
        .threads = rec->threads,
        .n_threads = rec->n_threads,
        .start_ns = rec->start_ns,
        .end_ns = rec->start_ns + rec->duration_ns,
        .min_duration_ns = vor_browser_get_min_duration_ns(),
        .budget = vor_browser_get_entry_budget(),
        .step_ns = (double)sink.clock.resolution_ns,
    };
    devtools_frame_out out;
    if (devtools_entries_frame(&sink.entries, &in, &out) != 0)
        vor_log(VOR_LOG_OUT_OF_MEMORY, "DevTools browser sink: entries of a frame of %llu scopes",
                (unsigned long long)rec->n_scopes);

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
    d->settings = &page_settings;
    d->entries = out.entries;
    d->n_entries = out.n_entries;
    d->left_out_budget = (double)out.left_out_budget;
    d->left_out_short = (double)out.left_out_short;
    d->min_width_ns = out.min_width_ns;
    d->clock_step_ns = (double)sink.clock.resolution_ns;
    d->cross_origin_isolated = sink.clock.cross_origin_isolated;
    d->budget = in.budget;
    (void)call_js(flags);
    return 0; /* failures turn the sink off but keep it registered, so it can be re-armed */
}

static void sink_close(void *state) {
    (void)state;
    sink.open = 0;
}

/* The platform hook of outputs.c (platform.h): a browser session's own output, opened at
 * session start (DevTools tracks: on by default in a browser, off under node). */
void vor_platform_outputs_open(void) {
    if (sink.open) return;
    /* A new session: JS forgets everything at the first frame it gets (which may run in
     * another thread's JavaScript realm than the last session's). */
    memset(&sink.desc, 0, sizeof sink.desc);
    forget_declarations();
    sink.last_mode = -1;
    devtools_entries_forget(&sink.entries);
    sink.entries_stale = 0;
    vor_clock_get_info(&sink.clock);
    if (in_browser()) vor_devtools_js_clock(sink.clock.cross_origin_isolated, (double)sink.clock.resolution_ns);
    sink.desc.site_decls = sink.site_decls;
    sink.desc.thread_decls = sink.thread_decls;
    sink.desc.column_decls = sink.column_decls;
    in_browser();
    vor_devtools_js_settings(&page_settings); /* this thread's realm, if not the main thread's */
    vor_consumer c = {"DevTools browser sink", NULL, sink_frame, NULL, sink_close};
    if (vor_consumers_add(&c))
        sink.open = 1;
    else
        vor_log(VOR_LOG_CONSUMER_FAILED, "DevTools browser sink: no room for another output (VOR_MAX_CONSUMERS)");
}

#endif /* __EMSCRIPTEN__ && VOR_PLATFORM_WASM */
