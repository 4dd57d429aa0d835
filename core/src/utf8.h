/* utf8.h: where a string is cut when an output keeps at most so many bytes of it.
 *
 * One rule for every output (the .vor capture, the live panel's declarations, the
 * DevTools sink, the Chrome trace file's own copy in chrome_trace.c), so that a name too
 * long for them shows the same everywhere: keep at most `max` bytes, and never split a
 * UTF-8 sequence (a sequence the limit would cut is left out whole). A string that is
 * not UTF-8 is cut by the same rule (back over continuation bytes), so the outputs still
 * agree.
 */
#ifndef VOR_UTF8_H
#define VOR_UTF8_H

#include <stddef.h>
#include <string.h>

/* The longest source file name (a site's __FILE__) any output keeps; names are cut at
 * VOR_MAX_NAME_BYTES (vor.h). */
#define VOR_MAX_FILE_BYTES 1024u

/* The length of NUL-terminated `s` cut to at most `max` bytes at a character boundary
 * (reads at most max + 1 bytes of s). */
static inline size_t vor_utf8_cut(const char *s, size_t max) {
    size_t n = strnlen(s, max + 1);
    if (n <= max) return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* s[n] continues a sequence */
    return n;
}

#endif
