/* bench_child.h: for the benchmarks whose setting is decided once per process (GPU rows,
 * VOR_NVTX): run this same program again as a child, in an environment set up for it, and
 * read what it prints. Native only (fork and exec). */
#ifndef VOR_BENCH_CHILD_H
#define VOR_BENCH_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* This program's path (for exec), or exits. */
static inline void bench_self_path(char *out, size_t cap) {
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0) {
        perror("readlink /proc/self/exe");
        exit(1);
    }
    out[n] = '\0';
}

/* Runs `self --child` after `setup(arg)` has set the child's environment (in the forked
 * child); its standard output goes to `out` (NUL-terminated). Returns 1 if it exited 0 and
 * printed something, else 0. */
static inline int bench_run_child(const char *self, void (*setup)(const void *), const void *arg, char *out,
                                  size_t cap) {
    int fd[2];
    if (pipe(fd) != 0) return 0;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        unsetenv("VOR_RECORD");
        unsetenv("VOR_TRACE");
        setup(arg);
        execl(self, self, "--child", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    ssize_t n = pid > 0 ? read(fd[0], out, cap - 1) : -1;
    close(fd[0]);
    out[n > 0 ? n : 0] = '\0';
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    return n > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#endif
