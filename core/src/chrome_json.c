/* chrome_json.c: the streaming Chrome Trace Event JSON writer declared in chrome_json.h
 * (format, tolerated truncations and reader compatibility are described there).
 *
 * Shape: one fixed buffer per writer. Each event first checks that a typical event fits
 * in the room left and flushes the buffer if not, so every write() ends between two
 * events; then it appends its pieces through small helpers that each make room for what
 * they write (a number needs at most 32 bytes, an escaped byte at most 6), which lets an
 * event larger than the whole buffer still be written, in pieces. Nothing is allocated
 * per event and nothing but the buffer is held.
 *
 * Speed: numbers are formatted by hand (two digits per division, microseconds as an
 * integer and a three-digit fraction), strings go through a 256-entry class table with a
 * copy loop for the common printable-ASCII bytes, and the trace consumer's per-site text
 * is escaped once (vor_chrome_prepare_complete). printf is used only for non-integral
 * counter values (a few per frame), with the locale's decimal separator forced to '.'.
 */
#include "chrome_json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_write.h"

struct vor_chrome_json {
    char *buf;
    size_t cap;
    size_t len;
    int fd;
    uint64_t offset; /* of fd: where the next write lands (vor_file_write_all checks the limit) */
    FILE *stream;    /* when not NULL, the sink instead of fd */
    int own;         /* close the fd/stream at close */
    int first;       /* no event yet: the next separator is "\n", not ",\n" */
    int error;       /* errno of the first failed write, 0 if none */
    vor_chrome_json_stats stats;
};

/* ---- Character classes and escaping ------------------------------------------------- */

enum { CLASS_PLAIN = 0, CLASS_ESCAPE = 1, CLASS_HIGH = 2 };

/* PLAIN: printable ASCII copied as is; ESCAPE: control characters, '"', '\\' and DEL;
 * HIGH: bytes >= 0x80, validated as UTF-8. */
static const unsigned char json_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20: '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x30 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50: '\\' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, /* 0x70: DEL */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0x80..0xFF: UTF-8 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0x90 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0xA0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0xB0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0xC0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0xD0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0xE0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0xF0 */
};

static const char hex_digits[] = "0123456789abcdef";

/* The most one input unit (a byte to escape, a UTF-8 sequence, an invalid run) writes. */
#define MAX_UNIT_OUT 6u

/* Length of the UTF-8 unit at s[0] (n > 0 bytes available): a valid sequence (sets
 * *valid) or the maximal ill-formed prefix that one U+FFFD replaces (WHATWG/Unicode
 * "maximal subpart" rule: a bad lead byte alone, else the bytes before the first
 * unexpected one, or before the end of input). */
