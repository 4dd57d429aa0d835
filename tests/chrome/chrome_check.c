/* chrome_check.c: temporary files and the node trace checker for the Chrome trace tests. */
#include "chrome_check.h"

#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef VOR_NODE
#error "VOR_NODE (the node executable) must be defined by the build"
#endif
#ifndef VOR_CHECK_TRACE
#error "VOR_CHECK_TRACE (the path of check_trace.mjs) must be defined by the build"
#endif

static char test_dir[64];

const char *test_path(const char *name) {
    static char ring[16][512];
    static unsigned next;
    if (test_dir[0] == '\0') {
        snprintf(test_dir, sizeof test_dir, "/tmp/vor_chrome_XXXXXX");
        assert_non_null(mkdtemp(test_dir));
    }
    char *p = ring[next++ % 16];
    snprintf(p, 512, "%s/%s", test_dir, name);
    return p;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void remove_test_dir(void) {
    if (test_dir[0]) nftw(test_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    test_dir[0] = '\0';
}

int remove_test_dir_teardown(void **state) {
    (void)state;
    remove_test_dir();
    return 0;
}

static int run_checker(const char *mode, const char *path, trace_dump *out, int quiet) {
    memset(out, 0, sizeof *out);
    char command[2048];
    snprintf(command, sizeof command, "'%s' '%s' %s '%s'%s", VOR_NODE, VOR_CHECK_TRACE, mode, path,
             quiet ? " 2>/dev/null" : "");
    fflush(NULL);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    size_t cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    while ((len = getline(&line, &line_cap, p)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (out->n == cap) {
            cap = cap ? cap * 2 : 256;
            out->lines = realloc(out->lines, cap * sizeof *out->lines);
            assert_non_null(out->lines);
        }
        out->lines[out->n] = strdup(line);
        assert_non_null(out->lines[out->n]);
        out->n++;
    }
    free(line);
    int status = pclose(p);
    out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    return out->status;
}

int check_trace(const char *mode, const char *path, trace_dump *out) {
    return run_checker(mode, path, out, 0);
}

int trace_rejected(const char *mode, const char *path) {
    trace_dump d;
    int status = run_checker(mode, path, &d, 1);
    trace_dump_free(&d);
    return status != 0;
}

void trace_dump_free(trace_dump *d) {
    for (size_t i = 0; i < d->n; i++) free(d->lines[i]);
    free(d->lines);
    memset(d, 0, sizeof *d);
}

size_t dump_count(const trace_dump *d, const char *prefix) {
    size_t n = 0, len = strlen(prefix);
    for (size_t i = 0; i < d->n; i++)
        if (strncmp(d->lines[i], prefix, len) == 0) n++;
    return n;
}

const char *dump_find(const trace_dump *d, const char *prefix, size_t nth) {
    size_t len = strlen(prefix);
    for (size_t i = 0; i < d->n; i++)
        if (strncmp(d->lines[i], prefix, len) == 0 && nth-- == 0) return d->lines[i];
    return NULL;
}

void hex_encode(const void *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

const char *hex_of(const char *s) {
    static char ring[8][2048];
    static unsigned next;
    char *out = ring[next++ % 8];
    size_t n = strlen(s);
    if (n == 0) return "-";
    assert_true(2 * n + 1 <= sizeof ring[0]);
    hex_encode(s, n, out);
    return out;
}

char *read_whole_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 65536, n = 0;
    char *data = malloc(cap + 1);
    assert_non_null(data);
    size_t got;
    while ((got = fread(data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            data = realloc(data, cap + 1);
            assert_non_null(data);
        }
    }
    fclose(f);
    data[n] = '\0';
    if (size) *size = n;
    return data;
}

void write_whole_file(const char *path, const char *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}
