/* records.c: one frame of a capture as Python objects.
 *
 *   Frame(index, start_ns, duration_ns, overhead_ns, dropped_scopes, metrics, units,
 *         scopes, drops, has_flame)
 *   Scope(thread_id, thread, name, start_ns, duration_ns, depth, parent, open, unwound,
 *         site_id, function, file, line)
 *   Drop(cause, thread_id, thread, count)       Damage(offset, length, problem)
 *   Column(id, name, unit, is_system)
 *
 * They are struct sequences (named tuples made in C): cheap to build, fields by name or
 * position. `metrics` maps each metric present in the frame to its value, `units` each
 * of them to its unit. `scopes` is every scope of the frame on every thread, thread by
 * thread in the reader's order: the scopes that ended in the frame (end order, children
 * before their parent), then those still open at its end (`open` True, outermost first,
 * duration up to the frame's end). `parent` is the index of the parent in the same list,
 * None at depth 0, or -1 where the capture does not say (format 1.0). Times are
 * nanoseconds since the capture's time 0. Names the capture lost to damage read
 * "site N" / "thread N" (docs/FORMAT.md §4.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

static PyTypeObject frame_type, scope_type, drop_type, damage_type, column_type;
static PyObject *empty_str;

static PyStructSequence_Field frame_fields[] = {
    {"index", "frame number, from 0 at the session's start"},
    {"start_ns", "start, ns since the capture's time 0"},
    {"duration_ns", "wall time of the frame"},
    {"overhead_ns", "the profiler's own cost attributed to the frame"},
    {"dropped_scopes", "scopes the writer dropped in this frame (all causes but the duration filter)"},
    {"metrics", "dict: metric name -> value (in its unit)"},
    {"units", "dict: metric name -> unit"},
    {"scopes", "list of Scope: every scope of the frame (empty without flame frames)"},
    {"drops", "list of Drop: where and why scopes were dropped"},
    {"has_flame", "True if the frame carries scopes"},
    {NULL},
};
static PyStructSequence_Desc frame_desc = {"vor.Frame", "One frame of a capture.", frame_fields, 10};

static PyStructSequence_Field scope_fields[] = {
    {"thread_id", "the thread's id in the capture"},
    {"thread", "the thread's name"},
    {"name", "the scope's name"},
    {"start_ns", "start, ns since the capture's time 0"},
    {"duration_ns", "duration; for an open scope, up to the frame's end"},
    {"depth", "0 = outermost"},
    {"parent", "index of the parent in Frame.scopes; None at depth 0; -1 unknown (format 1.0)"},
    {"open", "True if still open at the frame's end"},
    {"unwound", "True if vor closed it (a longjmp or exception skipped its end)"},
    {"site_id", "the site's id in the capture"},
    {"function", "function of the site, or ''"},
    {"file", "source file of the site, or ''"},
    {"line", "line of the site, or 0"},
    {NULL},
};
static PyStructSequence_Desc scope_desc = {"vor.Scope", "One scope of a frame.", scope_fields, 13};

static PyStructSequence_Field drop_fields[] = {
    {"cause", "thread_buffer_full, too_deep, frame_full, thread_refused, site_table_full or filtered"},
    {"thread_id", "the thread whose scopes were lost (0: none applies)"},
    {"thread", "its name, or None"},
    {"count", "scopes lost"},
    {NULL},
};
static PyStructSequence_Desc drop_desc = {"vor.Drop", "Scopes a frame lost, by cause and thread.", drop_fields, 4};

static PyStructSequence_Field damage_fields[] = {
    {"offset", "byte offset of the damaged record"},
    {"length", "bytes skipped to reach the next intact record"},
    {"problem", "what was wrong"},
    {NULL},
};
static PyStructSequence_Desc damage_desc = {"vor.Damage", "A damaged record the reader skipped.", damage_fields, 3};

static PyStructSequence_Field column_fields[] = {
    {"id", "the column's id"},
    {"name", "metric name"},
    {"unit", "unit, or ''"},
    {"is_system", "True for vor's own columns (frame_ms, memory_mb, ...)"},
    {NULL},
};
static PyStructSequence_Desc column_desc = {"vor.Column", "A metric column of a capture.", column_fields, 4};

PyObject *vpy_str(const char *s) {
    if (s == NULL) s = "";
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static const char *drop_cause_name(uint32_t cause) {
    switch (cause) {
    case VOR_DROP_THREAD_BUFFER_FULL: return "thread_buffer_full";
    case VOR_DROP_TOO_DEEP: return "too_deep";
    case VOR_DROP_FRAME_FULL: return "frame_full";
    case VOR_DROP_THREAD_REFUSED: return "thread_refused";
    case VOR_DROP_SITE_TABLE_FULL: return "site_table_full";
    case VOR_DROP_FILTERED: return "filtered";
    default: return NULL;
    }
}

static PyObject *thread_name(const vor_reader *r, uint32_t id) {
    const vor_reader_thread *t = vor_reader_get_thread(r, id);
    if (t != NULL && t->name != NULL) return vpy_str(t->name);
    return PyUnicode_FromFormat("thread %u", id);
}

static int same(const char *a, const char *b) {
    if (a == NULL || b == NULL) return a == b;
    return strcmp(a, b) == 0;
}

static char *copy(const char *s) {
    return s != NULL ? strdup(s) : NULL;
}

static void clear_names(vpy_site_names *n) {
    free(n->name);
    free(n->function);
    free(n->file);
    Py_CLEAR(n->py_name);
    Py_CLEAR(n->py_function);
    Py_CLEAR(n->py_file);
    memset(n, 0, sizeof *n);
}

void vpy_name_cache_free(vpy_name_cache *c) {
    for (uint32_t i = 0; i < c->capacity; i++) clear_names(&c->sites[i]);
    free(c->sites);
    c->sites = NULL;
    c->capacity = 0;
}

/* The names of site `id` (borrowed from the cache), made again if its declaration changed.
 * Undeclared sites get "site N" (not cached). Returns 0 on error. */
