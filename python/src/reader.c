/* reader.c: vor.Reader, the C reader (reader.h) as a Python object.
 *
 *     with vor.Reader("run.vor") as r:
 *         for frame in r:                  # every complete frame there is now
 *             print(frame.index, frame.metrics["frame_ms"], len(frame.scopes))
 *         frame = r.read()                 # the next frame, or None: nothing complete yet
 *
 * Iteration stops where vor_reader_next() says VOR_READ_NOTHING_YET: at the end of a
 * finished file, and also before a record still being written. Iterating again later
 * picks up what was appended meanwhile, as the C reader does; `finished` tells whether the
 * end record was read (vor.Reader.follow in vor/__init__.py waits for more). Reader()
 * without a path reads bytes given to feed(). Damaged records are skipped and listed in
 * `damage`; a damaged header, a file that is not a capture or an I/O error raise
 * vor.CaptureError (an OSError) with the C reader's message.
 *
 * The file is read with the GIL released. One reader is for one thread at a time: a
 * second thread using it meanwhile gets a RuntimeError, never a race.
 */
#include "records.h"

PyObject *vpy_capture_error;

typedef struct {
    PyObject_HEAD
    vor_reader *r;
    PyObject *path; /* str, or None for a memory reader */
    int busy;
    vpy_name_cache names;
    PyObject *weaklist;
} vpy_reader;

static int reader_usable(vpy_reader *self) {
    if (self->r == NULL) {
        PyErr_SetString(PyExc_ValueError, "vor.Reader: the reader is closed");
        return 0;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "vor.Reader: used from two threads at once");
        return 0;
    }
    return 1;
}

