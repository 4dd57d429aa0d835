/* reader.h: reads .vor captures, finished or still growing.
 *
 *     char err[256];
 *     vor_reader *r = vor_reader_open("run.vor", err, sizeof err);
 *     if (!r) { fprintf(stderr, "%s\n", err); return 2; }
 *     vor_reader_frame f;
 *     vor_read_status st;
 *     while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
 *         for (uint32_t i = 0; i < f.n_values; i++) {
 *             const vor_reader_column *c = vor_reader_get_column(r, f.values[i].column_id);
 *             printf("%s = %g %s\n", c->name, f.values[i].value, c->unit);
 *         }
 *     }
 *     if (st == VOR_READ_ERROR) fprintf(stderr, "%s\n", vor_reader_error(r));
 *     vor_reader_close(r);
 *
 * vor_reader_next() returns VOR_READ_NOTHING_YET at the end of the file and also when the
 * last record is incomplete (a writer is still writing it, or crashed while writing it).
 * Calling it again later picks up records that were appended meanwhile: the same loop
 * reads a finished capture (stop at NOTHING_YET) or tails a live one (sleep and retry).
 *
 * A damaged record (format 1.1) is not an error: the reader skips it, reports it through
 * vor_reader_damage_count / vor_reader_get_damage (offset, bytes skipped, what was wrong)
 * and reads on from the next intact record, so damage costs that record only. Names whose
 * declarations were lost that way: a column with a value is given the name "column N"
 * (vor_reader_get_column never returns NULL for a column of a value); sites and threads
 * stay undeclared (NULL) and every consumer names them "site N" / "thread N". 1.0
 * captures cannot be resynchronised (each record depends on the ones before): there,
 * damage is an error, as it always was.
 *
 * A reader can also be fed bytes instead of reading a file (vor_reader_open_memory and
 * vor_reader_feed): the browser panel decodes websocket streams and dropped files this
 * way with this same code compiled to wasm.
 *
 * Safety: no input can make the reader crash, loop forever or allocate without bound.
 * Times it returns are such that start + duration never overflows int64.
 * Records are limited to VOR_READER_MAX_RECORD_BYTES, declarations to the limits below;
 * ids that are only used, never declared, size nothing. Errors (a bad header, an I/O
 * error, out of memory, any damage in a 1.0 capture) name the byte offset; after an
 * error the reader stays in the error state.
 *
 * The format is specified in docs/FORMAT.md. Not thread-safe: one reader per thread.
 */
#ifndef VOR_READER_H
#define VOR_READER_H

#include <stddef.h>
#include <stdint.h>

#include "vor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VOR_READER_MAX_RECORD_BYTES (64u * 1024u * 1024u) /* compressed or decoded */
#define VOR_READER_MAX_COLUMNS 4096u
#define VOR_READER_MAX_SITES (1u << 20)
#define VOR_READER_MAX_THREADS 65536u

/* The format version this reader writes and reads. It reads any 1.x capture (newer minor
 * versions only add things an older reader may skip) and refuses 2.0 and later. */
#define VOR_FORMAT_VERSION_MAJOR 1
#define VOR_FORMAT_VERSION_MINOR 1

typedef struct vor_reader vor_reader;

typedef enum vor_read_status {
    VOR_READ_ERROR = -1,      /* corrupt or unsupported input; see vor_reader_error() */
    VOR_READ_NOTHING_YET = 0, /* no complete record available now; call again later */
    VOR_READ_FRAME = 1        /* *frame holds the next frame */
} vor_read_status;

typedef struct vor_reader_info {
    uint32_t version_major, version_minor;
    int64_t wall_epoch_ns; /* wall clock (ns since 1970) at the capture's time 0 */
    const char *producer;  /* e.g. "vor 0.1.0 linux-x86_64" */
    const char *process;   /* program name */
    uint64_t pid;
    int flame; /* 1 if the writer was asked for flame frames */
    /* Format 1.1 and later; zero / "" / -1 in older captures. */
    uint64_t clock_resolution_ns; /* smallest step of the clock scopes were timed with; 0 = unknown */
    const char *clock_source;     /* "tsc", "monotonic", "performance.now"; "" = unknown */
    int cross_origin_isolated;    /* browser captures: 1 or 0; -1 = not a browser, or unknown */
    double scope_cost_ns;         /* calibrated time one VOR_SCOPE adds to its parent; 0 = unknown */
    double function_cost_ns;      /* the same for one -finstrument-functions call; 0 = unknown */
} vor_reader_info;

typedef struct vor_reader_column {
    uint32_t id;
    int is_system;
    const char *name;
    const char *unit; /* "" when none */
} vor_reader_column;

typedef struct vor_reader_site {
    uint32_t id;
    const char *name;
    const char *function; /* "" when unknown */
    const char *file;     /* "" when unknown */
    uint32_t line;
    uint32_t module_id; /* functions of -finstrument-functions: the module holding the code
                           (vor_reader_get_module); 0 = none or unknown */
    uint64_t address;   /* with module_id: the function's offset from the module's load address */
} vor_reader_site;