static size_t utf8_unit(const unsigned char *s, size_t n, int *valid) {
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c == 0xE0) {
        need = 2;
        lo = 0xA0;
    } else if (c == 0xED) {
        need = 2;
        hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xE1 && c <= 0xEF) {
        need = 2;
    } else if (c == 0xF0) {
        need = 3;
        lo = 0x90;
    } else if (c == 0xF4) {
        need = 3;
        hi = 0x8F; /* nothing above U+10FFFF */
    } else if (c >= 0xF1 && c <= 0xF3) {
        need = 3;
    } else {
        *valid = 0;
        return 1;
    }
    for (size_t k = 1; k <= need; k++) {
        if (k >= n || s[k] < lo || s[k] > hi) {
            *valid = 0;
            return k;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    *valid = 1;
    return need + 1;
}

/* Escapes from s[*pos] into out[0..room) until the input ends or fewer than
 * MAX_UNIT_OUT bytes of room are left; advances *pos, returns the bytes written. */
static size_t escape_some(const unsigned char *s, size_t n, size_t *pos, char *out, size_t room, uint64_t *replaced) {
    size_t i = *pos, o = 0;
    while (i < n) {
        unsigned char c = s[i];
        unsigned char cls = json_class[c];
        if (VOR_LIKELY(cls == CLASS_PLAIN)) {
            if (o == room) break;
            out[o++] = (char)c;
            i++;
            continue;
        }
        if (room - o < MAX_UNIT_OUT) break;
        if (cls == CLASS_ESCAPE) {
            out[o++] = '\\';
            switch (c) {
            case '"': out[o++] = '"'; break;
            case '\\': out[o++] = '\\'; break;
            case '\b': out[o++] = 'b'; break;
            case '\f': out[o++] = 'f'; break;
            case '\n': out[o++] = 'n'; break;
            case '\r': out[o++] = 'r'; break;
            case '\t': out[o++] = 't'; break;
            default:
                out[o++] = 'u';
                out[o++] = '0';
                out[o++] = '0';
                out[o++] = hex_digits[c >> 4];
                out[o++] = hex_digits[c & 15];
                break;
            }
            i++;
            continue;
        }
        int valid;
        size_t k = utf8_unit(s + i, n - i, &valid);
        if (valid) {
            memcpy(out + o, s + i, k);
            o += k;
        } else {
            out[o++] = (char)0xEF; /* U+FFFD REPLACEMENT CHARACTER */
            out[o++] = (char)0xBF;
            out[o++] = (char)0xBD;
            if (replaced) (*replaced)++;
        }
        i += k;
    }
    *pos = i;
    return o;
}

size_t vor_chrome_json_escape(const char *s, size_t n, char *out, uint64_t *replaced) {
    size_t pos = 0;
    return escape_some((const unsigned char *)s, n, &pos, out, n * MAX_UNIT_OUT + MAX_UNIT_OUT, replaced);
}

/* ---- Numbers ------------------------------------------------------------------------ */

static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* Decimal digits of v into out (at most 20 bytes); returns the length. */
static size_t format_u64(uint64_t v, char *out) {
    char tmp[20];
    size_t n = sizeof tmp;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        tmp[--n] = digit_pairs[d + 1];
        tmp[--n] = digit_pairs[d];
    }
    if (v >= 10) {
        unsigned d = (unsigned)v * 2;
        tmp[--n] = digit_pairs[d + 1];
        tmp[--n] = digit_pairs[d];
    } else {
        tmp[--n] = (char)('0' + v);
    }
    size_t len = sizeof tmp - n;
    memcpy(out, tmp + n, len);
    return len;
}

static size_t format_i64(int64_t v, char *out) {
    if (v < 0) {
        out[0] = '-';
        return 1 + format_u64((uint64_t)0 - (uint64_t)v, out + 1);
    }
    return format_u64((uint64_t)v, out);
}

size_t vor_chrome_json_format_us(int64_t ns, char *out) {
    size_t n = 0;
    uint64_t u = (uint64_t)ns;
    if (ns < 0) {
        out[n++] = '-';
        u = (uint64_t)0 - u;
    }
    n += format_u64(u / 1000, out + n);
    unsigned frac = (unsigned)(u % 1000);
    out[n++] = '.';
    out[n++] = (char)('0' + frac / 100);
    out[n++] = digit_pairs[(frac % 100) * 2];
    out[n++] = digit_pairs[(frac % 100) * 2 + 1];
    return n;
}

/* A finite double as the shortest of %.15g/%.16g/%.17g that reads back exactly (integers
 * below 2^53 by hand). Returns the length (at most 31). The locale may have a decimal
 * separator other than '.': anything that is not a digit, sign or exponent becomes one '.'. */
static size_t format_double(double v, char *out) {
    if (v == floor(v) && fabs(v) < 9007199254740992.0) return format_i64((int64_t)v, out);
    char tmp[48];
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(tmp, sizeof tmp, "%.*g", precision, v);
        if (precision == 17 || strtod(tmp, NULL) == v) break;
    }
    size_t n = 0;
    for (const char *p = tmp; *p && n < 31; p++) {
        char c = *p;
        if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E')
            out[n++] = c;
        else if (n == 0 || out[n - 1] != '.')
            out[n++] = '.';
    }
    return n;
}

/* ---- The buffer ------------------------------------------------------------------------ */

