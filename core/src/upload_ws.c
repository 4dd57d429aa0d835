/* upload_ws.c: a minimal HTTP/1.1 and websocket client over a plain socket, for uploading
 * captures to `vor serve --store` (VOR_UPLOAD, `vor upload`) and reading its API (`vor list`).
 *
 * Why not libwebsockets' client: libvor is linked into the programs it measures. libwebsockets
 * would become a dependency of every one of them (and of everyone linking libvor.a, with
 * pkg-config and CMake carrying it), bring its own event loop, threads, TLS library and
 * global log settings into a process that did not ask for them, and it is not in every
 * distribution (nor in wasm, where the browser's WebSocket is used instead). What the upload
 * needs is small: one connection, an HTTP/1.1 upgrade, masked frames out, a few short text
 * frames in. This file is that, about 400 lines, blocking calls with deadlines (poll), on the
 * uploader's own thread, never on the program's. No TLS: give a plain http:// address (a
 * TLS-terminating proxy in front of the server, or an SSH tunnel, for other networks).
 *
 * The handshake is checked (status 101, Upgrade, Sec-WebSocket-Accept = base64(SHA-1(key +
 * GUID)) as RFC 6455 asks); frames from the server are read strictly enough to be safe: a
 * length over the receive buffer is consumed without being stored, text messages longer than
 * the caller's buffer are cut. Sends use MSG_NOSIGNAL (no SIGPIPE in the measured program).
 */
#include "upload_client.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RX_BYTES = 64 * 1024, TX_CHUNK = 64 * 1024, HEAD_MAX = 8192 };

struct vor_ws {
    int fd;
    uint8_t rx[RX_BYTES];
    size_t rx_len;
    uint32_t mask_state;
    /* the message being assembled */
    size_t msg_len;
    int msg_text;
    uint8_t tx[TX_CHUNK + 14];
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int vor_url_parse(const char *url, vor_url *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    const char *p;
    if (!strncmp(url, "http://", 7))
        p = url + 7;
    else if (!strncmp(url, "ws://", 5))
        p = url + 5;
    else {
        snprintf(err, errlen, "'%s' is not an http:// or ws:// address%s", url,
                 !strncmp(url, "https://", 8) || !strncmp(url, "wss://", 6)
                     ? " (TLS is not spoken: use the server's plain address, e.g. through a tunnel)"
                     : "");
        return -1;
    }
    const char *host_end, *host = p;
    if (*p == '[') {
        host_end = strchr(p, ']');
        if (!host_end) {
            snprintf(err, errlen, "'%s': unclosed [ in the address", url);
            return -1;
        }
        host++;
        p = host_end + 1;
    } else {
        host_end = p + strcspn(p, ":/?#");
        p = host_end;
    }
    size_t hl = (size_t)(host_end - host);
    if (hl == 0 || hl >= sizeof out->host) {
        snprintf(err, errlen, "'%s': no host", url);
        return -1;
    }
    memcpy(out->host, host, hl);
    snprintf(out->port, sizeof out->port, "80");
    if (*p == ':') {
        p++;
        size_t pl = strspn(p, "0123456789");
        long port = pl && pl < 6 ? strtol(p, NULL, 10) : 0;
        if (port < 1 || port > 65535) {
            snprintf(err, errlen, "'%s': bad port", url);
            return -1;
        }
        snprintf(out->port, sizeof out->port, "%ld", port);
        p += pl;
    }
    if (*p && *p != '/') {
        snprintf(err, errlen, "'%s': unexpected '%c' after the host", url, *p);
        return -1;
    }
    size_t len = strcspn(p, "?#");
    while (len > 0 && p[len - 1] == '/') len--;
    if (len >= sizeof out->path) {
        snprintf(err, errlen, "'%s': path too long", url);
        return -1;
    }
    memcpy(out->path, p, len);
    /* A URL naming the upload endpoint itself gives the same base. */
    size_t n = strlen(out->path);
    if (n >= 7 && !strcmp(out->path + n - 7, "/upload")) out->path[n - 7] = '\0';
    return 0;
}

static int wait_fd(int fd, short events, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left < 0) left = 0;
        struct pollfd pfd = {fd, events, 0};
        int r = poll(&pfd, 1, (int)(left > 1000000 ? 1000000 : left));
        if (r > 0) return (pfd.revents & (POLLERR | POLLNVAL)) && !(pfd.revents & (POLLIN | POLLOUT)) ? -1 : 0;
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (errno != EINTR) return -1;
    }
}

