/* profile.c: @vor.profile, the decorator object.
 *
 *     @vor.profile                 a scope named module.Class.method per call
 *     @vor.profile("name")         ... named "name"
 *     @vor.profile(name="name")
 *
 * The decorator returns a C object (vpy_profiled) that stands for the function: called
 * through vectorcall, it opens the function's scope (one static site per decorated
 * function), calls the function with the very argument array it was given, and closes
 * the scope whether the call returned or raised. It is a method descriptor like a Python
 * function (Py_TPFLAGS_METHOD_DESCRIPTOR), so `obj.method()` calls it with obj as the first
 * argument without making a bound method; staticmethod and classmethod objects are
 * unwrapped, profiled and wrapped again. It carries the function's attributes
 * (functools.update_wrapper, plus __code__, __defaults__ and __kwdefaults__, so inspect
 * still sees a coroutine function as one).
 *
 * Generator, coroutine and async generator functions are not timed at the call (which
 * runs none of their body) but at each resumption: the call returns a wrapper
 * (resumable.c) whose every next/send/throw is one scope. So scopes stay nested per thread
 * however the event loop interleaves them.
 */
#include "vorpy.h"

enum { KIND_PLAIN, KIND_GENERATOR, KIND_COROUTINE, KIND_ASYNC_GENERATOR };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *func;
    vectorcallfunc func_call; /* the function's own vectorcall, or NULL */
    vpy_site *site;           /* NULL: the site table was full; calls are not recorded */
    vpy_site *code_site;      /* the function's code site (frame function check), or NULL */
    int kind;
    PyObject *dict;
    PyObject *weaklist;
} vpy_profiled;

static inline PyObject *call_func(vpy_profiled *p, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (p->func_call != NULL) return p->func_call(p->func, args, nargsf, kwnames);
    return PyObject_Vectorcall(p->func, args, nargsf, kwnames);
}

static PyObject *profiled_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    vpy_profiled *p = (vpy_profiled *)self;
    if (p->kind != KIND_PLAIN) {
        PyObject *made = call_func(p, args, nargsf, kwnames);
        if (made == NULL || p->site == NULL) return made;
        PyObject *wrapped;
        switch (p->kind) {
        case KIND_GENERATOR: wrapped = vpy_wrap_generator(made, p->site, p->code_site); break;
        case KIND_COROUTINE: wrapped = vpy_wrap_coroutine(made, p->site, p->code_site); break;
        default: wrapped = vpy_wrap_async_generator(made, p->site, p->code_site); break;
        }
        Py_DECREF(made);
        return wrapped;
    }
    vpy_thread *t;
    if (!vor_internal_is_collecting() || p->site == NULL || (t = vpy_thread_get()) == NULL)
        return call_func(p, args, nargsf, kwnames);
    vpy_open(t, p->site);
    PyObject *result = call_func(p, args, nargsf, kwnames);
    vpy_close(t, p->site);
    vpy_after_return(p->code_site);
    return result;
}

static PyObject *profiled_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int profiled_traverse(vpy_profiled *p, visitproc visit, void *arg) {
    Py_VISIT(p->func);
    Py_VISIT(p->dict);
    return 0;
}

static int profiled_clear(vpy_profiled *p) {
    Py_CLEAR(p->func);
    Py_CLEAR(p->dict);
    return 0;
}

static void profiled_dealloc(vpy_profiled *p) {
    PyObject_GC_UnTrack(p);
    if (p->weaklist != NULL) PyObject_ClearWeakRefs((PyObject *)p);
    profiled_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyObject *profiled_repr(vpy_profiled *p) {
    const char *name = p->site != NULL ? p->site->site.name : "(not recorded)";
    return PyUnicode_FromFormat("<vor.profile %s of %R>", name, p->func);
}

static PyObject *profiled_get_site_name(vpy_profiled *p, void *closure) {
    if (p->site == NULL) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(p->site->site.name, (Py_ssize_t)strlen(p->site->site.name), "surrogateescape");
}

static PyObject *profiled_get_func(vpy_profiled *p, void *closure) {
    return Py_NewRef(p->func);
}

static PyGetSetDef profiled_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"scope_name", (getter)profiled_get_site_name, NULL, "the name of the scope each call records", NULL},
    {"__vor_function__", (getter)profiled_get_func, NULL, "the decorated function", NULL},
    {NULL},
};

PyTypeObject vpy_profiled_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "vor.profiled_function",
    .tp_doc = "A function decorated with @vor.profile: each call is a vor scope.",
    .tp_basicsize = sizeof(vpy_profiled),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(vpy_profiled, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = profiled_descr_get,
    .tp_dictoffset = offsetof(vpy_profiled, dict),
    .tp_weaklistoffset = offsetof(vpy_profiled, weaklist),
    .tp_traverse = (traverseproc)profiled_traverse,
    .tp_clear = (inquiry)profiled_clear,
    .tp_dealloc = (destructor)profiled_dealloc,
    .tp_repr = (reprfunc)profiled_repr,
    .tp_getset = profiled_getset,
};

/* Copies the function's attributes onto the wrapper (functools.update_wrapper), and the
 * few that make inspect treat it as a function of the same kind (_signature_is_functionlike:
 * __code__, __defaults__, __kwdefaults__; update_wrapper copies __annotations__). */
