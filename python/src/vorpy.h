/* vorpy.h: what the files of the `vor._vor` extension module share.
 *
 * The module is C over libvor's public API (vor.h, reader.h), so a Python scope costs a
 * C call, not a Python wrapper's frames. Its pieces:
 *   sites.c         vor_site records for Python code: static (never freed), interned, bounded
 *   thread_stack.c  each thread's stack of open Python scopes (what pairs an end with its begin)
 *   profile.c       @vor.profile: the decorator object (vectorcall, a method descriptor)
 *   resumable.c     generator, coroutine and async-generator wrappers: a scope per resumption
 *   scope.c         vor.scope(name): one context manager per (calling code, name)
 *   call_site.c, cpython_frames.h   the calling Python code object, cheaply (reading CPython's
 *                   internal frame records; the only place that does)
 *   profile_hook.c  every Python function as a scope (python -m vor run --all-functions) and
 *                   frames marked at the return of a named function
 *   reader.c, records.c, read_metrics.c   vor.Reader, its record types, vor.read_metrics
 *   module.c        the module: enable/disable/frame_mark/metrics/... and initialisation
 */
#ifndef VORPY_H
#define VORPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include <vor/reader.h>
#include <vor/vor.h>

/* ---- Sites (sites.c) ---------------------------------------------------------------- */

/* Python sites at most (vor's own table holds VOR_MAX_SITES for the whole process, native
 * code included): beyond, new Python scopes are not recorded (counted, reported once). */
#define VPY_MAX_SITES 49152u
/* Bytes of interned name, function and file strings at most. */
#define VPY_MAX_STRING_BYTES (16u * 1024u * 1024u)

#define VPY_SITE_HOOK_SKIP 1u      /* the profiling hook does not record this code (vor.skip, or
                                      a @vor.profile'd function, which records itself) */
#define VPY_SITE_FRAME_FUNCTION 2u /* its returns mark frames (--frame-function) */
#define VPY_SITE_HAS_CODE_NAME 4u  /* code_name is set */

typedef struct vpy_site {
    vor_site site;         /* first member: vor sees &site; never freed (vor keeps the pointer) */
    uint32_t flags;        /* VPY_SITE_* */
    uint32_t frame_generation; /* the frame-function setting the FRAME_FUNCTION flag was computed for */
    const char *code_name; /* the code's co_name, for --frame-function matching; may be NULL */
} vpy_site;

/* A site for (name, function, file, line): the same one for equal arguments. NULL when
 * the table is full (reported once) or out of memory (no exception set in either case).
 * `function` and `file` may be NULL / Py_None. */
vpy_site *vpy_site_get(PyObject *name, PyObject *function, PyObject *file, uint32_t line);
/* The site of a code object, created on first sight (named module.qualname; `module` may
 * be NULL: the name is then the qualname). Never NULL: when no site can be had, a shared
 * one flagged VPY_SITE_HOOK_SKIP. Keeps the caller's exception state. */
vpy_site *vpy_code_site(PyCodeObject *code, PyObject *module);
/* The site stored on a code object, or NULL (a borrowed pointer from co_extra). */
vpy_site *vpy_code_site_peek(PyCodeObject *code);
/* Sets flag bits on a site (VPY_SITE_HOOK_SKIP) and bumps vpy_site_epoch. */
void vpy_site_add_flags(vpy_site *s, uint32_t flags);
/* Bumped by every change of a site's flags or of the frame-function setting: what caches
 * a site's flags (the profiling hook's code cache) compares it. */
extern uint32_t vpy_site_epoch;
/* Updates the FRAME_FUNCTION flag of `s` if the frame-function setting changed. */
void vpy_site_refresh_frame_flag(vpy_site *s);
/* The frame function's name (NULL: none) and its generation, bumped by each change. */
int vpy_set_frame_function(PyObject *name_or_none);
extern uint32_t vpy_frame_generation;
static inline int vpy_site_is_frame_function(vpy_site *s) {
    if (s->frame_generation != vpy_frame_generation) vpy_site_refresh_frame_flag(s);
    return (s->flags & VPY_SITE_FRAME_FUNCTION) != 0;
}
/* Counts for vor.counters(). */
uint64_t vpy_sites_used(void);
uint64_t vpy_sites_refused(void);
int vpy_sites_init(void);

/* ---- Per-thread stack of open Python scopes (thread_stack.c) -------------------------- */

/* Entries: a token (a vpy_site pointer, 8-aligned) | VPY_ENTRY_BEGAN when vor_scope_begin()
 * returned 1, so an end calls vor_scope_end() exactly when its begin was recorded, |
 * VPY_ENTRY_HOOK when the profiling hook pushed it. The stack grows up
 * to VPY_STACK_MAX entries; deeper scopes are counted, not recorded. */
#define VPY_STACK_MAX 8192u
#define VPY_ENTRY_BEGAN ((uintptr_t)1)
#define VPY_ENTRY_HOOK ((uintptr_t)2)
#define VPY_ENTRY_FLAGS ((uintptr_t)3)

typedef struct vpy_thread {
    uint32_t depth;    /* entries pushed; above `capacity` they are counted only */
    uint32_t capacity; /* entries allocated */
    uintptr_t *entries;
    int named;           /* the thread's name was given to vor */
    int hook_installed;  /* the profiling hook is set on this thread */
} vpy_thread;

