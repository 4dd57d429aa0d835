/*
 * server_host.c - `vor serve` in a test harness: the node tests start it as a child process.
 *
 * Does what the `vor` command does with the server (parse the arguments, install SIGINT and
 * SIGTERM handlers that call vor_server_request_stop(), run), plus what a test needs: it prints
 * "READY <port>" on stdout once listening (use --port 0 for an ephemeral port), and
 * VOR_TEST_MAX_VIEWERS / VOR_TEST_MAX_VIEWERS_PER_ADDRESS / VOR_TEST_POLL_MS / VOR_TEST_STALL_MS
 * override the viewer cap, the per-address viewer cap, the growth poll period and the
 * stalled-viewer timeout; VOR_TEST_DEFAULT_SITE sets the caller's
 * default site directory (what `vor` computes from its own location).
 * Exit status: vor_server_run()'s (0 after a clean stop), 2 for bad arguments.
 */
#include "server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_signal(int sig)
{
    (void)sig;
    vor_server_request_stop();
}

static void on_ready(void *user, const char *host, int port)
{
    (void)user;
    printf("READY %d %s\n", port, host);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    vor_server_options opts;
    char err[256];
    struct sigaction sa;

    switch (vor_server_parse_args(argc, argv, &opts, err, sizeof err)) {
    case VOR_SERVER_ARGS_HELP:
        fputs(vor_server_usage(), stdout);
        return 0;
    case VOR_SERVER_ARGS_ERROR:
        fprintf(stderr, "server_host: %s\n", err);
        return 2;
    default:
        break;
    }
    const char *mv = getenv("VOR_TEST_MAX_VIEWERS");
    if (mv)
        opts.max_viewers = atoi(mv);
    const char *mva = getenv("VOR_TEST_MAX_VIEWERS_PER_ADDRESS");
    if (mva)
        opts.max_viewers_per_address = atoi(mva);
    const char *pm = getenv("VOR_TEST_POLL_MS");
    if (pm)
        opts.poll_interval_ms = atoi(pm);
    const char *sm = getenv("VOR_TEST_STALL_MS");
    if (sm)
        opts.stall_timeout_ms = atoi(sm);
    opts.default_site_dir = getenv("VOR_TEST_DEFAULT_SITE");
    opts.diff_exe = getenv("VOR_BIN"); /* GET /api/compare runs `vor diff` (vor serve: itself) */
    opts.on_ready = on_ready;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return vor_server_run(&opts);
}
