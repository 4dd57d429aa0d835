/* capture_input.c: opens a capture for the one-shot commands (summary, export) and reads
 * its frames, turning every failure into one message that names the file.
 *
 * The file is opened once with open(2) before the reader gets it, so that a missing or
 * unreadable file is reported with the system's own words ("No such file or directory")
 * whatever the reader's message style. A capture whose header is not complete is an error
 * here (a finished file must have one); `vor tail` waits for it instead. A torn last
 * record is not an error: the reader reports "nothing yet" and we stop there, so a
 * capture cut short by a crash gives every complete frame.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_capture_open(cli_capture *c, const char *cmd, const char *path) {
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->path = path;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s", strerror(errno));
    struct stat st;
    int have_stat = fstat(fd, &st) == 0;
    int is_dir = have_stat && S_ISDIR(st.st_mode);
    if (have_stat && S_ISREG(st.st_mode)) c->file_size = (uint64_t)st.st_size;
    close(fd);
    if (is_dir) return cli_fail(CLI_EXIT_USAGE, cmd, path, "is a directory, not a capture");

    char err[512] = "";
    c->reader = vor_reader_open(path, err, sizeof err);
    if (!c->reader) return cli_fail(CLI_EXIT_USAGE, cmd, path, "%s", err[0] ? cli_strip_path_prefix(err, path) : "cannot open");
    int h = vor_reader_poll_header(c->reader);
    if (h < 0) {
        int status = cli_fail(CLI_EXIT_USAGE, cmd, path, "%s", cli_strip_path_prefix(vor_reader_error(c->reader), path));
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

int cli_capture_next(cli_capture *c, vor_reader_frame *frame) {
    vor_read_status st = vor_reader_next(c->reader, frame);
    if (st == VOR_READ_FRAME) {
        c->frames++;
        return 1;
    }
    if (st == VOR_READ_NOTHING_YET) return 0;
    cli_fail(CLI_EXIT_USAGE, c->cmd, c->path, "%s", cli_strip_path_prefix(vor_reader_error(c->reader), c->path));
    return -1;
}

void cli_capture_close(cli_capture *c) {
    vor_reader_close(c->reader);
    c->reader = NULL;
}
