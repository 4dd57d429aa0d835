/* vor.h: the instrumentation API of vor, an instrumentation profiler for C and C++
 * whose one core runs natively and in the browser (WebAssembly, Emscripten).
 *
 * Quick start
 *
 *     #include <vor/vor.h>
 *
 *     static void update(void) {
 *         VOR_FUNCTION();                 // a scope named "update", ended at block exit
 *         { VOR_SCOPE("physics"); step(); }
 *     }
 *
 *     int main(void) {
 *         vor_enable();                   // collection is off until this call
 *         for (;;) {
 *             update();
 *             vor_record_metric("loss", loss);
 *             vor_frame_mark();           // closes one frame: scopes + metrics become one record
 *         }
 *         vor_shutdown();                 // flushes every consumer (capture file, trace, ...)
 *     }
 *
 * Model
 *   - A *site* is one place in the code that opens scopes: a static record holding the
 *     name, function, file and line, declared once by the macros. The hot path passes a
 *     pointer to it; no string is copied while measuring.
 *   - Each thread writes the scopes it ends into its own bounded buffer: no locks, no
 *     allocation per scope. A full buffer drops inner scopes before outer ones and counts
 *     the drops; every frame record says what was dropped, why and on which thread.
 *   - vor_frame_mark(), called by one thread (the frame thread), closes the current
 *     frame: it drains every thread's buffer, samples the system metrics (frame_ms,
 *     memory_mb, io_ms, io_MB, cpu_ms natively), snapshots the user metrics and hands one
 *     frame record to every enabled consumer: the .vor capture writer (VOR_RECORD), the
 *     Chrome trace writer (VOR_TRACE), the browser's DevTools (wasm), the in-process ring.
 *   - Every metric is a column: a name, a unit and a stable id.
 *
 * Costs: with collection off a scope costs one load and one predictable branch. With it
 * on, a scope costs two clock reads (the CPU's time-stamp counter where it is invariant)
 * and a few stores. vor_empty_span_ns() reports the measured figure.
 *
 * Errors: nothing here aborts or blocks the program being measured. Misuse (NULL names,
 * unbalanced ends, full buffers, too many threads or columns) is dropped, counted and
 * reported once through the logger (see vor_desc.logger and vor_log_count()).
 *
 * Compile-time switch: define VOR_DISABLE before including this header (or with -D) and
 * the scope macros compile to nothing; the functions stay declared and linkable.
 *
 * The header compiles as C99, C11 and C++. Scope macros in C rely on the cleanup
 * attribute (GCC, Clang, Emscripten); other C compilers use vor_scope_begin/vor_scope_end.
 */
#ifndef VOR_VOR_H
#define VOR_VOR_H

#include <stddef.h>
#include <stdint.h>

/* ---- Version ------------------------------------------------------------------------ */

#define VOR_VERSION_MAJOR 0 /* changes that break source, ABI or the capture format */
#define VOR_VERSION_MINOR 1 /* additions that keep existing code and captures working */
#define VOR_VERSION_PATCH 0 /* fixes only */
/* One comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define VOR_VERSION_NUMBER (VOR_VERSION_MAJOR * 10000 + VOR_VERSION_MINOR * 100 + VOR_VERSION_PATCH)
#define VOR_VERSION_STRING "0.1.0"

#if defined(_WIN32) && defined(VOR_SHARED_BUILD)
#define VOR_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define VOR_API __attribute__((visibility("default")))
#else
#define VOR_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked at run time (VOR_VERSION_NUMBER of its build). */
VOR_API unsigned vor_version_number(void);
/* The same as a string, e.g. "0.1.0". Never NULL. */
VOR_API const char *vor_version_string(void);

/* ---- Log items ---------------------------------------------------------------------- */

/* Everything vor can complain about, one X(ID, level, text) per item. Each item is
 * reported once per session through the logger; vor_log_count() counts every occurrence.
 * The exception is BAD_ENVIRONMENT: each bad setting read when a session starts is
 * reported (they are few, and each names a different variable). */
