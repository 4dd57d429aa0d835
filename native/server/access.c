/*
 * access.c - who may talk to the server: the Host and Origin header checks (pure).
 *
 * The threats: a page on any web site can open ws://127.0.0.1:PORT/capture/0 (browsers allow
 * cross-origin websockets and only report the page's Origin) and, by DNS rebinding (its own name
 * re-pointed at 127.0.0.1), can even read the HTTP API as "same origin". Both are stopped by
 * headers the browser sets and the page cannot forge:
 *   Host    must name this server: a loopback host (localhost, 127.0.0.0/8, ::1), the bound
 *           address, or - when bound to a wildcard (0.0.0.0, ::), where any of the machine's
 *           addresses reaches us - any IP address literal. A DNS name other than localhost is
 *           refused: that is what a rebinding page sends. Any port (tunnels, port forwards).
 *           A request without Host (HTTP/1.0 tools) passes: browsers always send one.
 *   Origin  (websocket upgrades) absent: a non-browser client, passes. Present: it must be
 *           http(s)://H:P where H:P is the request's own Host (the page came from this server,
 *           by whatever address it was reached), or a loopback host / the bound address with
 *           the server's own port. "null" (file:// pages, sandboxed frames) is refused.
 * IP literals are compared as addresses (inet_pton), names case-insensitively. No allocation,
 * no I/O: unit-tested directly.
 */
#include "server_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

enum { AUTHORITY_MAX_BYTES = 300 }; /* longest host[:port] considered; longer is refused */

/* A parsed "host[:port]": the host as an address when it is an IP literal. */
typedef struct authority {
    char name[AUTHORITY_MAX_BYTES]; /* host without brackets */
    int port;
    int family;                     /* AF_INET / AF_INET6 for an IP literal, 0 for a name */
    unsigned char addr[16];
} authority;

/* Parses "name", "name:port", "1.2.3.4:port", "[v6]", "[v6]:port" (len bytes of text). */
static bool parse_authority(const char *text, size_t len, int default_port, authority *out)
{
    const char *end = text + len, *host, *host_end, *p;

    memset(out, 0, sizeof *out);
    if (len == 0 || len >= sizeof out->name)
        return false;
    if (text[0] == '[') {
        host = text + 1;
        host_end = memchr(host, ']', len - 1);
        if (!host_end)
            return false;
        p = host_end + 1;
    } else {
        host = text;
        host_end = memchr(text, ':', len);
        if (!host_end)
            host_end = end;
        p = host_end;
    }
    size_t hl = (size_t)(host_end - host);
    if (hl == 0)
        return false;
    memcpy(out->name, host, hl);
    out->name[hl] = '\0';
    out->port = default_port;
    if (p < end) {
        long port = 0;
        if (*p++ != ':' || p == end || end - p > 5)
            return false;
        for (; p < end; p++) {
            if (*p < '0' || *p > '9')
                return false;
            port = port * 10 + (*p - '0');
        }
        if (port < 1 || port > 65535)
            return false;
        out->port = (int)port;
    }
    for (size_t i = 0; i < hl; i++) { /* no spaces, controls, or anything outside a host name */
        unsigned char c = (unsigned char)out->name[i];
        if (c <= ' ' || c >= 0x7f || c == '/' || c == '@' || c == '\\' || c == '[' || c == ']')
            return false;
    }
    if (text[0] == '[') {
        if (inet_pton(AF_INET6, out->name, out->addr) != 1)
            return false; /* brackets hold an IPv6 address or nothing valid */
        out->family = AF_INET6;
    } else if (inet_pton(AF_INET, out->name, out->addr) == 1) {
        out->family = AF_INET;
    } else if (strchr(out->name, ':')) {
        return false;     /* an unbracketed IPv6 address is not a valid Host */
    }
    return true;
}

static bool is_loopback_ip(int family, const unsigned char *a)
{
    static const unsigned char v6_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (family == AF_INET)
        return a[0] == 127;
    if (family == AF_INET6)
        return !memcmp(a, v6_loopback, 16) || (!memcmp(a, v4_mapped, 12) && a[12] == 127);
    return false;
}

static bool is_loopback(const authority *a)
{
    return a->family ? is_loopback_ip(a->family, a->addr) : !strcasecmp(a->name, "localhost");
}

static bool is_bound_address(const access_policy *p, const authority *a)
{
    return a->family && a->family == p->family &&
           !memcmp(a->addr, p->addr, a->family == AF_INET ? 4 : 16);
}

static bool same_host(const authority *a, const authority *b)
{
    if (a->family != b->family)
        return false;
    if (a->family)
        return !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
    return !strcasecmp(a->name, b->name);
}

int access_policy_init(access_policy *p, const char *host, int port)
{
    memset(p, 0, sizeof *p);
    p->port = port;
    if (!host)
        return -1;
    if (inet_pton(AF_INET, host, p->addr) == 1)
        p->family = AF_INET;
    else if (inet_pton(AF_INET6, host, p->addr) == 1)
        p->family = AF_INET6;
    else
        return -1;
    static const unsigned char zero[16];
    p->wildcard = !memcmp(p->addr, zero, p->family == AF_INET ? 4 : 16);
    return 0;
}

bool access_address_is_loopback(const char *host)
{
    unsigned char a[16];
    if (!host)
        return false;
    if (!strcasecmp(host, "localhost"))
        return true;
    if (inet_pton(AF_INET, host, a) == 1)
        return is_loopback_ip(AF_INET, a);
    if (inet_pton(AF_INET6, host, a) == 1)
        return is_loopback_ip(AF_INET6, a);
    return false;
}

static bool host_ok(const access_policy *p, const authority *h)
{
    return is_loopback(h) || is_bound_address(p, h) || (p->wildcard && h->family != 0);
}

bool access_host_allowed(const access_policy *p, const char *host_header)
{
    authority h;
    if (!host_header)
        return true;
    return parse_authority(host_header, strlen(host_header), 80, &h) && host_ok(p, &h);
}

bool access_origin_allowed(const access_policy *p, const char *origin, const char *host_header)
{
    static const char http[] = "http://", https[] = "https://";
    authority o, h;
    const char *rest;
    int default_port;

    if (!origin)
        return true;
    if (!strncasecmp(origin, http, sizeof http - 1)) {
        rest = origin + sizeof http - 1;
        default_port = 80;
    } else if (!strncasecmp(origin, https, sizeof https - 1)) {
        rest = origin + sizeof https - 1;
        default_port = 443;
    } else {
        return false; /* "null", file:, chrome-extension:, ... */
    }
    size_t len = strlen(rest);
    if (len > 0 && rest[len - 1] == '/') /* not sent by browsers; tolerated */
        len--;
    if (!parse_authority(rest, len, default_port, &o))
        return false;
    if (host_header) {
        if (!parse_authority(host_header, strlen(host_header), 80, &h) || !host_ok(p, &h))
            return false;
        /* The page came from this very server, by the address the browser used to reach it.
         * Host carries no scheme: a default port there means 80 (we only speak plain HTTP). */
        if (same_host(&o, &h) && o.port == h.port)
            return true;
    }
    return o.port == p->port && (is_loopback(&o) || is_bound_address(p, &o));
}
