/* chrome_json.h: a streaming writer of Chrome Trace Event JSON, and the VOR_TRACE output
 * built on it.
 *
 * The writer knows nothing about frames or sessions: it takes events (complete "X",
 * metadata "M", counter "C") and writes them through a fixed buffer to a file
 * descriptor or a FILE*. Frames become events in chrome_frames.c, the one trace writer
 * that the VOR_TRACE output (chrome_trace.c) and `vor export --format chrome` share.
 *
 * Output: the JSON *Array* Format of the Trace Event Format, one event per line:
 *
 *     [
 *     {"ph":"M","ts":0,"pid":7,"tid":7,"name":"process_name","args":{"name":"game"}},
 *     {"ph":"X","ts":12.345,"dur":0.250,"pid":7,"tid":9,"cat":"vor","name":"update","args":{...}}
 *     ]
 *
 * Why the array format and not the object format ({"traceEvents":[...], ...}): a program
 * that crashes or is killed mid-run never writes the closing bracket(s), and only the
 * array format is documented to load without them. The Trace Event Format document says
 * that the "]" at the end of the JSON Array Format is optional, so that a tracer which
 * cannot finish the file (a program that crashes or exits abruptly) still produces a
 * loadable trace. The trace viewer behind chrome://tracing (catapult) implements it: a
 * file that starts with "[" has trailing newlines and one trailing comma stripped and
 * gets a "]" appended before JSON.parse. Perfetto's JSON tokenizer accepts an array that
 * is never closed (Perfetto UI builds of late 2024 did not: google/perfetto#926) and drops
 * an incomplete final event, while an unclosed object format fails there with "JSON trace
 * file is incomplete". speedscope imports partial arrays too. The object format's extras
 * (displayTimeUnit, otherData) are not worth that: timestamps carry three decimals (ns)
 * anyway, and what otherData would hold (the vor version, the wall-clock time of the
 * session start) goes in the args of the process_name metadata event instead.
 *
 * Forms a reader must accept, i.e. what a file on disk can look like:
 *   1. after vor_chrome_json_close (vor_shutdown, or the exit hook):  strict JSON,
 *      "[\n" events separated by ",\n" then "\n]\n";
 *   2. after a crash, kill or _exit: the same without the final "\n]\n": the file ends
 *      just after the "}" of the last event of the last frame written. chrome://tracing,
 *      Perfetto and speedscope load it; any JSON parser does after appending "\n]";
 *   3. a trace cut before its first frame: "[" plus the metadata events (or "[\n]\n"
 *      when closed): loads as a trace with no slices.
 * Every write to the file ends on an event boundary (each frame's events are written
 * with one write(); a frame larger than the buffer is written in several, each ending
 * between two events), so these forms are all a crash can leave, except in two cases:
 * a SIGKILL or a full disk in the middle of a write() can tear the last event, which
 * Perfetto ignores and catapult does not (delete the partial last line), and a single
 * event larger than the buffer (strings of several KiB) is written in pieces. The
 * file-size limit (`ulimit -f`) never tears anything: writes to a file descriptor go
 * through vor_file_write_all (file_write.h), which refuses a write that would cross the
 * limit (EFBIG, nothing written) instead of letting the kernel raise SIGXFSZ.
 *
 * Compatibility details, each for a reader we checked:
 *   - the file's very first byte is "[" (catapult tests eventData[0], no whitespace skip);
 *   - no trailing commas anywhere (strict JSON; older Perfetto rejected them);
 *   - "ph", "ts", "dur", "pid", "tid" come before any string that holds user text, so the
 *     key scanner of older Perfetto versions (which could not read \uXXXX escapes in
 *     top-level strings) finds the time fields first;
 *   - strings are valid UTF-8: control characters and DEL are escaped (\n, \u0001, ...),
 *     invalid UTF-8 is replaced by U+FFFD (one per maximal invalid subsequence, as the
 *     WHATWG decoder does), written as raw UTF-8 bytes, not as an escape;
 *   - NaN and infinities are not JSON: counter events with such a value are omitted and
 *     counted; a non-finite double in args is written as null and counted;
 *   - ts and dur are microseconds with exactly three decimals, from integer nanoseconds
 *     (no floating point on the way: 1.5 us is "1.500", never "1.4999999").
 *
 * Costs: a hand-rolled formatter (integer microseconds + a three-digit fraction,
 * strings escaped through a class table) and a fixed buffer, flushed when the next event
 * may not fit or when asked (once per frame). Memory: the buffer (default 64 KiB) and
 * nothing per event. bench/chrome measures the throughput.
 *
 * Threads: a writer is used by one thread at a time (the consumer runs under the frame
 * lock). Errors: the first failed write is kept (errno); from then on every call does
 * nothing and returns -1, so a caller checks once per batch.
 */
