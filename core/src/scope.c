/* scope.c: the public scope entry points: vor_scope_enter()/vor_scope_leave() (the
 * macros), vor_scope_begin()/vor_scope_end() (the explicit form), and the slow paths of
 * the inline push and pop (scope_hot.h), including the closing of scopes a non-local exit
 * skipped.
 *
 * They are out-of-line functions (one call each) so that the thread buffer's layout stays
 * private; the macros inline only the collecting check, which is the whole cost when
 * collection is off. The thread buffer pointer is an initial-exec TLS variable: one
 * fs-relative load, also from libvor.so (which is meant to be linked, not dlopen'ed).
 */
#include "scope_hot.h"

int vor_internal_collecting;
VOR_TLS_FAST vor_thread *vor_tls_thread;

int vor_scope_begin(vor_site *site) {
    if (VOR_UNLIKELY(site == NULL || !vor_internal_is_collecting())) {
        if (site == NULL) vor_log(VOR_LOG_NAME_NULL, "vor_scope_begin(NULL)");
        return 0;
    }
    return vor_scope_begin_unchecked(site);
}

int vor_scope_begin_unchecked(vor_site *site) {
    vor_thread *t = vor_tls_thread;
    if (VOR_UNLIKELY(t == NULL)) {
        t = vor_thread_attach();
        if (t == NULL) {
            vor_atomic_add_relaxed(&vor_refused_scopes, 1);
            return 0;
        }
    }
    vor_scope_push(t, site);
    return 1;
}

/* Closes the innermost open scope (there is one) at `end` with `flags`: recorded, or
 * counted as too deep, too short or without room. */
static void close_top(vor_thread *t, uint64_t end, uint32_t flags) {
    if (VOR_NVTX_ON()) vor_nvtx_pop(); /* after the clock read */
    uint32_t d = t->depth - 1;
    if (d >= VOR_MAX_DEPTH) {
        vor_atomic_store_relaxed(&t->dropped_deep, t->dropped_deep + 1);
    } else if (end - t->open[d].start < vor_atomic_load_relaxed(&vor_min_duration_ticks)) {
        vor_atomic_store_relaxed(&t->filtered, t->filtered + 1);
    } else if (!vor_ring_make_room(t, d)) {
        vor_atomic_store_relaxed(&t->dropped_full, t->dropped_full + 1);
    } else {
        vor_scope_append(t, t->head, d, end, flags);
    }
    vor_atomic_store_release(&t->depth, d);
}

void vor_scope_pop_slow(vor_thread *t, uint64_t end) {
    if (t->depth == 0) {
        vor_atomic_store_relaxed(&t->unbalanced, t->unbalanced + 1);
        return;
    }
    close_top(t, end, 0);
}

/* 1 if the entry at depth d (stored) is one a jump skipped, seen from an entry at `pos`
 * (an entry hook's `call_site` and `fn`; NULL for the macros): it began deeper, or, for a
 * hook, at the same position from another call site (a sibling that had the same frame
 * size) or from the same call site for the same function (an earlier call of it). An
 * inlined function's entry shares its caller's position and call site. */
static int is_skipped(const vor_thread *t, uint32_t d, uintptr_t pos, const void *call_site, const void *fn) {
    uintptr_t p = t->open_at[d + 1].pos;
    if (p != pos || call_site == NULL || p == 0) return p > pos;
    const void *entry_fn = t->open_at[d + 1].fn;
    if (entry_fn == NULL) return 0; /* a macro's scope */
    return t->open_call_site[d + 1] != call_site || entry_fn == fn;
}

/* Closes, flagged unwound and ended at `now`, the open scopes a jump skipped (is_skipped).
 * Too deep to have been stored, scopes have no position; they go with the deepest stored
 * one (they are deeper still). */
static void close_skipped(vor_thread *t, uintptr_t pos, const void *call_site, const void *fn, uint64_t now) {
    uint32_t d = t->depth;
    if (d > VOR_MAX_DEPTH && t->open_at[VOR_MAX_DEPTH].pos > pos) {
        while (d > VOR_MAX_DEPTH) close_top(t, now, VOR_SCOPE_UNWOUND), d--; /* counted too deep */
    }
    while (d > 0 && d <= VOR_MAX_DEPTH && is_skipped(t, d - 1, pos, call_site, fn)) {
        close_top(t, now, VOR_SCOPE_UNWOUND);
        d--;
    }
}

