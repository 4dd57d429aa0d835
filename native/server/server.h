/*
 * server.h - the server behind `vor serve [FILES|DIRS]`.
 *
 * One libwebsockets context on one port serves three things:
 *
 *   GET|HEAD /...              the static panel from the site directory (--site, else the
 *                              caller's default_site_dir, else build/site),
 *                              index.html as the default document ("dir" redirects to "dir/"),
 *                              MIME types from our own table (.wasm is application/wasm, unknown
 *                              extensions application/octet-stream), "cache-control: no-cache".
 *                              Every response, errors included, carries the cross-origin isolation
 *                              headers (COOP same-origin, COEP require-corp, CORP same-origin) so
 *                              the wasm build may use threads. Paths that try to leave the site
 *                              directory (.., %2e%2e, symlinks pointing out) get 403/404; other
 *                              methods 405. Keep-alive and pipelining work.
 *   GET|HEAD /api/captures     JSON list of the captures given on the command line: each FILE,
 *                              and each *.vor directly inside each DIR (rescanned per request).
 *   GET|HEAD /api/captures/<id>  one entry of that list; unknown id -> 404 {"error":"..."};
 *                              other methods 405 with "allow: GET, HEAD".
 *   ws://HOST:PORT/capture/<id>[?follow=0]   (subprotocol "vor-capture", or none)
 *                              streams the capture file as binary messages: exactly the bytes of
 *                              the file, in order, then (when following, the default) the bytes
 *                              appended while it grows. See "Websocket protocol" below.
 *
 * Listing entry (JSON, one per capture):
 *   {"id":"0","name":"run.vor","path":"<as given>","bytes":N,"mtime_ms":T,
 *    "state":"capture","ws":"/capture/0"}
 *   state is one of "capture" (starts with the .vor magic; only these carry "ws"), "empty"
 *   (0 bytes, or fewer than 8 bytes that are a prefix of the magic: still being created),
 *   "not-a-capture" (other magic), "missing" (a FILE argument that does not exist (yet)),
 *   "unreadable" (cannot be opened) or "not-a-file". The top-level object also has
 *   "truncated":true when the latest scan found more than VOR_SERVER_MAX_CAPTURES captures.
 *   Ids: a capture keeps its id while its file exists, and gets it back when the file returns
 *   after a while; ids are never reused for another file. Only present files count against
 *   VOR_SERVER_MAX_CAPTURES; the names of up to VOR_SERVER_MAX_GONE_CAPTURES vanished files are
 *   remembered (for their ids), beyond that the longest-gone are forgotten (a forgotten file
 *   that comes back gets a new id).
 *
 * Who may connect (cross-site pages, DNS rebinding): requests from other origins and with
 * foreign Host headers are refused.
 *   HTTP: a Host header must name a loopback host (localhost, 127.0.0.0/8, [::1]; any port), the
 *   bound --host address, or, when bound to 0.0.0.0 / ::, any IP address literal (a DNS name
 *   other than localhost is what a rebinding attack sends); otherwise 403. No Host: allowed.
 *   Websocket upgrade: the same Host rule, and an Origin header, when present, must be the
 *   server itself: http(s)://HOST:PORT whose host:port equals the request's Host, or a loopback
 *   host / the bound address with the server's own port. Otherwise 403 before the upgrade.
 *   Clients without Origin (the CLI, node, curl) pass; browsers always send it on websockets.
 *   Upgrades to anything but a websocket (h2c: HTTP/2 streams carry :authority, not Host) get
 *   400; the server speaks HTTP/1.1 only, so every request passes the Host check.
 *   When --host is not a loopback address, vor_server_run() prints a warning at start: captures
 *   are then readable by anyone on that network, without authentication.
 *
 * Limits that answer instead of hanging up: a request path or query of SERVER_URI_MAX_BYTES
 * (2 KiB) or more gets 414, however long it is (libwebsockets stops storing it at the limit);
 * a Host or Origin header of 256 bytes or more gets 431. Headers the server never reads
 * (Cookie, User-Agent, Referer, ...) are cut short rather than refused, so they cannot fill
 * the 8 KiB of header space a request has. Only a request whose headers overflow that space
 * anyway (e.g. one custom header of 10 KiB) is dropped by libwebsockets without a reply.
 * libwebsockets' own log lines are filtered (the ones a client can provoke are dropped) and
 * rate-limited (10 a minute).
 *
 * Slow and idle connections (slowloris) cannot lock others out. A connection with no request in
 * progress (just connected, still sending its headers, or idle between keep-alive requests) is
 * "waiting": it has 3 s to send its request headers (5 s idle between requests), and when a new
 * connection would put its address over 32 waiting connections, or everyone over 256, the
 * longest-waiting one of that scope is closed to make room (a client that is not slowloris sends
 * its request at once, so it is never the oldest). An address may hold 256 connections, the
 * server 1,024 and as many as its file descriptor limit allows (each connection counting the
 * descriptors it may hold); beyond that a response that has made no progress for 2 s may be
 * closed too, and a newcomer nothing can make room for gets 503. Viewers are never closed for
 * connection room. Every admitted connection has its own header buffer at once, so none waits
 * behind slow ones. When accept() runs out of file descriptors anyway (other files of the
 * process), the oldest waiting connections are closed and accepting pauses 10 ms (250 ms when
 * there was nothing to close) - never a busy loop - with one warning on stderr.
 *
 * Websocket protocol (all text messages from the server are JSON objects with a "type"):
 *   server -> client, binary   the next bytes of the file (chunks of up to 64 KiB, boundaries
 *                              not aligned to records: concatenate them).
 *   server -> client, text     {"type":"end","bytes":N}  not following and all N bytes sent;
 *                              the server then closes with 1000.
 *                              {"type":"reset","reason":"truncated"|"replaced"|"removed",
 *                               "bytes":N}  the followed file shrank below what was sent, or its
 *                              path now names another file / nothing, or it was rewritten in
 *                              place by a new run (its header, which holds the run's wall-clock
 *                              start and pid, changed: "replaced"); closes with 1000. Reconnect
 *                              to read the new file from its start. No byte of the new run is
 *                              ever sent on the old stream: the header is re-checked after each
 *                              chunk is read and before it is sent.
 *                              {"type":"error","message":"..."}  then a close with status:
 *                              1003 binary message received, 1008 bad JSON / unknown type / bad
 *                              value / bad URL / unknown id / not a capture / not a regular
 *                              file (a FIFO or device is never opened for reading: it could
 *                              block the server) / foreign Origin or Host, 1009 message over
 *                              4 KiB, 1011 server-side failure (open/read), 1013 too many viewers
 *                              ("(max N)", or "from your address (max N)").
 *                              A stalled viewer (below) gets no message, only a close 1008.
 *   client frames              read strictly (RFC 6455): an unmasked frame, reserved bits or
 *                              opcodes, a fragmented or over-125-byte control frame, a length not
 *                              in its shortest form, a bad continuation, a bad close frame: close
 *                              1002; invalid UTF-8 in a text message or close reason: 1007.
 *                              Pings get a pong; a close gets a close with the same status.
 *                              Frames sent before the handshake response (forbidden) are ignored.
 *   server -> client, ping     8 bytes; a viewer must answer with a pong (browsers do) or it is
 *                              taken for stalled (below).
 *   client -> server, text     {"type":"follow","value":false}  stop at the current end of file
 *                              (then "end"); {"type":"follow","value":true} keep following (not
 *                              after "end", nor when the server runs with --no-follow). No reply.
 *   On vor_server_request_stop() viewers are closed with 1001 "server stopping".
 *
 * Viewers and memory: each viewer reads the file at its own offset (the file is the buffer) and
 * is written to only when libwebsockets reports its socket writable, one chunk at a time through
 * one shared read buffer. So a viewer costs three file descriptors (its socket, a copy the server
 * reads it through, the capture), ~5 KiB of state and at most one unsent chunk inside
 * libwebsockets; nothing is queued per viewer beyond that. A slow viewer that falls behind a live
 * capture is NOT dropped: it keeps reading the file at its own pace and catches up when it can.
 * A stalled viewer is closed with 1008 "viewer stalled: ..." (or, if it cannot even take the
 * close frame, dropped 5 s later) and its slot is free at once: stalled means its socket took
 * nothing (no write, no more bytes acknowledged by the peer) for stall_timeout_ms (default 60 s)
 * while the server had bytes for it, or, waiting at the end of a followed capture, it did not
 * answer a ping for stall_timeout_ms (it is pinged after stall_timeout_ms / 2 of quiet). A viewer
 * that reads everything and waits at the end of a quiet capture answers its pings: it is never
 * stalled. TCP keepalive (60 s idle, 3 probes 10 s apart) ends connections whose peer vanished.
 * At most max_viewers (default 64) stream at once, at most max_viewers_per_address (default half)
 * from one address. A newcomer that finds no slot waits up to 0.9 s: viewers in its way that
 * have been stalled for 0.4 s (or 0.4 s without answering a ping sent then) are dropped to make
 * room, so while a stalled viewer holds a slot a newcomer gets in within a second; otherwise it
 * gets an error and close 1013 "too many viewers".
 * Growth is detected by polling the file size every poll_interval_ms (default 50 ms) for viewers
 * that have caught up; nothing is polled when nobody waits.
 *
 * Why 127.0.0.1 by default: a capture reveals the structure of the profiled program (function
 * and scope names, timings, memory use) and the server has no authentication, so it listens on
 * loopback only unless --host says otherwise.
 *
 * Threading: vor_server_run() runs everything on the calling thread (one event loop; no callback
 * ever blocks on the network). One server per process at a time. vor_server_request_stop() may
 * be called from any thread or from a signal handler.
 */
