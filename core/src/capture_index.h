/* capture_index.h: random access to a capture (format 1.1): an index of its frame records
 * built by reading it once, and the state record (docs/FORMAT.md §4.8) that lets a reader
 * start at any indexed record. Used by `vor serve` (files) and by the panel's decoder in
 * the browser (bytes of a dropped file, fed in order).
 *
 * The index reads the capture with a reader that skips scopes (vor_reader_set_skip_flame),
 * so it costs a fraction of a full read, and keeps per entry: the record's byte offset,
 * the first frame's index and start, and the frame times of the entry's frames (minimum,
 * maximum, sum) with how many frames it covers and how many carry scopes. An entry covers
 * `stride` consecutive frames: one while the capture has at most `max_entries` frames; past
 * that, neighbouring entries merge in pairs (stride doubles), so memory stays within
 * max_entries entries (44 bytes each; the arrays grow as needed) whatever the capture's length, and the maximum of
 * every frame time survives in its entry (a spike is never lost, only located less
 * finely; the frames themselves are read from the file).
 *
 * Values: a 1.1 record may say a user value is "unchanged", which refers to earlier
 * records; so every SNAPSHOT_EVERY frames the index keeps the user values a reader knows
 * at that point (a snapshot), within a budget (the interval doubles when it is reached).
 * The state for entry e is computed by a reader that takes that snapshot and reads the
 * records from it up to e (at most a snapshot interval of records, without their scopes).
 * Declarations in the state are everything the index read: the newest of each id.
 */
#ifndef VOR_CAPTURE_INDEX_H
#define VOR_CAPTURE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "platform.h"
#include "vor/reader.h"

#define VOR_INDEX_DEFAULT_MAX_ENTRIES (1u << 20)
#define VOR_INDEX_MIN_MAX_ENTRIES 64u
#define VOR_INDEX_SNAPSHOT_EVERY 256u
#define VOR_INDEX_SNAPSHOT_BUDGET_BYTES (16u << 20)

typedef struct vor_capture_index vor_capture_index;

/* The entries, as parallel arrays of `count` elements (valid until the next step). */
typedef struct vor_index_entries {
    uint32_t count;
    uint32_t stride;            /* frames per entry (the last one may have fewer) */
    const uint64_t *offset;     /* byte offset of the entry's first frame record */
    const uint64_t *index;      /* frame index of its first frame */
    const int64_t *start_ns;    /* start of its first frame */
    const float *min_ns, *max_ns, *sum_ns; /* frame times of its frames */
    const uint32_t *frames;     /* how many frames it covers */
    const uint32_t *flame;      /* how many of them carry scopes */
} vor_index_entries;

/* A reader of the capture at `path` (file) or of bytes given by vor_capture_index_feed
 * (path NULL). max_entries: 0 for the default, else at least VOR_INDEX_MIN_MAX_ENTRIES (a
 * power of two is used: the next one down). NULL when out of memory or the file cannot be
 * opened (message in err). */
VOR_HIDDEN vor_capture_index *vor_capture_index_open(const char *path, uint32_t max_entries, char *err,
                                                     size_t err_capacity);
VOR_HIDDEN void vor_capture_index_close(vor_capture_index *ix);

/* Memory input: appends bytes (in order). 0 when they were not taken (read some records
 * with vor_capture_index_step first, or the index is in error). */
VOR_HIDDEN int vor_capture_index_feed(vor_capture_index *ix, const void *bytes, size_t n);

/* Reads up to `max_frames` frames. Returns the frames indexed (0: none available now),
 * or -1 on an error (vor_capture_index_error). */
VOR_HIDDEN int vor_capture_index_step(vor_capture_index *ix, uint32_t max_frames);

VOR_HIDDEN const char *vor_capture_index_error(const vor_capture_index *ix);
VOR_HIDDEN void vor_capture_index_entries(const vor_capture_index *ix, vor_index_entries *out);
VOR_HIDDEN uint64_t vor_capture_index_frames(const vor_capture_index *ix);   /* frames indexed */
VOR_HIDDEN uint64_t vor_capture_index_offset(const vor_capture_index *ix);   /* bytes read */
VOR_HIDDEN int vor_capture_index_finished(const vor_capture_index *ix);      /* end record read */
VOR_HIDDEN const vor_reader *vor_capture_index_reader(const vor_capture_index *ix);
/* 1 when records can be read from the middle (format 1.1 and later; 1.0 records depend on
 * the ones before them); 0 before the header was read. */
VOR_HIDDEN int vor_capture_index_random_access(const vor_capture_index *ix);
/* The capture's header bytes (NULL before it was read). */
VOR_HIDDEN const uint8_t *vor_capture_index_header(const vor_capture_index *ix, size_t *n);
/* File input: reads n bytes at `offset` of the file indexed (as pread(2): the count read, -1
 * with errno set). Memory input: -1. */
VOR_HIDDEN long vor_capture_index_pread(const vor_capture_index *ix, void *buf, size_t n, uint64_t offset);
/* Bytes held: entries, snapshots, the header copy (not the reader's own window). */
VOR_HIDDEN size_t vor_capture_index_memory(const vor_capture_index *ix);

/* The entry holding frame `frame_index` (the last entry whose first frame is at or before
 * it; 0 when it is before every entry). -1 when the index has no entry. */
VOR_HIDDEN int64_t vor_capture_index_find(const vor_capture_index *ix, uint64_t frame_index);

/* Where the state for entry `e` comes from: the snapshot's byte offset (the bytes from
 * there up to the entry's offset are what vor_capture_index_state reads) and its id. */
VOR_HIDDEN int vor_capture_index_state_source(const vor_capture_index *ix, uint32_t e, uint64_t *from,
                                              uint32_t *snapshot);

/* The framed state record for entry `e`: declarations read by the index, and the user
 * values as of the entry's first frame, computed from snapshot `snapshot` and `bytes`
 * (the capture's bytes from the snapshot's offset to the entry's offset). 0 on failure. */
VOR_HIDDEN int vor_capture_index_state(const vor_capture_index *ix, uint32_t e, uint32_t snapshot,
                                       const uint8_t *bytes, size_t n, vor_out *framed);

/* The framed state record with the index's declarations and no values (for records found
 * without the index, e.g. the newest ones of a capture still being indexed). */
VOR_HIDDEN int vor_capture_index_declarations(const vor_capture_index *ix, vor_out *framed);

/* A state record from one reader's declarations and another's user values (either NULL),
 * framed as a 1.1 record (capture_state.c). */
VOR_HIDDEN int vor_capture_state_encode(const vor_reader *declarations, const vor_reader *values,
                                        uint64_t next_index, vor_out *framed);

/* The length of the intact 1.1 record at p (its size check and record check hold and all
 * of it is within `available` bytes), else 0 (reader_scan.c). */
VOR_HIDDEN size_t vor_capture_intact_record(const uint8_t *p, size_t available);

#endif /* VOR_CAPTURE_INDEX_H */
