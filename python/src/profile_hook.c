/* profile_hook.c: every Python function call as a scope, through the interpreter's
 * profiling hook (PyEval_SetProfile, the C form of sys.setprofile, as cProfile uses), and
 * frames marked at each return of a named function.
 *
 *   _vor._hook_start(all_functions, frame_function)   python -m vor run uses it
 *   _vor._hook_stop()
 *   vor.skip(func)                                    the hook leaves that function out
 *
 * A call event opens a scope at the code object's site (one per code object, on the code
 * object's co_extra slot: one indexed load), a return event closes it; C functions'
 * events are ignored. The interpreter sends a generator or coroutine a call event at each
 * resumption and a return event at each yield or await, so each resumption is a scope, as
 * with @vor.profile. Return events whose call the hook never saw (the frames that were
 * running when it was set) find no entry and are ignored. With a frame function, its
 * every return (each resumption, for a generator) marks a frame after its scope closed.
 *
 * Threads: the hook is set on the calling thread and, through threading.setprofile, on
 * every thread `threading` starts afterwards (the first event there swaps Python's
 * trampoline for this C hook). CPython 3.12 and later set it on every running thread at
 * once. Stopping unsets it on the calling thread; other threads unset it themselves at
 * their next event once the scopes it opened there are closed.
 */
#include "cpython_frames.h"

enum { HOOK_STOPPED, HOOK_FRAMES_ONLY, HOOK_ALL_FUNCTIONS };
/* HOOK_STOPPED after _hook_stop: threads remove the hook once their hook scopes closed.
 * HOOK_FRAMES_ONLY: --frame-function without --all-functions (returns are looked at). */
static int hook_mode;

static int has_hook_entries(vpy_thread *t) {
    uint32_t n = t->depth < t->capacity ? t->depth : t->capacity;
    for (uint32_t i = 0; i < n; i++)
        if (t->entries[i] & VPY_ENTRY_HOOK) return 1;
    return 0;
}

static void remove_if_done(vpy_thread *t) {
    if (t == NULL || !has_hook_entries(t)) {
        PyEval_SetProfile(NULL, NULL);
        if (t != NULL) t->hook_installed = 0;
    }
}

/* Closes the hook's scope of `s`: the top entry, or a deeper one (what is above it closes
 * too: a `with` block that spans a yield ends at the yield). No entry: a frame that was
 * running when the hook was set; ignored. */
static inline void close_hook(vpy_thread *t, vpy_site *s) {
    uint32_t d = t->depth;
    if (__builtin_expect(d > t->capacity, 0)) {
        t->depth = d - 1;
        return;
    }
    uintptr_t want = (uintptr_t)s | VPY_ENTRY_HOOK, e = t->entries[d - 1];
    if (__builtin_expect((e & ~VPY_ENTRY_BEGAN) == want, 1)) { /* the usual case: the top entry */
        t->depth = d - 1;
        if (e & VPY_ENTRY_BEGAN) vor_scope_end();
        return;
    }
    uint32_t i = vpy_stack_find(t, want, VPY_ENTRY_BEGAN);
    if (i > 0) vpy_stack_close_from(t, i);
}

/* Code object -> site and its flags, direct-mapped, in front of co_extra (a call into the
 * interpreter): the hook's common case reads one cache entry and never the site itself.
 * Entries hold their code object, so a pointer compared is never a freed one reused (at
 * most CODE_CACHE_SIZE code objects are kept alive that way, until _hook_stop); `epoch`
 * says which vpy_site_epoch the flags were read in. */
#define CODE_CACHE_SIZE 4096u
typedef struct {
    PyCodeObject *code;
    vpy_site *site;
    uint32_t flags; /* the site's, FRAME_FUNCTION up to date */
    uint32_t epoch;
} code_entry;
static code_entry code_cache[CODE_CACHE_SIZE];

static code_entry *code_entry_fill(PyCodeObject *code, PyFrameObject *frame, code_entry *e) {
    vpy_site *s = vpy_code_site_peek(code);
    if (s == NULL) {
        PyObject *globals = PyFrame_GetGlobals(frame);
        PyObject *module = globals != NULL && PyDict_Check(globals) ? PyDict_GetItemString(globals, "__name__") : NULL;
        s = vpy_code_site(code, module);
        Py_XDECREF(globals);
    }
    if (vpy_frame_generation != 0) vpy_site_is_frame_function(s); /* refreshes the flag */
    PyCodeObject *old = e->code;
    e->code = (PyCodeObject *)Py_NewRef(code);
    e->site = s;
    e->flags = s->flags;
    e->epoch = vpy_site_epoch;
    Py_XDECREF(old);
    return e;
}

static inline code_entry *code_of_frame(PyFrameObject *frame) {
    PyCodeObject *code = vpy_frame_code(frame);
    code_entry *e = &code_cache[((uintptr_t)code >> 6) & (CODE_CACHE_SIZE - 1)];
    if (__builtin_expect(e->code == code && e->epoch == vpy_site_epoch, 1)) return e;
    return code_entry_fill(code, frame, e);
}

