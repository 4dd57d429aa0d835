/*
 * capture_registry.c - which files the server offers as captures, and under which ids.
 *
 * The command line gives FILES and DIRS. Each is classified once at start-up (a directory is a
 * DIR, anything else, even a path that does not exist yet, is a FILE). A DIR is rescanned on
 * every listing so captures that appear later are offered; only names ending in ".vor" directly
 * inside it count (no recursion: a capture directory is flat, and recursion would make one
 * listing unboundedly expensive).
 *
 * Ids are indexes into one array that only grows: a capture keeps its id for the life of the
 * server even if its file disappears and comes back, so a panel's link stays valid. The array is
 * capped at VOR_SERVER_MAX_CAPTURES (bounded memory); beyond that a scan sets `truncated`.
 * Lookups are linear: at the cap a rescan costs ~10^6 string compares (a few ms); the
 * realistic case is tens of captures, where a hash table would be pure overhead.
 *
 * Whether a file is a capture is decided by its first 8 bytes (the .vor magic) only: the
 * server never parses records, it streams bytes.
 */
#include "server_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int capture_magic_check(const unsigned char *bytes, size_t n)
{
    size_t m = n < SERVER_CAPTURE_MAGIC_BYTES ? n : SERVER_CAPTURE_MAGIC_BYTES;
    if (memcmp(bytes, SERVER_CAPTURE_MAGIC, m) != 0)
        return -1;
    return n >= SERVER_CAPTURE_MAGIC_BYTES ? 1 : 0;
}

const char *capture_state_name(capture_state s)
{
    switch (s) {
    case CAPTURE_OK: return "capture";
    case CAPTURE_EMPTY: return "empty";
    case CAPTURE_NOT_CAPTURE: return "not-a-capture";
    case CAPTURE_MISSING: return "missing";
    case CAPTURE_UNREADABLE: return "unreadable";
    case CAPTURE_NOT_FILE: return "not-a-file";
    }
    return "unknown";
}

void capture_probe_path(const char *path, capture_probe *out)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) != 0) {
        out->state = (errno == ENOENT || errno == ENOTDIR) ? CAPTURE_MISSING : CAPTURE_UNREADABLE;
        return;
    }
    out->bytes = (uint64_t)st.st_size;
    out->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    if (!S_ISREG(st.st_mode)) {
        out->state = CAPTURE_NOT_FILE;
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        out->state = CAPTURE_UNREADABLE;
        return;
    }
    unsigned char head[SERVER_CAPTURE_MAGIC_BYTES];
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    if (n < 0)
        out->state = CAPTURE_UNREADABLE;
    else if (n == 0)
        out->state = CAPTURE_EMPTY;
    else
        switch (capture_magic_check(head, (size_t)n)) {
        case 1: out->state = CAPTURE_OK; break;
        case 0: out->state = CAPTURE_EMPTY; break;
        default: out->state = CAPTURE_NOT_CAPTURE; break;
        }
}

static const char *last_component(const char *path)
{
    const char *end = path + strlen(path);
    while (end > path && end[-1] == '/')  /* "dir/" -> "dir" */
        end--;
    const char *p = end;
    while (p > path && p[-1] != '/')
        p--;
    return p;
}

/* Appends an entry owning `path` (freed here on failure). Returns its index or -1. */
static long add_entry(capture_registry *r, char *path, int dir)
{
    if (r->count >= VOR_SERVER_MAX_CAPTURES) {
        r->truncated = true;
        free(path);
        return -1;
    }
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        capture_entry *e = realloc(r->entries, cap * sizeof *e);
        if (!e) {
            free(path);
            return -1;
        }
        r->entries = e;
        r->cap = cap;
    }
    capture_entry *e = &r->entries[r->count];
    e->path = path;
    e->name = last_component(path);
    e->dir = dir;
    e->present = true;
    return (long)r->count++;
}

int registry_init(capture_registry *r, const char *const *paths, int count, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (count > 0) {
        r->dirs = calloc((size_t)count, sizeof *r->dirs);
        if (!r->dirs)
            goto oom;
    }
    for (int i = 0; i < count; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            char *d = strdup(paths[i]);
            if (!d)
                goto oom;
            r->dirs[r->dir_count++] = d;
        } else {
            char *p = strdup(paths[i]);
            if (!p)
                goto oom;
            /* Past the cap add_entry() fails with `truncated` set: the listing says so. */
            if (add_entry(r, p, -1) < 0 && !r->truncated)
                goto oom;
        }
    }
    registry_rescan(r);
    return 0;
oom:
    snprintf(err, errlen, "out of memory while registering captures");
    registry_free(r);
    return -1;
}

void registry_free(capture_registry *r)
{
    for (size_t i = 0; i < r->count; i++)
        free(r->entries[i].path);
    free(r->entries);
    for (size_t i = 0; i < r->dir_count; i++)
        free(r->dirs[i]);
    free(r->dirs);
    memset(r, 0, sizeof *r);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_vor_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".vor");
}

static char *join_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    bool slash = dl > 0 && dir[dl - 1] == '/';
    char *p = malloc(dl + nl + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    if (!slash)
        p[dl++] = '/';
    memcpy(p + dl, name, nl + 1);
    return p;
}

/* Scans one DIR: marks its known entries present or not, appends new ones in name order. */
static void scan_dir(capture_registry *r, int dir)
{
    const char *dpath = r->dirs[dir];
    for (size_t i = 0; i < r->count; i++)
        if (r->entries[i].dir == dir)
            r->entries[i].present = false;

    DIR *d = opendir(dpath);
    if (!d)
        return;
    /* Collect the matching names first so new ids are handed out in a stable (sorted) order. */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!has_vor_suffix(de->d_name))
            continue;
        if (n >= VOR_SERVER_MAX_CAPTURES) {
            r->truncated = true;
            break;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
            cap = ncap;
        }
        if (!(names[n] = strdup(de->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, compare_names);

    for (size_t k = 0; k < n; k++) {
        char *full = join_path(dpath, names[k]);
        struct stat st;
        /* Only regular files (following symlinks): a directory named x.vor is not a capture. */
        if (full && stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            bool known = false;
            for (size_t i = 0; i < r->count; i++) {
                if (r->entries[i].dir == dir && !strcmp(r->entries[i].path, full)) {
                    r->entries[i].present = true;
                    known = true;
                    break;
                }
            }
            if (!known) {
                add_entry(r, full, dir); /* takes ownership, also on failure */
                full = NULL;
            }
        }
        free(full);
        free(names[k]);
    }
    free(names);
}

void registry_rescan(capture_registry *r)
{
    for (size_t i = 0; i < r->dir_count; i++)
        scan_dir(r, (int)i);
}

const capture_entry *registry_find(const capture_registry *r, const char *id, size_t *index)
{
    size_t v = 0;
    if (!id || !*id || (id[0] == '0' && id[1] != '\0') || strlen(id) > 9)
        return NULL;
    for (const char *p = id; *p; p++) {
        if (*p < '0' || *p > '9')
            return NULL;
        v = v * 10 + (size_t)(*p - '0');
    }
    if (v >= r->count)
        return NULL;
    if (index)
        *index = v;
    return &r->entries[v];
}
