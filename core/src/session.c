/* session.c: settings, the session lifecycle (enable, disable, shutdown, flush), the exit
 * hook, the fork handlers and the version query.
 *
 * A session runs from the first vor_enable() to vor_shutdown(). Starting one resolves
 * the settings, anchors the clock (the session epoch: every record's times count from
 * it), declares the system columns, opens the outputs the environment asks for and
 * opens frame 0. vor_disable()/vor_enable() pause and resume inside a session; resuming
 * opens a new frame so a pause does not show up as one enormous frame.
 *
 * This file is the top of the core: it calls every layer below. The state those layers
 * read (settings and session snapshots, exit and fork flags, the frame lock) lives in
 * session_state.c, so that none of them depends on this file.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "vor_internal.h"

/* ---- fork() ---------------------------------------------------------------------------
 *
 * A child starts with one thread, the one that called fork(), and a copy of every lock:
 * a lock another thread held at that instant would stay held in the child for ever. So
 * every lock of the core is taken before fork() and released after it, in the parent and
 * in the child, in one global order that is also the order in which code nests them
 * (an outer lock is never taken while an inner one is held):
 *
 *   1. the frame lock (session_state.c): frame assembly, flush, setup, session start and end,
 *      calibration, counters; everything below may be taken under it;
 *   2. the thread registry (thread_registry.c);
 *   3. the site table (sites.c);
 *   4. the columns (columns.c);
 *   5. the frame ring (frame_ring.c);
 *   6. the frame statistics (frame_stats.c);
 *   7. the /proc/self/statm reader (system_metrics_linux.c).
 * 2 to 7 are leaves: nothing else is taken while one is held, and none is held while
 * user code runs, so the wait in the prepare handler is bounded. The logger's lock
 * (log.c) is the exception: it is held while the user's logger runs, which may itself
 * wait for the forking thread, so it is not taken; the child starts with it free. The
 * pthread_once controls (clock, thread exit key, CRC tables, these handlers) need nothing:
 * glibc reruns in the child an initialiser that a fork() interrupted.
 *
 * In the child, the other threads' buffers are collected like those of exited threads;
 * the statm descriptor (it names the parent's /proc entry) is reopened; and the child of
 * a recording process neither writes into the parent's capture and trace (their file
 * offsets are shared) nor finishes them at its exit: collection stops, the outputs are
 * forgotten without a byte written, and a session the child starts gets no file outputs.
 *
 * The handlers are installed when the library is loaded, so that a fork() before the
 * first session (while another thread already records metrics) is covered too. */
#if defined(VOR_PLATFORM_LINUX)
static void (*const fork_hooks[])(vor_fork_phase) = {
    vor_threads_fork, vor_sites_fork, vor_columns_fork, vor_frame_ring_fork, vor_frame_stats_fork, vor_system_fork,
};
enum { FORK_HOOKS = sizeof fork_hooks / sizeof fork_hooks[0] };

static void before_fork(void) {
    vor_log_fork(VOR_FORK_PREPARE);
    /* Held here already when fork() is called from a consumer (under vor_frame_mark). */
    if (!vor_frame_lock_held_here()) pthread_mutex_lock(&vor_frame_lock);
    for (int i = 0; i < FORK_HOOKS; i++) fork_hooks[i](VOR_FORK_PREPARE);
}

static void after_fork_parent(void) {
    for (int i = FORK_HOOKS - 1; i >= 0; i--) fork_hooks[i](VOR_FORK_PARENT);
    if (!vor_frame_lock_held_here()) pthread_mutex_unlock(&vor_frame_lock);
    vor_log_fork(VOR_FORK_PARENT);
}

static void after_fork_child(void) {
    if (vor_session_now.active) {
        /* A child of a recording process: its outputs are the parent's. (A child forked
         * while no session ran is like a fresh process and may record its own.) */
        vor_atomic_store_release(&vor_internal_collecting, 0);
        vor_consumers_forget_all();
        vor_session_now.active = 0;
        vor_session_forked = 1;
    }
    for (int i = FORK_HOOKS - 1; i >= 0; i--) fork_hooks[i](VOR_FORK_CHILD);
    if (!vor_frame_lock_held_here()) pthread_mutex_unlock(&vor_frame_lock);
    vor_log_fork(VOR_FORK_CHILD);
}
#endif

static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;
static void install_fork_handlers(void) {
#if defined(VOR_PLATFORM_LINUX)
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
#endif
}

__attribute__((constructor)) static void install_fork_handlers_at_load(void) {
    pthread_once(&fork_handlers_once, install_fork_handlers);
}

/* ---- Exit ------------------------------------------------------------------------------
 *
 * At a normal exit that did not call vor_shutdown, the hook finishes the files (the
 * capture's last frames and end record, the trace's closing "]"). It is registered when a
 * session first opens a file output; handlers registered later (C++ statics built
 * afterwards) run before it and can still record; _exit, abort and crashes skip it, which
 * the file formats tolerate. exit() from a logger callback is a normal exit: the logger
 * never runs under a vor lock (log.c), so the hook finds the frame lock free. */
