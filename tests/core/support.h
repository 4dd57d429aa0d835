/* support.h: what the core tests share: a fake clock, a capturing logger, and a
 * consumer that keeps copies of the frame records it receives.
 *
 * Tests are white-box: they register the recording consumer through the internal
 * consumer list, so they see exactly what every real output receives.
 */
#ifndef VOR_TEST_SUPPORT_H
#define VOR_TEST_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "vor_internal.h"
#include "vor_testing.h"

/* ---- Fake clock ---- */
extern uint64_t fake_now_ns;
void fake_clock_install(uint64_t start_ns);
void fake_clock_remove(void);
static inline void fake_advance(uint64_t ns) { __atomic_fetch_add(&fake_now_ns, ns, __ATOMIC_RELAXED); }

/* ---- Capturing logger ---- */
typedef struct captured_log {
    int count[VOR_LOG_ITEM_COUNT];
    char last_message[VOR_LOG_ITEM_COUNT][512];
} captured_log;
extern captured_log captured;
/* Installs the capturing logger with vor_setup (plus the given desc fields). */
void setup_with_capture(vor_desc desc);

/* ---- Recording consumer ---- */
typedef struct recorded_scope {
    uint32_t thread_id, site_id, depth;
    int64_t start_ns, duration_ns;
    uint32_t parent, flags; /* as in the record: parent indexes the thread's ended + open scopes */
} recorded_scope;

typedef struct recorded_frame {
    uint64_t index;
    int64_t start_ns, duration_ns, overhead_ns;
    uint32_t n_system, system_present;
    int64_t system_raw[VOR_SYSTEM_COLUMNS_MAX];
    uint32_t n_user;
    vor_user_value user[32];
    uint64_t n_scopes, dropped;
    recorded_scope *scopes; /* the first `kept` ended scopes, thread-major, end order */
    uint32_t kept;
    recorded_scope *open;   /* the first `kept_open` open scopes, thread-major, outermost first */
    uint32_t kept_open;
    uint32_t n_drops;
    vor_reader_drop drops[16];
} recorded_frame;

#define RECORDED_FRAMES_MAX 4096
typedef struct recording {
    recorded_frame frames[RECORDED_FRAMES_MAX];
    uint32_t n_frames;
    uint64_t total_scopes;
    uint64_t total_dropped;
    uint32_t keep_scopes_per_frame; /* 0 = keep none, only count */
    /* Scope counts per (thread slot in order of appearance, site): aggregated. */
    uint64_t site_counts[64][16];   /* [thread_id % 64][site_id % 16] */
} recording;

extern recording rec;
/* Resets `rec` and adds the recording consumer to the running session. */
void recording_attach(uint32_t keep_scopes_per_frame);
void recording_free(void);
/* Scopes of each thread must nest or be disjoint: sorts `scopes` (all threads, any order)
 * and returns how many partially overlap an enclosing one of their thread. */
uint64_t count_partial_overlaps(recorded_scope *scopes, uint64_t n);
/* The same over every ended scope the recording kept. */
uint64_t recorded_partial_overlaps(void);

/* Shuts the session down, ends the scopes the calling thread left open, and restores the
 * defaults (settings, clock, log capture). */
void session_teardown(void);

#endif