extern __attribute__((tls_model("initial-exec"))) __thread vpy_thread *vpy_tls;
/* Allocates the calling thread's stack and names the thread in vor (from threading's
 * name); NULL if memory is short. */
vpy_thread *vpy_thread_attach(void);
static inline vpy_thread *vpy_thread_get(void) {
    vpy_thread *t = vpy_tls;
    return t != NULL ? t : vpy_thread_attach();
}
int vpy_stack_grow(vpy_thread *t);
void vpy_close_unmatched(vpy_thread *t, uintptr_t token);
/* The position (1-based) of the innermost entry equal to `entry` once `ignored_bits` are
 * masked off, or 0; entries counted beyond the capacity are not searched. */
uint32_t vpy_stack_find(const vpy_thread *t, uintptr_t entry, uintptr_t ignored_bits);
/* Closes the entry at `position` and every entry above it, innermost first. */
void vpy_stack_close_from(vpy_thread *t, uint32_t position);
/* Names the calling thread now (vor.set_thread_name). */
void vpy_thread_mark_named(void);
uint64_t vpy_unmatched_ends(void);
uint64_t vpy_too_deep(void);

/* Opens a scope at `s` on thread `t` (collection may be off: the entry is pushed anyway,
 * unrecorded, so the end pairs with it). `owner` is 0 or VPY_ENTRY_HOOK. */
static inline void vpy_open_as(vpy_thread *t, vpy_site *s, uintptr_t owner) {
    uint32_t d = t->depth;
    if (__builtin_expect(d >= t->capacity, 0) && !vpy_stack_grow(t)) {
        t->depth = d + 1; /* too deep: counted, never recorded */
        return;
    }
    uintptr_t began = (uintptr_t)vor_scope_begin(&s->site); /* 0 when collection is off */
    t->entries[d] = (uintptr_t)s | owner | began;
    t->depth = d + 1;
}
static inline void vpy_open(vpy_thread *t, vpy_site *s) {
    vpy_open_as(t, s, 0);
}

/* Closes the scope opened at `s`: the innermost entry when it is s's (the usual case);
 * otherwise vpy_close_unmatched() decides (docs: scopes ended out of order). */
static inline void vpy_close(vpy_thread *t, vpy_site *s) {
    uint32_t d = t->depth;
    if (__builtin_expect(d > t->capacity, 0)) {
        t->depth = d - 1;
        return;
    }
    if (__builtin_expect(d > 0, 1)) {
        uintptr_t e = t->entries[d - 1];
        if (__builtin_expect((e & ~VPY_ENTRY_FLAGS) == (uintptr_t)s, 1)) {
            t->depth = d - 1;
            if (e & VPY_ENTRY_BEGAN) vor_scope_end();
            return;
        }
    }
    vpy_close_unmatched(t, (uintptr_t)s);
}

/* ---- The calling code (call_site.c) ---------------------------------------------------- */

/* The code object of the innermost Python frame of this thread (borrowed), or NULL. */
PyObject *vpy_caller_code(void);
/* The line the innermost Python frame is at, or 0. Slow (materialises a frame object). */
uint32_t vpy_caller_line(void);

/* ---- Frames marked by a function's return (profile.c, profile_hook.c) ------------------ */

/* After a scope of code site `s` ended: marks a frame if s is the frame function. */
void vpy_mark_frame_now(void);
static inline void vpy_after_return(vpy_site *code_site) {
    if (code_site != NULL && vpy_frame_generation != 0 && vpy_site_is_frame_function(code_site))
        vpy_mark_frame_now();
}

/* ---- Types ------------------------------------------------------------------------------ */

extern PyTypeObject vpy_profiled_type;
extern PyTypeObject vpy_generator_type;
extern PyTypeObject vpy_coroutine_type;
extern PyTypeObject vpy_async_generator_type;
extern PyTypeObject vpy_scope_type;
extern PyTypeObject vpy_reader_type;

/* profile.c */
PyObject *vpy_profile(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
/* resumable.c: wraps what a generator / coroutine / async generator function returned. */
PyObject *vpy_wrap_generator(PyObject *gen, vpy_site *site, vpy_site *code_site);
PyObject *vpy_wrap_coroutine(PyObject *coro, vpy_site *site, vpy_site *code_site);
PyObject *vpy_wrap_async_generator(PyObject *agen, vpy_site *site, vpy_site *code_site);
int vpy_resumable_init(PyObject *module);
/* scope.c */
PyObject *vpy_scope(PyObject *module, PyObject *name);
int vpy_scope_init(PyObject *module);
/* profile_hook.c */
PyObject *vpy_hook_start(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *vpy_hook_stop(PyObject *module, PyObject *unused);
PyObject *vpy_hook_thread_bootstrap(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *vpy_skip(PyObject *module, PyObject *func);
/* records.c */
int vpy_records_init(PyObject *module);
/* reader.c, read_metrics.c */
int vpy_reader_init(PyObject *module);
PyObject *vpy_read_metrics_raw(PyObject *module, PyObject *path);
extern PyObject *vpy_capture_error; /* vor.CaptureError */

/* A vor string from a Python str: UTF-8, NULL with an exception when it is not a str or
 * holds a NUL. */
const char *vpy_utf8(PyObject *s, const char *what);

#endif /* VORPY_H */
