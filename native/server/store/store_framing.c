/*
 * store_framing.c - checks a capture's framing as its bytes arrive, before any byte is stored.
 *
 * What is checked, in stream order (docs/FORMAT.md §2, §3.1; 1.0 captures too):
 *   - the header, by the C reader itself (fed exactly the header's bytes): magic, version,
 *     size check, header check, a well-formed body. A foreign file fails here, at byte 0.
 *   - every record: its size and size check (1.1), a size in range, and its CRC-32C over the
 *     whole record. A damaged byte anywhere fails here, at the record's offset.
 *   - the end record (kind 2): nothing may follow it.
 * Only verified bytes are handed on (the emit callback), whole records at a time, so what the
 * store writes always ends at a record boundary and a cut upload reads back to its last record.
 *
 * Why not decode every record here: decoding is the reader's full work (LZ4 and every scope),
 * measured at 45-75 MB/s for flame captures on this project's machines, while the framing
 * check is a hardware CRC-32C over the bytes (GB/s). So uploads run at network speed, and the
 * indexer thread (store_indexer.c) decodes each stored capture right behind its upload with
 * the same reader; a capture whose checked records do not decode (a writer that computes valid
 * checks over malformed contents) is refused there and deleted.
 *
 * Bytes are checked in place when a record lies inside one fed buffer (no copy); only a record
 * split across feeds is assembled in `pending`, which therefore holds at most one record.
 */
#include "store.h"

#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

enum {
    MAGIC_BYTES = 8,
    HEAD_11 = 10,                 /* [u32 size][u16 size check][u32 record check] */
    HEAD_10 = 8,                  /* [u32 length][u32 check] */
    MAX_HEADER_BODY = 1u << 20,
    KIND_END = 2
};

static const unsigned char magic[MAGIC_BYTES] = {0x89, 'V', 'O', 'R', '\r', '\n', 0x1a, '\n'};

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

void framing_init(framing_check *c)
{
    memset(c, 0, sizeof *c);
}

void framing_free(framing_check *c)
{
    free(c->pending);
    memset(c, 0, sizeof *c);
}

static framing_status bad(framing_check *c, uint64_t at, const char *what)
{
    c->bad = true;
    snprintf(c->problem, sizeof c->problem, "byte %llu: %.200s", (unsigned long long)at, what);
    return FRAMING_BAD;
}

static bool keep(framing_check *c, const unsigned char *p, size_t n)
{
    if (c->pending_len + n > c->pending_cap) {
        size_t cap = c->pending_cap ? c->pending_cap : 4096;
        while (cap < c->pending_len + n)
            cap *= 2;
        unsigned char *np = realloc(c->pending, cap);
        if (!np)
            return false;
        c->pending = np;
        c->pending_cap = cap;
    }
    memcpy(c->pending + c->pending_len, p, n);
    c->pending_len += n;
    return true;
}

/* The header's total length from its first 16 bytes, or 0 when it is not a capture. */
static uint64_t header_length(framing_check *c, const unsigned char *p, const char **why)
{
    if (memcmp(p, magic, MAGIC_BYTES) != 0) {
        *why = "not a vor capture (bad magic)";
        return 0;
    }
    if (le16(p + 8) != 1) {
        *why = "unsupported capture format (major version is not 1)";
        return 0;
    }
    uint32_t body = le32(p + 12);
    if (body > MAX_HEADER_BODY) {
        *why = "damaged header (body size over 1 MiB)";
        return 0;
    }
    c->legacy = le16(p + 10) == 0;
    return c->legacy ? 16u + body + 4u : 20u + body + 4u;
}

/* The header is complete in h[0..n): the C reader must accept it. */
static bool header_ok(framing_check *c, const unsigned char *h, size_t n)
{
    vor_reader *r = vor_reader_open_memory();
    if (!r) {
        snprintf(c->problem, sizeof c->problem, "out of memory");
        return false;
    }
    bool ok = vor_reader_feed(r, h, n) && vor_reader_poll_header(r) == 1;
    if (!ok) {
        const char *e = vor_reader_error(r);
        const char *s = strstr(e, ": ");
        snprintf(c->problem, sizeof c->problem, "%s", *e ? (s ? s + 2 : e) : "damaged header");
    }
    vor_reader_close(r);
    return ok;
}

