/*
 * bench_ws_client.h - a minimal blocking websocket client for the server benchmark.
 *
 * One viewer per thread, plain sockets: the benchmark must measure the server, not a client
 * library's event loop. It speaks just what the vor server sends: unmasked, unfragmented
 * frames (binary chunks, text, close); it sends masked text frames.
 */
#ifndef BENCH_WS_CLIENT_H
#define BENCH_WS_CLIENT_H

#include <stddef.h>

enum { WSC_BUFFER_BYTES = 256 * 1024 };

typedef struct wsc {
    int fd;
    size_t len, pos;                   /* unread bytes are buf[pos..len) */
    unsigned char buf[WSC_BUFFER_BYTES];
} wsc;

/* Connects to 127.0.0.1:port and upgrades GET path (subprotocol vor-capture). 0 or -1. */
int wsc_connect(wsc *c, int port, const char *path);

/* Next frame: *opcode (1 text, 2 binary, 8 close), *payload points into c->buf and stays valid
 * until the next call. Returns 0, or -1 on error / connection closed. */
int wsc_next(wsc *c, int *opcode, const unsigned char **payload, size_t *len);

int wsc_send_text(wsc *c, const char *text);   /* 0 or -1 */
void wsc_close(wsc *c);

#endif
