/* call_site.c: the code object of the Python frame that called into the module.
 *
 * vor.scope(name) keeps one site per (calling code, name), so it needs the caller's code
 * object on every call. The public way (PyEval_GetFrame) makes the interpreter build a
 * frame object for the caller: measured at about 80 ns per function activation on CPython
 * 3.11, more than the whole scope's budget. On CPython 3.11 and 3.12 the interpreter's
 * own frame record is read instead (one pointer chase: the thread state's current frame
 * and its f_code), from the internal header the way Cython does it; this is the only file
 * that looks inside CPython. Elsewhere vpy_caller_code() returns NULL and vor.scope keeps
 * one site per name (documented in the README).
 */
#include "vorpy.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000 && !defined(PYPY_VERSION)
#define VPY_FAST_FRAME 1
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#include <frameobject.h>

PyObject *vpy_caller_code(void) {
#if defined(VPY_FAST_FRAME)
    PyThreadState *ts = PyThreadState_GET();
    _PyInterpreterFrame *f = ts->cframe->current_frame;
    return f != NULL ? (PyObject *)f->f_code : NULL;
#else
    return NULL;
#endif
}

uint32_t vpy_caller_line(void) {
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    if (f == NULL) return 0;
    int line = PyFrame_GetLineNumber(f);
    return line > 0 ? (uint32_t)line : 0;
}