/* Writes the buffer out and empties it. After an error the buffer is discarded instead. */
static int flush_buffer(vor_chrome_json *j) {
    if (j->error) {
        j->len = 0;
        return -1;
    }
    size_t off = 0;
    if (j->stream) {
        errno = 0;
        if (j->len && fwrite(j->buf, 1, j->len, j->stream) != j->len) j->error = errno ? errno : EIO;
        if (!j->error) {
            errno = 0;
            if (fflush(j->stream) != 0) j->error = errno ? errno : EIO;
        }
        if (!j->error) off = j->len;
    } else {
        /* The one write path of file outputs: past the file-size limit it fails with EFBIG
         * (nothing written) instead of raising SIGXFSZ. */
        uint64_t before = j->offset;
        int error = vor_file_write_all(j->fd, j->buf, j->len, &j->offset);
        off = (size_t)(j->offset - before);
        if (error) j->error = error;
    }
    j->stats.bytes_written += off;
    j->len = 0;
    return j->error ? -1 : 0;
}

/* Makes at least n (<= cap) bytes of room. */
static inline void need_room(vor_chrome_json *j, size_t n) {
    if (VOR_UNLIKELY(j->cap - j->len < n)) flush_buffer(j);
}

static void put_bytes(vor_chrome_json *j, const char *s, size_t n) {
    while (n > 0) {
        size_t room = j->cap - j->len;
        if (room == 0) {
            flush_buffer(j);
            room = j->cap;
        }
        size_t k = n < room ? n : room;
        memcpy(j->buf + j->len, s, k);
        j->len += k;
        s += k;
        n -= k;
    }
}

#define PUT_LITERAL(j, lit) put_bytes((j), (lit), sizeof(lit) - 1)

static inline void put_char(vor_chrome_json *j, char c) {
    need_room(j, 1);
    j->buf[j->len++] = c;
}

static void put_u64(vor_chrome_json *j, uint64_t v) {
    need_room(j, 32);
    j->len += format_u64(v, j->buf + j->len);
}

static void put_i64(vor_chrome_json *j, int64_t v) {
    need_room(j, 32);
    j->len += format_i64(v, j->buf + j->len);
}

static void put_us(vor_chrome_json *j, int64_t ns) {
    need_room(j, 32);
    j->len += vor_chrome_json_format_us(ns, j->buf + j->len);
}

static void put_double(vor_chrome_json *j, double v) {
    if (!isfinite(v)) {
        j->stats.non_finite_omitted++;
        PUT_LITERAL(j, "null");
        return;
    }
    need_room(j, 32);
    j->len += format_double(v, j->buf + j->len);
}

/* A quoted, escaped string of n bytes. */
static void put_string_n(vor_chrome_json *j, const char *s, size_t n) {
    put_char(j, '"');
    size_t pos = 0;
    while (pos < n) {
        if (j->cap - j->len < MAX_UNIT_OUT) flush_buffer(j);
        j->len += escape_some((const unsigned char *)s, n, &pos, j->buf + j->len, j->cap - j->len,
                              &j->stats.invalid_utf8_replaced);
    }
    put_char(j, '"');
}

static void put_string(vor_chrome_json *j, const char *s) {
    put_string_n(j, s ? s : "", s ? strlen(s) : 0);
}

/* Room an event is expected to need beyond its strings: flushing first when it might not
 * fit keeps every write() on an event boundary. */
#define EVENT_FIXED_BYTES 192u

/* Starts an event expected to take about `estimate` bytes: flushes first if they might
 * not fit, then writes the separator. */
static void begin_event(vor_chrome_json *j, size_t estimate) {
    if (j->cap - j->len < estimate && j->len > 0) flush_buffer(j);
    if (j->first) {
        j->first = 0;
        put_char(j, '\n');
    } else {
        PUT_LITERAL(j, ",\n");
    }
    j->stats.events++;
}

static size_t string_estimate(const char *s) {
    return s ? strlen(s) * MAX_UNIT_OUT + 2 : 2;
}

