/* cmd_symbolize.c: `vor symbolize CAPTURE --module PATH [-o OUT]`: names the functions a
 * capture could only record as module+offset (the program's code had no symbols it could
 * read: a stripped binary, a library without .symtab), from an ELF file with symbols.
 *
 * A name taken from the wrong binary is worse than none, so the file must be the very one
 * the capture ran: its GNU build id must equal the build id the capture recorded for a
 * module (format 1.1 records each module's path, build id and load address, and each
 * function site's module and offset). Anything else is refused before a byte is written.
 * The symbols come from the one symbolizer of vor (core/src/module_symbols_linux.c,
 * elfutils), the one the runtime names functions with; a separate debug file is found by
 * build id under --debug-dir when the file itself has no symbols.
 *
 * Two passes: the reader reads the whole capture (modules and sites are declared as frames
 * need them, and damage is located), then capture_rewrite.c copies it record by record,
 * rewriting only the declarations of the sites named here. Output as for export: stdout
 * (not a terminal: the capture is binary) or -o OUT, replaced only when complete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_format.h"
#include "cli.h"
#include "module_symbols_linux.h"

const char cmd_symbolize_help[] =
    "usage: vor symbolize CAPTURE --module PATH [--debug-dir DIR] [-o OUT] [--max-frame-scopes N]\n"
    "\n"
    "Names the functions a capture recorded as module+offset (code the program had no\n"
    "symbols for: a stripped binary, a library without a symbol table) from PATH, an ELF\n"
    "file with symbols: the same executable or shared object unstripped, or its separate\n"
    "debug file. PATH must be the very build the capture ran: its GNU build id must equal\n"
    "the one the capture recorded for the module, or nothing is written. Writes the capture\n"
    "with those sites named (function, source file and line; every other byte as it was)\n"
    "to OUT, and says on stderr how many were named. Needs a capture of format 1.1 or later\n"
    "(earlier ones record no modules).\n"
    "\n"
    "options:\n"
    "  --module PATH     the ELF file to take names from (required)\n"
    "  --debug-dir DIR   where a separate debug file is looked up by build id when PATH has\n"
    "                    no symbols (DIR/.build-id/xx/rest.debug; default /usr/lib/debug)\n"
    "  -o, --output OUT  write to OUT instead of stdout; OUT is replaced only when complete\n"
    "                    and cannot be the capture itself\n"
    "  --max-frame-scopes N\n"
    "                    scopes one frame may hold (default 1048576, up to 16777216); a frame\n"
    "                    with more is an error (about 88 bytes of memory each)\n"
    "  -q, --quiet       no progress line on a terminal\n"
    "  -h, --help        this help\n"
    "\n"
    "exit status: 0 ok, 2 bad usage or bad input (no capture, format 1.0, no module with\n"
    "PATH's build id, PATH not an ELF file), 1 output could not be written.\n";

static const char *const CMD = "symbolize";

enum { OPT_MODULE, OPT_DEBUG_DIR, OPT_OUTPUT, OPT_MAX_FRAME_SCOPES, OPT_QUIET, OPT_HELP };

static const cli_option symbolize_options[] = {
    {"module", 0, 1, OPT_MODULE},   {"debug-dir", 0, 1, OPT_DEBUG_DIR},
    {"output", 'o', 1, OPT_OUTPUT}, {"max-frame-scopes", 0, 1, OPT_MAX_FRAME_SCOPES},
    {"quiet", 'q', 0, OPT_QUIET},   {"help", 'h', 0, OPT_HELP},
};

/* What the runtime writes for code it could not name: "module+0xOFFSET", "0xADDRESS", or
 * nothing. */
