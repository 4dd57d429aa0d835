/* bench_store.c: figures for the profile store (docs/PERFORMANCE.md, "Profile store").
 *
 *     bench_store [CAPTURE_MB]        default 128 (VOR_BENCH_STORE_MB); 1024 for the 1 GB figure
 *     VOR_BENCH_STORE_SEARCH_ONLY=1 bench_store     the search figures alone
 *
 * 1. A flame capture of about CAPTURE_MB is written by this program itself, run again as a
 *    child with VOR_RECORD set (49 scopes per frame, as bench_cli's), unless VOR_BENCH_CAPTURE
 *    names one to use. Not kept.
 * 2. Upload over loopback: the real server (vor_server_run on a thread, --store in a temporary
 *    directory) and the real client (the core's websocket client, as `vor upload` uses it):
 *    MB/s from the first byte sent to the server's "done" (every record checked and written).
 *    Target >= 200 MB/s.
 * 3. Indexing that capture (store_index_file: what the indexer thread does) against
 *    `vor summary` on it (the binary beside this one), same run: ratio, target <= 1.
 * 4. Search over 10,000 stored captures: an index filled with 10,000 entries (50 scope names
 *    each, tags, projects), then the searches the captures page makes; median of 20 each through
 *    the index interface. Target <= 50 ms.
 * Prints figures, asserts nothing. Timings on this shared machine are noisy: medians, ratios.
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/bench_util.h"
#include "server.h"
#include "server_internal.h"
#include "store.h"
#include "upload_client.h"
#include "vor/vor.h"

extern char **environ;

/* ---- 1. the capture ---- */

static void write_frames(uint64_t bytes_wanted, const char *path) {
    static vor_site outer = VOR_SITE_INIT("frame"), mid = VOR_SITE_INIT("system update"),
                    leaf = VOR_SITE_INIT("inner work");
    vor_enable();
    for (uint64_t i = 0;; i++) {
        if (vor_scope_begin(&outer)) {
            for (int a = 0; a < 8; a++)
                if (vor_scope_begin(&mid)) {
                    for (int b = 0; b < 5; b++)
                        if (vor_scope_begin(&leaf)) vor_scope_end();
                    vor_scope_end();
                }
            vor_scope_end();
        }
        vor_record_metric("step", (double)i);
        vor_frame_mark();
        if ((i & 1023) == 0) {
            struct stat st;
            if (stat(path, &st) == 0 && (uint64_t)st.st_size >= bytes_wanted) break;
        }
    }
    vor_shutdown();
}

