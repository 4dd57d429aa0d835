/* scope_limits.c: the per-thread buffer bound and the minimum scope duration of a session,
 * from the settings and the environment:
 *
 *   VOR_THREAD_SCOPES=N       bound of each thread's buffer, in scopes ended between two
 *                             frame marks (1024 .. 16777216, rounded up to a power of two;
 *                             outside: the nearest, with a warning). Overrides
 *                             vor_desc.thread_buffer_scopes. Buffers grow to it on demand.
 *   VOR_MIN_DURATION_NS=N     scopes shorter than N ns are not recorded (counted as
 *                             filtered per thread); 0 or unset records every scope.
 *
 * Read when vor_enable() starts a session (outputs.c calls in), like the other VOR_*
 * variables: a bad value gives one warning naming the variable and is ignored. They live
 * apart from outputs.c because the hot path reads them: two globals, read with relaxed loads.
 */
#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "vor_internal.h"

uint32_t vor_thread_scopes_bound = VOR_DEFAULT_THREAD_BUFFER_SCOPES;
uint64_t vor_min_duration_ticks;

/* A whole number >= 0 from the environment: 1 and *out when set and valid; 0 when unset,
 * or when bad (after a warning). */
static int whole_number_env(const char *name, uint64_t *out) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end != '\0' || text[0] == '-' || text[0] == '+' || text[0] == ' ') {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "%s=\"%.40s\" is not a whole number; ignored", name, text);
        return 0;
    }
    *out = (uint64_t)v;
    return 1;
}

void vor_scope_limits_reset(void) {
    vor_atomic_store_relaxed(&vor_thread_scopes_bound, vor_settings_now.thread_buffer_scopes);
    vor_atomic_store_relaxed(&vor_min_duration_ticks, (uint64_t)0);
}

void vor_scope_limits_from_environment(void) {
    vor_scope_limits_reset();
    uint64_t v;
    if (whole_number_env("VOR_THREAD_SCOPES", &v)) {
        uint64_t bound = v;
        if (v < VOR_MIN_THREAD_BUFFER_SCOPES || v > VOR_MAX_THREAD_BUFFER_SCOPES) {
            bound = v < VOR_MIN_THREAD_BUFFER_SCOPES ? VOR_MIN_THREAD_BUFFER_SCOPES : VOR_MAX_THREAD_BUFFER_SCOPES;
            vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_THREAD_SCOPES=%llu is outside %u..%u; using %llu",
                         (unsigned long long)v, VOR_MIN_THREAD_BUFFER_SCOPES, VOR_MAX_THREAD_BUFFER_SCOPES,
                         (unsigned long long)bound);
        }
        uint32_t p = VOR_MIN_THREAD_BUFFER_SCOPES;
        while (p < bound) p <<= 1;
        vor_atomic_store_relaxed(&vor_thread_scopes_bound, p);
    }
    if (whole_number_env("VOR_MIN_DURATION_NS", &v) && v > 0)
        vor_atomic_store_relaxed(&vor_min_duration_ticks, vor_clock_ticks_for_ns(v));
}