#define VOR_LOG_ITEMS(X)                                                                                 \
    X(NAME_NULL, WARNING, "a NULL name was passed; the call was ignored")                              \
    X(NAME_TOO_LONG, WARNING,                                                                          \
      "a name longer than 255 bytes (63 for a thread name) was cut at a character boundary")           \
    X(VALUE_NOT_FINITE, INFO, "a metric value was NaN or infinite; it is recorded as given")           \
    X(THREAD_BUFFER_FULL, WARNING,                                                                     \
      "a thread ended more scopes between two frame marks than its buffer holds; inner scopes were "   \
      "dropped first (raise VOR_THREAD_SCOPES or mark frames more often)")                             \
    X(FRAME_RECORD_FULL, WARNING,                                                                      \
      "a frame held more scopes than vor_desc.max_frame_scopes; each thread kept its share, outer "    \
      "scopes first, and the rest was dropped")                                                        \
    X(DEPTH_OVERFLOW, WARNING, "scopes nested deeper than VOR_MAX_DEPTH were dropped")                 \
    X(UNBALANCED_END, WARNING, "vor_scope_end() was called with no open scope on its thread; ignored") \
    X(OPEN_AT_THREAD_EXIT, WARNING,                                                                    \
      "a thread exited with open scopes; they end at its exit, flagged unwound")                       \
    X(TOO_MANY_THREADS, WARNING,                                                                       \
      "more threads than vor_desc.max_threads opened scopes; the others are not recorded")             \
    X(TOO_MANY_COLUMNS, WARNING,                                                                       \
      "more user metrics than VOR_MAX_USER_COLUMNS were named; the others are ignored")                \
    X(TOO_MANY_SITES, WARNING, "more scope sites than VOR_MAX_SITES; the others are dropped")          \
    X(FRAME_MARK_OTHER_THREAD, WARNING,                                                                \
      "vor_frame_mark() was called from a thread other than the (running) frame thread; ignored")      \
    X(SETUP_TOO_LATE, WARNING, "vor_setup() was called while a session is running; it was ignored")    \
    X(BAD_SETTING, WARNING, "a setting was out of range; the nearest allowed value is used")           \
    X(BAD_ENVIRONMENT, WARNING, "an environment variable had a bad value; it was ignored")             \
    X(OUT_OF_MEMORY, ERROR, "an allocation failed; the data it was for was dropped")                   \
    X(CLOCK_FALLBACK, INFO, "the CPU time-stamp counter is not usable; timing uses the OS clock")      \
    X(CONSUMER_FAILED, ERROR, "an output (capture, trace, panel) failed; it was closed or the frame skipped") \
    X(SYMBOLS_UNAVAILABLE, INFO,                                                                       \
      "a module's symbol table could not be read (stripped, unreadable, or replaced since it was "     \
      "loaded); functions it does not export are named module+0xoffset (captures keep the module's "   \
      "build id and each function's offset)")                                                          \
    X(GPU_UNAVAILABLE, INFO,                                                                           \
      "no GPU values: the NVIDIA driver's NVML library (libnvidia-ml.so.1) is there but cannot be used") \
    X(GPU_LEFT_OUT, INFO, "some GPUs or GPU readings have no columns")                                 \
    X(GPU_READ_FAILED, WARNING,                                                                        \
      "an NVML reading failed; that GPU value is absent from the frames while it fails") \
    X(UPLOAD_DROPPED, WARNING, "frames were left out of the live upload (VOR_UPLOAD): its buffer was full") \
    X(UPLOAD_PROBLEM, WARNING, "the live upload (VOR_UPLOAD) could not reach or was refused by the store")

typedef enum vor_log_item {
#define VOR_LOG_ENUM_(id, level, text) VOR_LOG_##id,
    VOR_LOG_ITEMS(VOR_LOG_ENUM_)
#undef VOR_LOG_ENUM_
        VOR_LOG_ITEM_COUNT
} vor_log_item;

