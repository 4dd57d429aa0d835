/* thread_stack.c: each thread's stack of open Python scopes.
 *
 * vor's C API closes "the innermost open scope of the calling thread", which is right for
 * C blocks. Python code can end scopes out of that order: a `with vor.scope()` block that
 * spans a `yield` or an `await` is left while other code runs on the thread (and may be
 * ended on another thread), a `__enter__` called by hand may never see its `__exit__`.
 * So each thread keeps its own stack of what Python opened (the site, and whether vor
 * recorded the begin). An end whose entry is on top closes it (the usual case, a couple
 * of loads); an end whose entry is deeper closes everything above it first (they ended no
 * later than now: their own ends, when they come, find nothing and are ignored); an end
 * with no entry on this thread is ignored and counted. vor's stack and this one therefore
 * always agree, and one misplaced scope never shifts the names of the others.
 *
 * The stack starts at 64 entries and doubles up to VPY_STACK_MAX; deeper scopes are
 * counted and not recorded (vor itself records VOR_MAX_DEPTH levels). It is freed when the
 * thread exits. The first scope of a thread also names it in vor after its `threading`
 * name (Python's threads are OS threads, so vor's per-thread buffers give each its track).
 */
#include <pthread.h>
#include <stdlib.h>

#include "vorpy.h"

/* initial-exec: one fs-relative load, no __tls_get_addr call (8 bytes of the static TLS
 * that glibc keeps for modules loaded later, as libvor's own thread pointer uses). */
__attribute__((tls_model("initial-exec"))) __thread vpy_thread *vpy_tls;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static uint64_t unmatched_ends; /* under the GIL */
static uint64_t too_deep;

uint64_t vpy_unmatched_ends(void) {
    return unmatched_ends;
}

uint64_t vpy_too_deep(void) {
    return too_deep;
}

static void thread_exit(void *p) {
    vpy_thread *t = p;
    free(t->entries);
    free(t);
    vpy_tls = NULL;
}

static void make_exit_key(void) {
    pthread_key_create(&exit_key, thread_exit);
}

/* Gives vor the thread's `threading` name, if the threading module is in use (a thread
 * threading did not start is named by threading too, "Dummy-N"). The exception state of
 * the caller (the hook may run while one propagates) is kept. */
static void name_thread(vpy_thread *t) {
    t->named = 1;
    static PyObject *threading_name;
    if (threading_name == NULL) threading_name = PyUnicode_InternFromString("threading");
    if (threading_name == NULL) {
        PyErr_Clear();
        return;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *threading = PyImport_GetModule(threading_name);
    if (threading != NULL) {
        PyObject *current = PyObject_CallMethod(threading, "current_thread", NULL);
        PyObject *name = current != NULL ? PyObject_GetAttrString(current, "name") : NULL;
        const char *utf8 = name != NULL && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (utf8 != NULL) vor_set_thread_name(utf8);
        Py_XDECREF(name);
        Py_XDECREF(current);
        Py_DECREF(threading);
    }
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
}

vpy_thread *vpy_thread_attach(void) {
    pthread_once(&exit_key_once, make_exit_key);
    vpy_thread *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->capacity = 64;
    t->entries = malloc(t->capacity * sizeof *t->entries);
    if (t->entries == NULL) {
        free(t);
        return NULL;
    }
    vpy_tls = t;
    pthread_setspecific(exit_key, t);
    if (!t->named) name_thread(t);
    return t;
}

void vpy_thread_mark_named(void) {
    vpy_thread *t = vpy_thread_get();
    if (t != NULL) t->named = 1;
}

int vpy_stack_grow(vpy_thread *t) {
    if (t->depth > t->capacity || t->capacity >= VPY_STACK_MAX) {
        too_deep++;
        return 0;
    }
    uint32_t capacity = t->capacity * 2;
    uintptr_t *entries = realloc(t->entries, capacity * sizeof *entries);
    if (entries == NULL) {
        too_deep++;
        return 0;
    }
    t->entries = entries;
    t->capacity = capacity;
    return 1;
}

uint32_t vpy_stack_find(const vpy_thread *t, uintptr_t entry, uintptr_t ignored_bits) {
    uint32_t i = t->depth < t->capacity ? t->depth : t->capacity;
    while (i > 0 && (t->entries[i - 1] & ~ignored_bits) != entry) i--;
    return i;
}

void vpy_stack_close_from(vpy_thread *t, uint32_t position) {
    /* Entries position-1 .. depth-1: the inner ones close first, then the scope itself
     * (entries counted beyond the capacity were never recorded). */
    uint32_t top = t->depth < t->capacity ? t->depth : t->capacity;
    for (uint32_t k = top; k >= position; k--)
        if (t->entries[k - 1] & VPY_ENTRY_BEGAN) vor_scope_end();
    t->depth = position - 1;
}

void vpy_close_unmatched(vpy_thread *t, uintptr_t token) {
    uint32_t i = vpy_stack_find(t, token, VPY_ENTRY_FLAGS);
    if (i == 0) {
        unmatched_ends++; /* opened on another thread, or already closed by an outer end */
        return;
    }
    vpy_stack_close_from(t, i);
}
