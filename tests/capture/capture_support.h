/* capture_support.h: helpers of the capture tests: temporary paths, whole-file reads,
 * record boundaries, and a reader that collects every frame into plain structs. */
#ifndef VOR_CAPTURE_SUPPORT_H
#define VOR_CAPTURE_SUPPORT_H

#include "support.h"
#include "vor/reader.h"

typedef struct read_scope {
    uint32_t thread_id, site_id, depth;
    int64_t start_ns, duration_ns;
} read_scope;

typedef struct read_frame {
    uint64_t index;
    int64_t start_ns, duration_ns, overhead_ns;
    uint64_t dropped;
    uint32_t n_values;
    vor_reader_value values[32];
    uint64_t n_scopes;
    read_scope *scopes;
    int has_flame;
} read_frame;

typedef struct read_capture {
    read_frame *frames;
    uint32_t n_frames, capacity;
    vor_read_status last;
    char error[1200];
} read_capture;

/* A fresh path under the test temp dir ($TMPDIR or /tmp), unique per call. */
const char *temp_path(const char *suffix);
/* The whole file; *size set. Free with free(). */
uint8_t *read_file(const char *path, size_t *size);
void write_file(const char *path, const uint8_t *bytes, size_t size);
/* The capture's minor version, and the bytes its header takes. */
unsigned capture_minor(const uint8_t *bytes);
size_t capture_header_bytes(const uint8_t *bytes);
/* The bytes the record at `at` takes, head included (1.0 or 1.1 framing). */
size_t record_length_at(const uint8_t *bytes, size_t size, size_t at);
/* Offsets of each record (after the header) in a complete capture; returns count. */
uint32_t record_offsets(const uint8_t *bytes, size_t size, size_t *offsets, uint32_t cap);
/* Reads frames until the reader says nothing yet or error; appends to *out. */
void collect_frames(vor_reader *r, read_capture *out);
void read_capture_free(read_capture *c);

/* Starts a session (fake clock) writing VOR_RECORD=path, with flame frames if asked, and
 * the recording consumer attached. */
void start_recording(const char *path, int flame);
/* cmocka teardown: ends the session and forgets the VOR_RECORD* settings. */
int capture_teardown(void **state);
vor_reader *open_or_fail(const char *path);
/* `frames` frames of a workload with every kind of content: nested scopes, a new worker
 * thread per frame (renamed from frame 5), metrics that change every frame (NaN once),
 * stay constant, change every fourth frame, appear at frame 10, change unit at frame 12,
 * and I/O. */
void capture_workload(int frames);

/* A digest of everything a frame says, names resolved ("site N", "thread N" when not
 * declared): two frames with the same digest read the same. */
uint64_t frame_digest(vor_reader *r, const vor_reader_frame *f);

#endif