static int site_names(const vor_reader *r, vpy_name_cache *c, uint32_t id, PyObject **name, PyObject **function,
                      PyObject **file, uint32_t *line, PyObject **owned) {
    *owned = NULL;
    const vor_reader_site *s = vor_reader_get_site(r, id);
    if (s == NULL) {
        *owned = PyUnicode_FromFormat("site %u", id);
        *name = *owned;
        *function = *file = empty_str;
        *line = 0;
        return *owned != NULL;
    }
    if (id >= c->capacity) {
        uint32_t capacity = c->capacity ? c->capacity : 64;
        while (capacity <= id) capacity *= 2;
        vpy_site_names *grown = realloc(c->sites, capacity * sizeof *grown);
        if (grown == NULL) {
            PyErr_NoMemory();
            return 0;
        }
        memset(grown + c->capacity, 0, (capacity - c->capacity) * sizeof *grown);
        c->sites = grown;
        c->capacity = capacity;
    }
    vpy_site_names *n = &c->sites[id];
    if (n->py_name == NULL || !same(n->name, s->name) || !same(n->function, s->function) || !same(n->file, s->file) ||
        n->line != s->line) {
        clear_names(n);
        n->name = copy(s->name);
        n->function = copy(s->function);
        n->file = copy(s->file);
        n->line = s->line;
        n->py_name = vpy_str(s->name);
        n->py_function = vpy_str(s->function);
        n->py_file = vpy_str(s->file);
        if (n->py_name == NULL || n->py_function == NULL || n->py_file == NULL) {
            clear_names(n);
            return 0;
        }
    }
    *name = n->py_name;
    *function = n->py_function;
    *file = n->py_file;
    *line = n->line;
    return 1;
}

/* Sets item i of a struct sequence, taking the reference; a NULL value fails. */
static int put(PyObject *seq, Py_ssize_t i, PyObject *value) {
    if (value == NULL) return 0;
    PyStructSequence_SET_ITEM(seq, i, value);
    return 1;
}

