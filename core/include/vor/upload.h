/* vor/upload.h: streams this program's capture to a profile store (`vor serve --store DIR`)
 * while it runs, so a job on another machine, or a page in a user's browser, is watched live
 * and stored at once.
 *
 *     vor_enable();
 *     vor_upload_start("http://profiles.example:8700", &(vor_upload_options){.project = "trainer",
 *                      .tags = "branch=main,gpu=a100"});
 *
 * or, without code, natively: VOR_UPLOAD=http://HOST:PORT VOR_PROJECT=P VOR_TAGS=k=v,k=v
 * (VOR_UPLOAD_TOKEN or VOR_UPLOAD_TOKEN_FILE for a server with tokens), and in a page
 * Module.vorUpload(url, {project, tags, token}) (wasm/js/upload.js).
 *
 * The upload is a capture like VOR_RECORD's (VOR_RECORD_FLAME, _EVERY, _MAX_FRAMES apply to it
 * too), encoded once per frame on the frame thread and handed to a bounded buffer; sending is
 * someone else's work (a background thread natively, the browser's WebSocket in a page), so the
 * program never waits for the network. When the buffer is full (the server is slow or
 * unreachable), frames are left out of the upload, counted and reported once; the upload stays a
 * valid capture with those frames missing, and a local capture (VOR_RECORD) still has every one.
 * A dropped connection is re-made with back-off and the upload resumes where the server's copy
 * ends. At vor_shutdown() (or exit) what is buffered is sent for up to VOR_UPLOAD_FLUSH_MS
 * (default 3000) before the program goes on.
 */
#ifndef VOR_UPLOAD_H
#define VOR_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "vor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vor_upload_options {
    const char *project; /* NULL: VOR_PROJECT, else "default" */
    const char *tags;    /* "k=v,k2=v2"; NULL: VOR_TAGS */
    const char *token;   /* NULL: VOR_UPLOAD_TOKEN / VOR_UPLOAD_TOKEN_FILE */
    const char *name;    /* the capture's name in the store; NULL: "<process>.vor" */
    size_t buffer_bytes; /* 0: VOR_UPLOAD_BUFFER_MB, else 16 MiB */
    /* What the upload records, as VOR_RECORD_FLAME / _EVERY / _MAX_FRAMES do for VOR_RECORD
     * (a page has no environment: Module.vorUpload's {flame, every, maxFrames} set these). */
    int flame;                 /* 1: flame frames too; 0: VOR_RECORD_FLAME decides */
    uint32_t every;            /* a flame frame on 1 frame in N; 0: VOR_RECORD_EVERY, else 1 */
    uint64_t max_flame_frames; /* stop flame frames after N; 0: VOR_RECORD_MAX_FRAMES, else no limit */
} vor_upload_options;

typedef struct vor_upload_status {
    int active;              /* an upload is running */
    int connected;           /* its connection is up */
    uint64_t bytes_encoded;  /* capture bytes produced so far */
    uint64_t bytes_acked;    /* bytes the server said it stored */
    uint64_t frames_dropped; /* frames left out because the buffer was full */
    uint64_t reconnects;
    char id[40]; /* the capture's id in the store, once known */
} vor_upload_status;

/* Starts uploading the running session's capture to url (http://HOST:PORT). Call after
 * vor_enable(); one upload per session. Returns 1, or 0 after reporting why (no session, a bad
 * URL, one already running, no memory). Never blocks on the network. */
VOR_API int vor_upload_start(const char *url, const vor_upload_options *options);

/* What the running (or last) upload did. */
VOR_API void vor_upload_get_status(vor_upload_status *out);

#ifdef __cplusplus
}
#endif

#endif /* VOR_UPLOAD_H */
