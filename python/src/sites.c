/* sites.c: vor_site records for Python code.
 *
 * vor keeps a site's pointer and reads its strings when a frame first records it, so a
 * site and its strings must live as long as the process: they are allocated here, in
 * chunks that are never freed, and interned so that the same (name, function, file, line)
 * always gives the same site (a function defined again, a closure made per call, code
 * exec'ed in a loop cost nothing more). Both are bounded: VPY_MAX_SITES sites and
 * VPY_MAX_STRING_BYTES of strings; past either, new sites are refused, counted and
 * reported once, and what would have used them is not recorded.
 *
 * A code object's site hangs on the code object itself (co_extra), so the profiling hook
 * finds it with one indexed load.
 *
 * Everything here runs with the GIL held, off the hot path (first sight of a site).
 */
#include <stdio.h>
#include <string.h>

#include "vorpy.h"

#define SITES_PER_CHUNK 1024u
#define STRING_CHUNK_BYTES (64u * 1024u)

static PyObject *site_table;   /* (name, function, file, line) -> int (vpy_site address) */
static PyObject *string_table; /* str -> int (address of its UTF-8 copy) */
static vpy_site *site_chunk;
static uint32_t site_chunk_used = SITES_PER_CHUNK;
static uint32_t sites_used;
static uint64_t sites_refused;
static char *string_chunk;
static size_t string_chunk_used, string_chunk_size, string_bytes;
static Py_ssize_t code_extra_index = -1;
static int full_reported;

uint32_t vpy_frame_generation;
uint32_t vpy_site_epoch;
static char *frame_function; /* the --frame-function name, or NULL */

uint64_t vpy_sites_used(void) {
    return sites_used;
}

uint64_t vpy_sites_refused(void) {
    return sites_refused;
}

static void report_full(const char *what) {
    sites_refused++;
    if (full_reported) return;
    full_reported = 1;
    PySys_WriteStderr("vor: %s; Python scopes at new sites are not recorded (vor.counters() counts them)\n", what);
}

/* A copy of `s` for the process's lifetime (UTF-8; lone surrogates from file names kept
 * as their bytes). NULL when the budget is spent or memory is short. */
static const char *intern_string(PyObject *s) {
    PyObject *known = PyDict_GetItemWithError(string_table, s);
    if (known != NULL) return (const char *)PyLong_AsVoidPtr(known);
    if (PyErr_Occurred()) return NULL;
    PyObject *bytes = PyUnicode_AsEncodedString(s, "utf-8", "surrogateescape");
    if (bytes == NULL) return NULL;
    size_t n = (size_t)PyBytes_GET_SIZE(bytes);
    if (string_bytes + n + 1 > VPY_MAX_STRING_BYTES) {
        Py_DECREF(bytes);
        report_full("the Python site names reached their budget (16 MiB)");
        return NULL;
    }
    if (string_chunk == NULL || string_chunk_used + n + 1 > string_chunk_size) {
        size_t size = n + 1 > STRING_CHUNK_BYTES ? n + 1 : STRING_CHUNK_BYTES;
        char *chunk = PyMem_RawMalloc(size);
        if (chunk == NULL) {
            Py_DECREF(bytes);
            return NULL;
        }
        string_chunk = chunk;
        string_chunk_size = size;
        string_chunk_used = 0;
    }
    char *copy = string_chunk + string_chunk_used;
    memcpy(copy, PyBytes_AS_STRING(bytes), n + 1);
    Py_DECREF(bytes);
    string_chunk_used += n + 1;
    string_bytes += n + 1;
    PyObject *address = PyLong_FromVoidPtr(copy);
    if (address == NULL || PyDict_SetItem(string_table, s, address) < 0) {
        Py_XDECREF(address);
        return NULL;
    }
    Py_DECREF(address);
    return copy;
}

static vpy_site *new_site(void) {
    if (sites_used >= VPY_MAX_SITES) {
        report_full("more than 49,152 Python scope sites");
        return NULL;
    }
    if (site_chunk_used == SITES_PER_CHUNK) {
        vpy_site *chunk = PyMem_RawCalloc(SITES_PER_CHUNK, sizeof(vpy_site));
        if (chunk == NULL) return NULL;
        site_chunk = chunk;
        site_chunk_used = 0;
    }
    sites_used++;
    return &site_chunk[site_chunk_used++];
}

