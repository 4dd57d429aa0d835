/* devtools_entries.h: which scopes of a frame become DevTools entries, and where they are
 * drawn (the browser sink, browser_sink.c, hands the result to wasm/js/devtools.js).
 *
 * Two jobs, both per frame and both in plain C (no Emscripten), so that a native test
 * checks them exactly (tests/devtools/devtools_entries_test.c):
 *
 * 1. The entry budget. Chrome's trace buffer holds a few hundred thousand User Timing
 *    entries; an instrumented library makes that many in seconds and the recording loses
 *    data (dataLossOccurred). So at most `budget` scopes per frame are shown: the longest
 *    ones (ties: in thread order, then end order), and then every ancestor of a shown scope
 *    (ended in this frame, or ending in a later one: an open ancestor is remembered and
 *    shown when it ends, whatever its length), so a shown scope is never without its
 *    parent. Scopes shorter than the minimum duration are left out first. Both counts
 *    left out are returned, for the frame entry.
 *
 * 2. The display times. performance.now() moves in steps (5 us cross-origin isolated,
 *    100 us otherwise), so many scopes measure zero; Chrome writes a zero-length
 *    performance.measure as an instant that the DevTools trace engine drops, and a zero
 *    width child at its parent's end falls out of the parent. So every shown scope gets a
 *    width of at least one clock step (`step_ns`, never under DEVTOOLS_MIN_WIDTH_NS), laid
 *    out per thread so that nesting stays exact: the thread's begins and ends, in the order
 *    they happened, get display times that never decrease, with a scope's end at least
 *    one width after its begin when nothing happened in between, a begin at least
 *    DEVTOOLS_NEST_GAP_NS after its parent's, and no other gap. A
 *    forward pass takes each event at max(its time, the previous display time + gap), a
 *    backward pass pulls the frame's events back so that none lies past the frame's end
 *    (steps are a resolution: a zero-length scope at the frame's last tick truly lies in
 *    the step before it). When a frame holds more zero-length scopes than fit one step
 *    each, the width halves (down to DEVTOOLS_MIN_WIDTH_NS) until they fit; past that, the
 *    entries run past the frame's end rather than overlap.
 *    Scopes are shown once, when they end; a scope still open at the frame's end is not
 *    shown in that frame, but its begin is placed then (its children may be shown) and
 *    kept in a per-thread state until it ends. A scope still open when the session ends is
 *    never shown.
 *
 * Memory: a table of per-thread states (DEVTOOLS_THREAD_SLOTS, cleared when half full,
 * which only costs the placement of the scopes open then), each holding the thread's open
 * scopes (at most VOR_MAX_DEPTH), and scratch that grows to the largest frame seen (about
 * 60 bytes per scope). When memory runs out, the frame shows no scope (all counted as left
 * out by the budget) and the call says so.
 */
#ifndef VOR_DEVTOOLS_ENTRIES_H
#define VOR_DEVTOOLS_ENTRIES_H

#include <stdint.h>

#include "vor_internal.h"

/* The narrowest entry: Chrome's trace has 1 us resolution and rounds both ends, so two
 * microseconds keep every entry at least one trace microsecond wide. */
#define DEVTOOLS_MIN_WIDTH_NS 2000.0
/* A child begins at least this long after its parent: a parent and a child of the same
 * span would be told apart only by the order they were made in, which the DevTools trace
 * engine does not keep. */
#define DEVTOOLS_NEST_GAP_NS 2000.0
#define DEVTOOLS_THREAD_SLOTS 2048u /* power of two */

/* One entry to show; devtools.js reads it by offset (24 bytes). */
typedef struct devtools_entry {
    uint32_t site_id;
    uint32_t thread; /* index into the frame's threads[] */
    double start_ns; /* display times, ns since the session epoch */
    double end_ns;
} devtools_entry;

typedef struct devtools_frame_in {
    const vor_thread_record *threads;
    uint32_t n_threads;
    int64_t start_ns, end_ns; /* the frame */
    uint64_t min_duration_ns; /* shorter ended scopes are left out (unless ancestors of shown ones) */
    uint32_t budget;          /* at most this many scopes picked by length; 0: no limit */
    double step_ns;           /* the clock's step: the width of a zero-length scope */
} devtools_frame_in;

typedef struct devtools_frame_out {
    const devtools_entry *entries; /* thread by thread, each in end order (children first) */
    uint32_t n_entries;
    uint64_t left_out_budget; /* ended scopes not shown for the budget */
    uint64_t left_out_short;  /* ended scopes not shown for the minimum duration */
    double min_width_ns;      /* the narrowest width used for a zero-length scope */
} devtools_frame_out;

typedef struct devtools_open_begin {
    int64_t start_ns;
    double display_ns;
    uint32_t site_id;
    uint32_t keep; /* a descendant was shown: show it when it ends */
} devtools_open_begin;

typedef struct devtools_thread_state {
    uint32_t key; /* thread id + 1; 0: free */
    uint32_t n_open, capacity;
    int has_last, last_was_begin;
    double last_ns; /* display time of the thread's last placed begin or end */
    devtools_open_begin *open;
} devtools_thread_state;

typedef struct devtools_entries {
    uint32_t known;
    devtools_thread_state threads[DEVTOOLS_THREAD_SLOTS];
    /* scratch, grown on demand */
    size_t cap_scopes, cap_entries, cap_durations;
    uint8_t *flags;
    uint32_t *child, *sibling, *events, *stack;
    double *lo, *at, *begin_ns, *end_ns;
    int64_t *durations;
    devtools_entry *entries;
} devtools_entries;

/* The entries of one frame (valid until the next call). Returns 0, or -1 when memory ran
 * out (no entry; every ended scope counted as left out by the budget). */
int devtools_entries_frame(devtools_entries *e, const devtools_frame_in *in, devtools_frame_out *out);

/* Forgets every thread's open scopes (a new session, or frames the sink did not see). */
void devtools_entries_forget(devtools_entries *e);

/* Frees the scratch and the states (the struct itself is the caller's). */
void devtools_entries_free(devtools_entries *e);

#endif
