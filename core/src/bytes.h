/* bytes.h: little-endian integers, LEB128 varints, zigzag and the XOR float encoding of
 * the .vor format, over bounded cursors.
 *
 * The writer side appends to a growable buffer that refuses to grow past its cap (a
 * failed append sets `failed`, checked once per record). The reader side never reads
 * past `end`: every get returns 0 on a short or malformed input and sets `failed`, so a
 * decoder reads a whole record and checks one flag at the end.
 */
#ifndef VOR_BYTES_H
#define VOR_BYTES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* ---- Writing ---- */

typedef struct vor_out {
    uint8_t *data;
    size_t size, capacity, max_capacity;
    int failed; /* out of memory or over max_capacity */
} vor_out;

static inline int vor_out_reserve(vor_out *o, size_t extra) {
    if (o->failed) return 0;
    if (o->size + extra <= o->capacity) return 1;
    size_t want = o->capacity ? o->capacity : 256;
    while (want < o->size + extra) want *= 2;
    if (want > o->max_capacity) want = o->max_capacity;
    if (want < o->size + extra) {
        o->failed = 1;
        return 0;
    }
    uint8_t *p = (uint8_t *)realloc(o->data, want);
    if (p == NULL) {
        o->failed = 1;
        return 0;
    }
    o->data = p;
    o->capacity = want;
    return 1;
}

static inline void vor_out_bytes(vor_out *o, const void *bytes, size_t n) {
    if (!vor_out_reserve(o, n)) return;
    if (n) memcpy(o->data + o->size, bytes, n);
    o->size += n;
}

static inline void vor_out_u8(vor_out *o, uint8_t v) {
    vor_out_bytes(o, &v, 1);
}

static inline void vor_out_varint(vor_out *o, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    vor_out_bytes(o, tmp, n);
}

/* Unchecked writes for hot encoders: the caller reserved room first (vor_out_reserve,
 * VOR_VARINT_MAX_BYTES per varint) and writes through a pointer, so a field costs its
 * bytes and no capacity check. Returns the position after the varint. The bytes are those
 * of vor_out_varint. */
#define VOR_VARINT_MAX_BYTES 10u
static inline uint8_t *vor_put_varint(uint8_t *p, uint64_t v) {
    if (v < 0x80) {
        *p = (uint8_t)v;
        return p + 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return p + 2;
    }
    do {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    } while (v >= 0x80);
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t vor_zigzag(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t vor_unzigzag(uint64_t v) {
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void vor_out_svarint(vor_out *o, int64_t v) {
    vor_out_varint(o, vor_zigzag(v));
}

/* A u32 in place, little-endian (a field patched after what follows it is known). */
static inline void vor_put_u32le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t vor_get_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void vor_out_u16le(vor_out *o, uint16_t v) {
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    vor_out_bytes(o, b, 2);
}

static inline void vor_out_u32le(vor_out *o, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    vor_out_bytes(o, b, 4);
}

static inline void vor_out_u64le(vor_out *o, uint64_t v) {
    vor_out_u32le(o, (uint32_t)v);
    vor_out_u32le(o, (uint32_t)(v >> 32));
}

static inline void vor_out_f64le(vor_out *o, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    vor_out_u64le(o, bits);
}

/* A string: varint length, then the bytes (at most max_bytes of them, cut at a UTF-8
 * character boundary: utf8.h). */
static inline void vor_out_string(vor_out *o, const char *s, size_t max_bytes) {
    size_t n = s ? vor_utf8_cut(s, max_bytes) : 0;
    vor_out_varint(o, n);
    vor_out_bytes(o, s, n);
}

/* XOR float encoding: x = bits(v) ^ bits(previous). 0 -> one zero byte; else a byte
 * (leading zero bytes << 4 | n) followed by the n significant bytes of x, low first. */
static inline void vor_out_xor_f64(vor_out *o, double v, double previous) {
    uint64_t a, b;
    memcpy(&a, &v, 8);
    memcpy(&b, &previous, 8);
    uint64_t x = a ^ b;
    if (x == 0) {
        vor_out_u8(o, 0);
        return;
    }
    unsigned lead = (unsigned)__builtin_clzll(x) / 8u;
    unsigned trail = (unsigned)__builtin_ctzll(x) / 8u;
    unsigned n = 8u - lead - trail;
    uint8_t tmp[9];
    tmp[0] = (uint8_t)(lead << 4 | n);
    for (unsigned i = 0; i < n; i++) tmp[1 + i] = (uint8_t)(x >> (8u * (trail + i)));
    vor_out_bytes(o, tmp, 1 + n);
}

/* A 1.1 user value written in full: its bits as xorf64 against +0.0 (the significant
 * bytes), except +0.0 itself, which is 0x80 (L = 8, N = 0): 0x00 means "unchanged". */
static inline void vor_out_full_f64(vor_out *o, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    if (bits == 0)
        vor_out_u8(o, 0x80);
    else
        vor_out_xor_f64(o, v, 0.0);
}

/* ---- Reading ---- */

typedef struct vor_in {
    const uint8_t *p, *end;
    int failed;
} vor_in;

static inline size_t vor_in_left(const vor_in *in) {
    return (size_t)(in->end - in->p);
}

static inline uint8_t vor_in_u8(vor_in *in) {
    if (in->p >= in->end) {
        in->failed = 1;
        return 0;
    }
    return *in->p++;
}

static inline uint64_t vor_in_varint(vor_in *in) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (in->p >= in->end) break;
        uint8_t b = *in->p++;
        if (shift == 63 && b > 1) break; /* overflows 64 bits */
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) return v;
    }
    in->failed = 1;
    return 0;
}

