/*
 * store_index.c - the index interface (store.h) on SQLite: one row per stored capture, its tags,
 * per-scope totals (to sort by a scope), and the names of all its scopes in an FTS5 table.
 *
 *   captures(rowid, id, key, project, name, host, peer, uploaded_ms, state, bytes, tags_json,
 *            indexed, producer, process, pid, platform, version_minor, start_ms, frames,
 *            flame_frames, span_ns, ended, top_self, top_total)
 *   tags(cap, k, v)                        cap = captures.rowid; index (k, v, cap)
 *   scopes(cap, name, total_ns, self_ns, calls)    index (name, cap)
 *   scope_text(names)                      FTS5, rowid = captures.rowid (unicode61 words)
 *
 * The index holds nothing the files do not: every row is rebuilt from a sidecar and the
 * capture's own bytes (store.c), so losing index.sqlite costs a re-index, never data. A file
 * that SQLite cannot use is moved aside as index.sqlite.damaged and a new index is built.
 * WAL journal, synchronous=NORMAL: a crash may lose the last transactions, which the next start
 * rebuilds from the sidecars (an index row whose blob is gone, or a blob without a row, is
 * repaired there). All statements run on the server's service thread; a search is one SELECT
 * with bound parameters (user text never becomes SQL), plus one COUNT for the total.
 * Another backend (PostgreSQL) keeps this interface: the schema is plain SQL but for the FTS5
 * table, which becomes a tsvector column with a GIN index (docs/ARCHITECTURE.md).
 */
#include "store.h"
#include "server_internal.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct capture_index {
    sqlite3 *db;
};

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA foreign_keys=OFF;"
    "CREATE TABLE IF NOT EXISTS store_info(k TEXT PRIMARY KEY, v TEXT);"
    "CREATE TABLE IF NOT EXISTS captures("
    " rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, key TEXT, project TEXT NOT NULL DEFAULT '',"
    " name TEXT NOT NULL DEFAULT '', host TEXT NOT NULL DEFAULT '', peer TEXT NOT NULL DEFAULT '',"
    " uploaded_ms INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL, bytes INTEGER NOT NULL DEFAULT 0,"
    " tags_json TEXT NOT NULL DEFAULT '{}', indexed INTEGER NOT NULL DEFAULT 0, producer TEXT, process TEXT,"
    " pid INTEGER, platform TEXT, version_minor INTEGER, start_ms INTEGER, frames INTEGER, flame_frames INTEGER,"
    " span_ns INTEGER, ended INTEGER, top_self TEXT, top_total TEXT);"
    "CREATE INDEX IF NOT EXISTS captures_project ON captures(project);"
    "CREATE UNIQUE INDEX IF NOT EXISTS captures_key ON captures(project, key);"
    "CREATE INDEX IF NOT EXISTS captures_process ON captures(process);"
    "CREATE INDEX IF NOT EXISTS captures_start ON captures(start_ms);"
    "CREATE INDEX IF NOT EXISTS captures_uploaded ON captures(uploaded_ms);"
    /* the default order (date): the expression of the ORDER BY, so a page is an index walk */
    "CREATE INDEX IF NOT EXISTS captures_when ON captures(COALESCE(start_ms, uploaded_ms));"
    "CREATE TABLE IF NOT EXISTS tags(cap INTEGER NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS tags_kv ON tags(k, v, cap);"
    "CREATE INDEX IF NOT EXISTS tags_cap ON tags(cap);"
    "CREATE TABLE IF NOT EXISTS scopes(cap INTEGER NOT NULL, name TEXT NOT NULL, total_ns INTEGER, self_ns INTEGER,"
    " calls INTEGER);"
    "CREATE INDEX IF NOT EXISTS scopes_name ON scopes(name, cap);"
    "CREATE INDEX IF NOT EXISTS scopes_cap ON scopes(cap);"
    "CREATE VIRTUAL TABLE IF NOT EXISTS scope_text USING fts5(names, tokenize='unicode61');"
    "INSERT OR IGNORE INTO store_info VALUES('schema','1');";

