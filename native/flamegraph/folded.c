/*
 * folded.c: the folded stacks text format, read and written.
 *
 * One stack per line, frames root first separated by ';', then whitespace and a count:
 *     main;parse;read_token 1234
 * It is what the stackcollapse-* scripts, cargo flamegraph/inferno and `vor export --format
 * folded` produce, and what flamegraph.pl reads.
 *
 * Reading streams: one buffer of (max line + 64 KiB) is filled with fread and split at '\n' with
 * memchr, frames are cut in place (';' -> NUL), so memory does not grow with the input and no
 * line is copied. Counts are parsed by hand: strtod would follow the C locale's decimal point,
 * and a host program that called setlocale() would then refuse "2.5".
 * Errors stop the read at the first bad line with "NAME:LINE: problem"; what was read before
 * stays in the tree (the caller decides whether to draw it). Lenient about what is harmless
 * (CRLF, blank lines, trailing blanks, a byte-order mark), strict about what would silently
 * draw a wrong graph (a missing or malformed count).
 */
#include "flamegraph_internal.h"

#include <stdlib.h>
#include <string.h>

#define READ_CHUNK_BYTES (64u << 10)
#define SNIPPET_CHARS 40 /* of offending text quoted in messages */

typedef struct folded_reader {
    flamegraph_tree *tree;
    const char *source;
    size_t max_line_bytes;
    const char **frames; /* FLAMEGRAPH_MAX_DEPTH pointers into the current line */
    flamegraph_error *err;
} folded_reader;

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses a non-negative decimal "12", "12.5", "12.", ".5"; false for anything else. */
static bool parse_count(const char *text, size_t length, double *value)
{
    size_t i = 0;
    double whole = 0.0, fraction = 0.0, fraction_scale = 1.0;
    size_t digits = 0;
    while (i < length && is_digit(text[i])) {
        whole = whole * 10.0 + (text[i++] - '0');
        digits++;
    }
    if (i < length && text[i] == '.') {
        i++;
        while (i < length && is_digit(text[i])) {
            if (fraction_scale < 1e18) { /* further digits cannot change a double */
                fraction = fraction * 10.0 + (text[i] - '0');
                fraction_scale *= 10.0;
            }
            i++;
            digits++;
        }
    }
    if (i != length || digits == 0)
        return false;
    *value = whole + fraction / fraction_scale;
    /* A whole count (digits only, where no locale matters) is converted by strtod for the
     * correctly rounded value: the sum above drifts in the last bits of long counts, and
     * the writer writes counts from 9e12 up as whole numbers, which must read back exactly. */
    char copy[400];
    if (fraction_scale == 1.0 && memchr(text, '.', length) == NULL && length < sizeof copy) {
        memcpy(copy, text, length);
        copy[length] = '\0';
        *value = strtod(copy, NULL);
    }
    return true;
}

