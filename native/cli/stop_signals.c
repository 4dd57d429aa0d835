/* stop_signals.c: the commands that run until interrupted (tail, serve) stop cleanly on
 * Ctrl-C and SIGTERM through a handler of their own; this installs it for both. */
#include <signal.h>
#include <string.h>

#include "cli.h"

void cli_on_stop_signals(void (*handler)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
