/*
 * http_compare.c - GET /api/compare?a=ID&b=ID: `vor diff --json` of two stored captures, for the
 * captures page's "compare" (until the panel compares captures itself).
 *
 * The comparison is the CLI's own (one stack engine, one set of reading rules): the server runs
 * its `vor` binary (vor serve: itself; vor_server_options.diff_exe) as a child process, from a
 * worker thread, because a diff reads both captures whole (seconds for large ones) and the
 * service thread never waits. So the request does not wait either:
 *   202 {"state":"running"}          started (or still running): ask again
 *   200 <vor diff --json>            done ("file" fields are the ids' file names, not paths)
 *   422 {"error":...}                vor diff refused (its message: e.g. no flame frames)
 *   503 {"error":...}                COMPARE_MAX_RUNNING comparisons already running
 *   400 / 404 / 501                  bad or missing parameter / unknown id / no vor binary
 * Results are kept for the last COMPARE_SLOTS pairs, keyed by the two ids and their sizes then
 * (a capture still growing is compared again once it has grown). Bounded: COMPARE_MAX_OUTPUT
 * bytes of output and COMPARE_TIME_LIMIT_S seconds per child (then killed, answered 422); at stop
 * the running children are killed and their threads joined.
 */
#include "server_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum {
    COMPARE_SLOTS = 8,
    COMPARE_MAX_RUNNING = 2,
    COMPARE_MAX_OUTPUT = 4 << 20,
    COMPARE_MAX_MESSAGE = 400,
    COMPARE_TIME_LIMIT_S = 300,
};

typedef enum { SLOT_EMPTY, SLOT_RUNNING, SLOT_DONE, SLOT_FAILED } slot_state;

typedef struct compare_slot {
    slot_state state;
    char a[STORE_ID_BYTES], b[STORE_ID_BYTES];
    uint64_t size_a, size_b;
    char dir[4096];          /* the captures' directory: the child runs there */
    char *out;               /* DONE: vor diff's JSON; FAILED: the message */
    size_t len;
    uint64_t used;           /* for eviction: the newest use wins */
    pid_t pid;               /* RUNNING: the child, 0 before it exists */
    pthread_t thread;
    bool joinable;
    struct compare_jobs *jobs;
} compare_slot;

struct compare_jobs {
    pthread_mutex_t lock;
    const char *exe;
    bool stopping;
    uint64_t clock;
    compare_slot slots[COMPARE_SLOTS];
};

compare_jobs *compare_jobs_new(const char *exe)
{
    compare_jobs *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    pthread_mutex_init(&j->lock, NULL);
    j->exe = exe;
    for (int i = 0; i < COMPARE_SLOTS; i++)
        j->slots[i].jobs = j;
    return j;
}

void compare_jobs_free(compare_jobs *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->lock);
    j->stopping = true;
    for (int i = 0; i < COMPARE_SLOTS; i++)
        if (j->slots[i].state == SLOT_RUNNING && j->slots[i].pid > 0)
            kill(j->slots[i].pid, SIGKILL);
    pthread_mutex_unlock(&j->lock);
    for (int i = 0; i < COMPARE_SLOTS; i++) {
        if (j->slots[i].joinable)
            pthread_join(j->slots[i].thread, NULL);
        free(j->slots[i].out);
    }
    pthread_mutex_destroy(&j->lock);
    free(j);
}

static int64_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

/* Reads the child's stdout (up to COMPARE_MAX_OUTPUT) and stderr (its first message) until
 * both close or the time limit passes. Returns 0, or -1 (too long, too much output: killed). */
