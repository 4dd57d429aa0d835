/* vor_testing.h: hooks for white-box tests only (not installed, not part of the API). */
#ifndef VOR_TESTING_H
#define VOR_TESTING_H

#include <stdint.h>

/* Replaces the clock with `now_ns(user)` (ticks become ns); NULL restores the real one.
 * Call it with no session running. */
void vor_testing_set_clock(uint64_t (*now_ns)(void *user), void *user);

#endif