static inline int64_t vor_in_svarint(vor_in *in) {
    return vor_unzigzag(vor_in_varint(in));
}

static inline uint32_t vor_in_u32le(vor_in *in) {
    if (vor_in_left(in) < 4) {
        in->failed = 1;
        in->p = in->end;
        return 0;
    }
    uint32_t v = (uint32_t)in->p[0] | (uint32_t)in->p[1] << 8 | (uint32_t)in->p[2] << 16 | (uint32_t)in->p[3] << 24;
    in->p += 4;
    return v;
}

static inline uint16_t vor_in_u16le(vor_in *in) {
    if (vor_in_left(in) < 2) {
        in->failed = 1;
        in->p = in->end;
        return 0;
    }
    uint16_t v = (uint16_t)(in->p[0] | in->p[1] << 8);
    in->p += 2;
    return v;
}

static inline uint64_t vor_in_u64le(vor_in *in) {
    uint64_t lo = vor_in_u32le(in);
    uint64_t hi = vor_in_u32le(in);
    return lo | hi << 32;
}

static inline double vor_in_f64le(vor_in *in) {
    uint64_t bits = vor_in_u64le(in);
    double v;
    memcpy(&v, &bits, 8);
    return v;
}

/* A string in place: *len bytes at the returned pointer (not NUL-terminated). */
static inline const uint8_t *vor_in_string(vor_in *in, size_t *len) {
    uint64_t n = vor_in_varint(in);
    if (in->failed || n > vor_in_left(in)) {
        in->failed = 1;
        *len = 0;
        return in->p;
    }
    const uint8_t *s = in->p;
    in->p += n;
    *len = (size_t)n;
    return s;
}

static inline double vor_in_xor_f64(vor_in *in, double previous) {
    uint8_t h = vor_in_u8(in);
    if (h == 0) return previous;
    unsigned lead = h >> 4, n = h & 15u;
    if (n == 0 || n > 8 || lead + n > 8 || vor_in_left(in) < n) {
        in->failed = 1;
        return previous;
    }
    unsigned trail = 8u - lead - n;
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++) x |= (uint64_t)in->p[i] << (8u * (trail + i));
    in->p += n;
    uint64_t b;
    memcpy(&b, &previous, 8);
    b ^= x;
    double v;
    memcpy(&v, &b, 8);
    return v;
}

/* A 1.1 user value (vor_out_full_f64): sets *unchanged for the byte 0x00, else returns
 * the value. */
static inline double vor_in_full_f64(vor_in *in, int *unchanged) {
    *unchanged = 0;
    if (in->p < in->end && (*in->p == 0x00 || *in->p == 0x80)) {
        *unchanged = *in->p == 0x00;
        in->p++;
        return 0.0;
    }
    return vor_in_xor_f64(in, 0.0); /* also fails an empty input */
}

#endif /* VOR_BYTES_H */
