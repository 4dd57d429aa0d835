/*
 * ws_message.c - understands the control messages a viewer may send.
 *
 * The only message is {"type":"follow","value":true|false}, but the parser validates the whole
 * text as strict JSON (RFC 8259) so "bad JSON" and "valid JSON we do not understand" get
 * different, precise error replies. A small recursive-descent validator is enough: messages are
 * at most SERVER_CLIENT_MSG_MAX_BYTES and nesting is capped at MAX_DEPTH, so it cannot recurse
 * or loop without bound. Only top-level "type" and "value" are interpreted; other members are
 * ignored (room for later fields). Duplicate keys: the last one wins, as in JSON.parse.
 * Keys are compared as written (an escaped "typ\u0065" is not "type").
 * UTF-8 validity of text frames is checked by lws (LWS_SERVER_OPTION_VALIDATE_UTF8).
 */
#include "server_internal.h"

#include <string.h>

enum { MAX_DEPTH = 16 };

typedef enum value_kind { V_OTHER, V_STRING, V_TRUE, V_FALSE } value_kind;

typedef struct parser {
    const char *p, *end;
} parser;

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Parses a string at ps->p (on the opening quote); raw, rawlen: the bytes between the quotes. */
static bool parse_string(parser *ps, const char **raw, size_t *rawlen)
{
    if (ps->p >= ps->end || *ps->p != '"')
        return false;
    const char *start = ++ps->p;
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            *raw = start;
            *rawlen = (size_t)(ps->p - start);
            ps->p++;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (++ps->p >= ps->end)
                return false;
            switch (*ps->p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                ps->p++;
                break;
            case 'u':
                if (ps->end - ps->p < 5 || !is_hex(ps->p[1]) || !is_hex(ps->p[2]) ||
                    !is_hex(ps->p[3]) || !is_hex(ps->p[4]))
                    return false;
                ps->p += 5;
                break;
            default:
                return false;
            }
        } else {
            ps->p++;
        }
    }
    return false;
}

static bool parse_digits(parser *ps)
{
    const char *s = ps->p;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
        ps->p++;
    return ps->p > s;
}

static bool parse_number(parser *ps)
{
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p < ps->end && *ps->p == '0')
        ps->p++;
    else if (!parse_digits(ps))
        return false;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (!parse_digits(ps))
            return false;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!parse_digits(ps))
            return false;
    }
    return true;
}

static bool literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static bool parse_value(parser *ps, int depth, value_kind *kind, const char **raw, size_t *rawlen);

/* Object or array body after the opening bracket; on the top-level object, type/value collect. */
static bool parse_container(parser *ps, int depth, bool object, const char **type, size_t *typelen,
                            value_kind *value)
{
    skip_ws(ps);
    char close = object ? '}' : ']';
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        const char *key = NULL;
        size_t keylen = 0;
        skip_ws(ps);
        if (object) {
            if (!parse_string(ps, &key, &keylen))
                return false;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return false;
            ps->p++;
            skip_ws(ps);
        }
        value_kind k = V_OTHER;
        const char *raw = NULL;
        size_t rawlen = 0;
        if (!parse_value(ps, depth + 1, &k, &raw, &rawlen))
            return false;
        if (object && type && keylen == 4 && !memcmp(key, "type", 4)) {
            *type = k == V_STRING ? raw : NULL;
            *typelen = k == V_STRING ? rawlen : 0;
        }
        if (object && value && keylen == 5 && !memcmp(key, "value", 5))
            *value = k;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return false;
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return true;
        }
        return false;
    }
}

static bool parse_value(parser *ps, int depth, value_kind *kind, const char **raw, size_t *rawlen)
{
    if (depth > MAX_DEPTH || ps->p >= ps->end)
        return false;
    *kind = V_OTHER;
    switch (*ps->p) {
    case '{':
        ps->p++;
        return parse_container(ps, depth, true, NULL, NULL, NULL);
    case '[':
        ps->p++;
        return parse_container(ps, depth, false, NULL, NULL, NULL);
    case '"':
        *kind = V_STRING;
        return parse_string(ps, raw, rawlen);
    case 't':
        *kind = V_TRUE;
        return literal(ps, "true");
    case 'f':
        *kind = V_FALSE;
        return literal(ps, "false");
    case 'n':
        return literal(ps, "null");
    default:
        return parse_number(ps);
    }
}

client_msg_kind client_msg_parse(const char *text, size_t len, client_msg *out)
{
    parser ps = {text, text + len};
    const char *type = NULL;
    size_t typelen = 0;
    value_kind value = V_OTHER;
    bool is_object;

    memset(out, 0, sizeof *out);
    skip_ws(&ps);
    if (ps.p >= ps.end)
        return out->kind = CLIENT_MSG_BAD_JSON;
    is_object = *ps.p == '{';
    if (is_object) {
        ps.p++;
        if (!parse_container(&ps, 1, true, &type, &typelen, &value))
            return out->kind = CLIENT_MSG_BAD_JSON;
    } else {
        value_kind k;
        const char *raw;
        size_t rawlen;
        if (!parse_value(&ps, 1, &k, &raw, &rawlen))
            return out->kind = CLIENT_MSG_BAD_JSON;
    }
    skip_ws(&ps);
    if (ps.p != ps.end)
        return out->kind = CLIENT_MSG_BAD_JSON;
    if (!is_object)
        return out->kind = CLIENT_MSG_NOT_OBJECT;
    if (!type)
        return out->kind = CLIENT_MSG_NO_TYPE;
    if (typelen != 6 || memcmp(type, "follow", 6) != 0)
        return out->kind = CLIENT_MSG_UNKNOWN_TYPE;
    if (value != V_TRUE && value != V_FALSE)
        return out->kind = CLIENT_MSG_BAD_VALUE;
    out->follow = value == V_TRUE;
    return out->kind = CLIENT_MSG_FOLLOW;
}

const char *client_msg_problem(client_msg_kind kind)
{
    switch (kind) {
    case CLIENT_MSG_FOLLOW: return "ok";
    case CLIENT_MSG_BAD_JSON: return "message is not valid JSON";
    case CLIENT_MSG_NOT_OBJECT: return "message must be a JSON object";
    case CLIENT_MSG_NO_TYPE: return "message has no string \"type\"";
    case CLIENT_MSG_UNKNOWN_TYPE: return "unknown message type (expected \"follow\")";
    case CLIENT_MSG_BAD_VALUE: return "\"follow\" needs \"value\": true or false";
    }
    return "bad message";
}