static size_t args_estimate(const vor_chrome_arg *args, size_t n_args) {
    size_t e = 0;
    for (size_t i = 0; i < n_args; i++) {
        e += string_estimate(args[i].key) + 34;
        if (args[i].type == VOR_CHROME_ARG_STRING) e += string_estimate(args[i].string);
    }
    return e;
}

/* The entries of args (after a '{' and possibly earlier entries: `comma` says). */
static void put_args(vor_chrome_json *j, const vor_chrome_arg *args, size_t n_args, int comma) {
    for (size_t i = 0; i < n_args; i++) {
        if (comma) put_char(j, ',');
        comma = 1;
        put_string(j, args[i].key);
        put_char(j, ':');
        switch (args[i].type) {
        case VOR_CHROME_ARG_STRING:
            if (args[i].string)
                put_string(j, args[i].string);
            else
                PUT_LITERAL(j, "null");
            break;
        case VOR_CHROME_ARG_INT: put_i64(j, args[i].integer); break;
        case VOR_CHROME_ARG_DOUBLE: put_double(j, args[i].number); break;
        case VOR_CHROME_ARG_UINT: put_u64(j, args[i].count); break;
        case VOR_CHROME_ARG_BOOL:
            if (args[i].integer)
                PUT_LITERAL(j, "true");
            else
                PUT_LITERAL(j, "false");
            break;
        default: PUT_LITERAL(j, "null"); break;
        }
    }
}

/* ---- Opening and closing ---------------------------------------------------------------- */

static vor_chrome_json *open_sink(int fd, FILE *stream, int own, size_t buffer_bytes) {
    if (buffer_bytes == 0) buffer_bytes = VOR_CHROME_JSON_DEFAULT_BUFFER_BYTES;
    if (buffer_bytes < VOR_CHROME_JSON_MIN_BUFFER_BYTES) buffer_bytes = VOR_CHROME_JSON_MIN_BUFFER_BYTES;
    if (buffer_bytes > VOR_CHROME_JSON_MAX_BUFFER_BYTES) buffer_bytes = VOR_CHROME_JSON_MAX_BUFFER_BYTES;
    vor_chrome_json *j = calloc(1, sizeof *j);
    char *buf = malloc(buffer_bytes);
    if (j == NULL || buf == NULL) {
        free(j);
        free(buf);
        errno = ENOMEM;
        return NULL;
    }
    j->buf = buf;
    j->cap = buffer_bytes;
    j->fd = fd;
    if (stream == NULL) {
        off_t at = lseek(fd, 0, SEEK_CUR); /* -1 on a pipe: no file-size limit applies there */
        j->offset = at > 0 ? (uint64_t)at : 0;
    }
    j->stream = stream;
    j->own = own;
    j->first = 1;
    j->buf[j->len++] = '['; /* the file's first byte: catapult tests for it */
    return j;
}

vor_chrome_json *vor_chrome_json_open_fd(int fd, int own_fd, size_t buffer_bytes) {
    return open_sink(fd, NULL, own_fd, buffer_bytes);
}

vor_chrome_json *vor_chrome_json_open_stream(FILE *stream, int own_stream, size_t buffer_bytes) {
    if (stream == NULL) {
        errno = EINVAL;
        return NULL;
    }
    return open_sink(-1, stream, own_stream, buffer_bytes);
}

int vor_chrome_json_flush(vor_chrome_json *j) {
    if (j->len == 0) return j->error ? -1 : 0;
    return flush_buffer(j);
}

int vor_chrome_json_close(vor_chrome_json *j) {
    if (j == NULL) return 0;
    PUT_LITERAL(j, "\n]\n");
    flush_buffer(j);
    int error = j->error;
    if (j->own) {
        if (j->stream) {
            if (fclose(j->stream) != 0 && !error) error = errno ? errno : EIO;
        } else if (j->fd >= 0) {
            if (close(j->fd) != 0 && !error) error = errno ? errno : EIO;
        }
    }
    free(j->buf);
    free(j);
    errno = error;
    return error ? -1 : 0;
}

