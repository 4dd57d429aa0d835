/*
 * store_upload.c - one upload, from the uploader's hello to its end.
 *
 *   hello    names the capture by the uploader's key (its resume handle, scoped by project),
 *            with the project, tags, host and file name. A key the store knows resumes that
 *            capture at the offset the store holds (whole records only); a completed one is
 *            answered "already stored"; a key whose upload is still attached to an older
 *            connection (a client reconnecting before the server noticed the drop) takes it over:
 *            the older connection is ended. So two uploads of the same capture never interleave,
 *            and uploads of different captures (any names) never share a file.
 *   bytes    go through the framing check (store_framing.c); only verified whole records are
 *            appended to the blob, after the size limits (per capture, and for the whole store,
 *            which deletes the oldest captures first: store_retention.c). The indexer reads the
 *            blob right behind.
 *   end      the end record arrives (complete), or the uploader says it has nothing more (cut:
 *            it reads to its last record), or the connection drops (open: resumable).
 * A refused upload (damage, a foreign file, a limit) leaves nothing behind when this connection
 * created the capture; when it was resuming one, what earlier connections stored stays.
 */
#include "store_internal.h"
#include "server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static bool text_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n >= max)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static bool key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n < 8 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' ||
              c == '.'))
            return false;
    }
    return true;
}

static int refuse(int *status, int code, char *err, size_t errlen, const char *fmt, const char *what)
{
    *status = code;
    snprintf(err, errlen, fmt, what);
    return UPLOAD_REFUSED;
}

/* The hello's fields into m; NULL, or the problem. */
static const char *read_hello(const json_object *h, capture_meta *m, char *why, size_t whylen)
{
    const json_member *type = store_json_get(h, "type");
    if (!type || type->kind != 's' || strcmp(type->str, "hello"))
        return "the first message must be {\"type\":\"hello\",...}";
    const json_member *key = store_json_get(h, "key");
    if (!key || key->kind != 's' || !key_ok(key->str))
        return "hello: \"key\" must be 8-64 characters of [A-Za-z0-9._-]";
    static const struct {
        const char *name;
        size_t off;
    } fields[] = {{"project", offsetof(capture_meta, project)},
                  {"name", offsetof(capture_meta, name)},
                  {"host", offsetof(capture_meta, host)}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const json_member *f = store_json_get(h, fields[i].name);
        char *dst = (char *)m + fields[i].off;
        if (!f || f->kind == 'z')
            continue;
        if (f->kind != 's' || !text_ok(f->str, STORE_FIELD_MAX_BYTES)) {
            snprintf(why, whylen, "hello: \"%s\" must be a string of at most 255 bytes without control characters",
                     fields[i].name);
            return why;
        }
        snprintf(dst, STORE_FIELD_MAX_BYTES, "%s", f->str);
    }
    if (!m->project[0])
        snprintf(m->project, sizeof m->project, "default");
    /* Only the file's own name: a path says things about the uploader's machine. */
    const char *slash = strrchr(m->name, '/');
    if (slash)
        memmove(m->name, slash + 1, strlen(slash + 1) + 1);
    const json_member *tags = store_json_get(h, "tags");
    if (tags && tags->kind != 'z') {
        if (tags->kind != 'o')
            return "hello: \"tags\" must be an object of strings";
        for (int i = 0; i < tags->n_children; i++) {
            const json_member *t = &h->members[tags->first_child + i];
            if (m->n_tags >= STORE_MAX_TAGS)
                return "hello: more than 32 tags";
            if (!t->key[0] || strchr(t->key, '=') || !text_ok(t->key, STORE_FIELD_MAX_BYTES) ||
                !text_ok(t->str, STORE_FIELD_MAX_BYTES))
                return "hello: a tag's key must be non-empty without '='; keys and values at most 255 bytes, "
                       "no control characters";
            snprintf(m->tags[m->n_tags].key, STORE_FIELD_MAX_BYTES, "%s", t->key);
            snprintf(m->tags[m->n_tags].value, STORE_FIELD_MAX_BYTES, "%s", t->str);
            m->n_tags++;
        }
    }
    snprintf(m->key, sizeof m->key, "%s", key->str);
    return NULL;
}

