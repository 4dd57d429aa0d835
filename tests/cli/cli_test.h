/* cli_test.h: what the CLI unit tests share: cmocka, the CLI's private header, and a
 * helper that captures what a writer puts on a FILE* as a string (open_memstream). */
#ifndef VOR_CLI_TEST_H
#define VOR_CLI_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* A memory stream: write to .f, then call mem_text() for the NUL-terminated text. */
typedef struct mem_out {
    FILE *f;
    char *text;
    size_t size;
} mem_out;

static inline void mem_open(mem_out *m) {
    m->text = NULL;
    m->size = 0;
    m->f = open_memstream(&m->text, &m->size);
    assert_non_null(m->f);
}

static inline const char *mem_text(mem_out *m) {
    fflush(m->f);
    return m->text;
}

static inline void mem_close(mem_out *m) {
    fclose(m->f);
    free(m->text);
    m->f = NULL;
    m->text = NULL;
}

#endif
