/* capture_input.c: opens input files for the commands, and a capture for the one-shot
 * commands (summary, export, flamegraph, diff), reading its frames and turning every
 * failure into one message that names the file.
 *
 * Inputs are regular files. A capture is read with pread (the reader moves back and forth
 * through a window), which a pipe cannot do, and a FIFO with no writer would block open(2)
 * forever: so every input is opened with O_NONBLOCK first (which opens a FIFO at once),
 * checked with fstat, and anything that is not a regular file is refused with what it is
 * ("is a pipe", "is a directory"). The reader then opens /proc/self/fd/N, the very file
 * that was checked (no window for a swap), and names it that short way in its messages:
 * a long path can then never push the problem out of the reader's message buffer.
 *
 * A capture whose header is not complete is an error here (a finished file must have
 * one); `vor tail` waits for it instead. A torn last record is not an error: the reader
 * reports "nothing yet" and we stop there, so a capture cut short by a crash gives every
 * complete frame.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_input_check(const char *cmd, const char *path, int fd, cli_input_kind kind, struct stat *st) {
    struct stat local;
    if (!st) st = &local;
    if (fstat(fd, st) != 0) return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s", strerror(errno));
    if (S_ISREG(st->st_mode)) return 0;
    int folded = kind == CLI_INPUT_FOLDED;
    if (S_ISDIR(st->st_mode))
        return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s",
                        folded ? "is a directory, not a folded stacks file" : "is a directory, not a capture");
    if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode))
        return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s",
                        folded ? "is a pipe; to read folded stacks from a pipe, give --folded - (stdin)"
                               : "is a pipe; vor reads capture files (save the stream to a file first)");
    return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s",
                    folded ? "is not a regular file; vor reads folded stacks from a file or stdin (--folded -)"
                           : "is not a regular file; vor reads capture files");
}

int cli_input_open(const char *cmd, const char *path, cli_input_kind kind, struct stat *st) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        cli_fail(CLI_EXIT_USAGE, cmd, path, "%s", strerror(errno));
        return -1;
    }
    if (cli_input_check(cmd, path, fd, kind, st) != 0) {
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

vor_reader *cli_reader_open(int fd, const char *path, char name[CLI_READER_NAME_BYTES], char *err, size_t err_cap) {
    snprintf(name, CLI_READER_NAME_BYTES, "/proc/self/fd/%d", fd);
    struct stat proc_st, fd_st;
    /* Only when /proc shows this very file (a chroot or container may lack /proc). */
    vor_reader *r;
    if (stat(name, &proc_st) == 0 && fstat(fd, &fd_st) == 0 && proc_st.st_dev == fd_st.st_dev &&
        proc_st.st_ino == fd_st.st_ino) {
        r = vor_reader_open(name, err, err_cap);
        vor_reader_set_max_frame_scopes(r, STACKS_DEFAULT_MAX_FRAME_SCOPES);
        return r;
    }
    r = vor_reader_open(path, err, err_cap);
    vor_reader_set_max_frame_scopes(r, STACKS_DEFAULT_MAX_FRAME_SCOPES);
    /* The reader's messages start with the path: stripped when short enough to be whole. */
    size_t n = strlen(path);
    if (n < CLI_READER_NAME_BYTES)
        memcpy(name, path, n + 1);
    else
        name[0] = '\0';
    return r;
}

int cli_capture_open(cli_capture *c, const char *cmd, const char *path) {
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->path = path;
    struct stat st;
    int fd = cli_input_open(cmd, path, CLI_INPUT_CAPTURE, &st);
    if (fd < 0) return CLI_EXIT_USAGE;
    c->file_size = (uint64_t)st.st_size;

    char err[512] = "";
    c->reader = cli_reader_open(fd, path, c->reader_name, err, sizeof err);
    close(fd); /* the reader has its own */
    if (!c->reader)
        return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s",
                        err[0] ? cli_strip_path_prefix(err, c->reader_name) : "cannot open");
    int h = vor_reader_poll_header(c->reader);
    if (h < 0) {
        int status = cli_fail(CLI_EXIT_USAGE, cmd, path, "%s",
                              cli_strip_path_prefix(vor_reader_error(c->reader), c->reader_name));
        cli_capture_close(c);
        return status;
    }
    if (h == 0) {
        cli_capture_close(c);
        if (c->file_size == 0) return cli_fail(CLI_EXIT_USAGE, cmd, path, "empty file, not a capture (yet?)");
        return cli_fail(CLI_EXIT_USAGE, cmd, path, "not a capture, or its header is incomplete (%llu bytes)",
                        (unsigned long long)c->file_size);
    }
    return 0;
}

