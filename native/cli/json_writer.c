/* json_writer.c: a small streaming JSON writer for `vor summary --json`.
 *
 * Values are written as they come (no tree in memory); the writer only remembers, per
 * nesting level, whether a comma is due. Strings are escaped per RFC 8259 and always
 * valid UTF-8 whatever the input bytes: control characters (C0, DEL, C1) and U+2028/2029
 * as \u00XX, valid UTF-8 as is (names stay readable), and each maximal invalid sequence
 * (a stray byte, an overlong form, a surrogate, beyond U+10FFFF, a truncated sequence) as
 * one U+FFFD, the replacement character (text.c decodes).
 * Non-finite numbers have no JSON form and are written as null. Numbers round-trip
 * (numfmt_double). With `pretty`, one member per line, indented by two spaces.
 */
#include "cli.h"

#include <string.h>

#define JSON_MAX_DEPTH ((int)sizeof(((json_writer *)0)->need_comma))

void json_write_string(FILE *out, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    putc('"', out);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = cli_utf8_next(p + i, n - i, &cp);
        if (k < 0) { /* one U+FFFD per maximal invalid subpart */
            fputs("\xEF\xBF\xBD", out);
            i += (size_t)-k;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            /* C0, DEL, C1 controls; U+2028/2029 end lines in JavaScript. */
            if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x2028 || cp == 0x2029)
                fprintf(out, "\\u%04x", (unsigned)cp);
            else
                fwrite(p + i, 1, (size_t)k, out);
        }
        i += (size_t)k;
    }
    putc('"', out);
}

void json_begin(json_writer *w, FILE *out, int pretty) {
    memset(w, 0, sizeof *w);
    w->out = out;
    w->pretty = pretty;
}

static void newline(json_writer *w) {
    if (!w->pretty) return;
    putc('\n', w->out);
    for (int i = 0; i < w->depth; i++) fputs("  ", w->out);
}

/* Comma, line break and key before a value. */
static void member(json_writer *w, const char *key) {
    int level = w->depth < JSON_MAX_DEPTH ? w->depth : JSON_MAX_DEPTH - 1;
    if (w->need_comma[level]) putc(',', w->out);
    w->need_comma[level] = 1;
    if (w->depth > 0) newline(w);
    if (key) {
        json_write_string(w->out, key);
        fputs(w->pretty ? ": " : ":", w->out);
    }
}

static void open_container(json_writer *w, const char *key, char c) {
    member(w, key);
    putc(c, w->out);
    w->depth++;
    if (w->depth < JSON_MAX_DEPTH) w->need_comma[w->depth] = 0;
}

static void close_container(json_writer *w, char c) {
    int had = w->depth < JSON_MAX_DEPTH ? w->need_comma[w->depth] : 1;
    w->depth--;
    if (had) newline(w);
    putc(c, w->out);
}

void json_object_begin(json_writer *w, const char *key) {
    open_container(w, key, '{');
}
void json_object_end(json_writer *w) {
    close_container(w, '}');
}
void json_array_begin(json_writer *w, const char *key) {
    open_container(w, key, '[');
}
void json_array_end(json_writer *w) {
    close_container(w, ']');
}

void json_string(json_writer *w, const char *key, const char *value) {
    member(w, key);
    json_write_string(w->out, value);
}

void json_double(json_writer *w, const char *key, double value) {
    char buf[NUMFMT_BYTES];
    member(w, key);
    if (value != value || value - value != 0.0)
        fputs("null", w->out); /* NaN, infinities */
    else
        fputs(numfmt_double(buf, value), w->out);
}

void json_int(json_writer *w, const char *key, int64_t value) {
    member(w, key);
    fprintf(w->out, "%lld", (long long)value);
}

void json_uint(json_writer *w, const char *key, uint64_t value) {
    member(w, key);
    fprintf(w->out, "%llu", (unsigned long long)value);
}

void json_bool(json_writer *w, const char *key, int value) {
    member(w, key);
    fputs(value ? "true" : "false", w->out);
}

void json_null(json_writer *w, const char *key) {
    member(w, key);
    fputs("null", w->out);
}

void json_end(json_writer *w) {
    putc('\n', w->out);
}
