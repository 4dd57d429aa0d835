/* log.c: counts every log item and reports each one once per session (settings read at
 * a session's start are reported each: vor_log_each); and the lock functions of the core,
 * because they decide when a report may be made.
 *
 * One list (VOR_LOG_ITEMS in vor.h) generates the enum, the levels and the texts, so a
 * new item cannot be half-declared. Counting is lock-free (a relaxed atomic per item);
 * the first occurrence of an item claims its report with one compare-and-swap, so a hot
 * path that keeps failing (a full buffer every frame) costs one atomic increment per
 * occurrence and never floods stderr.
 *
 * The logger never runs while its thread holds a vor lock. Every core lock is taken with
 * vor_mutex_lock (platform.h), which counts the locks the calling thread holds; a report
 * made while it holds one waits in the thread's own queue and is delivered when the
 * thread releases its last lock (a report made inside vor_frame_mark is delivered when
 * the frame is complete, before vor_frame_mark returns). So a logger may call any vor
 * function, or exit(): vor's exit hook then finds no lock held and finishes every output;
 * and no thread ever waits for report_lock while it holds another vor lock, so a logger
 * that calls vor (vor_get_counters, vor_record_metric, ...) cannot deadlock against the
 * frame thread. The queue holds QUEUE_MAX reports (more than the items a frame can
 * raise); a report that finds it full is only counted, and made at the item's next
 * occurrence.
 *
 * report_lock makes logger calls one at a time. It is taken with no vor lock held and
 * held while the user's logger runs, so fork() does not wait for it (the logger may be
 * waiting for the forking thread): a child forked while another thread was in the logger
 * starts with it free (vor_log_fork).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vor_internal.h"

#define MESSAGE_BYTES 512
#define QUEUE_MAX 24

static const char *const item_text[VOR_LOG_ITEM_COUNT] = {
#define VOR_LOG_TEXT_(id, level, text) text,
    VOR_LOG_ITEMS(VOR_LOG_TEXT_)
#undef VOR_LOG_TEXT_
};

static const vor_log_level item_level[VOR_LOG_ITEM_COUNT] = {
#define VOR_LOG_LEVEL_(id, level, text) VOR_LOG_LEVEL_##level,
    VOR_LOG_ITEMS(VOR_LOG_LEVEL_)
#undef VOR_LOG_LEVEL_
};

static const char *const item_id[VOR_LOG_ITEM_COUNT] = {
#define VOR_LOG_ID_(id, level, text) #id,
    VOR_LOG_ITEMS(VOR_LOG_ID_)
#undef VOR_LOG_ID_
};

static uint64_t item_count[VOR_LOG_ITEM_COUNT];                 /* atomic */
static int item_reported[VOR_LOG_ITEM_COUNT];                   /* atomic: claimed for this session */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER; /* one logger call at a time */

/* Set while this thread is inside the logger: an item the logger itself triggers (it may
 * call vor, or exit() and so run vor's exit hook) is only counted, and reported the next
 * time it occurs outside; taking report_lock again would hang the thread. */
static VOR_TLS int in_logger;
/* vor locks this thread holds (vor_mutex_lock / vor_mutex_unlock). */
static VOR_TLS uint32_t locks_held;

typedef struct report_queue {
    uint32_t n;
    struct {
        vor_log_item item;
        char message[MESSAGE_BYTES];
    } reports[QUEUE_MAX];
} report_queue;
/* Reports this thread made while holding a lock; allocated by the first, freed once
 * delivered (reports are rare: once per item and session). */
static VOR_TLS report_queue *queue;

static void default_logger(void *user_data, vor_log_level level, vor_log_item item, const char *message) {
    (void)user_data;
    static const char *const level_name[] = {"error", "warning", "info"};
    const char *id = (unsigned)item < VOR_LOG_ITEM_COUNT ? item_id[item] : "?";
    fprintf(stderr, "vor: %s [%s]: %s\n", level_name[level], id, message);
}

static void format_message(char *message, vor_log_item item, const char *detail_fmt, va_list args) {
    size_t n = (size_t)snprintf(message, MESSAGE_BYTES, "%s", item_text[item]);
    if (detail_fmt && n < MESSAGE_BYTES - 3) {
        message[n++] = ':';
        message[n++] = ' ';
        vsnprintf(message + n, MESSAGE_BYTES - n, detail_fmt, args);
    }
}

/* The logger vor_setup() gave (both fields NULL: the default one, on stderr). */
static vor_logger current_logger;

