/*
 * http_auth.c - who may use the store: tokens for uploads and deletes (and reads with
 * --token-reads), origins whose pages may upload, and the request's query string.
 *
 * Policy (README, "Running a store for a team"):
 *   - bound to loopback without --token-file: only this machine can connect, and the Host and
 *     Origin checks (access.c) keep web pages of other origins out: no token is asked;
 *   - --token-file: uploads and deletes need one of its tokens, wherever the server is bound;
 *     with --token-reads, so do the API and capture streams (the panel's static files do not:
 *     they hold no data);
 *   - --store on an address other than loopback without --token-file: the server refuses to
 *     start (server.c), so a store is never writable by a whole network by accident.
 * A token travels as "Authorization: Bearer T" (the CLI, programs), as "token" in an upload's
 * hello (browsers cannot set headers on a websocket), or as ?token=T (a browser's read of the
 * API or a stream; it then shows in that URL, so use it on trusted machines only).
 * Comparisons are constant-time (store_tokens.c).
 */
#include "server_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void http_request_token(struct lws *wsi, char *out, size_t outlen)
{
    char auth[600];
    out[0] = '\0';
    int n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
    if (n > 0 && (size_t)n < sizeof auth && lws_hdr_copy(wsi, auth, sizeof auth, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 &&
        !strncasecmp(auth, "Bearer ", 7)) {
        const char *t = auth + 7;
        while (*t == ' ')
            t++;
        snprintf(out, outlen, "%s", t);
        return;
    }
    char arg[600];
    const char *v = lws_get_urlarg_by_name(wsi, "token=", arg, (int)sizeof arg);
    if (v)
        snprintf(out, outlen, "%s", v);
}

bool http_may_write(server *srv, const char *token)
{
    if (srv->tokens.n == 0)
        return true;
    return token && tokens_check(&srv->tokens, token);
}

bool http_may_read(struct lws *wsi, server *srv)
{
    char token[600];
    if (!srv->opts->token_reads || srv->tokens.n == 0)
        return true;
    http_request_token(wsi, token, sizeof token);
    return tokens_check(&srv->tokens, token);
}

bool server_upload_origin_allowed(const server *srv, const char *origin)
{
    for (int i = 0; origin && i < srv->opts->upload_origin_count; i++)
        if (!strcasecmp(srv->opts->upload_origins[i], origin))
            return true;
    return false;
}

static bool unreserved(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' ||
           c == '.' || c == '~';
}

int http_query_string(struct lws *wsi, char *out, size_t outlen)
{
    char frag[SERVER_URI_MAX_BYTES + 1];
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; lws_hdr_copy_fragment(wsi, frag, (int)sizeof frag, WSI_TOKEN_HTTP_URI_ARGS, i) > 0; i++) {
        /* lws decoded each argument; encode it again so '&' and '=' in values stay values. */
        bool in_value = false;
        if (o && o + 1 < outlen)
            out[o++] = '&';
        for (const unsigned char *p = (const unsigned char *)frag; *p; p++) {
            if (*p == '=' && !in_value) {
                in_value = true;
                if (o + 1 >= outlen)
                    return -1;
                out[o++] = '=';
                continue;
            }
            if (o + 4 >= outlen)
                return -1;
            if (unreserved(*p))
                out[o++] = (char)*p;
            else
                o += (size_t)snprintf(out + o, outlen - o, "%%%02X", *p);
        }
        out[o] = '\0';
    }
    return 0;
}
