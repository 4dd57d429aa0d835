/* child.h: runs a scenario in a child process, for the tests whose subject is how a
 * process ends (exit() from a logger, SIGXFSZ) or what it prints on stderr.
 *
 * The child is forked from the test process while no session runs (so it is a fresh
 * process to vor, free to open its own outputs), runs `body`, and ends with _exit(
 * CHILD_RETURNED) if `body` returns. The parent waits up to a deadline far beyond what a
 * healthy child needs; a child still running then is killed and reported as stuck.
 */
#ifndef VOR_SAFETY_CHILD_H
#define VOR_SAFETY_CHILD_H

#include <stddef.h>

#define CHILD_RETURNED 99 /* _exit status when body() returned instead of ending the process */
#define CHILD_DEADLINE_SECONDS 60

typedef struct child_result {
    int stuck;       /* killed at the deadline */
    int exited;      /* WIFEXITED */
    int exit_status; /* WEXITSTATUS when exited */
    int signaled;    /* WIFSIGNALED */
    int signal;      /* WTERMSIG when signaled */
    char *err;       /* everything the child wrote to stderr (malloc'd, NUL-terminated) */
} child_result;

/* Runs body(arg) in a child with stderr captured; fills *out. */
void run_child(void (*body)(void *arg), void *arg, child_result *out);
void child_result_free(child_result *r);

/* A fresh path in the test's temporary directory ($TMPDIR or /tmp), unique per call. */
const char *safety_temp_path(const char *suffix);

/* Reads a capture from the start with the reader: the frames it holds (indices checked
 * to run 0, 1, 2, ...), whether the end record was read, and the offset where reading
 * stopped. Returns the reader's last status (VOR_READ_NOTHING_YET at a clean end). */
typedef struct capture_summary {
    unsigned frames;
    int finished;
    unsigned long long offset;
} capture_summary;
int read_capture_back(const char *path, capture_summary *out);

/* Lines of `text` that contain `needle`. */
int count_lines_containing(const char *text, const char *needle);

#endif