static int exec(capture_index *x, const char *sql)
{
    return sqlite3_exec(x->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static capture_index *try_open(const char *path, bool *created, char *err, size_t errlen)
{
    capture_index *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    FILE *probe = fopen(path, "rb");
    *created = probe == NULL;
    if (probe)
        fclose(probe);
    if (sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(x->db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", x->db ? sqlite3_errmsg(x->db) : "cannot open");
        sqlite3_close(x->db);
        free(x);
        return NULL;
    }
    /* A file that opens but whose tables are damaged fails here. */
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(x->db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    if (!ok) {
        snprintf(err, errlen, "%s", "the index fails SQLite's check");
        sqlite3_close(x->db);
        free(x);
        return NULL;
    }
    sqlite3_busy_timeout(x->db, 2000);
    return x;
}

capture_index *index_open(const char *path, bool *created, char *err, size_t errlen)
{
    capture_index *x = try_open(path, created, err, errlen);
    if (x)
        return x;
    /* Not usable: keep it for inspection, start a new one (rebuilt from the files). */
    char aside[4096], side[4096];
    snprintf(aside, sizeof aside, "%s.damaged", path);
    if (rename(path, aside) != 0 && errno != ENOENT)
        return NULL;
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    fprintf(stderr, "vor serve: the store's index could not be used (%s); moved aside to %s, rebuilding\n", err,
            aside);
    x = try_open(path, created, err, errlen);
    if (x)
        *created = true;
    return x;
}

void index_close(capture_index *x)
{
    if (!x)
        return;
    sqlite3_close(x->db);
    free(x);
}

static sqlite3_stmt *prep(capture_index *x, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    return st;
}

static int run(sqlite3_stmt *st)
{
    int rc = st && sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

static int64_t rowid_of(capture_index *x, const char *id)
{
    sqlite3_stmt *st = prep(x, "SELECT rowid FROM captures WHERE id=?");
    int64_t r = -1;
    if (!st)
        return -1;
    bind_text(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW)
        r = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return r;
}

int index_put_meta(capture_index *x, const capture_meta *m)
{
    json_buf tags;
    json_init(&tags, 64 * 1024);
    json_raw(&tags, "{");
    for (int i = 0; i < m->n_tags; i++) {
        if (i)
            json_raw(&tags, ",");
        json_str(&tags, m->tags[i].key);
        json_raw(&tags, ":");
        json_str(&tags, m->tags[i].value);
    }
    json_raw(&tags, "}");
    if (tags.failed || exec(x, "BEGIN")) {
        json_free(&tags);
        return -1;
    }
    sqlite3_stmt *st = prep(x, "INSERT INTO captures(id,key,project,name,host,peer,uploaded_ms,state,bytes,tags_json)"
                               " VALUES(?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET key=excluded.key,"
                               " project=excluded.project, name=excluded.name, host=excluded.host, peer=excluded.peer,"
                               " uploaded_ms=excluded.uploaded_ms, state=excluded.state, bytes=excluded.bytes,"
                               " tags_json=excluded.tags_json,"
                               /* Bytes are coming (a resumed upload): the facts are no longer final. */
                               " indexed=CASE WHEN excluded.state='uploading' THEN 0 ELSE indexed END");
    int rc = -1;
    if (st) {
        bind_text(st, 1, m->id);
        if (m->key[0])
            bind_text(st, 2, m->key);
        bind_text(st, 3, m->project);
        bind_text(st, 4, m->name);
        bind_text(st, 5, m->host);
        bind_text(st, 6, m->peer);
        sqlite3_bind_int64(st, 7, m->uploaded_ms);
        bind_text(st, 8, store_state_name(m->state));
        sqlite3_bind_int64(st, 9, (sqlite3_int64)m->bytes);
        bind_text(st, 10, tags.data);
        rc = run(st);
    }
    json_free(&tags);
    int64_t row = rc == 0 ? rowid_of(x, m->id) : -1;
    if (row < 0)
        rc = -1;
    if (rc == 0) {
        st = prep(x, "DELETE FROM tags WHERE cap=?");
        if (st)
            sqlite3_bind_int64(st, 1, row);
        rc = run(st);
    }
    for (int i = 0; rc == 0 && i < m->n_tags; i++) {
        st = prep(x, "INSERT INTO tags(cap,k,v) VALUES(?,?,?)");
        if (st) {
            sqlite3_bind_int64(st, 1, row);
            bind_text(st, 2, m->tags[i].key);
            bind_text(st, 3, m->tags[i].value);
        }
        rc = run(st);
    }
    if (exec(x, rc == 0 ? "COMMIT" : "ROLLBACK"))
        rc = -1;
    return rc;
}

static void top_json(json_buf *b, const store_top_scope *t, int n)
{
    json_raw(b, "[");
    for (int i = 0; i < n; i++) {
        json_raw(b, i ? ",{\"name\":" : "{\"name\":");
        json_str(b, t[i].name);
        json_raw(b, ",\"total_ns\":");
        json_i64(b, t[i].total_ns);
        json_raw(b, ",\"self_ns\":");
        json_i64(b, t[i].self_ns);
        json_raw(b, ",\"calls\":");
        json_u64(b, t[i].calls);
        json_raw(b, "}");
    }
    json_raw(b, "]");
}

int index_put_facts(capture_index *x, const char *id, const capture_facts *f, bool final)
{
    int64_t row = rowid_of(x, id);
    if (row < 0)
        return -1;
    json_buf ts, tt;
    json_init(&ts, 1 << 20);
    json_init(&tt, 1 << 20);
    top_json(&ts, f->top_self, f->n_top_self);
    top_json(&tt, f->top_total, f->n_top_total);
    int rc = ts.failed || tt.failed || exec(x, "BEGIN") ? -1 : 0;
    if (rc == 0) {
        sqlite3_stmt *st = prep(x, "UPDATE captures SET producer=?, process=?, pid=?, platform=?,"
                                   " version_minor=?, start_ms=?, frames=?, flame_frames=?, span_ns=?, ended=?,"
                                   " top_self=?, top_total=?, indexed=?14 WHERE rowid=?13");
        if (st) {
            bind_text(st, 1, f->producer);
            bind_text(st, 2, f->process);
            sqlite3_bind_int64(st, 3, (sqlite3_int64)f->pid);
            bind_text(st, 4, f->wasm ? "wasm" : "native");
            sqlite3_bind_int(st, 5, (int)f->version_minor);
            sqlite3_bind_int64(st, 6, f->start_ms);
            sqlite3_bind_int64(st, 7, (sqlite3_int64)f->frames);
            sqlite3_bind_int64(st, 8, (sqlite3_int64)f->flame_frames);
            sqlite3_bind_int64(st, 9, f->span_ns);
            sqlite3_bind_int(st, 10, f->ended);
            bind_text(st, 11, ts.data);
            bind_text(st, 12, tt.data);
            sqlite3_bind_int64(st, 13, row);
            sqlite3_bind_int(st, 14, final ? 1 : 0);
        }
        rc = run(st);
    }
    if (rc == 0) {
        sqlite3_stmt *st = prep(x, "DELETE FROM scopes WHERE cap=?");
        if (st)
            sqlite3_bind_int64(st, 1, row);
        rc = run(st);
    }
    sqlite3_stmt *ins = rc == 0 ? prep(x, "INSERT INTO scopes(cap,name,total_ns,self_ns,calls) VALUES(?,?,?,?,?)") : NULL;
    if (rc == 0 && !ins)
        rc = -1;
    for (uint32_t i = 0; rc == 0 && i < f->n_rows; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, row);
        bind_text(ins, 2, f->rows[i].name);
        sqlite3_bind_int64(ins, 3, f->rows[i].total_ns);
        sqlite3_bind_int64(ins, 4, f->rows[i].self_ns);
        sqlite3_bind_int64(ins, 5, (sqlite3_int64)f->rows[i].calls);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = -1;
    }
    sqlite3_finalize(ins);
    if (rc == 0) {
        sqlite3_stmt *st = prep(x, "DELETE FROM scope_text WHERE rowid=?");
        if (st)
            sqlite3_bind_int64(st, 1, row);
        rc = run(st);
    }
    if (rc == 0) {
        sqlite3_stmt *st = prep(x, "INSERT INTO scope_text(rowid, names) VALUES(?,?)");
        if (st) {
            sqlite3_bind_int64(st, 1, row);
            sqlite3_bind_text(st, 2, f->names ? f->names : "", (int)f->names_len, SQLITE_TRANSIENT);
        }
        rc = run(st);
    }
    if (exec(x, rc == 0 ? "COMMIT" : "ROLLBACK"))
        rc = -1;
    json_free(&ts);
    json_free(&tt);
    return rc;
}

int index_remove(capture_index *x, const char *id)
{
    int64_t row = rowid_of(x, id);
    if (row < 0)
        return 0;
    static const char *const sql[] = {"DELETE FROM tags WHERE cap=?", "DELETE FROM scopes WHERE cap=?",
                                      "DELETE FROM scope_text WHERE rowid=?", "DELETE FROM captures WHERE rowid=?"};
    int rc = exec(x, "BEGIN");
    for (size_t i = 0; rc == 0 && i < sizeof sql / sizeof sql[0]; i++) {
        sqlite3_stmt *st = prep(x, sql[i]);
        if (st)
            sqlite3_bind_int64(st, 1, row);
        rc = run(st);
    }
    if (exec(x, rc == 0 ? "COMMIT" : "ROLLBACK"))
        rc = -1;
    return rc;
}

int index_find_key(capture_index *x, const char *project, const char *key, char *id, size_t idlen)
{
    sqlite3_stmt *st = prep(x, "SELECT id FROM captures WHERE project=? AND key=?");
    if (!st)
        return -1;
    bind_text(st, 1, project);
    bind_text(st, 2, key);
    int rc = 0, s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        snprintf(id, idlen, "%s", (const char *)sqlite3_column_text(st, 0));
        rc = 1;
    } else if (s != SQLITE_DONE) {
        rc = -1;
    }
    sqlite3_finalize(st);
    return rc;
}

int index_get_meta(capture_index *x, const char *id, capture_meta *m)
{
    sqlite3_stmt *st = prep(x, "SELECT id,key,project,name,host,peer,uploaded_ms,state,bytes,rowid FROM captures"
                               " WHERE id=?");
    if (!st)
        return -1;
    bind_text(st, 1, id);
    int rc = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        memset(m, 0, sizeof *m);
#define COL(i, dst) snprintf(dst, sizeof dst, "%s", sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "")
        COL(0, m->id);
        COL(1, m->key);
        COL(2, m->project);
        COL(3, m->name);
        COL(4, m->host);
        COL(5, m->peer);
#undef COL
        m->uploaded_ms = sqlite3_column_int64(st, 6);
        store_state_parse((const char *)sqlite3_column_text(st, 7), &m->state);
        m->bytes = (uint64_t)sqlite3_column_int64(st, 8);
        int64_t row = sqlite3_column_int64(st, 9);
        rc = 1;
        sqlite3_stmt *tg = prep(x, "SELECT k,v FROM tags WHERE cap=? ORDER BY rowid");
        if (tg) {
            sqlite3_bind_int64(tg, 1, row);
            while (m->n_tags < STORE_MAX_TAGS && sqlite3_step(tg) == SQLITE_ROW) {
                snprintf(m->tags[m->n_tags].key, sizeof m->tags[0].key, "%s", sqlite3_column_text(tg, 0));
                snprintf(m->tags[m->n_tags].value, sizeof m->tags[0].value, "%s", sqlite3_column_text(tg, 1));
                m->n_tags++;
            }
            sqlite3_finalize(tg);
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int index_total_bytes(capture_index *x, uint64_t *total)
{
    sqlite3_stmt *st = prep(x, "SELECT COALESCE(SUM(bytes),0) FROM captures");
    int rc = st && sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0)
        *total = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

int index_oldest(capture_index *x, bool (*busy)(void *user, const char *id), void *user, char *id, size_t idlen,
                 uint64_t *bytes)
{
    sqlite3_stmt *st = prep(x, "SELECT id, bytes FROM captures ORDER BY uploaded_ms, rowid");
    if (!st)
        return -1;
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *cid = (const char *)sqlite3_column_text(st, 0);
        if (busy && busy(user, cid))
            continue;
        snprintf(id, idlen, "%s", cid);
        *bytes = (uint64_t)sqlite3_column_int64(st, 1);
        rc = 1;
        break;
    }
    sqlite3_finalize(st);
    return rc;
}

int index_each_id(capture_index *x, int (*fn)(void *user, const char *id), void *user)
{
    sqlite3_stmt *st = prep(x, "SELECT id FROM captures");
    if (!st)
        return -1;
    /* Collect first: fn may change the table. */
    size_t n = 0, cap = 64;
    char (*ids)[STORE_ID_BYTES] = malloc(cap * sizeof *ids);
    int rc = ids ? 0 : -1;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            void *np = realloc(ids, cap * 2 * sizeof *ids);
            if (!np) {
                rc = -1;
                break;
            }
            ids = np;
            cap *= 2;
        }
        snprintf(ids[n++], STORE_ID_BYTES, "%s", sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = fn(user, ids[i]);
    free(ids);
    return rc;
}

uint64_t index_count(capture_index *x)
{
    sqlite3_stmt *st = prep(x, "SELECT COUNT(*) FROM captures");
    uint64_t n = 0;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        n = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* ---- search ---- */

/* The FTS5 expression for free text: every word as a quoted prefix term, ANDed. Words are runs
 * of ASCII letters and digits and any non-ASCII bytes (what unicode61 keeps together). */
static int fts_expression(const char *text, char *out, size_t cap)
{
    size_t o = 0;
    int words = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        while (*p && *p < 0x80 && !((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')))
            p++;
        if (!*p)
            break;
        const unsigned char *s = p;
        while (*p && (*p >= 0x80 || (*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')))
            p++;
        size_t n = (size_t)(p - s);
        if (o + n + 12 >= cap)
            return -1;
        if (words++)
            o += (size_t)snprintf(out + o, cap - o, " AND ");
        out[o++] = '"';
        memcpy(out + o, s, n);
        o += n;
        o += (size_t)snprintf(out + o, cap - o, "\"*");
    }
    out[o] = '\0';
    return words;
}

typedef struct sql_text {
    char text[4096];
    size_t len;
    const char *args[2 * STORE_MAX_TAGS + 16]; /* text parameters, in order */
    int64_t iargs[4];
    int n_args;
    char kinds[2 * STORE_MAX_TAGS + 16];       /* 's' text, 'i' integer (index into iargs) */
    int n_iargs;
} sql_text;

static void sql_add(sql_text *s, const char *piece)
{
    size_t n = strlen(piece);
    if (s->len + n < sizeof s->text) {
        memcpy(s->text + s->len, piece, n + 1);
        s->len += n;
    }
}

static void arg_text(sql_text *s, const char *v)
{
    s->kinds[s->n_args] = 's';
    s->args[s->n_args++] = v;
}

static void arg_int(sql_text *s, int64_t v)
{
    s->kinds[s->n_args] = 'i';
    s->args[s->n_args++] = NULL;
    s->iargs[s->n_iargs++] = v;
}

static void bind_all(sqlite3_stmt *st, const sql_text *s)
{
    int ii = 0;
    for (int i = 0; i < s->n_args; i++) {
        if (s->kinds[i] == 's')
            bind_text(st, i + 1, s->args[i]);
        else
            sqlite3_bind_int64(st, i + 1, s->iargs[ii++]);
    }
}

int index_search(capture_index *x, const index_query *q, json_buf *out, bool comma, uint64_t *total_out, char *err,
                 size_t errlen)
{
    sql_text w = {0};
    char fts[2048];
    sql_add(&w, " WHERE 1");
    if (q->sort == SORT_SCOPE_TOTAL) {
        /* The LEFT JOIN's name is the first parameter: it comes before the WHERE clause. */
        arg_text(&w, q->sort_scope);
    }
    if (q->id) {
        sql_add(&w, " AND c.id=?");
        arg_text(&w, q->id);
    }
    if (q->project) {
        sql_add(&w, " AND c.project=?");
        arg_text(&w, q->project);
    }
    if (q->process) {
        sql_add(&w, " AND c.process=?");
        arg_text(&w, q->process);
    }
    if (q->host) {
        sql_add(&w, " AND c.host=?");
        arg_text(&w, q->host);
    }
    if (q->state) {
        sql_add(&w, " AND c.state=?");
        arg_text(&w, q->state);
    }
    for (int i = 0; i < q->n_tags; i++) {
        if (!strcmp(q->tags[i].value, "\x01")) {
            sql_add(&w, " AND EXISTS(SELECT 1 FROM tags t WHERE t.cap=c.rowid AND t.k=?)");
            arg_text(&w, q->tags[i].key);
        } else {
            sql_add(&w, " AND EXISTS(SELECT 1 FROM tags t WHERE t.cap=c.rowid AND t.k=? AND t.v=?)");
            arg_text(&w, q->tags[i].key);
            arg_text(&w, q->tags[i].value);
        }
    }
    if (q->scope) {
        int words = fts_expression(q->scope, fts, sizeof fts);
        if (words <= 0) {
            snprintf(err, errlen, words == 0 ? "scope: no word to search for" : "scope: text too long");
            return -1;
        }
        sql_add(&w, " AND c.rowid IN (SELECT rowid FROM scope_text WHERE scope_text MATCH ?)");
        arg_text(&w, fts);
    }
    if (q->since_ms) {
        sql_add(&w, " AND COALESCE(c.start_ms, c.uploaded_ms) >= ?");
        arg_int(&w, q->since_ms);
    }
    if (q->until_ms) {
        sql_add(&w, " AND COALESCE(c.start_ms, c.uploaded_ms) < ?");
        arg_int(&w, q->until_ms);
    }
    const char *dir = q->ascending ? " ASC" : " DESC";
    char order[256];
    switch (q->sort) {
    case SORT_FRAMES: snprintf(order, sizeof order, " ORDER BY COALESCE(c.frames,0)%s, c.rowid%s", dir, dir); break;
    case SORT_SPAN: snprintf(order, sizeof order, " ORDER BY COALESCE(c.span_ns,0)%s, c.rowid%s", dir, dir); break;
    case SORT_UPLOADED: snprintf(order, sizeof order, " ORDER BY c.uploaded_ms%s, c.rowid%s", dir, dir); break;
    case SORT_SCOPE_TOTAL:
        snprintf(order, sizeof order, " ORDER BY COALESCE(s.total_ns,0)%s, c.rowid%s", dir, dir);
        break;
    default:
        snprintf(order, sizeof order, " ORDER BY COALESCE(c.start_ms, c.uploaded_ms)%s, c.rowid%s", dir, dir);
    }
    const char *from = q->sort == SORT_SCOPE_TOTAL ? " FROM captures c LEFT JOIN scopes s ON s.cap=c.rowid AND s.name=?"
                                                   : " FROM captures c";
    char sql[8192];
    snprintf(sql, sizeof sql,
             "SELECT c.id,c.project,c.name,c.host,c.uploaded_ms,c.state,c.bytes,c.tags_json,c.indexed,c.producer,"
             "c.process,c.pid,c.platform,c.start_ms,c.frames,c.flame_frames,c.span_ns,c.ended,c.top_self,c.top_total%s"
             "%s%s%s LIMIT %u OFFSET %u",
             q->sort == SORT_SCOPE_TOTAL ? ",s.total_ns,s.self_ns,s.calls" : "", from, w.text, order, q->limit, q->offset);
    sqlite3_stmt *st = prep(x, sql);
    if (!st) {
        snprintf(err, errlen, "index query failed: %s", sqlite3_errmsg(x->db));
        return -1;
    }
    bind_all(st, &w);
    int n = comma ? 1 : 0, s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
#define TXT(i) (sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "")
#define NUL(i) (sqlite3_column_type(st, i) == SQLITE_NULL)
        const char *id = TXT(0);
        json_raw(out, n++ ? ",{\"id\":" : "{\"id\":");
        json_str(out, id);
        json_raw(out, ",\"stored\":true,\"project\":");
        json_str(out, TXT(1));
        json_raw(out, ",\"name\":");
        json_str(out, TXT(2));
        json_raw(out, ",\"host\":");
        json_str(out, TXT(3));
        json_raw(out, ",\"uploaded_ms\":");
        json_i64(out, sqlite3_column_int64(st, 4));
        json_raw(out, ",\"upload\":");
        json_str(out, TXT(5));
        json_raw(out, ",\"state\":\"capture\",\"bytes\":");
        json_i64(out, sqlite3_column_int64(st, 6));
        json_raw(out, ",\"tags\":");
        json_raw(out, TXT(7));
        json_raw(out, ",\"indexed\":");
        /* indexed: the final facts are in; the facts so far of a live upload are shown before. */
        json_raw(out, sqlite3_column_int(st, 8) ? "true" : "false");
        if (!NUL(9)) {
            json_raw(out, ",\"producer\":");
            json_str(out, TXT(9));
            json_raw(out, ",\"process\":");
            json_str(out, TXT(10));
            json_raw(out, ",\"pid\":");
            json_i64(out, sqlite3_column_int64(st, 11));
            json_raw(out, ",\"platform\":");
            json_str(out, TXT(12));
            json_raw(out, ",\"start_ms\":");
            json_i64(out, sqlite3_column_int64(st, 13));
            json_raw(out, ",\"frames\":");
            json_i64(out, sqlite3_column_int64(st, 14));
            json_raw(out, ",\"flame_frames\":");
            json_i64(out, sqlite3_column_int64(st, 15));
            json_raw(out, ",\"span_ns\":");
            json_i64(out, sqlite3_column_int64(st, 16));
            json_raw(out, ",\"ended\":");
            json_raw(out, sqlite3_column_int(st, 17) ? "\"properly\"" : "\"cut\"");
            json_raw(out, ",\"top_self\":");
            json_raw(out, NUL(18) ? "[]" : TXT(18));
            json_raw(out, ",\"top_total\":");
            json_raw(out, NUL(19) ? "[]" : TXT(19));
        }
        if (q->sort == SORT_SCOPE_TOTAL) {
            json_raw(out, ",\"sort_scope\":{\"name\":");
            json_str(out, q->sort_scope);
            json_raw(out, ",\"total_ns\":");
            json_i64(out, NUL(20) ? 0 : sqlite3_column_int64(st, 20));
            json_raw(out, ",\"self_ns\":");
            json_i64(out, NUL(21) ? 0 : sqlite3_column_int64(st, 21));
            json_raw(out, ",\"calls\":");
            json_i64(out, NUL(22) ? 0 : sqlite3_column_int64(st, 22));
            json_raw(out, "}");
        }
        json_raw(out, ",\"ws\":\"/capture/");
        json_raw(out, id); /* ids are [0-9a-z-] */
        json_raw(out, "\"}");
#undef TXT
#undef NUL
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE) {
        snprintf(err, errlen, "index query failed: %s", sqlite3_errmsg(x->db));
        return -1;
    }
    /* The total without LIMIT, for paging. */
    snprintf(sql, sizeof sql, "SELECT COUNT(*)%s%s", from, w.text);
    st = prep(x, sql);
    int64_t total = 0;
    if (st) {
        bind_all(st, &w);
        if (sqlite3_step(st) == SQLITE_ROW)
            total = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    *total_out = (uint64_t)total;
    return 0;
}
