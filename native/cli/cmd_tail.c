/* cmd_tail.c: `vor tail FILE`: follows a growing capture, one line per frame as it
 * arrives, until interrupted (Ctrl-C: exit 0).
 *
 *     frame 1234  16.667 ms  memory_mb=512.3 io_ms=0 io_MB=0 cpu_ms=15.2 loss=2.31  scopes=42
 *
 * Like `tail -f`, it first shows the last lines (the last 10 frames; -n N) then follows;
 * --from-start shows every frame. It waits, with a note printed once, for a file that
 * does not exist yet or has no complete header yet, so it can be started before the
 * program it watches. The reader's "nothing yet" (end of file, or a record still being
 * written) means: sleep --interval ms and try again. What appears must be a regular file
 * (a FIFO or a directory is an error, status 2).
 *
 * A new run of the program writing the same path truncates the file and writes it again,
 * possibly past the offset read so far before we look: the size alone cannot tell. So the
 * header bytes of the run being read (fixed part, body and check: they hold the wall-clock
 * start and the pid, docs/FORMAT.md section 2) are kept, and read again whenever the file
 * changed (size or mtime) and whenever the reader reports an error: other header bytes, a
 * file shorter than what was read, or another file at the path mean a new run, which is
 * noted once ("new run: ...") and printed from its first frame (no "last N" for it). An
 * error with the same header is a corrupt capture: reported, status 2.
 *
 * Skipping to the last frames still reads the frames before them (records are compressed
 * one by one, with no index to seek by); only the last N lines are kept.
 */
#include "capture_format.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char cmd_tail_help[] =
    "usage: vor tail FILE [--from-start | -n N] [--interval MS] [--max-frame-scopes N]\n"
    "\n"
    "Follows a capture while a program writes it, printing one line per frame as it\n"
    "arrives: the frame index, frame_ms, the other metrics as name=value, and the scope\n"
    "count of flame frames. Like 'tail -f': the last 10 frames first, then new ones, until\n"
    "Ctrl-C (exit status 0). It waits for a file that does not exist yet or has no header\n"
    "yet, and starts over when the file is truncated or replaced by a new run (which is\n"
    "printed from its first frame). The file must be a regular file (not a pipe).\n"
    "\n"
    "options:\n"
    "  --from-start      print every frame from the first (default: the last 10, then new)\n"
    "  -n, --lines N     print the last N frames before following (default 10)\n"
    "  --interval MS     how often to look for new frames, in ms (default 200)\n"
    "  --max-frame-scopes N\n"
    "                    scopes one frame may hold (default 1048576, up to 16777216); a frame\n"
    "                    with more is an error (about 88 bytes of memory each)\n"
    "  -h, --help        this help\n"
    "\n"
    "exit status: 0 when interrupted, 2 bad usage or a corrupt capture, 1 stdout could\n"
    "not be written (quietly when its reader went away, as in 'vor tail f | head').\n";

enum { OPT_FROM_START, OPT_LINES, OPT_INTERVAL, OPT_MAX_FRAME_SCOPES, OPT_HELP };

static const cli_option tail_options[] = {
    {"from-start", 0, 0, OPT_FROM_START}, {"lines", 'n', 1, OPT_LINES},
    {"interval", 0, 1, OPT_INTERVAL},     {"max-frame-scopes", 0, 1, OPT_MAX_FRAME_SCOPES},
    {"help", 'h', 0, OPT_HELP},
};

#define TAIL_DEFAULT_LINES 10u
#define TAIL_MAX_LINES 100000u
#define TAIL_DEFAULT_INTERVAL_MS 200u
#define TAIL_MAX_INTERVAL_MS 60000u
#define TAIL_LINE_BYTES 4096u      /* longer lines (hundreds of metrics) end with "..." */
#define TAIL_NAME_SHOWN 256u       /* bytes of one metric name on a line */
#define TAIL_HEADER_MAX (1u << 20) /* a reader may refuse a header body beyond 1 MiB */

static const char *const CMD = "tail";

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static void sleep_ms(uint64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL); /* a signal ends it early: the loop then sees stop_requested */
}

/* ---- One line per frame ---------------------------------------------------------------- */

