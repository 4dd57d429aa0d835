/* cli.h: the private declarations shared by the files of the `vor` command.
 *
 * The command is a thin dispatcher (main.c) over one file per subcommand (cmd_*.c) and a
 * few pieces that each do one job and are unit-tested on their own (tests/cli/):
 *
 *   args.c          options before or after file names, `--`, --opt=value, -oVALUE
 *   report.c        "vor <cmd>: <file>: <problem>" on stderr, one safe line, exit statuses
 *   text.c          UTF-8 decoding; names and paths shown with control characters escaped
 *   output.c        -o OUT or stdout: written to a temporary renamed over OUT on success
 *                   (never a partial OUT, even on Ctrl-C), write errors checked (exit 1),
 *                   an output that is one of the inputs refused
 *   progress.c      "frames / percent" on stderr when it is a terminal, at most 10 per second
 *   capture_input.c opening input files (regular files only: never blocks on a FIFO), a
 *                   capture and its frames with messages that name the file
 *   quantile.c      p95 of a stream of doubles in bounded memory (exact, then a histogram)
 *   metric_stats.c  per-column count / min / mean / p95 / max, non-finite values counted
 *   name_table.c    interned strings (scope names) -> dense ids
 *   id_map.c        sparse 32-bit ids (sites, threads) -> values, bounded
 *   stacks.c        THE stack engine: flame frames -> stacks (a native/flamegraph tree),
 *                   self times and per-name figures by the reading rules of FORMAT.md;
 *                   summary, folded export, flamegraph and diff all read scopes through it
 *   csv.c, json_writer.c, numfmt.c   text formats
 *
 * Everything streams: a capture can be many GB, so no command holds more than one frame of
 * it at a time; what accumulates (metric statistics, stacks, names) is bounded by the
 * constants below or by the reader's own limits (vor/reader.h).
 *
 * Nothing here calls exit() or abort(): functions return, commands return an exit status
 * to main() (the one exception: output.c's signal handler, which removes a half-written
 * temporary and _exits). Exit statuses: 0 success, 1 an I/O error writing output, 2 bad usage or bad
 * input (unknown option, missing file, not a capture, corrupt capture). main() ignores
 * SIGPIPE, so a closed pipe is a write error (EPIPE) like any other: exit 1, without a
 * message when it is stdout's reader that went away (`vor export ... | head`). Interrupted
 * while writing -o OUT (SIGINT, SIGTERM, SIGHUP): the temporary is removed, exit 128 + the
 * signal (130, 143, 129).
 */
#ifndef VOR_CLI_H
#define VOR_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "arg_parser.h"
#include "vor/reader.h"

/* ---- Exit statuses ------------------------------------------------------------------ */

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_IO = 1,   /* writing output failed (disk full, unwritable -o path, closed pipe) */
    CLI_EXIT_USAGE = 2 /* bad command line or bad input file */
};

/* ---- Commands (main.c) ---------------------------------------------------------------- */

/* A subcommand: argv[0] is the command's name, argv[1..] its arguments. Returns the exit
 * status. */
typedef int (*cli_command_fn)(int argc, char **argv);