static PyObject *make_scope(const vor_reader *r, vpy_name_cache *names, uint32_t thread_id, PyObject *thread,
                            const vor_reader_scope *s, uint32_t base, uint32_t count) {
    PyObject *name, *function, *file, *owned;
    uint32_t line;
    if (!site_names(r, names, s->site_id, &name, &function, &file, &line, &owned)) return NULL;
    PyObject *scope = PyStructSequence_New(&scope_type);
    if (scope == NULL) {
        Py_XDECREF(owned);
        return NULL;
    }
    PyObject *parent;
    if (s->parent == VOR_PARENT_NONE || (s->parent != VOR_PARENT_UNKNOWN && s->parent >= count))
        parent = Py_NewRef(Py_None);
    else if (s->parent == VOR_PARENT_UNKNOWN)
        parent = PyLong_FromLong(-1);
    else
        parent = PyLong_FromUnsignedLong(base + s->parent);
    int ok = put(scope, 0, PyLong_FromUnsignedLong(thread_id)) && put(scope, 1, Py_NewRef(thread)) &&
             put(scope, 2, Py_NewRef(name)) && put(scope, 3, PyLong_FromLongLong(s->start_ns)) &&
             put(scope, 4, PyLong_FromLongLong(s->duration_ns)) && put(scope, 5, PyLong_FromUnsignedLong(s->depth)) &&
             put(scope, 6, parent) && put(scope, 7, PyBool_FromLong(s->flags & VOR_SCOPE_OPEN)) &&
             put(scope, 8, PyBool_FromLong(s->flags & VOR_SCOPE_UNWOUND)) &&
             put(scope, 9, PyLong_FromUnsignedLong(s->site_id)) && put(scope, 10, Py_NewRef(function)) &&
             put(scope, 11, Py_NewRef(file)) && put(scope, 12, PyLong_FromUnsignedLong(line));
    Py_XDECREF(owned);
    if (!ok) {
        Py_DECREF(scope);
        return NULL;
    }
    return scope;
}

