/* system_metrics_linux.c: the system columns of a native Linux process.
 *
 *   frame_ms   wall time of the frame (from the frame assembly)
 *   memory_mb  resident set size now: /proc/self/statm, read with pread on a descriptor
 *              kept open (one syscall, about a microsecond; reopening costs several)
 *   io_ms      I/O time recorded with vor_record_io during the frame
 *   io_MB      I/O bytes recorded with vor_record_io during the frame
 *   cpu_ms     CPU time the process used during the frame, all threads
 *              (CLOCK_PROCESS_CPUTIME_ID: can exceed frame_ms with several busy threads)
 *
 * Raw values are integers: ns for the frame time, us for io_ms and cpu_ms (finer is
 * noise there, and each digit costs capture bytes), bytes for sizes; each column's scale
 * turns them into its unit.
 * MB here is 10^6 bytes. A value the system does not give this frame is absent, never 0.
 */
#include "platform.h"

#if defined(VOR_PLATFORM_LINUX)

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "vor_internal.h"

enum { COL_FRAME, COL_MEMORY, COL_IO_MS, COL_IO_MB, COL_CPU, COL_COUNT };

static const vor_system_column_def linux_columns[COL_COUNT] = {
    {"frame_ms", "ms", 1e-6, 0}, {"memory_mb", "MB", 1e-6, 1}, {"io_ms", "ms", 1e-3, 0},
    {"io_MB", "MB", 1e-6, 0},    {"cpu_ms", "ms", 1e-3, 0},
};

static int statm_fd = -1;
static vor_mutex statm_lock = VOR_MUTEX_INIT;
static uint64_t cpu_prev_ns;
static int cpu_valid;

const vor_system_column_def *vor_system_columns(uint32_t *count) {
    *count = COL_COUNT;
    return linux_columns;
}

static int read_statm_rss(uint64_t *bytes) {
    char text[128];
    vor_mutex_lock(&statm_lock);
    if (statm_fd < 0) statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    ssize_t n = statm_fd >= 0 ? pread(statm_fd, text, sizeof text - 1, 0) : -1;
    vor_mutex_unlock(&statm_lock);
    if (n <= 0) return 0;
    text[n] = '\0';
    /* "size resident shared text lib data dt", in pages. */
    char *end = NULL;
    strtoull(text, &end, 10);
    if (end == text) return 0;
    char *start = end;
    unsigned long long pages = strtoull(start, &end, 10);
    if (end == start) return 0;
    *bytes = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
    return 1;
}

static int read_cpu_ns(uint64_t *ns) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return 1;
}

/* fork(): the reader's lock is taken before and released after (session.c). The child
 * closes the descriptor, which reads the parent's /proc entry, and opens its own. */
void vor_system_fork(vor_fork_phase phase) {
    if (phase == VOR_FORK_PREPARE) {
        pthread_mutex_lock(&statm_lock);
        return;
    }
    if (phase == VOR_FORK_CHILD && statm_fd >= 0) {
        close(statm_fd);
        statm_fd = -1;
    }
    pthread_mutex_unlock(&statm_lock);
}

uint64_t vor_current_memory_bytes(void) {
    uint64_t bytes = 0;
    return read_statm_rss(&bytes) ? bytes : 0;
}

void vor_system_begin_session(void) {
    cpu_valid = read_cpu_ns(&cpu_prev_ns);
}

void vor_system_end_session(void) {
    cpu_valid = 0;
}

uint32_t vor_system_sample(int64_t *raw, int64_t frame_ns, uint64_t io_ns, uint64_t io_bytes) {
    uint32_t present = 0;
    raw[COL_FRAME] = frame_ns;
    present |= 1u << COL_FRAME;
    uint64_t rss = 0;
    if (read_statm_rss(&rss)) {
        raw[COL_MEMORY] = (int64_t)rss;
        present |= 1u << COL_MEMORY;
    }
    raw[COL_IO_MS] = (int64_t)((io_ns + 500) / 1000); /* us */
    raw[COL_IO_MB] = (int64_t)io_bytes;
    present |= (1u << COL_IO_MS) | (1u << COL_IO_MB);
    uint64_t cpu = 0;
    if (read_cpu_ns(&cpu)) {
        if (cpu_valid) {
            raw[COL_CPU] = (int64_t)((cpu - cpu_prev_ns + 500) / 1000); /* us */
            present |= 1u << COL_CPU;
        }
        cpu_prev_ns = cpu;
        cpu_valid = 1;
    }
    return present;
}

#endif /* VOR_PLATFORM_LINUX */