static int tcp_connect(const vor_url *u, int timeout_ms, char *err, size_t errlen) {
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(u->host, u->port, &hints, &ai);
    if (g != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", u->host, gai_strerror(g));
        return -1;
    }
    int64_t deadline = now_ms() + timeout_ms;
    int fd = -1, last = ECONNREFUSED;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last = errno;
            close(fd);
            fd = -1;
            continue;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (wait_fd(fd, POLLOUT, deadline) != 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr) {
            last = soerr ? soerr : errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to %s:%s: %s", u->host, u->port, strerror(last));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    return fd;
}

static int send_all(int fd, const void *data, size_t n, int64_t deadline) {
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, POLLOUT, deadline) != 0) return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/* Reads the response head (up to the blank line) into head; extra bytes after it into rest. */
static int read_head(int fd, char *head, size_t cap, size_t *head_len, uint8_t *rest, size_t rest_cap, size_t *rest_len,
                     int64_t deadline) {
    size_t have = 0;
    for (;;) {
        if (have + 1 >= cap) return -1;
        ssize_t k = recv(fd, head + have, cap - 1 - have, MSG_DONTWAIT);
        if (k == 0) return -1;
        if (k < 0) {
            if (errno == EINTR) continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLIN, deadline) == 0) continue;
            return -1;
        }
        have += (size_t)k;
        head[have] = '\0';
        char *end = strstr(head, "\r\n\r\n");
        if (end) {
            size_t hl = (size_t)(end - head) + 4;
            size_t extra = have - hl;
            if (extra > rest_cap) return -1;
            memcpy(rest, head + hl, extra);
            *rest_len = extra;
            head[hl] = '\0';
            *head_len = hl;
            return 0;
        }
    }
}

/* The value of header `name` in a response head (case-insensitive), into out. */
static int header(const char *head, const char *name, char *out, size_t cap) {
    size_t nl = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
        const char *l = line + 2;
        if (!strncasecmp(l, name, nl) && l[nl] == ':') {
            const char *v = l + nl + 1;
            while (*v == ' ' || *v == '\t') v++;
            size_t vl = strcspn(v, "\r\n");
            while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
            if (vl >= cap) vl = cap - 1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return 0;
        }
    }
    return -1;
}

static void host_header(const vor_url *u, char *out, size_t cap) {
    int v6 = strchr(u->host, ':') != NULL;
    snprintf(out, cap, "%s%s%s:%s", v6 ? "[" : "", u->host, v6 ? "]" : "", u->port);
}

static void random_bytes(void *out, size_t n) {
    if (getrandom(out, n, 0) == (ssize_t)n) return;
    uint8_t *p = out;
    uint64_t x = (uint64_t)now_ms() ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)out;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (uint8_t)x;
    }
}

vor_ws *vor_ws_connect(const vor_url *u, const char *path, const char *protocol, int timeout_ms, char *err,
                       size_t errlen) {
    int64_t deadline = now_ms() + timeout_ms;
    int fd = tcp_connect(u, timeout_ms, err, errlen);
    if (fd < 0) return NULL;
    vor_ws *ws = calloc(1, sizeof *ws);
    if (!ws) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ws->fd = fd;
    random_bytes(&ws->mask_state, sizeof ws->mask_state);
    ws->mask_state |= 1;
    uint8_t nonce[16];
    char key[32], req[2048], host[300], head[HEAD_MAX];
    random_bytes(nonce, sizeof nonce);
    vor_base64(nonce, sizeof nonce, key);
    host_header(u, host, sizeof host);
    int n = snprintf(req, sizeof req,
                     "GET %s%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n",
                     u->path, path, host, key, protocol);
    size_t head_len = 0;
    if (n <= 0 || (size_t)n >= sizeof req || send_all(fd, req, (size_t)n, deadline) != 0 ||
        read_head(fd, head, sizeof head, &head_len, ws->rx, sizeof ws->rx, &ws->rx_len, deadline) != 0) {
        snprintf(err, errlen, "%s:%s did not answer the websocket upgrade: %s", u->host, u->port,
                 errno == ETIMEDOUT ? "timed out"
                 : errno            ? strerror(errno)
                                    : "connection closed");
        vor_ws_close(ws, 0);
        return NULL;
    }
    int status = 0;
    sscanf(head, "HTTP/1.%*d %d", &status);
    char accept[64], want[64], upgrade[32];
    char both[128];
    snprintf(both, sizeof both, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    uint8_t digest[20];
    vor_sha1(both, strlen(both), digest);
    vor_base64(digest, sizeof digest, want);
    if (status != 101) {
        snprintf(err, errlen, "%s:%s refused the connection: HTTP %d%s", u->host, u->port, status,
                 status == 403   ? " (foreign Origin or Host)"
                 : status == 404 ? " (not a vor server?)"
                                 : "");
        vor_ws_close(ws, 0);
        return NULL;
    }
    if (header(head, "Upgrade", upgrade, sizeof upgrade) || strcasecmp(upgrade, "websocket") ||
        header(head, "Sec-WebSocket-Accept", accept, sizeof accept) || strcmp(accept, want)) {
        snprintf(err, errlen, "%s:%s answered 101 but not as a websocket server", u->host, u->port);
        vor_ws_close(ws, 0);
        return NULL;
    }
    return ws;
}

static uint32_t next_mask(vor_ws *ws) {
    uint32_t x = ws->mask_state;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return ws->mask_state = x;
}

/* dst = src XOR the mask, src being at payload position pos; 8 bytes at a time. */
static void mask_copy(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t mask[4], size_t pos) {
    size_t k = 0;
    for (; k < n && ((pos + k) & 3); k++) dst[k] = src[k] ^ mask[(pos + k) & 3];
    uint32_t m32;
    memcpy(&m32, mask, 4);
    uint64_t m64 = (uint64_t)m32 << 32 | m32;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, src + k, 8);
        w ^= m64;
        memcpy(dst + k, &w, 8);
    }
    for (; k < n; k++) dst[k] = src[k] ^ mask[(pos + k) & 3];
}

