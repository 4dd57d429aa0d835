/* resumable.c: what a @vor.profile'd generator, coroutine or async generator function
 * returns: a wrapper whose every resumption is one scope.
 *
 * A generator or a coroutine runs in pieces: each next/send/throw resumes its body until
 * the next yield or await, and between two pieces anything can run on the thread (other
 * tasks of the event loop, the consumer of the generator), or the next piece can run on
 * another thread. A scope spanning the whole life of the object would overlap all of that
 * and break the per-thread nesting vor's outputs rely on. So each resumption is its own
 * scope, opened before the body resumes and closed when it suspends, returns or raises:
 * the scopes of one generator are as many as its resumptions, and the time between them
 * is not counted (it belongs to whatever ran meanwhile).
 *
 *   vor.profiled_generator        next/send/throw/close; iterable; `yield from` works on it
 *   vor.profiled_coroutine        send/throw/close and __await__ (itself): awaitable, and
 *                                 a Coroutine to asyncio (create_task, run, gather)
 *   vor.profiled_async_generator  __aiter__/__anext__/asend/athrow/aclose return
 *                                 profiled_coroutine steps over the async generator's awaitables
 *
 * Other attributes (gi_frame, cr_code, __name__, ...) are the wrapped object's.
 */
#include "vorpy.h"

typedef struct {
    PyObject_HEAD
    PyObject *inner;     /* the generator / coroutine / async generator (or an awaitable's iterator) */
    vpy_site *site;
    vpy_site *code_site; /* for --frame-function: a frame per resumption of that function */
    PyObject *weaklist;
} vpy_resumable;

/* One resumption through PyIter_Send (am_send, or next/send). */
static PySendResult resume_send(vpy_resumable *r, PyObject *arg, PyObject **result) {
    vpy_thread *t;
    if (!vor_internal_is_collecting() || (t = vpy_thread_get()) == NULL) return PyIter_Send(r->inner, arg, result);
    vpy_open(t, r->site);
    PySendResult status = PyIter_Send(r->inner, arg, result);
    vpy_close(t, r->site);
    vpy_after_return(r->code_site);
    return status;
}

/* One resumption through a method of the inner object (throw, close, asend, ...). */
static PyObject *resume_method(vpy_resumable *r, const char *method, PyObject *args) {
    PyObject *callable = PyObject_GetAttrString(r->inner, method);
    if (callable == NULL) return NULL;
    vpy_thread *t = NULL;
    int record = vor_internal_is_collecting() && (t = vpy_thread_get()) != NULL;
    if (record) vpy_open(t, r->site);
    PyObject *result = PyObject_Call(callable, args, NULL);
    if (record) {
        vpy_close(t, r->site);
        vpy_after_return(r->code_site);
    }
    Py_DECREF(callable);
    return result;
}