void vor_chrome_json_get_stats(const vor_chrome_json *j, vor_chrome_json_stats *out) {
    *out = j->stats;
    out->write_errno = j->error;
}

/* ---- Events ------------------------------------------------------------------------------ */

/* {"ph":"X","ts":..,"dur":..,"pid":..,"tid":.., : the part every X event formats. */
static void put_complete_head(vor_chrome_json *j, uint64_t pid, uint64_t tid, int64_t ts_ns, int64_t dur_ns) {
    PUT_LITERAL(j, "{\"ph\":\"X\",\"ts\":");
    put_us(j, ts_ns);
    PUT_LITERAL(j, ",\"dur\":");
    put_us(j, dur_ns);
    PUT_LITERAL(j, ",\"pid\":");
    put_u64(j, pid);
    PUT_LITERAL(j, ",\"tid\":");
    put_u64(j, tid);
    put_char(j, ',');
}

int vor_chrome_json_complete(vor_chrome_json *j, const char *name, const char *cat, uint64_t pid, uint64_t tid,
                             int64_t ts_ns, int64_t dur_ns, const char *file, uint32_t line, const vor_chrome_arg *args,
                             size_t n_args) {
    if (j->error) return -1;
    begin_event(j, EVENT_FIXED_BYTES + string_estimate(name) + string_estimate(cat) + string_estimate(file) +
                       args_estimate(args, n_args));
    put_complete_head(j, pid, tid, ts_ns, dur_ns);
    if (cat) {
        PUT_LITERAL(j, "\"cat\":");
        put_string(j, cat);
        put_char(j, ',');
    }
    PUT_LITERAL(j, "\"name\":");
    put_string(j, name);
    if (file || n_args) {
        PUT_LITERAL(j, ",\"args\":{");
        if (file) {
            PUT_LITERAL(j, "\"file\":");
            put_string(j, file);
            PUT_LITERAL(j, ",\"line\":");
            put_u64(j, line);
        }
        put_args(j, args, n_args, file != NULL);
        put_char(j, '}');
    }
    put_char(j, '}');
    return j->error ? -1 : 0;
}

/* Appends to a plain memory string (room checked by the caller's size computation). */
static size_t append_literal(char *out, const char *s) {
    size_t n = strlen(s);
    memcpy(out, s, n);
    return n;
}

static size_t append_string(char *out, const char *s) {
    size_t o = 0;
    out[o++] = '"';
    if (s) o += vor_chrome_json_escape(s, strlen(s), out + o, NULL);
    out[o++] = '"';
    return o;
}

int vor_chrome_prepare_complete(vor_chrome_prepared *out, const char *name, const char *cat, const char *file,
                                uint32_t line) {
    out->bytes = NULL;
    out->length = 0;
    size_t cap = 64 + string_estimate(name) + string_estimate(cat) + string_estimate(file) + 2 * MAX_UNIT_OUT;
    char *p = malloc(cap);
    if (p == NULL) return 0;
    /* The same text as vor_chrome_json_complete writes after "tid":N, */
    size_t o = 0;
    if (cat) {
        o += append_literal(p + o, "\"cat\":");
        o += append_string(p + o, cat);
        p[o++] = ',';
    }
    o += append_literal(p + o, "\"name\":");
    o += append_string(p + o, name);
    if (file) {
        o += append_literal(p + o, ",\"args\":{\"file\":");
        o += append_string(p + o, file);
        o += append_literal(p + o, ",\"line\":");
        o += format_u64(line, p + o);
        p[o++] = '}';
    }
    p[o++] = '}';
    char *shrunk = realloc(p, o);
    out->bytes = shrunk ? shrunk : p;
    out->length = o;
    out->args_open = file != NULL;
    return 1;
}

void vor_chrome_prepared_free(vor_chrome_prepared *p) {
    free(p->bytes);
    p->bytes = NULL;
    p->length = 0;
}

