/* chrome_frames.h: the one Chrome trace writer. Frames become Chrome Trace Event JSON
 * events (written by chrome_json.c): live frame records (the VOR_TRACE output,
 * chrome_trace.c, through vor_frame_record_view) and frames read from a capture
 * (`vor export --format chrome`) take the same path, so the same run gives the same
 * events either way. Names come through a small lookup interface (vor_chrome_names):
 * live, the site table and thread registry; from a capture, the reader's declarations.
 *
 * What a frame becomes:
 *   - one "X" event named "frame" on the "frames" row (tid VOR_CHROME_FRAMES_TID, sorted
 *     first), without args (see scopes below): its figures are categories after
 *     "vor.frame", as "key:number": index, scopes, dropped, overhead_ns and, for each
 *     cause with a count, dropped_<cause> (dropped_thread_buffer_full,
 *     dropped_too_deep, dropped_frame_full, dropped_thread_refused,
 *     dropped_site_table_full, dropped_other_cause) and filtered_min_duration;
 *   - "M" thread_name (+ thread_sort_index the first time) for each thread met for the first
 *     time or renamed;
 *   - one "X" event per scope when the frame's scopes are recorded
 *     (VOR_CHROME_FRAME_SCOPES), parents before children, without args: speedscope names an
 *     event by its name plus its args, so args would rename the scope there. What vor adds
 *     is in its categories, which Perfetto and chrome://tracing show with the event: "vor,src:FILE:LINE"
 *     (just "vor" for a site without a file), then the flags below;
 *   - one "C" event per metric value, at the frame's start.
 *
 * Runs and clipping (the rule every trace consumer follows): a run is a sequence of
 * consecutive recorded frames (each frame's index follows the previous one and it starts
 * where the previous one ended; an unrecorded frame, a pause or a gap ends the run). In a
 * run each scope is written once, in the frame it ends, as [max(start, run start), end];
 * the category "clipped_start" marks a scope that began before the run. Scopes still open
 * at the end of a run (or at the end of the trace: `main` at vor_shutdown) are written
 * clipped to the run's end with the category "clipped_end". A scope closed by vor rather
 * than by the program (VOR_SCOPE_UNWOUND) has the category "unwound".
 *
 * Exact nesting by construction: per thread, no two X events partially overlap, across
 * frames and runs too, whatever the input. Each scope is placed, in end order, against
 * the intervals already written on its thread (kept as a short list of disjoint "blocks");
 * a start that would fall strictly inside a written interval, or an end before one, is
 * moved to the nearest time that nests (counted in stats.adjusted; with consistent times,
 * as frame records and captures guarantee, nothing moves). The frames row nests too (a
 * frame never starts before the previous one ended). The list stays short: when the
 * producer lists open scopes (open_scopes_listed), blocks are merged at each frame's end
 * except at the start of a scope still open; otherwise (captures of format 1.0) they are
 * merged beyond a bound where no scope can start any more (a depth-0 scope ended after),
 * then the oldest.
 *
 * Ties: viewers nest two events with the same start by duration (Perfetto, speedscope) or
 * by file order (chrome://tracing). Within a frame parents are written first; a run's
 * open scopes are written before the frame's other scopes when the caller says the frame
 * ends the run (VOR_CHROME_FRAME_ENDS_RUN). A scope that ends in a later frame than a child
 * starting at its very nanosecond is written after that child.
 *
 * Memory: one pre-escaped text per site used, a table of threads (at most
 * VOR_CHROME_MAX_THREADS; one whose scopes cannot be placed, because the table is full of
 * threads with open scopes or memory is short, has them left out and counted in
 * stats.scopes_lost), per thread the open scopes of the last frame and a few blocks, and
 * scratch as large as the largest thread of a frame. Nothing grows with the number of frames.
 */
#ifndef VOR_CHROME_FRAMES_H
#define VOR_CHROME_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "chrome_json.h"
#include "vor/reader.h"

#define VOR_CHROME_MAX_THREADS 65536u

typedef struct vor_chrome_site_info {
    const char *name; /* NULL or "": named "site N" */
    const char *file; /* NULL or "": no file and line */
    uint32_t line;
} vor_chrome_site_info;

/* Where names come from. Each returns 0 for an id it does not know: the writer names it
 * "site N" / "thread N" (and asks again later: a declaration may arrive), or leaves a
 * column's values out. Strings need only live until the call returns. */
typedef struct vor_chrome_names {
    void *ctx;
    int (*site)(void *ctx, uint32_t id, vor_chrome_site_info *out);
    /* The thread's name into out (cap bytes), its OS thread id into *os_tid (0 if none). */
    int (*thread)(void *ctx, uint32_t id, char *out, size_t cap, uint64_t *os_tid);
    const char *(*column)(void *ctx, uint32_t id); /* NULL: unknown */
} vor_chrome_names;

typedef struct vor_chrome_frames_config {
    vor_chrome_names names;
    uint64_t pid;
    const char *process_name;
    const char *vor_version; /* process_name args: vor_version, session_start_unix_us */
    int64_t wall_epoch_ns;   /* wall clock at time 0 */
    int open_scopes_listed;  /* frames list the scopes open at their end (live records,
                                captures of format 1.1 and later) */
} vor_chrome_frames_config;

typedef struct vor_chrome_frames_stats {
    uint64_t frames;      /* frame events written */
    uint64_t scopes;      /* scope events written */
    uint64_t clipped;     /* of them, clipped to their run (start, end or both) */
    uint64_t adjusted;    /* of them, moved to keep nesting exact (inconsistent times) */
    uint64_t scopes_lost; /* left out: thread table full of open scopes, or memory short */
} vor_chrome_frames_stats;

typedef struct vor_chrome_frames vor_chrome_frames;

/* Flags of vor_chrome_frames_write. */
/* The frame's scopes were recorded: write them. */
#define VOR_CHROME_FRAME_SCOPES 1u
/* No recorded frame continues its run: write its open scopes now, clipped to its end. */
#define VOR_CHROME_FRAME_ENDS_RUN 2u

/* A writer on `json` (not owned); writes the process name and the frames row's names.
 * NULL if memory is short. */
VOR_HIDDEN vor_chrome_frames *vor_chrome_frames_new(vor_chrome_json *json, const vor_chrome_frames_config *config);

/* Writes one frame. Returns 0, or -1 after a write error of the JSON writer. */
VOR_HIDDEN int vor_chrome_frames_write(vor_chrome_frames *w, const vor_reader_frame *frame, unsigned flags);

/* Ends the current run, if any: its open scopes are written clipped to its end. */
VOR_HIDDEN void vor_chrome_frames_end_run(vor_chrome_frames *w);

VOR_HIDDEN void vor_chrome_frames_get_stats(const vor_chrome_frames *w, vor_chrome_frames_stats *out);

/* Ends the run and frees the writer (not the JSON writer). NULL is a no-op. */
VOR_HIDDEN void vor_chrome_frames_finish(vor_chrome_frames *w);

#endif /* VOR_CHROME_FRAMES_H */
