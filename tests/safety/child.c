/* child.c: see child.h. */
#include "child.h"

#include "vor/reader.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return strdup("");
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            char *grown = realloc(text, cap * 2);
            if (grown == NULL) break;
            text = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (text) text[n] = '\0';
    return text;
}

void run_child(void (*body)(void *arg), void *arg, child_result *out) {
    memset(out, 0, sizeof *out);
    char err_path[512];
    snprintf(err_path, sizeof err_path, "%s", safety_temp_path(".stderr"));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen(err_path, "w", stderr) == NULL) _exit(98);
        setvbuf(stderr, NULL, _IONBF, 0);
        body(arg);
        _exit(CHILD_RETURNED);
    }
    if (pid < 0) {
        out->stuck = -1;
        out->err = strdup("fork failed");
        return;
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > CHILD_DEADLINE_SECONDS) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            out->stuck = 1;
            break;
        }
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
    if (!out->stuck) {
        out->exited = WIFEXITED(status);
        out->exit_status = out->exited ? WEXITSTATUS(status) : -1;
        out->signaled = WIFSIGNALED(status);
        out->signal = out->signaled ? WTERMSIG(status) : 0;
    }
    out->err = slurp(err_path);
    unlink(err_path);
}

void child_result_free(child_result *r) {
    free(r->err);
    r->err = NULL;
}

const char *safety_temp_path(const char *suffix) {
    static char paths[8][512];
    static unsigned next;
    static unsigned serial;
    char *p = paths[next++ % 8];
    const char *dir = getenv("TMPDIR");
    snprintf(p, 512, "%s/vor_safety_%d_%u%s", dir && *dir ? dir : "/tmp", (int)getpid(), serial++, suffix);
    return p;
}

int count_lines_containing(const char *text, const char *needle) {
    int n = 0;
    const char *line = text;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        if (copy && strstr(copy, needle)) n++;
        free(copy);
        line = end ? end + 1 : NULL;
    }
    return n;
}

int read_capture_back(const char *path, capture_summary *out) {
    memset(out, 0, sizeof *out);
    char err[1024];
    vor_reader *r = vor_reader_open(path, err, sizeof err);
    if (r == NULL) {
        fprintf(stderr, "%s\n", err);
        return VOR_READ_ERROR;
    }
    vor_reader_frame f;
    vor_read_status st;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        if (f.index != out->frames) {
            fprintf(stderr, "%s: frame %llu where %u was expected\n", path, (unsigned long long)f.index, out->frames);
            st = VOR_READ_ERROR;
            break;
        }
        out->frames++;
    }
    if (st == VOR_READ_ERROR && vor_reader_error(r)[0]) fprintf(stderr, "%s\n", vor_reader_error(r));
    out->finished = vor_reader_finished(r);
    out->offset = vor_reader_offset(r);
    vor_reader_close(r);
    return st;
}
