/*
 * capture_access.c - the indexes behind random access (capture_access.h): which captures
 * have one, building them without stalling the service loop, and keeping them true to the
 * file on disk.
 *
 * Shape, and why:
 *   - An index is made the first time a viewer asks for one of a capture's ranges, and
 *     built in slices of SERVER_INDEX_SLICE_MS on an lws timer that fires again at once while
 *     work remains: a gigabyte capture is indexed in a few seconds of the loop's time, while
 *     every other connection is still served between slices (no thread, no lock).
 *   - A request also steps the index it reads (a slice), so a viewer following a live
 *     capture sees the frames written since its last request without waiting for the timer.
 *     Indexes asked for in the last SERVER_INDEX_IDLE_MS keep following their file on the
 *     growth poll; older ones stop (and start again when asked for).
 *   - The file indexed must stay the file on disk: a path that now names another inode, a
 *     file shorter than what was indexed, or one whose header changed (a new run rewriting it
 *     in place) starts the index over, with a new generation number viewers see.
 *   - At most SERVER_INDEXES at once: the least recently used one makes room.
 */
#include "capture_access.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct capture_access {
    server *srv;
    indexed_capture items[SERVER_INDEXES];
    int count;
    uint64_t generations;
    lws_sorted_usec_list_t sul;
    bool scheduled;
};

static int64_t elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

uint64_t capture_access_header_hash(const vor_capture_index *ix)
{
    unsigned char buf[SERVER_HEADER_CHECK_BYTES];
    if (vor_capture_index_pread(ix, buf, 16, 0) < 16)
        return 0;
    size_t n = capture_header_length(buf);
    return vor_capture_index_pread(ix, buf, n, 0) == (long)n ? capture_header_hash(buf, n) : 0;
}

static void forget(indexed_capture *c)
{
    vor_capture_index_close(c->ix);
    free(c->path);
    memset(c, 0, sizeof *c);
}

/* Reads what the file has (up to slice_ms); at_end when nothing more was there. */
static void step(indexed_capture *c, int slice_ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = vor_capture_index_step(c->ix, 512);
        if (n <= 0) {
            c->at_end = true;
            break;
        }
        c->at_end = false;
        if (elapsed_ms(&t0) >= slice_ms)
            break;
    }
    if (!c->head_hash && vor_capture_index_header(c->ix, &(size_t){0}))
        c->head_hash = capture_access_header_hash(c->ix);
}

static void tick(lws_sorted_usec_list_t *sul);

static void schedule(capture_access *a, int ms)
{
    if (a->scheduled || a->srv->stopping)
        return;
    a->scheduled = true;
    lws_sul_schedule(a->srv->context, 0, &a->sul, tick, (lws_usec_t)ms * LWS_US_PER_MS);
}

/* Background indexing: one slice per turn for the first index with more to read; a look
 * for growth at the others in use. Again at once while there is more, else at the poll interval
 * while an index in use follows its file. */
static void tick(lws_sorted_usec_list_t *sul)
{
    capture_access *a = lws_container_of(sul, capture_access, sul);
    int64_t now = server_now_ms();
    bool more = false, following = false, sliced = false;

    a->scheduled = false;
    for (int i = 0; i < a->count; i++) {
        indexed_capture *c = &a->items[i];
        if (!c->ix || now - c->used_ms > SERVER_INDEX_IDLE_MS || vor_capture_index_error(c->ix)[0])
            continue;
        if (c->at_end) {
            following = true;
            step(c, SERVER_INDEX_SLICE_MS); /* nothing new: one failed read */
        } else if (!sliced) {
            step(c, SERVER_INDEX_SLICE_MS);
            sliced = true;
        }
        more = more || !c->at_end;
    }
    if (more)
        schedule(a, 0);
    else if (following)
        schedule(a, a->srv->opts->poll_interval_ms);
}

/* The file at c->path is still the one indexed? */
static bool still_same(indexed_capture *c)
{
    struct stat st;
    if (stat(c->path, &st) != 0 || st.st_dev != c->dev || st.st_ino != c->ino)
        return false;
    if ((uint64_t)st.st_size < vor_capture_index_offset(c->ix))
        return false;
    return !c->head_hash || capture_access_header_hash(c->ix) == c->head_hash;
}

static int start(capture_access *a, indexed_capture *c, const capture_entry *e, char *err, size_t errlen)
{
    struct stat st;
    int fd = open_regular_file(e->path, 0, &st); /* never blocks; regular files only */
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", e->name, fd == -2 ? "not a regular file" : strerror(errno));
        return -1;
    }
    close(fd);
    c->ix = vor_capture_index_open(e->path, 0, err, errlen);
    c->path = strdup(e->path);
    if (!c->ix || !c->path) {
        if (!err[0])
            snprintf(err, errlen, "out of memory");
        forget(c);
        return -1;
    }
    c->id = e->id;
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    c->generation = ++a->generations;
    return 0;
}

indexed_capture *capture_access_get(server *srv, const capture_entry *e, int slice_ms, char *err, size_t errlen)
{
    capture_access *a = srv->access_ix;
    err[0] = '\0';
    if (!a) {
        a = srv->access_ix = calloc(1, sizeof *a);
        if (!a) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        a->srv = srv;
    }
    indexed_capture *c = NULL;
    for (int i = 0; i < a->count && !c; i++)
        if (a->items[i].id == e->id && a->items[i].ix)
            c = &a->items[i];
    if (c && strcmp(c->path, e->path) == 0 && still_same(c)) {
        c->used_ms = server_now_ms();
        step(c, slice_ms);
        if (!c->at_end)
            schedule(a, 0);
        return c;
    }
    if (c) {
        forget(c); /* another file now: start over */
    } else if (a->count < SERVER_INDEXES) {
        c = &a->items[a->count++];
    } else {
        c = &a->items[0];
        for (int i = 1; i < a->count; i++)
            if (a->items[i].used_ms < c->used_ms)
                c = &a->items[i];
        forget(c);
    }
    if (start(a, c, e, err, errlen) != 0)
        return NULL;
    c->used_ms = server_now_ms();
    step(c, slice_ms);
    schedule(a, 0);
    return c;
}

void capture_access_free(server *srv)
{
    capture_access *a = srv->access_ix;
    if (!a)
        return;
    lws_sul_cancel(&a->sul);
    for (int i = 0; i < a->count; i++)
        forget(&a->items[i]);
    free(a);
    srv->access_ix = NULL;
}
