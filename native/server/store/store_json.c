/*
 * store_json.c - parses the small JSON objects an uploader sends ({"type":"hello",...}).
 *
 * The viewer's parser (ws_message.c) only validates and picks two known members; an upload's
 * hello carries text the store keeps (project, tags, host, name, token), so this one decodes
 * strings (escapes, \u surrogate pairs -> UTF-8) into a fixed arena and keeps every member.
 * Accepted: one object whose values are strings, numbers, true, false, null, or objects whose
 * values are strings (the tags). Everything else (arrays, deeper nesting, trailing text,
 * unpaired surrogates, control characters, NUL in a string) is refused with a reason. Bounded:
 * at most 64 members and 8 KiB of decoded text; no recursion beyond one level.
 */
#include "store.h"
#include "server_internal.h" /* utf8_valid */

#include <stdio.h>
#include <string.h>

typedef struct jp {
    const char *p, *end;
    json_object *o;
    const char *why;
} jp;

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool fail(jp *j, const char *why)
{
    if (!j->why)
        j->why = why;
    return false;
}

static bool put_byte(jp *j, unsigned char c)
{
    if (j->o->arena_used + 1 >= sizeof j->o->arena)
        return fail(j, "message too large");
    j->o->arena[j->o->arena_used++] = (char)c;
    return true;
}

static bool put_cp(jp *j, unsigned long cp)
{
    if (cp < 0x80)
        return put_byte(j, (unsigned char)cp);
    if (cp < 0x800)
        return put_byte(j, (unsigned char)(0xc0 | cp >> 6)) && put_byte(j, (unsigned char)(0x80 | (cp & 0x3f)));
    if (cp < 0x10000)
        return put_byte(j, (unsigned char)(0xe0 | cp >> 12)) && put_byte(j, (unsigned char)(0x80 | ((cp >> 6) & 0x3f))) &&
               put_byte(j, (unsigned char)(0x80 | (cp & 0x3f)));
    return put_byte(j, (unsigned char)(0xf0 | cp >> 18)) && put_byte(j, (unsigned char)(0x80 | ((cp >> 12) & 0x3f))) &&
           put_byte(j, (unsigned char)(0x80 | ((cp >> 6) & 0x3f))) && put_byte(j, (unsigned char)(0x80 | (cp & 0x3f)));
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/* A string at j->p; its decoded, NUL-terminated copy goes into the arena (*out). */
static bool string(jp *j, const char **out)
{
    if (j->p >= j->end || *j->p != '"')
        return fail(j, "expected a string");
    j->p++;
    const char *start = j->o->arena + j->o->arena_used;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20)
            return fail(j, "control character in a string");
        if (c != '\\') {
            if (!put_byte(j, c))
                return false;
            continue;
        }
        if (j->p >= j->end)
            return fail(j, "unterminated string");
        char e = *j->p++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (!put_byte(j, (unsigned char)decoded[simple - "\"\\/bfnrt"]))
                return false;
            continue;
        }
        if (e != 'u' || j->end - j->p < 4)
            return fail(j, "bad escape in a string");
        int cp = hex4(j->p);
        if (cp < 0)
            return fail(j, "bad \\u escape");
        j->p += 4;
        unsigned long full = (unsigned long)cp;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            int lo = j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' ? hex4(j->p + 2) : -1;
            if (lo < 0xdc00 || lo > 0xdfff)
                return fail(j, "unpaired surrogate in a string");
            j->p += 6;
            full = 0x10000 + (((unsigned long)cp - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return fail(j, "unpaired surrogate in a string");
        }
        if (full == 0)
            return fail(j, "NUL in a string");
        if (!put_cp(j, full))
            return false;
    }
    if (j->p >= j->end)
        return fail(j, "unterminated string");
    j->p++;
    if (!put_byte(j, 0))
        return false;
    if (!utf8_valid((const unsigned char *)start, strlen(start)))
        return fail(j, "invalid UTF-8 in a string");
    *out = start;
    return true;
}