static int profile_func(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    if (what == PyTrace_CALL) {
        if (__builtin_expect(hook_mode != HOOK_ALL_FUNCTIONS, 0)) {
            if (hook_mode == HOOK_STOPPED) remove_if_done(vpy_tls);
            return 0;
        }
        code_entry *e = code_of_frame(frame);
        if (e->flags & VPY_SITE_HOOK_SKIP) return 0;
        vpy_thread *t = vpy_thread_get();
        if (t != NULL) vpy_open_as(t, e->site, VPY_ENTRY_HOOK);
        return 0;
    }
    if (what == PyTrace_RETURN) {
        code_entry *e = code_of_frame(frame);
        vpy_thread *t = vpy_tls;
        if (!(e->flags & VPY_SITE_HOOK_SKIP)) { /* a @vor.profile'd frame function marks in the decorator */
            if (hook_mode != HOOK_FRAMES_ONLY && t != NULL && t->depth > 0) close_hook(t, e->site);
            if (e->flags & VPY_SITE_FRAME_FUNCTION) vpy_mark_frame_now();
        }
        if (hook_mode == HOOK_STOPPED) remove_if_done(t);
    }
    return 0;
}

static void set_on_this_thread(void) {
    vpy_thread *t = vpy_thread_get();
    PyEval_SetProfile(profile_func, NULL);
    if (t != NULL) t->hook_installed = 1;
}

/* threading.setprofile's function: the first event of a new thread installs the C hook
 * there and is handled by it. */
PyObject *vpy_hook_thread_bootstrap(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyFrame_Check(args[0]) || !PyUnicode_Check(args[1])) Py_RETURN_NONE;
    if (hook_mode == HOOK_STOPPED) {
        PyEval_SetProfile(NULL, NULL);
        Py_RETURN_NONE;
    }
    set_on_this_thread();
    int what = -1;
    if (PyUnicode_CompareWithASCIIString(args[1], "call") == 0)
        what = PyTrace_CALL;
    else if (PyUnicode_CompareWithASCIIString(args[1], "return") == 0)
        what = PyTrace_RETURN;
    if (what >= 0) profile_func(NULL, (PyFrameObject *)args[0], what, args[2]);
    Py_RETURN_NONE;
}

static int set_threading_profile(PyObject *module, PyObject *func) {
    PyObject *threading = PyImport_ImportModule("threading");
    if (threading == NULL) return -1;
    PyObject *r = PyObject_CallMethod(threading, "setprofile", "O", func);
    Py_DECREF(threading);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

PyObject *vpy_hook_start(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const kwlist[] = {"all_functions", "frame_function", NULL};
    (void)kwlist;
    if (nargs != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "_hook_start(all_functions, frame_function)");
        return NULL;
    }
    int all = PyObject_IsTrue(args[0]);
    if (all < 0) return NULL;
    PyObject *frame_function = args[1];
    if (frame_function != Py_None && !PyUnicode_Check(frame_function)) {
        PyErr_SetString(PyExc_TypeError, "frame_function must be a str or None");
        return NULL;
    }
    if (vpy_set_frame_function(frame_function) < 0) return NULL;
    hook_mode = all ? HOOK_ALL_FUNCTIONS : HOOK_FRAMES_ONLY;
    PyObject *bootstrap = PyObject_GetAttrString(module, "_hook_thread_bootstrap");
    if (bootstrap == NULL) return NULL;
    int failed = set_threading_profile(module, bootstrap);
    Py_DECREF(bootstrap);
    if (failed) return NULL;
#if PY_VERSION_HEX >= 0x030C0000
    PyEval_SetProfileAllThreads(profile_func, NULL);
#endif
    set_on_this_thread();
    Py_RETURN_NONE;
}

PyObject *vpy_hook_stop(PyObject *module, PyObject *unused) {
    if (hook_mode == HOOK_STOPPED) Py_RETURN_NONE;
    hook_mode = HOOK_STOPPED;
    if (vpy_set_frame_function(Py_None) < 0) return NULL;
    if (set_threading_profile(module, Py_None) < 0) return NULL;
    remove_if_done(vpy_tls);
    for (size_t i = 0; i < CODE_CACHE_SIZE; i++) { /* the code objects it kept alive */
        Py_CLEAR(code_cache[i].code);
        code_cache[i].site = NULL;
    }
    Py_RETURN_NONE;
}

/* vor.skip: marks a function so that the hook (and @vor.all_functions) leaves it out. */
PyObject *vpy_skip(PyObject *module, PyObject *func) {
    PyObject *target = func;
    if (PyObject_TypeCheck(func, &PyStaticMethod_Type) || PyObject_TypeCheck(func, &PyClassMethod_Type)) {
        target = PyObject_GetAttrString(func, "__func__");
        if (target == NULL) return NULL;
    } else {
        Py_INCREF(target);
    }
    if (PyFunction_Check(target)) {
        PyObject *module_name = PyObject_GetAttrString(target, "__module__");
        if (module_name == NULL) PyErr_Clear();
        vpy_site *s = vpy_code_site((PyCodeObject *)PyFunction_GET_CODE(target), module_name);
        Py_XDECREF(module_name);
        vpy_site_add_flags(s, VPY_SITE_HOOK_SKIP);
    }
    int failed = PyObject_SetAttrString(target, "__vor_skip__", Py_True);
    Py_DECREF(target);
    if (failed < 0) {
        /* Objects without a __dict__ (builtins) cannot carry the mark: nothing to skip. */
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
        PyErr_Clear();
    }
    return Py_NewRef(func);
}
