/*
 * xml_out.c: buffered output for the writers, with XML escaping and number formatting.
 *
 * Why not fprintf per item: a large graph writes hundreds of thousands of small items, and
 * printf's parsing of a format string (plus locale look-ups for "%f") costs more than the layout.
 * So everything is appended to one fixed 64 KiB buffer inside fg_out (no allocation at all),
 * flushed with fwrite; numbers are formatted by hand, locale-independent ("12.50", never "12,50").
 *
 * Escaping makes any byte string safe as XML character data or a quoted attribute value:
 * the five markup characters become entities, and whatever XML 1.0 cannot carry (invalid or
 * overlong UTF-8, surrogates, controls other than tab/LF/CR, U+FFFE/U+FFFF) becomes U+FFFD, one
 * per offending byte, so that the document stays well-formed whatever the profiled program named
 * its functions.
 */
#include "flamegraph_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REPLACEMENT_CHARACTER "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

void fg_out_init(fg_out *out, FILE *file)
{
    out->file = file;
    out->used = 0;
    out->failed = false;
}

static void flush_buffer(fg_out *out)
{
    if (out->file == NULL) { /* memory mode: the buffer is full, keep what it holds */
        out->failed = true;
        return;
    }
    if (out->used > 0 && !out->failed && fwrite(out->buffer, 1, out->used, out->file) != out->used)
        out->failed = true;
    out->used = 0;
}

bool fg_out_finish(fg_out *out)
{
    if (out->file == NULL)
        return !out->failed;
    flush_buffer(out);
    if (fflush(out->file) != 0 || ferror(out->file))
        out->failed = true;
    return !out->failed;
}

void fg_out_bytes(fg_out *out, const char *bytes, size_t length)
{
    if (length > sizeof out->buffer - out->used) {
        flush_buffer(out);
        if (out->file == NULL)
            return;
        if (length > sizeof out->buffer) {
            if (!out->failed && fwrite(bytes, 1, length, out->file) != length)
                out->failed = true;
            return;
        }
    }
    memcpy(out->buffer + out->used, bytes, length);
    out->used += length;
}

void fg_out_str(fg_out *out, const char *text)
{
    fg_out_bytes(out, text, strlen(text));
}

void fg_out_char(fg_out *out, char c)
{
    if (out->used == sizeof out->buffer) {
        flush_buffer(out);
        if (out->file == NULL)
            return;
    }
    out->buffer[out->used++] = c;
}

