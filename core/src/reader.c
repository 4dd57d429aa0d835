/* reader.c: the .vor capture reader: input (a file read through a window, or fed
 * bytes), the header, and the loop of vor_reader_next over records: 1.1 records through
 * reader_scan.c (each compressed alone; damage skipped and reported), 1.0 records with
 * their LZ4 chain (docs/FORMAT.md).
 *
 * Tailing is the normal case, not an add-on: `offset` only moves past complete records
 * (and damage skipped), so when the last record is incomplete (a writer mid-write, or a
 * crash) the reader says "nothing yet" and the next call reads it again from the same
 * offset once the file has grown.
 *
 * Files are read through a window of at least 1 MiB, so reading a metrics-only capture
 * costs a pread per thousands of records, not two per record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4.h>

#include "bytes.h"
#include "capture_format.h"
#include "crc32c.h"
#include "reader_internal.h"

#define WINDOW_MIN_BYTES (1024u * 1024u)
#define MEMORY_SLACK_BYTES (1024u * 1024u)
/* Skipping scopes, the decoded bytes of a record first looked at: the frame's fields,
 * declarations and values fit in them unless the record declares a lot. */
#define SKIP_FLAME_PREFIX_BYTES 512u

void vor_reader_fail(vor_reader *r, uint64_t at, const char *fmt, ...) {
    char detail[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof detail, fmt, args);
    va_end(args);
    snprintf(r->error, sizeof r->error, "%s: %s (at byte %llu)", r->name, detail, (unsigned long long)at);
    r->state = -1;
}

static vor_reader *reader_new(void) {
    vor_reader *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    r->fd = -1;
    return r;
}

vor_reader *vor_reader_open(const char *path, char *err, size_t err_capacity) {
    vor_reader *r = reader_new();
    if (r == NULL) {
        if (err && err_capacity) snprintf(err, err_capacity, "%s: out of memory", path ? path : "(null)");
        return NULL;
    }
    if (path == NULL) {
        if (err && err_capacity) snprintf(err, err_capacity, "(null): no file name");
        free(r);
        return NULL;
    }
    snprintf(r->name, sizeof r->name, "%s", path);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        if (err && err_capacity) snprintf(err, err_capacity, "%s: %s", path, strerror(errno));
        free(r);
        return NULL;
    }
    return r;
}

vor_reader *vor_reader_open_memory(void) {
    vor_reader *r = reader_new();
    if (r == NULL) return NULL;
    r->is_memory = 1;
    snprintf(r->name, sizeof r->name, "(stream)");
    return r;
}

/* Drops window bytes before `offset` when that frees a useful amount. */
static void window_discard_before(vor_reader *r, uint64_t offset) {
    if (offset <= r->window_offset) return;
    size_t drop = (size_t)(offset - r->window_offset);
    if (drop > r->window_size) drop = r->window_size;
    if (drop < r->window_size / 2 && drop < 65536) return;
    memmove(r->window, r->window + drop, r->window_size - drop);
    r->window_size -= drop;
    r->window_offset += drop;
}

static int window_reserve(vor_reader *r, size_t capacity) {
    if (capacity <= r->window_capacity) return 1;
    uint8_t *p = realloc(r->window, capacity);
    if (p == NULL) return 0;
    r->window = p;
    r->window_capacity = capacity;
    return 1;
}

void vor_reader_set_max_frame_scopes(vor_reader *r, uint64_t max) {
    if (r) r->max_frame_scopes = max;
}

void vor_reader_set_skip_flame(vor_reader *r, int skip) {
    if (r) r->skip_flame = skip != 0;
}

uint64_t vor_reader_frame_offset(const vor_reader *r) {
    return r ? r->frame_at : 0;
}

int vor_reader_feed(vor_reader *r, const void *bytes, size_t n) {
    if (r == NULL || !r->is_memory || r->state < 0) return 0;
    if (r->finished) return 1; /* nothing after an end record is read: not kept either */
    window_discard_before(r, r->offset);
    size_t pending = r->window_size - (size_t)(r->offset - r->window_offset);
    if (pending + n > (size_t)VOR_READER_MAX_RECORD_BYTES + MEMORY_SLACK_BYTES) return 0;
    size_t want = r->window_size + n;
    if (want > r->window_capacity) {
        size_t cap = r->window_capacity ? r->window_capacity : 65536;
        while (cap < want) cap *= 2;
        if (!window_reserve(r, cap)) return 0;
    }
    if (n) memcpy(r->window + r->window_size, bytes, n);
    r->window_size += n;
    r->input_end = r->window_offset + r->window_size;
    return 1;
}