#ifndef VOR_SERVER_H
#define VOR_SERVER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VOR_SERVER_DEFAULT_PORT 8700          /* used when options.port == 0 */
#define VOR_SERVER_PORT_ANY (-1)              /* options.port: let the OS choose (tests) */
#define VOR_SERVER_DEFAULT_HOST "127.0.0.1"   /* used when options.host == NULL */
#define VOR_SERVER_DEFAULT_SITE "build/site"  /* used when options.site_dir == NULL */
#define VOR_SERVER_DEFAULT_MAX_VIEWERS 64     /* used when options.max_viewers == 0 */
#define VOR_SERVER_MAX_VIEWERS_LIMIT 1024     /* options.max_viewers above this is an error */
#define VOR_SERVER_DEFAULT_POLL_MS 50         /* used when options.poll_interval_ms == 0 */
#define VOR_SERVER_MAX_PATHS 256              /* FILES|DIRS arguments accepted */
#define VOR_SERVER_MAX_CAPTURES 1024          /* captures listed (present files) */
#define VOR_SERVER_MAX_GONE_CAPTURES 1024     /* vanished captures whose ids are remembered */
#define VOR_SERVER_DEFAULT_STALL_MS 60000     /* used when options.stall_timeout_ms == 0 */
#define VOR_SERVER_STALL_NEVER (-1)           /* options.stall_timeout_ms: never drop a viewer */
#define VOR_SERVER_MAX_UPLOAD_ORIGINS 16      /* --upload-origin values accepted */

