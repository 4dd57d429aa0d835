/* reader_scan.c: the framing of 1.1 records (docs/FORMAT.md §3): finding the next record,
 * telling a torn tail from damage, reporting damage and resynchronising.
 *
 * A record is [u32 size][u16 size check][u32 record check][body]. The size check is read
 * before the size is trusted, so a damaged size is recognised as damage, not taken for
 * a record still being written. After damage the reader looks for the next position
 * where both checks hold over a complete record and reads on from there: damage costs the
 * damaged record only.
 *
 * A torn tail (a writer mid-write, or killed) and damage look alike when a size that
 * passes its check points past the end of the input: the rule is that it is damage if an
 * intact record exists further on, else the reader waits. Looking for one is a scan of
 * the bytes after the record, done incrementally: positions once dismissed are never
 * looked at again, so a reader polling a growing file scans each new byte once. Heads
 * that hold but whose record is not complete yet are kept as candidates (a few; the
 * lowest are dropped first, since a record still arriving can only be the last one).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "capture_format.h"
#include "capture_index.h"
#include "crc32c.h"
#include "reader_internal.h"

#define SCAN_CHUNK_BYTES (1u << 20)

/* The body size of the head at p if its size check holds and the size is allowed, else 0. */
static uint32_t head_body_size(const uint8_t *p) {
    uint32_t body = vor_get_u32le(p) & VOR_RECORD_SIZE_MASK;
    if (body < VOR_RECORD_MIN_BODY || body > VOR_READER_MAX_RECORD_BYTES) return 0;
    uint32_t check = (uint32_t)p[4] | (uint32_t)p[5] << 8;
    return (vor_crc32c(0, p, 4) & 0xFFFFu) == check ? body : 0;
}

/* 1 if the record check of the complete record at p holds. */
static int record_check_holds(const uint8_t *p, uint32_t body) {
#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
    /* (Fuzzing builds skip it so that mutated bodies reach the decoder.) */
    (void)p;
    (void)body;
    return 1;
#else
    return vor_crc32c(vor_crc32c(0, p, 6), p + VOR_RECORD_HEAD_BYTES, body) == vor_get_u32le(p + 6);
#endif
}

size_t vor_capture_intact_record(const uint8_t *p, size_t available) {
    if (available < VOR_RECORD_HEAD_BYTES) return 0;
    uint32_t body = head_body_size(p);
    if (body == 0 || available - VOR_RECORD_HEAD_BYTES < body) return 0;
    return record_check_holds(p, body) ? VOR_RECORD_HEAD_BYTES + (size_t)body : 0;
}

static void forget_scan(vor_reader *r, uint64_t from) {
    r->scan_for = from;
    r->scan_at = from;
    r->n_candidates = 0;
}

static void add_candidate(vor_reader *r, uint64_t at) {
    if (r->n_candidates == READER_MAX_CANDIDATES) {
        memmove(r->candidates, r->candidates + 1, (READER_MAX_CANDIDATES - 1) * sizeof r->candidates[0]);
        r->n_candidates--;
    }
    r->candidates[r->n_candidates++] = at;
}

/* Whether the record at `at` (whose head holds) is complete and intact: 1 yes, 0 complete
 * and not intact, 2 not complete yet, -1 I/O error. */
static int candidate_state(vor_reader *r, uint64_t at) {
    const uint8_t *head = vor_reader_input(r, at, VOR_RECORD_HEAD_BYTES);
    if (head == NULL) return r->state < 0 ? -1 : 2;
    uint32_t body = head_body_size(head);
    const uint8_t *rec = vor_reader_input(r, at, VOR_RECORD_HEAD_BYTES + (size_t)body);
    if (rec == NULL) return r->state < 0 ? -1 : 2;
    return record_check_holds(rec, body);
}

/* The first intact record at or after `from`: 1 and *found, 0 when there is none in the
 * input so far (the scan goes on from there next time), -1 on an I/O error. */
static int find_intact(vor_reader *r, uint64_t from, uint64_t *found) {
    if (r->scan_for != from) forget_scan(r, from);
    for (uint32_t i = 0; i < r->n_candidates;) {
        int s = candidate_state(r, r->candidates[i]);
        if (s < 0) return -1;
        if (s == 1) {
            *found = r->candidates[i];
            return 1;
        }
        if (s == 0) {
            memmove(r->candidates + i, r->candidates + i + 1, (r->n_candidates - i - 1) * sizeof r->candidates[0]);
            r->n_candidates--;
        } else {
            i++;
        }
    }
    for (;;) {
        const uint8_t *p;
        size_t got = vor_reader_input_some(r, r->scan_at, SCAN_CHUNK_BYTES + VOR_RECORD_HEAD_BYTES, &p);
        if (r->state < 0) return -1;
        if (got < VOR_RECORD_HEAD_BYTES) return 0;
        size_t positions = got - VOR_RECORD_HEAD_BYTES + 1, k = 0;
        for (; k < positions; k++) {
            if (head_body_size(p + k) == 0) continue;
            /* A head that holds: look at its record (which may move the input window). */
            uint64_t at = r->scan_at + k;
            r->scan_at = at + 1;
            int s = candidate_state(r, at);
            if (s < 0) return -1;
            if (s == 1) {
                *found = at;
                return 1;
            }
            if (s == 2) add_candidate(r, at);
            break;
        }
        if (k == positions) r->scan_at += positions;
    }
}

