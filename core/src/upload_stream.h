/* upload_stream.h: the capture bytes of a live upload (VOR_UPLOAD, vor_upload_start), made on
 * the frame thread: the header once, then one framed record per frame, handed to a sink that
 * never blocks (upload_live.c natively: a ring a thread sends from; wasm/src/upload_wasm.c: the
 * page's WebSocket). Shared by both so the upload is byte for byte a capture like VOR_RECORD's. */
#ifndef VOR_UPLOAD_STREAM_H
#define VOR_UPLOAD_STREAM_H

#include "bytes.h"
#include "capture_writer.h"
#include "vor_internal.h"
#include "vor/upload.h"

/* Takes n bytes (a whole record) or refuses them (returns 0: no room); never blocks. */
typedef int (*vor_upload_sink_fn)(void *user, const uint8_t *bytes, size_t n);

typedef struct vor_upload_stream vor_upload_stream;

/* The stream's header bytes are in *header after this (owned by the stream). NULL: no memory. */
VOR_HIDDEN vor_upload_stream *vor_upload_stream_new(const vor_capture_options *options, vor_upload_sink_fn sink,
                                                    void *user);
VOR_HIDDEN const vor_out *vor_upload_stream_header(const vor_upload_stream *s);
/* One frame: encoded, framed, given to the sink. A refused record is a dropped frame: counted,
 * and the next record declares everything again (the upload stays a valid capture). */
VOR_HIDDEN void vor_upload_stream_frame(vor_upload_stream *s, const vor_frame_record *rec);
/* The end record (at close). Returns 1 if the sink took it. */
VOR_HIDDEN int vor_upload_stream_end(vor_upload_stream *s);
/* The next record starts afresh (a new upload of the rest: everything declared again). */
VOR_HIDDEN void vor_upload_stream_restart(vor_upload_stream *s);
VOR_HIDDEN uint64_t vor_upload_stream_dropped(const vor_upload_stream *s);
VOR_HIDDEN uint64_t vor_upload_stream_bytes(const vor_upload_stream *s);
VOR_HIDDEN void vor_upload_stream_free(vor_upload_stream *s);

/* Options for an upload from vor_upload_options and the environment (VOR_PROJECT, VOR_TAGS,
 * VOR_UPLOAD_TOKEN[_FILE], VOR_UPLOAD_BUFFER_MB, VOR_RECORD_FLAME/_EVERY/_MAX_FRAMES). Strings
 * are copied into the struct. */
typedef struct vor_upload_settings {
    char url[512];
    char project[256];
    char tags[1024];
    char token[520];
    char name[256];
    size_t buffer_bytes;
    vor_capture_options capture;
} vor_upload_settings;

/* 0, or -1 after reporting the problem (vor_log BAD_ENVIRONMENT). */
VOR_HIDDEN int vor_upload_settings_resolve(const char *url, const vor_upload_options *o, vor_upload_settings *out);

/* Session start (outputs.c): VOR_UPLOAD set -> the live upload; returns 1 when one started. */
VOR_HIDDEN int vor_upload_open_from_environment(void);

#endif