static void shutdown_at_exit(void) {
    vor_session_exiting = 1;
    /* Not in a child after fork() (the files are the parent's). Not from a signal handler
     * that interrupted this thread inside vor_frame_mark (the frame lock held here, an
     * output half-way through a frame): then the files stay in the crash-tolerant form. */
    if (vor_session_forked || vor_frame_lock_held_here()) return;
    vor_shutdown();
}

static void register_exit_hook(void) {
    static int registered; /* under the frame lock */
    if (registered) return;
    registered = 1;
    atexit(shutdown_at_exit);
}

unsigned vor_version_number(void) {
    return VOR_VERSION_NUMBER;
}

const char *vor_version_string(void) {
    return VOR_VERSION_STRING;
}

static uint32_t round_up_pow2(uint32_t v) {
    uint32_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

static uint32_t clamp_setting(uint32_t value, uint32_t fallback, uint32_t lo, uint32_t hi, const char *name) {
    if (value == 0) return fallback;
    if (value < lo || value > hi) {
        uint32_t clamped = value < lo ? lo : hi;
        vor_log(VOR_LOG_BAD_SETTING, "%s = %u, allowed %u..%u; using %u", name, value, lo, hi, clamped);
        return clamped;
    }
    return value;
}

int vor_setup(const vor_desc *desc) {
    if (!vor_frame_lock_acquire()) return 0; /* called back from inside vor */
    if (vor_session_now.active) {
        vor_frame_lock_release();
        vor_log(VOR_LOG_SETUP_TOO_LATE, NULL);
        return 0;
    }
    vor_desc zero;
    if (desc == NULL) {
        memset(&zero, 0, sizeof zero);
        desc = &zero;
    }
    vor_settings s;
    vor_log_set_logger(desc->logger); /* first, so that clamping below reports through it */
    s.thread_buffer_scopes = round_up_pow2(clamp_setting(desc->thread_buffer_scopes, VOR_DEFAULT_THREAD_BUFFER_SCOPES,
                                                         VOR_MIN_THREAD_BUFFER_SCOPES, VOR_MAX_THREAD_BUFFER_SCOPES,
                                                         "thread_buffer_scopes"));
    s.max_threads = clamp_setting(desc->max_threads, VOR_DEFAULT_MAX_THREADS, 1, VOR_MAX_MAX_THREADS, "max_threads");
    s.max_frame_scopes = clamp_setting(desc->max_frame_scopes, VOR_DEFAULT_MAX_FRAME_SCOPES, 1,
                                       VOR_MAX_MAX_FRAME_SCOPES, "max_frame_scopes");
    s.frame_ring_frames = clamp_setting(desc->frame_ring_frames, 0, 1, VOR_FRAME_RING_MAX_FRAMES, "frame_ring_frames");
    vor_settings_now = s;
    vor_frame_lock_release();
    return 1;
}

static void start_session(void) {
    pthread_once(&fork_handlers_once, install_fork_handlers);
    vor_clock_init();
    vor_log_reset();
    vor_frame_stats_reset();
    vor_clock_anchor epoch = vor_clock_anchor_now();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    vor_session_now.epoch_ns = epoch.ns;
    vor_session_now.epoch_tick = epoch.tick;
    vor_session_now.wall_epoch_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
    vor_system_begin_session();
    vor_frames_begin_session();
    vor_session_now.active = 1;
    if (vor_outputs_open_from_environment() > 0) register_exit_hook();
}

void vor_enable(void) {
    if (vor_internal_is_collecting() || vor_session_exiting) return;
    vor_empty_span_ns(); /* calibrate outside the frame lock, once per process */
    if (!vor_frame_lock_acquire()) return;
    /* Checked again under the lock: another thread may have enabled, shut down, or the
     * process may have started exiting meanwhile. */
    if (vor_session_exiting || (vor_internal_is_collecting() && vor_session_now.active)) {
        vor_frame_lock_release();
        return;
    }
    if (!vor_session_now.active)
        start_session();
    else
        vor_frames_restart();
    vor_atomic_store_release(&vor_internal_collecting, 1);
    vor_frame_lock_release();
}

void vor_disable(void) {
    vor_atomic_store_release(&vor_internal_collecting, 0);
}

int vor_is_enabled(void) {
    return vor_internal_is_collecting();
}

void vor_flush_recording(void) {
    if (!vor_frame_lock_acquire()) return;
    if (vor_session_now.active) vor_consumers_flush();
    vor_frame_lock_release();
}

void vor_shutdown(void) {
    if (vor_frame_lock_held_here()) return; /* from a callback inside vor: cannot end the session here */
    vor_atomic_store_release(&vor_internal_collecting, 0);
    vor_frame_lock_acquire();
    if (vor_session_now.active) {
        vor_consumers_flush();
        vor_consumers_close_all();
        vor_frame_ring_end_session();
        vor_frames_end_session();
        vor_system_end_session();
        vor_columns_end_session();
        vor_session_now.active = 0;
    }
    /* Again under the lock: a vor_enable that ran between the first store and the lock
     * must not leave collection on with no session. */
    vor_atomic_store_release(&vor_internal_collecting, 0);
    vor_frame_lock_release();
}
