/* scope.c: `with vor.scope("name"):`, a scope from the block's start to its exit.
 *
 * vor.scope(name) returns the context manager of its call site: one per (calling code
 * object, name), made on first use with a static vor_site named `name` whose function,
 * file and line are those of the first `with` that used the name in that code. Returning
 * the same object every time costs no allocation; its state is on the thread's stack
 * (thread_stack.c), so one object serves recursion, threads and nested uses alike.
 * __enter__ and __exit__ are C methods; __exit__ closes the scope whether the block ended
 * normally or by an exception (which it lets through).
 *
 * Finding the object is a lookup in a direct-mapped cache of 1,024 entries keyed by the
 * pointers of the calling code object and of the name (string constants are the same
 * object on every run of the code), then, on a miss, in a dictionary keyed by (code,
 * name) by value, bounded with the sites. A name built at run time (an f-string) is a new
 * object each time: it misses the cache and pays the dictionary lookup (~50 ns more).
 */
#include <string.h>

#include "cpython_frames.h"

typedef struct {
    PyObject_HEAD
    vpy_site *site; /* NULL: not recorded (the site table was full) */
} vpy_scope_object;

static PyObject *scope_enter(vpy_scope_object *s, PyObject *unused) {
    vpy_thread *t;
    if (s->site != NULL && (t = vpy_thread_get()) != NULL) vpy_open(t, s->site);
    return Py_NewRef((PyObject *)s);
}

static PyObject *scope_exit(vpy_scope_object *s, PyObject *const *args, Py_ssize_t nargs) {
    vpy_thread *t;
    if (s->site != NULL && (t = vpy_thread_get()) != NULL) vpy_close(t, s->site);
    Py_RETURN_NONE;
}

static PyObject *scope_repr(vpy_scope_object *s) {
    if (s->site == NULL) return PyUnicode_FromString("<vor.scope (not recorded)>");
    return PyUnicode_FromFormat("<vor.scope %s at %s:%u>", s->site->site.name,
                                s->site->site.file != NULL ? s->site->site.file : "?", s->site->site.line);
}

static PyObject *scope_get_name(vpy_scope_object *s, void *closure) {
    if (s->site == NULL) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s->site->site.name, (Py_ssize_t)strlen(s->site->site.name), "surrogateescape");
}

static PyMethodDef scope_methods[] = {
    {"__enter__", (PyCFunction)scope_enter, METH_NOARGS, "Opens the scope."},
    {"__exit__", (PyCFunction)(void (*)(void))scope_exit, METH_FASTCALL, "Closes the scope (exceptions pass through)."},
    {NULL},
};

static PyGetSetDef scope_getset[] = {
    {"name", (getter)scope_get_name, NULL, "the scope's name", NULL},
    {NULL},
};

PyTypeObject vpy_scope_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "vor.scope_site",
    .tp_doc = "The context manager vor.scope(name) returns for one call site.",
    .tp_basicsize = sizeof(vpy_scope_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = scope_methods,
    .tp_getset = scope_getset,
    .tp_repr = (reprfunc)scope_repr,
};

#define CACHE_SIZE 1024u

typedef struct {
    PyObject *code; /* strong references (code may be NULL) */
    PyObject *name;
    PyObject *scope;
} cache_entry;

static cache_entry cache[CACHE_SIZE];
static PyObject *by_site;      /* (code or None, name) -> scope object */
static PyObject *not_recorded; /* the scope object of sites that could not be had */

static inline size_t slot_of(PyObject *code, PyObject *name) {
    uintptr_t h = ((uintptr_t)code >> 4) * 0x9E3779B97F4A7C15u ^ ((uintptr_t)name >> 4);
    return (size_t)((h ^ (h >> 29)) & (CACHE_SIZE - 1));
}

static PyObject *scope_slow(PyObject *code, PyObject *name, size_t slot) {
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "vor.scope: the name must be a str, not %.100s", Py_TYPE(name)->tp_name);
        return NULL;
    }
    PyObject *code_key = code != NULL ? code : Py_None;
    PyObject *key = PyTuple_Pack(2, code_key, name);
    if (key == NULL) return NULL;
    PyObject *scope = PyDict_GetItemWithError(by_site, key);
    if (scope == NULL && PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (scope == NULL) {
        PyCodeObject *co = code != NULL ? (PyCodeObject *)code : NULL;
        vpy_site *site = vpy_site_get(name, co != NULL ? co->co_qualname : NULL, co != NULL ? co->co_filename : NULL,
                                      co != NULL ? vpy_caller_line() : 0);
        if (site == NULL) {
            scope = not_recorded; /* reported once by sites.c; the table stays full */
            goto remember;
        }
        vpy_scope_object *made = PyObject_New(vpy_scope_object, &vpy_scope_type);
        if (made == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        made->site = site;
        if (PyDict_SetItem(by_site, key, (PyObject *)made) < 0) {
            Py_DECREF(made);
            Py_DECREF(key);
            return NULL;
        }
        Py_DECREF(made); /* the dictionary holds it */
        scope = (PyObject *)made;
    }
remember:
    Py_DECREF(key);
    /* The entry holds its objects, so a pointer it compares cannot be a freed one reused. */
    cache_entry *e = &cache[slot];
    PyObject *old_code = e->code, *old_name = e->name, *old_scope = e->scope;
    e->code = Py_XNewRef(code);
    e->name = Py_NewRef(name);
    e->scope = Py_NewRef(scope);
    Py_XDECREF(old_code);
    Py_XDECREF(old_name);
    Py_XDECREF(old_scope);
    return Py_NewRef(scope);
}

PyObject *vpy_scope(PyObject *module, PyObject *name) {
    PyObject *code = vpy_current_code();
    size_t slot = slot_of(code, name);
    cache_entry *e = &cache[slot];
    if (e->name == name && e->code == code) return Py_NewRef(e->scope);
    return scope_slow(code, name, slot);
}

int vpy_scope_init(PyObject *module) {
    if (PyType_Ready(&vpy_scope_type) < 0) return -1;
    by_site = PyDict_New();
    if (by_site == NULL) return -1;
    vpy_scope_object *none = PyObject_New(vpy_scope_object, &vpy_scope_type);
    if (none == NULL) return -1;
    none->site = NULL;
    not_recorded = (PyObject *)none;
    return 0;
}
