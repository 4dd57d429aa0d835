/* reader.c: the .vor capture reader: input (a file read through a window, or fed
 * bytes), the header, record framing and the LZ4 chain (docs/FORMAT.md).
 *
 * Tailing is the normal case, not an add-on: `offset` only moves past complete records,
 * so when the last record is incomplete (a writer mid-write, or a crash) the reader says
 * "nothing yet" and the next call reads it again from the same offset once the file has
 * grown. A record whose bytes are all there but do not decode is corruption and an error.
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

int vor_reader_feed(vor_reader *r, const void *bytes, size_t n) {
    if (r == NULL || !r->is_memory || r->state < 0) return 0;
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
    return 1;
}

/* Makes [at, at + n) available; returns a pointer to it, or NULL if the input does not
 * have that many bytes yet (or an I/O error was recorded). */
static const uint8_t *input_get(vor_reader *r, uint64_t at, size_t n) {
    if (at >= r->window_offset && at + n <= r->window_offset + r->window_size)
        return r->window + (at - r->window_offset);
    if (r->is_memory) return NULL;
    /* Refill the window from the file starting at `at`. */
    size_t capacity = n > WINDOW_MIN_BYTES ? n : WINDOW_MIN_BYTES;
    if (!window_reserve(r, capacity)) {
        vor_reader_fail(r, at, "out of memory for a %zu-byte read", n);
        return NULL;
    }
    r->window_offset = at;
    r->window_size = 0;
    while (r->window_size < capacity) {
        ssize_t got = pread(r->fd, r->window + r->window_size, capacity - r->window_size,
                            (off_t)(at + r->window_size));
        if (got < 0) {
            if (errno == EINTR) continue;
            vor_reader_fail(r, at, "read error: %s", strerror(errno));
            return NULL;
        }
        if (got == 0) break;
        r->window_size += (size_t)got;
    }
    return r->window_size >= n ? r->window : NULL;
}

