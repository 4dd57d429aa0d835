/* upload_proto.c: the messages of the vor-upload protocol (native/server/ws_upload.c has the
 * whole protocol): the client's hello, and the server's offset / ack / done / error answers.
 * The server writes flat JSON objects with string and integer values only; this reader takes
 * exactly those members it needs and ignores the rest, so a newer server may add members. */
#include "upload_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

typedef struct jw {
    char *p;
    size_t len, cap;
    int failed;
} jw;

static void put(jw *w, const char *s, size_t n) {
    if (w->failed || w->len + n + 1 > w->cap) {
        w->failed = 1;
        return;
    }
    memcpy(w->p + w->len, s, n);
    w->len += n;
    w->p[w->len] = '\0';
}

static void put_str(jw *w, const char *s, size_t n) {
    put(w, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(w, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(w, esc, 6);
        } else {
            put(w, (const char *)&s[i], 1);
        }
    }
    put(w, "\"", 1);
}

static void member(jw *w, const char *key, const char *value) {
    if (!value) return;
    put(w, ",", 1);
    put_str(w, key, strlen(key));
    put(w, ":", 1);
    put_str(w, value, strlen(value));
}

int vor_upload_hello_json(const vor_upload_hello *h, char *out, size_t cap, char *err, size_t errlen) {
    jw w = {out, 0, cap, 0};
    char host[256] = "";
    if (!h->host && gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    put(&w, "{\"type\":\"hello\"", 15);
    member(&w, "key", h->key);
    member(&w, "project", h->project);
    member(&w, "name", h->name);
    member(&w, "host", h->host ? h->host : host);
    member(&w, "token", h->token);
    if (h->tags && *h->tags) {
        put(&w, ",\"tags\":{", 9);
        int n = 0;
        for (const char *p = h->tags; *p;) {
            size_t len = strcspn(p, ",");
            const char *eq = memchr(p, '=', len);
            if (!eq || eq == p) {
                snprintf(err, errlen, "tag '%.*s' is not key=value", (int)(len > 60 ? 60 : len), p);
                return -1;
            }
            if (n++) put(&w, ",", 1);
            put_str(&w, p, (size_t)(eq - p));
            put(&w, ":", 1);
            put_str(&w, eq + 1, len - (size_t)(eq - p) - 1);
            p += len;
            if (*p == ',') p++;
        }
        put(&w, "}", 1);
    }
    put(&w, "}", 1);
    if (w.failed) {
        snprintf(err, errlen, "the hello is too long (tags, project or name)");
        return -1;
    }
    return 0;
}

/* The raw value of "key": in a flat JSON object: start and length, strings without quotes. */
static const char *find(const char *text, const char *key, size_t *len, int *is_string) {
    char pat[40];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p == '"') {
        const char *s = ++p;
        while (*p && *p != '"') p += (*p == '\\' && p[1]) ? 2 : 1;
        *len = (size_t)(p - s);
        *is_string = 1;
        return s;
    }
    *len = strcspn(p, ",} ");
    *is_string = 0;
    return p;
}

static void copy_string(const char *text, const char *key, char *out, size_t cap) {
    size_t len = 0, o = 0;
    int str = 0;
    const char *v = find(text, key, &len, &str);
    out[0] = '\0';
    if (!v || !str) return;
    for (size_t i = 0; i < len && o + 1 < cap; i++) {
        char c = v[i];
        if (c == '\\' && i + 1 < len) {
            c = v[++i];
            if (c == 'n')
                c = ' ';
            else if (c == 'u') { /* \uXXXX: shown as '?' (messages are for people) */
                i += 4;
                c = '?';
            }
        }
        out[o++] = c;
    }
    out[o] = '\0';
}

void vor_upload_msg_parse(const char *text, vor_upload_msg *m) {
    char type[16];
    memset(m, 0, sizeof *m);
    copy_string(text, "type", type, sizeof type);
    m->type = !strcmp(type, "offset")  ? VOR_UPLOAD_MSG_OFFSET
              : !strcmp(type, "ack")   ? VOR_UPLOAD_MSG_ACK
              : !strcmp(type, "done")  ? VOR_UPLOAD_MSG_DONE
              : !strcmp(type, "error") ? VOR_UPLOAD_MSG_ERROR
                                       : VOR_UPLOAD_MSG_OTHER;
    size_t len = 0;
    int str = 0;
    const char *b = find(text, "bytes", &len, &str);
    if (b && !str) m->bytes = strtoull(b, NULL, 10);
    copy_string(text, "id", m->id, sizeof m->id);
    copy_string(text, "state", m->state, sizeof m->state);
    copy_string(text, "message", m->message, sizeof m->message);
    m->already = strstr(text, "\"already\":true") != NULL;
}

void vor_upload_random_key(char out[25]) {
    uint8_t r[12];
    if (getentropy(r, sizeof r) != 0) { /* glibc and Emscripten (crypto.getRandomValues) */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 48;
        for (size_t i = 0; i < sizeof r; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            r[i] = (uint8_t)x;
        }
    }
    for (size_t i = 0; i < sizeof r; i++) snprintf(out + 2 * i, 3, "%02x", r[i]);
}
