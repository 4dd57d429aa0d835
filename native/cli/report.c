/* report.c: how the `vor` command tells people what went wrong.
 *
 * One shape for every message, so that scripts can match them and people can find the
 * culprit: "vor <cmd>: <file>: <problem>" on stderr, one line. The reader's own messages
 * already say which byte offset is bad; some also start with the path, which we strip so
 * that the file is named exactly once.
 *
 * The line is made safe and kept whole:
 *   - the file name and the problem may hold anything (a file named with an ESC, a
 *     capture's scope name quoted in a message): control characters and invalid UTF-8 are
 *     shown escaped (text.c), so a message can neither drive the terminal nor span lines;
 *   - the problem is what matters, so it always survives: a long file name is shortened in
 *     its middle ("/home/me/a/very/...deep/dir/run.vor") to make room for it.
 */
#include "cli.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_LINE_MAX 1024u   /* bytes of one message, newline excluded */
#define REPORT_PROBLEM_MAX 640u /* of which the problem may take (cut at its end beyond) */
#define REPORT_SUBJECT_MIN 48u  /* a subject is never shortened below this */
#define REPORT_RAW_MAX 4096u    /* the problem as formatted, before escaping */

static void vreport(const char *cmd, const char *subject, const char *suffix, const char *fmt, va_list ap) {
    char raw[REPORT_RAW_MAX];
    vsnprintf(raw, sizeof raw, fmt, ap);

    /* Build the line first, then write it in one call: no interleaving with stdout. */
    char line[REPORT_LINE_MAX + 2];
    size_t used = 0;
    int n = cmd ? snprintf(line, sizeof line, "vor %s: ", cmd) : snprintf(line, sizeof line, "vor: ");
    if (n > 0) used = (size_t)n < REPORT_LINE_MAX / 4 ? (size_t)n : REPORT_LINE_MAX / 4;

    size_t suffix_len = suffix ? strlen(suffix) : 0;
    if (suffix_len > REPORT_LINE_MAX / 4) suffix_len = REPORT_LINE_MAX / 4;
    char problem[REPORT_PROBLEM_MAX + 1];
    cli_text_show(problem, sizeof problem, raw);
    size_t problem_len = strlen(problem);

    if (subject) {
        /* Whatever is left after the problem, and at least REPORT_SUBJECT_MIN. */
        size_t fixed = used + 2 + problem_len + suffix_len;
        size_t room = fixed + REPORT_SUBJECT_MIN < REPORT_LINE_MAX ? REPORT_LINE_MAX - fixed : REPORT_SUBJECT_MIN;
        char shown[REPORT_LINE_MAX];
        cli_text_show_middle(shown, sizeof shown, subject, room);
        size_t len = strlen(shown);
        if (used + len + 2 > REPORT_LINE_MAX) len = 0; /* cannot happen with the limits above */
        memcpy(line + used, shown, len);
        used += len;
        memcpy(line + used, ": ", 2);
        used += 2;
    }
    if (used + problem_len + suffix_len > REPORT_LINE_MAX) {
        /* Only when the subject took its minimum: cut the problem's end to fit. */
        size_t room = REPORT_LINE_MAX - used - suffix_len;
        cli_text_show(problem, room + 1 < sizeof problem ? room + 1 : sizeof problem, raw);
        problem_len = strlen(problem);
    }
    memcpy(line + used, problem, problem_len);
    used += problem_len;
    if (suffix_len) {
        memcpy(line + used, suffix, suffix_len);
        used += suffix_len;
    }
    line[used++] = '\n';
    line[used] = '\0';
    fflush(stdout);
    fputs(line, stderr);
}

int cli_fail(int status, const char *cmd, const char *subject, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, subject, NULL, fmt, ap);
    va_end(ap);
    return status;
}

void cli_note(const char *cmd, const char *subject, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, subject, NULL, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    char suffix[128];
    snprintf(suffix, sizeof suffix, "; see 'vor %s --help'", cmd);
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, NULL, suffix, fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

/* 1 when fd 1 is a pipe or socket whose reading end is gone: the error of a write to it
 * would be EPIPE, whatever errno says by the time we look. */
static int stdout_reader_gone(void) {
    struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

int cli_write_error(const char *cmd, const char *name, int is_stdout, int err, const char *what) {
    if (is_stdout && (err == EPIPE || stdout_reader_gone())) return CLI_EXIT_IO; /* `vor ... | head` */
    return cli_fail(CLI_EXIT_IO, cmd, name, "%s: %s", what ? what : "write error", strerror(err ? err : EIO));
}

const char *cli_strip_path_prefix(const char *message, const char *path) {
    if (!message) return "";
    if (!path) return message;
    size_t n = strlen(path);
    if (n > 0 && strncmp(message, path, n) == 0 && message[n] == ':' && message[n + 1] == ' ') return message + n + 2;
    return message;
}