typedef enum vor_log_level { VOR_LOG_LEVEL_ERROR = 0, VOR_LOG_LEVEL_WARNING = 1, VOR_LOG_LEVEL_INFO = 2 } vor_log_level;

/* A logger receives each item the first time it occurs in a session. `message` is the
 * item's text, possibly followed by details (a path, a value), without a newline. It is
 * called on the thread that triggered the item, never twice at once, and never while vor
 * holds a lock: an item raised inside a vor call that holds one (vor_frame_mark, say) is
 * reported when the call has done its work, just before it returns. So it may call any
 * vor function and may exit(): a normal exit finishes every output. Items the logger
 * itself triggers are counted, and reported at their next occurrence outside it. */
typedef struct vor_logger {
    void (*func)(void *user_data, vor_log_level level, vor_log_item item, const char *message);
    void *user_data;
} vor_logger;

/* How many times `item` occurred since the session began (0 for an unknown item). */
VOR_API uint64_t vor_log_count(vor_log_item item);

/* ---- Settings ----------------------------------------------------------------------- */

/* Fixed capacities (compile-time): */
#define VOR_MAX_DEPTH 256             /* open scopes per thread; deeper ones are dropped */
#define VOR_MAX_NAME_BYTES 255        /* longer names are cut at a character boundary */
#define VOR_MAX_THREAD_NAME_BYTES 63  /* the same for thread names */
#define VOR_MAX_USER_COLUMNS 256      /* user metrics per session */
#define VOR_MAX_SITES 65536           /* distinct scope sites per process */

/* Optional settings for vor_setup(). Zero in any field means its default. */
typedef struct vor_desc {
    uint32_t thread_buffer_scopes; /* bound of a thread's buffer: scopes it can end between
                                      two frame marks (at least this minus 1023); default
                                      65536 (2 MiB), 1024 .. 16777216, rounded up to a power
                                      of two. A buffer starts at 1024 scopes (32 KiB) and
                                      grows in such chunks up to it when the thread needs
                                      room. VOR_THREAD_SCOPES overrides it. */
    uint32_t max_threads;          /* threads that can record at once; default 64, at most 1024.
                                      Buffers of threads that exited wait for the next frame
                                      mark: up to max_threads more of them */
    uint32_t max_frame_scopes;     /* scopes one frame record holds (all threads);
                                      default 262144, at most 16777216 */
    uint32_t frame_ring_frames;    /* frames kept by the in-process ring; default 0 (no ring
                                      unless vor_frame_ring_enable() or the browser panel asks) */
    vor_logger logger;             /* default: one line per item on stderr */
} vor_desc;

/* Applies settings for the next session. Optional; call it before vor_enable().
 * Returns 1 if applied, 0 if a session is running (the call is ignored and reported).
 * Out-of-range values are clamped and reported. Not thread-safe with vor_enable(). */
VOR_API int vor_setup(const vor_desc *desc);

/* ---- Collection --------------------------------------------------------------------- */

/* Starts collection. The first call starts a session: it reads VOR_RECORD, VOR_TRACE and
 * their companions from the environment, opens those outputs, calibrates the clock and
 * starts frame 0. It also reads VOR_THREAD_SCOPES (overrides thread_buffer_scopes) and
 * VOR_MIN_DURATION_NS=N: scopes shorter than N ns are not recorded (their parents are
 * longer, so none loses its parent), and each frame record counts them per thread as
 * VOR_DROP_FILTERED (not in dropped_scopes). A bad value is reported and ignored.
 * A call after vor_disable() resumes the session with a new frame. Thread-safe; cheap
 * when already enabled. */
VOR_API void vor_enable(void);

/* Stops collection: scopes begun from now on are not recorded, vor_frame_mark() does
 * nothing. Scopes that end while collection is off are not recorded either (no frame holds
 * that time); a scope that began before the pause and ends after it is recorded with its
 * true start: the frames before and after the pause list it as open, and it ends in the
 * frame where it ends, so the scopes inside it always have their parent. vor_enable()
 * resumes with a new frame. Thread-safe. */
