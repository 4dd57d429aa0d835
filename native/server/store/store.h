/*
 * store.h - the profile store behind `vor serve --store DIR`: uploaded captures kept as files,
 * an SQLite index over them, uploads checked as they arrive, an indexer thread, retention.
 *
 * The store is split by job, one file each:
 *   store_blobs_fs.c    THE BLOB INTERFACE, on a local directory: capture bytes and a small
 *                       metadata sidecar per capture (what the index is rebuilt from)
 *   store_index.c       THE INDEX INTERFACE, on SQLite (FTS5 for scope names)
 *   store_meta.c        the sidecar's text form (key=value lines, escaped), read and written
 *   store_json.c        a strict parser for the small flat JSON objects uploaders send
 *   store_framing.c     incremental framing check of a capture as it arrives (header by the
 *                       C reader, then each record's size check and CRC-32C)
 *   store_facts.c       what the index says about one capture, computed from the C reader
 *   store_indexer.c     the indexer thread: reads stored captures behind their uploads
 *   store_upload.c      one upload: hello, offset, bytes checked then appended, finish
 *   store_retention.c   size limits, oldest-first deletion
 *   store_tokens.c      the token file; constant-time comparison
 *   store_query.c       /api/captures query strings -> an index query
 *   store.c             the store as the server sees it: open (rebuild), uploads, results
 *
 * The two interfaces (blob_store, capture_index) are what a larger deployment replaces (an
 * S3-compatible object store, PostgreSQL): docs/ARCHITECTURE.md says what changes and what does
 * not. Everything but the indexer thread runs on the server's one service thread.
 */
#ifndef VOR_STORE_H
#define VOR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vor/reader.h"

enum {
    STORE_ID_BYTES = 32,          /* capture ids: "YYYYMMDD-HHMMSS-xxxxxxxx" + NUL, fits */
    STORE_KEY_MAX_BYTES = 64,     /* an uploader's key for its capture (resume handle) */
    STORE_FIELD_MAX_BYTES = 256,  /* project, host, name, a tag's key or value */
    STORE_MAX_TAGS = 32,
    STORE_TOP_SCOPES = 10,        /* top scopes by self and by total kept per capture */
    STORE_MAX_SCOPE_NAMES = 10000,/* distinct scope names indexed per capture (full text) */
    STORE_MAX_SCOPE_ROWS = 1000,  /* per-name totals kept per capture (sorting by a scope) */
    STORE_SCOPE_NAME_MAX_BYTES = 255
};

/* Where a capture is in its life. */
typedef enum store_state {
    STORE_UPLOADING = 0, /* an uploader is connected and sending */
    STORE_OPEN,          /* the uploader went away before the end: resumable; reads to its last record */
    STORE_COMPLETE,      /* its end record arrived: the writer closed it properly */
    STORE_CUT            /* the uploader said it is finished, without an end record (a crash, a kill) */
} store_state;

const char *store_state_name(store_state s);       /* "uploading", "open", "complete", "cut" */
int store_state_parse(const char *text, store_state *out); /* 0, or -1 */

typedef struct store_tag {
    char key[STORE_FIELD_MAX_BYTES];
    char value[STORE_FIELD_MAX_BYTES];
} store_tag;

/* What the uploader said, and the store's own bookkeeping: the sidecar of a capture. */
typedef struct capture_meta {
    char id[STORE_ID_BYTES];
    char key[STORE_KEY_MAX_BYTES];
    char project[STORE_FIELD_MAX_BYTES];
    char name[STORE_FIELD_MAX_BYTES];     /* file name as uploaded, e.g. run.vor */
    char host[STORE_FIELD_MAX_BYTES];     /* the uploading machine, as it said */
    char peer[64];                        /* the address it uploaded from */
    int n_tags;
    store_tag tags[STORE_MAX_TAGS];
    int64_t uploaded_ms;                  /* wall clock when the upload began */
    store_state state;
    uint64_t bytes;                       /* stored bytes (complete records only) */
} capture_meta;

