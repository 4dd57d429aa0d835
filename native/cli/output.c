/* output.c: where a command writes: `-o OUT` (export), `-o out.svg` (flamegraph), `--svg
 * out.svg` (diff), or stdout.
 *
 * Output goes through stdio with a large buffer (exports write hundreds of MB). Write
 * errors are sticky in stdio, so one check at the end (fflush + ferror + fclose) catches
 * a full disk as well as an unwritable file; the message names the path.
 *
 * OUT is never left half-written: a regular file (or a name that does not exist yet) is
 * written as a temporary in the same directory (".OUT.vor-XXXXXX", made by mkstemp, then
 * given the permissions a new file would get: 0666 minus the umask) and renamed over OUT
 * only when everything was written. A failure (a corrupt capture half-way, a full disk)
 * removes the temporary and leaves an existing OUT as it was; so does SIGINT, SIGTERM or
 * SIGHUP, whose handlers, installed while the temporary exists, unlink it and _exit with
 * 128 + the signal (130, 143, 129, as a shell reports a death by that signal). A symlink OUT is followed: the file it
 * leads to is replaced and the link stays. What is not a regular file (/dev/full, a FIFO,
 * a terminal) is written directly and never removed, and so is a name that stands for an
 * open descriptor (/dev/stdout, /dev/fd/N). A read-only OUT is refused (EACCES), as an
 * open for writing would. If no temporary can be made beside an existing writable OUT (a
 * read-only directory), OUT is written directly, and removed if the command fails.
 *
 * Before any of that, cli_output_check() refuses an output that is one of the command's
 * inputs: renaming the SVG over the capture it was drawn from would lose the capture.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTPUT_BUFFER_BYTES (256u * 1024u)
#define TEMP_NAME_BASE_MAX 64 /* bytes of OUT's own name kept in the temporary's name */
#define SYMLINK_HOPS_MAX 40

const char *cli_output_name(const cli_output *o) {
    return o->path ? o->path : "stdout";
}

/* ---- An output that is an input ------------------------------------------------------- */

static int same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int cli_output_check(const char *cmd, const char *option, const char *out_path, const char *const *inputs,
                     const char *const *roles, size_t n_inputs) {
    if (out_path && out_path[0] == '\0')
        return cli_usage_error(cmd, "%s needs a file name ('-' for stdout), not an empty string", option);
    int to_stdout = !out_path || strcmp(out_path, "-") == 0;
    struct stat out_st;
    if (to_stdout ? fstat(STDOUT_FILENO, &out_st) != 0 : stat(out_path, &out_st) != 0) return 0; /* created later */
    if (!S_ISREG(out_st.st_mode)) return 0; /* /dev/null is everybody's input and output */
    for (size_t i = 0; i < n_inputs; i++) {
        if (!inputs[i]) continue;
        struct stat in_st;
        int is_stdin = strcmp(inputs[i], "-") == 0;
        if (is_stdin ? fstat(STDIN_FILENO, &in_st) != 0 : stat(inputs[i], &in_st) != 0) continue;
        if (same_file(&in_st, &out_st))
            return cli_fail(CLI_EXIT_USAGE, cmd, to_stdout ? "stdout" : out_path, "is %s; choose another output",
                            roles[i]);
    }
    return 0;
}

/* ---- Signals while a temporary exists ------------------------------------------------------- */

static char signal_temp[PATH_MAX + 1];
static volatile sig_atomic_t signal_armed;
/* SIGINT (Ctrl-C), SIGTERM (kill), SIGHUP (the terminal closed). */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof *cleanup_signals)
static struct sigaction saved_actions[N_CLEANUP_SIGNALS];
static int installed[N_CLEANUP_SIGNALS];

static void on_output_signal(int sig) {
    if (signal_armed) unlink(signal_temp); /* async-signal-safe */
    _exit(128 + sig);                      /* 130 SIGINT, 143 SIGTERM, 129 SIGHUP */
}

static void block_signals(sigset_t *old) {
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) sigaddset(&set, cleanup_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* Called with the signals blocked. A signal that is ignored (a background job started by
 * a non-interactive shell, nohup) stays ignored. */
static void arm(const char *temp) {
    size_t n = strlen(temp);
    if (n >= sizeof signal_temp) return; /* mkstemp could not have made it */
    memcpy(signal_temp, temp, n + 1);
    signal_armed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_output_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) sigaddset(&sa.sa_mask, cleanup_signals[i]);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
        struct sigaction old;
        installed[i] = sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN &&
                       sigaction(cleanup_signals[i], &sa, &saved_actions[i]) == 0;
    }
}

/* Called with the signals blocked: a signal pending now gets the old disposition. */
static void disarm(void) {
    signal_armed = 0;
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
        if (installed[i]) sigaction(cleanup_signals[i], &saved_actions[i], NULL);
        installed[i] = 0;
    }
}

/* ---- Opening ------------------------------------------------------------------------------ */

/* `path` with its symlinks followed (the link itself stays; its target is replaced), even
 * when the target does not exist yet. Returns a malloc'd path, NULL when out of memory.
 * Sets *descriptor when a link leads into /proc (/dev/stdout, /dev/fd/N): such a name
 * stands for an open descriptor, written directly, never replaced. */
