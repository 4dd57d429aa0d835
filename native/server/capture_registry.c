/*
 * capture_registry.c - which files the server offers as captures, and under which ids.
 *
 * The command line gives FILES and DIRS. Each is classified once at start-up (a directory is a
 * DIR, anything else, even a path that does not exist yet, is a FILE). A DIR is rescanned on
 * every listing so captures that appear later are offered; only names ending in ".vor" directly
 * inside it count (no recursion: a capture directory is flat, and recursion would make one
 * listing unboundedly expensive).
 *
 * Ids: a counter, handed out in increasing order and never reused, so an id always means the
 * same file. A capture keeps its id while its file exists, and gets it back when the file
 * disappears and returns (a run deleting and re-creating its capture keeps the panel's link).
 * Memory stays bounded however many files come and go: only present files count against
 * VOR_SERVER_MAX_CAPTURES (beyond that a scan sets `truncated` and new names wait for room),
 * and of the vanished ones at most VOR_SERVER_MAX_GONE_CAPTURES are remembered; past that the
 * longest-gone are freed (if such a file returns it gets a new id). Entries stay in id order,
 * so removal keeps lookups simple. Lookups are linear: at the caps a rescan costs ~10^6 string
 * compares (a few ms); the realistic case is tens of captures, where a hash table would be
 * pure overhead.
 *
 * Whether a file is a capture is decided by its first 8 bytes (the .vor magic) only: the
 * server never parses records, it streams bytes. Files are opened only through
 * open_regular_file(): non-blocking, so a FIFO put where a capture was expected cannot freeze
 * the server in open(2).
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

int open_regular_file(const char *path, int extra_flags, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return -2;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* no effect on regular files; tidy anyway */
    return fd;
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
    /* stat said "regular", but the path may have been swapped since: check the opened file. */
    int fd = open_regular_file(path, 0, &st);
    if (fd < 0) {
        out->state = fd == -2 ? CAPTURE_NOT_FILE : CAPTURE_UNREADABLE;
        return;
    }
    out->bytes = (uint64_t)st.st_size;
    out->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
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

enum { REGISTRY_MAX_ID = 999999999 }; /* ids are at most 9 digits (registry_find) */

/* Appends a present entry owning `path` (freed here on failure), with the next id.
 * Returns its index or -1 (cap reached: `truncated` set; or out of ids / memory). */
static long add_entry(capture_registry *r, char *path, int dir)
{
    if (r->present >= VOR_SERVER_MAX_CAPTURES || r->next_id > REGISTRY_MAX_ID) {
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
    e->id = r->next_id++;
    e->dir = dir;
    e->present = true;
    e->gone_at = 0;
    r->present++;
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

/* Scans one DIR: marks its known entries present or not, then appends new ones in name order
 * (known names first, so a file that stays keeps its place under the cap). */
static void scan_dir(capture_registry *r, int dir)
{
    const char *dpath = r->dirs[dir];
    /* Present entries have gone_at == 0; after the scan, the ones still unmarked and with
     * gone_at == 0 have just vanished and get their vanishing time. */
    for (size_t i = 0; i < r->count; i++)
        if (r->entries[i].dir == dir && r->entries[i].present) {
            r->entries[i].present = false;
            r->present--;
        }

    DIR *d = opendir(dpath);
    char **names = NULL;
    size_t n = 0, cap = 0;
    if (d) {
        /* Collect the matching names first so new ids are handed out in a stable (sorted) order. */
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
    }
    if (n)
        qsort(names, n, sizeof *names, compare_names);

    /* Pass 1: names already known (ids kept). Pass 2: new names, while there is room. */
    for (int pass = 1; pass <= 2; pass++) {
        for (size_t k = 0; k < n; k++) {
            if (!names[k])
                continue;
            char *full = join_path(dpath, names[k]);
            struct stat st;
            /* Only regular files (following symlinks): a directory named x.vor is not a capture. */
            if (!full || stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
                free(full);
                free(names[k]);
                names[k] = NULL;
                continue;
            }
            bool known = false;
            for (size_t i = 0; i < r->count; i++) {
                capture_entry *e = &r->entries[i];
                if (e->dir == dir && !strcmp(e->path, full)) {
                    known = true;
                    if (!e->present) {
                        if (r->present >= VOR_SERVER_MAX_CAPTURES) {
                            r->truncated = true;
                            break;
                        }
                        e->present = true;
                        e->gone_at = 0;
                        r->present++;
                    }
                    break;
                }
            }
            if (pass == 2 && !known) {
                add_entry(r, full, dir); /* takes ownership, also on failure */
                full = NULL;
            }
            free(full);
            if (known || pass == 2) {
                free(names[k]);
                names[k] = NULL;
            }
        }
    }
    free(names);

    for (size_t i = 0; i < r->count; i++)
        if (r->entries[i].dir == dir && !r->entries[i].present && r->entries[i].gone_at == 0)
            r->entries[i].gone_at = ++r->gone_clock;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Frees the longest-gone absent entries beyond VOR_SERVER_MAX_GONE_CAPTURES (order kept). */
static void forget_gone(capture_registry *r)
{
    size_t absent = r->count - r->present;
    if (absent <= VOR_SERVER_MAX_GONE_CAPTURES)
        return;
    uint64_t *ages = malloc(absent * sizeof *ages);
    if (!ages)
        return; /* try again on the next scan */
    size_t k = 0;
    for (size_t i = 0; i < r->count; i++)
        if (!r->entries[i].present)
            ages[k++] = r->entries[i].gone_at;
    qsort(ages, k, sizeof *ages, compare_u64);
    uint64_t limit = ages[absent - VOR_SERVER_MAX_GONE_CAPTURES - 1]; /* vanishing times are unique */
    free(ages);
    size_t out = 0;
    for (size_t i = 0; i < r->count; i++) {
        capture_entry *e = &r->entries[i];
        if (!e->present && e->gone_at <= limit) {
            free(e->path);
            continue;
        }
        r->entries[out++] = *e;
    }
    r->count = out;
}

void registry_rescan(capture_registry *r)
{
    r->truncated = false;
    for (size_t i = 0; i < r->dir_count; i++)
        scan_dir(r, (int)i);
    forget_gone(r);
}

const capture_entry *registry_find(const capture_registry *r, const char *id)
{
    size_t v = 0;
    if (!id || !*id || (id[0] == '0' && id[1] != '\0') || strlen(id) > 9)
        return NULL;
    for (const char *p = id; *p; p++) {
        if (*p < '0' || *p > '9')
            return NULL;
        v = v * 10 + (size_t)(*p - '0');
    }
    size_t lo = 0, hi = r->count; /* entries are in increasing id order */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->entries[mid].id < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->count && r->entries[lo].id == v ? &r->entries[lo] : NULL;
}
