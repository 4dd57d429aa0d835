/* system_metrics_linux.c: the system columns of a native Linux process.
 *
 *   frame_ms   wall time of the frame (from the frame assembly)
 *   memory_mb  resident set size now: /proc/self/statm, read with pread on a descriptor
 *              kept open (one syscall, about a microsecond; reopening costs several)
 *   io_ms      I/O time recorded with vor_record_io during the frame
 *   io_MB      I/O bytes recorded with vor_record_io during the frame
 *   cpu_ms     CPU time the process used during the frame, all threads
 *              (CLOCK_PROCESS_CPUTIME_ID: can exceed frame_ms with several busy threads)
 *   GPU rows   with an NVIDIA driver: gpu_util, gpu_mem, gpu_power, pcie, gpu_temp,
 *              gpu_clock per GPU (gpu.h: NVML loaded at run time, read by a background
 *              thread; each frame copies the latest reading without waiting)
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

#include "gpu.h"
#include "nvtx_ranges.h"
#include "vor_internal.h"

enum { COL_FRAME, COL_MEMORY, COL_IO_MS, COL_IO_MB, COL_CPU, COL_COUNT };

static const vor_system_column_def linux_columns[COL_COUNT] = {
    {"frame_ms", "ms", 1e-6, 0}, {"memory_mb", "MB", 1e-6, 1}, {"io_ms", "ms", 1e-3, 0},
    {"io_MB", "MB", 1e-6, 0},    {"cpu_ms", "ms", 1e-3, 0},
};
_Static_assert(COL_COUNT + VOR_GPU_COLUMNS_MAX == VOR_SYSTEM_COLUMNS_MAX, "the GPU columns fill the system columns");

/* Linux's columns, then the GPU columns (decided once per process, gpu_devices.c). */
static vor_system_column_def all_columns[VOR_SYSTEM_COLUMNS_MAX];
static uint32_t n_all_columns;
static pthread_once_t columns_once = PTHREAD_ONCE_INIT;

static int statm_fd = -1;
static vor_mutex statm_lock = VOR_MUTEX_INIT;
static uint64_t cpu_prev_ns;
static int cpu_valid;

static void declare_columns(void) {
    for (uint32_t c = 0; c < COL_COUNT; c++) all_columns[c] = linux_columns[c];
    const vor_gpu_column *gpu;
    uint32_t n_gpu = vor_gpu_columns(&gpu);
    for (uint32_t g = 0; g < n_gpu; g++) all_columns[COL_COUNT + g] = vor_gpu_column_def(&gpu[g]);
    n_all_columns = COL_COUNT + n_gpu;
}

const vor_system_column_def *vor_system_columns(uint32_t *count) {
    pthread_once(&columns_once, declare_columns);
    *count = n_all_columns;
    return all_columns;
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
    vor_gpu_begin_session();  /* a resume after vor_disable keeps the running poller */
    vor_nvtx_begin_session(); /* VOR_NVTX, decided once per process */
}

void vor_system_end_session(void) {
    cpu_valid = 0;
    vor_gpu_end_session();
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
    present |= vor_gpu_sample(raw + COL_COUNT) << COL_COUNT;
    return present;
}

#endif /* VOR_PLATFORM_LINUX */
