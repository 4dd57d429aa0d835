/* log.c: counts every log item and reports each one once per session (settings read at
 * a session's start are reported each: vor_log_each).
 *
 * One list (VOR_LOG_ITEMS in vor.h) generates the enum, the levels and the texts, so a
 * new item cannot be half-declared. Counting is lock-free (a relaxed atomic per item);
 * only the first report of an item takes the lock, so a hot path that keeps failing
 * (a full buffer every frame) costs one atomic increment per occurrence and never
 * floods stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vor_internal.h"

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

static uint64_t item_count[VOR_LOG_ITEM_COUNT];
static int item_reported[VOR_LOG_ITEM_COUNT];
static vor_mutex report_lock = VOR_MUTEX_INIT; /* one logger call at a time */
/* Set while this thread is inside the logger: an item the logger itself triggers (it may
 * call vor, or exit() and so run vor's exit hook) is only counted, and reported the next
 * time it occurs outside; taking report_lock again would hang the thread. */
static VOR_TLS int in_logger;

static void default_logger(void *user_data, vor_log_level level, vor_log_item item, const char *message) {
    (void)user_data;
    static const char *const level_name[] = {"error", "warning", "info"};
    const char *id = (unsigned)item < VOR_LOG_ITEM_COUNT ? item_id[item] : "?";
    fprintf(stderr, "vor: %s [%s]: %s\n", level_name[level], id, message);
}

/* Called with report_lock held. */
static void report(vor_log_item item, const char *detail_fmt, va_list args) {
    char message[512];
    size_t n = (size_t)snprintf(message, sizeof message, "%s", item_text[item]);
    if (detail_fmt && n < sizeof message - 3) {
        message[n++] = ':';
        message[n++] = ' ';
        vsnprintf(message + n, sizeof message - n, detail_fmt, args);
    }
    vor_logger logger = vor_settings_now.logger;
    in_logger = 1;
    if (logger.func)
        logger.func(logger.user_data, item_level[item], item, message);
    else
        default_logger(NULL, item_level[item], item, message);
    in_logger = 0;
}

static void log_counted(vor_log_item item, uint64_t n, const char *detail_fmt, va_list args) {
    if ((unsigned)item >= VOR_LOG_ITEM_COUNT || n == 0) return;
    vor_atomic_add_relaxed(&item_count[item], n);
    if (vor_atomic_load_acquire(&item_reported[item]) || in_logger) return;
    vor_mutex_lock(&report_lock);
    if (!item_reported[item]) {
        report(item, detail_fmt, args);
        vor_atomic_store_release(&item_reported[item], 1);
    }
    vor_mutex_unlock(&report_lock);
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
    vor_mutex_lock(&report_lock);
    report(item, detail_fmt, args);
    vor_atomic_store_release(&item_reported[item], 1);
    vor_mutex_unlock(&report_lock);
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
    vor_mutex_lock(&report_lock);
    for (int i = 0; i < VOR_LOG_ITEM_COUNT; i++) {
        vor_atomic_store_relaxed(&item_count[i], 0);
        vor_atomic_store_relaxed(&item_reported[i], 0);
    }
    vor_mutex_unlock(&report_lock);
}

uint64_t vor_log_count(vor_log_item item) {
    if ((unsigned)item >= VOR_LOG_ITEM_COUNT) return 0;
    return vor_atomic_load_relaxed(&item_count[item]);
}