typedef struct store_top_scope {
    char name[STORE_SCOPE_NAME_MAX_BYTES + 1];
    int64_t total_ns;
    int64_t self_ns;
    uint64_t calls;
} store_top_scope;

/* What the indexer found in a capture (store_facts.c). */
typedef struct capture_facts {
    char producer[128];
    char process[STORE_FIELD_MAX_BYTES];
    uint64_t pid;
    bool wasm;                  /* written by a wasm build (producer "... emscripten-wasm32") */
    uint32_t version_minor;
    int64_t start_ms;           /* wall clock of the first frame's start */
    uint64_t frames, flame_frames;
    int64_t span_ns;            /* first frame's start to the last frame's end */
    bool ended;                 /* the end record was read */
    int n_top_self, n_top_total;
    store_top_scope top_self[STORE_TOP_SCOPES];
    store_top_scope top_total[STORE_TOP_SCOPES];
    /* Every distinct scope name (up to STORE_MAX_SCOPE_NAMES), '\n'-separated, and the
     * per-name totals of the largest STORE_MAX_SCOPE_ROWS; owned (store_facts_clear). */
    char *names;
    size_t names_len;
    store_top_scope *rows;
    uint32_t n_rows;
} capture_facts;

void store_facts_clear(capture_facts *f);

/* ---- store_facts.c: a capture's facts from the C reader ---- */

typedef struct facts_builder facts_builder;
facts_builder *facts_builder_new(void);
void facts_builder_free(facts_builder *b);
/* Takes one frame of reader r into account (the header must be read). 0, or -1 out of memory. */
int facts_builder_add(facts_builder *b, const vor_reader *r, const vor_reader_frame *f);
/* The facts so far (may be called repeatedly; `out` is cleared first). 0, or -1 out of memory. */
int facts_builder_result(facts_builder *b, const vor_reader *r, capture_facts *out);

/* ---- store_meta.c: the sidecar text ---- */

/* "vor-capture-meta 1\n" then key=value lines (values escaped: \\ \n \t \xNN). Returns a
 * malloc'ed NUL-terminated text, or NULL when out of memory. */
char *store_meta_format(const capture_meta *m);
/* 0, or -1 with a short reason in err (not a sidecar, a bad line, a field too long). */
int store_meta_parse(const char *text, size_t len, capture_meta *m, char *err, size_t errlen);

/* ---- The blob interface (store_blobs_fs.c: files in DIR/captures/) ---- */

typedef struct blob_store blob_store;
typedef struct blob_writer blob_writer;

blob_store *blobs_open(const char *dir, char *err, size_t errlen);
void blobs_close(blob_store *b);
/* Opens the blob `id` for appending, creating it when absent; bytes past `keep` (the last
 * complete record a previous upload stored) are cut off. NULL with errno set on failure. */
blob_writer *blobs_writer(blob_store *b, const char *id, uint64_t keep);
int blob_append(blob_writer *w, const void *data, size_t n);   /* 0, or -1 (errno) */
uint64_t blob_size(const blob_writer *w);
void blob_writer_close(blob_writer *w);
/* A local path a reader can open (viewers and the indexer read blobs as files). */
int blobs_path(const blob_store *b, const char *id, char *out, size_t outlen);
/* Bytes of a blob, -1 when absent. */
int64_t blobs_size(const blob_store *b, const char *id);
int blobs_remove(blob_store *b, const char *id);              /* blob and sidecar; 0 or -1 */
int blobs_put_meta(blob_store *b, const capture_meta *m);     /* atomic replace; 0 or -1 */
int blobs_get_meta(const blob_store *b, const char *id, capture_meta *m, char *err, size_t errlen);
/* Calls fn for every blob id that has a sidecar; stops when fn returns nonzero. */
int blobs_list(const blob_store *b, int (*fn)(void *user, const char *id), void *user);

