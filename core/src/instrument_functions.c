/* instrument_functions.c: the hooks that GCC and Clang call on entry to and exit from
 * every function of a translation unit compiled with -finstrument-functions, so a file
 * (or a whole program) gets a scope per function without writing one macro: the C
 * counterpart of annotating every method of a type.
 *
 * Entry looks the function up in a lock-free table of function sites and opens a scope
 * that keeps where the function's stack is; exit closes the innermost scope if it belongs
 * to the same function at the same stack position, so an entry that was not recorded
 * (collection off at the time) never closes someone else's scope. Entries a longjmp
 * skipped (deeper in the stack than the hook's caller, or, below the exiting function's
 * own entry, at its position) are closed first, flagged unwound (scope_hot.h, scope.c).
 * Names are resolved later, off the hot path (sites.c).
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

/* The entry hook after its collecting test; `pos`: the hook's caller's position. The
 * call site is kept with the entry (wasm has none: 0). */
static inline void enter_hook(void *fn, void *call_site, uintptr_t pos) {
    if (in_hook) return;
    in_hook = 1;
    vor_thread *t = vor_tls_thread;
    if (VOR_UNLIKELY(t == NULL)) t = vor_thread_attach();
    if (t != NULL) {
        vor_site *site = vor_function_site(fn);
#if defined(VOR_PLATFORM_WASM)
        vor_scope_push_at(t, site, pos, pos, NULL, fn);
#else
        uint32_t d = t->depth;
        if (d < VOR_MAX_DEPTH) t->open_call_site[d + 1] = call_site;
        vor_scope_push_at(t, site, pos, pos - 1, call_site, fn);
#endif
    } else {
        vor_atomic_add_relaxed(&vor_refused_scopes, 1);
    }
    in_hook = 0;
}

VOR_HOT_ENTRY void __cyg_profile_func_enter(void *fn, void *call_site) {
    if (!vor_internal_is_collecting()) return;
    enter_hook(fn, call_site, VOR_STACK_POSITION());
}

void vor_function_enter_unchecked(void *fn, void *call_site) {
    enter_hook(fn, call_site, VOR_STACK_POSITION());
}

/* The exit hook beyond its common case (the entry on top is not plainly its function's,
 * too deep, too short, the ring at its limit, a clock read through a call). */
__attribute__((noinline)) static void exit_slow(vor_thread *t, void *fn, uintptr_t pos, int tail) {
    uint64_t end = vor_clock_ticks();
    in_hook = 1;
    vor_scope_pop_at_slow(t, end, pos, NULL, fn, tail);
    in_hook = 0;
}

/* The common case calls nothing, so it saves no registers. */
VOR_HOT_ENTRY void __cyg_profile_func_exit(void *fn, void *call_site) {
    vor_thread *t = vor_tls_thread;
    if (t == NULL || t->depth == 0 || in_hook) return; /* nothing open: no clock read */
    uintptr_t pos = VOR_STACK_POSITION();
    /* GCC and Clang call the exit hook of a void function as a tail call: it then returns
     * straight to fn's caller (call_site), and `pos` is the caller's position, not fn's
     * (fn's entry lies deeper). Wasm has no tail calls (and call_site is 0 there). */
#if defined(VOR_PLATFORM_WASM)
    int tail = 0;
    (void)call_site;
#else
    int tail = __builtin_return_address(0) == call_site;
#endif
    if (VOR_UNLIKELY(!vor_clock_source_is_inline())) {
        exit_slow(t, fn, pos, tail);
        return;
    }
    uint64_t end = vor_clock_read_inline();
    uint32_t d = t->depth - 1;
    uint64_t head = t->head;
    if (VOR_UNLIKELY(d >= VOR_MAX_DEPTH || head >= t->fast_limit || t->open_at[d + 1].fn != fn || VOR_NVTX_ON() ||
                     (tail ? t->open_at[d + 1].pos <= pos : t->open_at[d + 1].pos != pos) ||
                     end - t->open[d].start < vor_atomic_load_relaxed(&vor_min_duration_ticks))) {
        exit_slow(t, fn, pos, tail);
        return;
    }
    in_hook = 1; /* a signal handler's instrumented code returns at once meanwhile */
    vor_scope_append(t, head, d, end, 0);
    vor_atomic_store_release(&t->depth, d);
    in_hook = 0;
}

#if defined(VOR_PLATFORM_WASM)
VOR_API VOR_NO_INSTRUMENT void *emscripten_return_address(int level);
void *emscripten_return_address(int level) {
    (void)level;
    return NULL;
}
#endif
