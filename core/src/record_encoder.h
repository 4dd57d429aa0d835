/* record_encoder.h: turns frame records into the decoded bytes of .vor records, and the
 * capture header into its bytes (docs/FORMAT.md). Compression and files are the capture
 * writer's business; this is pure encoding plus the state that makes records small:
 * what was declared already and the previous frame's values.
 */
#ifndef VOR_RECORD_ENCODER_H
#define VOR_RECORD_ENCODER_H

#include "bytes.h"
#include "vor_internal.h"

typedef struct vor_record_encoder vor_record_encoder;

typedef struct vor_capture_header_info {
    int flame;
    int64_t wall_epoch_ns;
    const char *producer;
    const char *process;
    uint64_t pid;
} vor_capture_header_info;

/* The whole header (fixed part and body). */
VOR_HIDDEN void vor_encode_capture_header(vor_out *out, const vor_capture_header_info *info);

VOR_HIDDEN vor_record_encoder *vor_record_encoder_new(void);
VOR_HIDDEN void vor_record_encoder_free(vor_record_encoder *e);

/* Appends the decoded bytes of one frame record to `out` (which should be empty) and
 * updates the encoder's state. With `with_flame` the record carries the frame's scopes.
 * If the record would exceed out->max_capacity with scopes, it is encoded without them
 * and *flame_dropped is set. Returns 0 only when even that failed (out of memory). */
VOR_HIDDEN int vor_encode_frame(vor_record_encoder *e, const vor_frame_record *rec, int with_flame, vor_out *out,
                                int *flame_dropped);

/* The end-of-capture record. */
VOR_HIDDEN void vor_encode_end(vor_out *out);

#endif /* VOR_RECORD_ENCODER_H */