static size_t window_fill(vor_reader *r, uint64_t at, size_t n) {
    /* Refill the window from the file starting at `at`. */
    size_t capacity = n > WINDOW_MIN_BYTES ? n : WINDOW_MIN_BYTES;
    if (!window_reserve(r, capacity)) {
        vor_reader_fail(r, at, "out of memory for a %zu-byte read", n);
        return 0;
    }
    r->window_offset = at;
    r->window_size = 0;
    while (r->window_size < capacity) {
        ssize_t got = pread(r->fd, r->window + r->window_size, capacity - r->window_size, (off_t)(at + r->window_size));
        if (got < 0) {
            if (errno == EINTR) continue;
            vor_reader_fail(r, at, "read error: %s", strerror(errno));
            return 0;
        }
        if (got == 0) break;
        r->window_size += (size_t)got;
    }
    if (at + r->window_size > r->input_end) r->input_end = at + r->window_size;
    return r->window_size;
}

const uint8_t *vor_reader_input(vor_reader *r, uint64_t at, size_t n) {
    if (at >= r->window_offset && at + n <= r->window_offset + r->window_size)
        return r->window + (at - r->window_offset);
    if (r->is_memory || r->state < 0) return NULL;
    return window_fill(r, at, n) >= n ? r->window : NULL;
}

size_t vor_reader_input_some(vor_reader *r, uint64_t at, size_t want, const uint8_t **p) {
    *p = NULL;
    if (at >= r->window_offset && at <= r->window_offset + r->window_size) {
        size_t have = (size_t)(r->window_offset + r->window_size - at);
        if (have >= want || r->is_memory) {
            *p = r->window + (at - r->window_offset);
            return have < want ? have : want;
        }
    }
    if (r->is_memory || r->state < 0) return 0;
    size_t have = window_fill(r, at, want);
    *p = r->window;
    return have < want ? have : want;
}