int vor_chrome_json_complete_prepared(vor_chrome_json *j, const vor_chrome_prepared *p, uint64_t pid, uint64_t tid,
                                      int64_t ts_ns, int64_t dur_ns, const vor_chrome_arg *args, size_t n_args) {
    if (j->error) return -1;
    if (n_args == 0) { /* the common case: four numbers and one copy */
        begin_event(j, EVENT_FIXED_BYTES + p->length);
        put_complete_head(j, pid, tid, ts_ns, dur_ns);
        put_bytes(j, p->bytes, p->length);
        return j->error ? -1 : 0;
    }
    begin_event(j, EVENT_FIXED_BYTES + p->length + args_estimate(args, n_args));
    put_complete_head(j, pid, tid, ts_ns, dur_ns);
    if (p->args_open) { /* the text without its closing "}}", the args, then "}}" */
        put_bytes(j, p->bytes, p->length - 2);
        put_args(j, args, n_args, 1);
    } else {
        put_bytes(j, p->bytes, p->length - 1);
        PUT_LITERAL(j, ",\"args\":{");
        put_args(j, args, n_args, 0);
    }
    PUT_LITERAL(j, "}}");
    return j->error ? -1 : 0;
}

/* {"ph":"M","ts":0,"pid":..,"tid":..,"name":"<what>","args":{ */
static void put_metadata_head(vor_chrome_json *j, uint64_t pid, uint64_t tid, const char *what, size_t estimate) {
    begin_event(j, EVENT_FIXED_BYTES + estimate);
    PUT_LITERAL(j, "{\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_u64(j, pid);
    PUT_LITERAL(j, ",\"tid\":");
    put_u64(j, tid);
    PUT_LITERAL(j, ",\"name\":");
    put_string(j, what);
    PUT_LITERAL(j, ",\"args\":{");
}

int vor_chrome_json_process_name(vor_chrome_json *j, uint64_t pid, const char *name, const vor_chrome_arg *args,
                                 size_t n_args) {
    if (j->error) return -1;
    put_metadata_head(j, pid, pid, "process_name", string_estimate(name) + args_estimate(args, n_args));
    PUT_LITERAL(j, "\"name\":");
    put_string(j, name);
    put_args(j, args, n_args, 1);
    PUT_LITERAL(j, "}}");
    return j->error ? -1 : 0;
}

int vor_chrome_json_thread_name(vor_chrome_json *j, uint64_t pid, uint64_t tid, const char *name) {
    if (j->error) return -1;
    put_metadata_head(j, pid, tid, "thread_name", string_estimate(name));
    PUT_LITERAL(j, "\"name\":");
    put_string(j, name);
    PUT_LITERAL(j, "}}");
    return j->error ? -1 : 0;
}

int vor_chrome_json_thread_sort_index(vor_chrome_json *j, uint64_t pid, uint64_t tid, int64_t index) {
    if (j->error) return -1;
    put_metadata_head(j, pid, tid, "thread_sort_index", 0);
    PUT_LITERAL(j, "\"sort_index\":");
    put_i64(j, index);
    PUT_LITERAL(j, "}}");
    return j->error ? -1 : 0;
}

int vor_chrome_json_counter(vor_chrome_json *j, uint64_t pid, const char *name, int64_t ts_ns, const char *series,
                            double value) {
    if (j->error) return -1;
    if (!isfinite(value)) {
        j->stats.non_finite_omitted++;
        return 0;
    }
    begin_event(j, EVENT_FIXED_BYTES + string_estimate(name) + string_estimate(series));
    PUT_LITERAL(j, "{\"ph\":\"C\",\"ts\":");
    put_us(j, ts_ns);
    PUT_LITERAL(j, ",\"pid\":");
    put_u64(j, pid);
    PUT_LITERAL(j, ",\"name\":");
    put_string(j, name);
    PUT_LITERAL(j, ",\"args\":{");
    put_string(j, series ? series : "value");
    put_char(j, ':');
    put_double(j, value);
    PUT_LITERAL(j, "}}");
    return j->error ? -1 : 0;
}
