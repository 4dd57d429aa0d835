/* instrument_functions.c: the hooks that GCC and Clang call on entry to and exit from
 * every function of a translation unit compiled with -finstrument-functions, so a file
 * (or a whole program) gets a scope per function without writing one macro: the C
 * counterpart of annotating every method of a type.
 *
 * Entry looks the function up in a lock-free table of function sites and opens a scope;
 * exit closes the innermost scope only if it belongs to the same function, so an entry
 * that was not recorded (collection off at the time) never closes someone else's scope.
 * Names are resolved later, off the hot path, with dladdr: link executables with
 * -rdynamic so their functions are in the dynamic symbol table; static functions and
 * programs without it are named module+0xoffset (addr2line resolves those).
 *
 * In wasm, names come from the module's name section (wasm/js/function_names.js), and
 * this file also defines emscripten_return_address: clang passes
 * __builtin_return_address(0) as `call_site`, which Emscripten 3.1.6 implements in JS
 * only with -sUSE_OFFSET_CONVERTER (about 15 us per call) and otherwise aborts on. vor
 * ignores call_site, so the C definition returns 0 (for the whole program: documented).
 *
 * The hooks and everything they call are compiled without instrumentation (libvor is
 * never built with -finstrument-functions and the hooks carry no_instrument_function);
 * a thread-local guard additionally makes them return at once if they are re-entered,
 * for example from a signal handler that runs instrumented code.
 */
#include "scope_hot.h"

static VOR_TLS int in_hook;

VOR_API VOR_NO_INSTRUMENT void __cyg_profile_func_enter(void *fn, void *call_site);
VOR_API VOR_NO_INSTRUMENT void __cyg_profile_func_exit(void *fn, void *call_site);

void __cyg_profile_func_enter(void *fn, void *call_site) {
    (void)call_site;
    if (!vor_internal_is_collecting() || in_hook) return;
    in_hook = 1;
    vor_thread *t = vor_tls_thread;
    if (VOR_UNLIKELY(t == NULL)) t = vor_thread_attach();
    if (t != NULL)
        vor_scope_push(t, vor_function_site(fn));
    else
        vor_atomic_add_relaxed(&vor_refused_scopes, 1);
    in_hook = 0;
}

void __cyg_profile_func_exit(void *fn, void *call_site) {
    (void)call_site;
    vor_thread *t = vor_tls_thread;
    if (t == NULL || t->depth == 0 || in_hook) return; /* nothing open: no clock read */
    uint64_t end = vor_clock_ticks();
    uint32_t d = t->depth - 1;
    /* Too deep to have been stored: the entry was counted, so pop it. */
    if (d < VOR_MAX_DEPTH && vor_function_site_address(t->open[d].site) != fn &&
        !vor_function_site_is_unknown(t->open[d].site))
        return;
    in_hook = 1;
    vor_scope_pop(t, end);
    in_hook = 0;
}

#if defined(VOR_PLATFORM_WASM)
VOR_API VOR_NO_INSTRUMENT void *emscripten_return_address(int level);
void *emscripten_return_address(int level) {
    (void)level;
    return NULL;
}
#endif