/* Parses the header body (after B's check in 1.1): the fields of 1.0, then those of 1.1. */
static int read_header_body(vor_reader *r, vor_in *in, uint32_t minor, uint64_t body_at) {
    uint64_t flags = vor_in_varint(in);
    int64_t wall = (int64_t)vor_in_u64le(in);
    uint64_t time_unit = vor_in_varint(in);
    size_t n;
    const uint8_t *s = vor_in_string(in, &n);
    if (!in->failed) r->producer = vor_reader_strdup(s, n);
    s = vor_in_string(in, &n);
    if (!in->failed) r->process = vor_reader_strdup(s, n);
    uint64_t pid = vor_in_varint(in);
    uint64_t n_system = vor_in_varint(in);
    if (in->failed || r->producer == NULL || r->process == NULL) {
        vor_reader_fail(r, body_at, "malformed header");
        return 0;
    }
    if (time_unit != 1) {
        vor_reader_fail(r, body_at, "time unit of %llu ns; this reader knows 1 ns", (unsigned long long)time_unit);
        return 0;
    }
    if (n_system == 0 || n_system > 32) {
        vor_reader_fail(r, body_at, "header declares %llu system columns (1..32 allowed)",
                        (unsigned long long)n_system);
        return 0;
    }
    if (!vor_reader_ensure_column(r, (uint32_t)n_system - 1)) {
        vor_reader_fail(r, 0, "out of memory");
        return 0;
    }
    for (uint64_t i = 0; i < n_system; i++) {
        uint64_t id = vor_in_varint(in);
        size_t name_len, unit_len;
        const uint8_t *name = vor_in_string(in, &name_len);
        const uint8_t *unit = vor_in_string(in, &unit_len);
        uint8_t encoding = vor_in_u8(in);
        double scale = vor_in_f64le(in);
        /* 1.1 stores every system value absolute. */
        uint8_t max_encoding = minor >= 1 ? VOR_ENCODING_ABSOLUTE : VOR_ENCODING_DELTA;
        if (in->failed || id != i || encoding > max_encoding) {
            vor_reader_fail(r, body_at, "malformed system column %llu in the header", (unsigned long long)i);
            return 0;
        }
        vor_reader_column *c = &r->columns[i];
        c->id = (uint32_t)i;
        c->is_system = 1;
        c->name = vor_reader_strdup(name, name_len);
        c->unit = vor_reader_strdup(unit, unit_len);
        if (c->name == NULL || c->unit == NULL) {
            vor_reader_fail(r, 0, "out of memory");
            return 0;
        }
        r->system_encoding[i] = encoding;
        r->system_scale[i] = scale;
    }
    r->info.clock_source = "";
    r->info.cross_origin_isolated = -1;
    if (minor >= 1) {
        uint64_t resolution = vor_in_varint(in);
        s = vor_in_string(in, &n);
        if (!in->failed) r->clock_source = vor_reader_strdup(s, n);
        uint8_t isolation = vor_in_u8(in);
        double scope_cost = vor_in_f64le(in), function_cost = vor_in_f64le(in);
        if (in->failed || r->clock_source == NULL || isolation > VOR_ISOLATION_YES) {
            vor_reader_fail(r, body_at, "malformed clock fields in the header");
            return 0;
        }
        r->info.clock_resolution_ns = resolution;
        r->info.clock_source = r->clock_source;
        r->info.cross_origin_isolated = isolation == VOR_ISOLATION_UNKNOWN ? -1 : isolation == VOR_ISOLATION_YES;
        r->info.scope_cost_ns = scope_cost;
        r->info.function_cost_ns = function_cost;
    }
    /* Fields added by newer minor versions follow; they are skipped. */
    r->system_count = (uint32_t)n_system;
    r->column_count = (uint32_t)n_system;
    r->prev_present = n_system >= 32 ? 0xFFFFFFFFu : (1u << n_system) - 1u;
    r->info.wall_epoch_ns = wall;
    r->info.producer = r->producer;
    r->info.process = r->process;
    r->info.pid = pid;
    r->info.flame = (flags & VOR_HEADER_FLAME) != 0;
    return 1;
}

static int wrong_magic(vor_reader *r) {
    vor_reader_fail(r, 0, "not a vor capture (wrong magic bytes)");
    return -1;
}

/* 1 once read, 0 while incomplete (only ever seen at the start of a capture being
 * created: the writer writes the header with one write), -1 on an error. */
static int read_header(vor_reader *r) {
    const uint8_t *fixed = vor_reader_input(r, 0, VOR_CAPTURE_FIXED_HEADER_BYTES);
    if (fixed == NULL) {
        if (r->state < 0) return -1;
        /* Too short for now: but if the bytes we have already contradict the magic, say so. */
        size_t have = r->window_offset == 0 ? r->window_size : 0;
        if (have > VOR_CAPTURE_MAGIC_BYTES) have = VOR_CAPTURE_MAGIC_BYTES;
        if (have && memcmp(r->window, VOR_CAPTURE_MAGIC, have) != 0) return wrong_magic(r);
        return 0;
    }
    if (memcmp(fixed, VOR_CAPTURE_MAGIC, VOR_CAPTURE_MAGIC_BYTES) != 0) return wrong_magic(r);
    vor_in in = {fixed + VOR_CAPTURE_MAGIC_BYTES, fixed + VOR_CAPTURE_FIXED_HEADER_BYTES, 0};
    uint16_t major = vor_in_u16le(&in), minor = vor_in_u16le(&in);
    uint32_t body_bytes = vor_in_u32le(&in);
    if (major != VOR_FORMAT_VERSION_MAJOR) {
        vor_reader_fail(r, 8, "format version %u.%u; this reader reads %d.x", major, minor, VOR_FORMAT_VERSION_MAJOR);
        return -1;
    }
    size_t body_at = VOR_CAPTURE_FIXED_HEADER_BYTES;
    if (minor >= 1) {
        /* B has its own check: a damaged B is an error, never a header "still arriving". */
        fixed = vor_reader_input(r, 0, VOR_CAPTURE_1_1_FIXED_HEADER_BYTES);
        if (fixed == NULL) return r->state < 0 ? -1 : 0;
#if !defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
        if (vor_crc32c(0, fixed + VOR_CAPTURE_MAGIC_BYTES, 8) != vor_get_u32le(fixed + 16)) {
            vor_reader_fail(r, 12, "header size field fails its check: damaged header");
            return -1;
        }
#endif
        body_at = VOR_CAPTURE_1_1_FIXED_HEADER_BYTES;
    }
    if (body_bytes > VOR_CAPTURE_MAX_HEADER_BODY) {
        vor_reader_fail(r, 12, "header declares %u bytes (limit %u)", body_bytes, VOR_CAPTURE_MAX_HEADER_BODY);
        return -1;
    }
    size_t header_bytes = body_at + body_bytes + VOR_CAPTURE_CHECK_BYTES;
    const uint8_t *header = vor_reader_input(r, 0, header_bytes);
    if (header == NULL) return r->state < 0 ? -1 : 0;
#if !defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
    /* (Fuzzing builds skip the checks so that mutated inputs reach the decoder.) */
    uint32_t stored_check = vor_get_u32le(header + header_bytes - VOR_CAPTURE_CHECK_BYTES);
    if (vor_crc32c(0, header + VOR_CAPTURE_MAGIC_BYTES,
                   header_bytes - VOR_CAPTURE_CHECK_BYTES - VOR_CAPTURE_MAGIC_BYTES) != stored_check) {
        vor_reader_fail(r, header_bytes - VOR_CAPTURE_CHECK_BYTES,
                        "header check value does not match its contents: corrupt capture");
        return -1;
    }
#endif
    in.p = header + body_at;
    in.end = in.p + body_bytes;
    if (!read_header_body(r, &in, minor, body_at)) return -1;
    r->info.version_major = major;
    r->info.version_minor = minor;
    r->offset = header_bytes;
    r->state = 1;
    return 1;
}