static bool number(jp *j, const char **out)
{
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
        return fail(j, "bad value");
    if (*j->p == '0')
        j->p++;
    else
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return fail(j, "bad number");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return fail(j, "bad number");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    const char *start = j->o->arena + j->o->arena_used;
    for (const char *q = s; q < j->p; q++)
        if (!put_byte(j, (unsigned char)*q))
            return false;
    if (!put_byte(j, 0))
        return false;
    *out = start;
    return true;
}

static bool literal(jp *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return fail(j, "bad value");
    j->p += n;
    return true;
}

static json_member *new_member(jp *j)
{
    if (j->o->n >= (int)(sizeof j->o->members / sizeof j->o->members[0])) {
        fail(j, "too many members");
        return NULL;
    }
    json_member *m = &j->o->members[j->o->n++];
    memset(m, 0, sizeof *m);
    return m;
}

/* An object at j->p; nested: its values must be strings. */
static bool object(jp *j, bool nested, int *first, int *count)
{
    ws(j);
    if (j->p >= j->end || *j->p != '{')
        return fail(j, nested ? "expected an object of strings" : "not a JSON object");
    j->p++;
    ws(j);
    *count = 0;
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return true;
    }
    /* Top-level members are stored first; a nested object's members follow its own. */
    for (;;) {
        ws(j);
        const char *key;
        if (!string(j, &key))
            return false;
        ws(j);
        if (j->p >= j->end || *j->p != ':')
            return fail(j, "expected ':'");
        j->p++;
        ws(j);
        json_member *m = new_member(j);
        if (!m)
            return false;
        if (*count == 0)
            *first = (int)(m - j->o->members);
        (*count)++;
        m->key = key;
        if (j->p >= j->end)
            return fail(j, "truncated JSON");
        char c = *j->p;
        if (c == '"') {
            m->kind = 's';
            if (!string(j, &m->str))
                return false;
        } else if (nested) {
            return fail(j, "tag values must be strings");
        } else if (c == '{') {
            int idx = (int)(m - j->o->members);
            int f = 0, cnt = 0;
            /* Members of the nested object are appended after this one. */
            if (!object(j, true, &f, &cnt))
                return false;
            j->o->members[idx].kind = 'o';
            j->o->members[idx].first_child = cnt ? f : idx + 1;
            j->o->members[idx].n_children = cnt;
            /* The nested members occupy slots: top-level counting skips them via kind. */
        } else if (c == 't') {
            m->kind = 't';
            if (!literal(j, "true"))
                return false;
        } else if (c == 'f') {
            m->kind = 'f';
            if (!literal(j, "false"))
                return false;
        } else if (c == 'n') {
            m->kind = 'z';
            if (!literal(j, "null"))
                return false;
        } else if (c == '[') {
            return fail(j, "arrays are not accepted here");
        } else {
            m->kind = 'n';
            if (!number(j, &m->str))
                return false;
        }
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            return true;
        }
        return fail(j, "expected ',' or '}'");
    }
}

int store_json_parse(const char *text, size_t len, json_object *o, char *err, size_t errlen)
{
    jp j = {text, text + len, o, NULL};
    int first = 0, count = 0;
    o->n = 0;
    o->arena_used = 0;
    bool ok = object(&j, false, &first, &count);
    if (ok) {
        ws(&j);
        if (j.p != j.end)
            ok = fail(&j, "text after the JSON object");
    }
    if (!ok) {
        snprintf(err, errlen, "%s", j.why ? j.why : "bad JSON");
        return -1;
    }
    /* Mark nested members so lookups see top-level members only. */
    for (int i = 0; i < o->n; i++)
        if (o->members[i].kind == 'o')
            for (int k = 0; k < o->members[i].n_children; k++)
                o->members[o->members[i].first_child + k].kind = 'S';
    return 0;
}

const json_member *store_json_get(const json_object *o, const char *key)
{
    const json_member *found = NULL;
    for (int i = 0; i < o->n; i++)
        if (o->members[i].kind != 'S' && !strcmp(o->members[i].key, key))
            found = &o->members[i]; /* the last one wins, as in JSON.parse */
    return found;
}
