/* module.c: the `vor._vor` extension module: libvor's API for Python, and initialisation.
 *
 * Each function here is one call into libvor (vor.h). Those that may write files or wait
 * for the frame lock (enable, frame_mark, flush_recording, shutdown) release the GIL
 * meanwhile, so the program's other threads run on; none of vor's work needs Python.
 * The package vor/__init__.py re-exports all of this with the pure-Python parts
 * (@vor.all_functions, Reader.follow, read_metrics' arrays, python -m vor).
 */
#include <string.h>

#include "vorpy.h"

const char *vpy_utf8(PyObject *s, const char *what) {
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(s)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(s, &n);
    if (utf8 == NULL) return NULL;
    if ((size_t)n != strlen(utf8)) {
        PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
        return NULL;
    }
    return utf8;
}

void vpy_mark_frame_now(void) {
    Py_BEGIN_ALLOW_THREADS
    vor_frame_mark();
    Py_END_ALLOW_THREADS
}

static PyObject *py_enable(PyObject *m, PyObject *unused) {
    Py_BEGIN_ALLOW_THREADS
    vor_enable();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_disable(PyObject *m, PyObject *unused) {
    vor_disable();
    Py_RETURN_NONE;
}

static PyObject *py_is_enabled(PyObject *m, PyObject *unused) {
    return PyBool_FromLong(vor_is_enabled());
}

static PyObject *py_frame_mark(PyObject *m, PyObject *unused) {
    vpy_mark_frame_now();
    Py_RETURN_NONE;
}

static PyObject *py_flush_recording(PyObject *m, PyObject *unused) {
    Py_BEGIN_ALLOW_THREADS
    vor_flush_recording();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_shutdown(PyObject *m, PyObject *unused) {
    Py_BEGIN_ALLOW_THREADS
    vor_shutdown();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_setup(PyObject *m, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"thread_buffer_scopes", "max_threads", "max_frame_scopes", "frame_ring_frames", NULL};
    unsigned int buffer = 0, threads = 0, frame_scopes = 0, ring = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$IIII:setup", kwlist, &buffer, &threads, &frame_scopes, &ring))
        return NULL;
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.thread_buffer_scopes = buffer;
    desc.max_threads = threads;
    desc.max_frame_scopes = frame_scopes;
    desc.frame_ring_frames = ring;
    return PyBool_FromLong(vor_setup(&desc));
}

static PyObject *py_record_metric(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record_metric(name, value)");
        return NULL;
    }
    const char *name = vpy_utf8(args[0], "the metric name");
    if (name == NULL) return NULL;
    double value = PyFloat_AsDouble(args[1]);
    if (value == -1.0 && PyErr_Occurred()) return NULL;
    vor_record_metric(name, value);
    Py_RETURN_NONE;
}

static PyObject *py_record_metric_unit(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record_metric_unit(name, unit)");
        return NULL;
    }
    const char *name = vpy_utf8(args[0], "the metric name");
    const char *unit = name != NULL ? vpy_utf8(args[1], "the unit") : NULL;
    if (unit == NULL) return NULL;
    vor_record_metric_unit(name, unit);
    Py_RETURN_NONE;
}

static int non_negative(PyObject *v, uint64_t *out, const char *what) {
    if (!PyLong_Check(v)) {
        PyObject *i = PyNumber_Index(v);
        if (i == NULL) return 0;
        Py_DECREF(i);
    }
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "record_io: %s must be between 0 and 2**64-1", what);
        }
        return 0;
    }
    *out = x;
    return 1;
}

static PyObject *py_record_io(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record_io(ns, bytes)");
        return NULL;
    }
    uint64_t ns, bytes;
    if (!non_negative(args[0], &ns, "ns") || !non_negative(args[1], &bytes, "bytes")) return NULL;
    vor_record_io(ns, bytes);
    Py_RETURN_NONE;
}

static PyObject *py_set_thread_name(PyObject *m, PyObject *name) {
    const char *utf8 = vpy_utf8(name, "the thread name");
    if (utf8 == NULL) return NULL;
    vpy_thread_mark_named(); /* the thread keeps this name, not its threading one */
    vor_set_thread_name(utf8);
    Py_RETURN_NONE;
}

static PyObject *py_frame_stats(PyObject *m, PyObject *unused) {
    vor_frame_stats s;
    vor_frame_stats_get(&s);
    return Py_BuildValue("{s:K,s:K,s:K,s:d,s:K,s:K,s:K}", "count", (unsigned long long)s.count, "min_ns",
                         (unsigned long long)s.min_ns, "max_ns", (unsigned long long)s.max_ns, "mean_ns", s.mean_ns,
                         "p50_ns", (unsigned long long)s.p50_ns, "p95_ns", (unsigned long long)s.p95_ns, "p99_ns",
                         (unsigned long long)s.p99_ns);
}