/* Damage the reader skipped (format 1.1): one note per damaged record, never silent. */
static void note_damage(cli_capture *c) {
    uint64_t n = vor_reader_damage_count(c->reader);
    for (; c->damage_noted < n; c->damage_noted++) {
        vor_reader_damage d;
        if (!vor_reader_get_damage(c->reader, (uint32_t)c->damage_noted, &d)) {
            cli_note(c->cmd, c->path, "%llu more damaged records skipped", (unsigned long long)(n - c->damage_noted));
            c->damage_noted = n;
            break;
        }
        cli_note(c->cmd, c->path, "damaged record at byte %llu skipped (%s)", (unsigned long long)d.offset, d.problem);
    }
}

int cli_capture_next(cli_capture *c, vor_reader_frame *frame) {
    vor_read_status st = vor_reader_next(c->reader, frame);
    note_damage(c);
    if (st == VOR_READ_FRAME) {
        c->frames++;
        return 1;
    }
    if (st == VOR_READ_NOTHING_YET) return 0;
    char message[1200];
    cli_fail(CLI_EXIT_USAGE, c->cmd, c->path, "%s",
             cli_reader_message(c->reader, c->reader_name, message, sizeof message));
    return -1;
}

void cli_capture_set_max_frame_scopes(cli_capture *c, uint64_t max) {
    vor_reader_set_max_frame_scopes(c->reader, max);
}

/* The reader's text for "the limit set for this reader" (reader.c / record_decoder.c). */
#define READER_LIMIT_TEXT "the limit set for this reader"

const char *cli_reader_message(const vor_reader *r, const char *reader_name, char *buf, size_t cap) {
    const char *message = cli_strip_path_prefix(vor_reader_error(r), reader_name);
    size_t len = cli_append(buf, cap, 0, "%s", message);
    if (strstr(message, READER_LIMIT_TEXT))
        cli_append(buf, cap, len,
                   "; --max-frame-scopes raises it, up to %u, if the capture is genuine (about %u "
                   "bytes of memory per scope)",
                   STACKS_LIMIT_MAX_FRAME_SCOPES, STACKS_BYTES_PER_SCOPE);
    return buf;
}

void cli_capture_close(cli_capture *c) {
    vor_reader_close(c->reader);
    c->reader = NULL;
}

int cli_parse_max_frame_scopes(const char *cmd, const char *text, uint64_t *out) {
    *out = STACKS_DEFAULT_MAX_FRAME_SCOPES;
    if (!text) return 0;
    if (cli_parse_u64(text, 1, STACKS_LIMIT_MAX_FRAME_SCOPES, out) == 0) return 0;
    cli_usage_error(cmd, "--max-frame-scopes needs a number from 1 to %u, not '%s'", STACKS_LIMIT_MAX_FRAME_SCOPES,
                    text);
    return -1;
}

int cli_stacks_add(const char *cmd, const cli_capture *c, stacks *s, const vor_reader_frame *f) {
    int rc = stacks_add_frame(s, c->reader, f);
    if (rc == STACKS_OK) return 0;
    if (rc == STACKS_NO_MEMORY)
        return cli_fail(CLI_EXIT_USAGE, cmd, c->path, "out of memory reading the scopes of frame %llu",
                        (unsigned long long)f->index);
    char n[NUMFMT_BYTES], max[NUMFMT_BYTES];
    numfmt_count(n, s->frame_scopes);
    numfmt_count(max, s->opt.max_frame_scopes);
    return cli_fail(CLI_EXIT_USAGE, cmd, c->path,
                    "frame %llu holds %s scopes, more than the %s one frame may have here (--max-frame-scopes; "
                    "about %u bytes of memory each): raise it, up to %u, if the capture is genuine",
                    (unsigned long long)f->index, n, max, STACKS_BYTES_PER_SCOPE, STACKS_LIMIT_MAX_FRAME_SCOPES);
}