int vor_reader_poll_header(vor_reader *r) {
    if (r == NULL) return -1;
    if (r->state == 0) return read_header(r);
    return r->state;
}

/* ---- 1.1 records ---- */

#define READ_ON 2 /* a record without a frame, or damage skipped: read the next one */

static int record_room(vor_reader *r, size_t n) {
    if (n <= r->record_capacity) return 1;
    uint8_t *p = realloc(r->record, n);
    if (p == NULL) return 0;
    r->record = p;
    r->record_capacity = n;
    return 1;
}

static int next_1_1(vor_reader *r, vor_reader_frame *frame) {
    uint64_t at;
    const uint8_t *body;
    uint32_t size;
    int compressed;
    reader_record_status rs = vor_reader_locate_record(r, &at, &body, &size, &compressed);
    if (rs == RECORD_WAIT) return VOR_READ_NOTHING_YET;
    if (rs == RECORD_ERROR) return VOR_READ_ERROR;
    uint64_t length = VOR_RECORD_HEAD_BYTES + (uint64_t)size;
    const uint8_t *raw = body;
    size_t n = size;
    if (compressed) {
        vor_in in = {body, body + size, 0};
        uint64_t decoded = vor_in_varint(&in);
        if (in.failed || decoded == 0 || decoded > VOR_READER_MAX_RECORD_BYTES) {
            vor_reader_damaged_record(r, at, length, "compressed record declares %llu decoded bytes (1..%u allowed)",
                                      (unsigned long long)decoded, VOR_READER_MAX_RECORD_BYTES);
            return READ_ON;
        }
        if (!record_room(r, (size_t)decoded)) {
            vor_reader_fail(r, at, "out of memory for a %llu-byte record", (unsigned long long)decoded);
            return VOR_READ_ERROR;
        }
        /* Without scopes, the record's beginning is enough: a frame's scopes are its last
         * section. If the beginning decoded is too short, the whole record is decoded. */
        size_t want = (size_t)decoded;
        if (r->skip_flame && want > SKIP_FLAME_PREFIX_BYTES) want = SKIP_FLAME_PREFIX_BYTES;
        int got = want < (size_t)decoded
                      ? LZ4_decompress_safe_partial((const char *)in.p, (char *)r->record, (int)vor_in_left(&in),
                                                    (int)want, (int)decoded)
                      : LZ4_decompress_safe((const char *)in.p, (char *)r->record, (int)vor_in_left(&in), (int)decoded);
        if (got != (int)want) {
            vor_reader_damaged_record(r, at, length, "LZ4 block does not decode to its declared %llu bytes",
                                      (unsigned long long)decoded);
            return READ_ON;
        }
        raw = r->record;
        n = want;
        if (want < (size_t)decoded) {
            char problem[READER_PROBLEM_BYTES];
            reader_decode_status ds = vor_decode_record(r, raw, n, at, frame, problem);
            if (ds == DECODE_FATAL) return VOR_READ_ERROR;
            if (ds != DECODE_MALFORMED) {
                r->offset = at + length;
                if (ds == DECODE_FRAME) r->frame_at = at;
                return ds == DECODE_FRAME ? VOR_READ_FRAME : READ_ON;
            }
            /* Decoding again from the whole record repeats what the beginning did exactly
             * (declarations replace themselves, values resolve the same way). */
            got = LZ4_decompress_safe((const char *)in.p, (char *)r->record, (int)vor_in_left(&in), (int)decoded);
            if (got != (int)decoded) {
                vor_reader_damaged_record(r, at, length, "LZ4 block does not decode to its declared %llu bytes",
                                          (unsigned long long)decoded);
                return READ_ON;
            }
            n = (size_t)decoded;
        }
    }
    char problem[READER_PROBLEM_BYTES];
    reader_decode_status ds = vor_decode_record(r, raw, n, at, frame, problem);
    if (ds == DECODE_FATAL) return VOR_READ_ERROR;
    if (ds == DECODE_MALFORMED) {
        vor_reader_damaged_record(r, at, length, "%s", problem);
        return READ_ON;
    }
    r->offset = at + length;
    if (ds == DECODE_FRAME) r->frame_at = at;
    return ds == DECODE_FRAME ? VOR_READ_FRAME : READ_ON;
}