static void format_frame(char line[TAIL_LINE_BYTES], const vor_reader *r, const vor_reader_frame *f) {
    double frame_ms = (double)f->duration_ns / 1e6;
    for (uint32_t i = 0; i < f->n_values; i++)
        if (f->values[i].column_id == 0) frame_ms = f->values[i].value;
    size_t len = 0;
    line[0] = '\0';
    len = cli_append(line, TAIL_LINE_BYTES, len, "frame %llu  %.3f ms ", (unsigned long long)f->index, frame_ms);
    for (uint32_t i = 0; i < f->n_values; i++) {
        if (f->values[i].column_id == 0) continue;
        const vor_reader_column *c = vor_reader_get_column(r, f->values[i].column_id);
        double v = f->values[i].value;
        char num[NUMFMT_BYTES], name[TAIL_NAME_SHOWN];
        if (!isfinite(v))
            numfmt_double(num, v);
        else
            snprintf(num, sizeof num, "%.4g", v);
        if (c)
            len = cli_append(line, TAIL_LINE_BYTES, len, " %s=%s", cli_text_show(name, sizeof name, c->name), num);
        else
            len = cli_append(line, TAIL_LINE_BYTES, len, " column%u=%s", f->values[i].column_id, num);
    }
    if (f->has_flame) len = cli_append(line, TAIL_LINE_BYTES, len, "  scopes=%llu", (unsigned long long)f->n_scopes);
    if (f->dropped_scopes)
        len = cli_append(line, TAIL_LINE_BYTES, len, " dropped=%llu", (unsigned long long)f->dropped_scopes);
}

/* ---- The last N lines, kept while catching up ---------------------------------------------- */

typedef struct line_ring {
    char **lines;
    uint32_t cap, n, next;
} line_ring;

static int ring_push(line_ring *ring, const char *line) {
    if (ring->cap == 0) return 0;
    size_t len = strlen(line);
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, line, len + 1);
    free(ring->lines[ring->next]);
    ring->lines[ring->next] = copy;
    ring->next = (ring->next + 1) % ring->cap;
    if (ring->n < ring->cap) ring->n++;
    return 0;
}

static void ring_flush(line_ring *ring, FILE *out) {
    uint32_t first = (ring->next + ring->cap - ring->n) % (ring->cap ? ring->cap : 1);
    for (uint32_t i = 0; i < ring->n; i++) {
        uint32_t k = (first + i) % ring->cap;
        fprintf(out, "%s\n", ring->lines[k]);
        free(ring->lines[k]);
        ring->lines[k] = NULL;
    }
    ring->n = ring->next = 0;
}

/* ---- Following ------------------------------------------------------------------------------ */

typedef struct tail_state {
    const char *path;
    uint64_t interval_ms;
    uint64_t max_frame_scopes;
    int noted_missing, noted_header;
    int fd;             /* our descriptor of the file being read; -1 when none */
    struct stat opened; /* that file, when opened */
    off_t seen_size;    /* size and mtime at the last look: unchanged, no header read */
    struct timespec seen_mtime;
    unsigned char *header; /* the run's header bytes: fixed part, body, check */
    size_t header_len;
    char reader_name[CLI_READER_NAME_BYTES];
} tail_state;

static size_t pread_full(int fd, unsigned char *buf, size_t n, off_t at) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, at + (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    return got;
}

/* Reads the run's header bytes into t->header. Returns 1, or 0 when they are not all
 * there (the file was truncated again meanwhile). */
static int keep_header(tail_state *t) {
    unsigned char fixed[VOR_CAPTURE_FIXED_HEADER_BYTES];
    if (pread_full(t->fd, fixed, sizeof fixed, 0) != sizeof fixed) return 0;
    uint32_t body =
        (uint32_t)fixed[12] | (uint32_t)fixed[13] << 8 | (uint32_t)fixed[14] << 16 | (uint32_t)fixed[15] << 24;
    if (body > TAIL_HEADER_MAX) return 0;
    /* 1.1 has a size check after B (docs/FORMAT.md section 2). */
    unsigned minor = (unsigned)fixed[10] | (unsigned)fixed[11] << 8;
    size_t n = (minor >= 1 ? VOR_CAPTURE_1_1_FIXED_HEADER_BYTES : VOR_CAPTURE_FIXED_HEADER_BYTES) + body +
               VOR_CAPTURE_CHECK_BYTES;
    unsigned char *h = malloc(n);
    if (!h) return 0;
    if (pread_full(t->fd, h, n, 0) != n) {
        free(h);
        return 0;
    }
    free(t->header);
    t->header = h;
    t->header_len = n;
    return 1;
}