VOR_API void vor_disable(void);

/* 1 while collecting, else 0. Thread-safe. */
VOR_API int vor_is_enabled(void);

/* Closes the current frame and opens the next (see the model above). The first thread
 * to call it in a session becomes the frame thread; calls from any other thread are
 * ignored, counted and reported once (VOR_LOG_FRAME_MARK_OTHER_THREAD) while the frame
 * thread runs. When the frame thread exits, the next thread that calls vor_frame_mark()
 * becomes the frame thread. Does nothing while collection is off.
 * Each frame record lists, per thread, the scopes that ended in the frame and those still
 * open at its end (so every scope's parent is in the record); a scope left open by a thread
 * that exited ends at the thread's exit, flagged unwound. Times come from one monotone map
 * of the tick counter to CLOCK_MONOTONIC ns (rate from a baseline of seconds, offset slewed
 * by at most 0.1%): frames are contiguous and scopes nest across frames.
 * Cost: about a microsecond plus a few nanoseconds per scope, plus whatever the enabled
 * outputs do. */
VOR_API void vor_frame_mark(void);

/* Makes every output write what it has (the capture file and trace reach the OS).
 * Thread-safe (serialised with vor_frame_mark). */
VOR_API void vor_flush_recording(void);

/* Ends the session: closes the current frame's outputs properly (a valid trace JSON, a
 * complete capture), releases memory and turns collection off. vor_enable() may start a
 * new session afterwards. Call it from the frame thread or after other threads stopped
 * recording; scopes they end meanwhile are dropped. */
VOR_API void vor_shutdown(void);

/* ---- Scopes ------------------------------------------------------------------------- */

/* A scope site: one per place in the code, with static storage. The macros declare it;
 * write one yourself for the explicit form. `id` belongs to vor (0 until first seen). */
typedef struct vor_site {
    const char *name;     /* shown in every output; must outlive the session */
    const char *function; /* may be NULL */
    const char *file;     /* may be NULL */
    uint32_t line;
    uint32_t id;          /* assigned by vor; leave it 0 */
} vor_site;

/* Initialiser for a static vor_site inside a function (it records __func__). At file
 * scope write the fields: {"name", NULL, __FILE__, __LINE__, 0}. */
#define VOR_SITE_INIT(name_literal) {(name_literal), __func__, __FILE__, (uint32_t)__LINE__, 0u}

/* Opens a scope at `site` on the calling thread. Returns 1 if the scope is recorded,
 * 0 if not (collection off, a NULL site (reported once), or the thread cannot record).
 * Call vor_scope_end() exactly when it returned 1. Lock-free; no allocation except the
 * thread's first scope. */
VOR_API int vor_scope_begin(vor_site *site);

/* Closes the innermost open scope of the calling thread. With no open scope it does
 * nothing but count VOR_LOG_UNBALANCED_END. Lock-free, never allocates. */
VOR_API void vor_scope_end(void);

/* The pair the macros (VOR_SCOPE, VOR_FUNCTION) call: a scope that begins and ends in
 * the same function. vor_scope_enter notes where the caller's stack is, so a later enter
 * or leave finds the scopes that a longjmp (or an exception through C frames, or a
 * coroutine switch) skipped, the ones opened deeper in the stack than where it runs now,
 * and closes them, flagged unwound. It does not test the collecting flag (the macros do,
 * inline) and `site` must not be NULL. Returns `site` when the scope is recorded, NULL if
 * not; call vor_scope_leave(site) exactly when it returned `site`, from the same function.
 * Prefer the macros; the explicit pair above suits scopes that begin and end in different
 * functions (vor then never closes them itself). */
VOR_API vor_site *vor_scope_enter(vor_site *site);
VOR_API void vor_scope_leave(vor_site *site);