/* Copies up to SNIPPET_CHARS bytes of text for a message, '?' for anything not printable. */
static const char *snippet(char *buffer, const char *text, size_t length)
{
    size_t n = length < SNIPPET_CHARS ? length : SNIPPET_CHARS;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        buffer[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (length > n) {
        memcpy(buffer + n, "...", 3);
        n += 3;
    }
    buffer[n] = '\0';
    return buffer;
}

static flamegraph_status read_line(folded_reader *reader, char *line, size_t length,
                                   uint64_t number)
{
    char quoted[SNIPPET_CHARS + 4];
    if (number == 1 && length >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
        line += 3; /* UTF-8 byte-order mark */
        length -= 3;
    }
    while (length > 0 && (line[length - 1] == '\r' || is_blank(line[length - 1])))
        length--;
    if (length == 0)
        return FLAMEGRAPH_OK;
    if (memchr(line, '\0', length) != NULL)
        return fg_fail(reader->err, FLAMEGRAPH_ERR_BINARY, number,
                       "%s:%llu: NUL byte: this is not a folded stacks text file", reader->source,
                       (unsigned long long)number);

    size_t count_start = length;
    while (count_start > 0 && !is_blank(line[count_start - 1]))
        count_start--;
    const char *count_text = line + count_start;
    size_t count_length = length - count_start;
    double value;
    bool numeric = parse_count(count_text, count_length, &value);
    if (count_start == 0) {
        if (numeric)
            return fg_fail(reader->err, FLAMEGRAPH_ERR_EMPTY_STACK, number,
                           "%s:%llu: no frame before the count '%s'", reader->source,
                           (unsigned long long)number, snippet(quoted, line, length));
        return fg_fail(reader->err, FLAMEGRAPH_ERR_MISSING_COUNT, number,
                       "%s:%llu: missing count at the end of the line (expected "
                       "'frame;frame;... COUNT'): '%s'",
                       reader->source, (unsigned long long)number, snippet(quoted, line, length));
    }
    if (!numeric) {
        char first = count_text[0];
        if (is_digit(first) || first == '-' || first == '+' || first == '.')
            return fg_fail(reader->err, FLAMEGRAPH_ERR_BAD_COUNT, number,
                           "%s:%llu: count is not a non-negative number: '%s'", reader->source,
                           (unsigned long long)number, snippet(quoted, count_text, count_length));
        return fg_fail(reader->err, FLAMEGRAPH_ERR_MISSING_COUNT, number,
                       "%s:%llu: missing count at the end of the line (expected "
                       "'frame;frame;... COUNT'): '%s'",
                       reader->source, (unsigned long long)number, snippet(quoted, line, length));
    }

    size_t stack_length = count_start;
    while (stack_length > 0 && is_blank(line[stack_length - 1]))
        stack_length--;
    if (stack_length == 0)
        return fg_fail(reader->err, FLAMEGRAPH_ERR_EMPTY_STACK, number,
                       "%s:%llu: no frame before the count", reader->source,
                       (unsigned long long)number);
    line[stack_length] = '\0';
    size_t depth = 0;
    char *frame = line;
    for (;;) {
        if (depth == FLAMEGRAPH_MAX_DEPTH)
            return fg_fail(reader->err, FLAMEGRAPH_ERR_TOO_DEEP, number,
                           "%s:%llu: more than %u frames in one stack", reader->source,
                           (unsigned long long)number, FLAMEGRAPH_MAX_DEPTH);
        reader->frames[depth++] = frame;
        char *separator = memchr(frame, ';', (size_t)(line + stack_length - frame));
        if (separator == NULL)
            break;
        *separator = '\0';
        frame = separator + 1;
    }
    flamegraph_status status =
        flamegraph_tree_add_stack_fractional(reader->tree, reader->frames, depth, value);
    if (status == FLAMEGRAPH_ERR_NO_MEMORY)
        return fg_fail(reader->err, status, number, "%s:%llu: out of memory", reader->source,
                       (unsigned long long)number);
    return FLAMEGRAPH_OK; /* FLAMEGRAPH_DROPPED is counted in the tree's stats */
}

flamegraph_status flamegraph_read_folded(flamegraph_tree *tree, FILE *in,
                                         const flamegraph_folded_options *options,
                                         flamegraph_error *err)
{
    folded_reader reader = {
        .tree = tree,
        .source = options && options->source_name ? options->source_name : "<input>",
        .max_line_bytes = options && options->max_line_bytes ? options->max_line_bytes
                                                             : FLAMEGRAPH_DEFAULT_MAX_LINE_BYTES,
        .err = err,
    };
    if (tree == NULL || in == NULL)
        return fg_fail(err, FLAMEGRAPH_ERR_ARGUMENT, 0, "%s: no tree or no file", reader.source);
    if (reader.max_line_bytes > SIZE_MAX / 2)
        return fg_fail(err, FLAMEGRAPH_ERR_ARGUMENT, 0, "%s: max_line_bytes too large",
                       reader.source);
    size_t capacity = reader.max_line_bytes + 1 + READ_CHUNK_BYTES;
    char *buffer = malloc(capacity);
    reader.frames = malloc(FLAMEGRAPH_MAX_DEPTH * sizeof *reader.frames);
    if (buffer == NULL || reader.frames == NULL) {
        free(buffer);
        free(reader.frames);
        return fg_fail(err, FLAMEGRAPH_ERR_NO_MEMORY, 0, "%s: out of memory for a %zu-byte line",
                       reader.source, reader.max_line_bytes);
    }

    flamegraph_status status = FLAMEGRAPH_OK;
    uint64_t number = 0;
    size_t used = 0;   /* bytes in buffer */
    bool at_end = false;
    while (status == FLAMEGRAPH_OK && !at_end) {
        /* What is left of the previous chunk is at most one partial line (<= max_line_bytes),
         * so there is always room for a chunk. */
        size_t wanted = capacity - used;
        size_t got = fread(buffer + used, 1, wanted, in);
        used += got;
        if (got < wanted) {
            if (ferror(in)) {
                status = fg_fail(err, FLAMEGRAPH_ERR_READ, number + 1, "%s:%llu: read error",
                                 reader.source, (unsigned long long)(number + 1));
                break;
            }
            at_end = true;
        }
        size_t start = 0;
        while (status == FLAMEGRAPH_OK) {
            char *newline = memchr(buffer + start, '\n', used - start);
            size_t length = newline ? (size_t)(newline - (buffer + start)) : used - start;
            if (length > reader.max_line_bytes) {
                status = fg_fail(err, FLAMEGRAPH_ERR_LINE_TOO_LONG, number + 1,
                                 "%s:%llu: line longer than %zu bytes", reader.source,
                                 (unsigned long long)(number + 1), reader.max_line_bytes);
                break;
            }
            if (newline == NULL) {
                if (at_end && length > 0)
                    status = read_line(&reader, buffer + start, length, ++number);
                break;
            }
            status = read_line(&reader, buffer + start, length, ++number);
            start += length + 1;
        }
        memmove(buffer, buffer + start, used - start);
        used -= start;
    }
    free(buffer);
    free(reader.frames);
    if (status == FLAMEGRAPH_OK)
        fg_clear_error(err);
    return status;
}

/* ----- writing ----------------------------------------------------------------------------- */

/* A name as a folded frame: ';' would split it and a line break would end the line. */
static void out_frame_name(fg_out *out, const char *text, size_t length)
{
    size_t start = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == ';' || c == '\n' || c == '\r') {
            fg_out_bytes(out, text + start, i - start);
            fg_out_char(out, c == ';' ? ':' : ' ');
            start = i + 1;
        }
    }
    fg_out_bytes(out, text + start, length - start);
}