static PyObject *make_scopes(const vor_reader *r, const vor_reader_frame *f, vpy_name_cache *names) {
    PyObject *list = PyList_New(0);
    if (list == NULL) return NULL;
    for (uint32_t ti = 0; ti < f->n_threads; ti++) {
        const vor_reader_thread_scopes *ts = &f->threads[ti];
        uint32_t count = ts->n_scopes + ts->n_open;
        uint32_t base = (uint32_t)PyList_GET_SIZE(list);
        PyObject *thread = thread_name(r, ts->thread_id);
        if (thread == NULL) goto fail;
        for (uint32_t i = 0; i < count; i++) {
            PyObject *scope = make_scope(r, names, ts->thread_id, thread, &ts->scopes[i], base, count);
            if (scope == NULL || PyList_Append(list, scope) < 0) {
                Py_XDECREF(scope);
                Py_DECREF(thread);
                goto fail;
            }
            Py_DECREF(scope);
        }
        Py_DECREF(thread);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

static PyObject *make_drops(const vor_reader *r, const vor_reader_frame *f) {
    PyObject *list = PyList_New(f->n_drops);
    if (list == NULL) return NULL;
    for (uint32_t i = 0; i < f->n_drops; i++) {
        const vor_reader_drop *d = &f->drops[i];
        PyObject *drop = PyStructSequence_New(&drop_type);
        const char *cause = drop_cause_name(d->cause);
        PyObject *thread = d->thread_id != 0 ? thread_name(r, d->thread_id) : Py_NewRef(Py_None);
        if (drop == NULL ||
            !(put(drop, 0, cause != NULL ? PyUnicode_FromString(cause) : PyUnicode_FromFormat("cause %u", d->cause)) &&
              put(drop, 1, PyLong_FromUnsignedLong(d->thread_id)) && put(drop, 2, thread) &&
              put(drop, 3, PyLong_FromUnsignedLongLong(d->count)))) {
            Py_XDECREF(drop);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, drop);
    }
    return list;
}

PyObject *vpy_frame_to_python(const vor_reader *r, const vor_reader_frame *f, vpy_name_cache *names) {
    PyObject *metrics = PyDict_New(), *units = PyDict_New();
    PyObject *frame = NULL;
    if (metrics == NULL || units == NULL) goto fail;
    for (uint32_t i = 0; i < f->n_values; i++) {
        const vor_reader_column *c = vor_reader_get_column(r, f->values[i].column_id);
        PyObject *name = c != NULL ? vpy_str(c->name) : PyUnicode_FromFormat("column %u", f->values[i].column_id);
        PyObject *value = PyFloat_FromDouble(f->values[i].value);
        PyObject *unit = vpy_str(c != NULL ? c->unit : "");
        int failed = name == NULL || value == NULL || unit == NULL || PyDict_SetItem(metrics, name, value) < 0 ||
                     PyDict_SetItem(units, name, unit) < 0;
        Py_XDECREF(name);
        Py_XDECREF(value);
        Py_XDECREF(unit);
        if (failed) goto fail;
    }
    frame = PyStructSequence_New(&frame_type);
    if (frame == NULL) goto fail;
    PyObject *scopes = f->has_flame ? make_scopes(r, f, names) : PyList_New(0);
    /* metrics, units and scopes first: from then on the frame owns them, and releasing the
     * frame releases whatever was put. */
    if (!(put(frame, 5, metrics) && put(frame, 6, units) && put(frame, 7, scopes) &&
          put(frame, 0, PyLong_FromUnsignedLongLong(f->index)) && put(frame, 1, PyLong_FromLongLong(f->start_ns)) &&
          put(frame, 2, PyLong_FromLongLong(f->duration_ns)) && put(frame, 3, PyLong_FromLongLong(f->overhead_ns)) &&
          put(frame, 4, PyLong_FromUnsignedLongLong(f->dropped_scopes)) && put(frame, 8, make_drops(r, f)) &&
          put(frame, 9, PyBool_FromLong(f->has_flame)))) {
        Py_DECREF(frame);
        return NULL;
    }
    return frame;
fail:
    Py_XDECREF(metrics);
    Py_XDECREF(units);
    return NULL;
}

PyObject *vpy_columns_to_python(const vor_reader *r) {
    PyObject *list = PyList_New(0);
    if (list == NULL) return NULL;
    uint32_t n = vor_reader_column_count(r);
    for (uint32_t id = 0; id < n; id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (c == NULL) continue;
        PyObject *column = PyStructSequence_New(&column_type);
        if (column == NULL || !(put(column, 0, PyLong_FromUnsignedLong(c->id)) && put(column, 1, vpy_str(c->name)) &&
                                put(column, 2, vpy_str(c->unit)) && put(column, 3, PyBool_FromLong(c->is_system))) ||
            PyList_Append(list, column) < 0) {
            Py_XDECREF(column);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(column);
    }
    return list;
}

PyObject *vpy_damage_to_python(const vor_reader *r) {
    PyObject *list = PyList_New(0);
    if (list == NULL) return NULL;
    uint64_t n = vor_reader_damage_count(r);
    for (uint32_t i = 0; i < n && i < VOR_READER_MAX_DAMAGE_REPORTS; i++) {
        vor_reader_damage d;
        if (!vor_reader_get_damage(r, i, &d)) break;
        PyObject *damage = PyStructSequence_New(&damage_type);
        if (damage == NULL ||
            !(put(damage, 0, PyLong_FromUnsignedLongLong(d.offset)) &&
              put(damage, 1, PyLong_FromUnsignedLongLong(d.length)) && put(damage, 2, vpy_str(d.problem))) ||
            PyList_Append(list, damage) < 0) {
            Py_XDECREF(damage);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(damage);
    }
    return list;
}

int vpy_records_init(PyObject *module) {
    struct {
        PyTypeObject *type;
        PyStructSequence_Desc *desc;
        const char *name;
    } types[] = {
        {&frame_type, &frame_desc, "Frame"},   {&scope_type, &scope_desc, "Scope"},
        {&drop_type, &drop_desc, "Drop"},      {&damage_type, &damage_desc, "Damage"},
        {&column_type, &column_desc, "Column"},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (PyStructSequence_InitType2(types[i].type, types[i].desc) < 0) return -1;
        if (PyModule_AddObjectRef(module, types[i].name, (PyObject *)types[i].type) < 0) return -1;
    }
    empty_str = PyUnicode_FromString("");
    return empty_str != NULL ? 0 : -1;
}
