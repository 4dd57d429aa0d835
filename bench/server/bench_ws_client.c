/*
 * bench_ws_client.c - see bench_ws_client.h. Blocking reads into one 256 KiB buffer per viewer;
 * frames are parsed in place (a frame of the vor server is at most 64 KiB + 10 header bytes).
 */
#include "bench_ws_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Makes at least `need` unread bytes available; compacts the buffer first. */
static int fill(wsc *c, size_t need)
{
    if (need > sizeof c->buf)
        return -1;
    if (c->len - c->pos >= need)
        return 0;
    if (c->pos) {
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    while (c->len < need) {
        ssize_t k = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c->len += (size_t)k;
    }
    return 0;
}

int wsc_connect(wsc *c, int port, const char *path)
{
    struct sockaddr_in sa;
    char req[512];

    c->len = c->pos = 0;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        goto fail;
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     "Sec-WebSocket-Protocol: vor-capture\r\n\r\n", path);
    if (n < 0 || (size_t)n >= sizeof req || write_all(c->fd, req, (size_t)n))
        goto fail;
    /* Read up to the blank line ending the response head; frames may follow in the same read. */
    size_t end = 0;
    for (;;) {
        if (fill(c, c->len - c->pos + 1))
            goto fail;
        for (; end + 4 <= c->len; end++)
            if (!memcmp(c->buf + end, "\r\n\r\n", 4))
                break;
        if (end + 4 <= c->len)
            break;
    }
    if (strncmp((const char *)c->buf, "HTTP/1.1 101", 12) != 0)
        goto fail;
    c->pos = end + 4;
    return 0;
fail:
    close(c->fd);
    c->fd = -1;
    return -1;
}

int wsc_next(wsc *c, int *opcode, const unsigned char **payload, size_t *len)
{
    if (fill(c, 2))
        return -1;
    const unsigned char *h = c->buf + c->pos;
    size_t hl = 2;
    uint64_t n = h[1] & 0x7f;
    if (n == 126)
        hl = 4;
    else if (n == 127)
        hl = 10;
    if (fill(c, hl))
        return -1;
    h = c->buf + c->pos;
    if (hl == 4)
        n = ((uint64_t)h[2] << 8) | h[3];
    else if (hl == 10) {
        n = 0;
        for (int i = 2; i < 10; i++)
            n = (n << 8) | h[i];
    }
    if (n > sizeof c->buf - hl || fill(c, hl + (size_t)n))
        return -1;
    h = c->buf + c->pos;
    *opcode = h[0] & 0x0f;
    *payload = h + hl;
    *len = (size_t)n;
    c->pos += hl + (size_t)n;
    return 0;
}

int wsc_send_text(wsc *c, const char *text)
{
    unsigned char frame[256];
    size_t n = strlen(text);
    if (n > 125)
        return -1;
    static const unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
    frame[0] = 0x81;
    frame[1] = (unsigned char)(0x80 | n);
    memcpy(frame + 2, mask, 4);
    for (size_t i = 0; i < n; i++)
        frame[6 + i] = (unsigned char)text[i] ^ mask[i & 3];
    return write_all(c->fd, frame, 6 + n);
}

void wsc_close(wsc *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
