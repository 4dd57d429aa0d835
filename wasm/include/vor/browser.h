/* vor/browser.h: vor's scopes in the browser's DevTools Performance tab (WebAssembly
 * builds only; the functions exist only when compiled with Emscripten).
 *
 * What you get
 *   Record a trace in Chrome's DevTools Performance panel while a page runs a vor program:
 *   a custom track group ("vor" by default) holds one track per thread that recorded
 *   scopes (named after the thread, see vor_set_thread_name) and a "Frames" track with
 *   one entry per vor_frame_mark(). Each scope is an entry named after its site, nested
 *   under its parents, coloured from the DevTools palette by a hash of its name (the
 *   same colour in every run), with its location (file:line) and frame index in the
 *   details. A frame entry carries the frame's metrics (frame_ms, memory_mb,
 *   wasm_heap_mb, io_*, and every user metric) in its details.
 *
 *   The sink is a consumer of frame records: scopes reach DevTools when their frame
 *   closes (vor_frame_mark), with the times they were measured at, in one call from
 *   wasm to JavaScript per frame. Nothing is added to the scope hot path.
 *
 *   Each scope is shown once, in the frame it ends in: a scope still open at a frame's end
 *   is shown when it ends (its children meanwhile inside the place it will take), and one
 *   still open when the session ends is never shown.
 *
 * Every scope, whatever its length
 *   performance.now() moves in steps (see Limitations), so many scopes measure zero, and
 *   Chrome drops a zero-length performance.measure. Every shown scope is drawn at least one
 *   clock step wide, each thread's scopes laid out so that nesting stays exact (a child
 *   begins at least 2 us after its parent and ends inside it, siblings follow each other,
 *   nothing passes its frame's end). A frame holding more zero-length scopes than fit draws
 *   them narrower, down to 2 us. Frame entries say the step ("clock") and the width used.
 *
 * Entry budget
 *   Chrome records into a trace buffer of about 200 MB, about 450,000 of vor's entries;
 *   an instrumented library fills it in seconds and the recording loses data. So at most
 *   vor_browser_get_entry_budget() scopes per frame are shown (default 500; 0: no limit):
 *   the longest ones, then every ancestor of a shown scope (an ancestor still open is shown
 *   when it ends, whatever its length), so the budget can be passed by those ancestors. The
 *   frame entry counts the scopes left out ("left out (entry budget N)", in its tooltip
 *   too), and those left out by the minimum duration.
 *
 * Modes
 *   VOR_BROWSER_USER_TIMING (default in a browser page or worker)
 *     performance.measure(name, {start, end, detail: {devtools: {...}}}) per scope,
 *     performance.measure per frame ("frame <n>") on the "Frames" track and
 *     performance.mark ("vor.frame") at each frame start. Any tool that reads User Timing
 *     (PerformanceObserver, RUM libraries) sees them too. Every entry name vor makes ends
 *     with U+2060 WORD JOINER ("update\u2060", "frame 12\u2060", "vor.frame\u2060"):
 *     invisible in DevTools, but a tool that matches entries by name must add it (or
 *     strip it). vor clears the entries it made, by those names, right after making
 *     them, so the browser's entry buffer stays bounded; the page's own entries are never
 *     cleared, even one named like a vor scope site.
 *   VOR_BROWSER_FAST
 *     The extended console.timeStamp(name, start, end, track, group, colour) per scope
 *     and per frame: DevTools only (nothing for PerformanceObserver, no details panel
 *     properties on scopes), and several times cheaper while recording. A frame's metrics,
 *     clock and counts go in its entry's data (the 7th argument, a JSON string). The names
 *     carry no suffix (no entry is kept).
 *   In both modes a site name longer than VOR_MAX_NAME_BYTES is cut at a UTF-8 character
 *   boundary, exactly as the capture, the Chrome trace file and the in-page panel cut it.
 *   VOR_BROWSER_OFF (default under node and anywhere without DevTools)
 *     Nothing is emitted: a couple of branches per frame.
 *   Whatever the mode, the .vor capture, the Chrome trace file and the in-page panel get
 *   every scope; the mode and the minimum duration only shape what DevTools shows.
 *
 * Costs: per scope, two performance.now() reads (about half a microsecond from wasm),
 * vor's bookkeeping, the sink's choice of entries (budget, layout: tens of ns in C) and,
 * for each entry DevTools gets, the browser's performance.measure (user-timing: several
 * microseconds, more while DevTools records) or console.timeStamp (fast: a fraction of
 * that). A scope left out by the minimum duration or the budget costs the tens of ns
 * instead. Per frame: one wasm-to-JS call, the first-time decoding of new site, thread
 * and metric names, and the frame entry. Measured figures: docs/PERFORMANCE.md, "DevTools
 * sink" (bench/devtools prints this machine's).
 *
 * The page can also change the settings from JavaScript, without exporting anything:
 *     Module.vorDevtools.setMode('fast' | 'user-timing' | 'off');
 *     Module.vorDevtools.setTrackGroup('my app');
 *     Module.vorDevtools.setMinDurationMs(0.05);  // huge values leave every scope out
 *     Module.vorDevtools.setEntryBudget(2000);    // scopes per frame; 0: no limit
 *     Module.vorDevtools.getMode()   // 'fast' | 'user-timing' | 'off': the one asked for,
 *                                    // else the one in effect at the last frame
 * (Module is the instance the Emscripten factory resolves to; bad values (NaN, negative,
 * infinite, an unknown mode, a group that is not a string) throw a RangeError or TypeError
 * in the page, never into C.) The frame thread applies them at its next frame, through the
 * C setters below, so the C getters then agree. They work from the page whichever thread
 * runs the frame loop: the requests and the mode in effect are kept in linear memory, so
 * they reach a frame thread that is a worker (a pthreads build with -sPROXY_TO_PTHREAD or
 * a frame loop in a pthread), and getMode() on the page sees the mode that worker uses.
 *
 * Limitations: timestamps are performance.now() values, 5 us steps in a cross-origin
 * isolated page and 100 us steps otherwise (vor measures the step when a session starts;
 * a page that is not isolated gets one console warning naming the two headers that fix
 * it: README, "Timer resolution"). In a pthreads build a worker's times are moved
 * onto the main thread's timeline by the difference of the two realms' time origins
 * (performance.timeOrigin, same steps), rather than by Emscripten 3.1.6's offset measured
 * with a postMessage, which leaves them early by that message's latency (up to about a
 * millisecond). Every scope also keeps its frame index (the "frame" detail).
 *
 * Failures: if the browser lacks performance.measure (USER_TIMING) or console.timeStamp
 * (FAST), or a call throws, the sink turns itself off (vor_browser_get_mode() then says
 * VOR_BROWSER_OFF) and reports once through vor's logger (VOR_LOG_CONSUMER_FAILED, with
 * the reason); the program goes on. Nothing here throws into C or aborts.
 *
 * Thread safety: every function may be called from any thread at any time, before or
 * during a session. Changes take effect at the next frame the frame thread closes.
 */
