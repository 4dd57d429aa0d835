/* file_write.h: the one way vor's file outputs (the .vor capture, the VOR_TRACE JSON)
 * hand bytes to the OS.
 *
 * A profiler must never kill the program it measures. Writing past the process's
 * file-size limit (RLIMIT_FSIZE, `ulimit -f`) makes the kernel send SIGXFSZ, whose
 * default action ends the process, and changing the program's signal disposition is
 * not ours to do. So the limit is checked before each write: a write that would cross
 * it is not made and fails with EFBIG, exactly like a full disk (ENOSPC), and what was
 * written before stays whole and readable.
 */
#ifndef VOR_FILE_WRITE_H
#define VOR_FILE_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* Writes all `n` bytes of `p` to `fd`, whose current offset the caller tracks in
 * `*offset` (advanced by what was written). Retries on EINTR and short writes. Returns 0,
 * or an errno value: EFBIG when the bytes would cross the file-size limit (nothing is
 * written then), else what write(2) reported. */
int vor_file_write_all(int fd, const void *p, size_t n, uint64_t *offset);

#endif /* VOR_FILE_WRITE_H */