#ifndef VOR_CHROME_JSON_H
#define VOR_CHROME_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "platform.h"

#define VOR_CHROME_JSON_DEFAULT_BUFFER_BYTES (64u * 1024u) /* one frame, usually one write() */
#define VOR_CHROME_JSON_MIN_BUFFER_BYTES 64u               /* smaller requests are raised to this */
#define VOR_CHROME_JSON_MAX_BUFFER_BYTES (64u * 1024u * 1024u)

/* The tid of the "frames" pseudo-thread on which the trace consumer draws one X event per
 * frame. Above Linux's PID_MAX_LIMIT (2^22), so it never collides with a real tid. */
#define VOR_CHROME_FRAMES_TID 2147483647u

typedef struct vor_chrome_json vor_chrome_json;

/* One extra key/value of an event's args. */
typedef enum vor_chrome_arg_type {
    VOR_CHROME_ARG_STRING, /* `string` (NUL-terminated; NULL writes null) */
    VOR_CHROME_ARG_INT,    /* `integer` */
    VOR_CHROME_ARG_DOUBLE, /* `number`; NaN and infinities write null and are counted */
    VOR_CHROME_ARG_UINT,   /* `count`: counts and indices, never written as negative */
    VOR_CHROME_ARG_BOOL    /* true when `integer` is not 0, else false */
} vor_chrome_arg_type;

typedef struct vor_chrome_arg {
    const char *key;
    vor_chrome_arg_type type;
    const char *string;
    int64_t integer;
    double number;
    uint64_t count;
} vor_chrome_arg;

typedef struct vor_chrome_json_stats {
    uint64_t bytes_written;         /* bytes that reached the file */
    uint64_t events;                /* events written (or buffered) */
    uint64_t non_finite_omitted;    /* counter values omitted, args written as null */
    uint64_t invalid_utf8_replaced; /* U+FFFD substitutions */
    int write_errno;                /* the first write error, 0 if none */
} vor_chrome_json_stats;

/* Opens a writer on `fd` (closed by vor_chrome_json_close when `own_fd`) with a buffer of
 * `buffer_bytes` (0 = the default; clamped to the MIN/MAX above). Writes nothing yet: the
 * opening "[" is buffered like an event. Returns NULL if memory is short (errno ENOMEM). */
VOR_HIDDEN vor_chrome_json *vor_chrome_json_open_fd(int fd, int own_fd, size_t buffer_bytes);

/* The same on a stdio stream (fwrite, then fflush at each flush): for stdout or a
 * memory stream. `own_stream`: fclose it at close. */
VOR_HIDDEN vor_chrome_json *vor_chrome_json_open_stream(FILE *stream, int own_stream, size_t buffer_bytes);

/* An "X" (complete) event: `name` (NULL is written as ""), `cat` (NULL omits it), on
 * (pid, tid), from ts_ns for dur_ns nanoseconds (written as microseconds, 3 decimals).
 * args: {"file": file, "line": line} when `file` is not NULL, then the `n_args` extra
 * entries. Returns 0, or -1 after a write error. */
VOR_HIDDEN int vor_chrome_json_complete(vor_chrome_json *j, const char *name, const char *cat, uint64_t pid,
                                        uint64_t tid, int64_t ts_ns, int64_t dur_ns, const char *file, uint32_t line,
                                        const vor_chrome_arg *args, size_t n_args);

/* The constant part of the X events of one call site (name, cat, file, line), escaped
 * once: vor_chrome_json_complete_prepared then only formats four numbers per event.
 * Returns 1, or 0 if memory is short (`out` is left empty). */