/* A loaded executable or shared object whose functions sites refer to (format 1.1). */
typedef struct vor_reader_module {
    uint32_t id; /* 1 .. */
    const char *path;
    const char *build_id; /* lowercase hex of the GNU build id; "" when it has none */
    uint64_t load_address;
} vor_reader_module;

typedef struct vor_reader_thread {
    uint32_t id;
    const char *name;
    uint64_t os_tid; /* 0 when unknown */
} vor_reader_thread;

typedef struct vor_reader_value {
    uint32_t column_id;
    double value; /* in the column's unit; NaN and infinities are possible */
} vor_reader_value;

/* Scope flags. */
/* Still open at the end of the frame (listed after the ended ones). */
#define VOR_SCOPE_OPEN 1u
/* Closed by vor: a longjmp, exception or coroutine switch skipped its end; its end is when
 * vor noticed, at the latest. */
#define VOR_SCOPE_UNWOUND 2u

/* Parent indices that are not an index. */
#define VOR_PARENT_NONE 0xFFFFFFFFu    /* depth 0: no parent */
#define VOR_PARENT_UNKNOWN 0xFFFFFFFEu /* not recorded (1.0 captures only; docs/FORMAT.md §4.5) */

typedef struct vor_reader_scope {
    uint32_t site_id;
    uint32_t depth;      /* 0 = outermost */
    int64_t start_ns;    /* since the capture's time 0 */
    int64_t duration_ns; /* open scopes: from their start to the end of the frame */
    uint32_t parent;     /* index of the parent in the same thread's scopes[] (ended and open
                            ones together), or VOR_PARENT_NONE / VOR_PARENT_UNKNOWN */
    uint32_t flags;      /* VOR_SCOPE_* */
} vor_reader_scope;

/* One thread's scopes in a frame: scopes[0 .. n_scopes) ended in the frame, in end order
 * (children before their parent); scopes[n_scopes .. n_scopes + n_open) were still open
 * at its end, outermost first (depth = position). Together they are every scope that
 * overlaps the frame, and every parent index points inside this array. */
typedef struct vor_reader_thread_scopes {
    uint32_t thread_id;
    uint32_t n_scopes;
    const vor_reader_scope *scopes;
    uint32_t n_open;
} vor_reader_thread_scopes;

/* Why scopes are missing from a frame. */
typedef enum vor_drop_cause {
    VOR_DROP_THREAD_BUFFER_FULL = 1, /* the thread's buffer was full (inner scopes go first) */
    VOR_DROP_TOO_DEEP = 2,           /* nested deeper than VOR_MAX_DEPTH */
    VOR_DROP_FRAME_FULL = 3,         /* more than max_frame_scopes in the frame (shared fairly
                                        between threads, inner scopes first) */
    VOR_DROP_THREAD_REFUSED = 4,     /* the thread got no buffer (too many threads, no memory) */
    VOR_DROP_SITE_TABLE_FULL = 5,    /* more sites than VOR_MAX_SITES */
    VOR_DROP_FILTERED = 6            /* shorter than VOR_MIN_DURATION_NS: left out on purpose,
                                        not counted in dropped_scopes */
} vor_drop_cause;

typedef struct vor_reader_drop {
    uint32_t cause;     /* vor_drop_cause */
    uint32_t thread_id; /* the thread whose scopes were lost; 0 when none applies */
    uint64_t count;
} vor_reader_drop;

/* One frame. Pointers stay valid until the next vor_reader_next() or vor_reader_close(). */
typedef struct vor_reader_frame {
    uint64_t index;
    int64_t start_ns; /* since the capture's time 0 */
    int64_t duration_ns;
    int64_t overhead_ns;     /* the profiler's own cost attributed to the frame */
    uint64_t dropped_scopes; /* all causes but VOR_DROP_FILTERED */
    uint32_t n_values;       /* system values present, then user values */
    const vor_reader_value *values;
    int has_flame; /* 1 if this frame carries scopes */
    uint32_t n_threads;
    const vor_reader_thread_scopes *threads;
    uint64_t n_scopes; /* ended scopes over all threads (open ones not included) */
    uint32_t n_drops;  /* where and why scopes were dropped (format 1.1; older: none) */
    const vor_reader_drop *drops;
} vor_reader_frame;

/* Opens a capture file for reading. Returns NULL and writes a message naming the path and
 * the problem into `err` if the file cannot be opened. A file too short to hold the
 * header is not an error (it may be a capture being created): vor_reader_next() waits. */
VOR_API vor_reader *vor_reader_open(const char *path, char *err, size_t err_capacity);

/* A reader with no file: bytes arrive through vor_reader_feed(). */
VOR_API vor_reader *vor_reader_open_memory(void);