static PyObject *stop_iteration(PyObject *value) {
    /* StopIteration(value), built so that a tuple value is not spread into arguments. */
    PyObject *exc = PyObject_CallOneArg(PyExc_StopIteration, value);
    Py_DECREF(value);
    if (exc == NULL) return NULL;
    PyErr_SetObject(PyExc_StopIteration, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *resumable_iternext(vpy_resumable *r) {
    PyObject *result;
    PySendResult status = resume_send(r, Py_None, &result);
    if (status == PYGEN_NEXT) return result;
    if (status == PYGEN_ERROR) return NULL;
    if (result == Py_None) {
        Py_DECREF(result);
        return NULL; /* exhausted, no value */
    }
    return stop_iteration(result);
}

static PySendResult resumable_am_send(vpy_resumable *r, PyObject *arg, PyObject **result) {
    return resume_send(r, arg, result);
}

static PyObject *resumable_send(vpy_resumable *r, PyObject *arg) {
    PyObject *result;
    PySendResult status = resume_send(r, arg, &result);
    if (status == PYGEN_NEXT) return result;
    if (status == PYGEN_ERROR) return NULL;
    return stop_iteration(result);
}

static PyObject *resumable_throw(vpy_resumable *r, PyObject *args) {
    return resume_method(r, "throw", args);
}

static PyObject *resumable_close(vpy_resumable *r, PyObject *unused) {
    PyObject *args = PyTuple_New(0);
    if (args == NULL) return NULL;
    PyObject *result = resume_method(r, "close", args);
    Py_DECREF(args);
    return result;
}

static PyObject *resumable_getattro(vpy_resumable *r, PyObject *name) {
    PyObject *v = PyObject_GenericGetAttr((PyObject *)r, name);
    if (v != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) return v;
    PyErr_Clear();
    return PyObject_GetAttr(r->inner, name);
}

static PyObject *resumable_repr(vpy_resumable *r) {
    return PyUnicode_FromFormat("<%s %s of %R>", Py_TYPE(r)->tp_name, r->site->site.name, r->inner);
}

static int resumable_traverse(vpy_resumable *r, visitproc visit, void *arg) {
    Py_VISIT(r->inner);
    return 0;
}

static int resumable_clear(vpy_resumable *r) {
    Py_CLEAR(r->inner);
    return 0;
}

static void resumable_dealloc(vpy_resumable *r) {
    PyObject_GC_UnTrack(r);
    if (r->weaklist != NULL) PyObject_ClearWeakRefs((PyObject *)r);
    resumable_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *self_iter(PyObject *self) {
    return Py_NewRef(self);
}

static PyObject *wrap(PyTypeObject *type, PyObject *inner, vpy_site *site, vpy_site *code_site) {
    vpy_resumable *r = PyObject_GC_New(vpy_resumable, type);
    if (r == NULL) return NULL;
    r->inner = Py_NewRef(inner);
    r->site = site;
    r->code_site = code_site;
    r->weaklist = NULL;
    PyObject_GC_Track(r);
    return (PyObject *)r;
}

#define RESUMABLE_TYPE_FIELDS                                                                  \
    .tp_basicsize = sizeof(vpy_resumable),                                                     \
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,                                       \
    .tp_weaklistoffset = offsetof(vpy_resumable, weaklist),                                    \
    .tp_traverse = (traverseproc)resumable_traverse, .tp_clear = (inquiry)resumable_clear,     \
    .tp_dealloc = (destructor)resumable_dealloc, .tp_repr = (reprfunc)resumable_repr,          \
    .tp_getattro = (getattrofunc)resumable_getattro

static PyMethodDef resumable_methods[] = {
    {"send", (PyCFunction)resumable_send, METH_O, "Resumes with a value (one scope)."},
    {"throw", (PyCFunction)resumable_throw, METH_VARARGS, "Raises inside (one scope)."},
    {"close", (PyCFunction)resumable_close, METH_NOARGS, "Closes it (one scope)."},
    {NULL},
};

/* ---- Generators ---------------------------------------------------------------------- */

static PyAsyncMethods generator_async = {.am_send = (sendfunc)resumable_am_send};

PyTypeObject vpy_generator_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "vor.profiled_generator",
    .tp_doc = "A generator of a @vor.profile'd function: each resumption is one scope.",
    RESUMABLE_TYPE_FIELDS,
    .tp_as_async = &generator_async,
    .tp_iter = self_iter,
    .tp_iternext = (iternextfunc)resumable_iternext,
    .tp_methods = resumable_methods,
};

PyObject *vpy_wrap_generator(PyObject *gen, vpy_site *site, vpy_site *code_site) {
    return wrap(&vpy_generator_type, gen, site, code_site);
}

/* ---- Coroutines (and one step of an async generator) ------------------------------------ */

static PyAsyncMethods coroutine_async = {
    .am_await = self_iter,
    .am_send = (sendfunc)resumable_am_send,
};

PyTypeObject vpy_coroutine_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "vor.profiled_coroutine",
    .tp_doc = "A coroutine of a @vor.profile'd function: each resumption is one scope.",
    RESUMABLE_TYPE_FIELDS,
    .tp_as_async = &coroutine_async,
    .tp_iternext = (iternextfunc)resumable_iternext,
    .tp_methods = resumable_methods,
};

PyObject *vpy_wrap_coroutine(PyObject *coro, vpy_site *site, vpy_site *code_site) {
    return wrap(&vpy_coroutine_type, coro, site, code_site);
}

/* An awaitable of the async generator (asend, athrow, aclose, __anext__) as a profiled
 * coroutine over its iterator. */
static PyObject *wrap_step(vpy_resumable *agen, PyObject *awaitable) {
    if (awaitable == NULL) return NULL;
    unaryfunc am_await = Py_TYPE(awaitable)->tp_as_async != NULL ? Py_TYPE(awaitable)->tp_as_async->am_await : NULL;
    PyObject *iter = am_await != NULL ? am_await(awaitable) : PyObject_CallMethod(awaitable, "__await__", NULL);
    Py_DECREF(awaitable);
    if (iter == NULL) return NULL;
    PyObject *step = wrap(&vpy_coroutine_type, iter, agen->site, agen->code_site);
    Py_DECREF(iter);
    return step;
}

static PyObject *agen_anext(vpy_resumable *r) {
    unaryfunc anext = Py_TYPE(r->inner)->tp_as_async != NULL ? Py_TYPE(r->inner)->tp_as_async->am_anext : NULL;
    PyObject *awaitable = anext != NULL ? anext(r->inner) : PyObject_CallMethod(r->inner, "__anext__", NULL);
    return wrap_step(r, awaitable);
}

static PyObject *agen_asend(vpy_resumable *r, PyObject *value) {
    return wrap_step(r, PyObject_CallMethod(r->inner, "asend", "O", value));
}

static PyObject *agen_athrow(vpy_resumable *r, PyObject *args) {
    PyObject *method = PyObject_GetAttrString(r->inner, "athrow");
    if (method == NULL) return NULL;
    PyObject *awaitable = PyObject_Call(method, args, NULL);
    Py_DECREF(method);
    return wrap_step(r, awaitable);
}

static PyObject *agen_aclose(vpy_resumable *r, PyObject *unused) {
    return wrap_step(r, PyObject_CallMethod(r->inner, "aclose", NULL));
}

static PyMethodDef agen_methods[] = {
    {"asend", (PyCFunction)agen_asend, METH_O, "An awaitable resuming it with a value (one scope per step)."},
    {"athrow", (PyCFunction)agen_athrow, METH_VARARGS, "An awaitable raising inside (one scope per step)."},
    {"aclose", (PyCFunction)agen_aclose, METH_NOARGS, "An awaitable closing it (one scope per step)."},
    {NULL},
};

static PyAsyncMethods agen_async = {
    .am_aiter = self_iter,
    .am_anext = (unaryfunc)agen_anext,
};

PyTypeObject vpy_async_generator_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "vor.profiled_async_generator",
    .tp_doc = "An async generator of a @vor.profile'd function: each resumption is one scope.",
    RESUMABLE_TYPE_FIELDS,
    .tp_as_async = &agen_async,
    .tp_methods = agen_methods,
};

PyObject *vpy_wrap_async_generator(PyObject *agen, vpy_site *site, vpy_site *code_site) {
    return wrap(&vpy_async_generator_type, agen, site, code_site);
}

int vpy_resumable_init(PyObject *module) {
    PyTypeObject *types[] = {&vpy_generator_type, &vpy_coroutine_type, &vpy_async_generator_type};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (PyType_Ready(types[i]) < 0) return -1;
    return 0;
}
