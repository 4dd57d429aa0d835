/* cpython_frames.h: the two reads of CPython's own frame records that keep Python scopes
 * cheap, and the only place that looks inside CPython.
 *
 *   vpy_current_code()     the code object of the innermost Python frame of this thread
 *   vpy_frame_code(frame)  the code object of a frame object (the profiling hook's argument)
 *
 * Both return a borrowed reference. The public ways (PyEval_GetFrame, PyFrame_GetCode)
 * make the interpreter build a frame object for the caller (about 80 ns per function
 * activation on CPython 3.11) or take and drop a reference per call. On CPython 3.11 and
 * 3.12 the interpreter's frame record is read instead, from its internal header, as Cython
 * does; elsewhere vpy_current_code() returns NULL (vor.scope then keeps one site per name)
 * and vpy_frame_code() uses the public call.
 */
#ifndef VORPY_CPYTHON_FRAMES_H
#define VORPY_CPYTHON_FRAMES_H

#include "vorpy.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000 && !defined(PYPY_VERSION)
#define VPY_FAST_FRAMES 1
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#define VPY_UNDEF_BUILD_CORE 1
#endif
#include <internal/pycore_frame.h>
#ifdef VPY_UNDEF_BUILD_CORE
#undef Py_BUILD_CORE
#undef VPY_UNDEF_BUILD_CORE
#endif
#endif

#include <frameobject.h>

static inline PyObject *vpy_current_code(void) {
#if defined(VPY_FAST_FRAMES)
    _PyInterpreterFrame *f = PyThreadState_GET()->cframe->current_frame;
    return f != NULL ? (PyObject *)f->f_code : NULL;
#else
    return NULL;
#endif
}

static inline PyCodeObject *vpy_frame_code(PyFrameObject *frame) {
#if defined(VPY_FAST_FRAMES)
    return frame->f_frame->f_code;
#else
    PyCodeObject *code = PyFrame_GetCode(frame);
    Py_DECREF(code); /* the frame holds it while the hook runs */
    return code;
#endif
}

#endif /* VORPY_CPYTHON_FRAMES_H */