static void make_id(store *st, char *id, size_t idlen)
{
    for (int attempt = 0;; attempt++) {
        unsigned char rnd[4] = {0};
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            uint32_t x = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() * 2654435761u ^ (uint32_t)attempt;
            memcpy(rnd, &x, 4);
        }
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char made[64];
        snprintf(made, sizeof made, "%04d%02d%02d-%02d%02d%02d-%02x%02x%02x%02x", (tm.tm_year + 1900) % 10000,
                 (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100, rnd[0],
                 rnd[1], rnd[2], rnd[3]);
        snprintf(id, idlen, "%.24s", made);
        capture_meta m;
        if (index_get_meta(st->index, id, &m) != 1 && blobs_size(st->blobs, id) < 0)
            return;
    }
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int add_active(store *st, upload *u)
{
    if (st->n_active == st->cap_active) {
        int cap = st->cap_active ? st->cap_active * 2 : 16;
        upload **na = realloc(st->active, (size_t)cap * sizeof *na);
        if (!na)
            return -1;
        st->active = na;
        st->cap_active = cap;
    }
    st->active[st->n_active++] = u;
    return 0;
}

static bool remove_active(upload *u)
{
    store *st = u->st;
    for (int i = 0; i < st->n_active; i++)
        if (st->active[i] == u) {
            st->active[i] = st->active[--st->n_active];
            return true;
        }
    return false;
}

static int skip_emit(void *user, const unsigned char *b, size_t n)
{
    (void)user;
    (void)b;
    (void)n;
    return 0;
}

/* The framing check, continued at `keep`: it is fed the stored header to learn its layout. */
static int resume_framing(upload *u, uint64_t keep)
{
    char path[4096];
    unsigned char head[4096];
    if (keep == 0)
        return 0;
    if (blobs_path(u->st->blobs, u->meta.id, path, sizeof path))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    uint64_t at = 0;
    int rc = -1;
    while (!u->framing.header_done && at < keep) {
        size_t want = keep - at < sizeof head ? (size_t)(keep - at) : sizeof head;
        ssize_t n = pread(fd, head, want, (off_t)at);
        if (n <= 0)
            break;
        at += (uint64_t)n;
        if (framing_feed(&u->framing, head, (size_t)n, skip_emit, NULL) == FRAMING_BAD)
            break;
    }
    close(fd);
    if (u->framing.header_done && u->framing.checked <= keep) {
        /* keep is a record boundary (only whole records are stored): start there. */
        u->framing.checked = keep;
        u->framing.pending_len = 0;
        rc = 0;
    }
    return rc;
}

upload_answer store_upload_begin(store *st, const json_object *hello, const char *peer, void *owner, upload **out,
                                 int *status, char *err, size_t errlen)
{
    char why[160], id[STORE_ID_BYTES];
    capture_meta m;
    memset(&m, 0, sizeof m);
    *out = NULL;
    const char *bad = read_hello(hello, &m, why, sizeof why);
    if (bad)
        return refuse(status, 1008, err, errlen, "%s", bad);
    snprintf(m.peer, sizeof m.peer, "%s", peer ? peer : "");

    upload *u = calloc(1, sizeof *u);
    if (!u)
        return refuse(status, 1011, err, errlen, "%s", "out of memory");
    u->st = st;
    u->owner = owner;
    framing_init(&u->framing);

    /* Attached to an older connection still? Take it over. */
    for (int i = 0; i < st->n_active; i++) {
        upload *o = st->active[i];
        if (!strcmp(o->meta.project, m.project) && !strcmp(o->meta.key, m.key)) {
            void *old_owner = o->owner;
            store_upload_release_keep(o);
            if (st->cb.end_upload)
                st->cb.end_upload(st->cb.user, old_owner, 1008, "another connection took over this upload");
            break;
        }
    }
    /* Captures are known by project and key together. */
    int found = index_find_key(st->index, m.project, m.key, id, sizeof id);
    capture_meta old;
    if (found == 1 && blobs_get_meta(st->blobs, id, &old, why, sizeof why) == 0 && blobs_size(st->blobs, id) >= 0) {
        /* Known: resume it (the hello's project, tags and name are the ones it was created with). */
        u->meta = old;
        if (old.state == STORE_COMPLETE) {
            u->done = true;
            *out = u;
            return UPLOAD_ALREADY;
        }
        u->w = blobs_writer(st->blobs, id, old.bytes);
        if (!u->w || resume_framing(u, blob_size(u->w)) != 0) {
            blob_writer_close(u->w);
            framing_free(&u->framing);
            free(u);
            return refuse(status, 1011, err, errlen, "cannot resume the stored capture: %s",
                          errno ? strerror(errno) : "its header is unreadable");
        }
        u->meta.bytes = blob_size(u->w);
        snprintf(u->meta.peer, sizeof u->meta.peer, "%s", m.peer);
    } else {
        if (found == 1) /* a row without its files: forget it */
            store_forget(st, id);
        u->meta = m;
        make_id(st, u->meta.id, sizeof u->meta.id);
        u->meta.uploaded_ms = wall_ms();
        u->w = blobs_writer(st->blobs, u->meta.id, 0);
        u->created_here = true;
        if (!u->w) {
            int e = errno;
            framing_free(&u->framing);
            free(u);
            return refuse(status, 1011, err, errlen, "cannot create the capture's file: %s", strerror(e));
        }
    }
    u->meta.state = STORE_UPLOADING;
    u->meta_bytes = u->meta.bytes;
    char path[4096];
    if (blobs_put_meta(st->blobs, &u->meta) != 0 || index_put_meta(st->index, &u->meta) != 0 ||
        add_active(st, u) != 0 || blobs_path(st->blobs, u->meta.id, path, sizeof path) != 0 ||
        indexer_add(st->ix, u->meta.id, path, true) != 0) {
        remove_active(u);
        if (u->created_here)
            store_forget(st, u->meta.id);
        blob_writer_close(u->w);
        framing_free(&u->framing);
        free(u);
        return refuse(status, 1011, err, errlen, "%s", "cannot record the upload (index or sidecar failed)");
    }
    *out = u;
    return UPLOAD_GO;
}

uint64_t upload_offset(const upload *u)
{
    return u->meta.bytes;
}

const char *upload_id(const upload *u)
{
    return u->meta.id;
}

static void save_meta(upload *u)
{
    store *st = u->st;
    blobs_put_meta(st->blobs, &u->meta);
    index_put_meta(st->index, &u->meta);
    u->meta_bytes = u->meta.bytes;
}

typedef struct feed_ctx {
    upload *u;
    int status;
    char problem[160];
} feed_ctx;

static int append(void *user, const unsigned char *bytes, size_t n)
{
    feed_ctx *fc = user;
    upload *u = fc->u;
    store *st = u->st;
    if (u->meta.bytes + n > st->opts.max_capture_bytes) {
        fc->status = 1009;
        snprintf(fc->problem, sizeof fc->problem, "capture over the store's size limit of %llu bytes per capture",
                 (unsigned long long)st->opts.max_capture_bytes);
        return -1;
    }
    if (store_make_room(st, n) != 0) {
        fc->status = 1008;
        snprintf(fc->problem, sizeof fc->problem, "the store is full (limit %llu bytes) and holds nothing older "
                 "to delete", (unsigned long long)st->opts.max_store_bytes);
        return -1;
    }
    if (blob_append(u->w, bytes, n) != 0) {
        fc->status = 1011;
        snprintf(fc->problem, sizeof fc->problem, "cannot store the bytes: %s", strerror(errno));
        return -1;
    }
    u->meta.bytes += n;
    st->total_bytes += n;
    if (u->meta.bytes - u->meta_bytes >= STORE_META_EVERY_BYTES)
        save_meta(u);
    return 0;
}

static void end(upload *u, store_state state)
{
    u->done = true;
    u->meta.state = state;
    save_meta(u);
    indexer_finish(u->st->ix, u->meta.id);
}

int store_upload_feed(upload *u, const void *data, size_t n, int *status, char *err, size_t errlen)
{
    if (u->done || u->gone) {
        *status = 1008;
        snprintf(err, errlen, "%s", u->meta.state == STORE_COMPLETE ? "the capture is complete: nothing may follow "
                                                                     "its end record" : "the upload is over");
        return -1;
    }
    feed_ctx fc = {u, 1008, ""};
    framing_status fs = framing_feed(&u->framing, data, n, append, &fc);
    if (fs == FRAMING_MORE)
        return 0;
    if (fs == FRAMING_END) {
        end(u, STORE_COMPLETE);
        return 1;
    }
    *status = fc.problem[0] ? fc.status : 1008;
    snprintf(err, errlen, "refused: %s", fc.problem[0] ? fc.problem : u->framing.problem);
    u->done = true;
    if (u->created_here) {
        remove_active(u);
        u->gone = true;
        blob_writer_close(u->w);
        u->w = NULL;
        store_forget(u->st, u->meta.id);
    } else {
        u->meta.state = STORE_OPEN;
        save_meta(u);
        indexer_finish(u->st->ix, u->meta.id);
    }
    return -1;
}

void store_upload_finish(upload *u)
{
    if (u->done || u->gone)
        return;
    end(u, u->framing.ended ? STORE_COMPLETE : STORE_CUT);
}

void upload_abandon(upload *u, int status, const char *problem)
{
    store *st = u->st;
    u->done = true;
    u->gone = true;
    remove_active(u);
    blob_writer_close(u->w);
    u->w = NULL;
    if (st->cb.end_upload)
        st->cb.end_upload(st->cb.user, u->owner, status, problem);
}

/* The connection lets go of u; an unfinished capture stays resumable ("open"). Keeps u. */
void store_upload_release_keep(upload *u)
{
    if (!remove_active(u) || u->gone)
        return;
    if (!u->done) {
        u->done = true;
        u->meta.state = STORE_OPEN;
        indexer_finish(u->st->ix, u->meta.id);
    }
    save_meta(u);
    blob_writer_close(u->w);
    u->w = NULL;
}

void store_upload_release(upload *u)
{
    if (!u)
        return;
    store_upload_release_keep(u);
    blob_writer_close(u->w);
    framing_free(&u->framing);
    free(u);
}
