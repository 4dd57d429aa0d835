/*
 * test_helpers.h: small helpers shared by the flame graph tests (header-only, all static).
 *
 * Trees are built from folded text and inspected as folded text (flamegraph_write_folded), which
 * is the most readable way to state what a tree holds: "a;b 4\na;c 2\n". Outputs go through
 * tmpfile() so that the tests need nothing beyond standard C.
 */
#ifndef VOR_FLAMEGRAPH_TEST_HELPERS_H
#define VOR_FLAMEGRAPH_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"

/* The whole content of a stream from its start, NUL-terminated; the caller frees it. */
static inline char *read_all(FILE *file, size_t *length_out)
{
    assert_int_equal(fseek(file, 0, SEEK_END), 0);
    long size = ftell(file);
    assert_true(size >= 0);
    rewind(file);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    if (length_out != NULL)
        *length_out = (size_t)size;
    return text;
}

/* A stream holding `text`, positioned at its start. */
static inline FILE *stream_of(const char *text, size_t length)
{
    FILE *file = tmpfile();
    assert_non_null(file);
    assert_int_equal(fwrite(text, 1, length, file), length);
    rewind(file);
    return file;
}

/* Reads folded text into `tree`; returns the status (err filled). */
static inline flamegraph_status read_folded_text(flamegraph_tree *tree, const char *text,
                                          size_t max_line_bytes, flamegraph_error *err)
{
    FILE *in = stream_of(text, strlen(text));
    flamegraph_folded_options options = { .max_line_bytes = max_line_bytes,
                                          .source_name = "test.folded" };
    flamegraph_status status = flamegraph_read_folded(tree, in, &options, err);
    fclose(in);
    return status;
}

/* A tree made from folded text that must parse. */
static inline flamegraph_tree *tree_of(const char *folded, const flamegraph_tree_options *options)
{
    flamegraph_tree *tree = flamegraph_tree_create(options);
    assert_non_null(tree);
    flamegraph_error err;
    flamegraph_status status = read_folded_text(tree, folded, 0, &err);
    if (status != FLAMEGRAPH_OK)
        fail_msg("folded input refused: %s", err.message);
    return tree;
}

/* What a tree holds, as folded text. */
static inline char *folded_of(const flamegraph_tree *tree)
{
    FILE *out = tmpfile();
    assert_non_null(out);
    flamegraph_error err;
    assert_int_equal(flamegraph_write_folded(tree, out, &err), FLAMEGRAPH_OK);
    char *text = read_all(out, NULL);
    fclose(out);
    return text;
}

static inline void assert_folded(const flamegraph_tree *tree, const char *expected)
{
    char *actual = folded_of(tree);
    if (strcmp(actual, expected) != 0) {
        print_error("expected folded:\n%s\nactual folded:\n%s\n", expected, actual);
        free(actual);
        fail();
    }
    free(actual);
}

/* The SVG for a tree; status must be FLAMEGRAPH_OK. */
static inline char *svg_of(const flamegraph_tree *tree, const flamegraph_svg_options *options)
{
    FILE *out = tmpfile();
    assert_non_null(out);
    flamegraph_error err;
    flamegraph_status status = flamegraph_write_svg(tree, options, out, &err);
    if (status != FLAMEGRAPH_OK)
        fail_msg("flamegraph_write_svg: %s", err.message);
    char *text = read_all(out, NULL);
    fclose(out);
    return text;
}

/* Number of non-overlapping occurrences of `needle` in `text`. */
static inline size_t count_of(const char *text, const char *needle)
{
    size_t count = 0, length = strlen(needle);
    for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + length, needle))
        count++;
    return count;
}

/* The fill of the frame whose title starts with "NAME (": "rgb(1,2,3)" into buf. */
static inline const char *fill_of_frame(const char *svg, const char *name, char *buf, size_t size)
{
    char title[256];
    snprintf(title, sizeof title, "<title>%s (", name);
    const char *at = strstr(svg, title);
    if (at == NULL)
        fail_msg("no frame named '%s'", name);
    const char *fill = strstr(at, "fill=\"");
    assert_non_null(fill);
    fill += 6;
    const char *end = strchr(fill, '"');
    assert_non_null(end);
    size_t length = (size_t)(end - fill);
    assert_true(length < size);
    memcpy(buf, fill, length);
    buf[length] = '\0';
    return buf;
}

#endif /* VOR_FLAMEGRAPH_TEST_HELPERS_H */
