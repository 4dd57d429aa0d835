/* records.h: the record types vor.Reader returns (Frame, Scope, Drop, Damage, Column) and
 * the conversion of one vor_reader_frame into a Frame. Shared by reader.c and records.c. */
#ifndef VORPY_RECORDS_H
#define VORPY_RECORDS_H

#include "vorpy.h"

/* Names of a reader's sites, decoded once per site (and again if a declaration changes). */
typedef struct vpy_site_names {
    char *name, *function, *file; /* the declaration the Python strings were made from */
    uint32_t line;
    PyObject *py_name, *py_function, *py_file;
} vpy_site_names;

typedef struct vpy_name_cache {
    vpy_site_names *sites; /* indexed by site id */
    uint32_t capacity;
} vpy_name_cache;

void vpy_name_cache_free(vpy_name_cache *c);

/* A Frame for `f` (read from `r`), or NULL with an exception. */
PyObject *vpy_frame_to_python(const vor_reader *r, const vor_reader_frame *f, vpy_name_cache *names);
/* The reader's columns as a list of Column; its damage reports as a list of Damage. */
PyObject *vpy_columns_to_python(const vor_reader *r);
PyObject *vpy_damage_to_python(const vor_reader *r);
/* A str from UTF-8 that may be invalid (bad bytes become U+FFFD). */
PyObject *vpy_str(const char *s);

#endif /* VORPY_RECORDS_H */
