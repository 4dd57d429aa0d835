/* capture_writer.h: opens a .vor capture as a frame-record consumer (VOR_RECORD). */
#ifndef VOR_CAPTURE_WRITER_H
#define VOR_CAPTURE_WRITER_H

#include <stdint.h>

#include "vor_internal.h"

typedef struct vor_capture_options {
    int flame;                 /* VOR_RECORD_FLAME=1: also record scopes */
    uint32_t every;            /* VOR_RECORD_EVERY=N: a flame frame on 1 frame in N (default 1) */
    uint64_t max_flame_frames; /* VOR_RECORD_MAX_FRAMES=N: stop flame frames after N (0 = no limit) */
    int thread;                /* VOR_RECORD_THREAD=1: compress and write on a writer thread */
} vor_capture_options;

typedef struct vor_capture_writer vor_capture_writer;

/* The writer without the consumer list (benchmarks and tests drive it directly).
 * create: NULL on failure (reported); frame: 0 on success; flush: every record handed
 * over is in the file (with a writer thread); close also frees. */
VOR_HIDDEN vor_capture_writer *vor_capture_writer_create(const char *path, const vor_capture_options *options);
VOR_HIDDEN int vor_capture_writer_frame(vor_capture_writer *w, const vor_frame_record *record);
VOR_HIDDEN void vor_capture_writer_flush(vor_capture_writer *w);
VOR_HIDDEN void vor_capture_writer_close(vor_capture_writer *w);

/* Creates `path`, writes the header and adds the writer to the running session's
 * consumers (frame lock held). On failure reports once and returns 0. */
VOR_HIDDEN int vor_capture_open(const char *path, const vor_capture_options *options);

#endif
