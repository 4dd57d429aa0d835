/*
 * store_retention.c - the store's size limit: oldest captures go first.
 *
 * The store holds at most --max-store-bytes (default 64 GiB) of captures. Before bytes are
 * appended, if they would pass the limit, the oldest captures (by upload time) that are not
 * being uploaded right now are deleted, one by one, until they fit; each deletion is one line
 * on stderr. Captures being uploaded are never deleted to make room for others, so when only
 * they are left the bytes are refused ("the store is full"). A single capture is limited on its
 * own by --max-capture-bytes (store_upload.c). Viewers of a deleted capture keep what they
 * have and get a "removed" reset once they caught up, as for any capture file that goes away.
 */
#include "store_internal.h"

#include <stdio.h>
#include <string.h>

static bool busy(void *user, const char *id)
{
    return store_is_busy(user, id);
}

int store_make_room(store *st, uint64_t more)
{
    char last[STORE_ID_BYTES] = "";
    while (st->total_bytes + more > st->opts.max_store_bytes) {
        char id[STORE_ID_BYTES];
        uint64_t bytes = 0;
        if (index_oldest(st->index, busy, st, id, sizeof id, &bytes) != 1 || !strcmp(id, last))
            return -1; /* nothing left to delete, or it could not be deleted */
        snprintf(last, sizeof last, "%s", id);
        fprintf(stderr, "vor serve: store: deleted capture %s (%llu bytes), the oldest, to stay within %llu bytes\n", id,
                (unsigned long long)bytes, (unsigned long long)st->opts.max_store_bytes);
        store_forget(st, id);
    }
    return 0;
}
