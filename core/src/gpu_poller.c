/* gpu_poller.c: the thread that reads the GPUs during a session, so that vor_frame_mark
 * never waits on the driver.
 *
 * A session with GPU columns starts one thread ("vor-gpu"). It reads every GPU column
 * through NVML (a "round"), stamps the round with the monotonic clock and publishes it,
 * then sleeps until the next round: VOR_GPU_POLL_HZ rounds a second (default 10, 1 to
 * 1000, read when the session starts); a round that takes longer than its period (NVML's
 * PCIe reading alone samples 20 ms per direction) is followed by half a period of rest.
 * The frame thread copies the latest published round under a trylock: if the poller is
 * publishing at that instant it keeps the copy it had, so a frame never waits. A frame
 * carries a round's values if the round is at most max(1 s, 4 periods) old; a value whose
 * reading failed in that round, a device that was lost, or a poller that fell behind
 * leaves the value absent (never 0).
 *
 * What goes wrong is reported by the frame thread (the poller never calls the logger,
 * which may call back into vor): each failing reading and each lost GPU once per session.
 *
 * Ending: vor_shutdown (and, for a program without file outputs, an exit hook) stops the
 * thread: a flag and an eventfd wake it, it stops between two NVML calls, and is joined.
 * A driver call that does not return within a second leaves the thread behind (it exits
 * once the call returns); GPU values are then off for the rest of the process and NVML
 * stays initialised under it. Locks: `sample_lock` only (leaf; held for a copy of one
 * round; taken by the poller and, with trylock, the frame thread under the frame lock).
 * fork(): the child has no poller; since NVML's state is the parent's, the child reads no
 * GPU values (its frames leave the columns absent, one info line if it starts a session).
 * The fork handler takes no lock, so it needs no place in session.c's lock order.
 */
#include "platform.h"

#if defined(VOR_PLATFORM_LINUX)

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

#define DEFAULT_HZ 10u
#define MAX_HZ 1000u
#define NS_PER_S 1000000000ull
#define JOIN_LIMIT_NS NS_PER_S   /* how long vor_shutdown waits for a driver call */
#define STALE_MIN_NS NS_PER_S    /* a round older than max(this, 4 periods) is not used */

typedef struct poller {
    pthread_t thread;
    int wake_fd;
    int stop; /* atomic */
    uint64_t period_ns;
    const vor_gpu_column *columns;
    uint32_t n_columns;
    void *handles[VOR_GPU_DEVICES_MAX];
    int lost[VOR_GPU_DEVICES_MAX]; /* poller thread only */
} poller;

typedef struct sample {
    uint64_t taken_ns; /* CLOCK_MONOTONIC; 0 = none */
    uint32_t present;  /* bit i: column i has a value */
    int64_t raw[VOR_GPU_COLUMNS_MAX];
} sample;

static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;
static sample published;  /* under sample_lock */
static sample frame_copy; /* frame thread */

/* Under the frame lock (and in the fork child, alone). */
static poller *current;
/* A poller left in a driver call: its thread may still use it, so it is never freed (and
 * stays reachable from here, for leak checkers). At most one: none starts after it. */
static poller *abandoned;
static const char *off_reason; /* set: GPU values are off for the process */
static uint64_t stale_ns;

/* Poller -> frame thread: what to report. Bits are set with release after the text. */
static uint32_t lost_slots, failed_columns; /* atomic */
static const char *lost_text;
static const char *failed_text[VOR_GPU_COLUMNS_MAX];
static int failed_code[VOR_GPU_COLUMNS_MAX];
static uint32_t reported_lost, reported_failed; /* frame thread */

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void publish(const sample *s) {
    pthread_mutex_lock(&sample_lock);
    published = *s;
    pthread_mutex_unlock(&sample_lock);
}

/* ---- The thread --------------------------------------------------------------------- */

