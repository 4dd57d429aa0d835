/*
 * store.c - the store behind `vor serve --store DIR`, as the server sees it: opening it
 * (repairing and rebuilding the index from the files), moving the indexer's results into the
 * index, finding a stored capture for a viewer, searching, deleting.
 *
 * The files are the truth; the index is derived. At open:
 *   - every sidecar (DIR/captures/<id>.meta) is read; a capture whose upload was interrupted by
 *     the server's own end ("uploading") becomes "open" (resumable), and its file is cut back to
 *     its last whole record (a crash could leave a partial write);
 *   - a capture missing from the index (or the whole index, if index.sqlite was lost or is not
 *     usable) is put back and queued for the indexer; rows whose files are gone are dropped;
 *   - the size limits are applied (store_retention.c).
 * Rebuilding thousands of captures runs in the indexer thread: the server serves at once and
 * the captures reappear in searches as they are indexed (without facts, they are listed already).
 */
#include "store_internal.h"
#include "server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool store_is_busy(store *st, const char *id)
{
    for (int i = 0; i < st->n_active; i++)
        if (!strcmp(st->active[i]->meta.id, id))
            return true;
    return false;
}

void store_forget(store *st, const char *id)
{
    uint64_t bytes = 0;
    capture_meta m;
    if (index_get_meta(st->index, id, &m) == 1)
        bytes = m.bytes;
    int64_t size = blobs_size(st->blobs, id);
    if (size >= 0)
        bytes = (uint64_t)size;
    indexer_cancel(st->ix, id);
    blobs_remove(st->blobs, id);
    index_remove(st->index, id);
    st->total_bytes = st->total_bytes > bytes ? st->total_bytes - bytes : 0;
}

static int emit_ok(void *user, const unsigned char *b, size_t n)
{
    (void)user;
    (void)b;
    (void)n;
    return 0;
}

/* Cuts the blob of an interrupted upload back to its last whole record: the sidecar's byte
 * count is one; what follows it is checked record by record. Returns the size kept. */
static uint64_t repair_tail(store *st, const capture_meta *m)
{
    char path[4096];
    if (blobs_path(st->blobs, m->id, path, sizeof path))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    framing_check c;
    framing_init(&c);
    unsigned char *buf = malloc(1 << 20);
    uint64_t at = 0;
    for (ssize_t n; buf && (n = pread(fd, buf, 1 << 20, (off_t)at)) > 0; at += (uint64_t)n) {
        /* Everything before the sidecar's count was checked when it was stored: a cheap pass
         * over it (CRC-32C) restores the framing state; after it, the same check decides. */
        if (framing_feed(&c, buf, (size_t)n, emit_ok, NULL) != FRAMING_MORE)
            break;
    }
    close(fd);
    free(buf);
    uint64_t keep = c.checked;
    framing_free(&c);
    blob_writer *w = blobs_writer(st->blobs, m->id, keep);
    blob_writer_close(w);
    return keep;
}

typedef struct rebuild {
    store *st;
    bool index_new;
    int restored, queued, bad;
} rebuild;

static int rebuild_one(void *user, const char *id)
{
    rebuild *rb = user;
    store *st = rb->st;
    capture_meta m, old;
    char err[128], path[4096];
    if (blobs_get_meta(st->blobs, id, &m, err, sizeof err) || blobs_size(st->blobs, id) < 0) {
        if (rb->bad++ < 5)
            fprintf(stderr, "vor serve: store: capture %s skipped (%s)\n", id,
                    blobs_size(st->blobs, id) < 0 ? "its .vor file is missing" : err);
        return 0;
    }
    bool changed = false;
    if (m.state == STORE_UPLOADING || m.state == STORE_OPEN) {
        uint64_t keep = repair_tail(st, &m);
        changed = m.state == STORE_UPLOADING || keep != m.bytes;
        m.state = STORE_OPEN;
        m.bytes = keep;
    } else {
        int64_t size = blobs_size(st->blobs, id);
        changed = (uint64_t)size != m.bytes;
        m.bytes = (uint64_t)size;
    }
    if (changed)
        blobs_put_meta(st->blobs, &m);
    int have = index_get_meta(st->index, id, &old);
    if (have != 1 || changed || old.bytes != m.bytes || old.state != m.state) {
        index_put_meta(st->index, &m);
        rb->restored++;
    }
    st->total_bytes += m.bytes;
    if ((have != 1 || changed || rb->index_new) && blobs_path(st->blobs, id, path, sizeof path) == 0 &&
        indexer_add(st->ix, id, path, false) == 0)
        rb->queued++;
    return 0;
}