static int reader_init(vpy_reader *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", NULL};
    PyObject *path = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Reader", kwlist, &path)) return -1;
    if (self->r != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "vor.Reader: already open");
        return -1;
    }
    if (path == Py_None) {
        self->r = vor_reader_open_memory();
        if (self->r == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->path = Py_NewRef(Py_None);
        return 0;
    }
    PyObject *encoded = NULL;
    if (!PyUnicode_FSConverter(path, &encoded)) return -1;
    char err[512];
    err[0] = '\0';
    const char *c_path = PyBytes_AS_STRING(encoded);
    vor_reader *r;
    Py_BEGIN_ALLOW_THREADS
    r = vor_reader_open(c_path, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (r == NULL) {
        PyObject *exc_args = Py_BuildValue("(s)", err[0] ? err : "cannot open the capture");
        if (exc_args != NULL) {
            PyErr_SetObject(vpy_capture_error, exc_args);
            Py_DECREF(exc_args);
        }
        Py_DECREF(encoded);
        return -1;
    }
    self->r = r;
    self->path = PyUnicode_DecodeFSDefault(c_path);
    Py_DECREF(encoded);
    return self->path != NULL ? 0 : -1;
}

static void reader_release(vpy_reader *self) {
    if (self->r != NULL) vor_reader_close(self->r);
    self->r = NULL;
    vpy_name_cache_free(&self->names);
}

static void reader_dealloc(vpy_reader *self) {
    if (self->weaklist != NULL) PyObject_ClearWeakRefs((PyObject *)self);
    reader_release(self);
    Py_CLEAR(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *raise_reader_error(vpy_reader *self) {
    PyErr_SetString(vpy_capture_error, vor_reader_error(self->r));
    return NULL;
}

/* The next frame, or None when nothing complete is there yet. */
static PyObject *reader_read(vpy_reader *self, PyObject *unused) {
    if (!reader_usable(self)) return NULL;
    vor_reader_frame f;
    vor_read_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = vor_reader_next(self->r, &f);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (st == VOR_READ_ERROR) return raise_reader_error(self);
    if (st == VOR_READ_NOTHING_YET) Py_RETURN_NONE;
    return vpy_frame_to_python(self->r, &f, &self->names);
}

static PyObject *reader_iternext(vpy_reader *self) {
    PyObject *frame = reader_read(self, NULL);
    if (frame == Py_None) {
        Py_DECREF(frame);
        return NULL; /* StopIteration: nothing more for now */
    }
    return frame;
}

static PyObject *reader_feed(vpy_reader *self, PyObject *data) {
    if (!reader_usable(self)) return NULL;
    if (self->path != Py_None) {
        PyErr_SetString(PyExc_ValueError, "vor.Reader.feed: this reader reads a file (make one with vor.Reader())");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    int taken = vor_reader_feed(self->r, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (!taken) {
        if (vor_reader_poll_header(self->r) < 0) return raise_reader_error(self);
        PyErr_SetString(PyExc_BufferError,
                        "vor.Reader.feed: too many bytes waiting undecoded; read frames, then feed the rest");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *reader_close(vpy_reader *self, PyObject *unused) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "vor.Reader: closed while another thread reads it");
        return NULL;
    }
    reader_release(self);
    Py_RETURN_NONE;
}

static PyObject *reader_enter(vpy_reader *self, PyObject *unused) {
    return Py_NewRef((PyObject *)self);
}

static PyObject *reader_exit(vpy_reader *self, PyObject *args) {
    return reader_close(self, NULL);
}

static PyObject *reader_get_info(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    if (vor_reader_poll_header(self->r) < 0) return raise_reader_error(self);
    const vor_reader_info *i = vor_reader_get_info(self->r);
    if (i == NULL) Py_RETURN_NONE;
    PyObject *producer = vpy_str(i->producer), *process = vpy_str(i->process), *clock = vpy_str(i->clock_source);
    PyObject *info = NULL;
    if (producer != NULL && process != NULL && clock != NULL) {
        info = Py_BuildValue("{s:(II),s:L,s:O,s:O,s:K,s:O,s:K,s:O,s:i,s:d,s:d}", "version", i->version_major,
                             i->version_minor, "wall_epoch_ns", (long long)i->wall_epoch_ns, "producer", producer,
                             "process", process, "pid", (unsigned long long)i->pid, "flame", i->flame ? Py_True : Py_False,
                             "clock_resolution_ns", (unsigned long long)i->clock_resolution_ns, "clock_source", clock,
                             "cross_origin_isolated", i->cross_origin_isolated, "scope_cost_ns", i->scope_cost_ns,
                             "function_cost_ns", i->function_cost_ns);
    }
    Py_XDECREF(producer);
    Py_XDECREF(process);
    Py_XDECREF(clock);
    return info;
}

static PyObject *reader_get_columns(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    return vpy_columns_to_python(self->r);
}

static PyObject *reader_get_damage(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    return vpy_damage_to_python(self->r);
}

static PyObject *reader_get_damage_count(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    return PyLong_FromUnsignedLongLong(vor_reader_damage_count(self->r));
}

static PyObject *reader_get_finished(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    return PyBool_FromLong(vor_reader_finished(self->r));
}

static PyObject *reader_get_offset(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    return PyLong_FromUnsignedLongLong(vor_reader_offset(self->r));
}

static PyObject *reader_get_error(vpy_reader *self, void *closure) {
    if (!reader_usable(self)) return NULL;
    return vpy_str(vor_reader_error(self->r));
}

static PyObject *reader_get_path(vpy_reader *self, void *closure) {
    return Py_NewRef(self->path != NULL ? self->path : Py_None);
}

static PyObject *reader_get_closed(vpy_reader *self, void *closure) {
    return PyBool_FromLong(self->r == NULL);
}

static PyMethodDef reader_methods[] = {
    {"read", (PyCFunction)reader_read, METH_NOARGS, "The next frame, or None when no complete frame is there yet."},
    {"feed", (PyCFunction)reader_feed, METH_O, "Gives a reader made with vor.Reader() more capture bytes."},
    {"close", (PyCFunction)reader_close, METH_NOARGS, "Closes the file and frees the reader."},
    {"__enter__", (PyCFunction)reader_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)reader_exit, METH_VARARGS, NULL},
    {NULL},
};

static PyGetSetDef reader_getset[] = {
    {"info", (getter)reader_get_info, NULL, "header facts (dict), or None before the header was read", NULL},
    {"columns", (getter)reader_get_columns, NULL, "the metric columns declared so far (list of Column)", NULL},
    {"damage", (getter)reader_get_damage, NULL, "damaged records skipped so far (list of Damage; the first 64)", NULL},
    {"damage_count", (getter)reader_get_damage_count, NULL, "damaged records skipped so far, all of them", NULL},
    {"finished", (getter)reader_get_finished, NULL, "True once the capture's end record was read", NULL},
    {"offset", (getter)reader_get_offset, NULL, "bytes of the input consumed", NULL},
    {"error", (getter)reader_get_error, NULL, "the reader's error message, or ''", NULL},
    {"path", (getter)reader_get_path, NULL, "the capture's path, or None", NULL},
    {"closed", (getter)reader_get_closed, NULL, "True after close()", NULL},
    {NULL},
};

PyTypeObject vpy_reader_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "vor._vor.Reader",
    .tp_doc = "Reader(path=None): reads a .vor capture, finished or still growing (None: bytes given to feed()).",
    .tp_basicsize = sizeof(vpy_reader),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)reader_init,
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)reader_iternext,
    .tp_methods = reader_methods,
    .tp_getset = reader_getset,
    .tp_weaklistoffset = offsetof(vpy_reader, weaklist),
};

int vpy_reader_init(PyObject *module) {
    vpy_capture_error = PyErr_NewExceptionWithDoc("vor.CaptureError",
                                                  "A capture could not be read: not a capture, a damaged header, an "
                                                  "I/O error (the message names the file and byte offset).",
                                                  PyExc_OSError, NULL);
    if (vpy_capture_error == NULL || PyModule_AddObjectRef(module, "CaptureError", vpy_capture_error) < 0) return -1;
    if (PyType_Ready(&vpy_reader_type) < 0) return -1;
    return PyModule_AddObjectRef(module, "Reader", (PyObject *)&vpy_reader_type);
}