/* ---- 1.0 records: [u32 length][u32 check][varint D<<1|stored][block], one LZ4 chain ---- */

/* Makes room for `n` decoded bytes after the dictionary in history. */
static uint8_t *history_room(vor_reader *r, size_t n) {
    if (r->history_used + n <= r->history_capacity) return r->history + r->history_used;
    size_t keep = r->history_used < VOR_CAPTURE_LZ4_WINDOW ? r->history_used : VOR_CAPTURE_LZ4_WINDOW;
    size_t capacity = r->history_capacity;
    if (capacity < VOR_CAPTURE_LZ4_WINDOW + n) capacity = VOR_CAPTURE_LZ4_WINDOW + n + WINDOW_MIN_BYTES;
    if (capacity != r->history_capacity) {
        uint8_t *fresh = malloc(capacity);
        if (fresh == NULL) return NULL;
        if (keep) memcpy(fresh, r->history + r->history_used - keep, keep);
        free(r->history);
        r->history = fresh;
        r->history_capacity = capacity;
    } else if (keep) {
        memmove(r->history, r->history + r->history_used - keep, keep);
    }
    r->history_used = keep;
    return r->history + keep;
}

/* A 1.0 capture has no resynchronisation (its records depend on the ones before): any
 * damage is an error that stops the reader. */
