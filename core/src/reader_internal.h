/* reader_internal.h: the reader's state, shared by its files:
 *   reader.c          input (a file through a window, or fed bytes), the header, the loop
 *                     of vor_reader_next, 1.0 framing and its LZ4 chain;
 *   reader_scan.c     1.1 framing: checks, damage reports, resynchronisation;
 *   reader_tables.c   declarations (columns, sites, threads, modules) and their queries;
 *   record_decoder.c  the contents of one decoded record (1.0 and 1.1).
 */
#ifndef VOR_READER_INTERNAL_H
#define VOR_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vor/reader.h"

#define READER_MAX_SYSTEM_COLUMNS 64u
#define READER_PROBLEM_BYTES 120u
#define READER_MAX_CANDIDATES 16u

typedef struct reader_thread_slot {
    int used;
    vor_reader_thread thread;
} reader_thread_slot;

typedef struct reader_damage {
    uint64_t offset, length;
    char problem[READER_PROBLEM_BYTES];
} reader_damage;

/* A user column's value as the reader knows it (1.1: "unchanged" refers to it). */
typedef struct reader_user_value {
    double value;
    uint64_t known_at; /* index of the frame it was read in */
    int known;
} reader_user_value;

struct vor_reader {
    /* Input: a file read through a window, or fed bytes kept in the same window. */
    int fd;
    int is_memory;
    char name[512];  /* the path, or "(stream)" */
    uint8_t *window; /* input bytes [window_offset, window_offset + window_size) */
    size_t window_size, window_capacity;
    uint64_t window_offset;
    uint64_t offset;    /* consumed: header, complete records and skipped damage */
    uint64_t input_end; /* the end of the input as last seen */

    int state;    /* 0 header pending, 1 reading records, -1 error */
    int finished; /* an end record was read */
    char error[1200];

    vor_reader_info info;
    char *producer, *process, *clock_source;

    /* Declarations (reader_tables.c). */
    vor_reader_column *columns; /* indexed by id; name NULL when not declared */
    uint32_t column_count, column_capacity;
    uint32_t system_count;
    double system_scale[READER_MAX_SYSTEM_COLUMNS];
    uint8_t system_encoding[READER_MAX_SYSTEM_COLUMNS];
    vor_reader_site *sites; /* indexed by id */
    uint32_t site_count, site_capacity;
    reader_thread_slot *threads; /* open addressing by thread id */
    uint32_t thread_capacity, thread_count;
    vor_reader_module *modules; /* indexed by id */
    uint32_t module_count, module_capacity;

    /* Values that later records are read against. */
    int started;
    uint64_t prev_index;
    int64_t prev_start, prev_duration;              /* 1.0 */
    int64_t prev_system[READER_MAX_SYSTEM_COLUMNS]; /* 1.0 delta columns */
    uint32_t prev_present;                          /* 1.0 */
    reader_user_value *user;                        /* by column id, column_capacity entries */

    /* 1.0: decoded records back to back, the LZ4 dictionary of the next block. */
    uint8_t *history;
    size_t history_capacity, history_used;
    /* 1.1: the decoded record being read. */
    uint8_t *record;
    size_t record_capacity;

    /* 1.1 damage and resynchronisation (reader_scan.c). */
    uint64_t damage_count;
    reader_damage damage[VOR_READER_MAX_DAMAGE_REPORTS];
    int skipping;                               /* a damaged record was met; looking for the next intact one */
    uint64_t skip_from;                         /* where the damaged bytes start */
    uint64_t scan_at;                           /* positions before it were looked at and dismissed */
    uint64_t scan_for;                          /* the record position the scan state belongs to */
    uint64_t candidates[READER_MAX_CANDIDATES]; /* heads that hold, record not complete yet */
    uint32_t n_candidates;

    /* The frame handed out. */
    vor_reader_value *values;
    uint32_t values_capacity;
    vor_reader_thread_scopes *frame_threads;
    uint32_t frame_threads_capacity;
    vor_reader_scope *scopes;
    uint64_t scopes_capacity;
    uint64_t max_frame_scopes; /* 0 = the record size is the only bound */
    int skip_flame;            /* vor_reader_set_skip_flame: frames without their scopes */
    uint64_t frame_at;         /* byte offset of the record of the last frame returned */
    vor_reader_drop *drops;
    uint64_t drops_capacity;
};

/* Sets the error state with a message naming the input and the byte offset. */
void vor_reader_fail(vor_reader *r, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- Input (reader.c) ---- */

/* Makes [at, at + n) available; returns a pointer to it, or NULL if the input does not
 * have that many bytes yet (or an I/O error was recorded: r->state < 0). */
const uint8_t *vor_reader_input(vor_reader *r, uint64_t at, size_t n);
/* Bytes available from `at` (up to `want`), with a pointer to them in *p. */
size_t vor_reader_input_some(vor_reader *r, uint64_t at, size_t want, const uint8_t **p);

/* ---- 1.1 records (reader_scan.c) ---- */

typedef enum reader_record_status {
    RECORD_READ, /* a record: *body, *size, *compressed set; *next is after it */
    RECORD_WAIT, /* the input ends inside it (or inside the damage being skipped) */
    RECORD_ERROR /* r->state < 0 */
} reader_record_status;

/* Finds the record at r->offset, skipping and reporting damage on the way. */
reader_record_status vor_reader_locate_record(vor_reader *r, uint64_t *at, const uint8_t **body, uint32_t *size,
                                              int *compressed);
/* Reports the record at `at` (already located) as damaged and starts looking for the
 * next intact one from the byte after it. */
void vor_reader_damaged(vor_reader *r, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Reports the intact record at `at` (`length` bytes, head included) whose contents do
 * not decode, and goes on after it. */
void vor_reader_damaged_record(vor_reader *r, uint64_t at, uint64_t length, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---- Declarations (reader_tables.c) ---- */

int vor_reader_ensure_column(vor_reader *r, uint32_t id);
/* The column for a value: declared, or named "column N" now (1.1). 0 when out of memory. */
int vor_reader_name_undeclared_column(vor_reader *r, uint32_t id);
int vor_reader_ensure_site(vor_reader *r, uint32_t id);
int vor_reader_ensure_module(vor_reader *r, uint32_t id);
vor_reader_thread *vor_reader_thread_slot(vor_reader *r, uint32_t id, int create);
void vor_reader_tables_free(vor_reader *r);

/* ---- Decoded records (record_decoder.c) ---- */

typedef enum reader_decode_status {
    DECODE_FRAME,     /* *frame holds a frame */
    DECODE_NO_FRAME,  /* end of capture, or a record kind this reader skips */
    DECODE_MALFORMED, /* the record's contents are wrong: message in `problem` */
    DECODE_FATAL      /* out of memory: r->state < 0 */
} reader_decode_status;

reader_decode_status vor_decode_record(vor_reader *r, const uint8_t *p, size_t n, uint64_t at, vor_reader_frame *frame,
                                       char problem[READER_PROBLEM_BYTES]);

/* Copies n bytes into a new NUL-terminated string; NULL when out of memory. */
char *vor_reader_strdup(const uint8_t *s, size_t n);

#endif /* VOR_READER_INTERNAL_H */
