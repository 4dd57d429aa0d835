/*
 * store_internal.h - the store as the server sees it (store.c, store_upload.c,
 * store_retention.c) and the state those three files share.
 *
 * Ownership: the server (native/server) creates one store per run with --store, calls it from its
 * service thread only, and gives each uploading websocket one `upload`. The store owns the blob
 * store, the index and the indexer thread.
 */
#ifndef VOR_STORE_INTERNAL_H
#define VOR_STORE_INTERNAL_H

#include "store.h"

#define STORE_DEFAULT_MAX_CAPTURE_BYTES (4ull << 30)  /* 4 GiB per capture */
#define STORE_DEFAULT_MAX_STORE_BYTES (64ull << 30)   /* 64 GiB in all, then oldest first */
#define STORE_META_EVERY_BYTES (64ull << 20)          /* sidecar's byte count refreshed this often */

typedef struct store_callbacks {
    /* From the indexer thread: results wait; the server wakes its loop (lws_cancel_service). */
    void (*wake)(void *user);
    /* On the service thread: the upload `owner` (the server's connection) must end with
     * `problem` (its capture was refused by the indexer, deleted, or taken over). */
    void (*end_upload)(void *user, void *owner, int status, const char *problem);
    void *user;
} store_callbacks;

typedef struct store_options {
    const char *dir;
    uint64_t max_capture_bytes;   /* 0: default */
    uint64_t max_store_bytes;     /* 0: default */
} store_options;

typedef struct upload upload;

typedef struct store {
    store_options opts;
    store_callbacks cb;
    blob_store *blobs;
    capture_index *index;
    indexer *ix;
    upload **active;              /* uploads with a connection */
    int n_active, cap_active;
    uint64_t total_bytes;         /* every stored byte (kept up to date, not re-summed) */
    char index_path[4096];
} store;

struct upload {
    store *st;
    void *owner;                  /* the server's connection */
    capture_meta meta;
    blob_writer *w;
    framing_check framing;
    bool created_here;            /* this connection created the capture (a refusal deletes it) */
    bool done;                    /* ended (complete, cut) or refused: no more bytes */
    bool gone;                    /* deleted or refused: nothing of it is written any more */
    uint64_t meta_bytes;          /* bytes the sidecar says */
    char problem[256];
};

/* store.c */
store *store_open(const store_options *o, const store_callbacks *cb, char *err, size_t errlen);
void store_close(store *st);
/* Stops the indexer thread (before the server's loop goes away); the store works on without it. */
void store_stop_indexer(store *st);
/* On the service thread, after a wake: moves indexer results into the index. */
void store_service(store *st);
/* The file of a stored capture (for viewers), and its upload name; 0, or -1 unknown id. */
int store_capture_path(store *st, const char *id, char *path, size_t pathlen, char *name, size_t namelen);
/* GET /api/captures?query (parsed by store_query_parse): index_search. */
int store_search(store *st, const index_query *q, struct json_buf *out, bool comma, uint64_t *total, char *err,
                 size_t errlen);
/* DELETE: 0 deleted, 1 unknown id, -1 failure. An upload in progress is ended first. */
int store_delete(store *st, const char *id, char *err, size_t errlen);
/* Removes a capture everywhere (blob, sidecar, index, indexer job); not an active upload. */
void store_forget(store *st, const char *id);
bool store_is_busy(store *st, const char *id);

/* store_upload.c */
typedef enum upload_answer {
    UPLOAD_GO = 0,       /* send bytes from upload_offset() */
    UPLOAD_ALREADY,      /* stored completely before: nothing to send */
    UPLOAD_REFUSED       /* err says why; status: the websocket close status */
} upload_answer;

/* A hello from an uploader ({"type":"hello","key":..,"project":..,"tags":{..},"name":..,
 * "host":..}). On UPLOAD_GO and UPLOAD_ALREADY *out is the upload (ALREADY: already done). */
upload_answer store_upload_begin(store *st, const json_object *hello, const char *peer, void *owner, upload **out,
                                 int *status, char *err, size_t errlen);
uint64_t upload_offset(const upload *u);
const char *upload_id(const upload *u);
/* Bytes from the uploader. 0: stored what was whole (upload_offset moved); 1: the end record
 * arrived (the capture is complete); -1: refused (err, *status), the upload is over. */
int store_upload_feed(upload *u, const void *data, size_t n, int *status, char *err, size_t errlen);
/* The uploader says it has nothing more: complete if the end record came, else cut. */
void store_upload_finish(upload *u);
/* The connection is gone (or ends): the upload is released; unfinished ones stay resumable.
 * Frees u. */
void store_upload_release(upload *u);
/* The same without freeing u (its connection still points to it: a takeover). */
void store_upload_release_keep(upload *u);

/* The upload of a capture that is being deleted or refused: it stops being active, and the
 * server is told to end its connection (which releases it later). */
void upload_abandon(upload *u, int status, const char *problem);
upload *active_upload(store *st, const char *id);

/* store_retention.c */
/* Room for `more` bytes: deletes the oldest captures that are not being uploaded while the store
 * would pass its limit. 0, or -1 when even that cannot make room. */
int store_make_room(store *st, uint64_t more);

#endif /* VOR_STORE_INTERNAL_H */
