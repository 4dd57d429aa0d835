/* record_encoder.h: turns frame records into the decoded bytes of .vor records (format
 * 1.1), and the capture header into its bytes (docs/FORMAT.md). Compression and files are
 * the capture writer's business; this is pure encoding plus the little state 1.1 keeps:
 * what was declared, what the previous record declared (repeated once), and each user
 * value's recent history (written in full when it changed and once more after).
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

/* The whole header (fixed part, body, checks). The clock's facts and the calibrated
 * costs are taken from the running core (vor_clock_get_info, the calibration). */
VOR_HIDDEN void vor_encode_capture_header(vor_out *out, const vor_capture_header_info *info);

VOR_HIDDEN vor_record_encoder *vor_record_encoder_new(void);
VOR_HIDDEN void vor_record_encoder_free(vor_record_encoder *e);

/* 1 if the record has scopes to put in a flame frame (ended or still open). */
VOR_HIDDEN int vor_frame_record_has_scopes(const vor_frame_record *rec);

/* Appends the decoded bytes of one frame record to `out` (which should be empty) and
 * updates the encoder's state. With `with_flame` the record carries the frame's scopes.
 * If the record would exceed out->max_capacity with scopes, it is encoded without them
 * and *flame_dropped is set. Returns 0 only when even that failed (out of memory); the
 * encoder's state is then as before the call. */
VOR_HIDDEN int vor_encode_frame(vor_record_encoder *e, const vor_frame_record *rec, int with_flame, vor_out *out,
                                int *flame_dropped);

/* The end-of-capture record. */
VOR_HIDDEN void vor_encode_end(vor_out *out);

/* Frames `raw` (a decoded record) as one 1.1 record into `framed` (emptied first):
 * [u32 size][u16 size check][u32 record check][body], the body being `raw` compressed
 * alone with LZ4 when that makes it smaller, else `raw` itself. `lz4_stream` is an
 * LZ4_stream_t from LZ4_createStream(), reset for each record. Returns 0 when `framed`
 * cannot hold it. */
VOR_HIDDEN int vor_frame_capture_record(const uint8_t *raw, size_t n, void *lz4_stream, vor_out *framed);

#endif /* VOR_RECORD_ENCODER_H */