/* ---- The index interface (store_index.c: SQLite, FTS5) ---- */

typedef struct capture_index capture_index;

/* Opens (creating) the index at path; *created tells whether it was new (rebuild needed).
 * A file that is not a usable index is moved aside (path + ".damaged") and a new one made. */
capture_index *index_open(const char *path, bool *created, char *err, size_t errlen);
void index_close(capture_index *x);
int index_put_meta(capture_index *x, const capture_meta *m);            /* insert or update */
/* final: the capture was read to its end ("indexed"); else the facts so far of a live upload. */
int index_put_facts(capture_index *x, const char *id, const capture_facts *f, bool final);
int index_remove(capture_index *x, const char *id);
/* 1 with the id of the capture an uploader of `project` named `key`; 0 when none; -1 error. */
int index_find_key(capture_index *x, const char *project, const char *key, char *id, size_t idlen);
int index_get_meta(capture_index *x, const char *id, capture_meta *m);  /* 1 found, 0 not, -1 error */
/* Total stored bytes; the oldest capture (by upload time) not in `busy` (ids being uploaded),
 * for retention: 1 found, 0 none, -1 error. */
int index_total_bytes(capture_index *x, uint64_t *total);
int index_oldest(capture_index *x, bool (*busy)(void *user, const char *id), void *user, char *id, size_t idlen,
                 uint64_t *bytes);
/* Every id in the index (rebuild: drop rows whose blob is gone). */
int index_each_id(capture_index *x, int (*fn)(void *user, const char *id), void *user);
uint64_t index_count(capture_index *x);

typedef enum index_sort { SORT_DATE = 0, SORT_FRAMES, SORT_SPAN, SORT_SCOPE_TOTAL, SORT_UPLOADED } index_sort;

typedef struct index_query {
    const char *project, *process, *host, *state, *id;
    int n_tags;
    store_tag tags[STORE_MAX_TAGS];
    const char *scope;          /* full text over scope names (terms ANDed, prefix match) */
    const char *sort_scope;     /* SORT_SCOPE_TOTAL: the scope's exact name */
    int64_t since_ms, until_ms; /* wall-clock start within [since, until); 0 = open */
    index_sort sort;
    bool ascending;
    uint32_t limit, offset;
} index_query;

struct json_buf;
/* Appends the matching captures to out as JSON objects separated by commas (a comma first when
 * `comma`); *total: how many match without limit and offset. 0, or -1 with a reason in err. */
int index_search(capture_index *x, const index_query *q, struct json_buf *out, bool comma, uint64_t *total,
                 char *err, size_t errlen);

/* ---- store_json.c: flat JSON objects from uploaders ---- */

typedef struct json_member {
    const char *key;      /* decoded, NUL-terminated (points into the parse arena) */
    int kind;             /* 's' string, 'n' number, 't' true, 'f' false, 'z' null, 'o' object */
    const char *str;      /* 's': decoded text; 'n': the number's text */
    int first_child, n_children; /* 'o': members of the nested object (strings only) */
} json_member;

typedef struct json_object {
    int n;
    json_member members[64];
    char arena[8192];     /* decoded strings */
    size_t arena_used;
} json_object;

/* Parses a JSON object whose values are strings, numbers, booleans, null, or objects of
 * strings (one level). 0, or -1 with a reason in err. Strict (RFC 8259), bounded. */
int store_json_parse(const char *text, size_t len, json_object *o, char *err, size_t errlen);
const json_member *store_json_get(const json_object *o, const char *key);

/* ---- store_framing.c: the framing check of an arriving capture ---- */

typedef enum framing_status {
    FRAMING_MORE = 0,  /* everything so far is a valid prefix; send more */
    FRAMING_END,       /* the end record was checked: nothing may follow */
    FRAMING_BAD        /* refused: problem says why */
} framing_status;