static int header_unchanged(const tail_state *t) {
    unsigned char *now = malloc(t->header_len);
    if (!now) return 1; /* cannot tell: the reader decides */
    int same = pread_full(t->fd, now, t->header_len, 0) == t->header_len && memcmp(now, t->header, t->header_len) == 0;
    free(now);
    return same;
}

static void close_file(tail_state *t) {
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    free(t->header);
    t->header = NULL;
    t->header_len = 0;
}

/* Waits until the file exists and a reader has its header. Returns the reader, or NULL
 * with *status set (2 on a bad file, 0 when interrupted). */
static vor_reader *open_when_ready(tail_state *t, int *status) {
    *status = 0;
    vor_reader *r = NULL;
    while (!stop_requested) {
        if (!r) {
            t->fd = open(t->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block us */
            if (t->fd < 0) {
                if (errno != ENOENT) {
                    *status = cli_fail(CLI_EXIT_USAGE, CMD, t->path, "%s", strerror(errno));
                    return NULL;
                }
                if (!t->noted_missing++) cli_note(CMD, t->path, "waiting for the file to appear");
                sleep_ms(t->interval_ms);
                continue;
            }
            if (cli_input_check(CMD, t->path, t->fd, CLI_INPUT_CAPTURE, &t->opened) != 0) {
                *status = CLI_EXIT_USAGE;
                close_file(t);
                return NULL;
            }
            int flags = fcntl(t->fd, F_GETFL);
            if (flags >= 0) fcntl(t->fd, F_SETFL, flags & ~O_NONBLOCK);
            char err[512] = "";
            r = cli_reader_open(t->fd, t->path, t->reader_name, err, sizeof err);
            if (r) vor_reader_set_max_frame_scopes(r, t->max_frame_scopes);
            if (!r) {
                *status = cli_fail(CLI_EXIT_USAGE, CMD, t->path, "%s", cli_strip_path_prefix(err, t->reader_name));
                close_file(t);
                return NULL;
            }
        }
        int h = vor_reader_poll_header(r);
        if (h > 0 && keep_header(t)) {
            struct stat now;
            if (fstat(t->fd, &now) == 0) {
                t->seen_size = now.st_size;
                t->seen_mtime = now.st_mtim;
            }
            return r;
        }
        if (h < 0) {
            char message[1200];
            *status = cli_fail(CLI_EXIT_USAGE, CMD, t->path, "%s",
                               cli_reader_message(r, t->reader_name, message, sizeof message));
            vor_reader_close(r);
            close_file(t);
            return NULL;
        }
        if (h > 0) { /* the header changed under the reader: a new run started at once */
            vor_reader_close(r);
            r = NULL;
            close_file(t);
        } else if (!t->noted_header++) {
            cli_note(CMD, t->path, "waiting for the capture header");
        }
        sleep_ms(t->interval_ms);
    }
    vor_reader_close(r);
    close_file(t);
    return NULL;
}

/* 1 if what the path holds now is not the run being read: another file at the path, a
 * file shorter than what was read, or other header bytes. The header is read again only
 * when the file changed since the last look, or with `always` (after a reader error). */
static int new_run(tail_state *t, uint64_t offset, int always) {
    struct stat now;
    if (stat(t->path, &now) == 0 && (now.st_ino != t->opened.st_ino || now.st_dev != t->opened.st_dev)) return 1;
    /* (removed: keep reading the open file) */
    if (fstat(t->fd, &now) != 0) return 0;
    if ((uint64_t)now.st_size < offset) return 1;
    if (!always && now.st_size == t->seen_size && now.st_mtim.tv_sec == t->seen_mtime.tv_sec &&
        now.st_mtim.tv_nsec == t->seen_mtime.tv_nsec)
        return 0;
    t->seen_size = now.st_size;
    t->seen_mtime = now.st_mtim;
    return !header_unchanged(t);
}

int cmd_tail(int argc, char **argv) {
    cli_args args;
    if (cli_parse_args(argc - 1, argv + 1, tail_options, sizeof tail_options / sizeof *tail_options, &args) != 0)
        return cli_usage_error(CMD, "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_tail_help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count == 0) return cli_usage_error(CMD, "no capture file given");
    if (args.positional_count > 1)
        return cli_usage_error(CMD, "one capture at a time (got %d files)", args.positional_count);
    uint64_t lines = TAIL_DEFAULT_LINES, interval = TAIL_DEFAULT_INTERVAL_MS;
    if (args.values[OPT_LINES] && cli_parse_u64(args.values[OPT_LINES], 0, TAIL_MAX_LINES, &lines) != 0)
        return cli_usage_error(CMD, "--lines needs a number from 0 to %u, not '%s'", TAIL_MAX_LINES,
                               args.values[OPT_LINES]);
    if (args.values[OPT_INTERVAL] && cli_parse_u64(args.values[OPT_INTERVAL], 1, TAIL_MAX_INTERVAL_MS, &interval) != 0)
        return cli_usage_error(CMD, "--interval needs milliseconds from 1 to %u, not '%s'", TAIL_MAX_INTERVAL_MS,
                               args.values[OPT_INTERVAL]);
    if (args.values[OPT_FROM_START] && args.values[OPT_LINES])
        return cli_usage_error(CMD, "--from-start and --lines exclude each other");
    uint64_t max_frame_scopes = 0;
    if (cli_parse_max_frame_scopes(CMD, args.values[OPT_MAX_FRAME_SCOPES], &max_frame_scopes) != 0)
        return CLI_EXIT_USAGE;

    const char *role = "the capture being followed"; /* `vor tail X >> X` would feed itself */
    int status = cli_output_check(CMD, "stdout", NULL, &args.positional[0], &role, 1);
    if (status != 0) return status;

    cli_on_stop_signals(on_signal);

    tail_state t;
    memset(&t, 0, sizeof t);
    t.path = args.positional[0];
    t.interval_ms = interval;
    t.max_frame_scopes = max_frame_scopes;
    t.fd = -1;
    int catch_up = !args.values[OPT_FROM_START];
    line_ring ring = {NULL, catch_up ? (uint32_t)lines : 0u, 0, 0};
    if (ring.cap) {
        ring.lines = calloc(ring.cap, sizeof *ring.lines);
        if (!ring.lines) return cli_fail(CLI_EXIT_USAGE, CMD, t.path, "out of memory");
    }
    char *line = malloc(TAIL_LINE_BYTES);
    if (!line) {
        free(ring.lines);
        return cli_fail(CLI_EXIT_USAGE, CMD, t.path, "out of memory");
    }
    while (!stop_requested && status == 0) {
        vor_reader *r = open_when_ready(&t, &status);
        if (!r) break;
        /* Read until an error, an interruption or a new run. */
        int restart = 0;
        for (;;) {
            vor_reader_frame f;
            vor_read_status st = vor_reader_next(r, &f);
            if (st == VOR_READ_FRAME) {
                format_frame(line, r, &f);
                if (catch_up) {
                    if (ring_push(&ring, line) != 0) catch_up = 0;
                } else {
                    fprintf(stdout, "%s\n", line);
                }
                if (stop_requested) break;
                continue;
            }
            if (st == VOR_READ_ERROR) {
                /* A new run writing over the file puts other bytes where we read: not corruption. */
                if (new_run(&t, vor_reader_offset(r), 1)) {
                    restart = 1;
                    break;
                }
                char message[1200];
                status = cli_fail(CLI_EXIT_USAGE, CMD, t.path, "%s",
                                  cli_reader_message(r, t.reader_name, message, sizeof message));
                break;
            }
            /* Nothing yet: what was there is read. */
            if (catch_up) {
                ring_flush(&ring, stdout);
                catch_up = 0;
            }
            errno = 0;
            if (fflush(stdout) != 0 || ferror(stdout)) {
                status = cli_write_error(CMD, "stdout", 1, errno, NULL);
                break;
            }
            if (stop_requested) break;
            sleep_ms(t.interval_ms);
            if (stop_requested) break;
            /* Before reading on: bytes of a new run past our offset must not be read as ours. */
            if (new_run(&t, vor_reader_offset(r), 0)) {
                restart = 1;
                break;
            }
        }
        vor_reader_close(r);
        close_file(&t);
        if (restart) {
            if (catch_up) { /* the old run's last frames first */
                ring_flush(&ring, stdout);
                catch_up = 0;
            }
            fflush(stdout);
            cli_note(CMD, t.path, "new run: the file was truncated or replaced; reading it from the start");
        }
    }
    if (catch_up) ring_flush(&ring, stdout);
    fflush(stdout);
    for (uint32_t i = 0; i < ring.cap; i++) free(ring.lines[i]);
    free(ring.lines);
    free(line);
    return status;
}
