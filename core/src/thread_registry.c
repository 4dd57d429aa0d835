/* thread_registry.c: creates, names, finds and frees the per-thread buffers.
 *
 * A thread gets its buffer on its first recorded scope: the thread record and its ring
 * (thread_ring.c). The registry is a fixed array of slots that the frame thread walks;
 * registration takes a mutex (once per thread).
 * When a thread exits, a pthread key destructor notes when and how deep its stack was; the
 * frame thread drains what it wrote, closes the scopes it left open (frame_threads.c) and
 * frees the buffer, so the slot is reused and memory stays bounded by max_threads buffers.
 *
 * Buffers of live threads survive vor_shutdown() (their threads still hold pointers to
 * them); the next session discards events that ended before its start.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#if defined(VOR_PLATFORM_LINUX) || defined(__linux__)
#include <sys/syscall.h>
#endif

#include "clock.h"
#include "utf8.h"
#include "vor_internal.h"

uint64_t vor_refused_scopes;

static vor_mutex registry_lock = VOR_MUTEX_INIT;
static vor_thread *slots[VOR_MAX_MAX_THREADS];
static uint32_t slot_count;       /* atomic: slots in use are below this */
static uint32_t live_threads;     /* under registry_lock: threads running with a buffer */
static uint32_t exited_threads;   /* under registry_lock: exited, buffer not yet collected */
static uint32_t next_thread_id;   /* under registry_lock */
static uint32_t registered_total; /* atomic */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* A name set before the thread's buffer exists, and whether this thread was refused. */
static VOR_TLS char pending_name[VOR_THREAD_NAME_BYTES];
static VOR_TLS int refused;

/* Names of exited threads stay findable for outputs that declare them late. */
#define EXITED_NAMES VOR_MAX_MAX_THREADS /* enough for every slot to turn over in one frame */
static struct {
    uint32_t thread_id;
    uint64_t os_tid;
    char name[VOR_THREAD_NAME_BYTES];
} exited_names[EXITED_NAMES];
static uint32_t exited_names_next;

static void on_thread_exit(void *arg) {
    vor_thread *t = arg;
    t->exit_tick = vor_clock_ticks();
    t->open_at_exit = t->depth;
    vor_tls_thread = NULL;
    /* No longer counted against max_threads: a program that starts and ends many short
     * threads per frame is not refused (the buffer waits for the frame thread). */
    vor_mutex_lock(&registry_lock);
    live_threads--;
    exited_threads++;
    /* Under the lock, with the counts: a fork() sees both or neither. */
    vor_atomic_store_release(&t->exited, 1);
    vor_mutex_unlock(&registry_lock);
}

static void create_exit_key(void) {
    pthread_key_create(&exit_key, on_thread_exit);
}

static uint64_t current_os_tid(void) {
#if defined(VOR_PLATFORM_LINUX)
    return (uint64_t)syscall(SYS_gettid);
#else
    return 0;
#endif
}

static int is_main_thread(void) {
#if defined(VOR_PLATFORM_LINUX)
    return (pid_t)syscall(SYS_gettid) == getpid();
#else
    return 1; /* the browser build without pthreads has one thread */
#endif
}

/* Copies a name into `cap` bytes (cap >= 1), cut at a UTF-8 character boundary: every
 * copy of a thread name (stored, or handed to an output or a caller's buffer) is cut by
 * this one rule (utf8.h), so no output ever holds part of a character. */
