/* report.c: how the `vor` command tells people what went wrong.
 *
 * One shape for every message, so that scripts can match them and people can find the
 * culprit: "vor <cmd>: <file>: <problem>" on stderr, one line. The reader's own messages
 * already say which byte offset is bad; some also start with the path, which we strip so
 * that the file is named exactly once.
 */
#include "cli.h"

#include <string.h>

static void vreport(const char *cmd, const char *subject, const char *fmt, va_list ap) {
    /* Build the line first, then write it in one call: no interleaving with stdout. */
    char line[2048];
    int n = snprintf(line, sizeof line, "vor %s: ", cmd);
    if (n < 0) n = 0;
    size_t used = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (subject) {
        n = snprintf(line + used, sizeof line - used, "%s: ", subject);
        if (n > 0) used += (size_t)n < sizeof line - used ? (size_t)n : sizeof line - used - 1;
    }
    vsnprintf(line + used, sizeof line - used, fmt, ap);
    fflush(stdout);
    fprintf(stderr, "%s\n", line);
}

int cli_fail(int status, const char *cmd, const char *subject, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, subject, fmt, ap);
    va_end(ap);
    return status;
}

void cli_note(const char *cmd, const char *subject, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, subject, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    char problem[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    return cli_fail(CLI_EXIT_USAGE, cmd, NULL, "%s; see 'vor %s --help'", problem, cmd);
}

const char *cli_strip_path_prefix(const char *message, const char *path) {
    if (!message) return "";
    if (!path) return message;
    size_t n = strlen(path);
    if (n > 0 && strncmp(message, path, n) == 0 && message[n] == ':' && message[n + 1] == ' ') return message + n + 2;
    return message;
}