static int read_header(vor_reader *r) {
    const uint8_t *fixed = input_get(r, 0, VOR_CAPTURE_FIXED_HEADER_BYTES);
    if (fixed == NULL) {
        if (r->state < 0) return -1;
        /* Too short for now: but if the bytes we have already contradict the magic, say so. */
        size_t have = r->window_offset == 0 ? r->window_size : 0;
        if (have > VOR_CAPTURE_MAGIC_BYTES) have = VOR_CAPTURE_MAGIC_BYTES;
        if (have && memcmp(r->window, VOR_CAPTURE_MAGIC, have) != 0) {
            vor_reader_fail(r, 0, "not a vor capture (wrong magic bytes)");
            return -1;
        }
        return 0;
    }
    if (memcmp(fixed, VOR_CAPTURE_MAGIC, VOR_CAPTURE_MAGIC_BYTES) != 0) {
        vor_reader_fail(r, 0, "not a vor capture (wrong magic bytes)");
        return -1;
    }
    vor_in in = {fixed + VOR_CAPTURE_MAGIC_BYTES, fixed + VOR_CAPTURE_FIXED_HEADER_BYTES, 0};
    uint16_t major = vor_in_u16le(&in), minor = vor_in_u16le(&in);
    uint32_t body_bytes = vor_in_u32le(&in);
    if (major != VOR_FORMAT_VERSION_MAJOR) {
        vor_reader_fail(r, 8, "format version %u.%u; this reader reads %d.x", major, minor, VOR_FORMAT_VERSION_MAJOR);
        return -1;
    }
    if (body_bytes > VOR_CAPTURE_MAX_HEADER_BODY) {
        vor_reader_fail(r, 12, "header declares %u bytes (limit %u)", body_bytes, VOR_CAPTURE_MAX_HEADER_BODY);
        return -1;
    }
    size_t header_bytes = VOR_CAPTURE_FIXED_HEADER_BYTES + body_bytes + VOR_CAPTURE_CHECK_BYTES;
    const uint8_t *body = input_get(r, 0, header_bytes);
    if (body == NULL) return r->state < 0 ? -1 : 0;
#if !defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
    /* (Fuzzing builds skip the checks so that mutated inputs reach the decoder.) */
    uint32_t stored_check = vor_get_u32le(body + header_bytes - VOR_CAPTURE_CHECK_BYTES);
    if (vor_crc32c(0, body + VOR_CAPTURE_MAGIC_BYTES, header_bytes - VOR_CAPTURE_CHECK_BYTES - VOR_CAPTURE_MAGIC_BYTES) !=
        stored_check) {
        vor_reader_fail(r, header_bytes - VOR_CAPTURE_CHECK_BYTES,
                        "header check value does not match its contents: corrupt capture");
        return -1;
    }
#endif
    in.p = body + VOR_CAPTURE_FIXED_HEADER_BYTES;
    in.end = in.p + body_bytes;

    uint64_t flags = vor_in_varint(&in);
    int64_t wall = (int64_t)vor_in_u64le(&in);
    uint64_t time_unit = vor_in_varint(&in);
    size_t n;
    const uint8_t *s = vor_in_string(&in, &n);
    if (!in.failed) r->producer = vor_reader_strdup(s, n);
    s = vor_in_string(&in, &n);
    if (!in.failed) r->process = vor_reader_strdup(s, n);
    uint64_t pid = vor_in_varint(&in);
    uint64_t n_system = vor_in_varint(&in);
    if (in.failed || r->producer == NULL || r->process == NULL) {
        vor_reader_fail(r, VOR_CAPTURE_FIXED_HEADER_BYTES, "malformed header");
        return -1;
    }
    if (time_unit != 1) {
        vor_reader_fail(r, VOR_CAPTURE_FIXED_HEADER_BYTES, "time unit of %llu ns; this reader knows 1 ns",
                        (unsigned long long)time_unit);
        return -1;
    }
    if (n_system == 0 || n_system > 32) {
        vor_reader_fail(r, VOR_CAPTURE_FIXED_HEADER_BYTES, "header declares %llu system columns (1..32 allowed)",
                        (unsigned long long)n_system);
        return -1;
    }
    r->columns = calloc(64, sizeof *r->columns);
    r->prev_user = calloc(64, sizeof *r->prev_user);
    if (r->columns == NULL || r->prev_user == NULL) {
        vor_reader_fail(r, 0, "out of memory");
        return -1;
    }
    r->column_capacity = 64;
    for (uint64_t i = 0; i < n_system; i++) {
        uint64_t id = vor_in_varint(&in);
        size_t name_len, unit_len;
        const uint8_t *name = vor_in_string(&in, &name_len);
        const uint8_t *unit = vor_in_string(&in, &unit_len);
        uint8_t encoding = vor_in_u8(&in);
        double scale = vor_in_f64le(&in);
        if (in.failed || id != i || encoding > VOR_ENCODING_DELTA) {
            vor_reader_fail(r, VOR_CAPTURE_FIXED_HEADER_BYTES, "malformed system column %llu in the header",
                            (unsigned long long)i);
            return -1;
        }
        vor_reader_column *c = &r->columns[i];
        c->id = (uint32_t)i;
        c->is_system = 1;
        c->name = vor_reader_strdup(name, name_len);
        c->unit = vor_reader_strdup(unit, unit_len);
        if (c->name == NULL || c->unit == NULL) {
            vor_reader_fail(r, 0, "out of memory");
            return -1;
        }
        r->system_encoding[i] = encoding;
        r->system_scale[i] = scale;
    }
    /* Fields added by newer minor versions follow; they are skipped. */
    r->system_count = (uint32_t)n_system;
    r->column_count = (uint32_t)n_system;
    r->prev_present = n_system >= 32 ? 0xFFFFFFFFu : (1u << n_system) - 1u;
    r->info.version_major = major;
    r->info.version_minor = minor;
    r->info.wall_epoch_ns = wall;
    r->info.producer = r->producer;
    r->info.process = r->process;
    r->info.pid = pid;
    r->info.flame = (flags & VOR_HEADER_FLAME) != 0;
    r->offset = header_bytes;
    r->state = 1;
    return 1;
}

