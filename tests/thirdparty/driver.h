/* driver.h: what each third-party driver (zstd_driver.c, lua_driver.c) gives the shared
 * main (driver_main.c), which runs it in steps, one vor frame per step.
 *
 * A driver is plain C that calls one real library; its hand-placed scopes (VOR_SCOPE
 * around its steps and a few of the library's entry points) compile to nothing with
 * -DVOR_DISABLE, which is how the uninstrumented build of the overhead table is made.
 * The same source is built natively and with emcc, so both flavours do the same work:
 * every step folds what it computed into a checksum, printed at the end, which the tests
 * compare between the flavours. */
#ifndef THIRDPARTY_DRIVER_H
#define THIRDPARTY_DRIVER_H

#include <stdint.h>

/* The driver's name (the thread name in captures), default step count, and its own options
 * for the usage line ("" when none). */
extern const char driver_name[];
extern const char driver_usage[];
extern const int driver_default_steps;

/* An option of this driver's own (`--NAME VALUE`, before driver_init). Returns 1 if taken,
 * 0 if the driver has no such option, -1 if VALUE is bad (after printing why). */
int driver_option(const char *name, const char *value);

/* Prepares the library; `scale` (>= 1) multiplies the work of each step. Returns 0 on
 * success, else prints why on stderr and returns nonzero. */
int driver_init(int scale);

/* One step (one frame). Folds its results into *checksum; returns 0 on success (a step
 * whose library call fails or computes a wrong result returns nonzero). */
int driver_step(int step, uint64_t *checksum);

void driver_finish(void);

/* FNV-1a over bytes, for checksums. */
static inline uint64_t driver_hash(uint64_t h, const void *bytes, unsigned long n) {
    const unsigned char *p = (const unsigned char *)bytes;
    if (h == 0) h = 1469598103934665603ull;
    for (unsigned long i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#endif