static int drop_orphan(void *user, const char *id)
{
    store *st = user;
    if (blobs_size(st->blobs, id) < 0)
        index_remove(st->index, id);
    return 0;
}

store *store_open(const store_options *o, const store_callbacks *cb, char *err, size_t errlen)
{
    store *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    st->opts = *o;
    st->cb = *cb;
    if (!st->opts.max_capture_bytes)
        st->opts.max_capture_bytes = STORE_DEFAULT_MAX_CAPTURE_BYTES;
    if (!st->opts.max_store_bytes)
        st->opts.max_store_bytes = STORE_DEFAULT_MAX_STORE_BYTES;
    st->blobs = blobs_open(o->dir, err, errlen);
    if (!st->blobs)
        goto fail;
    snprintf(st->index_path, sizeof st->index_path, "%s/index.sqlite", o->dir);
    bool created = false;
    char ierr[256];
    st->index = index_open(st->index_path, &created, ierr, sizeof ierr);
    if (!st->index) {
        snprintf(err, errlen, "cannot open the index %s: %s", st->index_path, ierr);
        goto fail;
    }
    st->ix = indexer_start(cb->wake, cb->user);
    if (!st->ix) {
        snprintf(err, errlen, "cannot start the indexer thread");
        goto fail;
    }
    rebuild rb = {st, created, 0, 0, 0};
    index_each_id(st->index, drop_orphan, st);
    blobs_list(st->blobs, rebuild_one, &rb);
    if (rb.bad > 5)
        fprintf(stderr, "vor serve: store: %d more captures skipped\n", rb.bad - 5);
    if (created && rb.restored)
        fprintf(stderr, "vor serve: store: index rebuilt from %d captures (indexing in the background)\n",
                rb.restored);
    store_make_room(st, 0);
    return st;
fail:
    store_close(st);
    return NULL;
}

void store_stop_indexer(store *st)
{
    indexer_stop(st->ix);
    st->ix = NULL;
}

void store_close(store *st)
{
    if (!st)
        return;
    while (st->n_active > 0)
        store_upload_release(st->active[0]);
    indexer_stop(st->ix);
    index_close(st->index);
    blobs_close(st->blobs);
    free(st->active);
    free(st);
}

upload *active_upload(store *st, const char *id)
{
    for (int i = 0; i < st->n_active; i++)
        if (!strcmp(st->active[i]->meta.id, id))
            return st->active[i];
    return NULL;
}

void store_service(store *st)
{
    index_result *r;
    while ((r = indexer_take(st->ix))) {
        if (r->kind == INDEX_REFUSED) {
            upload *u = active_upload(st, r->id);
            char msg[300];
            snprintf(msg, sizeof msg, "refused: %s", r->problem);
            fprintf(stderr, "vor serve: store: capture %s deleted: its records do not decode (%s)\n", r->id,
                    r->problem);
            if (u)
                upload_abandon(u, 1008, msg);
            store_forget(st, r->id);
        } else if (index_put_facts(st->index, r->id, &r->facts, r->kind == INDEX_DONE) != 0) {
            fprintf(stderr, "vor serve: store: cannot write the index entry of %s\n", r->id);
        }
        index_result_free(r);
    }
}

int store_capture_path(store *st, const char *id, char *path, size_t pathlen, char *name, size_t namelen)
{
    capture_meta m;
    if (blobs_size(st->blobs, id) < 0 || blobs_path(st->blobs, id, path, pathlen))
        return -1;
    if (name) {
        if (index_get_meta(st->index, id, &m) == 1 && m.name[0])
            snprintf(name, namelen, "%s", m.name);
        else
            snprintf(name, namelen, "%s.vor", id);
    }
    return 0;
}

int store_search(store *st, const index_query *q, json_buf *out, bool comma, uint64_t *total, char *err,
                 size_t errlen)
{
    return index_search(st->index, q, out, comma, total, err, errlen);
}

int store_delete(store *st, const char *id, char *err, size_t errlen)
{
    capture_meta m;
    int have = index_get_meta(st->index, id, &m);
    if (have != 1 && blobs_size(st->blobs, id) < 0)
        return 1;
    upload *u = active_upload(st, id);
    if (u)
        upload_abandon(u, 1008, "capture deleted");
    store_forget(st, id);
    if (blobs_size(st->blobs, id) >= 0) {
        snprintf(err, errlen, "cannot remove the capture's file");
        return -1;
    }
    return 0;
}