static int copy_attributes(PyObject *wrapper, PyObject *func) {
    PyObject *functools = PyImport_ImportModule("functools");
    if (functools == NULL) return -1;
    PyObject *r = PyObject_CallMethod(functools, "update_wrapper", "OO", wrapper, func);
    Py_DECREF(functools);
    if (r == NULL) return -1;
    Py_DECREF(r);
    static const char *const extra[] = {"__code__", "__defaults__", "__kwdefaults__"};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        PyObject *v = PyObject_GetAttrString(func, extra[i]);
        if (v == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
            PyErr_Clear();
            continue;
        }
        int failed = PyObject_SetAttrString(wrapper, extra[i], v);
        Py_DECREF(v);
        if (failed < 0) return -1;
    }
    return 0;
}

/* An attribute as a str, or NULL (no exception) when missing or not a str. */
static PyObject *str_attribute(PyObject *obj, const char *attr) {
    PyObject *v = PyObject_GetAttrString(obj, attr);
    if (v == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyUnicode_Check(v)) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

static PyObject *profile_callable(PyObject *func, PyObject *name);

/* staticmethod / classmethod: profile the function inside, wrap it the same way again. */
static PyObject *profile_method_wrapper(PyObject *wrapper, PyObject *name) {
    PyObject *inner = PyObject_GetAttrString(wrapper, "__func__");
    if (inner == NULL) return NULL;
    PyObject *profiled = profile_callable(inner, name);
    Py_DECREF(inner);
    if (profiled == NULL) return NULL;
    PyObject *result = PyObject_CallOneArg((PyObject *)Py_TYPE(wrapper), profiled);
    Py_DECREF(profiled);
    return result;
}

static PyObject *profile_callable(PyObject *func, PyObject *name) {
    if (PyObject_TypeCheck(func, &PyStaticMethod_Type) || PyObject_TypeCheck(func, &PyClassMethod_Type))
        return profile_method_wrapper(func, name);
    if (Py_IS_TYPE(func, &vpy_profiled_type) && name == NULL) return Py_NewRef(func);
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "vor.profile: expected a function or a scope name, got %.100s",
                     Py_TYPE(func)->tp_name);
        return NULL;
    }
    PyObject *code = PyFunction_Check(func) ? PyFunction_GET_CODE(func) : NULL;
    PyObject *module = str_attribute(func, "__module__");
    PyObject *qualname = str_attribute(func, "__qualname__");
    if (qualname == NULL) qualname = str_attribute(func, "__name__");
    if (qualname == NULL) qualname = PyObject_Repr(func);
    if (qualname == NULL) {
        Py_XDECREF(module);
        return NULL;
    }
    PyObject *scope_name;
    if (name != NULL)
        scope_name = Py_NewRef(name);
    else if (module != NULL && PyUnicode_GET_LENGTH(module) > 0)
        scope_name = PyUnicode_FromFormat("%U.%U", module, qualname);
    else
        scope_name = Py_NewRef(qualname);
    vpy_profiled *p = scope_name != NULL ? PyObject_GC_New(vpy_profiled, &vpy_profiled_type) : NULL;
    if (p == NULL) {
        Py_XDECREF(scope_name);
        Py_XDECREF(module);
        Py_DECREF(qualname);
        return NULL;
    }
    p->vectorcall = profiled_vectorcall;
    p->func = Py_NewRef(func);
    p->func_call = PyVectorcall_Function(func);
    p->dict = NULL;
    p->weaklist = NULL;
    p->kind = KIND_PLAIN;
    p->code_site = NULL;
    PyCodeObject *co = (PyCodeObject *)code;
    p->site = vpy_site_get(scope_name, qualname, co != NULL ? co->co_filename : NULL,
                           co != NULL ? (uint32_t)co->co_firstlineno : 0);
    if (co != NULL) {
        int flags = co->co_flags;
        if (flags & CO_ASYNC_GENERATOR)
            p->kind = KIND_ASYNC_GENERATOR;
        else if (flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE))
            p->kind = KIND_COROUTINE;
        else if (flags & CO_GENERATOR)
            p->kind = KIND_GENERATOR;
        /* The profiling hook leaves this code to the decorator, which records it. */
        p->code_site = vpy_code_site(co, module);
        if (p->code_site != NULL) vpy_site_add_flags(p->code_site, VPY_SITE_HOOK_SKIP);
    }
    Py_DECREF(scope_name);
    Py_XDECREF(module);
    Py_DECREF(qualname);
    PyObject_GC_Track(p);
    if (copy_attributes((PyObject *)p, func) < 0) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

/* vor.profile("name") returns this, bound to the name. */
static PyObject *named_decorator(PyObject *name, PyObject *func) {
    return profile_callable(func, name);
}

static PyMethodDef named_decorator_def = {"profile", (PyCFunction)named_decorator, METH_O,
                                          "Decorates a function: each call is a vor scope with the given name."};

PyObject *vpy_profile(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *target = NULL, *name = NULL;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(key, "name") != 0) {
            PyErr_Format(PyExc_TypeError, "vor.profile: unexpected keyword argument '%U'", key);
            return NULL;
        }
        name = args[nargs + i];
    }
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "vor.profile takes a function or a name");
        return NULL;
    }
    if (nargs == 1) target = args[0];
    if (target != NULL && PyUnicode_Check(target)) {
        if (name != NULL) {
            PyErr_SetString(PyExc_TypeError, "vor.profile: the name is given twice");
            return NULL;
        }
        name = target;
        target = NULL;
    }
    if (name != NULL && name != Py_None && !PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "vor.profile: a scope name must be a str, not %.100s", Py_TYPE(name)->tp_name);
        return NULL;
    }
    if (name == Py_None) name = NULL;
    if (target != NULL) return profile_callable(target, name);
    if (name == NULL) {
        PyErr_SetString(PyExc_TypeError, "vor.profile: give it a function (@vor.profile) or a name (@vor.profile(\"name\"))");
        return NULL;
    }
    return PyCFunction_New(&named_decorator_def, name);
}