/* Called once the server listens. host/port are what it bound (port resolved when ephemeral). */
typedef void (*vor_server_ready_fn)(void *user, const char *host, int port);

/* Zero-initialise, then set what you need: every zero field means its default. */
typedef struct vor_server_options {
    const char *host;        /* NULL = "127.0.0.1"; a numeric IPv4/IPv6 address, or "localhost" */
    int port;                /* 0 = 8700; VOR_SERVER_PORT_ANY = ephemeral; else 1..65535 */
    const char *site_dir;    /* --site: NULL = default_site_dir */
    const char *default_site_dir; /* the caller's default panel directory (e.g. one found next
                              * to its executable); NULL = "build/site" (relative to the
                              * working directory). vor_server_parse_args() leaves it NULL. */
    int no_follow;           /* 0 = follow growing captures (default); 1 = never follow */
    int max_viewers;         /* 0 = 64; 1..VOR_SERVER_MAX_VIEWERS_LIMIT */
    int max_viewers_per_address; /* 0 = half of max_viewers (rounded up); 1..max_viewers */
    int poll_interval_ms;    /* 0 = 50; growth polling period for caught-up viewers, 1..10000 */
    int stall_timeout_ms;    /* 0 = 60000; a viewer whose socket takes nothing for this long while
                              * bytes wait for it, or that leaves a ping unanswered this long, is
                              * closed; 100..86400000, or VOR_SERVER_STALL_NEVER (never closed,
                              * never pinged, never made to give its slot to a newcomer) */
    int path_count;          /* number of entries used in paths[] */
    const char *paths[VOR_SERVER_MAX_PATHS]; /* FILES|DIRS, borrowed (must outlive the run) */
    /* The profile store (docs in the README, "Running a store for a team"). */
    const char *store_dir;   /* --store DIR: keep uploaded captures and their index there; NULL = no
                              * uploads (the server only shows FILES|DIRS) */
    const char *token_file;  /* --token-file F: tokens for uploads and deletes (and reads with
                              * token_reads); required with --store beyond loopback */
    int token_reads;         /* --token-reads: the API and capture streams need a token too */
    unsigned long long max_capture_bytes; /* --max-capture-bytes: 0 = 4 GiB */
    unsigned long long max_store_bytes;   /* --max-store-bytes: 0 = 64 GiB, then oldest first */
    int upload_origin_count;
    const char *upload_origins[VOR_SERVER_MAX_UPLOAD_ORIGINS]; /* --upload-origin: pages of these
                              * origins (e.g. https://app.example.com) may upload; others may not */
    const char *diff_exe;    /* the vor binary GET /api/compare runs (`vor diff`); NULL = the
                              * store cannot compare (501). `vor serve` sets itself. */
    vor_server_ready_fn on_ready; /* NULL = print "vor serve: http://HOST:PORT/" to stderr */
    void *on_ready_user;     /* passed to on_ready */
} vor_server_options;