/* Appends bytes to a memory reader. Returns 1, or 0 if they were not taken: this is not a
 * memory reader, it is in the error state, or more than VOR_READER_MAX_RECORD_BYTES +
 * 1 MiB would be waiting undecoded (read frames, then feed the rest). Bytes fed after
 * the end record was read are accepted and dropped (nothing after it is read). */
VOR_API int vor_reader_feed(vor_reader *r, const void *bytes, size_t n);

/* Bounds what one frame costs: a frame listing more than `max` scopes (ended and open, all
 * threads) is an error naming the frame ("... more than N scopes, the limit set for this
 * reader") instead of an array of 32 bytes per scope (a 64 MiB record, a few hundred KB
 * compressed, can list 16 million). 0, the default, leaves the record size as the only
 * bound. Call it before reading frames. */
VOR_API void vor_reader_set_max_frame_scopes(vor_reader *r, uint64_t max);

/* With skip != 0, frames come without their scopes (has_flame says whether they had some;
 * n_threads is 0), and a compressed record is decoded only as far as its values when
 * that is enough: reading frame times, values and declarations this way costs a fraction
 * of reading scopes. Indexes of a capture read it so. Call it before reading frames. */
VOR_API void vor_reader_set_skip_flame(vor_reader *r, int skip);

/* Reads the next frame (see the introduction). */
VOR_API vor_read_status vor_reader_next(vor_reader *r, vor_reader_frame *frame);

/* 1 once the header has been read (columns and info are known), 0 if not yet, -1 error.
 * vor_reader_next() reads the header itself; this lets a caller wait for it. */
VOR_API int vor_reader_poll_header(vor_reader *r);

/* The error message (names the file and byte offset), or "" when there is none. */
VOR_API const char *vor_reader_error(const vor_reader *r);

/* Header facts; NULL before the header was read. */
VOR_API const vor_reader_info *vor_reader_get_info(const vor_reader *r);

/* Columns declared so far (system ones from the header, user ones as records declare
 * them, "column N" for one with a value whose declarations were lost). NULL for an id
 * not declared (yet); never for the column of a value in a frame read. */
VOR_API uint32_t vor_reader_column_count(const vor_reader *r);
VOR_API const vor_reader_column *vor_reader_get_column(const vor_reader *r, uint32_t id);
/* Number of system columns (ids 0 .. n-1, declared in the header; column 0 is frame_ms). */
VOR_API uint32_t vor_reader_system_column_count(const vor_reader *r);

/* Scope sites and threads declared so far; NULL for an id never declared (name it
 * "site N" / "thread N"; docs/FORMAT.md §4.1). */
VOR_API uint32_t vor_reader_site_count(const vor_reader *r); /* highest id declared */
VOR_API const vor_reader_site *vor_reader_get_site(const vor_reader *r, uint32_t id);
VOR_API const vor_reader_thread *vor_reader_get_thread(const vor_reader *r, uint32_t id);
/* Every thread declared so far, in no particular order: start with *cursor = 0; NULL after
 * the last. */
VOR_API const vor_reader_thread *vor_reader_next_thread(const vor_reader *r, uint32_t *cursor);

/* Modules declared so far (format 1.1); NULL for an unknown id. */
VOR_API uint32_t vor_reader_module_count(const vor_reader *r); /* highest id declared */
VOR_API const vor_reader_module *vor_reader_get_module(const vor_reader *r, uint32_t id);

/* Damaged records. A record whose checks fail is skipped: the reader reports it here and
 * reads on from the next intact record (docs/FORMAT.md §3), so damage costs that record
 * only. The first VOR_READER_MAX_DAMAGE_REPORTS are kept; the count goes on. */
#define VOR_READER_MAX_DAMAGE_REPORTS 64u
typedef struct vor_reader_damage {
    uint64_t offset;     /* byte offset of the damaged record in the input */
    uint64_t length;     /* bytes skipped to reach the next intact record (or the end) */
    const char *problem; /* what was wrong, e.g. "record check mismatch" */
} vor_reader_damage;
VOR_API uint64_t vor_reader_damage_count(const vor_reader *r);
/* Fills `out` for damaged record `i` (0-based, in file order); 0 if not kept. */
VOR_API int vor_reader_get_damage(const vor_reader *r, uint32_t i, vor_reader_damage *out);

/* 1 once the capture's end record was read (the writer finished it properly). */
VOR_API int vor_reader_finished(const vor_reader *r);

/* Bytes of the input consumed: the header, complete records and damage skipped. */
VOR_API uint64_t vor_reader_offset(const vor_reader *r);

/* The byte offset in the input of the record of the last frame vor_reader_next returned
 * (0 before the first). A reader may start at such a record (format 1.1): give it the
 * capture's header, then a state record (docs/FORMAT.md §4.8), then the bytes from there. */
VOR_API uint64_t vor_reader_frame_offset(const vor_reader *r);

/* Closes the file (if any) and frees everything. NULL is fine. */
VOR_API void vor_reader_close(vor_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* VOR_READER_H */