int cmd_summary(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_tail(int argc, char **argv);

extern const char cmd_summary_help[];
extern const char cmd_export_help[];
extern const char cmd_tail_help[];

/* Over the other native libraries: cmd_flamegraph.c (native/flamegraph), cmd_diff.c
 * (diff_stats.c, and native/flamegraph for --svg), cmd_serve.c (native/server). */
int cmd_flamegraph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_serve(int argc, char **argv);
/* cmd_symbolize.c over capture_rewrite.c and the core's symbolizer (module_symbols_linux.c). */
int cmd_symbolize(int argc, char **argv);
/* The profile store's clients (cmd_upload.c, cmd_list.c), over the core's upload client. */
int cmd_upload(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cli_read_token_file(const char *cmd, const char *path, char *out, size_t cap);

/* Installs `handler` for SIGINT and SIGTERM (stop_signals.c): tail and serve run until
 * interrupted and stop cleanly. */
void cli_on_stop_signals(void (*handler)(int));

/* ---- Error reporting (report.c) -------------------------------------------------------- */

/* Prints "vor <cmd>: <subject>: <message>\n" on stderr; without subject when it is NULL,
 * "vor: <message>" when cmd is NULL. Control characters and invalid UTF-8 in the subject and
 * the message are shown escaped (\x1b, \n; text.c); a line longer than 1 KiB is made to
 * fit by shortening the subject in its middle ("/a/b/...z/run.vor"), so the message itself
 * is always there. Returns `status` so that commands can write `return cli_fail(...)`. */
int cli_fail(int status, const char *cmd, const char *subject, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Same, for a usage error: adds "; see 'vor <cmd> --help'" and returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A note on stderr in the same shape ("vor <cmd>: <subject>: <message>"), no status. */
void cli_note(const char *cmd, const char *subject, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A reader message without a leading "<path>: " (the caller names the file itself). */
const char *cli_strip_path_prefix(const char *message, const char *path);
/* Reports a failed write to `name`, "<what>: <strerror(err)>" (what NULL: "write error";
 * err 0: EIO), and returns CLI_EXIT_IO. Quiet when `is_stdout` and stdout's reader went
 * away (EPIPE: `vor export ... | head`). */
int cli_write_error(const char *cmd, const char *name, int is_stdout, int err, const char *what);

/* ---- Text for terminals (text.c) -------------------------------------------------------- */

/* Decodes the UTF-8 sequence at s (n > 0 bytes available) as Unicode table 3-7 defines it
 * (no overlongs, surrogates or values above U+10FFFF). Returns its length (1..4) with the
 * code point in *cp, or -k for an invalid sequence whose maximal subpart is k bytes (k >= 1:
 * replace those k bytes by one U+FFFD and go on after them). */
int cli_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
/* How text is shown to people: valid UTF-8 as is, control characters escaped: \n \r \t,
 * \xNN for the other C0 controls and DEL (ESC: \x1b), \u0080..\u009f for C1 controls, and
 * \xNN for each byte of invalid UTF-8. Backslashes are not doubled. */
void cli_text_fputs(FILE *out, const char *s);
size_t cli_text_shown_length(const char *s);
/* `s` as shown, into out (cap bytes with the NUL); cut between characters and ended with
 * "..." when it does not fit. Returns out. */
char *cli_text_show(char *out, size_t cap, const char *s);
/* Appends printf text at buf[len] (buf holds cap bytes with the NUL) and returns the new
 * length; text that does not fit is cut and ends with "...". Never writes past cap. */
size_t cli_append(char *buf, size_t cap, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The same in at most max_shown bytes (and cap - 1), shortened in the middle with "...":
 * 2/5 of the room for the start, 3/5 for the end. Returns out. */
char *cli_text_show_middle(char *out, size_t cap, const char *s, size_t max_shown);

/* ---- Argument parsing (args.c) -------------------------------------------------------- */

#define CLI_MAX_OPTIONS 32    /* option ids are 0 .. CLI_MAX_OPTIONS-1 */
#define CLI_MAX_POSITIONAL 16 /* file names on one command line */

/* An option: {long name, short letter, takes a value, id (index into cli_args.values)},
 * read by the `vor` command's one parser (native/args/arg_parser.h). */
typedef vor_arg_option cli_option;

typedef struct cli_args {
    const char *values[CLI_MAX_OPTIONS]; /* the last value given; "" for a flag; NULL if absent */
    int positional_count;
    const char *positional[CLI_MAX_POSITIONAL];
    char error[256]; /* the problem, when cli_parse_args fails */
} cli_args;

/* Parses argv[0..argc) (the arguments after the command name) against `options`. Options
 * may come before or after positional arguments; "--" makes everything after it
 * positional; "-" alone is positional. Returns 0, or -1 with a message in out->error
 * (unknown option, missing value, value given to a flag, too many arguments). */
int cli_parse_args(int argc, char **argv, const cli_option *options, size_t n_options, cli_args *out);

/* Parses a decimal integer in [min, max]; returns 0 or -1 (not a number, out of range). */
int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* ---- Output (output.c) ------------------------------------------------------------------ */

typedef struct cli_output {
    FILE *f;
    const char *path; /* as given; NULL for stdout */
    const char *cmd;
    char *buffer;  /* stdio buffer of a file output */
    char *target;  /* the file that gets the output: path, or where its symlinks lead */
    char *temp;    /* the temporary written instead, renamed over target on success;
                      NULL when writing to target directly (a device, a FIFO) */
    int removable; /* written directly to a regular file: removed when the command fails */
} cli_output;

/* Before any work: refuses an empty output path (usage error; `option` names it, "-o") and
 * an output that is one of the inputs (same device and inode, symlinks followed; "-" as
 * an input is stdin, a NULL or "-" output is stdout). roles[i] says what inputs[i] is, for
 * the message "vor <cmd>: OUT: is <role>; choose another output". Returns 0 or
 * CLI_EXIT_USAGE after printing. Inputs that do not exist are left to their opening. */
int cli_output_check(const char *cmd, const char *option, const char *out_path, const char *const *inputs,
                     const char *const *roles, size_t n_inputs);

/* Opens `path` for writing, or stdout when path is NULL or "-". A regular file (existing
 * or not) is written through a temporary in its directory (mkstemp, then the permissions a
 * new file gets: 0666 minus the umask), renamed over it by cli_output_close() on success:
 * OUT is never left half-written, and an existing OUT survives a failed command. While it
 * is open, SIGINT, SIGTERM and SIGHUP (unless ignored) remove the temporary and exit
 * 128 + the signal (130, 143, 129). Anything else (/dev/full, a FIFO, /dev/stdout) is
 * written directly. A read-only OUT is refused. Reports a failure (naming the path) and
 * returns CLI_EXIT_IO; 0 on success. */
int cli_output_open(cli_output *o, const char *cmd, const char *path);

/* 1 once a write to the output failed (stdio's sticky error): a long export stops there. */
int cli_output_failed(const cli_output *o);

/* Flushes and closes: renames the temporary over OUT, or with `discard` (the command
 * failed) or a write error removes it (a direct regular file is removed). Returns `status`
 * unchanged if it is not 0; otherwise 0, or CLI_EXIT_IO after reporting a write error
 * (naming the path or "stdout"; see cli_write_error). */
int cli_output_close(cli_output *o, int status, int discard);

/* The name used in messages: the path or "stdout". */
const char *cli_output_name(const cli_output *o);

/* ---- Progress on stderr (progress.c) ----------------------------------------------------- */

typedef struct cli_progress {
    int enabled;
    const char *cmd;
    char subject[96];  /* the file, escaped and shortened to fit a terminal line */
    const char *phase; /* shown before the count when not NULL, e.g. "pass 1 of 2" */
    uint64_t total_bytes;
    uint64_t last_ms; /* monotonic ms of the last update printed */
    int shown;        /* a line is on screen */
} cli_progress;

/* Enabled only when `want` and stderr is a terminal. */
void cli_progress_init(cli_progress *p, const char *cmd, const char *subject, uint64_t total_bytes, int want);
/* Cheap to call every frame: one clock read, prints at most 10 times per second. */
void cli_progress_update(cli_progress *p, uint64_t frames, uint64_t bytes_done);
/* Erases the progress line, if any. */
void cli_progress_done(cli_progress *p);

/* ---- Capture input (capture_input.c) ----------------------------------------------------- */

typedef enum cli_input_kind { CLI_INPUT_CAPTURE, CLI_INPUT_FOLDED } cli_input_kind;

/* Refuses what is not a regular file, `fd` being open on `path`: "is a directory, not a
 * capture", "is a pipe; ...", "is not a regular file; vor reads capture files" (kind says
 * which words). Returns 0 with *st filled (st may be NULL) or CLI_EXIT_USAGE after printing. */
int cli_input_check(const char *cmd, const char *path, int fd, cli_input_kind kind, struct stat *st);
/* Opens an input file: O_NONBLOCK (a FIFO without a writer must not block the open), fstat,
 * cli_input_check, then O_NONBLOCK cleared. Returns the fd (close-on-exec) or -1 after
 * printing the message (the status is CLI_EXIT_USAGE). */
int cli_input_open(const char *cmd, const char *path, cli_input_kind kind, struct stat *st);

#define CLI_READER_NAME_BYTES 64
/* A reader on the file that `fd` (from cli_input_open) has open: the reader opens
 * /proc/self/fd/N, the very file that was checked, and its messages start with that short
 * name (strip it with cli_strip_path_prefix(message, name)) rather than a long path the
 * reader would cut. Without /proc, the reader opens `path`. On failure returns NULL with
 * the reader's message in err. */
vor_reader *cli_reader_open(int fd, const char *path, char name[CLI_READER_NAME_BYTES], char *err, size_t err_cap);

typedef struct cli_capture {
    vor_reader *reader;
    const char *path;
    const char *cmd;
    uint64_t file_size;                      /* at open */
    uint64_t frames;                         /* frames read so far */
    uint64_t damage_noted;                   /* damaged records reported so far (one note each) */
    char reader_name[CLI_READER_NAME_BYTES]; /* how the reader's messages name the file */
} cli_capture;

/* Opens a finished (or growing) capture and reads its header. On failure prints the
 * message (missing file, not a regular file, not a capture, no header yet) and returns
 * CLI_EXIT_USAGE. */
int cli_capture_open(cli_capture *c, const char *cmd, const char *path);
/* Next frame: 1 with *frame filled, 0 at the end of what is there now (a torn last record
 * included), or -1 after printing the reader's error (the status is CLI_EXIT_USAGE). */
int cli_capture_next(cli_capture *c, vor_reader_frame *frame);
void cli_capture_close(cli_capture *c);
/* Every reader the command opens (cli_reader_open) refuses a frame of more than
 * STACKS_DEFAULT_MAX_FRAME_SCOPES scopes before allocating for it; --max-frame-scopes sets
 * another bound through this. */
void cli_capture_set_max_frame_scopes(cli_capture *c, uint64_t max);
/* The reader's error without its leading file name; when it is the frame limit, with what
 * raises it (--max-frame-scopes). Returns buf. */
const char *cli_reader_message(const vor_reader *r, const char *reader_name, char *buf, size_t cap);

/* --max-frame-scopes: *out = the value, or STACKS_DEFAULT_MAX_FRAME_SCOPES when text is
 * NULL. Returns 0, or -1 after a usage message. */
int cli_parse_max_frame_scopes(const char *cmd, const char *text, uint64_t *out);
/* Adds a frame to the stack engine: 0, or CLI_EXIT_USAGE after a message naming the file
 * and frame (more scopes than --max-frame-scopes, out of memory). */
struct stacks;
int cli_stacks_add(const char *cmd, const cli_capture *c, struct stacks *s, const vor_reader_frame *f);

/* ---- Quantiles of a stream of doubles (quantile.c) ---------------------------------------- */

/* Exact while a stream holds at most QUANTILE_EXACT_MAX values (and the shared budget
 * allows): the values are kept and sorted, percentiles are nearest-rank. Beyond that, a
 * log-linear histogram of the doubles' bits: 128 sub-buckets per power of two, each
 * value's bucket reported by its midpoint, so a percentile is within 1/256 (0.4%,
 * relative) of the exact nearest-rank value; min and max stay exact and bound the answer.
 * Histogram memory: 1 KiB per power of two (per sign) the values span, at most
 * 2 x 2048 pages. */
#define QUANTILE_EXACT_MAX 65536u
#define QUANTILE_SUB_BUCKETS 128u

typedef struct quantile_page quantile_page;

typedef struct quantile {
    uint64_t count;
    double min, max;
    double *exact; /* while exact: the values (sorted when `sorted`) */
    uint32_t n_exact, cap_exact, exact_max;
    int sorted;
    int histogram;            /* 1 once switched */
    quantile_page **pages;    /* sorted by key */
    quantile_page *last_page; /* the page of the previous value */
    uint32_t n_pages, cap_pages;
    uint64_t *budget; /* shared count of exact values still allowed; NULL = none */
} quantile;

/* `exact_max` 0 means QUANTILE_EXACT_MAX; `budget` may be NULL. */
void quantile_init(quantile *q, uint32_t exact_max, uint64_t *budget);
/* Adds a finite value (callers skip NaN and infinities). Returns 0, or -1 when out of
 * memory (the value is then not counted). */
int quantile_add(quantile *q, double v);
/* The nearest-rank percentile p (0..100]; NaN when empty. */
double quantile_get(quantile *q, double p);
int quantile_is_exact(const quantile *q);
void quantile_free(quantile *q);

/* ---- Metric statistics (metric_stats.c) --------------------------------------------------- */

typedef struct metric_stat {
    uint64_t frames;    /* frames that have a finite value */
    uint64_t nonfinite; /* NaN and infinities skipped */
    double min, max;
    double sum, sum_compensation; /* Neumaier summation */
    quantile q;
} metric_stat;

typedef struct metric_stats {
    metric_stat *columns; /* indexed by column id */
    uint32_t n_columns;
    uint64_t exact_budget; /* shared by the quantiles */
} metric_stats;

void metric_stats_init(metric_stats *s);
/* Adds one value of column `id` (< VOR_READER_MAX_COLUMNS). Returns 0 or -1 (out of memory). */
int metric_stats_add(metric_stats *s, uint32_t id, double value);
/* NULL when the column never had a value. */
const metric_stat *metric_stats_get(const metric_stats *s, uint32_t id);
double metric_stat_mean(const metric_stat *m);
double metric_stat_p95(metric_stat *m);
void metric_stats_free(metric_stats *s);

/* ---- Interned names (name_table.c) ------------------------------------------------------- */

#define NAME_NONE UINT32_MAX
#define NAME_TABLE_MAX (VOR_READER_MAX_SITES + VOR_READER_MAX_THREADS + 1024u) /* names kept */

typedef struct name_table name_table;

name_table *name_table_create(void);
void name_table_destroy(name_table *t);
/* The id of `name` (added if new); NAME_NONE when out of memory or full. */
uint32_t name_table_intern(name_table *t, const char *name);
/* The id of `name`, or NAME_NONE when it was never interned. */
uint32_t name_table_find(const name_table *t, const char *name);
const char *name_table_get(const name_table *t, uint32_t id);
uint32_t name_table_count(const name_table *t);

/* ---- Sparse ids to values, bounded (id_map.c) ------------------------------------------- */

#define ID_MAP_EMPTY UINT32_MAX /* a value never stored */

typedef struct id_map_slot id_map_slot;
typedef struct id_map {
    id_map_slot *slots;
    uint32_t n_slots, count, max;
} id_map;

/* At most `max` entries. */
void id_map_init(id_map *m, uint32_t max);
void id_map_free(id_map *m);
/* The value stored for `id`, or NULL. The pointer is valid until the next put. */
uint32_t *id_map_find(const id_map *m, uint32_t id);
/* The value of `id`, stored as `value` if new; NULL when full or out of memory (and for
 * value ID_MAP_EMPTY). */
uint32_t *id_map_put(id_map *m, uint32_t id, uint32_t value);

/* ---- The stack engine: flame frames -> stacks, self times, per-name figures (stacks.c) ---- */

#include "flamegraph.h"

#define STACKS_PLACEHOLDER "[parent not recorded]" /* scopes whose parent the capture lacks */
#define STACKS_MORE_NAMES "[more scope names than vor keeps]"
#define STACKS_MORE_THREADS "[more threads than vor keeps]"
#define STACKS_DEFAULT_MAX_FRAME_SCOPES (1u << 20) /* scopes of one frame the commands read */
#define STACKS_LIMIT_MAX_FRAME_SCOPES (1u << 24)   /* the largest --max-frame-scopes */
#define STACKS_BYTES_PER_SCOPE 88u                 /* the reader's 32 + the engine's scratch, per scope of a frame */
#define STACKS_MAX_SITES (1u << 20)                /* site ids whose names are cached */
#define STACKS_MAX_THREADS (1u << 16)              /* distinct threads kept apart; more merge */
#define STACKS_EXACT_BUDGET (8u * 1024u * 1024u)   /* per-frame values kept exactly, all names */

enum { STACKS_OK = 0, STACKS_TOO_MANY = 1, STACKS_NO_MEMORY = 2 };

/* Per scope name, over the flame frames read. Times in ns, compensated unless raw; sums
 * saturate at INT64_MAX. */
typedef struct stacks_name {
    uint64_t calls;        /* scopes that ended in the frames read */
    int64_t total_ns;      /* time inside the frames read; nested calls of the same name once */
    int64_t self_ns;       /* time not spent in child scopes */
    int64_t duration_ns;   /* full durations of the ended scopes (mean = duration_ns / calls) */
    int64_t max_ns;        /* the longest ended scope */
    int64_t frame_ns;      /* total in the last frame added, for names in stacks.touched */
    int64_t frame_self_ns; /* self time likewise */
    uint64_t frame_stamp;
} stacks_name;

/* Per-frame figures of a name (stacks_options.per_frame). */
typedef struct stacks_frame_dist {
    uint64_t frames_with; /* flame frames in which the name has time */
    quantile total, self; /* its total and self time in each of those frames */
} stacks_frame_dist;

typedef struct stacks_stats {
    uint64_t flame_frames;    /* frames with scopes read */
    uint64_t scopes;          /* ended scopes */
    uint64_t open_scopes;     /* scopes still open at their frame's end (counted per frame) */
    uint64_t parent_unknown;  /* scopes put under STACKS_PLACEHOLDER */
    uint64_t children_longer; /* scopes whose children took more than they did (self 0) */
    uint64_t names_refused;   /* scopes named STACKS_MORE_NAMES */
    uint64_t threads_merged;  /* thread frames named STACKS_MORE_THREADS */
    uint64_t tree_refused;    /* scopes the tree did not keep (its cap); time in the parent */
    uint64_t out_of_memory;
} stacks_stats;

struct stacks_scratch;
typedef struct stacks_options {
    flamegraph_tree *tree;     /* NULL: per-name figures only; else scopes go in (not reversed) */
    int thread_roots;          /* a frame per thread at the bottom of the tree's stacks */
    int raw;                   /* no overhead compensation */
    uint64_t max_frame_scopes; /* 0 = STACKS_DEFAULT_MAX_FRAME_SCOPES */
    double weight;             /* tree values multiplied by it; 0 = 1 */
    int per_frame;             /* keep each name's per-frame distributions */
    /* Called for each thread of each flame frame once its scopes' figures are known, with
     * the engine's scratch for that thread (indices as in ts->scopes: contrib, self, total,
     * parent, child lists): exports that lay scopes out in time (speedscope) read them
     * there rather than computing the reading rules a second time. NULL: not called. */
    void (*on_thread)(void *ctx, const vor_reader_frame *f, const vor_reader_thread_scopes *ts,
                      const struct stacks_scratch *k);
    void *on_thread_ctx;
} stacks_options;

typedef struct stacks_scratch {
    int64_t *contrib, *total, *self, *child_contrib;
    double *child_cost;
    uint32_t *parent, *first_child, *last_child, *next_sibling, *name;
    uint32_t cap;
} stacks_scratch;

typedef struct site_slot site_slot;

typedef struct stacks {
    stacks_options opt;
    double scope_cost_ns, function_cost_ns; /* in force: 0 when raw or unknown */
    int costs_known;                        /* the capture has calibrated costs */
    int compensating;
    name_table *names; /* scope names; ids index by_name */
    stacks_name *by_name;
    uint32_t *active; /* per name: instances on the walk's path */
    uint32_t cap_names;
    uint32_t more_names;      /* the name id of STACKS_MORE_NAMES */
    stacks_frame_dist **dist; /* by name id (per_frame), made on first use */
    uint32_t cap_dist;
    uint64_t exact_budget; /* shared by the distributions */
    uint32_t *touched;     /* names with time in the last frame added */
    uint32_t n_touched, cap_touched;
    uint64_t frame_stamp;
    uint64_t frame_scopes; /* scopes of the last frame added */
    id_map sites;          /* site id -> site_slots index */
    site_slot *site_slots;
    uint32_t n_site_slots, cap_site_slots;
    uint32_t last_site_id, last_site_name; /* the last site named, and its name id */
    const char *last_site_reader_name;
    id_map threads; /* thread ids met (bounded) */
    stacks_scratch scratch;
    stacks_stats stats;
} stacks;

/* Takes the costs from the reader's header. Returns 0 or -1 (out of memory). */
int stacks_init(stacks *s, const stacks_options *options, const vor_reader *r);
/* Adds a frame's scopes (frames without scopes add nothing). STACKS_OK, STACKS_TOO_MANY
 * (more than max_frame_scopes: nothing added; s->frame_scopes says how many) or
 * STACKS_NO_MEMORY. */
int stacks_add_frame(stacks *s, const vor_reader *r, const vor_reader_frame *f);
void stacks_free(stacks *s);
/* The figures of name id `name`, or NULL. */
const stacks_name *stacks_get_name(const stacks *s, uint32_t name);
/* The nearest-rank percentile p (0..100] of a name's total (self = 0) or self time per
 * flame frame over all flame frames read (a frame without the name counts as 0); needs
 * per_frame. Within 0.4% beyond 65,536 frames with the name (quantile.c). */
double stacks_frame_percentile(stacks *s, uint32_t name, int self, double p);
/* "19.5 ns per child scope, 30.2 ns per child function" (or which is not compensated). */
char *stacks_costs_text(const stacks *s, char *buf, size_t cap);
/* 1 when n is not NULL and has calls or time (a name can be interned and never used). */
int stacks_name_used(const stacks_name *n);
/* 1 for a site of -finstrument-functions (it costs function_cost_ns), else 0. */
int stacks_site_is_function(const vor_reader_site *site);
/* A thread's newest name, or "thread N" written into fallback. */
const char *stacks_thread_name(const vor_reader *r, uint32_t id, char fallback[32]);
/* The engine's tree as it is written: built with `options` (reverse and flamechart as the
 * user asked), each thread's frame named by its newest name (threads sharing one merge),
 * only the thread named `only_thread` when not NULL, every name shown with control
 * characters escaped (text.c) when `escape`. NULL with *status when out of memory. */
flamegraph_tree *stacks_final_tree(stacks *s, const vor_reader *r, const flamegraph_tree_options *options,
                                   const char *only_thread, int escape, flamegraph_status *status);

/* ---- Summary (cmd_summary.c collects, summary_print.c prints) --------------------------------- */

typedef struct summary {
    const char *path;
    const vor_reader *reader; /* open while printing: columns and header facts */
    uint64_t frames, flame_frames, scopes, dropped_scopes;
    uint64_t first_index, last_index;
    int64_t first_start_ns, last_end_ns;
    int64_t overhead_ns; /* saturating */
    metric_stats metrics;
    stacks st; /* per-name calls, total and self time */
    struct drop_stats *drops;
    uint32_t top; /* rows in each top-scopes table */
} summary;

void summary_print_text(summary *s, FILE *out);
void summary_print_json(summary *s, FILE *out);

/* ---- Export formats (export_*.c), called by cmd_export.c --------------------------------------- */

typedef struct export_job {
    const char *cmd;      /* "export" */
    cli_capture *capture; /* open, header read */
    cli_output *out;
    cli_progress *progress;
    int thread_roots;          /* folded: thread name as the root frame (not --no-thread) */
    uint32_t max_stacks;       /* folded: distinct stacks kept (0 = default) */
    int raw;                   /* folded: no overhead compensation (--raw) */
    uint64_t max_frame_scopes; /* scopes one frame may hold (--max-frame-scopes) */
    /* --frames A..B (export_frames.c): only frames with index in [frames_first,
     * frames_last] are exported; what the reading met, for the message when none was. */
    int has_frames;
    uint64_t frames_first, frames_last;
    uint64_t frames_selected, frames_met, met_first, met_last;
    int range_passed; /* a frame beyond frames_last was met: reading stopped there */
} export_job;

/* The next frame the export wants from `c` (the job's capture, or csv's second reader):
 * frames before --frames' first are skipped (with progress), and reading stops at the
 * first frame beyond its last. 1 with *f, 0 at the end, -1 after a reader error printed. */
int export_next_frame(export_job *job, cli_capture *c, vor_reader_frame *f);
/* After the frames were read: CLI_EXIT_USAGE with a message when --frames selected none
 * ("--frames 900..950 selects no frame: the capture's frames are 0 to 199"), else 0. */
int export_check_selection(export_job *job);
/* Clears what export_next_frame counted (csv reads the capture twice). */
void export_restart_selection(export_job *job);

/* Each returns an exit status, having printed any message. Input errors: CLI_EXIT_USAGE. */
int export_csv(export_job *job);
int export_folded(export_job *job);
int export_chrome(export_job *job);
int export_speedscope(export_job *job);

/* ---- Text formats (csv.c, json_writer.c, numfmt.c) --------------------------------------------- */

/* Writes `text` as one CSV field (RFC 4180): quoted, with quotes doubled, when it holds a
 * comma, a quote, a line break or leading/trailing space. */
void csv_write_field(FILE *out, const char *text);

/* The shortest "%.*g" text of v that reads back as v (up to 17 digits); "nan", "inf",
 * "-inf" for the non-finite. Returns buf. */
#define NUMFMT_BYTES 40
char *numfmt_double(char buf[NUMFMT_BYTES], double v);
/* A value for people: 6 significant digits, no exponent between 1e-4 and 1e9. */
char *numfmt_human(char buf[NUMFMT_BYTES], double v);
/* Nanoseconds as milliseconds with 6 decimals (exact: integer arithmetic). */
char *numfmt_ns_as_ms(char buf[NUMFMT_BYTES], int64_t ns);
/* 1234567 -> "1,234,567". */
char *numfmt_count(char buf[NUMFMT_BYTES], uint64_t n);

/* A streaming JSON writer: enough for `vor summary --json`. Commas are inserted for you. */
typedef struct json_writer {
    FILE *out;
    int depth;
    int pretty;
    unsigned char need_comma[64]; /* per nesting level */
} json_writer;

void json_begin(json_writer *w, FILE *out, int pretty);
void json_object_begin(json_writer *w, const char *key); /* key NULL inside arrays / at top */
void json_object_end(json_writer *w);
void json_array_begin(json_writer *w, const char *key);
void json_array_end(json_writer *w);
void json_string(json_writer *w, const char *key, const char *value);
void json_double(json_writer *w, const char *key, double value); /* non-finite -> null */
void json_int(json_writer *w, const char *key, int64_t value);
void json_uint(json_writer *w, const char *key, uint64_t value);
void json_bool(json_writer *w, const char *key, int value);
void json_null(json_writer *w, const char *key);
void json_end(json_writer *w); /* final newline */
/* Writes s as a JSON string literal (quotes included). */
void json_write_string(FILE *out, const char *s);

/* ---- Copying a capture with its sites renamed (capture_rewrite.c) ----------------------------- */

/* A site declaration as a record holds it. */
typedef struct rewrite_site {
    uint64_t id, line, module_id, address;
} rewrite_site;

typedef struct rewrite_names {
    const char *name, *function, *file;
    uint32_t line;
} rewrite_names;

typedef struct rewrite_editor {
    /* 1 with *names filled to declare the site with them instead; 0 to keep it as it is. */
    int (*edit)(void *context, const rewrite_site *site, rewrite_names *names);
    void *context;
} rewrite_editor;

/* Copies the format 1.1 capture `in` (positioned at its start) to `out`, the declarations
 * of sites the editor renames rewritten, every other byte as it was; `r` has read the
 * whole capture (its damage list says which bytes to copy blind). *rewritten = records
 * changed. Returns 0, or -1 with a message in err (empty for a write error: see ferror). */
int capture_rewrite(FILE *in, FILE *out, const vor_reader *r, const rewrite_editor *editor, uint64_t *rewritten,
                    char *err, size_t err_cap);

/* ---- Dropped scopes by cause and thread (drops.c) ---------------------------------------------- */

#define DROPS_MAX_ENTRIES 256u /* distinct (cause, thread) pairs kept; more merge per cause */

typedef struct drop_entry {
    uint32_t cause; /* vor_drop_cause */
    uint32_t thread_id;
    int any_thread; /* merged: threads past DROPS_MAX_ENTRIES */
    uint64_t count;
    uint64_t first_frame, last_frame; /* frame indices */
    char thread_name[256];            /* the thread's newest name */
} drop_entry;

typedef struct drop_stats {
    uint64_t total; /* every cause but VOR_DROP_FILTERED; saturating */
    uint64_t frames_with_drops;
    uint64_t in_flame_frames; /* dropped from frames that carry scopes */
    uint64_t unattributed;    /* cause not recorded (format 1.0 frames give a total only) */
    uint64_t unattributed_frames, unattributed_first, unattributed_last;
    uint64_t filtered; /* VOR_DROP_FILTERED: left out on purpose, not in total */
    drop_entry *entries;
    uint32_t n_entries, cap_entries;
} drop_stats;

void drop_stats_init(drop_stats *d);
void drop_stats_add(drop_stats *d, const vor_reader *r, const vor_reader_frame *f);
/* Largest counts first (call before printing). */
void drop_stats_sort(drop_stats *d);
void drop_stats_free(drop_stats *d);
/* "thread_buffer_full", ...; and a sentence for people. */
const char *drop_cause_key(uint32_t cause);
const char *drop_cause_text(uint32_t cause);
/* One line: "1,234 scopes dropped (thread_buffer_full: 1,200; too_deep: 34)". */
char *drop_stats_line(const drop_stats *d, char *buf, size_t cap);
/* Text lines for `vor summary` (names escaped); a JSON object under `key`. */
void drop_stats_print_text(const drop_stats *d, FILE *out);
void drop_stats_print_json(const drop_stats *d, json_writer *w, const char *key);

#endif /* VOR_CLI_H */
