/* frame_ring.c: the in-process ring of recent frames, kept as frame views, that the live
 * panel reads (in the browser build the page polls it once per animation frame).
 *
 * Fixed memory: a byte arena of min(VOR_FRAME_RING_MAX_BYTES, max(1 MiB, frames x 2 KiB))
 * and a table of `frames` slots. Views are written one after another and wrap around;
 * writing evicts the oldest views they overlap, so the ring holds the newest frames that
 * fit both limits. A view larger than the arena is stored without its scopes. Readers on
 * any thread copy a view out under the ring's own lock, never the frame lock.
 */
#include <stdlib.h>
#include <string.h>

#include "vor_internal.h"

typedef struct ring_slot {
    uint64_t index;
    size_t offset;
    size_t size;
} ring_slot;

static vor_mutex ring_lock = VOR_MUTEX_INIT;
static uint8_t *arena;
static size_t arena_bytes;
static ring_slot *slots;
static uint32_t slot_capacity;
static uint32_t oldest, count; /* FIFO over slots */
static size_t write_pos;
static int consumer_added;

static vor_reader_value view_values[VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS];
static vor_reader_thread_scopes view_threads[VOR_MAX_MAX_THREADS];

static int ring_frame(void *state, const vor_frame_record *rec) {
    (void)state;
    vor_reader_frame frame;
    vor_frame_record_view(rec, &frame, view_values, view_threads);
    const vor_reader_frame *record = &frame;
    vor_mutex_lock(&ring_lock);
    if (arena == NULL) {
        vor_mutex_unlock(&ring_lock);
        return 0;
    }
    int with_scopes = 1;
    size_t size = vor_frame_view_size(record, 1);
    if (size > arena_bytes) {
        with_scopes = 0;
        size = vor_frame_view_size(record, 0);
    }
    if (size > arena_bytes) { /* cannot happen with the minimum arena; keep it safe */
        vor_mutex_unlock(&ring_lock);
        return 0;
    }
    if (write_pos + size > arena_bytes) write_pos = 0;
    /* Evict the oldest views that the new one overlaps, and one if the table is full. */
    while (count > 0) {
        ring_slot *o = &slots[oldest];
        int overlaps = o->offset < write_pos + size && o->offset + o->size > write_pos;
        if (!overlaps && count < slot_capacity) break;
        oldest = (oldest + 1) % slot_capacity;
        count--;
    }
    ring_slot *s = &slots[(oldest + count) % slot_capacity];
    s->index = record->index;
    s->offset = write_pos;
    s->size = size;
    vor_frame_view_encode(record, with_scopes, arena + write_pos);
    write_pos += size;
    count++;
    vor_mutex_unlock(&ring_lock);
    return 0;
}

static void ring_close(void *state) {
    (void)state;
    vor_mutex_lock(&ring_lock);
    consumer_added = 0;
    vor_mutex_unlock(&ring_lock);
}

/* Registers the ring as a consumer if a session is running (frame lock held). */
static void add_consumer_locked(void) {
    if (consumer_added || !vor_session_now.active) return;
    vor_consumer c = {"frame ring", NULL, ring_frame, NULL, ring_close};
    if (vor_consumers_add(&c)) consumer_added = 1;
}

/* Allocates an arena and slot table for `frames` frames (outside any lock). */
static int ring_allocate(uint32_t frames, uint8_t **arena_out, ring_slot **slots_out, size_t *bytes_out) {
    size_t bytes = (size_t)frames * 2048u;
    if (bytes < 1024u * 1024u) bytes = 1024u * 1024u;
    if (bytes > VOR_FRAME_RING_MAX_BYTES) bytes = VOR_FRAME_RING_MAX_BYTES;
    *arena_out = malloc(bytes);
    *slots_out = calloc(frames, sizeof **slots_out);
    *bytes_out = bytes;
    if (*arena_out == NULL || *slots_out == NULL) {
        free(*arena_out);
        free(*slots_out);
        vor_log(VOR_LOG_OUT_OF_MEMORY, "frame ring of %u frames", frames);
        return 0;
    }
    return 1;
}

