/* text.c: names and paths made safe to show on a terminal or in JSON.
 *
 * Names in a capture (process, threads, scopes, metrics) and file names come from
 * elsewhere: they may hold any byte. Shown as they are, an ESC could drive the terminal
 * ("\x1b]0;title\a", colours, clearing the screen), a newline would break the promise of
 * one line per message, and invalid UTF-8 makes JSON that strict parsers refuse.
 *
 * Text is taken one "unit" at a time: a valid UTF-8 character, or one byte that is not
 * part of one. For people (cli_text_*), a unit is shown as itself, except control
 * characters: \n \r \t, \xNN for the other C0 controls and DEL (ESC is \x1b), \uNNNN for
 * the C1 controls (U+0080..U+009F, which some terminals obey), and \xNN for every byte
 * of invalid UTF-8. A backslash is shown as itself, so the escapes are for reading, not
 * for reversing. JSON has its own escapes (json_writer.c) but the same decoder.
 *
 * UTF-8 is decoded as Unicode's table 3-7 defines it: no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF. cli_utf8_next() also gives the length of the
 * "maximal subpart" of an invalid sequence, so that JSON can replace each with one U+FFFD
 * (the W3C / Unicode recommended practice).
 */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

#define ELLIPSIS "..."
#define ELLIPSIS_BYTES 3u

int cli_utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    if (n == 0) return -1;
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0Fu;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07u;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return -1; /* a continuation byte, C0, C1 (overlong) or F5..FF */
    }
    for (size_t i = 1; i < len; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) return -(int)i;
        v = (v << 6) | (s[i] & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = v;
    return (int)len;
}

/* The shown form of the unit at s (n > 0 bytes left): writes it to out (at most
 * CLI_TEXT_UNIT_MAX bytes, no NUL), sets *shown, returns the input bytes it stands for. */
#define CLI_TEXT_UNIT_MAX 6
static size_t text_unit(const unsigned char *s, size_t n, char out[CLI_TEXT_UNIT_MAX + 1], size_t *shown) {
    static const char hex[] = "0123456789abcdef";
    uint32_t cp;
    int k = cli_utf8_next(s, n, &cp);
    if (k < 0 || cp < 0x20 || cp == 0x7F) {
        unsigned char b = s[0];
        char short_form = k < 0 ? 0 : b == '\n' ? 'n' : b == '\r' ? 'r' : b == '\t' ? 't' : 0;
        out[0] = '\\';
        if (short_form) {
            out[1] = short_form;
            *shown = 2;
        } else {
            out[1] = 'x';
            out[2] = hex[b >> 4];
            out[3] = hex[b & 15];
            *shown = 4;
        }
        return 1; /* an invalid sequence is shown byte by byte */
    }
    if (cp >= 0x80 && cp < 0xA0) {
        memcpy(out, "\\u00", 4);
        out[4] = hex[cp >> 4];
        out[5] = hex[cp & 15];
        *shown = 6;
        return (size_t)k;
    }
    memcpy(out, s, (size_t)k);
    *shown = (size_t)k;
    return (size_t)k;
}

size_t cli_text_shown_length(const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p), total = 0;
    char unit[CLI_TEXT_UNIT_MAX + 1];
    for (size_t i = 0; i < n;) {
        size_t shown;
        i += text_unit(p + i, n - i, unit, &shown);
        total += shown;
    }
    return total;
}

void cli_text_fputs(FILE *out, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    char unit[CLI_TEXT_UNIT_MAX + 1];
    for (size_t i = 0; i < n;) {
        size_t shown;
        i += text_unit(p + i, n - i, unit, &shown);
        fwrite(unit, 1, shown, out);
    }
}

/* Appends the units of p[*pos..n) to out[used..] while they fit in `room` bytes; returns
 * the new length and advances *pos past what was taken. */
static size_t append_units(char *out, size_t used, size_t room, const unsigned char *p, size_t n, size_t *pos) {
    char unit[CLI_TEXT_UNIT_MAX + 1];
    while (*pos < n) {
        size_t shown;
        size_t k = text_unit(p + *pos, n - *pos, unit, &shown);
        if (shown > room) break;
        memcpy(out + used, unit, shown);
        used += shown;
        room -= shown;
        *pos += k;
    }
    return used;
}

char *cli_text_show(char *out, size_t cap, const char *s) {
    if (cap == 0) return out;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p), limit = cap - 1;
    size_t total = cli_text_shown_length((const char *)p);
    size_t pos = 0, used;
    if (total <= limit) {
        used = append_units(out, 0, limit, p, n, &pos);
    } else if (limit < ELLIPSIS_BYTES) {
        used = 0;
    } else {
        used = append_units(out, 0, limit - ELLIPSIS_BYTES, p, n, &pos);
        memcpy(out + used, ELLIPSIS, ELLIPSIS_BYTES);
        used += ELLIPSIS_BYTES;
    }
    out[used] = '\0';
    return out;
}

char *cli_text_show_middle(char *out, size_t cap, const char *s, size_t max_shown) {
    if (cap == 0) return out;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    size_t limit = max_shown < cap - 1 ? max_shown : cap - 1;
    size_t total = cli_text_shown_length((const char *)p);
    size_t pos = 0, used;
    if (total <= limit) {
        used = append_units(out, 0, limit, p, n, &pos);
        out[used] = '\0';
        return out;
    }
    if (limit < ELLIPSIS_BYTES + 2) return cli_text_show(out, limit + 1, s);
    /* The end of a path (the file's name) says more than its start: it gets 3/5. */
    size_t keep = limit - ELLIPSIS_BYTES;
    size_t head = keep * 2 / 5, tail = keep - head;
    used = append_units(out, 0, head, p, n, &pos);
    memcpy(out + used, ELLIPSIS, ELLIPSIS_BYTES);
    used += ELLIPSIS_BYTES;
    /* The tail starts at the first unit after which at most `tail` bytes remain shown. */
    char unit[CLI_TEXT_UNIT_MAX + 1];
    size_t tail_pos = 0, shown_before = 0;
    while (tail_pos < n && total - shown_before > tail) {
        size_t shown;
        tail_pos += text_unit(p + tail_pos, n - tail_pos, unit, &shown);
        shown_before += shown;
    }
    used = append_units(out, used, limit - used, p, n, &tail_pos);
    out[used] = '\0';
    return out;
}

size_t cli_append(char *buf, size_t cap, size_t len, const char *fmt, ...) {
    if (cap == 0 || len >= cap - 1) return len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
    if (n < 0) return len;
    if ((size_t)n >= cap - len) { /* cut: mark it */
        if (cap >= 4) memcpy(buf + cap - 4, "...", 4);
        return cap - 1;
    }
    return len + (size_t)n;
}