static int unnamed(const char *name) {
    if (!name || !name[0]) return 1;
    const char *p = strstr(name, "0x");
    if (!p || (p != name && p[-1] != '+')) return 0;
    for (p += 2; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}

/* The sites named, by site id. */
typedef struct naming {
    id_map index; /* site id -> names[] */
    vor_symbol *names;
    uint32_t n, cap;
} naming;

static int edit_site(void *context, const rewrite_site *site, rewrite_names *out) {
    naming *nm = context;
    uint32_t *k = site->id <= UINT32_MAX ? id_map_find(&nm->index, (uint32_t)site->id) : NULL;
    if (!k) return 0;
    const vor_symbol *s = &nm->names[*k];
    *out = (rewrite_names){s->function, s->function, s->file, s->line};
    return 1;
}

static int add_name(naming *nm, uint32_t site_id, const vor_symbol *s) {
    if (nm->n == nm->cap) {
        uint32_t cap = nm->cap ? nm->cap * 2 : 64;
        vor_symbol *p = realloc(nm->names, (size_t)cap * sizeof *p);
        if (!p) return -1;
        nm->names = p;
        nm->cap = cap;
    }
    if (!id_map_put(&nm->index, site_id, nm->n)) return -1;
    nm->names[nm->n++] = *s;
    return 0;
}

/* The capture's modules, for a refusal: "/usr/bin/app (build id ab12...), ...". */
static void list_modules(const vor_reader *r, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t id = 1; id <= vor_reader_module_count(r); id++) {
        const vor_reader_module *m = vor_reader_get_module(r, id);
        if (!m) continue;
        char path[160];
        len = cli_append(buf, cap, len, "%s%s (build id %s)", len ? ", " : "",
                         cli_text_show(path, sizeof path, m->path), m->build_id[0] ? m->build_id : "none");
    }
    if (!len) cli_append(buf, cap, 0, "none");
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Pass 1's verdict: the modules of the capture that PATH is, or a refusal. Fills `matched`
 * (by module id) and returns how many; 0 after printing why not. */
static uint32_t match_modules(const vor_reader *r, const char *module_path, const char *build_id, uint8_t *matched) {
    uint32_t n = 0;
    const vor_reader_module *same_name = NULL;
    for (uint32_t id = 1; id <= vor_reader_module_count(r); id++) {
        const vor_reader_module *m = vor_reader_get_module(r, id);
        if (!m) continue;
        if (m->build_id[0] && strcmp(m->build_id, build_id) == 0) {
            matched[id] = 1;
            n++;
        } else if (strcmp(base_name(m->path), base_name(module_path)) == 0) {
            same_name = m;
        }
    }
    if (n) return n;
    if (same_name) {
        cli_fail(CLI_EXIT_USAGE, CMD, module_path,
                 "not the build the capture ran: its build id is %s, the capture's %s had %s; names from another "
                 "build would be wrong",
                 build_id, base_name(same_name->path), same_name->build_id[0] ? same_name->build_id : "none recorded");
    } else {
        char list[1024];
        list_modules(r, list, sizeof list);
        cli_fail(CLI_EXIT_USAGE, CMD, module_path, "build id %s matches no module of the capture (it recorded: %s)",
                 build_id, list);
    }
    return 0;
}

int cmd_symbolize(int argc, char **argv) {
    cli_args args;
    if (cli_parse_args(argc - 1, argv + 1, symbolize_options, sizeof symbolize_options / sizeof *symbolize_options,
                       &args) != 0)
        return cli_usage_error(CMD, "%s", args.error);
    if (args.values[OPT_HELP]) {
        fputs(cmd_symbolize_help, stdout);
        return CLI_EXIT_OK;
    }
    if (args.positional_count != 1)
        return cli_usage_error(CMD, "give one capture (got %d file names)", args.positional_count);
    const char *module_path = args.values[OPT_MODULE];
    if (!module_path || !module_path[0])
        return cli_usage_error(CMD, "give --module PATH, the ELF file to take names from");
    const char *path = args.positional[0], *out_path = args.values[OPT_OUTPUT];
    if ((!out_path || strcmp(out_path, "-") == 0) && isatty(STDOUT_FILENO))
        return cli_usage_error(CMD, "give -o OUT (or redirect stdout): the output is a capture, not text");
    uint64_t max_frame_scopes = 0;
    if (cli_parse_max_frame_scopes(CMD, args.values[OPT_MAX_FRAME_SCOPES], &max_frame_scopes) != 0)
        return CLI_EXIT_USAGE;
    const char *inputs[2] = {path, module_path}, *roles[2] = {"the capture being symbolized", "the module"};
    int status = cli_output_check(CMD, "-o", out_path, inputs, roles, 2);
    if (status != 0) return status;

    /* Pass 1: modules, sites and damage. */
    cli_capture cap;
    status = cli_capture_open(&cap, CMD, path);
    if (status != 0) return status;
    cli_capture_set_max_frame_scopes(&cap, max_frame_scopes);
    const vor_reader_info *info = vor_reader_get_info(cap.reader);
    if (info->version_minor < 1) {
        status = cli_fail(CLI_EXIT_USAGE, CMD, path,
                          "a format %u.%u capture records no modules or build ids: "
                          "nothing to match %s against (record with a vor that writes format 1.1)",
                          info->version_major, info->version_minor, base_name(module_path));
        cli_capture_close(&cap); /* info belongs to the reader */
        return status;
    }
    cli_progress progress;
    cli_progress_init(&progress, CMD, path, cap.file_size, !args.values[OPT_QUIET]);
    vor_reader_frame f;
    int got;
    while ((got = cli_capture_next(&cap, &f)) == 1)
        cli_progress_update(&progress, cap.frames, vor_reader_offset(cap.reader));
    cli_progress_done(&progress);
    if (got < 0) status = CLI_EXIT_USAGE;
    if (status == 0 && vor_reader_damage_count(cap.reader) > VOR_READER_MAX_DAMAGE_REPORTS)
        status = cli_fail(CLI_EXIT_USAGE, CMD, path, "more than %u damaged records: too damaged to copy faithfully",
                          VOR_READER_MAX_DAMAGE_REPORTS);

    /* The module: its build id must be one the capture recorded. */
    char err[512] = "";
    vor_module_symbols_options mo = {args.values[OPT_DEBUG_DIR], NULL};
    vor_module_symbols *symbols = status == 0 ? vor_module_symbols_open(module_path, &mo, err, sizeof err) : NULL;
    if (status == 0 && !symbols) status = cli_fail(CLI_EXIT_USAGE, CMD, module_path, "%s", err);
    uint8_t *matched = calloc(VOR_CAPTURE_MAX_MODULE_ID + 1u, 1);
    if (status == 0 && !matched) status = cli_fail(CLI_EXIT_USAGE, CMD, NULL, "out of memory");
    const char *build_id = symbols ? vor_module_symbols_build_id(symbols) : "";
    if (status == 0 && !build_id[0])
        status = cli_fail(CLI_EXIT_USAGE, CMD, module_path,
                          "has no GNU build id: nothing shows it is the build the capture ran (link with "
                          "-Wl,--build-id)");
    if (status == 0 && match_modules(cap.reader, module_path, build_id, matched) == 0) status = CLI_EXIT_USAGE;

    /* The names. */
    naming nm;
    memset(&nm, 0, sizeof nm);
    id_map_init(&nm.index, STACKS_MAX_SITES);
    uint64_t unnamed_sites = 0;
    for (uint32_t id = 1; status == 0 && id <= vor_reader_site_count(cap.reader); id++) {
        const vor_reader_site *s = vor_reader_get_site(cap.reader, id);
        if (!s || s->module_id > VOR_CAPTURE_MAX_MODULE_ID || !matched[s->module_id] || !unnamed(s->name)) continue;
        unnamed_sites++;
        vor_symbol sym;
        if (vor_module_symbols_lookup(symbols, s->address, &sym) && add_name(&nm, id, &sym) != 0)
            status = cli_fail(CLI_EXIT_USAGE, CMD, NULL, "out of memory");
    }

    /* Pass 2: the copy. */
    if (status == 0) {
        int fd = cli_input_open(CMD, path, CLI_INPUT_CAPTURE, NULL);
        FILE *in = fd >= 0 ? fdopen(fd, "rb") : NULL;
        if (!in) {
            if (fd >= 0) close(fd);
            status = CLI_EXIT_USAGE;
        }
        cli_output out;
        if (status == 0) status = cli_output_open(&out, CMD, out_path);
        if (in && status == 0) {
            rewrite_editor editor = {edit_site, &nm};
            uint64_t rewritten = 0;
            char rerr[256] = "";
            if (capture_rewrite(in, out.f, cap.reader, &editor, &rewritten, rerr, sizeof rerr) != 0 && rerr[0])
                status = cli_fail(CLI_EXIT_USAGE, CMD, path, "%s", rerr);
            status = cli_output_close(&out, status, status != 0);
            if (status == 0)
                cli_note(CMD, path, "named %u of %llu unnamed function sites of %s (build id %s)%s", nm.n,
                         (unsigned long long)unnamed_sites, base_name(module_path), build_id,
                         nm.n < unnamed_sites ? "; the others have no function at their address in it" : "");
        }
        if (in) fclose(in);
    }
    id_map_free(&nm.index);
    free(nm.names);
    free(matched);
    vor_module_symbols_close(symbols);
    cli_capture_close(&cap);
    return status;
}