/* Whether a name would read back as nothing: empty, or only blanks and line breaks (which
 * are written as spaces, and the reader trims blanks before the count). */
static bool reads_back_blank(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (!is_blank(text[i]) && text[i] != '\n' && text[i] != '\r')
            return false;
    return true;
}

flamegraph_status flamegraph_write_folded(const flamegraph_tree *tree, FILE *file,
                                          flamegraph_error *err)
{
    if (tree == NULL || file == NULL)
        return fg_fail(err, FLAMEGRAPH_ERR_ARGUMENT, 0, "flamegraph_write_folded: no tree or file");
    fg_layout layout;
    if (fg_layout_build(&layout, tree, 0.0) != FLAMEGRAPH_OK)
        return fg_fail(err, FLAMEGRAPH_ERR_NO_MEMORY, 0, "out of memory ordering %zu frames",
                       tree->node_count);
    uint32_t *path = malloc(((size_t)tree->max_depth + 1) * sizeof *path);
    fg_out *out = malloc(sizeof *out);
    if (path == NULL || out == NULL) {
        free(path);
        free(out);
        fg_layout_free(&layout);
        return fg_fail(err, FLAMEGRAPH_ERR_NO_MEMORY, 0, "out of memory writing folded stacks");
    }
    fg_out_init(out, file);
    bool first_line = true;
    for (size_t k = 0; k < layout.drawn_count; k++) {
        uint32_t id = layout.order[k];
        const fg_node *node = &tree->nodes[id];
        path[node->depth] = id;
        double own = node->total;
        for (uint32_t c = layout.child_start[id]; c < layout.child_start[id + 1]; c++)
            own -= tree->nodes[layout.children[c]].total;
        if (node->depth == 0 || !(own > 0.0))
            continue; /* the root has no frame to write; fully covered frames have no line */
        if (first_line) {
            /* A first line starting with a byte-order mark would lose it on reading (the
             * reader skips a BOM at the start of the text): start with a blank line. */
            const fg_name *outer = &tree->names[tree->nodes[path[1]].name];
            if (outer->length >= 3 && memcmp(tree->arena + outer->offset, "\xEF\xBB\xBF", 3) == 0)
                fg_out_char(out, '\n');
            first_line = false;
        }
        for (uint32_t d = 1; d <= node->depth; d++) {
            const fg_name *name = &tree->names[tree->nodes[path[d]].name];
            if (d > 1)
                fg_out_char(out, ';');
            if (node->depth == 1 && reads_back_blank(tree->arena + name->offset, name->length))
                fg_out_char(out, '?'); /* a blank line would not read back: "no frame" */
            else
                out_frame_name(out, tree->arena + name->offset, name->length);
        }
        fg_out_char(out, ' ');
        fg_out_count(out, own);
        fg_out_char(out, '\n');
    }
    bool written = fg_out_finish(out);
    free(out);
    free(path);
    fg_layout_free(&layout);
    if (!written)
        return fg_fail(err, FLAMEGRAPH_ERR_WRITE, 0, "cannot write the folded stacks");
    fg_clear_error(err);
    return FLAMEGRAPH_OK;
}