static int next_1_0(vor_reader *r, vor_reader_frame *frame) {
    uint64_t at = r->offset;
    const uint8_t *len_bytes = vor_reader_input(r, at, 4);
    if (len_bytes == NULL) return r->state < 0 ? VOR_READ_ERROR : VOR_READ_NOTHING_YET;
    uint32_t length = vor_get_u32le(len_bytes);
    if (length < VOR_CAPTURE_1_0_MIN_RECORD || length > VOR_READER_MAX_RECORD_BYTES) {
        vor_reader_fail(r, at, "record length %u is outside %u..%u: corrupt capture", length,
                        VOR_CAPTURE_1_0_MIN_RECORD, VOR_READER_MAX_RECORD_BYTES);
        return VOR_READ_ERROR;
    }
    const uint8_t *payload = vor_reader_input(r, at, 4 + (size_t)length);
    if (payload == NULL) return r->state < 0 ? VOR_READ_ERROR : VOR_READ_NOTHING_YET; /* torn tail */
#if !defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
    if (vor_crc32c(vor_crc32c(0, payload, 4), payload + 8, length - 4) != vor_get_u32le(payload + 4)) {
        vor_reader_fail(r, at, "record check value does not match its contents: corrupt capture");
        return VOR_READ_ERROR;
    }
#endif
    vor_in in = {payload + 8, payload + 4 + length, 0};
    uint64_t head = vor_in_varint(&in);
    uint64_t raw_size = head >> 1;
    int stored = (int)(head & 1);
    if (in.failed || raw_size == 0 || raw_size > VOR_READER_MAX_RECORD_BYTES) {
        vor_reader_fail(r, at, "record declares %llu decoded bytes (1..%u allowed): corrupt capture",
                        (unsigned long long)raw_size, VOR_READER_MAX_RECORD_BYTES);
        return VOR_READ_ERROR;
    }
    size_t block_size = vor_in_left(&in);
    const uint8_t *block = in.p;
    uint8_t *dst = history_room(r, (size_t)raw_size);
    if (dst == NULL) {
        vor_reader_fail(r, at, "out of memory for a %llu-byte record", (unsigned long long)raw_size);
        return VOR_READ_ERROR;
    }
    if (stored) {
        if (block_size != raw_size) {
            vor_reader_fail(r, at, "stored record of %llu bytes holds %zu: corrupt capture",
                            (unsigned long long)raw_size, block_size);
            return VOR_READ_ERROR;
        }
        memcpy(dst, block, block_size);
    } else {
        size_t dict = r->history_used < VOR_CAPTURE_LZ4_WINDOW ? r->history_used : VOR_CAPTURE_LZ4_WINDOW;
        int got = LZ4_decompress_safe_usingDict((const char *)block, (char *)dst, (int)block_size, (int)raw_size,
                                                (const char *)dst - dict, (int)dict);
        if (got != (int)raw_size) {
            vor_reader_fail(r, at, "LZ4 block does not decode to its declared %llu bytes: corrupt capture",
                            (unsigned long long)raw_size);
            return VOR_READ_ERROR;
        }
    }
    char problem[READER_PROBLEM_BYTES];
    reader_decode_status ds = vor_decode_record(r, dst, (size_t)raw_size, at, frame, problem);
    if (ds == DECODE_FATAL) return VOR_READ_ERROR;
    if (ds == DECODE_MALFORMED) {
        vor_reader_fail(r, at, "%s: corrupt capture", problem);
        return VOR_READ_ERROR;
    }
    r->history_used += (size_t)raw_size;
    r->offset = at + 4 + length;
    if (ds == DECODE_FRAME) r->frame_at = at;
    return ds == DECODE_FRAME ? VOR_READ_FRAME : READ_ON;
}

vor_read_status vor_reader_next(vor_reader *r, vor_reader_frame *frame) {
    if (r == NULL || frame == NULL) return VOR_READ_ERROR;
    if (r->state < 0) return VOR_READ_ERROR;
    if (r->state == 0) {
        int h = read_header(r);
        if (h < 0) return VOR_READ_ERROR;
        if (h == 0) return VOR_READ_NOTHING_YET;
    }
    for (;;) {
        /* Nothing follows an end record: a reader reads nothing after it. */
        if (r->finished) return VOR_READ_NOTHING_YET;
        if (r->is_memory) window_discard_before(r, r->offset);
        int st = r->info.version_minor >= 1 ? next_1_1(r, frame) : next_1_0(r, frame);
        if (st != READ_ON) return (vor_read_status)st;
    }
}

const char *vor_reader_error(const vor_reader *r) {
    return r ? r->error : "no reader";
}

const vor_reader_info *vor_reader_get_info(const vor_reader *r) {
    return (r && r->state != 0 && r->producer) ? &r->info : NULL;
}

uint64_t vor_reader_offset(const vor_reader *r) {
    return r ? r->offset : 0;
}

int vor_reader_finished(const vor_reader *r) {
    return r ? r->finished : 0;
}

void vor_reader_close(vor_reader *r) {
    if (r == NULL) return;
    if (r->fd >= 0) close(r->fd);
    vor_reader_tables_free(r);
    free(r->user);
    free(r->producer);
    free(r->process);
    free(r->clock_source);
    free(r->window);
    free(r->history);
    free(r->record);
    free(r->values);
    free(r->frame_threads);
    free(r->scopes);
    free(r->drops);
    free(r);
}
