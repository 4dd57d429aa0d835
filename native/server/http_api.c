/*
 * http_api.c - the JSON endpoints: GET|HEAD /api/captures and GET|HEAD /api/captures/<id>
 * (DELETE /api/captures/<id>: http_delete.c; GET /api/compare: http_compare.c).
 *
 * With a store (--store), the list holds the stored captures too, found and sorted by the index
 * (store_query.c says which query parameters): {"captures":[...],"total":N,"store":true}, where
 * "total" counts the stored captures that match (for paging with limit/offset). The captures
 * given on the command line (FILES|DIRS) are listed first, and only when no filter is given
 * (they have no project, tags or facts to filter on). A bad query parameter gets 400 naming it.
 *
 * Each listing rescans the DIR arguments (so captures created after start-up appear) and probes
 * every listed file (size, mtime, first 8 bytes): a few syscalls per capture, bounded by
 * VOR_SERVER_MAX_CAPTURES, done on the service thread because they touch only local metadata.
 * Only files whose magic matches get a "ws" link: anything else is listed with its state and is
 * never streamed. Responses are built whole (capped at SERVER_JSON_MAX_BYTES) and sent in
 * chunks by http_reply.c, with "cache-control: no-store" since they change as captures grow.
 * HEAD gets the same status and headers (Content-Length included) without the body; other
 * methods 405 with "allow: GET, HEAD".
 */
#include "server_internal.h"
#include "capture_access.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const json_headers[] = {"cache-control:", "no-store", NULL};
static const char *const json_405_headers[] = {"cache-control:", "no-store", "allow:", "GET, HEAD", NULL};

static void entry_json(json_buf *b, const capture_entry *e)
{
    capture_probe pr;
    char idtxt[24];

    capture_probe_path(e->path, &pr);
    snprintf(idtxt, sizeof idtxt, "%zu", e->id);
    json_raw(b, "{\"id\":");
    json_str(b, idtxt);
    json_raw(b, ",\"name\":");
    json_str(b, e->name);
    json_raw(b, ",\"path\":");
    json_str(b, e->path);
    json_raw(b, ",\"bytes\":");
    json_u64(b, pr.bytes);
    json_raw(b, ",\"mtime_ms\":");
    json_i64(b, pr.mtime_ms);
    json_raw(b, ",\"state\":");
    json_str(b, capture_state_name(pr.state));
    if (pr.state == CAPTURE_OK) {
        json_raw(b, ",\"ws\":\"/capture/");
        json_raw(b, idtxt);
        json_raw(b, "\"");
    }
    json_raw(b, "}");
}

int send_json(struct lws *wsi, http_session *s, unsigned int status, json_buf *b)
{
    size_t len = 0;
    char *body = json_take(b, &len);
    if (!body)
        return http_reply_text(wsi, s, 500, "500 response too large or out of memory\n");
    return http_reply(wsi, s, status, "application/json", status == 405 ? json_405_headers : json_headers,
                      body, len, true);
}