static void poll_round(poller *p) {
    sample s;
    memset(&s, 0, sizeof s);
    for (uint32_t i = 0; i < p->n_columns; i++) {
        if (vor_atomic_load_acquire(&p->stop)) return; /* a partial round is not published */
        const vor_gpu_column *c = &p->columns[i];
        void *handle = p->handles[c->slot];
        if (handle == NULL || p->lost[c->slot]) continue;
        int code = vor_nvml_read(handle, c->metric, &s.raw[i]);
        if (code == VOR_NVML_SUCCESS) {
            s.present |= 1u << i;
        } else if (code == VOR_NVML_ERROR_GPU_IS_LOST) {
            p->lost[c->slot] = 1;
            lost_text = vor_nvml_error_text(code);
            __atomic_fetch_or(&lost_slots, 1u << c->slot, __ATOMIC_RELEASE);
        } else if (!(vor_atomic_load_relaxed(&failed_columns) & (1u << i))) {
            failed_code[i] = code;
            failed_text[i] = vor_nvml_error_text(code);
            __atomic_fetch_or(&failed_columns, 1u << i, __ATOMIC_RELEASE);
        }
    }
    s.taken_ns = monotonic_ns();
    publish(&s);
}

/* Sleeps until `until` (monotonic ns) or until woken to stop. */
static void rest(poller *p, uint64_t until) {
    struct pollfd fd = {p->wake_fd, POLLIN, 0};
    while (!vor_atomic_load_acquire(&p->stop)) {
        uint64_t now = monotonic_ns();
        if (now >= until) return;
        struct timespec t = {(time_t)((until - now) / NS_PER_S), (long)((until - now) % NS_PER_S)};
        if (ppoll(&fd, 1, &t, NULL) > 0) return; /* woken: stop is set */
    }
}

static void *poller_main(void *arg) {
    poller *p = arg;
    uint64_t next = monotonic_ns();
    while (!vor_atomic_load_acquire(&p->stop)) {
        poll_round(p);
        uint64_t now = monotonic_ns();
        next += p->period_ns;
        if ((int64_t)(next - now) < 0) next = now + p->period_ns / 2; /* fell behind: rest anyway */
        rest(p, next);
    }
    return NULL;
}

/* ---- Process hooks ------------------------------------------------------------------- */

static void after_fork_child(void) {
    poller *p = current;
    if (p) {
        close(p->wake_fd);
        free(p);
        current = NULL;
    }
    off_reason = "not read in a process forked from the one that loaded NVML (NVML is not used across fork())";
}

/* A program without file outputs may exit with a session running: the thread must be out
 * of the driver before the driver's library is finalised. */
static void stop_at_exit(void) {
    if (!vor_frame_lock_acquire()) return; /* exit() from inside vor: leave it */
    vor_gpu_end_session();
    vor_frame_lock_release();
}

static void install_hooks(void) {
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(stop_at_exit);
}

/* ---- Session ------------------------------------------------------------------------- */

/* VOR_GPU_POLL_HZ: a whole number from 1 to 1000; anything else is reported, ignored. */
static uint32_t poll_hz(void) {
    const char *text = getenv("VOR_GPU_POLL_HZ");
    if (text == NULL || *text == '\0') return DEFAULT_HZ;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || errno || *end != '\0' || v == 0 || v > MAX_HZ) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT,
                     "VOR_GPU_POLL_HZ=\"%.40s\" is not a whole number from 1 to %u; ignored (%u)", text, MAX_HZ,
                     DEFAULT_HZ);
        return DEFAULT_HZ;
    }
    return (uint32_t)v;
}

void vor_gpu_publish_first(const int64_t *raw, uint32_t present) {
    pthread_once(&hooks_once, install_hooks);
    sample s;
    memset(&s, 0, sizeof s);
    memcpy(s.raw, raw, sizeof s.raw);
    s.present = present;
    s.taken_ns = monotonic_ns();
    publish(&s);
}

