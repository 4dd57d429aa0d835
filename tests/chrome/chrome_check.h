/* chrome_check.h: what the Chrome trace tests share: a temporary directory, whole-file
 * reads, hex strings, and check_trace.mjs (run with node) which loads a trace the way
 * the viewers do and lists its events, one line each, for the tests to compare.
 */
#ifndef VOR_CHROME_CHECK_H
#define VOR_CHROME_CHECK_H

#include "support.h"

#include "chrome_json.h"

/* The events of a checked trace (lines as printed by check_trace.mjs). */
typedef struct trace_dump {
    char **lines;
    size_t n;
    int status; /* the checker's exit status: 0 when the trace passed every check */
} trace_dump;

/* A path `name` inside this process's temporary directory (created on first use, removed
 * by remove_test_dir). The string stays valid until the 16th next call. */
const char *test_path(const char *name);
void remove_test_dir(void);
/* remove_test_dir as a cmocka group teardown. */
int remove_test_dir_teardown(void **state);

/* Runs the checker in `mode` (strict, catapult or perfetto) on `path`; fills `out` and
 * returns the exit status. */
int check_trace(const char *mode, const char *path, trace_dump *out);
void trace_dump_free(trace_dump *d);
/* 1 when the checker rejects the file in `mode` (its message is not shown). */
int trace_rejected(const char *mode, const char *path);

/* Lines that start with `prefix`: how many, and the nth (NULL if there are fewer). */
size_t dump_count(const trace_dump *d, const char *prefix);
const char *dump_find(const trace_dump *d, const char *prefix, size_t nth);

/* Hex of n bytes into out (2n + 1 bytes); a NUL-terminated string's hex (static ring). */
void hex_encode(const void *bytes, size_t n, char *out);
const char *hex_of(const char *s);

/* The whole file (NUL-terminated, malloc'd) and its size; NULL if it cannot be read. */
char *read_whole_file(const char *path, size_t *size);
/* Writes n bytes of data to path (a truncated copy of a trace, say). */
void write_whole_file(const char *path, const char *data, size_t n);

#endif
