/* frame_threads.h: the scopes of a frame record, thread by thread (frame_threads.c), for
 * the frame assembly (frame.c). Everything here runs on the frame thread with the frame
 * lock held. */
#ifndef VOR_FRAME_THREADS_H
#define VOR_FRAME_THREADS_H

#include "clock.h"
#include "vor_internal.h"

typedef struct vor_frame_scopes {
    uint32_t n_threads;
    const vor_thread_record *threads;
    uint64_t n_scopes;     /* ended (unwound ones included), all threads */
    uint64_t n_open;       /* open at the frame's end, all threads */
    uint64_t dropped;      /* all causes but VOR_DROP_FILTERED */
    uint32_t n_drops;
    const vor_reader_drop *drops;
    uint64_t open_at_exit; /* scopes left open by threads whose exit the frame saw */
} vor_frame_scopes;

/* A session starts at `tick`: scopes that ended before it are not recorded. */
VOR_HIDDEN void vor_frame_threads_begin_session(uint64_t tick);
/* Frees what the session held (and the buffers of threads that exited). */
VOR_HIDDEN void vor_frame_threads_end_session(void);
/* Collection resumes at `tick`: scopes that ended during the pause are not recorded. */
VOR_HIDDEN void vor_frame_threads_resume(uint64_t tick);
/* Builds the scopes of the frame [start, end) of the timeline. `out` points into storage
 * that stays valid until the next call. */
VOR_HIDDEN void vor_frame_threads_collect(vor_timeline_point start, vor_timeline_point end, vor_frame_scopes *out);

#endif
