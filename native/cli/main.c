/* main.c: the `vor` command: reads .vor captures (summary, export, tail), draws flame
 * graphs, compares captures (diff) and serves the web panel with live streams (serve).
 *
 * This file only dispatches: one table of subcommands, each implemented in its own
 * cmd_*.c with its own --help text.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "vor/vor.h"

typedef struct command {
    const char *name;
    cli_command_fn run;
    const char *synopsis;
    const char *purpose;
} command;

static const command commands[] = {
    {"summary", cmd_summary, "summary FILE [--json]", "what a capture holds: span, metrics, top scopes"},
    {"export", cmd_export, "export FILE --format F [-o OUT]", "convert to Chrome trace JSON, folded stacks or CSV"},
    {"tail", cmd_tail, "tail FILE", "follow a growing capture, one line per frame"},
    {"flamegraph", cmd_flamegraph, "flamegraph FILE -o out.svg", "interactive flame graph SVG"},
    {"diff", cmd_diff, "diff A B [--svg out.svg]", "compare two captures scope by scope"},
    {"symbolize", cmd_symbolize, "symbolize FILE --module ELF", "name module+offset functions from the same build"},
    {"serve", cmd_serve, "serve [FILES|DIRS]", "the web panel and live capture streams (127.0.0.1)"},
    {"upload", cmd_upload, "upload FILE... --server URL --project P", "send captures to a store (vor serve --store)"},
    {"list", cmd_list, "list --server URL [--project P] [--scope S]", "search the captures a store holds"},
};

#define N_COMMANDS (sizeof commands / sizeof *commands)

static const command *find_command(const char *name) {
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static void print_usage(FILE *out) {
    fputs("usage: vor COMMAND [ARGS]\n"
          "\n"
          "Reads the .vor captures that programs instrumented with vor write when run with\n"
          "VOR_RECORD=path (add VOR_RECORD_FLAME=1 for scopes).\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(out, "  %-34s %s\n", commands[i].synopsis, commands[i].purpose);
    fputs("\n"
          "'vor help COMMAND' or 'vor COMMAND --help' shows a command's options.\n"
          "Options may come before or after file names; '--' ends the options.\n"
          "Exit status: 0 ok, 1 output could not be written, 2 bad usage or bad input.\n",
          out);
}

static int help(const char *name) {
    if (!name) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    const command *c = find_command(name);
    if (!c) return cli_fail(CLI_EXIT_USAGE, "help", NULL, "unknown command '%s'; see 'vor --help'", name);
    /* The command prints its own help. */
    char *argv[] = {(char *)c->name, (char *)"--help", NULL};
    return c->run(2, argv);
}

/* Everything written to stdout must have arrived: a full disk or a closed pipe under
 * `vor --help > file` is exit status 1, not 0. `cmd` names the command in the message
 * (NULL: "vor: stdout: ..."). */
static int finish(const char *cmd, int status) {
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && status == CLI_EXIT_OK)
        status = cli_write_error(cmd, "stdout", 1, errno, NULL);
    return status;
}

int main(int argc, char **argv) {
    /* A closed pipe is a write error like any other (exit 1), not a silent death (141). */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) return finish(NULL, help(NULL));
    if (strcmp(first, "help") == 0) {
        if (argc > 3) return cli_fail(CLI_EXIT_USAGE, "help", NULL, "one command at a time");
        return finish("help", help(argc > 2 ? argv[2] : NULL));
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "version") == 0) {
        printf("vor %s (capture format %d.%d)\n", vor_version_string(), VOR_FORMAT_VERSION_MAJOR,
               VOR_FORMAT_VERSION_MINOR);
        return finish(NULL, CLI_EXIT_OK);
    }
    const command *c = find_command(first);
    if (!c) {
        fflush(stdout);
        return cli_fail(CLI_EXIT_USAGE, NULL, NULL, "unknown %s '%s'; see 'vor --help'",
                        first[0] == '-' ? "option" : "command", first);
    }
    return finish(c->name, c->run(argc - 1, argv + 1));
}