/* Results of vor_server_parse_args(). */
enum {
    VOR_SERVER_ARGS_OK = 0,    /* options filled; run the server */
    VOR_SERVER_ARGS_HELP = 1,  /* --help / -h seen: print vor_server_usage(), exit 0 */
    VOR_SERVER_ARGS_ERROR = 2  /* bad usage: err holds one line; print it, exit 2 */
};

/*
 * Parses `serve` arguments into *opts (which it zero-initialises first). argv[0] is the command
 * name and is skipped (pass the sub-command's argc/argv, e.g. argc - 1, argv + 1 of main).
 * Accepts, in any order: FILES|DIRS, --port N (or --port=N; 0 = ephemeral), --host H, --site DIR,
 * --no-follow, --store DIR, --token-file F, --token-reads, --max-capture-bytes N[K|M|G|T],
 * --max-store-bytes N[K|M|G|T], --upload-origin ORIGIN, --help/-h, and "--" (everything after
 * it is a path).
 * Returns VOR_SERVER_ARGS_OK, _HELP, or _ERROR with a one-line message (no trailing newline,
 * e.g. "--port: 'abc' is not a port number (1-65535)") in err[errlen]. opts->paths borrow argv.
 * Pure: no I/O, no allocation; thread-safe.
 */
int vor_server_parse_args(int argc, char **argv, vor_server_options *opts, char *err, size_t errlen);

/* The usage text for `vor serve` (static string, ends with a newline). */
const char *vor_server_usage(void);

/*
 * Runs the server until vor_server_request_stop(); blocks the calling thread.
 * Before listening it classifies each path (a directory is rescanned on every listing; a path
 * that does not exist is listed as "missing" with a warning on stderr) and checks the site
 * directory (missing: warning, static requests answer 404, the API still works).
 * Returns 0 after a clean stop (every connection closed, every allocation freed),
 * 2 for invalid options (message on stderr), 1 when the server cannot start (port in use,
 * out of memory, ...; message on stderr). If a stop was requested before the call it returns 0
 * at once. Not reentrant: one server per process at a time.
 */
int vor_server_run(const vor_server_options *opts);

/*
 * Asks a running (or about-to-run) vor_server_run() to stop: viewers are closed with 1001 and
 * the call returns within about a second even if a viewer is stalled. Async-signal-safe (an
 * atomic store and one write() to a non-blocking pipe), callable from any thread; idempotent.
 */
void vor_server_request_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* VOR_SERVER_H */
