/* capture_rewrite.c: copies a format 1.1 capture record by record, letting a caller change
 * the site declarations on the way (`vor symbolize` names functions that way).
 *
 * Format 1.1 records stand alone (docs/FORMAT.md §3: each is framed and compressed by
 * itself), so a record can be rewritten without touching the others: the header and every
 * record the caller does not change are copied byte for byte; a frame record that declares
 * sites is decoded, its site list rewritten (every other byte kept: the list is followed by
 * the rest of the record verbatim), and framed again by the writer's own framing
 * (vor_frame_capture_record: checks, LZ4 when it makes the body smaller). Damaged regions
 * the reader skipped (its damage list: offset and length) are copied as they are, so the
 * output is damaged exactly where the input was and nowhere else. A torn last record (a
 * capture still being written) is copied as it is too.
 *
 * Memory: one record at a time (at most 64 MiB, decoded and framed again).
 */
#include "cli.h"

#include <errno.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "capture_format.h"
#include "crc32c.h"
#include "record_encoder.h"

typedef struct rewriter {
    FILE *in, *out;
    const rewrite_editor *editor;
    uint8_t *record; /* the record as read: head and body */
    size_t record_cap;
    uint8_t *decoded; /* its decoded bytes */
    size_t decoded_cap;
    vor_out edited; /* the decoded record with its sites rewritten */
    vor_out framed; /* ... framed again */
    void *lz4;
    uint64_t offset; /* of the next byte of the input */
    uint64_t rewritten;
    char *err;
    size_t err_cap;
} rewriter;

static int fail(rewriter *w, const char *what) {
    snprintf(w->err, w->err_cap, "%s (at byte %llu)", what, (unsigned long long)w->offset);
    return -1;
}

static int reserve(uint8_t **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    uint8_t *p = realloc(*buf, need);
    if (!p) return -1;
    *buf = p;
    *cap = need;
    return 0;
}

/* Copies n bytes of the input to the output as they are. */
static int copy(rewriter *w, uint64_t n) {
    uint8_t chunk[1 << 16];
    while (n > 0) {
        size_t k = n < sizeof chunk ? (size_t)n : sizeof chunk;
        size_t got = fread(chunk, 1, k, w->in);
        if (got > 0 && fwrite(chunk, 1, got, w->out) != got) return -1;
        w->offset += got;
        n -= got;
        if (got < k) break; /* the end of the input */
    }
    return 0;
}

/* Reads a string of the decoded record; NULL when malformed. The result points into it
 * (not terminated): *len bytes. */
static const uint8_t *take(vor_in *in, size_t *len) {
    return vor_in_string(in, len);
}

/* Copies the decoded record to w->edited with its site list passed through the editor.
 * Returns 1 when something changed, 0 when not (or the record is not one to edit), -1 out
 * of memory. */
static int edit_record(rewriter *w, const uint8_t *raw, size_t n) {
    vor_in in = {raw, raw + n, 0};
    if (vor_in_u8(&in) != VOR_RECORD_FRAME) return 0;
    uint64_t flags = vor_in_varint(&in);
    if (in.failed || !(flags & VOR_FRAME_DECLARATIONS)) return 0;
    for (int i = 0; i < 4; i++) (void)vor_in_varint(&in); /* index, start, duration, overhead */
    uint64_t columns = vor_in_varint(&in);
    for (uint64_t i = 0; i < columns && !in.failed; i++) {
        size_t len;
        (void)vor_in_varint(&in);
        take(&in, &len);
        take(&in, &len);
    }
    if (in.failed) return 0; /* malformed: the reader skipped it; copy it as it is */
    const uint8_t *sites_at = in.p;
    uint64_t n_sites = vor_in_varint(&in);
    if (in.failed || n_sites > vor_in_left(&in)) return 0;
    w->edited.size = 0;
    vor_out_bytes(&w->edited, raw, (size_t)(sites_at - raw));
    vor_out_varint(&w->edited, n_sites);
    int changed = 0;
    for (uint64_t i = 0; i < n_sites; i++) {
        rewrite_site site;
        size_t name_len = 0, function_len = 0, file_len = 0;
        site.id = vor_in_varint(&in);
        const uint8_t *name = take(&in, &name_len), *function = take(&in, &function_len), *file = take(&in, &file_len);
        site.line = vor_in_varint(&in);
        site.module_id = vor_in_varint(&in);
        site.address = vor_in_varint(&in);
        if (in.failed) return 0;
        rewrite_names names = {NULL, NULL, NULL, 0};
        int edit = w->editor->edit(w->editor->context, &site, &names);
        changed |= edit;
        vor_out_varint(&w->edited, site.id);
        if (edit) {
            vor_out_string(&w->edited, names.name, VOR_MAX_NAME_BYTES);
            vor_out_string(&w->edited, names.function, VOR_MAX_NAME_BYTES);
            vor_out_string(&w->edited, names.file, VOR_MAX_FILE_BYTES);
            vor_out_varint(&w->edited, names.line);
        } else {
            vor_out_varint(&w->edited, name_len);
            vor_out_bytes(&w->edited, name, name_len);
            vor_out_varint(&w->edited, function_len);
            vor_out_bytes(&w->edited, function, function_len);
            vor_out_varint(&w->edited, file_len);
            vor_out_bytes(&w->edited, file, file_len);
            vor_out_varint(&w->edited, site.line);
        }
        vor_out_varint(&w->edited, site.module_id);
        vor_out_varint(&w->edited, site.address);
    }
    vor_out_bytes(&w->edited, in.p, vor_in_left(&in)); /* threads, modules and the rest */
    if (w->edited.failed) return -1;
    return changed;
}

