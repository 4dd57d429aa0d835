/* call_site.c: where the Python code that called into the module is.
 *
 * vor.scope(name) keeps one site per (calling code, name): the calling code object comes
 * from cpython_frames.h on every call; the line, needed once per site, from here.
 */
#include "cpython_frames.h"

PyObject *vpy_caller_code(void) {
    return vpy_current_code();
}

uint32_t vpy_caller_line(void) {
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    if (f == NULL) return 0;
    int line = PyFrame_GetLineNumber(f);
    return line > 0 ? (uint32_t)line : 0;
}
