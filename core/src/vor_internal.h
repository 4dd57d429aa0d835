/* vor_internal.h: the declarations shared by the core's files, and nothing public.
 *
 * The data path in one paragraph: a thread's scopes go into its vor_thread (a
 * single-producer/single-consumer ring of vor_event, written lock-free by the thread,
 * drained by the frame thread); vor_frame_mark() turns the drained events, the system
 * sample and the user-metric snapshot into one vor_frame_record and hands it to each
 * vor_consumer (capture writer, Chrome trace, browser sink, frame ring). Consumers never
 * see thread buffers, and the record is built once per frame whatever the number of
 * consumers.
 *
 * White-box tests include this header (and vor_testing.h).
 */
#ifndef VOR_INTERNAL_H
#define VOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"
#include "vor/reader.h"
#include "vor/vor.h"

/* ---- Settings ------------------------------------------------------------------------ */

#define VOR_DEFAULT_THREAD_BUFFER_SCOPES 65536u
#define VOR_MIN_THREAD_BUFFER_SCOPES 1024u
#define VOR_MAX_THREAD_BUFFER_SCOPES 16777216u
#define VOR_DEFAULT_MAX_THREADS 64u
#define VOR_MAX_MAX_THREADS 1024u
#define VOR_DEFAULT_MAX_FRAME_SCOPES 262144u
#define VOR_MAX_MAX_FRAME_SCOPES 16777216u
#define VOR_THREAD_NAME_BYTES (VOR_MAX_THREAD_NAME_BYTES + 1u) /* with its NUL */
/* The format's limit (FORMAT.md §2): Linux's 5 columns leave 27 for GPU rows (gpu.h). */
#define VOR_SYSTEM_COLUMNS_MAX 32u

typedef struct vor_settings {
    uint32_t thread_buffer_scopes; /* a power of two */
    uint32_t max_threads;
    uint32_t max_frame_scopes;
    uint32_t frame_ring_frames;
} vor_settings;

/* The settings of the current (or next) session; fixed while a session runs
 * (session_state.c; the logger is log.c's: vor_log_set_logger). */
extern VOR_HIDDEN vor_settings vor_settings_now;

/* ---- Logging ------------------------------------------------------------------------- */

/* Counts `item` and reports it through the logger the first time in the session.
 * `detail_fmt` (may be NULL) adds printf-style details after the item's text. */