static void copy_name_cut(char *dst, size_t cap, const char *src) {
    size_t n = vor_utf8_cut(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void copy_name(char *dst, const char *src) {
    copy_name_cut(dst, VOR_THREAD_NAME_BYTES, src);
}

vor_thread *vor_thread_attach(void) {
    if (refused) return NULL;
    pthread_once(&exit_key_once, create_exit_key);

    vor_mutex_lock(&registry_lock);
    uint32_t slot = VOR_MAX_MAX_THREADS;
    /* At most max_threads running, and as many again exited and waiting to be collected. */
    if (live_threads < vor_settings_now.max_threads && exited_threads < vor_settings_now.max_threads) {
        uint32_t n = vor_atomic_load_relaxed(&slot_count);
        for (uint32_t i = 0; i < n; i++) {
            if (slots[i] == NULL) {
                slot = i;
                break;
            }
        }
        if (slot == VOR_MAX_MAX_THREADS && n < VOR_MAX_MAX_THREADS) slot = n;
    }
    if (slot == VOR_MAX_MAX_THREADS) {
        vor_mutex_unlock(&registry_lock);
        refused = 1;
        vor_log(VOR_LOG_TOO_MANY_THREADS, "limit %u", vor_settings_now.max_threads);
        return NULL;
    }

    vor_thread *t = aligned_alloc(64, (sizeof(vor_thread) + 63) & ~(size_t)63);
    if (t) memset(t, 0, sizeof *t);
    if (t == NULL || !vor_ring_init(t)) {
        vor_mutex_unlock(&registry_lock);
        free(t);
        refused = 1;
        vor_log(VOR_LOG_OUT_OF_MEMORY, "a thread's buffer");
        return NULL;
    }
    t->slot = slot;
    t->thread_id = next_thread_id++;
    t->os_tid = current_os_tid();
    if (pending_name[0])
        copy_name(t->name, pending_name);
    else if (is_main_thread())
        copy_name(t->name, "main");
    else
        snprintf(t->name, sizeof t->name, "thread %u", t->thread_id);
    t->name_version = 1;
    live_threads++;
    vor_atomic_add_relaxed(&registered_total, 1);
    vor_atomic_store_release(&slots[slot], t);
    if (slot >= slot_count) vor_atomic_store_release(&slot_count, slot + 1);
    vor_mutex_unlock(&registry_lock);

    pthread_setspecific(exit_key, t);
    vor_tls_thread = t;
    return t;
}

uint32_t vor_thread_slot_count(void) {
    return vor_atomic_load_acquire(&slot_count);
}

vor_thread *vor_thread_slot(uint32_t slot) {
    return slot < VOR_MAX_MAX_THREADS ? vor_atomic_load_acquire(&slots[slot]) : NULL;
}

void vor_thread_release(vor_thread *t) {
    vor_mutex_lock(&registry_lock);
    uint32_t i = exited_names_next++ % EXITED_NAMES;
    exited_names[i].thread_id = t->thread_id;
    exited_names[i].os_tid = t->os_tid;
    memcpy(exited_names[i].name, t->name, sizeof t->name);
    vor_atomic_store_release(&slots[t->slot], NULL);
    exited_threads--;
    vor_mutex_unlock(&registry_lock);
    vor_ring_free(t);
    free(t);
}

uint32_t vor_thread_copy_name(const vor_thread *t, char *out, size_t cap) {
    vor_mutex_lock(&registry_lock);
    uint32_t version = t->name_version;
    if (cap > 0) copy_name_cut(out, cap, t->name);
    vor_mutex_unlock(&registry_lock);
    return version;
}

int vor_thread_name_by_id(uint32_t thread_id, char *out, size_t cap, uint64_t *os_tid) {
    int found = 0;
    vor_mutex_lock(&registry_lock);
    const char *name = NULL;
    uint32_t n = slot_count;
    for (uint32_t i = 0; i < n && !name; i++) {
        if (slots[i] && slots[i]->thread_id == thread_id) {
            name = slots[i]->name;
            if (os_tid) *os_tid = slots[i]->os_tid;
        }
    }
    for (uint32_t i = 0; i < EXITED_NAMES && !name; i++) {
        if (exited_names[i].name[0] && exited_names[i].thread_id == thread_id) {
            name = exited_names[i].name;
            if (os_tid) *os_tid = exited_names[i].os_tid;
        }
    }
    if (name && cap > 0) {
        copy_name_cut(out, cap, name);
        found = 1;
    }
    vor_mutex_unlock(&registry_lock);
    return found;
}

/* fork(): the registry's lock is taken before and released after (session.c). In the
 * child only the forking thread exists: the other threads' buffers are collected like
 * those of threads that exited (by the child's next frame, or its session's end); their
 * open scopes are not counted as open at exit, since those threads go on in the parent. */
void vor_threads_fork(vor_fork_phase phase) {
    if (phase == VOR_FORK_PREPARE) {
        pthread_mutex_lock(&registry_lock);
        return;
    }
    if (phase == VOR_FORK_CHILD) {
        vor_thread *self = vor_tls_thread;
        for (uint32_t i = 0; i < slot_count; i++) {
            vor_thread *t = slots[i];
            if (t == NULL || t == self || t->exited) continue;
            t->open_at_exit = 0;
            live_threads--;
            exited_threads++;
            t->exited = 1;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

uint32_t vor_threads_registered(void) {
    return vor_atomic_load_relaxed(&registered_total);
}

void vor_set_thread_name(const char *name) {
    if (name == NULL) {
        vor_log(VOR_LOG_NAME_NULL, "vor_set_thread_name");
        return;
    }
    if (strnlen(name, VOR_MAX_THREAD_NAME_BYTES + 1) > VOR_MAX_THREAD_NAME_BYTES)
        vor_log(VOR_LOG_NAME_TOO_LONG, "thread name \"%.*s...\" kept as its first %u bytes",
                (int)vor_utf8_cut(name, 40), name, (unsigned)vor_utf8_cut(name, VOR_MAX_THREAD_NAME_BYTES));
    copy_name(pending_name, name);
    vor_thread *t = vor_tls_thread;
    if (t == NULL) return; /* applied when the thread's buffer is created */
    vor_mutex_lock(&registry_lock);
    copy_name(t->name, name);
    t->name_version++;
    vor_mutex_unlock(&registry_lock);
}

int vor_thread_name(uint32_t thread_id, char *buffer, size_t capacity) {
    if (buffer == NULL || capacity == 0) return 0;
    return vor_thread_name_by_id(thread_id, buffer, capacity, NULL);
}