/* Internal: the flag the macros test inline. Use vor_is_enabled() instead. */
VOR_API extern int vor_internal_collecting;

/* The macros' helpers are inlined into the function that holds the scope, at every -O
 * level: vor_scope_enter and vor_scope_leave then both run from that function's frame,
 * which is what vor compares to find the scopes a longjmp skipped (an -O0 build that kept
 * the helpers as functions of their own would call the two from frames of different
 * sizes). Never instrumented themselves. */
#if defined(__GNUC__) || defined(__clang__)
#define VOR_MACRO_HELPER_ static inline __attribute__((always_inline, no_instrument_function))
#else
#define VOR_MACRO_HELPER_ static inline
#endif

VOR_MACRO_HELPER_ int vor_internal_is_collecting(void) {
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(&vor_internal_collecting, __ATOMIC_RELAXED);
#else
    return *(volatile int *)&vor_internal_collecting;
#endif
}

/* Opens a scope only when collecting: the one branch the disabled path costs. */
VOR_MACRO_HELPER_ int vor_scope_begin_if_enabled(vor_site *site) {
    return vor_internal_is_collecting() ? vor_scope_begin(site) : 0;
}

/* The macros' begin: the one branch the disabled path costs. */
VOR_MACRO_HELPER_ vor_site *vor_scope_enter_if_enabled(vor_site *site) {
    return vor_internal_is_collecting() ? vor_scope_enter(site) : (vor_site *)0;
}

/* Follows the macros' call of vor_scope_leave so the compiler cannot make it a tail call
 * (vor compares where it is called from with where vor_scope_enter was); no instruction. */
#if defined(__GNUC__) || defined(__clang__)
#define VOR_NOT_A_TAIL_CALL_() __asm__ volatile("")
#else
#define VOR_NOT_A_TAIL_CALL_() ((void)0)
#endif

#define VOR_CONCAT_INNER(a, b) a##b
#define VOR_CONCAT(a, b) VOR_CONCAT_INNER(a, b)
#if defined(__COUNTER__)
#define VOR_UNIQUE(prefix) VOR_CONCAT(prefix, __COUNTER__)
#else
#define VOR_UNIQUE(prefix) VOR_CONCAT(prefix, __LINE__)
#endif

/* Keeps a function out of -finstrument-functions mode (and out of vor's hooks). */
#if defined(__GNUC__) || defined(__clang__)
#define VOR_SKIP __attribute__((no_instrument_function))
#else
#define VOR_SKIP
#endif

#if defined(VOR_DISABLE)
#define VOR_SCOPE(name_literal) ((void)0)
#define VOR_FUNCTION() ((void)0)
#elif defined(__cplusplus)
} /* extern "C" */
/* C++: a guard object ends the scope in its destructor (inlined into the function that
 * holds the scope, as the C helpers are). */
#if defined(__GNUC__) || defined(__clang__)
#define VOR_GUARD_INLINE_ __attribute__((always_inline, no_instrument_function))
#else
#define VOR_GUARD_INLINE_
#endif
struct vor_scope_guard {
    vor_site *entered;
    VOR_GUARD_INLINE_ explicit vor_scope_guard(vor_site *site) : entered(vor_scope_enter_if_enabled(site)) {}
    VOR_GUARD_INLINE_ ~vor_scope_guard() {
        if (entered) {
            vor_scope_leave(entered);
            VOR_NOT_A_TAIL_CALL_();
        }
    }
    vor_scope_guard(const vor_scope_guard &) = delete;
    vor_scope_guard &operator=(const vor_scope_guard &) = delete;
};
#define VOR_SCOPE_NAMED_(name_literal, var)                                        \
    static vor_site VOR_CONCAT(var, _site) = VOR_SITE_INIT(name_literal);          \
    vor_scope_guard var(&VOR_CONCAT(var, _site))
