/* read_metrics.c: every metric of a capture as one column of numbers per metric, which is
 * what a notebook plots (vor.read_metrics in vor/__init__.py makes numpy arrays of them).
 *
 * The capture is read once, in C and with the GIL released, into one float64 array per
 * column plus the frames' index, start and duration; a frame without a value of a column
 * (a metric set later in the run, a record lost to damage) holds NaN there. The result is
 * handed over as bytes in native byte order. Memory: 8 bytes per frame and column, the
 * same order as the file's own size.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

typedef struct {
    uint32_t column_id;
    double *values;
} column_buffer;

typedef struct {
    uint64_t frames, capacity;
    uint64_t *index;
    int64_t *start, *duration;
    column_buffer *columns;
    uint32_t n_columns;
    int32_t *slot_of_id; /* column id -> slot in columns, -1 */
    uint32_t id_capacity;
} table;

static void table_free(table *t) {
    free(t->index);
    free(t->start);
    free(t->duration);
    for (uint32_t i = 0; i < t->n_columns; i++) free(t->columns[i].values);
    free(t->columns);
    free(t->slot_of_id);
}

static int grow_rows(table *t) {
    uint64_t capacity = t->capacity ? t->capacity * 2 : 1024;
    uint64_t *index = realloc(t->index, capacity * sizeof *index);
    if (index == NULL) return 0;
    t->index = index;
    int64_t *start = realloc(t->start, capacity * sizeof *start);
    if (start == NULL) return 0;
    t->start = start;
    int64_t *duration = realloc(t->duration, capacity * sizeof *duration);
    if (duration == NULL) return 0;
    t->duration = duration;
    for (uint32_t i = 0; i < t->n_columns; i++) {
        double *v = realloc(t->columns[i].values, capacity * sizeof *v);
        if (v == NULL) return 0;
        t->columns[i].values = v;
    }
    t->capacity = capacity;
    return 1;
}

/* The slot of column `id`, added (NaN for the frames before) on first sight; -1 when out
 * of memory. */
static int32_t slot_for(table *t, uint32_t id) {
    if (id >= VOR_READER_MAX_COLUMNS) return -1;
    if (id >= t->id_capacity) {
        uint32_t capacity = t->id_capacity ? t->id_capacity : 64;
        while (capacity <= id) capacity *= 2;
        int32_t *slots = realloc(t->slot_of_id, capacity * sizeof *slots);
        if (slots == NULL) return -1;
        for (uint32_t i = t->id_capacity; i < capacity; i++) slots[i] = -1;
        t->slot_of_id = slots;
        t->id_capacity = capacity;
    }
    if (t->slot_of_id[id] >= 0) return t->slot_of_id[id];
    column_buffer *columns = realloc(t->columns, (t->n_columns + 1) * sizeof *columns);
    if (columns == NULL) return -1;
    t->columns = columns;
    double *values = malloc((t->capacity ? t->capacity : 1) * sizeof *values);
    if (values == NULL) return -1;
    for (uint64_t r = 0; r < t->frames; r++) values[r] = NAN;
    columns[t->n_columns].column_id = id;
    columns[t->n_columns].values = values;
    t->slot_of_id[id] = (int32_t)t->n_columns;
    return (int32_t)t->n_columns++;
}

/* Reads every frame there is now. Returns VOR_READ_NOTHING_YET when done, VOR_READ_ERROR
 * on a reader error, 2 when out of memory. */
static int read_all(vor_reader *r, table *t) {
    vor_reader_frame f;
    vor_read_status st;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        if (t->frames == t->capacity && !grow_rows(t)) return 2;
        uint64_t row = t->frames;
        t->index[row] = f.index;
        t->start[row] = f.start_ns;
        t->duration[row] = f.duration_ns;
        for (uint32_t i = 0; i < t->n_columns; i++) t->columns[i].values[row] = NAN;
        for (uint32_t i = 0; i < f.n_values; i++) {
            int32_t slot = slot_for(t, f.values[i].column_id);
            if (slot < 0) return 2;
            t->columns[slot].values[row] = f.values[i].value;
        }
        t->frames++;
    }
    return st;
}

static PyObject *bytes_of(const void *p, uint64_t n, size_t size) {
    return PyBytes_FromStringAndSize(n ? p : "", (Py_ssize_t)(n * size));
}

PyObject *vpy_read_metrics_raw(PyObject *module, PyObject *path) {
    PyObject *encoded = NULL;
    if (!PyUnicode_FSConverter(path, &encoded)) return NULL;
    char err[512];
    err[0] = '\0';
    table t;
    memset(&t, 0, sizeof t);
    vor_reader *r;
    int st;
    Py_BEGIN_ALLOW_THREADS
    r = vor_reader_open(PyBytes_AS_STRING(encoded), err, sizeof err);
    st = r != NULL ? read_all(r, &t) : VOR_READ_ERROR;
    Py_END_ALLOW_THREADS
    Py_DECREF(encoded);
    PyObject *result = NULL;
    if (r == NULL) {
        PyErr_SetString(vpy_capture_error, err[0] ? err : "cannot open the capture");
        goto done;
    }
    if (st == 2) {
        PyErr_NoMemory();
        goto done;
    }
    if (st == VOR_READ_ERROR) {
        PyErr_SetString(vpy_capture_error, vor_reader_error(r));
        goto done;
    }
    PyObject *columns = PyList_New(0);
    if (columns == NULL) goto done;
    for (uint32_t i = 0; i < t.n_columns; i++) {
        const vor_reader_column *c = vor_reader_get_column(r, t.columns[i].column_id);
        PyObject *entry = Py_BuildValue("(NNON)", c != NULL ? vpy_str(c->name) : PyUnicode_FromFormat("column %u", t.columns[i].column_id),
                                        vpy_str(c != NULL ? c->unit : ""),
                                        c != NULL && c->is_system ? Py_True : Py_False,
                                        bytes_of(t.columns[i].values, t.frames, sizeof(double)));
        if (entry == NULL || PyList_Append(columns, entry) < 0) {
            Py_XDECREF(entry);
            Py_DECREF(columns);
            goto done;
        }
        Py_DECREF(entry);
    }
    result = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:K,s:O}", "columns", columns, "index",
                           bytes_of(t.index, t.frames, sizeof(uint64_t)), "start_ns",
                           bytes_of(t.start, t.frames, sizeof(int64_t)), "duration_ns",
                           bytes_of(t.duration, t.frames, sizeof(int64_t)), "damage", vpy_damage_to_python(r),
                           "damage_count", (unsigned long long)vor_reader_damage_count(r), "finished",
                           vor_reader_finished(r) ? Py_True : Py_False);
done:
    if (r != NULL) vor_reader_close(r);
    table_free(&t);
    return result;
}