static char *follow_symlinks(const char *path, int *descriptor) {
    char *cur = strdup(path);
    *descriptor = 0;
    for (int hops = 0; cur && hops < SYMLINK_HOPS_MAX; hops++) {
        if (strncmp(cur, "/proc/", 6) == 0) *descriptor = 1;
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n <= 0) return cur;
        link[n] = '\0';
        char *next;
        const char *slash = strrchr(cur, '/');
        if (link[0] == '/' || !slash) {
            next = strdup(link);
        } else { /* relative to the link's directory */
            size_t dir = (size_t)(slash - cur) + 1;
            next = malloc(dir + (size_t)n + 1);
            if (next) {
                memcpy(next, cur, dir);
                memcpy(next + dir, link, (size_t)n + 1);
            }
        }
        free(cur);
        cur = next;
    }
    return cur; /* a loop: the open or the rename reports it */
}

/* "<dir>/.<name>.vor-XXXXXX" beside `target`. */
static char *temp_template(const char *target) {
    const char *slash = strrchr(target, '/');
    size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dir;
    size_t base_len = strlen(base);
    if (base_len > TEMP_NAME_BASE_MAX) base_len = TEMP_NAME_BASE_MAX;
    size_t cap = dir + 1 + base_len + sizeof ".vor-XXXXXX";
    char *t = malloc(cap);
    if (!t) return NULL;
    memcpy(t, target, dir);
    t[dir] = '.';
    memcpy(t + dir + 1, base, base_len);
    memcpy(t + dir + 1 + base_len, ".vor-XXXXXX", sizeof ".vor-XXXXXX");
    return t;
}

static mode_t new_file_mode(void) {
    mode_t mask = umask(0); /* the only way to read it; single-threaded here */
    umask(mask);
    return (mode_t)(0666 & ~mask);
}

static void output_free(cli_output *o) {
    free(o->buffer);
    free(o->target);
    free(o->temp);
    o->buffer = o->target = o->temp = NULL;
}

/* Opens o->temp beside o->target; returns the FILE or NULL with errno set. */
static FILE *open_temp(cli_output *o) {
    o->temp = temp_template(o->target);
    if (!o->temp) {
        errno = ENOMEM;
        return NULL;
    }
    sigset_t old;
    block_signals(&old);
    int fd = mkostemp(o->temp, O_CLOEXEC);
    int err = errno;
    if (fd >= 0) {
        arm(o->temp);
        fchmod(fd, new_file_mode());
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        free(o->temp);
        o->temp = NULL;
        errno = err;
        return NULL;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        err = errno;
        block_signals(&old);
        unlink(o->temp);
        disarm();
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(fd);
        free(o->temp);
        o->temp = NULL;
        errno = err;
    }
    return f;
}

int cli_output_open(cli_output *o, const char *cmd, const char *path) {
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    o->path = path;
    if (path[0] == '\0') return cli_fail(CLI_EXIT_USAGE, cmd, NULL, "the output needs a file name");
    struct stat st;
    int exists = stat(path, &st) == 0, descriptor = 0, err = 0;
    if (exists && !S_ISREG(st.st_mode)) {
        o->f = fopen(path, "wb"); /* a device, a FIFO (a directory: EISDIR): never replaced or removed */
        err = errno;
    } else if (exists && access(path, W_OK) != 0) {
        err = errno; /* a read-only OUT stays read-only, as when it was opened for writing */
    } else {
        o->target = follow_symlinks(path, &descriptor);
        if (!o->target) return cli_fail(CLI_EXIT_IO, cmd, path, "cannot write: out of memory");
        if (descriptor) {
            o->f = fopen(path, "wb"); /* /dev/stdout redirected to a file: that open file */
            err = errno;
        } else {
            o->f = open_temp(o);
            err = errno;
            if (!o->f && exists && (err == EACCES || err == EPERM || err == EROFS)) {
                o->f = fopen(o->target, "wb"); /* a writable file in a directory we cannot write */
                o->removable = o->f != NULL;
                if (!o->f) err = errno;
            }
        }
    }
    if (!o->f) {
        output_free(o);
        return cli_fail(CLI_EXIT_IO, cmd, path, "cannot write: %s", strerror(err ? err : EIO));
    }
    o->buffer = malloc(OUTPUT_BUFFER_BYTES);
    if (o->buffer) setvbuf(o->f, o->buffer, _IOFBF, OUTPUT_BUFFER_BYTES); /* else stdio's default */
    return 0;
}

int cli_output_failed(const cli_output *o) {
    return o->f && ferror(o->f);
}

int cli_output_close(cli_output *o, int status, int discard) {
    if (!o->f) return status;
    int err = 0;
    const char *doing = NULL; /* "write error" */
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) err = errno ? errno : EIO;
    if (o->path) {
        errno = 0;
        if (fclose(o->f) != 0 && !err) err = errno ? errno : EIO;
        if (o->temp) {
            sigset_t old;
            block_signals(&old);
            if (discard || err || status != 0) {
                unlink(o->temp);
            } else if (rename(o->temp, o->target) != 0) {
                err = errno;
                doing = "cannot replace it";
                unlink(o->temp);
            }
            disarm();
            sigprocmask(SIG_SETMASK, &old, NULL);
        } else if ((discard || err) && o->removable) {
            remove(o->target); /* never a device, never through a descriptor's name */
        }
    }
    o->f = NULL;
    const int to_stdout = o->path == NULL;
    output_free(o);
    if (status != 0) return status;
    if (!err) return 0;
    return cli_write_error(o->cmd, cli_output_name(o), to_stdout, err, doing);
}
