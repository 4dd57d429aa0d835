/*
 * capture_access.h - random access to the captures `vor serve` lists: an index per capture
 * (core/src/capture_index.h) built on the service thread in slices and kept up to date as
 * the file grows, and the HTTP endpoints that read ranges of frames through it
 * (http_range.c). The protocol is in docs/ARCHITECTURE.md ("Random access") and web/README.md.
 *
 * Memory: at most SERVER_INDEXES indexes at once (the least recently used one goes when
 * another is needed), each within its own bound (capture_index.h: at most 2^20 entries of 44
 * bytes and 16 MiB of value snapshots, plus the header); a response is built whole, at most
 * SERVER_RANGE_MAX_BYTES (one entry of a merged index may take up to SERVER_RANGE_HARD_BYTES).
 */
#ifndef VOR_SERVER_CAPTURE_ACCESS_H
#define VOR_SERVER_CAPTURE_ACCESS_H

#include "server_internal.h"
#include "capture_index.h"

enum {
    SERVER_INDEXES = 8,                        /* indexes kept at once */
    SERVER_INDEX_SLICE_MS = 8,                 /* indexing per service-loop turn */
    SERVER_INDEX_IDLE_MS = 60000,              /* an index not asked for this long stops following its file */
    SERVER_RANGE_MAX_BYTES = 4 * 1024 * 1024,  /* a range response, as large as a JSON response */
    SERVER_RANGE_HARD_BYTES = 64 * 1024 * 1024 /* one entry alone may take this much */
};

typedef struct capture_access capture_access;

/* One indexed capture. */
typedef struct indexed_capture {
    size_t id;                 /* registry id */
    char *path;
    dev_t dev;
    ino_t ino;
    uint64_t head_hash;        /* fingerprint of the header indexed (0 until read) */
    uint64_t generation;       /* changes when the index starts over (a new run of the file) */
    vor_capture_index *ix;
    int64_t used_ms;           /* last asked for */
    bool at_end;               /* the last step found nothing more in the file */
} indexed_capture;

/* The index of capture `e` (created, or restarted when the file is not the one indexed:
 * truncated, replaced, rewritten with a new header), stepped for up to `slice_ms`. NULL with a
 * message in err when the file cannot be opened. */
indexed_capture *capture_access_get(server *srv, const capture_entry *e, int slice_ms, char *err, size_t errlen);
/* Stops indexing (server stopping) and frees everything. */
void capture_access_free(server *srv);
/* The header fingerprint of an indexed capture's file (capture_header_hash over its header), 0
 * when it is not complete yet. */
uint64_t capture_access_header_hash(const vor_capture_index *ix);

/* http_range.c: GET /api/captures/<id>/<what> (index, frames, tail, bytes). */
int range_handle(struct lws *wsi, server *srv, http_session *s, const char *id_and_what);

#endif /* VOR_SERVER_CAPTURE_ACCESS_H */