static int collect(pid_t pid, int out_fd, int err_fd, char **out, size_t *out_len, char *msg, size_t msglen)
{
    size_t cap = 64 << 10, len = 0, mlen = 0;
    char *buf = malloc(cap);
    int64_t deadline = now_s() + COMPARE_TIME_LIMIT_S;
    struct pollfd p[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    int open_fds = 2, rc = 0;
    msg[0] = '\0';
    if (!buf)
        rc = -1, snprintf(msg, msglen, "out of memory");
    while (rc == 0 && open_fds > 0) {
        int64_t left = deadline - now_s();
        if (left <= 0) {
            snprintf(msg, msglen, "vor diff took longer than %d s", COMPARE_TIME_LIMIT_S);
            rc = -1;
            break;
        }
        int n = poll(p, 2, (int)(left > 1 ? 1000 : left * 1000));
        if (n < 0 && errno != EINTR) {
            snprintf(msg, msglen, "poll: %s", strerror(errno));
            rc = -1;
        }
        if (n <= 0)
            continue;
        if (p[0].fd >= 0 && p[0].revents) {
            if (len + 1 >= cap) { /* one byte kept for the terminating NUL */
                if (cap >= COMPARE_MAX_OUTPUT) {
                    snprintf(msg, msglen, "vor diff wrote more than %d bytes", COMPARE_MAX_OUTPUT);
                    rc = -1;
                    break;
                }
                char *grown = realloc(buf, cap * 2);
                if (!grown) {
                    snprintf(msg, msglen, "out of memory");
                    rc = -1;
                    break;
                }
                buf = grown, cap *= 2;
            }
            ssize_t r = read(p[0].fd, buf + len, cap - len - 1);
            if (r > 0)
                len += (size_t)r;
            else if (r == 0 || errno != EINTR)
                p[0].fd = -1, open_fds--;
        }
        if (p[1].fd >= 0 && p[1].revents) {
            char tmp[1024];
            ssize_t r = read(p[1].fd, tmp, sizeof tmp);
            if (r > 0) {
                size_t take = (size_t)r < msglen - 1 - mlen ? (size_t)r : msglen - 1 - mlen;
                memcpy(msg + mlen, tmp, take);
                mlen += take;
                msg[mlen] = '\0';
            } else if (r == 0 || errno != EINTR) {
                p[1].fd = -1, open_fds--;
            }
        }
    }
    if (rc != 0)
        kill(pid, SIGKILL);
    if (buf)
        buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return rc;
}

/* The first line of what vor diff said, without its "vor diff: " prefix. */
static void first_line(char *msg)
{
    msg[strcspn(msg, "\n")] = '\0';
    static const char prefix[] = "vor diff: ";
    if (!strncmp(msg, prefix, sizeof prefix - 1))
        memmove(msg, msg + sizeof prefix - 1, strlen(msg + sizeof prefix - 1) + 1);
}

static void *run_compare(void *arg)
{
    compare_slot *sl = arg;
    compare_jobs *j = sl->jobs;
    char fa[STORE_ID_BYTES + 8], fb[STORE_ID_BYTES + 8], msg[COMPARE_MAX_MESSAGE] = "";
    snprintf(fa, sizeof fa, "%s.vor", sl->a);
    snprintf(fb, sizeof fb, "%s.vor", sl->b);
    char *argv[] = {"vor", "diff", fa, fb, "--json", "--top", "100", NULL};
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    char *out = NULL;
    size_t len = 0;
    int status = -1;
    pid_t pid = 0;
    posix_spawn_file_actions_t fa_;
    bool actions = false;

    if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
        snprintf(msg, sizeof msg, "pipe: %s", strerror(errno));
        goto done;
    }
    actions = posix_spawn_file_actions_init(&fa_) == 0;
    if (!actions || posix_spawn_file_actions_adddup2(&fa_, out_pipe[1], 1) ||
        posix_spawn_file_actions_adddup2(&fa_, err_pipe[1], 2) ||
        posix_spawn_file_actions_addopen(&fa_, 0, "/dev/null", O_RDONLY, 0) ||
        posix_spawn_file_actions_addclosefrom_np(&fa_, 3) || /* not the server's sockets */
        posix_spawn_file_actions_addchdir_np(&fa_, sl->dir)) {
        snprintf(msg, sizeof msg, "cannot prepare vor diff");
        goto done;
    }
    pthread_mutex_lock(&j->lock);
    int e = j->stopping ? ECANCELED : posix_spawn(&pid, j->exe, &fa_, NULL, argv, environ);
    if (e == 0)
        sl->pid = pid;
    pthread_mutex_unlock(&j->lock);
    close(out_pipe[1]), close(err_pipe[1]);
    out_pipe[1] = err_pipe[1] = -1;
    if (e) {
        snprintf(msg, sizeof msg, "cannot run %s: %s", j->exe, strerror(e));
        goto done;
    }
    int collected = collect(pid, out_pipe[0], err_pipe[0], &out, &len, msg, sizeof msg);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (collected == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        if (!msg[0])
            snprintf(msg, sizeof msg, "vor diff failed (%s %d)", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        status = -1;
    } else if (collected != 0) {
        status = -1;
    }
    first_line(msg);
done:
    if (actions)
        posix_spawn_file_actions_destroy(&fa_);
    for (int i = 0; i < 2; i++) {
        if (out_pipe[i] >= 0)
            close(out_pipe[i]);
        if (err_pipe[i] >= 0)
            close(err_pipe[i]);
    }
    pthread_mutex_lock(&j->lock);
    sl->pid = 0;
    if (status == 0 && out) {
        sl->state = SLOT_DONE;
        sl->out = out, sl->len = len;
        out = NULL;
    } else {
        sl->state = SLOT_FAILED;
        sl->out = strdup(msg[0] ? msg : "vor diff failed");
        sl->len = sl->out ? strlen(sl->out) : 0;
    }
    pthread_mutex_unlock(&j->lock);
    free(out);
    return NULL;
}

/* One id parameter: present, and a stored capture. */
static int capture_arg(struct lws *wsi, server *srv, const char *name, char *id, char *path, size_t pathlen,
                       uint64_t *size, const char **problem)
{
    char arg[STORE_ID_BYTES + 8];
    const char *v = lws_get_urlarg_by_name(wsi, name, arg, (int)sizeof arg);
    struct stat st;
    if (!v || !*v || strlen(v) >= STORE_ID_BYTES) {
        *problem = "missing";
        return 400;
    }
    snprintf(id, STORE_ID_BYTES, "%s", v);
    if (store_capture_path(srv->store, id, path, pathlen, NULL, 0) != 0 || stat(path, &st) != 0) {
        *problem = "unknown capture id";
        return 404;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

int http_compare(struct lws *wsi, server *srv, http_session *s)
{
    char a[STORE_ID_BYTES], b[STORE_ID_BYTES], pa[4096], pb[4096];
    uint64_t size_a = 0, size_b = 0;
    const char *problem = NULL;
    int code;

    if (!srv->store)
        return api_send_error(wsi, s, 404, "this server keeps no store", "start it with vor serve --store DIR");
    if ((code = capture_arg(wsi, srv, "a=", a, pa, sizeof pa, &size_a, &problem)))
        return api_send_error(wsi, s, (unsigned)code, code == 400 ? "parameter a (a capture id) is missing" : problem, NULL);
    if ((code = capture_arg(wsi, srv, "b=", b, pb, sizeof pb, &size_b, &problem)))
        return api_send_error(wsi, s, (unsigned)code, code == 400 ? "parameter b (a capture id) is missing" : problem, NULL);
    compare_jobs *j = srv->compare;
    if (!j || !j->exe)
        return api_send_error(wsi, s, 501, "this server cannot compare captures", "it has no vor binary to run");

    pthread_mutex_lock(&j->lock);
    compare_slot *found = NULL, *victim = NULL;
    int running = 0;
    for (int i = 0; i < COMPARE_SLOTS; i++) {
        compare_slot *sl = &j->slots[i];
        running += sl->state == SLOT_RUNNING;
        if (sl->state != SLOT_EMPTY && !strcmp(sl->a, a) && !strcmp(sl->b, b) && sl->size_a == size_a &&
            sl->size_b == size_b)
            found = sl;
        if (sl->state != SLOT_RUNNING && (!victim || sl->state == SLOT_EMPTY ||
                                          (victim->state != SLOT_EMPTY && sl->used < victim->used)))
            victim = sl;
    }
    if (found) {
        found->used = ++j->clock;
        slot_state state = found->state;
        json_buf out;
        json_init(&out, COMPARE_MAX_OUTPUT + 1024);
        if (state == SLOT_DONE)
            json_raw(&out, found->out); /* vor diff's JSON as it printed it */
        pthread_mutex_unlock(&j->lock);
        if (state == SLOT_RUNNING) {
            json_raw(&out, "{\"state\":\"running\"}");
            return send_json(wsi, s, 202, &out);
        }
        if (state == SLOT_DONE)
            return send_json(wsi, s, 200, &out);
        json_free(&out);
        char msg[COMPARE_MAX_MESSAGE];
        pthread_mutex_lock(&j->lock);
        snprintf(msg, sizeof msg, "%s", found->out ? found->out : "vor diff failed");
        pthread_mutex_unlock(&j->lock);
        return api_send_error(wsi, s, 422, "cannot compare", msg);
    }
    if (running >= COMPARE_MAX_RUNNING || !victim) {
        pthread_mutex_unlock(&j->lock);
        return api_send_error(wsi, s, 503, "busy", "other comparisons are running; try again in a moment");
    }
    if (victim->joinable) {
        pthread_join(victim->thread, NULL); /* finished: its state is not RUNNING */
        victim->joinable = false;
    }
    free(victim->out);
    victim->out = NULL, victim->len = 0;
    snprintf(victim->a, sizeof victim->a, "%s", a);
    snprintf(victim->b, sizeof victim->b, "%s", b);
    victim->size_a = size_a, victim->size_b = size_b;
    snprintf(victim->dir, sizeof victim->dir, "%s", pa);
    char *slash = strrchr(victim->dir, '/');
    if (slash)
        *slash = '\0';
    victim->state = SLOT_RUNNING;
    victim->used = ++j->clock;
    victim->pid = 0;
    if (pthread_create(&victim->thread, NULL, run_compare, victim) != 0) {
        victim->state = SLOT_EMPTY;
        pthread_mutex_unlock(&j->lock);
        return api_send_error(wsi, s, 503, "busy", "cannot start a comparison now");
    }
    victim->joinable = true;
    pthread_mutex_unlock(&j->lock);
    json_buf out;
    json_init(&out, 64);
    json_raw(&out, "{\"state\":\"running\"}");
    return send_json(wsi, s, 202, &out);
}
