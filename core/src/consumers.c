/* consumers.c: the list of outputs that receive each frame record.
 *
 * A fixed list (VOR_MAX_CONSUMERS) touched only under the frame lock. A consumer that
 * fails (disk full, unwritable file) is closed and reported once, by its name (which the
 * consumer may rewrite to say what failed), whichever other output failed before; the
 * program and the other consumers go on.
 */
#include <string.h>

#include "vor_internal.h"

static vor_consumer consumers[VOR_MAX_CONSUMERS];
static uint32_t n_consumers;

int vor_consumers_add(const vor_consumer *consumer) {
    if (n_consumers >= VOR_MAX_CONSUMERS) return 0;
    consumers[n_consumers++] = *consumer;
    return 1;
}

static void remove_at(uint32_t i) {
    memmove(&consumers[i], &consumers[i + 1], (n_consumers - i - 1) * sizeof consumers[0]);
    n_consumers--;
}

void vor_consumers_frame(const vor_frame_record *record) {
    for (uint32_t i = 0; i < n_consumers;) {
        vor_consumer *c = &consumers[i];
        if (c->frame && c->frame(c->state, record) != 0) {
            /* Each output's failure is reported (once: it is closed), naming its file. */
            vor_log_each(VOR_LOG_CONSUMER_FAILED, "%s", c->name);
            if (c->close) c->close(c->state);
            remove_at(i);
            continue;
        }
        i++;
    }
}

void vor_consumers_flush(void) {
    for (uint32_t i = 0; i < n_consumers; i++)
        if (consumers[i].flush) consumers[i].flush(consumers[i].state);
}

void vor_consumers_close_all(void) {
    for (uint32_t i = 0; i < n_consumers; i++)
        if (consumers[i].close) consumers[i].close(consumers[i].state);
    n_consumers = 0;
}

/* Consumers dropped in a forked child: kept here, never called. */
static vor_consumer forgotten[VOR_MAX_CONSUMERS];

void vor_consumers_forget_all(void) {
    /* Their state (buffers, descriptors) stays allocated in the child, and reachable:
     * freeing it would run code written for the parent's files. */
    memcpy(forgotten, consumers, sizeof consumers);
    n_consumers = 0;
}
