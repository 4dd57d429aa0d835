/* cmd_serve.c: `vor serve [FILES|DIRS] [--port 8700] [--host 127.0.0.1]`: the web panel
 * (the static site, build/site) and each capture as a websocket stream of the file's
 * bytes, live while it grows. The server is native/server; this file parses the command
 * line through it, installs the SIGINT/SIGTERM handlers that stop it cleanly, and runs it.
 *
 * The server binds 127.0.0.1 unless --host says otherwise: captures show the structure of
 * the measured program and the server has no authentication.
 */
#include <signal.h>
#include <string.h>

#include "cli.h"
#include "server.h"

static void on_stop_signal(int sig) {
    (void)sig;
    vor_server_request_stop(); /* async-signal-safe: sets a flag */
}

int cmd_serve(int argc, char **argv) {
    vor_server_options options;
    char err[256];
    switch (vor_server_parse_args(argc, argv, &options, err, sizeof err)) {
    case VOR_SERVER_ARGS_HELP:
        fputs(vor_server_usage(), stdout);
        return CLI_EXIT_OK;
    case VOR_SERVER_ARGS_ERROR:
        return cli_usage_error("serve", "%s", err);
    default:
        break;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int status = vor_server_run(&options);
    return status == 0 ? CLI_EXIT_OK : (status == 2 ? CLI_EXIT_USAGE : CLI_EXIT_IO);
}
