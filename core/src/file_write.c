/* file_write.c: writes that never raise SIGXFSZ (see file_write.h). */
#include "file_write.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "platform.h"

/* The file-size limit now, or UINT64_MAX when there is none. Read at every write (one
 * cheap system call per frame): a program may lower its limit while it runs. */
static uint64_t file_size_limit(void) {
#if defined(VOR_PLATFORM_LINUX)
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) return (uint64_t)rl.rlim_cur;
#endif
    return UINT64_MAX;
}

int vor_file_write_all(int fd, const void *p, size_t n, uint64_t *offset) {
    const uint8_t *bytes = p;
    uint64_t limit = file_size_limit();
    if (limit != UINT64_MAX && (*offset > limit || n > limit - *offset)) return EFBIG;
    while (n > 0) {
        ssize_t w = write(fd, bytes, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno ? errno : EIO;
        }
        if (w == 0) return EIO;
        bytes += w;
        n -= (size_t)w;
        *offset += (uint64_t)w;
    }
    return 0;
}