void vor_log_set_logger(vor_logger logger) {
    current_logger = logger;
}

/* Calls the logger; report_lock held. */
static void call_logger(vor_log_item item, const char *message) {
    vor_logger logger = current_logger;
    in_logger = 1;
    if (logger.func)
        logger.func(logger.user_data, item_level[item], item, message);
    else
        default_logger(NULL, item_level[item], item, message);
    in_logger = 0;
}

/* Delivers this thread's queued reports, in order, once it holds no lock. */
static void deliver_queued(void) {
    report_queue *q = queue;
    if (q == NULL || locks_held != 0 || in_logger) return;
    pthread_mutex_lock(&report_lock);
    for (uint32_t i = 0; i < q->n; i++) call_logger(q->reports[i].item, q->reports[i].message);
    pthread_mutex_unlock(&report_lock);
    queue = NULL;
    free(q);
}

/* Makes a report now, or queues it while this thread holds a lock. 0: neither (the queue
 * is full or cannot be allocated). */
static int submit(vor_log_item item, const char *detail_fmt, va_list args) {
    char message[MESSAGE_BYTES];
    format_message(message, item, detail_fmt, args);
    if (locks_held == 0) {
        deliver_queued(); /* anything older first */
        pthread_mutex_lock(&report_lock);
        call_logger(item, message);
        pthread_mutex_unlock(&report_lock);
        return 1;
    }
    if (queue == NULL) {
        queue = malloc(sizeof *queue);
        if (queue == NULL) return 0;
        queue->n = 0;
    }
    if (queue->n >= QUEUE_MAX) return 0;
    queue->reports[queue->n].item = item;
    memcpy(queue->reports[queue->n].message, message, MESSAGE_BYTES);
    queue->n++;
    return 1;
}

static void log_counted(vor_log_item item, uint64_t n, const char *detail_fmt, va_list args) {
    if ((unsigned)item >= VOR_LOG_ITEM_COUNT || n == 0) return;
    vor_atomic_add_relaxed(&item_count[item], n);
    if (in_logger || vor_atomic_load_acquire(&item_reported[item])) return;
    int expected = 0;
    if (!vor_atomic_cas(&item_reported[item], &expected, 1)) return; /* another thread reports it */
    if (!submit(item, detail_fmt, args)) vor_atomic_store_release(&item_reported[item], 0);
}

void vor_log(vor_log_item item, const char *detail_fmt, ...) {
    va_list args;
    va_start(args, detail_fmt);
    log_counted(item, 1, detail_fmt, args);
    va_end(args);
}

void vor_log_each(vor_log_item item, const char *detail_fmt, ...) {
    if ((unsigned)item >= VOR_LOG_ITEM_COUNT) return;
    vor_atomic_add_relaxed(&item_count[item], 1);
    if (in_logger) return;
    va_list args;
    va_start(args, detail_fmt);
    submit(item, detail_fmt, args);
    vor_atomic_store_release(&item_reported[item], 1);
    va_end(args);
}

static void log_n_va(vor_log_item item, uint64_t n, ...) {
    va_list args;
    va_start(args, n);
    log_counted(item, n, NULL, args);
    va_end(args);
}

void vor_log_n(vor_log_item item, uint64_t n) {
    log_n_va(item, n);
}

void vor_log_reset(void) {
    /* Atomics only: called under the frame lock, it must not wait for a logger. */
    for (int i = 0; i < VOR_LOG_ITEM_COUNT; i++) {
        vor_atomic_store_relaxed(&item_count[i], 0);
        vor_atomic_store_release(&item_reported[i], 0);
    }
}

uint64_t vor_log_count(vor_log_item item) {
    if ((unsigned)item >= VOR_LOG_ITEM_COUNT) return 0;
    return vor_atomic_load_relaxed(&item_count[item]);
}

/* ---- Locks ------------------------------------------------------------------------------ */

void vor_mutex_lock(vor_mutex *m) {
    pthread_mutex_lock(m);
    locks_held++;
}

void vor_mutex_unlock(vor_mutex *m) {
    pthread_mutex_unlock(m);
    if (--locks_held == 0 && queue != NULL) deliver_queued();
}

void vor_log_fork(vor_fork_phase phase) {
    /* Not taken before fork() (see the top of the file). In the child only the forking
     * thread runs: if it is not inside the logger, nobody is, and the lock starts free. */
    if (phase == VOR_FORK_CHILD && !in_logger) pthread_mutex_init(&report_lock, NULL);
}