#define VOR_SCOPE(name_literal) VOR_SCOPE_NAMED_(name_literal, VOR_UNIQUE(vor_scope_))
#define VOR_FUNCTION() VOR_SCOPE(__func__)
extern "C" {
#elif defined(__GNUC__) || defined(__clang__)
/* C: the cleanup attribute ends the scope at block exit (return, break, goto included). */
VOR_MACRO_HELPER_ void vor_scope_cleanup(vor_site **entered) {
    if (*entered) {
        vor_scope_leave(*entered);
        VOR_NOT_A_TAIL_CALL_();
    }
}
#define VOR_SCOPE_NAMED_(name_literal, var)                                        \
    static vor_site VOR_CONCAT(var, _site) = VOR_SITE_INIT(name_literal);          \
    vor_site *var __attribute__((cleanup(vor_scope_cleanup), unused)) =            \
        vor_scope_enter_if_enabled(&VOR_CONCAT(var, _site))
/* A scope named `name_literal` (a string with static storage) from here to block exit. */
#define VOR_SCOPE(name_literal) VOR_SCOPE_NAMED_(name_literal, VOR_UNIQUE(vor_scope_))
/* A scope named after the enclosing function, from here to block exit. */
#define VOR_FUNCTION() VOR_SCOPE(__func__)
#else
/* This C compiler has no cleanup attribute: VOR_SCOPE cannot end itself. Use
 * vor_scope_begin()/vor_scope_end() with a static vor_site, or compile as C++. */
#define VOR_SCOPE(name_literal) VOR_SCOPE_requires_gcc_clang_or_cplusplus
#define VOR_FUNCTION() VOR_SCOPE_requires_gcc_clang_or_cplusplus
#endif

/* ---- Metrics ------------------------------------------------------------------------ */

/* Sets the latest value of the user metric `name` (a column created on first use). Each
 * frame record holds the latest value of every user metric set so far. NaN and
 * infinities are recorded as given (a diverging loss is worth seeing). A NULL name is
 * ignored; names over VOR_MAX_NAME_BYTES are cut (at a character boundary); beyond VOR_MAX_USER_COLUMNS
 * names, new ones are ignored. All reported once. Thread-safe; takes a short lock. */
VOR_API void vor_record_metric(const char *name, double value);

/* Gives the user metric `name` a unit (e.g. "ms", "tokens/s"); call once, ideally before
 * the first value. Registering later updates the column's declaration. Thread-safe. */
VOR_API void vor_record_metric_unit(const char *name, const char *unit);

/* Adds one I/O operation to the current frame's io_ms and io_MB totals. Callable from any
 * thread at any time, lock-free (two atomic additions). Ignored while collection is off. */
VOR_API void vor_record_io(uint64_t ns, uint64_t bytes);

/* Names the calling thread in every output (e.g. "main", "loader 2"). Copied; a name over
 * VOR_MAX_THREAD_NAME_BYTES (63) is cut to at most 63 bytes at a UTF-8 character boundary
 * (reported once). Thread-safe. */
VOR_API void vor_set_thread_name(const char *name);

/* ---- Clock, memory, calibration ------------------------------------------------------ */

/* Monotonic time in nanoseconds (CLOCK_MONOTONIC natively, performance.now() in the
 * browser). Scope and frame times in every output are on this clock. */
VOR_API uint64_t vor_now_ns(void);

/* The process's current memory: resident set size natively, the JS heap in use in the
 * browser when the browser tells (else the wasm heap). 0 when unknown. */
VOR_API uint64_t vor_current_memory_bytes(void);

/* Measures the cost of one empty scope (begin + end, what its parent's duration grows
 * by): the median of 11 batches of 500 scopes (about 0.1 ms natively, a few ms in a
 * browser). Stores and returns it in nanoseconds. Records nothing. The first
 * vor_enable() of a process runs it once. */
VOR_API double vor_calibrate(void);

/* The last vor_calibrate() figure; calibrates first if it never ran. */
VOR_API double vor_empty_span_ns(void);

/* ---- Frame statistics --------------------------------------------------------------- */

/* Frame times of the session so far, from a log-linear histogram (HDR style: 128
 * sub-buckets per power of two). Every percentile is within 0.4% (1/256) of the exact
 * nearest-rank percentile of the frames recorded; min, max and mean are exact. */
typedef struct vor_frame_stats {
    uint64_t count;
    uint64_t min_ns, max_ns;
    double mean_ns;
    uint64_t p50_ns, p95_ns, p99_ns;
} vor_frame_stats;

/* Fills `out` (zeroes when no frame was closed yet). Thread-safe. */
VOR_API void vor_frame_stats_get(vor_frame_stats *out);

/* The frame time at percentile `p` (0..100) with the same error bound; 0 if no frames. */
VOR_API uint64_t vor_frame_stats_percentile_ns(double p);

/* Forgets the frames seen so far. Thread-safe. */
VOR_API void vor_frame_stats_reset(void);

/* ---- Counters ------------------------------------------------------------------------ */

/* Totals for the session, for tests and health checks. Thread-safe. */
typedef struct vor_counters {
    uint64_t frames;            /* frames closed */
    uint64_t scopes_recorded;   /* ended scopes handed to outputs (open ones not counted) */
    uint64_t scopes_dropped;    /* full buffers, full frame records, too deep, too many threads,
                                   site table full (frame records give cause and thread) */
    uint64_t unbalanced_ends;   /* vor_scope_end() with nothing open */
    uint64_t open_at_exit;      /* scopes open when their thread exited (ended at its exit) */
    uint64_t threads;           /* threads that recorded in this session */
} vor_counters;

VOR_API void vor_get_counters(vor_counters *out);

/* ---- In-process frame ring (the live panel's source) --------------------------------- */

/* Keeps the last `frames` frame records in memory as frame views (self-contained binary
 * records, layout in docs/FORMAT.md, "Frame view"). 0 turns the ring off. The memory is
 * bounded: at most VOR_FRAME_RING_MAX_BYTES in all; older frames are overwritten.
 * Returns 1 on success, 0 if the memory could not be had. Thread-safe. */
#define VOR_FRAME_RING_MAX_FRAMES 100000
#define VOR_FRAME_RING_MAX_BYTES (64u * 1024u * 1024u)
VOR_API int vor_frame_ring_enable(uint32_t frames);

/* The oldest and newest frame indices held; returns 0 (and leaves them) when empty. */
VOR_API int vor_frame_ring_range(uint64_t *oldest, uint64_t *newest);

/* Copies the frame view of frame `index` into `buffer`. Returns its size in bytes; 0 if
 * the frame is not held (never recorded or overwritten). If `capacity` is smaller than
 * the size, nothing is copied and the size is returned, so call again with more room.
 * Thread-safe. */
VOR_API size_t vor_frame_ring_copy(uint64_t index, void *buffer, size_t capacity);

/* ---- Names of what the records refer to ----------------------------------------------- */

/* A column (system or user metric). `name` and `unit` stay valid for the session. */
typedef struct vor_column_info {
    uint32_t id;
    int is_system;
    const char *name;
    const char *unit; /* "" when none */
} vor_column_info;

/* Number of columns declared so far; ids run from 0 to count-1. */
VOR_API uint32_t vor_column_count(void);
/* Fills `out` for column `id`; returns 0 if there is no such column. */
VOR_API int vor_column_get(uint32_t id, vor_column_info *out);

/* Number of scope sites seen by frame records so far; ids run from 1 to count. */
VOR_API uint32_t vor_site_count(void);
/* The site with id `id` (1-based), or NULL. For functions found by -finstrument-functions
 * the name is filled in when a frame first records them. */
VOR_API const vor_site *vor_site_get(uint32_t id);

/* Copies the name of thread `thread_id` (as in frame records) into `buffer` (always
 * NUL-terminated when capacity > 0); returns 0 if unknown. */
VOR_API int vor_thread_name(uint32_t thread_id, char *buffer, size_t capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* VOR_VOR_H */
