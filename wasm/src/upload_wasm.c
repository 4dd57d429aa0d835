/* upload_wasm.c: the live upload from a page (vor_upload_start, Module.vorUpload in
 * wasm/js/upload.js): the capture's records are made on the frame thread as natively
 * (core/src/upload_stream.c) and handed to the page's WebSocket by wasm/js/upload.js, which keeps
 * the bytes the server has not acknowledged (up to the buffer size) and resumes after a dropped
 * connection from the offset the server holds. There is no thread: handing a record to JS is a
 * copy into that buffer, and WebSocket.send never blocks; a record that does not fit is left out
 * (counted), as natively. */
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upload_client.h"
#include "upload_stream.h"

/* wasm/js/upload.js */
extern int vor_upload_js_start(const char *url, const char *hello, const uint8_t *header, size_t header_len,
                               double buffer_bytes);
extern int vor_upload_js_send(const uint8_t *bytes, size_t n);
extern void vor_upload_js_end(void);
extern int vor_upload_js_failed(void);
extern double vor_upload_js_acked(void);
extern int vor_upload_js_connected(void);

typedef struct page_upload {
    vor_upload_settings set;
    vor_upload_stream *stream;
} page_upload;

static page_upload *current;
static vor_upload_status last_status;

static int js_sink(void *user, const uint8_t *bytes, size_t n) {
    (void)user;
    return vor_upload_js_send(bytes, n);
}

static void status(page_upload *u) {
    last_status.active = current == u;
    last_status.connected = vor_upload_js_connected();
    last_status.bytes_encoded = vor_upload_stream_bytes(u->stream);
    last_status.bytes_acked = (uint64_t)vor_upload_js_acked();
    last_status.frames_dropped = vor_upload_stream_dropped(u->stream);
}

static int page_frame(void *state, const vor_frame_record *rec) {
    page_upload *u = state;
    if (vor_upload_js_failed()) return 1; /* refused for good (reported by upload.js) */
    vor_upload_stream_frame(u->stream, rec);
    return 0;
}

static void page_close(void *state) {
    page_upload *u = state;
    vor_upload_stream_end(u->stream);
    vor_upload_js_end(); /* upload.js sends what it holds, then closes */
    status(u);
    last_status.active = 0;
    if (current == u) current = NULL;
    vor_upload_stream_free(u->stream);
    free(u);
}

static int start_locked(const char *url, const vor_upload_options *o) {
    char hello[4096], err[200], key[25];
    if (!vor_session_now.active || current) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "vor_upload_start: %s",
                     current ? "an upload is already running in this session" : "no session (call vor_enable() first)");
        return 0;
    }
    page_upload *u = calloc(1, sizeof *u);
    if (!u) return 0;
    if (vor_upload_settings_resolve(url, o, &u->set) != 0) {
        free(u);
        return 0;
    }
    vor_upload_random_key(key);
    vor_upload_hello h = {key,
                          u->set.project,
                          u->set.name,
                          "browser",
                          u->set.token[0] ? u->set.token : NULL,
                          u->set.tags[0] ? u->set.tags : NULL};
    if (vor_upload_hello_json(&h, hello, sizeof hello, err, sizeof err) != 0) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "vor_upload_start: %s", err);
        free(u);
        return 0;
    }
    u->stream = vor_upload_stream_new(&u->set.capture, js_sink, u);
    if (!u->stream) {
        free(u);
        return 0;
    }
    const vor_out *hdr = vor_upload_stream_header(u->stream);
    if (!vor_upload_js_start(u->set.url, hello, hdr->data, hdr->size, (double)u->set.buffer_bytes)) {
        vor_upload_stream_free(u->stream);
        free(u);
        return 0;
    }
    vor_consumer c = {"upload", u, page_frame, NULL, page_close};
    if (!vor_consumers_add(&c)) {
        page_close(u);
        return 0;
    }
    current = u;
    return 1;
}

int vor_upload_open_from_environment(void) {
    return 0; /* a page has no environment: Module.vorUpload / vor_upload_start */
}

int vor_upload_start(const char *url, const vor_upload_options *options) {
    int held_before = !vor_frame_lock_acquire();
    int ok = start_locked(url, options);
    if (!held_before) vor_frame_lock_release();
    return ok;
}

void vor_upload_get_status(vor_upload_status *out) {
    if (current) status(current);
    *out = last_status;
}

/* Module.vorUpload(url, {project, tags, token, name, flame, every, maxFrames}) calls this (tags
 * already "k=v,k=v"; every and max_frames 0 when not given). Kept and exported whatever the
 * program exports: it is what pulls wasm/js/upload.js (and so Module.vorUpload) into every
 * program linked with libvor. */
EMSCRIPTEN_KEEPALIVE int vor_upload_start_js(const char *url, const char *project, const char *tags, const char *token,
                                             const char *name, int flame, double every, double max_frames) {
    vor_upload_options o = {
        .project = project && *project ? project : NULL,
        .tags = tags && *tags ? tags : NULL,
        .token = token && *token ? token : NULL,
        .name = name && *name ? name : NULL,
        .flame = flame ? 1 : 0,
        .every = every >= 1 && every <= 4294967295.0 ? (uint32_t)every : 0,
        .max_flame_frames = max_frames >= 1 && max_frames <= 9007199254740992.0 ? (uint64_t)max_frames : 0,
    };
    return vor_upload_start(url, &o);
}