/* One frame: FIN, opcode, masked payload. */
static int send_frame(vor_ws *ws, int opcode, int fin, const uint8_t *data, size_t n, int64_t deadline) {
    uint8_t *h = ws->tx;
    size_t hl = 2;
    h[0] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    if (n < 126) {
        h[1] = (uint8_t)(0x80 | n);
    } else if (n < 65536) {
        h[1] = 0x80 | 126;
        h[2] = (uint8_t)(n >> 8);
        h[3] = (uint8_t)n;
        hl = 4;
    } else {
        h[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++) h[2 + i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
        hl = 10;
    }
    uint32_t m = next_mask(ws);
    uint8_t mask[4] = {(uint8_t)m, (uint8_t)(m >> 8), (uint8_t)(m >> 16), (uint8_t)(m >> 24)};
    memcpy(h + hl, mask, 4);
    hl += 4;
    size_t first = n < TX_CHUNK + 14 - hl ? n : TX_CHUNK + 14 - hl;
    mask_copy(h + hl, data, first, mask, 0);
    if (send_all(ws->fd, h, hl + first, deadline) != 0) return -1;
    for (size_t off = first; off < n;) {
        size_t k = n - off < TX_CHUNK ? n - off : TX_CHUNK;
        mask_copy(ws->tx, data + off, k, mask, off);
        if (send_all(ws->fd, ws->tx, k, deadline) != 0) return -1;
        off += k;
    }
    return 0;
}

int vor_ws_send(vor_ws *ws, int binary, const void *data, size_t n, int timeout_ms) {
    return send_frame(ws, binary ? 2 : 1, 1, data, n, now_ms() + timeout_ms);
}

/* Parses one complete frame at the start of rx; returns its total size, 0 if incomplete. */
static size_t frame_size(const uint8_t *p, size_t n, uint64_t *payload, size_t *head) {
    if (n < 2) return 0;
    uint64_t len = p[1] & 0x7f;
    size_t hl = 2;
    if (len == 126) {
        if (n < 4) return 0;
        len = (uint64_t)p[2] << 8 | p[3];
        hl = 4;
    } else if (len == 127) {
        if (n < 10) return 0;
        len = 0;
        for (int i = 0; i < 8; i++) len = len << 8 | p[2 + i];
        hl = 10;
    }
    if (p[1] & 0x80) hl += 4; /* a masked server frame: tolerated */
    *payload = len;
    *head = hl;
    if (len > RX_BYTES - hl) return (size_t)-1; /* too large to hold: skipped */
    return n >= hl + len ? hl + (size_t)len : 0;
}

int vor_ws_recv(vor_ws *ws, char *text, size_t cap, int timeout_ms, int *close_code) {
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        uint64_t payload = 0;
        size_t head = 0, total = frame_size(ws->rx, ws->rx_len, &payload, &head);
        if (total == (size_t)-1) {
            *close_code = 1009;
            return -1;
        }
        if (total) {
            uint8_t op = ws->rx[0] & 0x0f, fin = ws->rx[0] & 0x80;
            uint8_t *pl = ws->rx + head;
            int out = 0;
            if (op == 0x9) {
                send_frame(ws, 0xA, 1, pl, (size_t)payload, deadline + 1000);
            } else if (op == 0x8) {
                *close_code = payload >= 2 ? (pl[0] << 8 | pl[1]) : 1005;
                return -1;
            } else if (op == 0x1 || (op == 0x0 && ws->msg_text)) {
                if (op == 0x1) ws->msg_len = 0;
                ws->msg_text = 1;
                size_t room = cap > ws->msg_len + 1 ? cap - ws->msg_len - 1 : 0;
                size_t k = payload < room ? (size_t)payload : room;
                memcpy(text + ws->msg_len, pl, k);
                ws->msg_len += k;
                text[ws->msg_len] = '\0';
                if (fin) {
                    ws->msg_text = 0;
                    out = 1;
                }
            }
            memmove(ws->rx, ws->rx + total, ws->rx_len - total);
            ws->rx_len -= total;
            if (out) return 1;
            continue;
        }
        ssize_t k = recv(ws->fd, ws->rx + ws->rx_len, sizeof ws->rx - ws->rx_len, MSG_DONTWAIT);
        if (k > 0) {
            ws->rx_len += (size_t)k;
            continue;
        }
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            *close_code = 1006;
            return -1;
        }
        if (now_ms() >= deadline) return 0;
        if (wait_fd(ws->fd, POLLIN, deadline) != 0 && errno != ETIMEDOUT) {
            *close_code = 1006;
            return -1;
        }
    }
}

