/* progress.c: "12,345 frames, 42%" on stderr while a long export runs.
 *
 * Only when stderr is a terminal (never into a pipe or a log file), redrawn in place with
 * '\r' at most 10 times per second, and erased at the end so that the terminal is left
 * as if it had never been there. The percentage is bytes of the capture consumed against
 * its size when the command started. Cost per frame: one read of the monotonic clock (tens
 * of ns through the vDSO, against at least microseconds to decode a frame). It used to be
 * read once every 256 frames, which left a capture of few, huge frames (a record decodes to
 * up to 64 MiB) without any progress for minutes.
 */
#include "cli.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_INTERVAL_MS 100u

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void cli_progress_init(cli_progress *p, const char *cmd, const char *subject, uint64_t total_bytes, int want) {
    memset(p, 0, sizeof *p);
    p->enabled = want && isatty(STDERR_FILENO);
    p->cmd = cmd;
    cli_text_show_middle(p->subject, sizeof p->subject, subject ? subject : "", sizeof p->subject - 1);
    p->total_bytes = total_bytes;
    if (p->enabled) p->last_ms = now_ms();
}

void cli_progress_update(cli_progress *p, uint64_t frames, uint64_t bytes_done) {
    if (!p->enabled) return;
    uint64_t t = now_ms();
    if (t - p->last_ms < PROGRESS_INTERVAL_MS) return;
    p->last_ms = t;
    char count[NUMFMT_BYTES];
    unsigned percent = p->total_bytes ? (unsigned)(bytes_done * 100u / p->total_bytes) : 0u;
    if (percent > 100u) percent = 100u; /* the file grew meanwhile */
    fprintf(stderr, "\rvor %s: %s: %s%s%s frames, %u%%\033[K", p->cmd, p->subject, p->phase ? p->phase : "",
            p->phase ? ": " : "", numfmt_count(count, frames), percent);
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_done(cli_progress *p) {
    if (p->enabled && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = 0;
}
