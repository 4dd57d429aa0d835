/* outputs.c: opens, at session start, the consumers that the environment and the
 * settings ask for.
 *
 *   VOR_RECORD=path           write a .vor capture (metrics every frame)
 *   VOR_RECORD_FLAME=1        also flame frames (0 or unset: metrics only)
 *   VOR_RECORD_EVERY=N        a flame frame on 1 frame in N (N >= 1)
 *   VOR_RECORD_MAX_FRAMES=N   stop flame frames after N of them (N >= 1); metrics go on
 *   VOR_RECORD_THREAD=1       compress and write records on a writer thread (capture_writer.c)
 *   VOR_TRACE=path            write a Chrome Trace Event JSON file (chrome_trace.c)
 * and the platform's own outputs (vor_platform_outputs_open, platform.h: in a browser the
 * DevTools sink, which the wasm flavour's layer of the library supplies; none natively).
 * Each output is optional and independent: a bad value or an unwritable path is reported
 * once, that setting or output alone is ignored, and the program runs on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture_writer.h"
#include "chrome_json.h"
#include "upload_stream.h"
#include "utf8.h"
#include "vor_internal.h"

/* Reads a positive integer variable; 0 when unset, or when bad (after a warning). */
static uint64_t positive_env(const char *name) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end != '\0' || v == 0 || text[0] == '-') {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "%s=\"%.*s\" is not a positive whole number; ignored", name,
                     (int)vor_utf8_cut(text, 40), text);
        return 0;
    }
    return (uint64_t)v;
}

static int flag_env(const char *name) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0' || strcmp(text, "0") == 0) return 0;
    if (strcmp(text, "1") == 0) return 1;
    vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "%s=\"%.*s\" must be 0 or 1; ignored", name, (int)vor_utf8_cut(text, 40),
                 text);
    return 0;
}

int vor_outputs_open_from_environment(void) {
    int files = 0;
    vor_scope_limits_from_environment(); /* VOR_THREAD_SCOPES, VOR_MIN_DURATION_NS (scope_limits.c) */
    vor_frame_ring_begin_session();
    vor_platform_outputs_open();

    const char *record = getenv("VOR_RECORD");
    const char *trace = getenv("VOR_TRACE");
    if (vor_session_forked && ((record && *record) || (trace && *trace))) {
        vor_log(VOR_LOG_BAD_ENVIRONMENT, "a process forked from the recording one does not write VOR_RECORD or "
                                         "VOR_TRACE (they are the parent's files)");
        return 0;
    }
    if (record && *record) {
        vor_capture_options options;
        options.flame = flag_env("VOR_RECORD_FLAME");
        uint64_t every = positive_env("VOR_RECORD_EVERY");
        options.every = every == 0 ? 1 : (every > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)every);
        options.max_flame_frames = positive_env("VOR_RECORD_MAX_FRAMES");
        options.thread = flag_env("VOR_RECORD_THREAD");
        files += vor_capture_open(record, &options);
    }

    files += vor_upload_open_from_environment(); /* VOR_UPLOAD: the live upload (upload_live.c) */
    if (trace && *trace)
        files += vor_chrome_trace_open(trace, &(vor_chrome_trace_options){positive_env("VOR_TRACE_EVERY"),
                                                                          positive_env("VOR_TRACE_MAX_FRAMES"), 0});
    return files; /* session.c registers the exit hook that finishes them */
}
