/*
 * json_out.c - builds JSON text for the listing and for websocket text messages.
 *
 * One builder with two backings: a growable heap buffer capped at a limit (the capture list) or
 * a caller's fixed array (small messages built inside a viewer, no allocation). Errors are
 * sticky: after an allocation failure or overflow every append is a no-op and `failed` stays
 * set, so callers check once at the end instead of after every append.
 * Strings are escaped per RFC 8259; file names are bytes, not necessarily UTF-8, so invalid
 * sequences become U+FFFD: the output is always valid UTF-8 that JSON.parse accepts.
 */
#include "server_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { JSON_INITIAL_BYTES = 1024 };

void json_init(json_buf *b, size_t limit)
{
    memset(b, 0, sizeof *b);
    b->limit = limit;
}

void json_init_fixed(json_buf *b, char *buf, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->data = buf;
    b->cap = cap;
    b->limit = cap;
    b->fixed = true;
    if (cap)
        buf[0] = '\0';
    else
        b->failed = true;
}

void json_free(json_buf *b)
{
    if (!b->fixed)
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Makes room for n more bytes plus the NUL. */
static bool reserve(json_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n < b->cap && b->len < b->cap - n)
        return true;
    if (b->fixed || n >= b->limit || b->len >= b->limit - n) {
        b->failed = true;
        return false;
    }
    size_t want = b->cap ? b->cap : JSON_INITIAL_BYTES;
    while (want <= b->len + n)
        want *= 2;
    if (want > b->limit)
        want = b->limit;
    char *p = realloc(b->data, want);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = want;
    return true;
}

static void append(json_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void json_raw(json_buf *b, const char *text) { append(b, text, strlen(text)); }

void json_u64(json_buf *b, uint64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    append(b, tmp, (size_t)n);
}

void json_i64(json_buf *b, int64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    append(b, tmp, (size_t)n);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid or does not end
 * within the `avail` bytes there. */
static size_t utf8_sequence(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return avail >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;  /* no overlongs */
        unsigned char hi = c == 0xED ? 0x9F : 0xBF;  /* no surrogates */
        if (avail < 3 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;  /* <= U+10FFFF */
        if (avail < 4 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

bool utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = utf8_sequence(s + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

void json_str(json_buf *b, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    append(b, "\"", 1);
    while (*s && !b->failed) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            append(b, esc, 2);
            s++;
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            switch (c) {
            case '\n': append(b, "\\n", 2); break;
            case '\r': append(b, "\\r", 2); break;
            case '\t': append(b, "\\t", 2); break;
            case '\b': append(b, "\\b", 2); break;
            case '\f': append(b, "\\f", 2); break;
            default: append(b, esc, 6); break;
            }
            s++;
        } else {
            /* The NUL terminator stops utf8_sequence from reading past the string (so any
             * length will do): a NUL continuation byte fails its test before the next is read. */
            size_t n = utf8_sequence(s, 4);
            if (n) {
                append(b, (const char *)s, n);
                s += n;
            } else {
                append(b, "\\ufffd", 6);
                s++;
            }
        }
    }
    append(b, "\"", 1);
}

char *json_take(json_buf *b, size_t *len)
{
    if (b->fixed || b->failed) {
        json_free(b);
        return NULL;
    }
    if (!b->data) /* nothing appended: hand over an empty string */
        append(b, "", 0);
    char *d = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}
