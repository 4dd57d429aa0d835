/* output.c: where a command writes: `-o OUT` or stdout.
 *
 * Output goes through stdio with a large buffer (exports write hundreds of MB). Write
 * errors are sticky in stdio, so one check at the end (fflush + ferror + fclose) catches
 * a full disk as well as an unwritable file; the message names the path. When the
 * command fails (a corrupt capture half-way), the half-written file is removed so that
 * nobody mistakes it for a complete export (regular files only: `-o /dev/full` must not
 * delete the device); stdout cannot be taken back.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OUTPUT_BUFFER_BYTES (256u * 1024u)

const char *cli_output_name(const cli_output *o) { return o->path ? o->path : "stdout"; }

int cli_output_open(cli_output *o, const char *cmd, const char *path) {
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    o->path = path;
    o->f = fopen(path, "wb");
    if (!o->f) return cli_fail(CLI_EXIT_IO, cmd, path, "cannot write: %s", strerror(errno));
    /* Only a regular file is ever removed on failure: never /dev/full or a FIFO. */
    struct stat st;
    o->removable = fstat(fileno(o->f), &st) == 0 && S_ISREG(st.st_mode);
    o->buffer = malloc(OUTPUT_BUFFER_BYTES);
    if (o->buffer) setvbuf(o->f, o->buffer, _IOFBF, OUTPUT_BUFFER_BYTES); /* else stdio's default */
    return 0;
}

int cli_output_close(cli_output *o, int status, int discard) {
    if (!o->f) return status;
    int err = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) err = errno ? errno : EIO;
    if (o->path) {
        errno = 0;
        if (fclose(o->f) != 0 && !err) err = errno ? errno : EIO;
        if ((discard || err) && o->removable) remove(o->path);
    }
    o->f = NULL;
    free(o->buffer);
    o->buffer = NULL;
    if (status != 0) return status;
    if (err) return cli_fail(CLI_EXIT_IO, o->cmd, cli_output_name(o), "write error: %s", strerror(err));
    return 0;
}
