/*
 * store_query.c - the query string of GET /api/captures (and `vor list`) -> an index query.
 *
 *   project=P  process=X  host=H  state=complete|cut|open|uploading  id=ID     exact matches
 *   tag=k=v    (repeatable: every tag must match; "tag=k" alone: the tag is present)
 *   scope=TEXT full text over the names of every scope in a capture (SQLite FTS5): each word
 *              must start a word of some scope name ("mat row" finds "matvec row block")
 *   since=T  until=T   the capture's wall-clock start in [since, until); T is 2026-11-24,
 *              2026-11-24T22:35[:04][Z] (UTC) or milliseconds since 1970
 *   sort=date|uploaded|frames|span|scope:NAME   (NAME: a scope's exact name, by its total time)
 *   order=desc|asc     (default desc: newest, most frames, longest, largest total first)
 *   limit=N (1..1000, default 100)  offset=N
 *   token=T    the read token (--token-reads); not part of the query
 * Values are URL-decoded (%XX, '+' for a space). An unknown parameter or a bad value is an
 * error naming it: a typo must not silently widen a search.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int hexdig(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes s[0..n) into out; returns bytes written or -1 (bad escape, NUL, no room). */
static long url_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '+')
            c = ' ';
        else if (c == '%') {
            if (i + 2 >= n)
                return -1;
            int hi = hexdig(s[i + 1]), lo = hexdig(s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            c = (char)(hi << 4 | lo);
            i += 2;
        }
        if (c == '\0' || o + 1 >= cap)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return (long)o;
}

static int days_from_civil(int y, unsigned m, unsigned d, int64_t *days)
{
    if (m < 1 || m > 12 || d < 1 || d > 31)
        return -1;
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *days = era * 146097 + (int64_t)doe - 719468;
    return 0;
}

int store_parse_time_ms(const char *text, int64_t *ms)
{
    char *end = NULL;
    if (!*text)
        return -1;
    if (strspn(text, "0123456789") == strlen(text) && strlen(text) <= 15) {
        *ms = strtoll(text, &end, 10);
        return 0;
    }
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, n = 0;
    if (sscanf(text, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
        return -1;
    const char *p = text + n;
    if (*p == 'T' || *p == ' ') {
        int k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k) != 2 || k != 5)
            return -1;
        p += 1 + k;
        if (*p == ':') {
            if (sscanf(p + 1, "%2d%n", &s, &k) != 1 || k != 2)
                return -1;
            p += 3;
        }
        if (*p == 'Z')
            p++;
    }
    if (*p || h > 23 || mi > 59 || s > 60)
        return -1;
    int64_t days;
    if (days_from_civil(y, (unsigned)mo, (unsigned)d, &days))
        return -1;
    *ms = ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)s * 1000;
    return 0;
}

static int bad(char *err, size_t errlen, const char *fmt, const char *what)
{
    snprintf(err, errlen, fmt, what);
    return -1;
}

int store_query_parse(const char *query, index_query *q, char *buf, size_t buflen, char *err, size_t errlen)
{
    size_t used = 0;
    memset(q, 0, sizeof *q);
    q->limit = 100;
    if (!query)
        return 0;
    if (*query == '?')
        query++;
    for (const char *p = query; *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        char key[32];
        if (len == 0) {
            p += amp ? 1 : 0;
            continue;
        }
        size_t kl = eq ? (size_t)(eq - p) : len;
        if (url_decode(p, kl, key, sizeof key) < 0)
            return bad(err, errlen, "bad query parameter name%s", "");
        char *val = buf + used;
        long vl = eq ? url_decode(eq + 1, len - kl - 1, val, buflen - used) : (val[0] = '\0', 0);
        if (vl < 0)
            return bad(err, errlen, "bad value for '%s' (URL encoding, or too long)", key);
        used += (size_t)vl + 1;
        p += len + (amp ? 1 : 0);
        if (!strcmp(key, "project"))
            q->project = val;
        else if (!strcmp(key, "process"))
            q->process = val;
        else if (!strcmp(key, "host"))
            q->host = val;
        else if (!strcmp(key, "id"))
            q->id = val;
        else if (!strcmp(key, "state")) {
            store_state st;
            if (store_state_parse(val, &st))
                return bad(err, errlen, "state: '%s' is not uploading, open, complete or cut", val);
            q->state = val;
        } else if (!strcmp(key, "scope"))
            q->scope = *val ? val : NULL;
        else if (!strcmp(key, "tag")) {
            if (q->n_tags >= STORE_MAX_TAGS)
                return bad(err, errlen, "too many tag filters%s", "");
            char *e = strchr(val, '=');
            store_tag *t = &q->tags[q->n_tags];
            size_t klen = e ? (size_t)(e - val) : strlen(val);
            if (klen == 0 || klen >= sizeof t->key || (e && strlen(e + 1) >= sizeof t->value))
                return bad(err, errlen, "tag: '%s' is not key=value", val);
            memcpy(t->key, val, klen);
            t->key[klen] = '\0';
            /* "tag=k": presence only, marked by a value no tag has (a lone 0x01). */
            snprintf(t->value, sizeof t->value, "%s", e ? e + 1 : "\x01");
            q->n_tags++;
        } else if (!strcmp(key, "since") || !strcmp(key, "until")) {
            int64_t ms;
            if (store_parse_time_ms(val, &ms))
                return bad(err, errlen, "bad date '%s' (2026-11-24, 2026-11-24T22:35:04Z or ms since 1970)", val);
            if (key[0] == 's')
                q->since_ms = ms;
            else
                q->until_ms = ms;
        } else if (!strcmp(key, "sort")) {
            if (!strcmp(val, "date"))
                q->sort = SORT_DATE;
            else if (!strcmp(val, "uploaded"))
                q->sort = SORT_UPLOADED;
            else if (!strcmp(val, "frames"))
                q->sort = SORT_FRAMES;
            else if (!strcmp(val, "span"))
                q->sort = SORT_SPAN;
            else if (!strncmp(val, "scope:", 6) && val[6]) {
                q->sort = SORT_SCOPE_TOTAL;
                q->sort_scope = val + 6;
            } else
                return bad(err, errlen, "sort: '%s' is not date, uploaded, frames, span or scope:NAME", val);
        } else if (!strcmp(key, "order")) {
            if (strcmp(val, "asc") && strcmp(val, "desc"))
                return bad(err, errlen, "order: '%s' is not asc or desc", val);
            q->ascending = val[0] == 'a';
        } else if (!strcmp(key, "limit") || !strcmp(key, "offset")) {
            char *end = NULL;
            unsigned long v = strtoul(val, &end, 10);
            if (!*val || *end || strspn(val, "0123456789") != strlen(val) || v > 100000000ul ||
                (key[0] == 'l' && (v < 1 || v > 1000)))
                return bad(err, errlen, key[0] == 'l' ? "limit: '%s' is not 1..1000" : "offset: '%s' is not a count", val);
            if (key[0] == 'l')
                q->limit = (uint32_t)v;
            else
                q->offset = (uint32_t)v;
        } else if (!strcmp(key, "token")) {
            /* authentication, read by the caller */
        } else {
            return bad(err, errlen, "unknown query parameter '%s' (project, tag, process, host, state, id, "
                                    "scope, since, until, sort, order, limit, offset)", key);
        }
    }
    return 0;
}