/* The decoded kind of a 1.1 body, or -1 when it cannot be told (it is then not an end). */
static int kind_11(const unsigned char *body, uint32_t size)
{
    uint32_t n = size & 0x7fffffffu;
    if (!(size & 0x80000000u))
        return body[0];
    /* varint D, then an LZ4 block: the first decoded byte is enough. */
    uint32_t i = 0;
    while (i < n && i < 10 && (body[i] & 0x80))
        i++;
    if (i >= n || i >= 10)
        return -1;
    i++;
    unsigned char first[16];
    int got = LZ4_decompress_safe_partial((const char *)body + i, (char *)first, (int)(n - i), 1, (int)sizeof first);
    return got >= 1 ? first[0] : -1;
}

/* The decoded kind of a 1.0 record after its 8-byte head, or -1 (compressed: not an end). */
static int kind_10(const unsigned char *rest, uint32_t n)
{
    uint64_t h = 0;
    uint32_t i = 0;
    for (int shift = 0; i < n && shift < 64; shift += 7) {
        unsigned char b = rest[i++];
        h |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if ((h & 1) && i < n)
                return rest[i];
            return -1;
        }
    }
    return -1;
}

/*
 * Checks the record at p (avail bytes there). Returns its total length, 0 when more bytes are
 * needed (*need: how many in all), or -1 when it is bad (c->problem set).
 */
static int64_t check_record(framing_check *c, const unsigned char *p, size_t avail, size_t *need)
{
    uint64_t at = c->checked;
    if (c->legacy) {
        if (avail < HEAD_10) {
            *need = HEAD_10;
            return 0;
        }
        uint32_t len = le32(p);
        if (len < 6 || len > VOR_READER_MAX_RECORD_BYTES) {
            bad(c, at, "damaged record (length out of range)");
            return -1;
        }
        if (avail < 4u + (size_t)len) {
            *need = 4u + (size_t)len;
            return 0;
        }
        uint32_t crc = vor_crc32c(vor_crc32c(0, p, 4), p + 8, len - 4);
        if (crc != le32(p + 4)) {
            bad(c, at, "damaged record (check mismatch)");
            return -1;
        }
        if (kind_10(p + 8, len - 4) == KIND_END)
            c->ended = true;
        return 4 + (int64_t)len;
    }
    if (avail < HEAD_11) {
        *need = HEAD_11;
        return 0;
    }
    uint32_t size = le32(p), n = size & 0x7fffffffu;
    if ((uint16_t)(vor_crc32c(0, p, 4) & 0xffffu) != le16(p + 4)) {
        bad(c, at, "damaged record (size check mismatch)");
        return -1;
    }
    if (n == 0 || n > VOR_READER_MAX_RECORD_BYTES) {
        bad(c, at, "damaged record (size out of range)");
        return -1;
    }
    if (avail < HEAD_11 + (size_t)n) {
        *need = HEAD_11 + (size_t)n;
        return 0;
    }
    if (vor_crc32c(vor_crc32c(0, p, 6), p + HEAD_11, n) != le32(p + 6)) {
        bad(c, at, "damaged record (record check mismatch)");
        return -1;
    }
    if (kind_11(p + HEAD_11, size) == KIND_END)
        c->ended = true;
    return HEAD_11 + (int64_t)n;
}

static framing_status emit_run(framing_check *c, framing_emit_fn emit, void *user, const unsigned char *p, size_t n)
{
    if (n == 0)
        return FRAMING_MORE;
    if (emit(user, p, n) != 0)
        return bad(c, c->checked - n, "storage failed");
    return FRAMING_MORE;
}