VOR_HIDDEN void vor_log(vor_log_item item, const char *detail_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Counts `item` and reports it every time: for the handful of settings read when a
 * session starts, where each report names a different variable. Never on a hot path. */
VOR_HIDDEN void vor_log_each(vor_log_item item, const char *detail_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Counts `n` occurrences at once (reported once like vor_log). */
VOR_HIDDEN void vor_log_n(vor_log_item item, uint64_t n);
/* Forgets which items were reported and their counts (a new session). */
VOR_HIDDEN void vor_log_reset(void);
/* The logger reports go to (vor_setup); both fields NULL: stderr. */
VOR_HIDDEN void vor_log_set_logger(vor_logger logger);

/* ---- fork() hooks (called by session.c's pthread_atfork handlers, in its order) ------- */

VOR_HIDDEN void vor_log_fork(vor_fork_phase phase);
VOR_HIDDEN void vor_threads_fork(vor_fork_phase phase);     /* thread_registry.c */
VOR_HIDDEN void vor_sites_fork(vor_fork_phase phase);       /* sites.c */
VOR_HIDDEN void vor_columns_fork(vor_fork_phase phase);     /* columns.c */
VOR_HIDDEN void vor_frame_ring_fork(vor_fork_phase phase);  /* frame_ring.c */
VOR_HIDDEN void vor_frame_stats_fork(vor_fork_phase phase); /* frame_stats.c */
VOR_HIDDEN void vor_system_fork(vor_fork_phase phase);      /* system_metrics_<platform>.c */

/* ---- Thread buffers (thread_registry.c, thread_ring.c) ----------------------------- */

typedef struct vor_event {
    vor_site *site;
    uint64_t start; /* ticks */
    uint64_t end;   /* ticks */
    uint32_t depth; /* 0 = outermost */
    uint32_t flags; /* VOR_SCOPE_UNWOUND: vor closed it (a longjmp skipped its end) */
} vor_event;

/* An open scope on its thread's stack. The owner writes `start` then `site` (release
 * stores) before publishing the depth, so the frame thread, reading start, site, start
 * again, knows whether a pair it read is one scope's (frame_threads.c). */
typedef struct vor_open_scope {
    uint64_t start; /* atomic */
    vor_site *site; /* atomic */
} vor_open_scope;

/* The ring is a circle of chunks of VOR_RING_CHUNK_EVENTS events: a thread starts with one
 * and links in more (up to its bound) when it needs room, so a thread that records little
 * costs little and no event ever moves (thread_ring.c). */
#define VOR_RING_CHUNK_EVENTS 1024u
typedef struct vor_chunk {
    struct vor_chunk *next; /* atomic: the chunk after this one in the circle */
    uint64_t base;          /* atomic: index of the first event it holds now */
    vor_event events[VOR_RING_CHUNK_EVENTS];
} vor_chunk;

typedef struct vor_thread {
    /* Written by the owning thread only (the producer). */
    uint64_t head;           /* events written; atomic, released after each event */
    uint64_t fast_limit;     /* below it the current chunk has room and the ring keeps
                                VOR_MAX_DEPTH free: one compare on the hot path */
    vor_event *chunk_events; /* the current chunk's events */
    vor_chunk *chunk;        /* the current chunk */
    uint64_t chunk_end;      /* index one past the current chunk */
    uint64_t tail_cache;     /* the producer's last view of `tail` */
    uint32_t n_chunks;       /* chunks in the circle */
    uint32_t depth;          /* atomic: open scopes, including ones too deep to record */
    uint64_t dropped_full;   /* atomic, single writer: no room in the ring */
    uint64_t dropped_deep;   /* atomic, single writer: deeper than VOR_MAX_DEPTH */
    uint64_t filtered;       /* atomic, single writer: shorter than VOR_MIN_DURATION_NS */
    uint64_t unbalanced;     /* atomic, single writer: end with nothing open */
    uint64_t exit_tick;      /* when the thread exited (valid once `exited` is seen) */
    vor_open_scope open[VOR_MAX_DEPTH];
    /* Owner only: open_at[d + 1] says where the scope at depth d began: the stack position
     * (scope_hot.h: larger is deeper, 0 unknown) and, for an entry hook's, the function
     * (NULL for the macros'); open_at[0] stays {0, NULL}. */
    struct {
        uintptr_t pos;
        const void *fn;
    } open_at[VOR_MAX_DEPTH + 1];
    /* Owner only: open_call_site[d + 1] is the call site an entry hook gave for the scope at
     * depth d (scopes of the macros leave it stale: only function sites read it). */
    const void *open_call_site[VOR_MAX_DEPTH + 1];

    /* Written by the frame thread only (the consumer), on its own cache line. */
    _Alignas(64) uint64_t tail; /* events consumed; atomic */
    vor_chunk *read_chunk;      /* the chunk holding index read_base.. read_base + chunk */
    uint64_t read_base;
    uint64_t dropped_full_seen;
    uint64_t dropped_deep_seen;
    uint64_t filtered_seen;
    uint64_t unbalanced_seen;
    /* Its open scopes at the frame's end being assembled (frame_threads.c). */
    vor_site *snap_site[VOR_MAX_DEPTH];
    uint64_t snap_start[VOR_MAX_DEPTH];
    /* The starts of its scopes open at earlier frames' ends and the ns they were given: a
     * tick maps to the same ns every time, so a scope open for longer than the timeline's
     * history keeps the ns it was first given. */
    uint32_t seen_valid; /* 0: nothing below is from this session */
    uint64_t seen_start[VOR_MAX_DEPTH];
    int64_t seen_start_ns[VOR_MAX_DEPTH];

    /* Registry fields, under the registry lock except where noted. */
    uint32_t slot;
    uint32_t thread_id;      /* stable for the process, never reused */
    uint64_t os_tid;
    int exited;              /* atomic: set by the thread's exit destructor */
    uint32_t open_at_exit;   /* valid once `exited` is seen */
    uint32_t name_version;   /* bumped on each rename */
    char name[VOR_THREAD_NAME_BYTES];
} vor_thread;

/* The calling thread's buffer (NULL until its first scope). */
extern VOR_HIDDEN VOR_TLS_FAST vor_thread *vor_tls_thread;

/* Creates and registers the calling thread's buffer; NULL if it cannot record (too
 * many threads, out of memory: reported once, and the thread is not asked again). */
VOR_HIDDEN vor_thread *vor_thread_attach(void);

/* Slots of the registry: the frame thread iterates them. Entries may be NULL. */
VOR_HIDDEN uint32_t vor_thread_slot_count(void);
VOR_HIDDEN vor_thread *vor_thread_slot(uint32_t slot);
/* Frees a thread that exited and was drained. Frame thread only. */
VOR_HIDDEN void vor_thread_release(vor_thread *t);
/* Copies a thread's name and version under the registry lock. */
VOR_HIDDEN uint32_t vor_thread_copy_name(const vor_thread *t, char *out, size_t cap);
/* Looks a name up by thread id (live threads and the recently exited). */
VOR_HIDDEN int vor_thread_name_by_id(uint32_t thread_id, char *out, size_t cap, uint64_t *os_tid);
/* Number of threads that registered since the process started. */
VOR_HIDDEN uint32_t vor_threads_registered(void);

/* The ring (thread_ring.c). */
/* Sets up an empty ring of one chunk; 0 if out of memory. */
VOR_HIDDEN int vor_ring_init(vor_thread *t);
/* Frees every chunk (the thread exited and was drained). */
VOR_HIDDEN void vor_ring_free(vor_thread *t);
/* Producer, when head reached fast_limit: 1 if an event at depth `depth` fits while the
 * ring keeps room for its `depth` open ancestors (adding a chunk if the bound allows,
 * moving to the next chunk); 0: no room, the event is dropped. */
VOR_HIDDEN int vor_ring_make_room(vor_thread *t, uint32_t depth);
/* Consumer: reads events in index order from the thread's read position. */
typedef struct vor_ring_cursor {
    vor_chunk *chunk;
    uint64_t base;
} vor_ring_cursor;
VOR_HIDDEN vor_ring_cursor vor_ring_reader(vor_thread *t);
/* Moves the cursor forward to the chunk holding `index`. */
VOR_HIDDEN void vor_ring_cross(vor_ring_cursor *c, uint64_t index);
/* The event at `index` (>= the cursor's, below a head read with acquire); moves forward.
 * Inline: the frame thread reads every event through it. */
static inline const vor_event *vor_ring_peek(vor_ring_cursor *c, uint64_t index) {
    if (VOR_UNLIKELY(index - c->base >= VOR_RING_CHUNK_EVENTS)) vor_ring_cross(c, index);
    return &c->chunk->events[index - c->base];
}
/* The first index in [tail, head) whose event ended after `tick` (events are in end
 * order), head if none. */
VOR_HIDDEN uint64_t vor_ring_ended_by(vor_thread *t, uint64_t head, uint64_t tick);
/* Marks events up to `tail` read (their slots go back to the producer). */
VOR_HIDDEN void vor_ring_consume(vor_thread *t, uint64_t tail);

/* The producer's position, saved and restored around calibration batches. */
typedef struct vor_producer_state {
    uint64_t head, fast_limit, chunk_end, chunk_base, dropped_full, dropped_deep, filtered;
    vor_event *chunk_events;
    vor_chunk *chunk;
    uint32_t depth;
} vor_producer_state;
VOR_HIDDEN void vor_producer_save(const vor_thread *t, vor_producer_state *out);
VOR_HIDDEN void vor_producer_restore(vor_thread *t, const vor_producer_state *in);

/* vor_scope_begin without its checks (collecting, NULL). */
VOR_HIDDEN int vor_scope_begin_unchecked(vor_site *site);
/* __cyg_profile_func_enter without its collecting test: calibration times the hooks. */
VOR_HIDDEN VOR_NO_INSTRUMENT void vor_function_enter_unchecked(void *fn, void *call_site);

/* Scopes refused because their thread could not get a buffer (atomic). */
extern VOR_HIDDEN uint64_t vor_refused_scopes;

/* ---- Capacities and filter from the environment (scope_limits.c) ---------------------- */

/* The bound of each thread's ring in this session (events, a power of two): the setting,
 * or VOR_THREAD_SCOPES. Read by producers when they need a chunk. */
extern VOR_HIDDEN uint32_t vor_thread_scopes_bound;
/* Scopes shorter than this many ticks are not recorded (VOR_MIN_DURATION_NS); 0 = all. */
extern VOR_HIDDEN uint64_t vor_min_duration_ticks;
/* Reads VOR_THREAD_SCOPES and VOR_MIN_DURATION_NS (session start, frame lock held). */
VOR_HIDDEN void vor_scope_limits_from_environment(void);
/* Back to the settings' values, no filter (session start and end). */
VOR_HIDDEN void vor_scope_limits_reset(void);

/* ---- Sites (sites.c) ------------------------------------------------------------------ */

/* Gives `site` an id if it has none (frame thread only). 0 if the table is full. */
VOR_HIDDEN uint32_t vor_site_register(vor_site *site);

/* -finstrument-functions: the site for a function address (lock-free, any thread). */
VOR_HIDDEN vor_site *vor_function_site(void *fn);
/* 1 for the shared site of functions beyond the table (any function's exit matches it). */
VOR_HIDDEN int vor_function_site_is_unknown(const vor_site *site);
/* The function address of a function site; NULL for any other site. */
VOR_HIDDEN void *vor_function_site_address(const vor_site *site);

/* ---- Columns and metrics (columns.c) ------------------------------------------------ */

typedef struct vor_column {
    const char *name;
    const char *unit;       /* "" when none */
    int is_system;
    double scale;           /* system columns: value = raw * scale; user columns: 1 */
    uint32_t unit_version;  /* bumped when a unit is registered after creation */
} vor_column;

typedef struct vor_user_value {
    uint32_t column_id;
    uint32_t reserved;
    double value;
} vor_user_value;

/* Declares the platform's system columns (ids 0..n-1); returns n. Once per session. */
VOR_HIDDEN uint32_t vor_columns_begin_session(void);
VOR_HIDDEN void vor_columns_end_session(void);
/* A stable copy of column `id` (name/unit pointers live for the session). */
VOR_HIDDEN int vor_column_read(uint32_t id, vor_column *out);
/* The latest value of every user metric set so far, in id order; returns how many. */
VOR_HIDDEN uint32_t vor_columns_snapshot_user(vor_user_value *out, uint32_t cap);
/* Takes the I/O totals accumulated since the last call. */
VOR_HIDDEN void vor_io_drain(uint64_t *ns, uint64_t *bytes);

/* ---- System metrics (system_metrics_<platform>.c) ----------------------------------- */

typedef struct vor_system_column_def {
    const char *name;
    const char *unit;
    double scale;   /* from the raw integer to the unit */
    int delta;      /* captures store the change from the previous frame (slowly moving
                       levels such as memory) rather than the value (per-frame amounts) */
} vor_system_column_def;

/* The platform's system columns, frame_ms first. */
VOR_HIDDEN const vor_system_column_def *vor_system_columns(uint32_t *count);

enum { VOR_SYSTEM_FRAME = 0 }; /* frame_ms is always column 0 */

/* Samples the system columns into raw[] (by index in vor_system_columns) and returns
 * a mask of the ones present. `frame_ns`, `io_ns`, `io_bytes` are supplied by the
 * frame assembly. Called once per frame by the frame thread. */
VOR_HIDDEN uint32_t vor_system_sample(int64_t *raw, int64_t frame_ns, uint64_t io_ns, uint64_t io_bytes);
VOR_HIDDEN void vor_system_begin_session(void);
VOR_HIDDEN void vor_system_end_session(void);

/* ---- Frame records and consumers (frame.c, consumers.c) ----------------------------- */

/* A scope in a frame record: the reader's layout, so that a live record and a decoded
 * capture frame are one shape for every consumer (frame_view.c relies on it). `parent`
 * and `flags` follow docs/FORMAT.md §4.5: index in the thread's scopes (ended, then open). */
typedef vor_reader_scope vor_scope_record;

typedef struct vor_thread_record {
    uint32_t thread_id;
    uint32_t n_scopes;              /* ended in the frame, in end order: children before parent */
    const vor_scope_record *scopes; /* n_scopes ended ones, then n_open open ones (outermost first) */
    uint32_t n_open;                /* scopes still open at the frame's end */
} vor_thread_record;

typedef struct vor_frame_record {
    uint64_t index;
    int64_t start_ns;    /* since the session epoch */
    int64_t duration_ns;
    int64_t overhead_ns; /* the profiler's own cost attributed to this frame */
    uint32_t n_system;
    uint32_t system_present; /* bit i: system column i has a value */
    int64_t system_raw[VOR_SYSTEM_COLUMNS_MAX];
    uint32_t n_user;
    const vor_user_value *user;
    uint32_t n_threads;
    const vor_thread_record *threads;
    uint64_t n_scopes;         /* ended scopes over all threads (open ones not included) */
    uint64_t dropped_scopes;   /* dropped during this frame, all causes but VOR_DROP_FILTERED */
    uint32_t n_drops;          /* the same by cause and thread */
    const vor_reader_drop *drops;
} vor_frame_record;

/* Something that receives every frame record. All callbacks run on the frame thread
 * with the frame lock held: they must not call back into vor_frame_mark. */
typedef struct vor_consumer {
    const char *name;
    void *state;
    /* Returns 0 on success; nonzero closes the consumer (reported once). */
    int (*frame)(void *state, const vor_frame_record *record);
    void (*flush)(void *state);
    void (*close)(void *state); /* also frees `state` */
} vor_consumer;

#define VOR_MAX_CONSUMERS 8

/* Adds a consumer for the running session; returns 0 if the list is full. */
VOR_HIDDEN int vor_consumers_add(const vor_consumer *consumer);
VOR_HIDDEN void vor_consumers_frame(const vor_frame_record *record);
VOR_HIDDEN void vor_consumers_flush(void);
VOR_HIDDEN void vor_consumers_close_all(void);
/* After fork(), in the child: drops every consumer without a callback (no byte written). */
VOR_HIDDEN void vor_consumers_forget_all(void);

/* Opens the outputs the environment asks for (VOR_RECORD, VOR_TRACE, ...); returns the
 * number of files it opened. */
VOR_HIDDEN int vor_outputs_open_from_environment(void);

/* ---- Session state (session_state.c: a leaf every runtime file may read; session.c,
 * the top of the core, writes it) ------------------------------------------------------- */

typedef struct vor_session {
    int active;
    uint64_t epoch_ns;       /* monotonic ns at session start; records count from here */
    uint64_t epoch_tick;
    int64_t wall_epoch_ns;   /* CLOCK_REALTIME at the same instant (for file headers) */
} vor_session;

extern VOR_HIDDEN vor_session vor_session_now;
/* Set once the process is exiting (the atexit hook ran): no new session may start. */
extern VOR_HIDDEN int vor_session_exiting;
/* Set in a child process after fork(): its sessions open no file outputs (they are the
 * parent's). */
extern VOR_HIDDEN int vor_session_forked;
/* The frame lock: frame assembly, flush and shutdown are serialised by it. Take it with
 * vor_frame_lock_acquire(), which returns 0 (and takes nothing) when the calling thread
 * already holds it: a logger or consumer calling back into vor must not deadlock. */
extern VOR_HIDDEN vor_mutex vor_frame_lock;
VOR_HIDDEN int vor_frame_lock_acquire(void);
VOR_HIDDEN void vor_frame_lock_release(void);
VOR_HIDDEN int vor_frame_lock_held_here(void);

/* Frame assembly state (frame.c). */
VOR_HIDDEN int vor_frames_begin_session(void);
VOR_HIDDEN void vor_frames_end_session(void);
VOR_HIDDEN void vor_frames_restart(void); /* resuming after vor_disable */


/* ---- Clock facts for outputs (clock.c) ------------------------------------------------- */

typedef struct vor_clock_info {
    uint64_t resolution_ns;    /* smallest step of the tick source, measured at session start */
    const char *source;        /* "tsc", "monotonic", "performance.now", "fake" */
    int cross_origin_isolated; /* browser: 1 or 0; -1 elsewhere */
} vor_clock_info;

VOR_HIDDEN void vor_clock_get_info(vor_clock_info *out);

/* ---- Modules of -finstrument-functions sites (sites.c and its symbol reader) ---------- */

typedef struct vor_module_info {
    uint32_t id;            /* 1 .. vor_module_count() */
    const char *path;
    const char *build_id;   /* lowercase hex; "" when none */
    uint64_t load_address;
} vor_module_info;

/* Modules that function sites were found in so far (frame thread). */
VOR_HIDDEN uint32_t vor_module_count(void);
VOR_HIDDEN int vor_module_get(uint32_t id, vor_module_info *out);
/* For a function site: its module and offset; returns 0 for any other site. */
VOR_HIDDEN int vor_site_module_address(const vor_site *site, uint32_t *module_id, uint64_t *address);

/* ---- Process facts for file headers (one name for a process in every output) ---------- */

VOR_HIDDEN const char *vor_process_name(void);
/* "vor VERSION PLATFORM": the producer of this process's captures. */
VOR_HIDDEN const char *vor_producer_name(void);

/* ---- Calibration (calibrate.c) -------------------------------------------------------- */

/* The measured empty-scope cost, 0 if never measured; the frame lock must be held. */
VOR_HIDDEN double vor_empty_span_ns_locked(void);
/* What one empty child scope adds to its parent's self time: the empty span minus the
 * child's own measured span (calibrate.c); 0 if never measured. The frame lock must be held. */
VOR_HIDDEN double vor_scope_self_cost_ns_locked(void);
/* The same for one -finstrument-functions call (enter + exit hooks); 0 if never measured. */
VOR_HIDDEN double vor_function_span_ns_locked(void);

/* ---- Frame statistics (frame_stats.c) -------------------------------------------------- */

VOR_HIDDEN void vor_frame_stats_add(uint64_t ns);

/* ---- Frame ring and frame views (frame_ring.c, frame_view.c) ----------------------- */

/* Encodes `record` as a frame view (layout in docs/FORMAT.md) into out (cap bytes);
 * returns the size needed (nothing written if it exceeds cap). */
/* Presents a live frame record as a reader frame (values scaled into `values`, which
 * needs n_system + n_user entries; thread entries into `threads`; scopes shared). */
VOR_HIDDEN void vor_frame_record_view(const vor_frame_record *record, vor_reader_frame *out, vor_reader_value *values,
                                      vor_reader_thread_scopes *threads);
VOR_HIDDEN size_t vor_frame_view_size(const vor_reader_frame *frame, int with_scopes);
/* Writes exactly vor_frame_view_size(frame, with_scopes) bytes to out. */
VOR_HIDDEN void vor_frame_view_encode(const vor_reader_frame *frame, int with_scopes, uint8_t *out);
VOR_HIDDEN void vor_frame_ring_begin_session(void);
VOR_HIDDEN void vor_frame_ring_end_session(void);

#endif /* VOR_INTERNAL_H */