typedef struct vor_chrome_prepared {
    char *bytes; /* from "cat" to the event's closing brace */
    size_t length;
    int args_open; /* it ends with "args" (file and line) and "}}", else with "}" */
} vor_chrome_prepared;

VOR_HIDDEN int vor_chrome_prepare_complete(vor_chrome_prepared *out, const char *name, const char *cat,
                                           const char *file, uint32_t line);
VOR_HIDDEN void vor_chrome_prepared_free(vor_chrome_prepared *p);
/* The same event as vor_chrome_json_complete with the prepared fields, and `n_args` extra
 * args after file and line (none: exactly the bytes of the plain call). */
VOR_HIDDEN int vor_chrome_json_complete_prepared(vor_chrome_json *j, const vor_chrome_prepared *p, uint64_t pid,
                                                 uint64_t tid, int64_t ts_ns, int64_t dur_ns,
                                                 const vor_chrome_arg *args, size_t n_args);

/* "M" events. process_name: args {"name": name, extra args...}. */
VOR_HIDDEN int vor_chrome_json_process_name(vor_chrome_json *j, uint64_t pid, const char *name,
                                            const vor_chrome_arg *args, size_t n_args);
VOR_HIDDEN int vor_chrome_json_thread_name(vor_chrome_json *j, uint64_t pid, uint64_t tid, const char *name);
VOR_HIDDEN int vor_chrome_json_thread_sort_index(vor_chrome_json *j, uint64_t pid, uint64_t tid, int64_t index);

/* A "C" (counter) event: the counter `name` of process `pid` takes `value` at ts_ns, as
 * args {series: value} (`series` NULL means "value"). A NaN or infinite value writes
 * nothing and is counted (stats.non_finite_omitted). */
VOR_HIDDEN int vor_chrome_json_counter(vor_chrome_json *j, uint64_t pid, const char *name, int64_t ts_ns,
                                       const char *series, double value);

/* Writes what is buffered to the file (one write() when it fits). The trace consumer
 * calls it at the end of every frame. Returns 0, or -1 after a write error. */
VOR_HIDDEN int vor_chrome_json_flush(vor_chrome_json *j);

/* Finishes the array ("\n]\n"), flushes, closes the fd/stream if owned and frees the
 * writer. Returns 0, or -1 if any write failed during the writer's life. NULL is a no-op. */
VOR_HIDDEN int vor_chrome_json_close(vor_chrome_json *j);

VOR_HIDDEN void vor_chrome_json_get_stats(const vor_chrome_json *j, vor_chrome_json_stats *out);

/* Escapes `n` bytes of `s` as the inside of a JSON string (no quotes) into `out`, which
 * must hold 6 * n bytes (the worst case). Returns the bytes written; counts U+FFFD
 * substitutions into *replaced when not NULL. */
VOR_HIDDEN size_t vor_chrome_json_escape(const char *s, size_t n, char *out, uint64_t *replaced);

/* Formats ns as microseconds with three decimals ("-1.500"); `out` holds 32 bytes.
 * Returns the length. */
VOR_HIDDEN size_t vor_chrome_json_format_us(int64_t ns, char *out);

/* ---- The VOR_TRACE output (chrome_trace.c) ---------------------------------------------- */

typedef struct vor_chrome_trace_options {
    uint64_t every;      /* VOR_TRACE_EVERY: write 1 frame in N (0 or 1 = every frame) */
    uint64_t max_frames; /* VOR_TRACE_MAX_FRAMES: stop after N written frames (0 = no limit) */
    size_t buffer_bytes; /* the JSON writer's buffer (0 = the default; tests use tiny ones) */
} vor_chrome_trace_options;

/* Opens `path` (created or truncated) and adds the Chrome trace consumer to the running
 * session (`options` NULL: every frame, no limit). Call with the frame lock held and a
 * session active (outputs.c does, at session start). On failure (unwritable path, no
 * memory, consumer list full) it reports once (VOR_LOG_BAD_ENVIRONMENT for the path,
 * naming it and the OS error) and returns 0; the program and the other outputs go on.
 * Returns 1 when the trace is being written. */
VOR_HIDDEN int vor_chrome_trace_open(const char *path, const vor_chrome_trace_options *options);

#endif /* VOR_CHROME_JSON_H */
