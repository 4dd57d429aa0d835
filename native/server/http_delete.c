/*
 * http_delete.c - DELETE /api/captures/<id>: removes a stored capture (its file, its sidecar,
 * its index entry). An upload in progress of that capture is ended first (close 1008
 * "capture deleted"); viewers streaming it keep what they have and get a "removed" reset.
 * Needs a token when the server has a token file (http_auth.c): 401 without one, 403 with a
 * wrong one. 404 for an unknown id, 405 without a store; captures given on the command line
 * (FILES|DIRS) are not the server's to delete.
 */
#include "server_internal.h"

#include <stdio.h>

int http_delete(struct lws *wsi, server *srv, http_session *s, const char *id)
{
    char token[600], err[200];
    if (!srv->store)
        return api_send_error(wsi, s, 405, "method not allowed", "this server keeps no store (vor serve --store DIR)");
    http_request_token(wsi, token, sizeof token);
    if (!http_may_write(srv, token[0] ? token : NULL))
        return api_send_error(wsi, s, token[0] ? 403 : 401, token[0] ? "bad token" : "a token is needed to delete",
                          "Authorization: Bearer TOKEN");
    int rc = store_delete(srv->store, id, err, sizeof err);
    if (rc == 1)
        return api_send_error(wsi, s, 404, "unknown capture id", id);
    if (rc < 0)
        return api_send_error(wsi, s, 500, "delete failed", err);
    json_buf b;
    json_init(&b, SERVER_JSON_MAX_BYTES);
    json_raw(&b, "{\"deleted\":");
    json_str(&b, id);
    json_raw(&b, "}");
    return send_json(wsi, s, 200, &b);
}