int api_send_error(struct lws *wsi, http_session *s, unsigned int status, const char *what, const char *detail)
{
    char text[SERVER_TEXT_MAX_BYTES], msg[SERVER_TEXT_MAX_BYTES];
    json_buf b;

    snprintf(msg, sizeof msg, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    json_init_fixed(&b, text, sizeof text);
    json_raw(&b, "{\"error\":");
    json_str(&b, msg);
    json_raw(&b, "}");
    if (b.failed)
        return http_reply_text(wsi, s, status, "error\n");
    /* The body must outlive this call: copy it into an owned buffer. */
    json_buf out;
    json_init(&out, SERVER_JSON_MAX_BYTES);
    json_raw(&out, text);
    return send_json(wsi, s, status, &out);
}

static int list_captures(struct lws *wsi, server *srv, http_session *s)
{
    capture_registry *r = &srv->registry;
    json_buf b;
    bool first = true;
    char query[SERVER_URI_MAX_BYTES * 3], qbuf[8192], err[300];
    index_query q;

    if (http_query_string(wsi, query, sizeof query) != 0)
        return api_send_error(wsi, s, 414, "query too long", NULL);
    if (store_query_parse(query, &q, qbuf, sizeof qbuf, err, sizeof err))
        return api_send_error(wsi, s, 400, "bad query", err);
    bool filtered = q.project || q.process || q.host || q.state || q.id || q.n_tags || q.scope || q.since_ms ||
                    q.until_ms;
    if (filtered && !srv->store)
        return api_send_error(wsi, s, 400, "bad query", "this server keeps no store (vor serve --store DIR): nothing to "
                                                    "filter");
    registry_rescan(r);
    json_init(&b, SERVER_JSON_MAX_BYTES);
    json_raw(&b, "{\"captures\":[");
    for (size_t i = 0; i < r->count && !filtered; i++) {
        if (!r->entries[i].present)
            continue;
        if (!first)
            json_raw(&b, ",");
        first = false;
        entry_json(&b, &r->entries[i]);
    }
    if (srv->store) {
        uint64_t total = 0;
        if (store_search(srv->store, &q, &b, !first, &total, err, sizeof err)) {
            json_free(&b);
            return api_send_error(wsi, s, 400, "bad query", err);
        }
        json_raw(&b, "],\"store\":true,\"total\":");
        json_u64(&b, total);
    } else {
        json_raw(&b, "]");
    }
    if (r->truncated && !filtered)
        json_raw(&b, ",\"truncated\":true");
    json_raw(&b, "}");
    return send_json(wsi, s, 200, &b);
}

/* One stored capture, as the list shows it; 404 when the store does not hold it. */
static int stored_capture(struct lws *wsi, server *srv, http_session *s, const char *id)
{
    json_buf b;
    index_query q;
    uint64_t total = 0;
    char err[200];
    memset(&q, 0, sizeof q);
    q.id = id;
    q.limit = 1;
    json_init(&b, SERVER_JSON_MAX_BYTES);
    if (store_search(srv->store, &q, &b, false, &total, err, sizeof err) || total == 0) {
        json_free(&b);
        return api_send_error(wsi, s, 404, "unknown capture id", id);
    }
    return send_json(wsi, s, 200, &b);
}

int api_handle(struct lws *wsi, server *srv, http_session *s, const char *uri)
{
    static const char prefix[] = "/api/captures";
    const size_t pl = sizeof prefix - 1;

    bool compare = !strcmp(uri, "/api/compare");
    if (!compare && (strncmp(uri, prefix, pl) != 0 || (uri[pl] != '\0' && uri[pl] != '/')))
        return api_send_error(wsi, s, 404, "no such endpoint", uri);
    if (lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0 && uri[pl] == '/' && uri[pl + 1])
        return http_delete(wsi, srv, s, uri + pl + 1);
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0 && lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) <= 0)
        return api_send_error(wsi, s, 405, "method not allowed",
                          srv->store ? "the API answers GET and HEAD (DELETE for a stored capture)"
                                     : "the API answers GET and HEAD only");
    if (!http_may_read(wsi, srv))
        return api_send_error(wsi, s, 401, "a token is needed to read", "Authorization: Bearer TOKEN, or ?token=TOKEN");
    if (compare)
        return http_compare(wsi, srv, s);
    if (uri[pl] == '\0' || !strcmp(uri + pl, "/"))
        return list_captures(wsi, srv, s);

    const char *id = uri + pl + 1;
    const char *file = strstr(id, "/file");
    if (file && !strcmp(file, "/file") && srv->store) {
        /* GET /api/captures/<id>/file: a stored capture's bytes (to `vor diff` it, for one). */
        char sid[STORE_ID_BYTES + 1], path[4096], name[STORE_FIELD_MAX_BYTES], disp[STORE_FIELD_MAX_BYTES + 64];
        struct stat st;
        size_t n = (size_t)(file - id);
        if (n >= sizeof sid)
            return api_send_error(wsi, s, 404, "unknown capture id", NULL);
        memcpy(sid, id, n);
        sid[n] = '\0';
        if (store_capture_path(srv->store, sid, path, sizeof path, name, sizeof name) != 0)
            return api_send_error(wsi, s, 404, "unknown capture id", sid);
        int fd = open_regular_file(path, O_NOFOLLOW, &st);
        if (fd < 0)
            return api_send_error(wsi, s, 404, "unknown capture id", sid);
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.vor\"", sid); /* ids are [0-9a-z-] */
        const char *const headers[] = {"cache-control:", "no-store", "content-disposition:", disp, NULL};
        return http_reply_file(wsi, s, "application/octet-stream", headers, fd, (uint64_t)st.st_size);
    }
    if (strchr(id, '/')) /* /api/captures/<id>/<what>: random access (http_range.c) */
        return range_handle(wsi, srv, s, id);
    registry_rescan(&srv->registry);
    const capture_entry *e = registry_find(&srv->registry, id);
    if ((!e || !e->present) && srv->store)
        return stored_capture(wsi, srv, s, id);
    if (!e || !e->present)
        return api_send_error(wsi, s, 404, "unknown capture id", id);
    json_buf b;
    json_init(&b, SERVER_JSON_MAX_BYTES);
    entry_json(&b, e);
    return send_json(wsi, s, 200, &b);
}