#ifndef VOR_BROWSER_H
#define VOR_BROWSER_H

#include <stddef.h>
#include <stdint.h>

#include "vor/vor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vor_browser_mode {
    VOR_BROWSER_OFF = 0,         /* nothing goes to DevTools */
    VOR_BROWSER_USER_TIMING = 1, /* performance.measure / performance.mark with devtools details */
    VOR_BROWSER_FAST = 2         /* extended console.timeStamp: DevTools only, cheaper */
} vor_browser_mode;

/* Longest track group name kept, in bytes (longer ones are cut at a character boundary). */
#define VOR_BROWSER_TRACK_GROUP_MAX_BYTES 63
/* The default track group. */
#define VOR_BROWSER_DEFAULT_TRACK_GROUP "vor"
/* Scopes per frame shown by default (see "Entry budget"). */
#define VOR_BROWSER_DEFAULT_ENTRY_BUDGET 500u

/* Chooses how scopes reach DevTools (see Modes above). An unknown value is ignored and
 * reported (VOR_LOG_BAD_SETTING). Setting a mode also re-arms a sink that turned itself
 * off after a failure. Takes effect at the next frame. Thread-safe. */
VOR_API void vor_browser_set_mode(vor_browser_mode mode);

/* The mode in effect: the one set, else the default for this environment
 * (VOR_BROWSER_USER_TIMING in a browser page or worker, VOR_BROWSER_OFF elsewhere);
 * VOR_BROWSER_OFF after the sink turned itself off. Thread-safe. */
VOR_API vor_browser_mode vor_browser_get_mode(void);

/* Names the DevTools track group that holds vor's tracks (default "vor"). The string is
 * copied (at most VOR_BROWSER_TRACK_GROUP_MAX_BYTES bytes; longer ones are cut and
 * reported). An empty string puts the tracks at the top level, without a group. NULL is
 * ignored and reported (VOR_LOG_NAME_NULL). Takes effect at the next frame. Thread-safe. */
VOR_API void vor_browser_set_track_group(const char *group);

/* Copies the track group name into `buffer` (always NUL-terminated when capacity > 0)
 * and returns the name's length in bytes, even when `capacity` was too small for all of
 * it (call again with length + 1 bytes). `buffer` may be NULL to ask the length only.
 * Thread-safe. */
VOR_API size_t vor_browser_get_track_group(char *buffer, size_t capacity);

/* Leaves scopes shorter than `ns` nanoseconds out of DevTools (default 0: every scope).
 * They stay in captures, the Chrome trace file and the panel. Frames are always shown.
 * Use it when a frame holds many tiny scopes: a scope left out costs tens of
 * nanoseconds in the sink instead of the microseconds of a DevTools entry (see Costs).
 * Note that performance.now() ticks in 5 us steps in a cross-origin isolated page (100 us
 * otherwise), so shorter scopes measure 0 or one step anyway. UINT64_MAX leaves every
 * scope out (a caller converting from a double should saturate to it rather than cast:
 * a cast past the range of uint64_t is undefined, and gives 0, no filter, in wasm). Takes
 * effect at the next frame. Thread-safe. */
VOR_API void vor_browser_set_min_duration_ns(uint64_t ns);

/* The minimum duration in effect, in nanoseconds. Thread-safe. */
VOR_API uint64_t vor_browser_get_min_duration_ns(void);

/* The entry budget: at most this many scopes per frame reach DevTools (default
 * VOR_BROWSER_DEFAULT_ENTRY_BUDGET; 0: no limit). See "Entry budget" above. Takes effect
 * at the next frame. Thread-safe. */
VOR_API void vor_browser_set_entry_budget(uint32_t entries);

/* The entry budget in effect (0: no limit). Thread-safe. */
VOR_API uint32_t vor_browser_get_entry_budget(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* VOR_BROWSER_H */