void vor_scope_push_at_slow(vor_thread *t, vor_site *site, uintptr_t pos, uintptr_t limit, const void *call_site,
                            const void *fn) {
    uint32_t d = t->depth;
    if (d > 0 && t->open_at[d < VOR_MAX_DEPTH ? d : VOR_MAX_DEPTH].pos > limit) {
        close_skipped(t, pos, call_site, fn, vor_clock_ticks());
        d = t->depth;
    }
    if (d >= VOR_MAX_DEPTH) {
        vor_atomic_store_release(&t->depth, d + 1); /* too deep: counted when it ends */
        return;
    }
    t->open_call_site[d + 1] = call_site;
    vor_scope_open_entry(t, d, site, pos, fn, vor_clock_ticks());
}

/* 1 if the open entry at depth d is the one `site` (or, without a site, the function `fn`)
 * began. */
static int is_own_entry(const vor_thread *t, uint32_t d, const vor_site *site, const void *fn) {
    if (site != NULL) return t->open[d].site == site;
    return t->open_at[d + 1].fn == fn;
}

void vor_scope_pop_at_slow(vor_thread *t, uint64_t end, uintptr_t pos, const vor_site *site, const void *fn, int tail) {
    uint32_t d = t->depth;
    if (d == 0) return; /* its entry was closed already */
    if (d > VOR_MAX_DEPTH) {
        if (tail || t->open_at[VOR_MAX_DEPTH].pos <= pos) {
            close_top(t, end, 0); /* too deep to be stored: its own as far as anyone knows */
            return;
        }
        /* The deepest stored entry is skipped: so are the ones deeper still. */
        while (d > VOR_MAX_DEPTH) close_top(t, end, VOR_SCOPE_UNWOUND), d--; /* counted too deep */
    }
    /* Its entry: the topmost of its site at its function's position (deeper ones are
     * skipped recursions). Below an entry of a shallower function it cannot be. */
    uint32_t k = d;
    for (;;) {
        if (k == 0) return; /* not open: ignored rather than close a caller's scope */
        k--;
        uintptr_t p = t->open_at[k + 1].pos;
        if (p != 0 && (tail ? p > pos : p <= pos) && is_own_entry(t, k, site, fn)) break;
        if (p != 0 && (tail ? p <= pos : p < pos)) return;
    }
    while (t->depth > k + 1) close_top(t, end, VOR_SCOPE_UNWOUND);
    close_top(t, end, 0);
}

/* vor_scope_enter beyond its common case: the thread's first scope, too deep, a skipped
 * entry, or a clock read through a call. */
__attribute__((noinline)) static vor_site *enter_slow(vor_site *site, uintptr_t pos) {
    vor_thread *t = vor_tls_thread;
    if (t == NULL) {
        t = vor_thread_attach();
        if (t == NULL) {
            vor_atomic_add_relaxed(&vor_refused_scopes, 1);
            return NULL;
        }
    }
    vor_scope_push_at(t, site, pos, pos, NULL, NULL);
    return site;
}

/* The common case calls nothing, so it saves no registers; every other case is a tail
 * call. */
VOR_HOT_ENTRY vor_site *vor_scope_enter(vor_site *site) {
    uintptr_t pos = VOR_STACK_POSITION();
    vor_thread *t = vor_tls_thread;
    uint32_t d;
    if (VOR_UNLIKELY(t == NULL || !vor_scope_push_at_plain(t, pos, &d) || !vor_clock_source_is_inline() ||
                     VOR_NVTX_ON()))
        return enter_slow(site, pos);
    vor_scope_open_entry(t, d, site, pos, NULL, vor_clock_read_inline());
    return site;
}

__attribute__((noinline)) static void leave_slow(vor_site *site, uintptr_t pos) {
    uint64_t end = vor_clock_ticks();
    vor_thread *t = vor_tls_thread;
    if (t != NULL) vor_scope_pop_at(t, end, pos, site);
}

VOR_HOT_ENTRY void vor_scope_leave(vor_site *site) {
    uintptr_t pos = VOR_STACK_POSITION();
    if (VOR_UNLIKELY(!vor_clock_source_is_inline())) {
        leave_slow(site, pos);
        return;
    }
    uint64_t end = vor_clock_read_inline();
    vor_thread *t = vor_tls_thread;
    if (VOR_UNLIKELY(t == NULL)) return; /* vor_scope_enter returned NULL: never called */
    vor_scope_pop_at(t, end, pos, site);
}

void vor_scope_end(void) {
    uint64_t end = vor_clock_ticks();
    vor_thread *t = vor_tls_thread;
    if (VOR_UNLIKELY(t == NULL)) {
        /* This thread never began a recorded scope: count it like any unbalanced end. */
        vor_log(VOR_LOG_UNBALANCED_END, "on a thread that never opened a scope");
        return;
    }
    vor_scope_pop(t, end);
}