void vor_ws_close(vor_ws *ws, int code) {
    if (!ws) return;
    if (code) {
        uint8_t body[2] = {(uint8_t)(code >> 8), (uint8_t)code};
        send_frame(ws, 0x8, 1, body, 2, now_ms() + 200);
    }
    close(ws->fd);
    free(ws);
}

void vor_ws_abort(vor_ws *ws) {
    if (ws) shutdown(ws->fd, SHUT_RDWR);
}

int vor_http_get(const vor_url *u, const char *path_query, const char *token, int timeout_ms, size_t max_bytes,
                 char **body, size_t *len, int *status, char *err, size_t errlen) {
    int64_t deadline = now_ms() + timeout_ms;
    *body = NULL;
    int fd = tcp_connect(u, timeout_ms, err, errlen);
    if (fd < 0) return -1;
    char host[300], auth[700] = "";
    static char req[4096];
    host_header(u, host, sizeof host);
    if (token && *token) snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    int n = snprintf(req, sizeof req, "GET %s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s\r\n", u->path,
                     path_query, host, auth);
    size_t cap = 64 * 1024, have = 0;
    char *buf = malloc(cap + 1);
    int rc = -1;
    if (!buf || n <= 0 || (size_t)n >= sizeof req || send_all(fd, req, (size_t)n, deadline) != 0) {
        snprintf(err, errlen, "cannot send the request to %s:%s", u->host, u->port);
        goto out;
    }
    for (;;) {
        if (have == cap) {
            if (cap >= max_bytes + HEAD_MAX) {
                snprintf(err, errlen, "the answer is larger than %zu bytes", max_bytes);
                goto out;
            }
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) goto out;
            buf = nb;
            cap *= 2;
        }
        ssize_t k = recv(fd, buf + have, cap - have, MSG_DONTWAIT);
        if (k > 0) {
            have += (size_t)k;
            continue;
        }
        if (k == 0) break;
        if (errno == EINTR) continue;
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLIN, deadline) == 0) continue;
        snprintf(err, errlen, "%s:%s: %s", u->host, u->port,
                 errno == ETIMEDOUT ? "no answer in time" : strerror(errno));
        goto out;
    }
    buf[have] = '\0';
    char *sep = strstr(buf, "\r\n\r\n");
    if (!sep || sscanf(buf, "HTTP/1.%*d %d", status) != 1) {
        snprintf(err, errlen, "%s:%s did not answer in HTTP", u->host, u->port);
        goto out;
    }
    size_t hl = (size_t)(sep - buf) + 4;
    *len = have - hl;
    memmove(buf, buf + hl, *len + 1);
    *body = buf;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    close(fd);
    return rc;
}
