/*
 * store_tokens.c - the tokens that let a client upload, delete and (with --token-reads) read,
 * from the file given with --token-file.
 *
 * The file holds one token per line; blank lines and lines starting with '#' are ignored, and
 * spaces around a token are trimmed. A token must be at least 16 characters (a guessable token
 * is refused when the server starts, not discovered later) and printable ASCII. The file is
 * read once, at start; restart the server to change it. Comparison is constant-time in the
 * candidate's bytes (every token is compared in full), so response times do not reveal how much
 * of a token an attacker guessed.
 */
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOKEN_MIN = 16, TOKEN_MAX = 512, TOKENS_MAX = 1024 };

void tokens_free(token_set *t)
{
    for (int i = 0; i < t->n; i++) {
        memset(t->tokens[i], 0, strlen(t->tokens[i]));
        free(t->tokens[i]);
    }
    free(t->tokens);
    t->tokens = NULL;
    t->n = 0;
}

int tokens_load(token_set *t, const char *path, char *err, size_t errlen)
{
    char line[TOKEN_MAX + 8];
    int lineno = 0;
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "cannot read the token file %s: %s", path, strerror(errno));
        return -1;
    }
    t->tokens = calloc(TOKENS_MAX, sizeof *t->tokens);
    if (!t->tokens) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            snprintf(err, errlen, "%s line %d: token longer than %d characters", path, lineno, TOKEN_MAX);
            goto fail;
        }
        char *s = line, *e = line + n;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        *e = '\0';
        if (!*s || *s == '#')
            continue;
        for (char *c = s; *c; c++)
            if (*c <= ' ' || *c > '~') {
                snprintf(err, errlen, "%s line %d: a token is printable ASCII without spaces", path, lineno);
                goto fail;
            }
        if (e - s < TOKEN_MIN) {
            snprintf(err, errlen, "%s line %d: token shorter than %d characters (too easy to guess)", path, lineno,
                     TOKEN_MIN);
            goto fail;
        }
        if (t->n >= TOKENS_MAX) {
            snprintf(err, errlen, "%s: more than %d tokens", path, TOKENS_MAX);
            goto fail;
        }
        if (!(t->tokens[t->n] = strdup(s))) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        t->n++;
    }
    fclose(f);
    if (t->n == 0) {
        snprintf(err, errlen, "the token file %s holds no token", path);
        tokens_free(t);
        return -1;
    }
    return 0;
fail:
    fclose(f);
    tokens_free(t);
    return -1;
}

static bool same(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < lb; i++)
        diff |= (unsigned char)(a[i < la ? i : 0] ^ b[i]);
    return diff == 0;
}

bool tokens_check(const token_set *t, const char *candidate)
{
    bool ok = false;
    if (!candidate)
        return false;
    for (int i = 0; i < t->n; i++)
        ok |= same(t->tokens[i], candidate);
    return ok;
}