/* The header, assembled in pending. */
static framing_status feed_header(framing_check *c, const unsigned char **in, size_t *n, framing_emit_fn emit,
                                  void *user)
{
    if (c->pending_len < 16) {
        size_t take = 16 - c->pending_len < *n ? 16 - c->pending_len : *n;
        if (!keep(c, *in, take))
            return bad(c, 0, "out of memory");
        *in += take;
        *n -= take;
        /* A short prefix is checked against the magic at once. */
        size_t cmp = c->pending_len < MAGIC_BYTES ? c->pending_len : MAGIC_BYTES;
        if (memcmp(c->pending, magic, cmp) != 0)
            return bad(c, 0, "not a vor capture (bad magic)");
        if (c->pending_len < 16)
            return FRAMING_MORE;
        const char *why = NULL;
        c->header_bytes = header_length(c, c->pending, &why);
        if (!c->header_bytes)
            return bad(c, 0, why);
    }
    size_t want = (size_t)c->header_bytes - c->pending_len;
    size_t take = want < *n ? want : *n;
    if (!keep(c, *in, take))
        return bad(c, 0, "out of memory");
    *in += take;
    *n -= take;
    if (c->pending_len < c->header_bytes)
        return FRAMING_MORE;
    if (!header_ok(c, c->pending, c->pending_len)) {
        char why[sizeof c->problem];
        snprintf(why, sizeof why, "%s", c->problem);
        return bad(c, 0, why);
    }
    c->header_done = true;
    c->checked = c->header_bytes;
    framing_status st = emit_run(c, emit, user, c->pending, c->pending_len);
    c->pending_len = 0;
    return st;
}

framing_status framing_feed(framing_check *c, const void *data, size_t n, framing_emit_fn emit, void *user)
{
    const unsigned char *in = data;
    if (c->bad)
        return FRAMING_BAD;
    if (c->ended) {
        if (n == 0)
            return FRAMING_END;
        return bad(c, c->checked, "bytes after the end record (nothing may follow it)");
    }
    if (!c->header_done) {
        framing_status st = feed_header(c, &in, &n, emit, user);
        if (st != FRAMING_MORE || !c->header_done)
            return st;
    }
    /* A record begun in an earlier feed: complete it in pending first. */
    while (c->pending_len > 0) {
        size_t need = 0;
        int64_t len = check_record(c, c->pending, c->pending_len, &need);
        if (len < 0)
            return FRAMING_BAD;
        if (len > 0) {
            c->checked += (uint64_t)len;
            c->records++;
            framing_status st = emit_run(c, emit, user, c->pending, (size_t)len);
            memmove(c->pending, c->pending + len, c->pending_len - (size_t)len);
            c->pending_len -= (size_t)len;
            if (st != FRAMING_MORE)
                return st;
            if (c->ended)
                return c->pending_len || n ? bad(c, c->checked, "bytes after the end record (nothing may follow it)")
                                           : FRAMING_END;
            continue;
        }
        if (n == 0)
            return FRAMING_MORE;
        size_t take = need - c->pending_len < n ? need - c->pending_len : n;
        if (!keep(c, in, take))
            return bad(c, c->checked, "out of memory");
        in += take;
        n -= take;
    }
    /* Whole records straight from the input; one emit for the run. */
    const unsigned char *run = in;
    size_t run_len = 0;
    while (n > 0) {
        size_t need = 0;
        int64_t len = check_record(c, in, n, &need);
        if (len < 0) {
            char why[sizeof c->problem];
            snprintf(why, sizeof why, "%s", c->problem);
            c->bad = false;
            emit_run(c, emit, user, run, run_len); /* the records before it are good */
            c->bad = true;
            snprintf(c->problem, sizeof c->problem, "%s", why);
            return FRAMING_BAD;
        }
        if (len == 0)
            break;
        c->checked += (uint64_t)len;
        c->records++;
        in += len;
        n -= (size_t)len;
        run_len += (size_t)len;
        if (c->ended)
            break;
    }
    framing_status st = emit_run(c, emit, user, run, run_len);
    if (st != FRAMING_MORE)
        return st;
    if (c->ended)
        return n ? bad(c, c->checked, "bytes after the end record (nothing may follow it)") : FRAMING_END;
    if (n > 0 && !keep(c, in, n))
        return bad(c, c->checked, "out of memory");
    return FRAMING_MORE;
}