void fg_out_u64(fg_out *out, uint64_t value)
{
    char digits[20];
    size_t count = 0;
    do {
        digits[sizeof digits - 1 - count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    fg_out_bytes(out, digits + sizeof digits - count, count);
}

static const uint64_t powers_of_ten[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };

/* Writes |value| rounded to `decimals` places; strips trailing zeros when `strip` is set.
 * Values beyond 9e12 (far outside what a graph shows) go through snprintf. */
static void write_decimal(fg_out *out, double value, int decimals, bool strip)
{
    if (!isfinite(value)) {
        fg_out_char(out, '0');
        return;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 6)
        decimals = 6;
    if (value < 0) {
        fg_out_char(out, '-');
        value = -value;
    }
    if (value >= 9e12) {
        char text[320]; /* "%.0f" of the largest double (1.8e308) is 309 digits */
        int length = snprintf(text, sizeof text, "%.0f", value);
        if (length > 0)
            fg_out_bytes(out, text, (size_t)length < sizeof text ? (size_t)length : sizeof text - 1);
        return;
    }
    uint64_t scale = powers_of_ten[decimals];
    uint64_t scaled = (uint64_t)floor(value * (double)scale + 0.5);
    fg_out_u64(out, scaled / scale);
    uint64_t fraction = scaled % scale;
    if (decimals == 0 || (strip && fraction == 0))
        return;
    char digits[6];
    int count = decimals;
    for (int i = decimals - 1; i >= 0; i--) {
        digits[i] = (char)('0' + fraction % 10);
        fraction /= 10;
    }
    if (strip)
        while (count > 0 && digits[count - 1] == '0')
            count--;
    fg_out_char(out, '.');
    fg_out_bytes(out, digits, (size_t)count);
}

void fg_out_fixed(fg_out *out, double value, int decimals)
{
    write_decimal(out, value, decimals, false);
}

void fg_out_count(fg_out *out, double value)
{
    write_decimal(out, value, 6, true);
}

void fg_out_printf(fg_out *out, const char *format, ...)
{
    char text[1024];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (length < 0)
        return;
    fg_out_bytes(out, text, (size_t)length < sizeof text ? (size_t)length : sizeof text - 1);
}

/* ----- UTF-8 and XML ----------------------------------------------------------------------- */

enum char_kind { CHAR_COPY, CHAR_ESCAPE, CHAR_REPLACE };

/* Classifies the character at text[i]: how many bytes it spans and what to write for it. */
static size_t next_char(const unsigned char *text, size_t length, size_t i, enum char_kind *kind)
{
    unsigned char c = text[i];
    if (c < 0x80) {
        if (c == '&' || c == '<' || c == '>' || c == '"' || c == '\'')
            *kind = CHAR_ESCAPE;
        else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            *kind = CHAR_REPLACE;
        else
            *kind = CHAR_COPY;
        return 1;
    }
    /* The valid ranges of the first continuation byte (RFC 3629, table 3-7 of Unicode). */
    size_t size;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        size = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        size = 3;
        if (c == 0xE0)
            low = 0xA0; /* overlong */
        else if (c == 0xED)
            high = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        size = 4;
        if (c == 0xF0)
            low = 0x90; /* overlong */
        else if (c == 0xF4)
            high = 0x8F; /* above U+10FFFF */
    } else {
        *kind = CHAR_REPLACE;
        return 1;
    }
    if (length - i < size || text[i + 1] < low || text[i + 1] > high) {
        *kind = CHAR_REPLACE;
        return 1;
    }
    for (size_t k = 2; k < size; k++) {
        if (text[i + k] < 0x80 || text[i + k] > 0xBF) {
            *kind = CHAR_REPLACE;
            return 1;
        }
    }
    /* U+FFFE and U+FFFF are not XML characters. */
    if (size == 3 && c == 0xEF && text[i + 1] == 0xBF && text[i + 2] >= 0xBE) {
        *kind = CHAR_REPLACE;
        return 3;
    }
    *kind = CHAR_COPY;
    return size;
}

size_t fg_xml_char_count(const char *text, size_t length)
{
    const unsigned char *bytes = (const unsigned char *)text;
    size_t count = 0;
    enum char_kind kind;
    for (size_t i = 0; i < length; i += next_char(bytes, length, i, &kind))
        count++;
    return count;
}

void fg_out_xml(fg_out *out, const char *text, size_t length, size_t max_chars)
{
    const unsigned char *bytes = (const unsigned char *)text;
    size_t i = 0, chars = 0;
    while (i < length && chars < max_chars) {
        enum char_kind kind;
        size_t size = next_char(bytes, length, i, &kind);
        if (kind == CHAR_COPY) {
            if (size == 1)
                fg_out_char(out, text[i]);
            else
                fg_out_bytes(out, text + i, size);
        } else if (kind == CHAR_REPLACE) {
            fg_out_bytes(out, REPLACEMENT_CHARACTER, 3);
        } else {
            switch (text[i]) {
            case '&': fg_out_bytes(out, "&amp;", 5); break;
            case '<': fg_out_bytes(out, "&lt;", 4); break;
            case '>': fg_out_bytes(out, "&gt;", 4); break;
            case '"': fg_out_bytes(out, "&quot;", 6); break;
            default: fg_out_bytes(out, "&#39;", 5); break;
            }
        }
        i += size;
        chars++;
    }
}
