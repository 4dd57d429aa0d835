/*
 * store_blobs_fs.c - the blob interface (store.h) on a local directory.
 *
 *   DIR/captures/<id>.vor    the capture's bytes, exactly as uploaded (already compressed,
 *                            record by record: nothing is recompressed)
 *   DIR/captures/<id>.meta   its sidecar (store_meta.c), replaced atomically (write + rename)
 *
 * Ids are made by the store (store.c) from [0-9a-z-] only, so a path is never built from
 * uploaded text. Appends go through one descriptor per upload (O_APPEND is not needed: one
 * writer per blob at a time, store.c sees to that); a writer that resumes an upload first cuts
 * the file to the last complete record its predecessor stored. Viewers and the indexer read
 * blobs as plain files (blobs_path), so a capture being uploaded is followed live exactly like
 * a capture a local program is writing.
 * Another backend (an S3-compatible object store) would keep this interface: appends become
 * multipart-upload parts, blobs_path becomes a ranged reader (docs/ARCHITECTURE.md).
 */
#include "store.h"
#include "server_internal.h" /* open_regular_file */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct blob_store {
    char dir[PATH_MAX];    /* DIR/captures */
};

struct blob_writer {
    int fd;
    uint64_t size;
};

static bool id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= STORE_ID_BYTES)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'z') || id[i] == '-'))
            return false;
    return true;
}

static int path_of(const blob_store *b, const char *id, const char *ext, char *out, size_t outlen)
{
    if (!id_ok(id))
        return -1;
    int n = snprintf(out, outlen, "%s/%s%s", b->dir, id, ext);
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

blob_store *blobs_open(const char *dir, char *err, size_t errlen)
{
    blob_store *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the store directory %s: %s", dir, strerror(errno));
        free(b);
        return NULL;
    }
    int n = snprintf(b->dir, sizeof b->dir, "%s/captures", dir);
    if (n <= 0 || (size_t)n >= sizeof b->dir || (mkdir(b->dir, 0750) != 0 && errno != EEXIST)) {
        snprintf(err, errlen, "cannot create %s/captures: %s", dir, strerror(errno));
        free(b);
        return NULL;
    }
    struct stat st;
    if (stat(b->dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(b->dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "%s is not a writable directory", b->dir);
        free(b);
        return NULL;
    }
    return b;
}

void blobs_close(blob_store *b)
{
    free(b);
}

blob_writer *blobs_writer(blob_store *b, const char *id, uint64_t keep)
{
    char path[PATH_MAX];
    struct stat st;
    if (path_of(b, id, ".vor", path, sizeof path)) {
        errno = EINVAL;
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size > keep) {
        if (ftruncate(fd, (off_t)keep) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return NULL;
        }
        size = keep;
    }
    blob_writer *w = malloc(sizeof *w);
    if (!w) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    w->fd = fd;
    w->size = size;
    return w;
}

int blob_append(blob_writer *w, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n > 0) {
        ssize_t k = pwrite(w->fd, p, n, (off_t)w->size);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            /* Leave the file at its last whole record. */
            (void)!ftruncate(w->fd, (off_t)w->size);
            errno = e;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        w->size += (uint64_t)k;
    }
    return 0;
}

uint64_t blob_size(const blob_writer *w)
{
    return w->size;
}

void blob_writer_close(blob_writer *w)
{
    if (!w)
        return;
    close(w->fd);
    free(w);
}

int blobs_path(const blob_store *b, const char *id, char *out, size_t outlen)
{
    return path_of(b, id, ".vor", out, outlen);
}

int64_t blobs_size(const blob_store *b, const char *id)
{
    char path[PATH_MAX];
    struct stat st;
    if (path_of(b, id, ".vor", path, sizeof path) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    return (int64_t)st.st_size;
}

int blobs_remove(blob_store *b, const char *id)
{
    char path[PATH_MAX];
    int rc = 0;
    if (path_of(b, id, ".meta", path, sizeof path) == 0 && unlink(path) != 0 && errno != ENOENT)
        rc = -1;
    if (path_of(b, id, ".vor", path, sizeof path) == 0 && unlink(path) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

int blobs_put_meta(blob_store *b, const capture_meta *m)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    if (path_of(b, m->id, ".meta", path, sizeof path))
        return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    char *text = store_meta_format(m);
    if (!text)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
    size_t len = strlen(text), done = 0;
    while (fd >= 0 && done < len) {
        ssize_t k = write(fd, text + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    free(text);
    int rc = fd >= 0 && done == len ? 0 : -1;
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc)
        unlink(tmp);
    return rc;
}

int blobs_get_meta(const blob_store *b, const char *id, capture_meta *m, char *err, size_t errlen)
{
    char path[PATH_MAX], text[64 * 1024];
    struct stat st;
    if (path_of(b, id, ".meta", path, sizeof path)) {
        snprintf(err, errlen, "bad id");
        return -1;
    }
    int fd = open_regular_file(path, O_NOFOLLOW, &st);
    if (fd < 0) {
        snprintf(err, errlen, "no sidecar");
        return -1;
    }
    ssize_t n = read(fd, text, sizeof text);
    close(fd);
    if (n < 0 || (size_t)n >= sizeof text) {
        snprintf(err, errlen, "unreadable sidecar");
        return -1;
    }
    if (store_meta_parse(text, (size_t)n, m, err, errlen))
        return -1;
    if (strcmp(m->id, id) != 0) {
        snprintf(err, errlen, "sidecar names another id");
        return -1;
    }
    return 0;
}

int blobs_list(const blob_store *b, int (*fn)(void *user, const char *id), void *user)
{
    DIR *d = opendir(b->dir);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".meta") != 0 || n - 5 >= STORE_ID_BYTES)
            continue;
        char id[STORE_ID_BYTES];
        memcpy(id, e->d_name, n - 5);
        id[n - 5] = '\0';
        if (id_ok(id))
            rc = fn(user, id);
    }
    closedir(d);
    return rc;
}
