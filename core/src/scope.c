/* scope.c: the public scope entry points, vor_scope_begin() and vor_scope_end().
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

void vor_scope_pop_slow(vor_thread *t, uint64_t end) {
    uint32_t d = t->depth;
    if (d == 0) {
        vor_atomic_store_relaxed(&t->unbalanced, t->unbalanced + 1);
        return;
    }
    d--;
    if (d >= VOR_MAX_DEPTH) {
        vor_atomic_store_relaxed(&t->dropped_deep, t->dropped_deep + 1);
    } else if (end - t->open[d].start < vor_atomic_load_relaxed(&vor_min_duration_ticks)) {
        vor_atomic_store_relaxed(&t->filtered, t->filtered + 1);
    } else if (!vor_ring_make_room(t, d)) {
        vor_atomic_store_relaxed(&t->dropped_full, t->dropped_full + 1);
    } else {
        vor_scope_append(t, t->head, d, end);
    }
    vor_atomic_store_release(&t->depth, d);
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
