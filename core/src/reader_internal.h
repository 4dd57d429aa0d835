/* reader_internal.h: the reader's state, shared by reader.c (input, framing, LZ4,
 * header) and record_decoder.c (the contents of one decoded record). */
#ifndef VOR_READER_INTERNAL_H
#define VOR_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vor/reader.h"

#define READER_MAX_SYSTEM_COLUMNS 64u

typedef struct reader_thread_slot {
    int used;
    vor_reader_thread thread;
} reader_thread_slot;

struct vor_reader {
    /* Input: a file read through a window, or fed bytes kept in the same window. */
    int fd;
    int is_memory;
    char name[512];          /* the path, or "(stream)" */
    uint8_t *window;         /* input bytes [window_offset, window_offset + window_size) */
    size_t window_size, window_capacity;
    uint64_t window_offset;
    uint64_t offset;         /* consumed: header and complete records */

    int state;               /* 0 header pending, 1 reading records, -1 error */
    int finished;            /* an end record was read */
    char error[1200];

    vor_reader_info info;
    char *producer, *process;

    /* Declarations. */
    vor_reader_column *columns; /* indexed by id; name NULL when not declared */
    uint32_t column_count, column_capacity;
    uint32_t system_count;
    uint8_t system_encoding[READER_MAX_SYSTEM_COLUMNS];
    double system_scale[READER_MAX_SYSTEM_COLUMNS];
    vor_reader_site *sites;     /* indexed by id */
    uint32_t site_count, site_capacity;
    reader_thread_slot *threads; /* open addressing by thread id */
    uint32_t thread_capacity, thread_count;

    /* Values of the previous frame that the next one is encoded against. */
    int started;
    uint64_t prev_index;
    int64_t prev_start, prev_duration;
    int64_t prev_system[READER_MAX_SYSTEM_COLUMNS];
    uint32_t prev_present;
    double *prev_user; /* indexed by column id, column_capacity entries */

    /* Decoded records, back to back: the LZ4 dictionary of the next block. */
    uint8_t *history;
    size_t history_capacity, history_used;

    /* The frame handed out. */
    vor_reader_value *values;
    uint32_t values_capacity;
    vor_reader_thread_scopes *frame_threads;
    uint32_t frame_threads_capacity;
    vor_reader_scope *scopes;
    uint64_t scopes_capacity;
};

/* Sets the error state with a message naming the input and the byte offset. */
void vor_reader_fail(vor_reader *r, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Decodes one decoded record (kind byte first) into *frame. Returns VOR_READ_FRAME,
 * VOR_READ_NOTHING_YET for a record that holds no frame (end of capture, or a kind this
 * reader does not know and skips), or VOR_READ_ERROR (after vor_reader_fail). */
vor_read_status vor_decode_record(vor_reader *r, const uint8_t *p, size_t n, uint64_t at, vor_reader_frame *frame);

/* Copies n bytes into a new NUL-terminated string; NULL when out of memory. */
char *vor_reader_strdup(const uint8_t *s, size_t n);

#endif /* VOR_READER_INTERNAL_H */