static int spawn_wait(char *const argv[], char *const envp[]) {
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- 2. upload ---- */

static int port_ready;
static void on_ready(void *user, const char *host, int port) {
    (void)user;
    (void)host;
    __atomic_store_n(&port_ready, port, __ATOMIC_RELEASE);
}

static void *serve(void *arg) {
    vor_server_run(arg);
    return NULL;
}

static double upload_mbs(const char *capture, const char *store_dir) {
    vor_server_options o;
    memset(&o, 0, sizeof o);
    o.port = VOR_SERVER_PORT_ANY;
    o.store_dir = store_dir;
    o.site_dir = store_dir;
    o.on_ready = on_ready;
    pthread_t t;
    pthread_create(&t, NULL, serve, &o);
    while (!__atomic_load_n(&port_ready, __ATOMIC_ACQUIRE)) usleep(1000);
    char url[64], err[300], hello[512], text[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port_ready);
    vor_url u;
    vor_url_parse(url, &u, err, sizeof err);
    FILE *f = fopen(capture, "rb");
    size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    vor_ws *ws = vor_ws_connect(&u, "/upload", "vor-upload", 5000, err, sizeof err);
    double mbs = 0;
    if (!ws || !f || !buf) {
        fprintf(stderr, "bench_store: %s\n", ws ? "cannot read the capture" : err);
        goto out;
    }
    vor_upload_hello h = {"benchmarkupload01", "bench", "big.vor", "bench", NULL, NULL};
    vor_upload_hello_json(&h, hello, sizeof hello, err, sizeof err);
    int code = 0;
    vor_ws_send(ws, 0, hello, strlen(hello), 5000);
    vor_ws_recv(ws, text, sizeof text, 5000, &code);
    uint64_t total = 0, t0 = now_ns();
    size_t n;
    while ((n = fread(buf, 1, chunk, f)) > 0) {
        if (vor_ws_send(ws, 1, buf, n, 30000) != 0) break;
        total += n;
        while (vor_ws_recv(ws, text, sizeof text, 0, &code) == 1) {
        }
    }
    vor_upload_msg m = {0};
    while (m.type != VOR_UPLOAD_MSG_DONE && vor_ws_recv(ws, text, sizeof text, 30000, &code) == 1)
        vor_upload_msg_parse(text, &m);
    double s = (double)(now_ns() - t0) / 1e9;
    if (m.type != VOR_UPLOAD_MSG_DONE || m.bytes != total)
        fprintf(stderr, "bench_store: upload did not complete (%s)\n", text);
    mbs = (double)total / 1e6 / s;
out:
    vor_ws_close(ws, 1000);
    if (f) fclose(f);
    free(buf);
    vor_server_request_stop();
    pthread_join(t, NULL);
    return mbs;
}

/* ---- 4. search ---- */

static double search_ms(const char *dir, int captures) {
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/bench-index.sqlite", dir);
    bool created;
    capture_index *x = index_open(path, &created, err, sizeof err);
    if (!x) return -1;
    static const char *const words[] = {"physics", "render", "collide", "matvec", "upload", "decode", "layout",
                                        "shadow",  "audio",  "network", "parse",  "sort",   "hash",   "compress"};
    capture_facts f;
    memset(&f, 0, sizeof f);
    f.names = malloc(50 * 40);
    f.rows = calloc(50, sizeof *f.rows);
    for (int i = 0; i < captures; i++) {
        capture_meta m;
        memset(&m, 0, sizeof m);
        snprintf(m.id, sizeof m.id, "20260101-000000-%08x", i);
        snprintf(m.key, sizeof m.key, "key%08d", i);
        snprintf(m.project, sizeof m.project, "project%d", i % 20);
        m.n_tags = 2;
        snprintf(m.tags[0].key, sizeof m.tags[0].key, "branch");
        snprintf(m.tags[0].value, sizeof m.tags[0].value, "b%d", i % 7);
        snprintf(m.tags[1].key, sizeof m.tags[1].key, "host");
        snprintf(m.tags[1].value, sizeof m.tags[1].value, "h%d", i % 13);
        m.uploaded_ms = 1795000000000ll + i * 60000ll;
        m.state = STORE_COMPLETE;
        m.bytes = 1000000 + (uint64_t)i;
        index_put_meta(x, &m);
        f.names_len = 0;
        for (int s = 0; s < 50; s++) {
            int n = snprintf(f.rows[s].name, sizeof f.rows[s].name, "%s %s %d", words[(i + s) % 14], words[(s * 5) % 14],
                             s % 9);
            memcpy(f.names + f.names_len, f.rows[s].name, (size_t)n);
            f.names_len += (size_t)n;
            f.names[f.names_len++] = '\n';
            f.rows[s].total_ns = (int64_t)(i * 7 + s) * 1000;
        }
        f.names[f.names_len] = '\0';
        f.n_rows = 50;
        f.frames = (uint64_t)(i % 1000) * 10;
        f.span_ns = i * 1000000ll;
        f.start_ms = m.uploaded_ms - 5000;
        snprintf(f.process, sizeof f.process, "app%d", i % 5);
        index_put_facts(x, m.id, &f, true);
    }
    static const char *const queries[] = {"", "project=project3", "scope=matv", "scope=render%20shadow&project=project7",
                                          "tag=branch%3Db3&sort=frames", "sort=scope:matvec%20physics%200",
                                          "since=2026-11-20&until=2027-01-01&sort=span&order=asc"};
    double worst = 0;
    for (size_t qi = 0; qi < sizeof queries / sizeof queries[0]; qi++) {
        double t[20];
        for (int r = 0; r < 20; r++) {
            index_query q;
            char qb[4096];
            store_query_parse(queries[qi], &q, qb, sizeof qb, err, sizeof err);
            json_buf b;
            json_init(&b, SERVER_JSON_MAX_BYTES);
            uint64_t total = 0, t0 = now_ns();
            index_search(x, &q, &b, false, &total, err, sizeof err);
            t[r] = (double)(now_ns() - t0) / 1e6;
            json_free(&b);
        }
        double m = median(t, 20);
        printf("  search over %d captures, '%s': %.2f ms (median of 20)\n", captures, queries[qi], m);
        if (m > worst) worst = m;
    }
    free(f.names);
    free(f.rows);
    index_close(x);
    return worst;
}

int main(int argc, char **argv) {
    if (getenv("VOR_BENCH_STORE_WRITER")) {
        write_frames(strtoull(getenv("VOR_BENCH_STORE_WRITER"), NULL, 10), getenv("VOR_RECORD"));
        return 0;
    }
    uint64_t mb = argc > 1 ? strtoull(argv[1], NULL, 10) : getenv("VOR_BENCH_STORE_MB") ? strtoull(getenv("VOR_BENCH_STORE_MB"), NULL, 10) : 128;
    char dir[] = "/tmp/vor-bench-store-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    if (getenv("VOR_BENCH_STORE_SEARCH_ONLY")) { /* the search figures alone (seconds, not minutes) */
        double worst = search_ms(dir, 10000);
        printf("search over 10,000 stored captures: slowest query %.2f ms (target <= 50)\n", worst);
        char cmd[800];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        return system(cmd) != 0;
    }
    char capture[600], store_dir[600], self[512], vor[600];
    snprintf(store_dir, sizeof store_dir, "%s/store", dir);
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = '\0';
    snprintf(vor, sizeof vor, "%.*s/vor", (int)(strrchr(self, '/') - self), self);
    const char *given = getenv("VOR_BENCH_CAPTURE");
    if (given) {
        snprintf(capture, sizeof capture, "%s", given);
    } else {
        snprintf(capture, sizeof capture, "%s/big.vor", dir);
        char env_rec[700], env_flame[] = "VOR_RECORD_FLAME=1", env_w[64];
        snprintf(env_rec, sizeof env_rec, "VOR_RECORD=%s", capture);
        snprintf(env_w, sizeof env_w, "VOR_BENCH_STORE_WRITER=%llu", (unsigned long long)(mb << 20));
        char *envp[] = {env_rec, env_flame, env_w, NULL};
        char *args[] = {self, NULL};
        uint64_t t0 = now_ns();
        if (spawn_wait(args, envp) != 0) return 1;
        printf("capture: written in %.1f s\n", (double)(now_ns() - t0) / 1e9);
    }
    struct stat st;
    stat(capture, &st);
    printf("capture: %.1f MB, flame frames of 49 scopes\n", (double)st.st_size / 1e6);

    double up[3];
    for (int r = 0; r < 3; r++) {
        char sd[700];
        snprintf(sd, sizeof sd, "%s%d", store_dir, r);
        mkdir(sd, 0700);
        port_ready = 0;
        up[r] = upload_mbs(capture, sd);
        char cmd[800];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", sd);
        if (system(cmd) != 0) fprintf(stderr, "bench_store: cannot remove %s\n", sd);
    }
    printf("upload over loopback (server checks and stores every record): %.0f MB/s (median of 3; target >= 200)\n",
           median(up, 3));

    capture_facts facts;
    memset(&facts, 0, sizeof facts);
    char problem[256];
    uint64_t t0 = now_ns();
    int ok = store_index_file(capture, &facts, problem, sizeof problem);
    double index_s = (double)(now_ns() - t0) / 1e9;
    char *sargs[] = {vor, "summary", capture, NULL};
    char *senv[] = {NULL};
    int devnull = 0;
    (void)devnull;
    t0 = now_ns();
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
    int status = -1;
    if (posix_spawn(&pid, vor, &fa, NULL, sargs, senv) == 0) waitpid(pid, &status, 0);
    double summary_s = (double)(now_ns() - t0) / 1e9;
    posix_spawn_file_actions_destroy(&fa);
    printf("indexing it: %.2f s (%s, %llu frames); vor summary: %.2f s; ratio %.2f (target <= 1)\n", index_s,
           ok == 0 ? "ok" : problem, (unsigned long long)facts.frames, summary_s, index_s / summary_s);
    store_facts_clear(&facts);

    double worst = search_ms(dir, 10000);
    printf("search over 10,000 stored captures: slowest query %.2f ms (target <= 50)\n", worst);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return 0;
}
