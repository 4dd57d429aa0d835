/*
 * http_static.c - serves the panel's static files from the site directory.
 *
 * Not an lws LWSMPRO_FILE mount, on purpose: a mount resolves paths itself and cannot refuse a
 * symlink that leads out of the directory, and unknown extensions get HTTP 415. Here:
 *   1. lws has already %-decoded the path and folded "/./", "//" and "/../" (it never climbs
 *      above "/"); static_resolve() still refuses, as defence in depth, any "." or ".."
 *      segment, control characters and backslashes (403);
 *   2. realpath(3) resolves symlinks, and the result must lie inside the site's own real path
 *      (403 otherwise): one realpath per request, cheap next to sending the file;
 *   3. the real path (not the requested one) is opened with O_NOFOLLOW and O_NONBLOCK (a FIFO
 *      swapped in must not block the server in open(2)), kept only if it is a regular file,
 *      and streamed by http_reply.c on writable events. (A directory swapped for a symlink
 *      between 2 and 3 could still win a race; acceptable for a loopback development server.)
 * A directory without its trailing slash is redirected (301) so relative URLs in its
 * index.html resolve; "dir/" serves dir/index.html.
 * MIME types come from our own table: .wasm must be application/wasm for streaming compilation,
 * ES modules (.js/.mjs) must be JavaScript types, unknown files are octet-stream (never 415).
 */
#include "server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *ext;
    const char *type;
} mime_table[] = {
    {".html", "text/html; charset=utf-8"},
    {".htm", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".wasm", "application/wasm"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},
    {".ico", "image/x-icon"},
    {".webp", "image/webp"},
    {".txt", "text/plain; charset=utf-8"},
    {".md", "text/plain; charset=utf-8"},
    {".woff2", "font/woff2"},
    {".woff", "font/woff"},
    {".vor", "application/octet-stream"},
};

const char *static_mime_type(const char *path)
{
    size_t pl = strlen(path);
    for (size_t i = 0; i < sizeof mime_table / sizeof mime_table[0]; i++) {
        size_t el = strlen(mime_table[i].ext);
        if (pl > el && !strcasecmp(path + pl - el, mime_table[i].ext))
            return mime_table[i].type;
    }
    return "application/octet-stream";
}

/* Refuses characters and segments that have no business in a site path. */
static bool uri_is_clean(const char *uri)
{
    if (uri[0] != '/')
        return false;
    for (const unsigned char *p = (const unsigned char *)uri; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '\\')
            return false;
    const char *seg = uri + 1;
    for (;;) {
        const char *end = strchr(seg, '/');
        size_t n = end ? (size_t)(end - seg) : strlen(seg);
        if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return false;
        if (!end)
            return true;
        seg = end + 1;
    }
}

static bool inside(const char *site_real, const char *resolved)
{
    size_t n = strlen(site_real);
    if (n == 1 && site_real[0] == '/') /* a site at the filesystem root contains everything */
        return resolved[0] == '/';
    return !strncmp(resolved, site_real, n) && (resolved[n] == '/' || resolved[n] == '\0');
}

static_result static_resolve(const char *site_real, const char *uri, char *out, size_t outlen)
{
    char candidate[PATH_MAX], resolved[PATH_MAX];
    struct stat st;

    if (!site_real)
        return STATIC_NOT_FOUND;
    if (!uri || !uri_is_clean(uri))
        return STATIC_FORBIDDEN;
    size_t ul = strlen(uri);
    bool want_dir = uri[ul - 1] == '/';
    int n = snprintf(candidate, sizeof candidate, "%s%s%s", site_real, uri, want_dir ? "index.html" : "");
    if (n < 0 || (size_t)n >= sizeof candidate)
        return STATIC_NOT_FOUND;
    if (!realpath(candidate, resolved))
        return (errno == EACCES || errno == ELOOP) ? STATIC_FORBIDDEN : STATIC_NOT_FOUND;
    if (!inside(site_real, resolved))
        return STATIC_FORBIDDEN;
    if (stat(resolved, &st) != 0)
        return STATIC_NOT_FOUND;
    if (S_ISDIR(st.st_mode))
        return want_dir ? STATIC_NOT_FOUND : STATIC_REDIRECT;
    if (!S_ISREG(st.st_mode))
        return STATIC_FORBIDDEN;
    if (strlen(resolved) >= outlen)
        return STATIC_NOT_FOUND;
    strcpy(out, resolved);
    return STATIC_FILE;
}

/* Percent-encodes everything but unreserved characters and '/', for a Location header. */
static void encode_location(const char *uri, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)uri; *p && o + 4 < outlen; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

int static_handle(struct lws *wsi, server *srv, http_session *s, const char *uri)
{
    char path[PATH_MAX];

    switch (static_resolve(srv->site_real, uri, path, sizeof path)) {
    case STATIC_FILE: {
        static const char *const headers[] = {"cache-control:", "no-cache", NULL};
        struct stat st;
        int fd = open_regular_file(path, O_NOFOLLOW, &st);
        if (fd == -1 && errno == ENOENT)
            return http_reply_text(wsi, s, 404, "404 not found\n");
        if (fd < 0)
            return http_reply_text(wsi, s, 403, "403 forbidden\n");
        return http_reply_file(wsi, s, static_mime_type(path), headers, fd, (uint64_t)st.st_size);
    }
    case STATIC_REDIRECT: {
        char location[SERVER_URI_MAX_BYTES * 3 + 2];
        encode_location(uri, location, sizeof location - 1);
        strcat(location, "/");
        const char *const headers[] = {"location:", location, "cache-control:", "no-store", NULL};
        return http_reply(wsi, s, 301, "text/plain; charset=utf-8", headers, NULL, 0, false);
    }
    case STATIC_FORBIDDEN:
        return http_reply_text(wsi, s, 403, "403 forbidden\n");
    case STATIC_NOT_FOUND:
        break;
    }
    if (!srv->site_real)
        return http_reply_text(wsi, s, 404,
                               "404 not found: the site directory does not exist "
                               "(build the panel, or pass --site DIR)\n");
    return http_reply_text(wsi, s, 404, "404 not found\n");
}