vpy_site *vpy_site_get(PyObject *name, PyObject *function, PyObject *file, uint32_t line) {
    if (function == NULL) function = Py_None;
    if (file == NULL) file = Py_None;
    PyObject *key = Py_BuildValue("(OOOI)", name, function, file, (unsigned)line);
    if (key == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *known = PyDict_GetItemWithError(site_table, key);
    vpy_site *s = NULL;
    if (known != NULL) {
        s = PyLong_AsVoidPtr(known);
        Py_DECREF(key);
        return s;
    }
    if (PyErr_Occurred()) goto fail;
    const char *name_c = intern_string(name);
    const char *function_c = PyUnicode_Check(function) ? intern_string(function) : NULL;
    const char *file_c = PyUnicode_Check(file) ? intern_string(file) : NULL;
    if (name_c == NULL || (PyUnicode_Check(function) && function_c == NULL) || (PyUnicode_Check(file) && file_c == NULL))
        goto fail;
    s = new_site();
    if (s == NULL) goto fail;
    s->site.name = name_c;
    s->site.function = function_c;
    s->site.file = file_c;
    s->site.line = line;
    s->site.id = 0;
    PyObject *address = PyLong_FromVoidPtr(s);
    if (address == NULL || PyDict_SetItem(site_table, key, address) < 0) {
        Py_XDECREF(address);
        /* The site stays allocated (bounded by the count); it is simply not found again. */
        goto fail_keep;
    }
    Py_DECREF(address);
    Py_DECREF(key);
    return s;
fail:
    s = NULL;
fail_keep:
    Py_DECREF(key);
    PyErr_Clear();
    return s;
}

vpy_site *vpy_code_site_peek(PyCodeObject *code) {
    void *extra = NULL;
    if (_PyCode_GetExtra((PyObject *)code, code_extra_index, &extra) < 0) {
        PyErr_Clear();
        return NULL;
    }
    return extra;
}

/* What a code object gets when no site could be had: not recorded, never a frame function. */
static vpy_site no_site = {{"(not recorded)", NULL, NULL, 0, 0}, VPY_SITE_HOOK_SKIP | VPY_SITE_HAS_CODE_NAME, 0, NULL};

vpy_site *vpy_code_site(PyCodeObject *code, PyObject *module) {
    vpy_site *s = vpy_code_site_peek(code);
    if (s != NULL) return s;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback); /* the hook may run while an exception propagates */
    PyObject *qualname = code->co_qualname, *name;
    if (module != NULL && PyUnicode_Check(module) && PyUnicode_GET_LENGTH(module) > 0)
        name = PyUnicode_FromFormat("%U.%U", module, qualname);
    else
        name = Py_NewRef(qualname);
    s = name != NULL ? vpy_site_get(name, qualname, code->co_filename, (uint32_t)code->co_firstlineno) : NULL;
    Py_XDECREF(name);
    PyErr_Clear();
    if (s == NULL) s = &no_site;
    if (!(s->flags & VPY_SITE_HAS_CODE_NAME)) {
        s->code_name = intern_string(code->co_name);
        if (s->code_name == NULL) PyErr_Clear();
        s->flags |= VPY_SITE_HAS_CODE_NAME;
    }
    if (_PyCode_SetExtra((PyObject *)code, code_extra_index, s) < 0) PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return s;
}

int vpy_set_frame_function(PyObject *name_or_none) {
    char *copy = NULL;
    if (name_or_none != Py_None) {
        Py_ssize_t n;
        const char *utf8 = PyUnicode_AsUTF8AndSize(name_or_none, &n);
        if (utf8 == NULL) return -1;
        copy = PyMem_RawMalloc((size_t)n + 1);
        if (copy == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(copy, utf8, (size_t)n + 1);
    }
    PyMem_RawFree(frame_function);
    frame_function = copy;
    vpy_frame_generation++;
    if (vpy_frame_generation == 0) vpy_frame_generation = 1; /* 0 means "never set" */
    vpy_site_epoch++;
    return 0;
}

void vpy_site_add_flags(vpy_site *s, uint32_t flags) {
    if ((s->flags & flags) == flags) return;
    s->flags |= flags;
    vpy_site_epoch++;
}

void vpy_site_refresh_frame_flag(vpy_site *s) {
    int match = 0;
    if (frame_function != NULL) {
        match = (s->site.name != NULL && strcmp(s->site.name, frame_function) == 0) ||
                (s->site.function != NULL && strcmp(s->site.function, frame_function) == 0) ||
                (s->code_name != NULL && strcmp(s->code_name, frame_function) == 0);
    }
    if (match)
        s->flags |= VPY_SITE_FRAME_FUNCTION;
    else
        s->flags &= ~VPY_SITE_FRAME_FUNCTION;
    s->frame_generation = vpy_frame_generation;
}

int vpy_sites_init(void) {
    site_table = PyDict_New();
    string_table = PyDict_New();
    if (site_table == NULL || string_table == NULL) return -1;
    code_extra_index = _PyEval_RequestCodeExtraIndex(NULL);
    if (code_extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "vor: no code-object extra slot left in this interpreter");
        return -1;
    }
    return 0;
}