int vor_reader_poll_header(vor_reader *r) {
    if (r == NULL) return -1;
    if (r->state == 0) return read_header(r);
    return r->state;
}

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

vor_read_status vor_reader_next(vor_reader *r, vor_reader_frame *frame) {
    if (r == NULL || frame == NULL) return VOR_READ_ERROR;
    if (r->state < 0) return VOR_READ_ERROR;
    if (r->state == 0) {
        int h = read_header(r);
        if (h < 0) return VOR_READ_ERROR;
        if (h == 0) return VOR_READ_NOTHING_YET;
    }
    for (;;) {
        uint64_t at = r->offset;
        if (r->is_memory) window_discard_before(r, at);
        const uint8_t *len_bytes = input_get(r, at, 4);
        if (len_bytes == NULL) return r->state < 0 ? VOR_READ_ERROR : VOR_READ_NOTHING_YET;
        uint32_t length = vor_get_u32le(len_bytes);
        if (length < VOR_CAPTURE_MIN_RECORD || length > VOR_READER_MAX_RECORD_BYTES) {
            vor_reader_fail(r, at, "record length %u is outside %u..%u: corrupt capture", length,
                            VOR_CAPTURE_MIN_RECORD, VOR_READER_MAX_RECORD_BYTES);
            return VOR_READ_ERROR;
        }
        const uint8_t *payload = input_get(r, at, 4 + (size_t)length);
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
        vor_read_status st = vor_decode_record(r, dst, (size_t)raw_size, at, frame);
        if (st == VOR_READ_ERROR) return st;
        r->history_used += (size_t)raw_size;
        r->offset = at + 4 + length;
        if (st == VOR_READ_FRAME) return st;
        /* A record without a frame (end of capture, or a newer kind): go on. */
    }
}

const char *vor_reader_error(const vor_reader *r) {
    return r ? r->error : "no reader";
}

const vor_reader_info *vor_reader_get_info(const vor_reader *r) {
    return (r && r->state != 0 && r->producer) ? &r->info : NULL;
}

uint32_t vor_reader_column_count(const vor_reader *r) {
    return r ? r->column_count : 0;
}

const vor_reader_column *vor_reader_get_column(const vor_reader *r, uint32_t id) {
    if (r == NULL || id >= r->column_count || r->columns[id].name == NULL) return NULL;
    return &r->columns[id];
}

uint32_t vor_reader_system_column_count(const vor_reader *r) {
    return r ? r->system_count : 0;
}

uint32_t vor_reader_site_count(const vor_reader *r) {
    return r ? r->site_count : 0;
}

const vor_reader_site *vor_reader_get_site(const vor_reader *r, uint32_t id) {
    if (r == NULL || id == 0 || id > r->site_count || r->sites[id].name == NULL) return NULL;
    return &r->sites[id];
}

uint32_t vor_reader_module_count(const vor_reader *r) {
    (void)r;
    return 0;
}

const vor_reader_module *vor_reader_get_module(const vor_reader *r, uint32_t id) {
    (void)r;
    (void)id;
    return NULL;
}

uint64_t vor_reader_damage_count(const vor_reader *r) {
    (void)r;
    return 0;
}

int vor_reader_get_damage(const vor_reader *r, uint32_t i, vor_reader_damage *out) {
    (void)r;
    (void)i;
    (void)out;
    return 0;
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
    for (uint32_t i = 0; i < r->column_capacity && r->columns; i++) {
        free((char *)r->columns[i].name);
        free((char *)r->columns[i].unit);
    }
    for (uint32_t i = 0; i < r->site_capacity && r->sites; i++) {
        free((char *)r->sites[i].name);
        free((char *)r->sites[i].function);
        free((char *)r->sites[i].file);
    }
    for (uint32_t i = 0; i < r->thread_capacity && r->threads; i++)
        if (r->threads[i].used) free((char *)r->threads[i].thread.name);
    free(r->columns);
    free(r->sites);
    free(r->threads);
    free(r->prev_user);
    free(r->producer);
    free(r->process);
    free(r->window);
    free(r->history);
    free(r->values);
    free(r->frame_threads);
    free(r->scopes);
    free(r);
}
