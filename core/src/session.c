/* session.c: settings, the session lifecycle (enable, disable, shutdown, flush) and the
 * version query.
 *
 * A session runs from the first vor_enable() to vor_shutdown(). Starting one resolves
 * the settings, anchors the clock (the session epoch: every record's times count from
 * it), declares the system columns, opens the outputs the environment asks for and
 * opens frame 0. vor_disable()/vor_enable() pause and resume inside a session; resuming
 * opens a new frame so a pause does not show up as one enormous frame.
 */
#include <string.h>
#include <time.h>

#include "clock.h"
#include "vor_internal.h"

vor_settings vor_settings_now = {
    VOR_DEFAULT_THREAD_BUFFER_SCOPES, VOR_DEFAULT_MAX_THREADS, VOR_DEFAULT_MAX_FRAME_SCOPES, 0, {NULL, NULL},
};
vor_session vor_session_now;
int vor_session_exiting;
vor_mutex vor_frame_lock = VOR_MUTEX_INIT;

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
    vor_mutex_lock(&vor_frame_lock);
    if (vor_session_now.active) {
        vor_mutex_unlock(&vor_frame_lock);
        vor_log(VOR_LOG_SETUP_TOO_LATE, NULL);
        return 0;
    }
    vor_desc zero;
    if (desc == NULL) {
        memset(&zero, 0, sizeof zero);
        desc = &zero;
    }
    vor_settings s;
    s.logger = desc->logger;
    vor_settings_now.logger = s.logger; /* so that clamping below reports through it */
    s.thread_buffer_scopes = round_up_pow2(clamp_setting(desc->thread_buffer_scopes, VOR_DEFAULT_THREAD_BUFFER_SCOPES,
                                                         VOR_MIN_THREAD_BUFFER_SCOPES, VOR_MAX_THREAD_BUFFER_SCOPES,
                                                         "thread_buffer_scopes"));
    s.max_threads = clamp_setting(desc->max_threads, VOR_DEFAULT_MAX_THREADS, 1, VOR_MAX_MAX_THREADS, "max_threads");
    s.max_frame_scopes = clamp_setting(desc->max_frame_scopes, VOR_DEFAULT_MAX_FRAME_SCOPES, 1,
                                       VOR_MAX_MAX_FRAME_SCOPES, "max_frame_scopes");
    s.frame_ring_frames = clamp_setting(desc->frame_ring_frames, 0, 1, VOR_FRAME_RING_MAX_FRAMES, "frame_ring_frames");
    vor_settings_now = s;
    vor_mutex_unlock(&vor_frame_lock);
    return 1;
}

static void start_session(void) {
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
    vor_outputs_open_from_environment();
}

void vor_enable(void) {
    if (vor_internal_is_collecting() || vor_session_exiting) return;
    vor_empty_span_ns(); /* calibrate outside the frame lock, once per process */
    vor_mutex_lock(&vor_frame_lock);
    if (!vor_session_now.active)
        start_session();
    else
        vor_frames_restart();
    vor_atomic_store_release(&vor_internal_collecting, 1);
    vor_mutex_unlock(&vor_frame_lock);
}

void vor_disable(void) {
    vor_atomic_store_release(&vor_internal_collecting, 0);
}

int vor_is_enabled(void) {
    return vor_internal_is_collecting();
}

void vor_flush_recording(void) {
    vor_mutex_lock(&vor_frame_lock);
    if (vor_session_now.active) vor_consumers_flush();
    vor_mutex_unlock(&vor_frame_lock);
}

void vor_shutdown(void) {
    vor_atomic_store_release(&vor_internal_collecting, 0);
    vor_mutex_lock(&vor_frame_lock);
    if (vor_session_now.active) {
        vor_consumers_flush();
        vor_consumers_close_all();
        vor_frame_ring_end_session();
        vor_frames_end_session();
        vor_system_end_session();
        vor_columns_end_session();
        vor_session_now.active = 0;
    }
    vor_mutex_unlock(&vor_frame_lock);
}
