/* session_state.c: the state every runtime file reads, and nothing that acts on it.
 *
 * The settings and session snapshots, the exit and fork flags and the frame lock are read
 * by the frame assembly, the outputs, the thread registry, calibration and the frame ring;
 * session.c (enable, disable, shutdown, the exit hook, the fork handlers) writes them and
 * calls those files. Kept here, below all of them, the state ties no file to session.c:
 * the core's files form layers instead of one cycle (scripts/core-cycles.py lists them).
 * This file depends on log.c alone (the frame lock is taken with vor_mutex_lock, which
 * counts the locks a thread holds so that reports wait for their release).
 */
#include "vor_internal.h"

vor_settings vor_settings_now = {
    VOR_DEFAULT_THREAD_BUFFER_SCOPES,
    VOR_DEFAULT_MAX_THREADS,
    VOR_DEFAULT_MAX_FRAME_SCOPES,
    0,
};
vor_session vor_session_now;
int vor_session_exiting;
int vor_session_forked;
vor_mutex vor_frame_lock = VOR_MUTEX_INIT;

/* Which thread holds the frame lock: a logger, consumer or atexit handler that calls back
 * into vor while it is held must not wait for it (that would wait forever). */
static VOR_TLS int frame_lock_held;

int vor_frame_lock_acquire(void) {
    if (frame_lock_held) return 0;
    vor_mutex_lock(&vor_frame_lock);
    frame_lock_held = 1;
    return 1;
}

void vor_frame_lock_release(void) {
    frame_lock_held = 0;
    vor_mutex_unlock(&vor_frame_lock);
}

int vor_frame_lock_held_here(void) {
    return frame_lock_held;
}
