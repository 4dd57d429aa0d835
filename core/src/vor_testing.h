/* vor_testing.h: hooks for white-box tests only (not installed, not part of the API). */
#ifndef VOR_TESTING_H
#define VOR_TESTING_H

#include <stdint.h>

/* Replaces the clock with `now_ns(user)` (ticks become ns); NULL restores the real one.
 * Call it with no session running. */
void vor_testing_set_clock(uint64_t (*now_ns)(void *user), void *user);

/* The same with a separate tick counter (as rdtsc is): scopes are timed in `ticks` and
 * mapped to ns through the timeline (clock.h). `ns_per_tick` stands for the rate the
 * start-up measurement would have found; frames refine it as for the real counter. */
void vor_testing_set_clock_with_ticks(uint64_t (*now_ns)(void *user), uint64_t (*ticks)(void *user), void *user,
                                      double ns_per_tick);

#endif
