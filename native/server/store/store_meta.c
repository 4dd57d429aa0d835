/*
 * store_meta.c - the sidecar of a stored capture: what its uploader said (project, tags, host,
 * file name, its resume key) and the store's bookkeeping (id, state, bytes, upload time).
 *
 * Why a sidecar at all: the capture's own bytes do not hold the project or the tags, and the
 * index must be rebuildable from the files alone. Why this text form and not JSON: it is written
 * and read by the store only, one field per line, so a damaged sidecar is detectable line by
 * line and the parser stays trivial. Values are escaped (\\, \n, \t, \r, \xNN for other control
 * bytes), so any uploaded text round-trips. Unknown keys are ignored (newer servers may add some).
 *
 *   vor-capture-meta 1
 *   id=20261124-223504-3f9a1c0d
 *   key=...
 *   project=...
 *   tag=k=v          (one line per tag; the first '=' after "tag=" separates key and value)
 *   ...
 */
#include "store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char header_line[] = "vor-capture-meta 1\n";

typedef struct out_text {
    char *p;
    size_t len, cap;
    bool failed;
} out_text;

static void put(out_text *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 1024;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *np = realloc(o->p, cap);
        if (!np) {
            o->failed = true;
            return;
        }
        o->p = np;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void put_escaped(out_text *o, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '\\')
            put(o, "\\\\", 2);
        else if (c == '\n')
            put(o, "\\n", 2);
        else if (c == '\t')
            put(o, "\\t", 2);
        else if (c == '\r')
            put(o, "\\r", 2);
        else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", c);
            put(o, esc, 4);
        } else
            put(o, (const char *)s, 1);
    }
}

static void put_field(out_text *o, const char *key, const char *value)
{
    put(o, key, strlen(key));
    put(o, "=", 1);
    put_escaped(o, value);
    put(o, "\n", 1);
}

static void put_int(out_text *o, const char *key, int64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, v);
    put_field(o, key, num);
}

char *store_meta_format(const capture_meta *m)
{
    out_text o = {0};
    put(&o, header_line, sizeof header_line - 1);
    put_field(&o, "id", m->id);
    put_field(&o, "key", m->key);
    put_field(&o, "project", m->project);
    put_field(&o, "name", m->name);
    put_field(&o, "host", m->host);
    put_field(&o, "peer", m->peer);
    for (int i = 0; i < m->n_tags; i++) {
        put(&o, "tag=", 4);
        put_escaped(&o, m->tags[i].key);
        put(&o, "=", 1);
        put_escaped(&o, m->tags[i].value);
        put(&o, "\n", 1);
    }
    put_int(&o, "uploaded_ms", m->uploaded_ms);
    put_field(&o, "state", store_state_name(m->state));
    put_int(&o, "bytes", (int64_t)m->bytes);
    if (o.failed) {
        free(o.p);
        return NULL;
    }
    return o.p;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescapes s[0..n) into out (cap bytes); stops at `stop` when it is not 0 (*used: bytes read).
 * -1 when it does not fit or is malformed. */
static int unescape(const char *s, size_t n, char stop, char *out, size_t cap, size_t *used)
{
    size_t o = 0, i = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (stop && c == stop)
            break;
        if (c == '\\') {
            if (++i >= n)
                return -1;
            switch (s[i]) {
            case '\\': c = '\\'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'x': {
                if (i + 2 >= n)
                    return -1;
                int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
                if (hi < 0 || lo < 0)
                    return -1;
                c = (char)(hi << 4 | lo);
                i += 2;
                break;
            }
            default:
                return -1;
            }
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    if (used)
        *used = i;
    return 0;
}

static int parse_int(const char *v, int64_t *out)
{
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end)
        return -1;
    *out = x;
    return 0;
}

int store_meta_parse(const char *text, size_t len, capture_meta *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    size_t hl = sizeof header_line - 1;
    if (len < hl || memcmp(text, header_line, hl) != 0) {
        snprintf(err, errlen, "not a capture sidecar");
        return -1;
    }
    bool have_state = false;
    for (size_t pos = hl; pos < len;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + 1;
        if (ll == 0)
            continue;
        const char *eq = memchr(line, '=', ll);
        if (!eq) {
            snprintf(err, errlen, "bad line (no '=')");
            return -1;
        }
        size_t kl = (size_t)(eq - line);
        const char *v = eq + 1;
        size_t vl = ll - kl - 1;
        char value[STORE_FIELD_MAX_BYTES];
        int rc = 0;
#define FIELD(name, dst) else if (kl == sizeof name - 1 && !memcmp(line, name, kl)) \
        rc = unescape(v, vl, 0, dst, sizeof dst, NULL)
        if (kl == 3 && !memcmp(line, "tag", 3)) {
            if (m->n_tags >= STORE_MAX_TAGS) {
                snprintf(err, errlen, "too many tags");
                return -1;
            }
            store_tag *t = &m->tags[m->n_tags];
            size_t used = 0;
            rc = unescape(v, vl, '=', t->key, sizeof t->key, &used);
            if (!rc && used >= vl)
                rc = -1;
            if (!rc)
                rc = unescape(v + used + 1, vl - used - 1, 0, t->value, sizeof t->value, NULL);
            if (!rc)
                m->n_tags++;
        }
        FIELD("id", m->id);
        FIELD("key", m->key);
        FIELD("project", m->project);
        FIELD("name", m->name);
        FIELD("host", m->host);
        FIELD("peer", m->peer);
        else if (kl == 11 && !memcmp(line, "uploaded_ms", 11)) {
            rc = unescape(v, vl, 0, value, sizeof value, NULL);
            if (!rc)
                rc = parse_int(value, &m->uploaded_ms);
        } else if (kl == 5 && !memcmp(line, "bytes", 5)) {
            int64_t b = 0;
            rc = unescape(v, vl, 0, value, sizeof value, NULL);
            if (!rc)
                rc = parse_int(value, &b);
            m->bytes = b < 0 ? 0 : (uint64_t)b;
        } else if (kl == 5 && !memcmp(line, "state", 5)) {
            rc = unescape(v, vl, 0, value, sizeof value, NULL);
            if (!rc)
                rc = store_state_parse(value, &m->state);
            have_state = true;
        }
#undef FIELD
        if (rc) {
            snprintf(err, errlen, "bad value for '%.*s'", (int)(kl > 32 ? 32 : kl), line);
            return -1;
        }
    }
    if (!m->id[0] || !have_state) {
        snprintf(err, errlen, "incomplete sidecar (no id or state)");
        return -1;
    }
    return 0;
}

const char *store_state_name(store_state s)
{
    switch (s) {
    case STORE_UPLOADING: return "uploading";
    case STORE_OPEN: return "open";
    case STORE_COMPLETE: return "complete";
    case STORE_CUT: return "cut";
    }
    return "open";
}

int store_state_parse(const char *text, store_state *out)
{
    static const store_state all[] = {STORE_UPLOADING, STORE_OPEN, STORE_COMPLETE, STORE_CUT};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(text, store_state_name(all[i]))) {
            *out = all[i];
            return 0;
        }
    return -1;
}