/* One record at w->offset (its head read and checked by the caller). */
static int rewrite_record(rewriter *w, const uint8_t *head, uint32_t body) {
    size_t total = VOR_RECORD_HEAD_BYTES + body;
    if (reserve(&w->record, &w->record_cap, total) != 0) return fail(w, "out of memory for a record");
    memcpy(w->record, head, VOR_RECORD_HEAD_BYTES);
    size_t got = fread(w->record + VOR_RECORD_HEAD_BYTES, 1, body, w->in);
    if (got < body) { /* a torn last record: as it is */
        if (fwrite(w->record, 1, VOR_RECORD_HEAD_BYTES + got, w->out) != VOR_RECORD_HEAD_BYTES + got) return -1;
        w->offset += VOR_RECORD_HEAD_BYTES + got;
        return 0;
    }
    w->offset += total;
    /* A record whose check fails stays as it is: only intact records are rewritten (and
     * checked again), so damage is never hidden under new checks. */
    if (vor_crc32c(vor_crc32c(0, head, 6), w->record + VOR_RECORD_HEAD_BYTES, body) != vor_get_u32le(head + 6))
        return fwrite(w->record, 1, total, w->out) == total ? 0 : -1;
    uint32_t size = vor_get_u32le(head);
    const uint8_t *raw = w->record + VOR_RECORD_HEAD_BYTES;
    size_t n = body;
    if (size & VOR_RECORD_COMPRESSED) {
        vor_in in = {raw, raw + body, 0};
        uint64_t d = vor_in_varint(&in);
        if (in.failed || d == 0 || d > VOR_READER_MAX_RECORD_BYTES ||
            reserve(&w->decoded, &w->decoded_cap, (size_t)d) != 0 ||
            LZ4_decompress_safe((const char *)in.p, (char *)w->decoded, (int)vor_in_left(&in), (int)d) != (int)d)
            return fwrite(w->record, 1, total, w->out) == total ? 0 : -1; /* the reader's business */
        raw = w->decoded;
        n = (size_t)d;
    }
    int changed = edit_record(w, raw, n);
    if (changed < 0) return fail(w, "out of memory rewriting a record");
    if (changed == 0) return fwrite(w->record, 1, total, w->out) == total ? 0 : -1;
    if (!vor_frame_capture_record(w->edited.data, w->edited.size, w->lz4, &w->framed))
        return fail(w, "out of memory framing a record");
    w->rewritten++;
    return fwrite(w->framed.data, 1, w->framed.size, w->out) == w->framed.size ? 0 : -1;
}

int capture_rewrite(FILE *in, FILE *out, const vor_reader *r, const rewrite_editor *editor, uint64_t *rewritten,
                    char *err, size_t err_cap) {
    rewriter w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.out = out;
    w.editor = editor;
    w.err = err;
    w.err_cap = err_cap;
    w.edited.max_capacity = VOR_READER_MAX_RECORD_BYTES + 4096u;
    w.framed.max_capacity = (size_t)LZ4_compressBound((int)w.edited.max_capacity) + 64u;
    w.lz4 = LZ4_createStream();
    int rc = w.lz4 ? 0 : fail(&w, "out of memory");
    /* The header, as it is. */
    uint8_t fixed[VOR_CAPTURE_1_1_FIXED_HEADER_BYTES];
    if (rc == 0 && fread(fixed, 1, sizeof fixed, in) != sizeof fixed) rc = fail(&w, "no complete header");
    if (rc == 0) {
        uint32_t body = vor_get_u32le(fixed + 12);
        if (fwrite(fixed, 1, sizeof fixed, out) != sizeof fixed) rc = -1;
        w.offset = sizeof fixed;
        if (rc == 0 && copy(&w, (uint64_t)body + VOR_CAPTURE_CHECK_BYTES) != 0) rc = -1;
    }
    uint64_t n_damage = vor_reader_damage_count(r);
    uint32_t next_damage = 0;
    vor_reader_damage damage = {0, 0, NULL};
    int have_damage = n_damage > 0 && vor_reader_get_damage(r, 0, &damage);
    while (rc == 0) {
        if (have_damage && w.offset == damage.offset) { /* skipped by the reader: as it is */
            if (copy(&w, damage.length) != 0) rc = -1;
            have_damage = ++next_damage < n_damage && vor_reader_get_damage(r, next_damage, &damage);
            continue;
        }
        uint8_t head[VOR_RECORD_HEAD_BYTES];
        size_t got = fread(head, 1, sizeof head, in);
        if (got < sizeof head) { /* the end, or a torn head */
            if (got && fwrite(head, 1, got, out) != got) rc = -1;
            break;
        }
        uint32_t size = vor_get_u32le(head);
        uint16_t size_check = (uint16_t)(head[4] | head[5] << 8);
        uint32_t body = size & VOR_RECORD_SIZE_MASK;
        if ((vor_crc32c(0, head, 4) & 0xFFFFu) != size_check || body == 0 || body > VOR_READER_MAX_RECORD_BYTES) {
            /* Damage the reader's list does not hold (it keeps the first ones): stop
             * rather than guess where records start again. */
            rc = fail(&w, "a damaged record the reader's list does not cover");
            break;
        }
        rc = rewrite_record(&w, head, body);
    }
    if (rc == 0 && (ferror(in) || ferror(out))) rc = fail(&w, "read or write error");
    *rewritten = w.rewritten;
    LZ4_freeStream(w.lz4);
    free(w.record);
    free(w.decoded);
    free(w.edited.data);
    free(w.framed.data);
    return rc;
}