/* Replaces the ring's storage (the old one is freed). */
static void ring_install(uint8_t *new_arena, ring_slot *new_slots, size_t bytes, uint32_t frames) {
    vor_mutex_lock(&ring_lock);
    free(arena);
    free(slots);
    arena = new_arena;
    arena_bytes = bytes;
    slots = new_slots;
    slot_capacity = frames;
    oldest = count = 0;
    write_pos = 0;
    vor_mutex_unlock(&ring_lock);
}

int vor_frame_ring_enable(uint32_t frames) {
    if (frames > VOR_FRAME_RING_MAX_FRAMES) {
        vor_log(VOR_LOG_BAD_SETTING, "frame ring of %u frames; using %u", frames, (unsigned)VOR_FRAME_RING_MAX_FRAMES);
        frames = VOR_FRAME_RING_MAX_FRAMES;
    }
    uint8_t *new_arena = NULL;
    ring_slot *new_slots = NULL;
    size_t bytes = 0;
    if (frames > 0 && !ring_allocate(frames, &new_arena, &new_slots, &bytes)) return 0;
    if (!vor_frame_lock_acquire()) { /* called back from inside vor */
        free(new_arena);
        free(new_slots);
        return 0;
    }
    ring_install(new_arena, new_slots, bytes, frames);
    vor_settings_now.frame_ring_frames = frames;
    if (frames > 0) add_consumer_locked();
    vor_frame_lock_release();
    return 1;
}

/* Session start: a ring asked for in the settings (frame lock held). */
void vor_frame_ring_begin_session(void) {
    uint32_t frames = vor_settings_now.frame_ring_frames;
    if (frames == 0) return;
    vor_mutex_lock(&ring_lock);
    int ready = arena != NULL;
    vor_mutex_unlock(&ring_lock);
    if (!ready) {
        uint8_t *new_arena;
        ring_slot *new_slots;
        size_t bytes;
        if (!ring_allocate(frames, &new_arena, &new_slots, &bytes)) return;
        ring_install(new_arena, new_slots, bytes, frames);
    }
    add_consumer_locked();
}

void vor_frame_ring_end_session(void) {
    ring_install(NULL, NULL, 0, 0);
    vor_mutex_lock(&ring_lock);
    consumer_added = 0;
    vor_mutex_unlock(&ring_lock);
}

/* fork(): the ring's lock is taken before and released after (session.c). In the child
 * of a recording process the consumer list was forgotten: the next session adds the ring
 * again. */
void vor_frame_ring_fork(vor_fork_phase phase) {
    if (phase == VOR_FORK_PREPARE) {
        pthread_mutex_lock(&ring_lock);
        return;
    }
    if (phase == VOR_FORK_CHILD) consumer_added = 0;
    pthread_mutex_unlock(&ring_lock);
}

int vor_frame_ring_range(uint64_t *oldest_index, uint64_t *newest_index) {
    vor_mutex_lock(&ring_lock);
    int ok = count > 0;
    if (ok) {
        if (oldest_index) *oldest_index = slots[oldest].index;
        if (newest_index) *newest_index = slots[(oldest + count - 1) % slot_capacity].index;
    }
    vor_mutex_unlock(&ring_lock);
    return ok;
}

size_t vor_frame_ring_copy(uint64_t index, void *buffer, size_t capacity) {
    size_t size = 0;
    vor_mutex_lock(&ring_lock);
    if (count > 0) {
        uint64_t first = slots[oldest].index;
        /* Indices are consecutive within a session, so the slot is found by offset;
         * verify in case frames were skipped. */
        if (index >= first && index - first < count) {
            ring_slot *s = &slots[(oldest + (uint32_t)(index - first)) % slot_capacity];
            if (s->index == index) {
                size = s->size;
                if (buffer != NULL && capacity >= size) memcpy(buffer, arena + s->offset, size);
            }
        }
    }
    vor_mutex_unlock(&ring_lock);
    return size;
}
