/* cmd_serve.c: `vor serve [FILES|DIRS] [--port 8700] [--host 127.0.0.1]`: the web panel
 * (the static site, build/site) and each capture as a websocket stream of the file's
 * bytes, live while it grows. The server is native/server; this file parses the command
 * line through it, installs the SIGINT/SIGTERM handlers that stop it cleanly, and runs it.
 *
 * The server binds 127.0.0.1 unless --host says otherwise: captures show the structure of
 * the measured program and the server has no authentication. The panel it serves is the
 * one beside this executable (installed or in the build tree) unless --site says another.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "server.h"

/* The panel that comes with this vor: installed, <prefix>/bin/vor serves
 * <prefix>/share/vor/site; in the build tree, build/native/bin/vor serves build/site.
 * Found from the executable's own path; NULL when neither holds a panel. */
static const char *site_beside_executable(char *out, size_t cap) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) return NULL;
    *slash = '\0'; /* exe is now the bin directory */
    static const char *const candidates[] = {"/../share/vor/site", "/../../site"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char index[PATH_MAX + 64];
        snprintf(out, cap, "%s%s", exe, candidates[i]);
        snprintf(index, sizeof index, "%s/index.html", out);
        if (access(index, R_OK) == 0) return out;
    }
    return NULL;
}

static void on_stop_signal(int sig) {
    (void)sig;
    vor_server_request_stop(); /* async-signal-safe: sets a flag */
}

int cmd_serve(int argc, char **argv) {
    vor_server_options options;
    char err[256];
    switch (vor_server_parse_args(argc, argv, &options, err, sizeof err)) {
    case VOR_SERVER_ARGS_HELP: fputs(vor_server_usage(), stdout); return CLI_EXIT_OK;
    case VOR_SERVER_ARGS_ERROR: /* the server's message already points to --help */
        return cli_fail(CLI_EXIT_USAGE, "serve", NULL, "%s", err);
    default: break;
    }
    char site[PATH_MAX + 32];
    options.default_site_dir = site_beside_executable(site, sizeof site);
    options.diff_exe = "/proc/self/exe"; /* the store's GET /api/compare runs this vor's `vor diff` */
    cli_on_stop_signals(on_stop_signal); /* SIGPIPE is ignored by main() already */
    int status = vor_server_run(&options);
    return status == 0 ? CLI_EXIT_OK : (status == 2 ? CLI_EXIT_USAGE : CLI_EXIT_IO);
}
