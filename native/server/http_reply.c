/*
 * http_reply.c - answers an HTTP request: status, headers, then a body from memory or a file.
 *
 * Used for everything HTTP: the JSON API, static files, error pages and redirects. Headers are
 * written at once; the body follows on writable events, SERVER_HTTP_BODY_CHUNK_BYTES at a time,
 * so lws never has to copy a large unsent remainder and a slow client never blocks the loop.
 * Static files are streamed here rather than with lws_serve_http_file() because lws 4.1.6
 * mis-parses a pipelined request that follows a file it served (answers 403); with our own
 * writer every response ends the same way and keep-alive/pipelining work.
 * A Content-Length is always sent. The cross-origin isolation headers are not added here: lws
 * adds the vhost's `headers` list to every status line it writes (see server.c).
 */
#include "server_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void http_session_clear(http_session *s)
{
    if (s->body_owned)
        free(s->body);
    if (s->file_fd_plus1 > 0)
        close(s->file_fd_plus1 - 1);
    memset(s, 0, sizeof *s);
}

static int complete(struct lws *wsi, http_session *s)
{
    http_session_clear(s);
    if (lws_http_transaction_completed(wsi))
        return -1;
    server_conn_state(wsi, CONN_WAITING); /* keep-alive: waiting for its next request */
    return 0;
}

/* Headers for a body of `len` bytes already described by *s; then the body, or completion. */
static int start(struct lws *wsi, http_session *s, unsigned int status, const char *content_type,
                 const char *const *extra_headers)
{
    unsigned char buf[LWS_PRE + 2048];
    unsigned char *begin = buf + LWS_PRE, *p = begin, *end = buf + sizeof buf - 1;

    if (lws_add_http_common_headers(wsi, status, content_type, (lws_filepos_t)s->body_len, &p, end))
        goto fail;
    for (const char *const *h = extra_headers; h && h[0]; h += 2)
        if (lws_add_http_header_by_name(wsi, (const unsigned char *)h[0], (const unsigned char *)h[1],
                                        (int)strlen(h[1]), &p, end))
            goto fail;
    if (lws_finalize_write_http_header(wsi, begin, &p, end))
        goto fail;
    if (s->body_len == 0 || lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0)
        return complete(wsi, s);
    lws_callback_on_writable(wsi);
    return 0;
fail:
    http_session_clear(s);
    return -1;
}

int http_reply(struct lws *wsi, http_session *s, unsigned int status, const char *content_type,
               const char *const *extra_headers, char *body, size_t len, bool owned)
{
    http_session_clear(s);
    s->body = body;
    s->body_owned = owned;
    s->body_len = len;
    return start(wsi, s, status, content_type, extra_headers);
}

int http_reply_file(struct lws *wsi, http_session *s, const char *content_type,
                    const char *const *extra_headers, int fd, uint64_t size)
{
    http_session_clear(s);
    s->file_fd_plus1 = fd + 1;
    s->body_len = size;
    return start(wsi, s, 200, content_type, extra_headers);
}

int http_reply_text(struct lws *wsi, http_session *s, unsigned int status, const char *text)
{
    static const char *const headers[] = {"cache-control:", "no-store", NULL};
    return http_reply(wsi, s, status, "text/plain; charset=utf-8", headers, (char *)text,
                      strlen(text), false);
}

int http_reply_writeable(struct lws *wsi, http_session *s)
{
    unsigned char buf[LWS_PRE + SERVER_HTTP_BODY_CHUNK_BYTES];
    unsigned char *data = buf + LWS_PRE;

    if (!s->body && s->file_fd_plus1 <= 0)
        return 0;
    uint64_t left = s->body_len - s->body_sent;
    size_t n = left > SERVER_HTTP_BODY_CHUNK_BYTES ? SERVER_HTTP_BODY_CHUNK_BYTES : (size_t)left;
    if (s->body) {
        memcpy(data, s->body + s->body_sent, n);
    } else {
        ssize_t got;
        do
            got = pread(s->file_fd_plus1 - 1, data, n, (off_t)s->body_sent);
        while (got < 0 && errno == EINTR);
        if (got != (ssize_t)n) { /* the file shrank or failed under us: the length was promised */
            http_session_clear(s);
            return -1;
        }
    }
    bool final = s->body_sent + n == s->body_len;
    if (lws_write(wsi, data, n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n) {
        http_session_clear(s);
        return -1;
    }
    s->body_sent += n;
    conn_progress(server_conn(wsi), server_now_ms()); /* a reader, not a stalled client */
    if (final)
        return complete(wsi, s);
    lws_callback_on_writable(wsi);
    return 0;
}