/* The damage report being written (the last one), or NULL once the reports are full. */
static reader_damage *current_damage(vor_reader *r) {
    uint64_t i = r->damage_count - 1;
    return i < VOR_READER_MAX_DAMAGE_REPORTS ? &r->damage[i] : NULL;
}

static void report(vor_reader *r, uint64_t at, uint64_t length, const char *fmt, va_list args) {
    r->damage_count++;
    reader_damage *d = current_damage(r);
    if (d == NULL) return;
    d->offset = at;
    d->length = length;
    vsnprintf(d->problem, sizeof d->problem, fmt, args);
}

void vor_reader_damaged(vor_reader *r, uint64_t at, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    report(r, at, 1, fmt, args);
    va_end(args);
    r->skipping = 1;
    r->skip_from = at;
    forget_scan(r, at + 1);
}

/* A record whose checks hold but whose contents do not decode: its extent is right, so
 * reading goes on right after it. */
void vor_reader_damaged_record(vor_reader *r, uint64_t at, uint64_t length, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    report(r, at, length, fmt, args);
    va_end(args);
    r->offset = at + length;
}

static void damaged_tail(vor_reader *r, uint64_t at, uint64_t found, uint32_t body) {
    r->damage_count++;
    reader_damage *d = current_damage(r);
    if (d != NULL) {
        d->offset = at;
        d->length = found - at;
        snprintf(d->problem, sizeof d->problem,
                 "record size %u points past the end of the input, and an intact record follows at byte %llu", body,
                 (unsigned long long)found);
    }
    r->offset = found;
    forget_scan(r, found);
}

reader_record_status vor_reader_locate_record(vor_reader *r, uint64_t *at, const uint8_t **body, uint32_t *size,
                                              int *compressed) {
    for (;;) {
        if (r->skipping) {
            uint64_t found = 0;
            int f = find_intact(r, r->skip_from + 1, &found);
            if (f < 0) return RECORD_ERROR;
            uint64_t resume = f ? found : r->scan_at;
            for (uint32_t i = 0; !f && i < r->n_candidates; i++)
                if (r->candidates[i] < resume) resume = r->candidates[i];
            /* Skipped so far: up to the intact record, or the end of the input. */
            reader_damage *d = current_damage(r);
            if (d != NULL) d->length = (f ? found : r->input_end) - r->skip_from;
            r->offset = resume; /* bytes before it are dismissed: a memory reader may drop them */
            if (!f) return RECORD_WAIT;
            r->skipping = 0;
            forget_scan(r, found);
        }
        uint64_t pos = r->offset;
        const uint8_t *head = vor_reader_input(r, pos, VOR_RECORD_HEAD_BYTES);
        if (head == NULL) return r->state < 0 ? RECORD_ERROR : RECORD_WAIT; /* nothing can follow yet */
        uint32_t field = vor_get_u32le(head);
        uint32_t n = head_body_size(head);
        if (n == 0) {
            uint32_t claimed = field & VOR_RECORD_SIZE_MASK;
            if (claimed < VOR_RECORD_MIN_BODY || claimed > VOR_READER_MAX_RECORD_BYTES)
                vor_reader_damaged(r, pos, "record size %u is outside %u..%u", claimed, VOR_RECORD_MIN_BODY,
                                   VOR_READER_MAX_RECORD_BYTES);
            else
                vor_reader_damaged(r, pos, "record size field fails its check");
            continue;
        }
        const uint8_t *rec = vor_reader_input(r, pos, VOR_RECORD_HEAD_BYTES + (size_t)n);
        if (rec == NULL) {
            if (r->state < 0) return RECORD_ERROR;
            /* A torn tail, unless an intact record follows. */
            uint64_t found;
            int f = find_intact(r, pos + 1, &found);
            if (f < 0) return RECORD_ERROR;
            if (f == 0) return RECORD_WAIT;
            /* The scan reads on from the file: a growing one may have completed this record
             * meanwhile (what follows it is then the intact record found), which is no damage. */
            if (vor_reader_input(r, pos, VOR_RECORD_HEAD_BYTES + (size_t)n) != NULL) continue;
            damaged_tail(r, pos, found, n);
            continue;
        }
        if (!record_check_holds(rec, n)) {
            vor_reader_damaged(r, pos, "record check value does not match its contents");
            continue;
        }
        *at = pos;
        *body = rec + VOR_RECORD_HEAD_BYTES;
        *size = n;
        *compressed = (field & VOR_RECORD_COMPRESSED) != 0;
        forget_scan(r, pos + VOR_RECORD_HEAD_BYTES + n);
        return RECORD_READ;
    }
}

uint64_t vor_reader_damage_count(const vor_reader *r) {
    return r ? r->damage_count : 0;
}

int vor_reader_get_damage(const vor_reader *r, uint32_t i, vor_reader_damage *out) {
    if (r == NULL || out == NULL || i >= r->damage_count || i >= VOR_READER_MAX_DAMAGE_REPORTS) return 0;
    out->offset = r->damage[i].offset;
    out->length = r->damage[i].length;
    out->problem = r->damage[i].problem;
    return 1;
}