typedef struct framing_check {
    uint64_t checked;   /* bytes of the stream verified: the header and whole records */
    uint64_t header_bytes;
    bool header_done;
    bool legacy;        /* a 1.0 capture */
    bool ended;         /* the end record was verified */
    bool bad;
    uint64_t records;
    char problem[256];
    unsigned char *pending;     /* bytes after `checked` that do not make a whole record yet */
    size_t pending_len, pending_cap;
} framing_check;

/* Receives verified bytes, in stream order, as they are verified (runs of whole records, or
 * the header). Returns 0, or -1 to stop (framing_feed then returns FRAMING_BAD with the
 * problem "storage failed"). */
typedef int (*framing_emit_fn)(void *user, const unsigned char *bytes, size_t n);

void framing_init(framing_check *c);
void framing_free(framing_check *c);
/* Feeds n more bytes; hands every newly verified byte to emit. Bytes after the end record,
 * damage, a foreign header: FRAMING_BAD, with c->problem naming the byte offset. Memory: at
 * most one record (<= 64 MiB + its head) is held while it is incomplete. */
framing_status framing_feed(framing_check *c, const void *data, size_t n, framing_emit_fn emit, void *user);

/* ---- store_tokens.c ---- */

typedef struct token_set {
    int n;
    char **tokens;
} token_set;

/* One token per line; blank lines and lines starting with '#' ignored; at least one token of
 * 16 or more characters. 0, or -1 with a reason in err. */
int tokens_load(token_set *t, const char *path, char *err, size_t errlen);
void tokens_free(token_set *t);
/* Constant time in the candidate's contents. */
bool tokens_check(const token_set *t, const char *candidate);

/* ---- store_query.c ---- */

/* Parses an /api/captures query string ("project=a&tag=k%3Dv&scope=x&sort=frames") into q,
 * whose strings point into buf (decoded copies). 0, or -1 with the problem in err. */
int store_query_parse(const char *query, index_query *q, char *buf, size_t buflen, char *err, size_t errlen);
/* "2026-11-24", "2026-11-24T22:35:04Z", "2026-11-24T22:35" (UTC), or ms since 1970. 0 or -1. */
int store_parse_time_ms(const char *text, int64_t *ms);


/* ---- store_indexer.c: the indexer thread ---- */

typedef enum index_result_kind {
    INDEX_PROGRESS = 0, /* facts so far of a capture still being uploaded */
    INDEX_DONE,         /* final facts: the capture was read to its end */
    INDEX_REFUSED       /* its records do not decode: problem says where and why */
} index_result_kind;

typedef struct index_result {
    struct index_result *next;
    char id[STORE_ID_BYTES];
    index_result_kind kind;
    capture_facts facts;
    char problem[256];
} index_result;

typedef struct indexer indexer;

/* Starts the thread; wake(user) is called (from the indexer thread) whenever results wait. */
indexer *indexer_start(void (*wake)(void *user), void *user);
/* Stops and joins the thread; pending jobs and results are dropped. */
void indexer_stop(indexer *ix);
/* Indexes the capture at path. live: bytes are still arriving (indexer_finish says when they
 * stop). 0, or -1 out of memory. A job with the same id replaces the old one. */
int indexer_add(indexer *ix, const char *id, const char *path, bool live);
/* No more bytes will arrive for id: it is read to its end, then INDEX_DONE. */
void indexer_finish(indexer *ix, const char *id);
void indexer_cancel(indexer *ix, const char *id);
/* The next result (the caller frees it with index_result_free), or NULL. */
index_result *indexer_take(indexer *ix);
void index_result_free(index_result *r);
/* Jobs not finished yet (waiting or being read). */
int indexer_pending(indexer *ix);

/* The whole indexing of one finished capture file, on the calling thread (what a job does).
 * 0 with facts filled; -1 with the problem (damaged, not a capture, unreadable). */
int store_index_file(const char *path, capture_facts *facts, char *problem, size_t problemlen);

#endif /* VOR_STORE_H */