void vor_gpu_begin_session(void) {
    const vor_gpu_column *columns;
    uint32_t n = vor_gpu_columns(&columns);
    if (n == 0 || current != NULL) return; /* no GPU columns; or resuming after vor_disable */
    if (off_reason) {
        vor_log(VOR_LOG_GPU_UNAVAILABLE, "%s", off_reason);
        return;
    }
    poller *p = calloc(1, sizeof *p);
    if (p == NULL) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "GPU poller");
        return;
    }
    p->columns = columns;
    p->n_columns = n;
    if (vor_gpu_devices_open(p->handles) == 0) {
        free(p);
        return;
    }
    p->period_ns = NS_PER_S / poll_hz();
    stale_ns = 4 * p->period_ns > STALE_MIN_NS ? 4 * p->period_ns : STALE_MIN_NS;
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int err = p->wake_fd < 0 ? errno : 0;
    if (err == 0) {
        vor_atomic_store_relaxed(&lost_slots, 0);
        vor_atomic_store_relaxed(&failed_columns, 0);
        reported_lost = reported_failed = 0;
        pthread_once(&hooks_once, install_hooks);
        /* The thread takes no signal meant for the program. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        err = pthread_create(&p->thread, NULL, poller_main, p);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (err != 0) close(p->wake_fd);
    }
    if (err != 0) {
        vor_log(VOR_LOG_GPU_UNAVAILABLE, "the GPU poller could not start: %s", strerror(err));
        vor_gpu_devices_close();
        free(p);
        return;
    }
    pthread_setname_np(p->thread, "vor-gpu");
    current = p;
}

void vor_gpu_end_session(void) {
    poller *p = current;
    if (p == NULL) return;
    current = NULL;
    vor_atomic_store_release(&p->stop, 1);
    uint64_t one = 1;
    ssize_t woken = write(p->wake_fd, &one, sizeof one);
    (void)woken; /* an eventfd write fails only on overflow; the flag alone stops it at its next wake */
    struct timespec limit;
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += (time_t)(JOIN_LIMIT_NS / NS_PER_S);
    if (pthread_timedjoin_np(p->thread, NULL, &limit) == 0) {
        close(p->wake_fd);
        vor_gpu_devices_close();
        free(p);
        return;
    }
    pthread_detach(p->thread); /* it ends by itself once the call returns */
    abandoned = p;
    off_reason = "an NVML call did not return within 1 s in an earlier session";
    vor_log_each(VOR_LOG_GPU_READ_FAILED, "an NVML call did not return within 1 s; the GPU poller was left in it, "
                                          "and GPU values are off for the rest of the process");
}

/* Reports, once per session, each lost GPU and each failing reading the poller met. */
static void report_events(const poller *p) {
    uint32_t lost = vor_atomic_load_acquire(&lost_slots) & ~reported_lost;
    uint32_t failed = vor_atomic_load_acquire(&failed_columns) & ~reported_failed;
    for (uint32_t i = 0; i < p->n_columns && (lost || failed); i++) {
        const vor_gpu_column *c = &p->columns[i];
        if (lost & (1u << c->slot)) {
            lost &= ~(1u << c->slot);
            reported_lost |= 1u << c->slot;
            vor_log_each(VOR_LOG_GPU_READ_FAILED, "GPU %u: %s; its columns are absent from now on", c->device,
                         lost_text);
        }
        if (failed & (1u << i)) {
            failed &= ~(1u << i);
            reported_failed |= 1u << i;
            vor_log_each(VOR_LOG_GPU_READ_FAILED, "%s: %s (NVML error %d)", c->name, failed_text[i], failed_code[i]);
        }
    }
}

uint32_t vor_gpu_sample(int64_t *raw) {
    poller *p = current;
    if (p == NULL) return 0;
    report_events(p);
    if (pthread_mutex_trylock(&sample_lock) == 0) {
        frame_copy = published;
        pthread_mutex_unlock(&sample_lock);
    }
    if (frame_copy.taken_ns == 0 || monotonic_ns() - frame_copy.taken_ns > stale_ns) return 0;
    memcpy(raw, frame_copy.raw, p->n_columns * sizeof *raw);
    return frame_copy.present;
}

#endif /* VOR_PLATFORM_LINUX */