static PyObject *py_frame_stats_percentile(PyObject *m, PyObject *p) {
    double v = PyFloat_AsDouble(p);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    if (!(v >= 0 && v <= 100)) {
        PyErr_SetString(PyExc_ValueError, "frame_stats_percentile: p must be between 0 and 100");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(vor_frame_stats_percentile_ns(v));
}

static PyObject *py_frame_stats_reset(PyObject *m, PyObject *unused) {
    vor_frame_stats_reset();
    Py_RETURN_NONE;
}

static PyObject *py_calibrate(PyObject *m, PyObject *unused) {
    double v;
    Py_BEGIN_ALLOW_THREADS
    v = vor_calibrate();
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble(v);
}

static PyObject *py_empty_span_ns(PyObject *m, PyObject *unused) {
    return PyFloat_FromDouble(vor_empty_span_ns());
}

static PyObject *py_now_ns(PyObject *m, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(vor_now_ns());
}

static PyObject *py_counters(PyObject *m, PyObject *unused) {
    vor_counters c;
    vor_get_counters(&c);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "frames", (unsigned long long)c.frames,
                         "scopes_recorded", (unsigned long long)c.scopes_recorded, "scopes_dropped",
                         (unsigned long long)c.scopes_dropped, "unbalanced_ends", (unsigned long long)c.unbalanced_ends,
                         "open_at_exit", (unsigned long long)c.open_at_exit, "threads", (unsigned long long)c.threads,
                         "python_sites", (unsigned long long)vpy_sites_used(), "python_sites_refused",
                         (unsigned long long)vpy_sites_refused(), "python_ends_out_of_order",
                         (unsigned long long)vpy_unmatched_ends(), "python_too_deep", (unsigned long long)vpy_too_deep());
}

static PyMethodDef module_methods[] = {
    {"enable", py_enable, METH_NOARGS,
     "Starts collection; the first call starts a session (reads VOR_RECORD, VOR_TRACE, ...)."},
    {"disable", py_disable, METH_NOARGS, "Stops collection (vor.enable() resumes the session)."},
    {"is_enabled", py_is_enabled, METH_NOARGS, "True while collecting."},
    {"frame_mark", py_frame_mark, METH_NOARGS, "Closes the current frame and opens the next."},
    {"flush_recording", py_flush_recording, METH_NOARGS, "Makes every output write what it has."},
    {"shutdown", py_shutdown, METH_NOARGS, "Ends the session: outputs closed properly, collection off."},
    {"setup", (PyCFunction)(void (*)(void))py_setup, METH_VARARGS | METH_KEYWORDS,
     "setup(*, thread_buffer_scopes=0, max_threads=0, max_frame_scopes=0, frame_ring_frames=0): capacities "
     "for the next session (0 keeps the default); False if a session runs."},
    {"profile", (PyCFunction)(void (*)(void))vpy_profile, METH_FASTCALL | METH_KEYWORDS,
     "@vor.profile, @vor.profile(\"name\"): each call of the function is a scope (module.Class.method by "
     "default); each resumption of a generator or coroutine is one."},
    {"scope", vpy_scope, METH_O, "with vor.scope(\"name\"): a scope from the block's start to its exit."},
    {"skip", vpy_skip, METH_O, "@vor.skip: leaves a function out of @vor.all_functions and --all-functions."},
    {"record_metric", (PyCFunction)(void (*)(void))py_record_metric, METH_FASTCALL,
     "record_metric(name, value): the metric's latest value, in every frame from now on."},
    {"record_metric_unit", (PyCFunction)(void (*)(void))py_record_metric_unit, METH_FASTCALL,
     "record_metric_unit(name, unit): the metric's unit."},
    {"record_io", (PyCFunction)(void (*)(void))py_record_io, METH_FASTCALL,
     "record_io(ns, bytes): one I/O operation into this frame's io_ms and io_MB."},
    {"set_thread_name", py_set_thread_name, METH_O,
     "Names the calling thread in every output (default: its threading name)."},
    {"frame_stats", py_frame_stats, METH_NOARGS,
     "Frame times so far: count, min_ns, max_ns, mean_ns, p50_ns, p95_ns, p99_ns (within 0.4%)."},
    {"frame_stats_percentile", py_frame_stats_percentile, METH_O, "The frame time at percentile p (0..100), ns."},
    {"frame_stats_reset", py_frame_stats_reset, METH_NOARGS, "Forgets the frames seen so far."},
    {"calibrate", py_calibrate, METH_NOARGS, "Measures one empty C scope's cost (ns) and returns it."},
    {"empty_span_ns", py_empty_span_ns, METH_NOARGS, "The last calibrate() figure (calibrates if it never ran)."},
    {"now_ns", py_now_ns, METH_NOARGS, "vor's clock (CLOCK_MONOTONIC), ns: the time base of every output."},
    {"counters", py_counters, METH_NOARGS, "Session totals (frames, scopes recorded and dropped, ...)."},
    {"_hook_start", (PyCFunction)(void (*)(void))vpy_hook_start, METH_FASTCALL | METH_KEYWORDS,
     "_hook_start(all_functions, frame_function): the profiling hook on this thread and new threads."},
    {"_hook_stop", vpy_hook_stop, METH_NOARGS, "Removes the profiling hook."},
    {"_hook_thread_bootstrap", (PyCFunction)(void (*)(void))vpy_hook_thread_bootstrap, METH_FASTCALL,
     "threading.setprofile's function: installs the C hook in a new thread."},
    {"_read_metrics", vpy_read_metrics_raw, METH_O, "The columns of a capture as bytes (see vor.read_metrics)."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "vor._vor",
    .m_doc = "vor's C extension: instrumentation and capture reading over libvor.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__vor(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    if (PyType_Ready(&vpy_profiled_type) < 0 || vpy_sites_init() < 0 || vpy_resumable_init(m) < 0 ||
        vpy_scope_init(m) < 0 || vpy_records_init(m) < 0 || vpy_reader_init(m) < 0 ||
        PyModule_AddStringConstant(m, "version", vor_version_string()) < 0 ||
        PyModule_AddIntConstant(m, "max_python_sites", VPY_MAX_SITES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
