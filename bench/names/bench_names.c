/* bench_names.c: what naming the functions of -finstrument-functions costs natively.
 *
 * For each ELF file (the arguments, else a few big ones a Debian 12 machine with vor's
 * packages has): opening it and indexing its functions (paid once per module by the
 * first frame that records one of its functions), beside the floor of only reading its
 * symbol table; then naming every function with file and line (which decodes each
 * compile unit's line table once), the slowest single lookup, and the memory held.
 * Times are the thread's CPU time (this machine is shared: a preempted lookup would
 * otherwise look slow), medians of 5 runs; nothing asserted. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "dwarf_lines_linux.h"
#include "module_symbols_linux.h"

#define RUNS 5

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The floor: every entry of the symbol table read once (no sort, no index). */
static double read_symbols_ms(const char *path) {
    int fd = open(path, O_RDONLY);
    uint64_t t0 = cpu_ns();
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    Elf_Scn *best = NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && (shdr.sh_type == SHT_SYMTAB || (shdr.sh_type == SHT_DYNSYM && best == NULL)))
            best = scn;
    }
    volatile uint64_t sum = 0;
    if (best) {
        GElf_Shdr shdr;
        gelf_getshdr(best, &shdr);
        Elf_Data *data = elf_getdata(best, NULL);
        for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
            GElf_Sym sym;
            if (gelf_getsym(data, (int)i, &sym)) sum += sym.st_value;
        }
    }
    double ms = (cpu_ns() - t0) / 1e6;
    elf_end(elf);
    close(fd);
    return ms;
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) sscanf(line + 6, "%ld", &kb);
    if (f) fclose(f);
    return kb;
}

/* Every function start of the file, from a first open. */
static uint64_t *function_starts(const char *path, uint32_t *n) {
    /* The index holds one entry per function; walk it by looking up increasing addresses
     * is not possible from outside, so read the symbol table again here. */
    int fd = open(path, O_RDONLY);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    uint64_t *starts = NULL;
    *n = 0;
    Elf_Scn *best = NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && (shdr.sh_type == SHT_SYMTAB || (shdr.sh_type == SHT_DYNSYM && best == NULL)))
            best = scn;
    }
    if (best) {
        GElf_Shdr shdr;
        gelf_getshdr(best, &shdr);
        Elf_Data *data = elf_getdata(best, NULL);
        size_t count = shdr.sh_size / shdr.sh_entsize;
        starts = malloc(count * sizeof *starts);
        for (size_t i = 0; i < count; i++) {
            GElf_Sym sym;
            if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value &&
                sym.st_shndx != SHN_UNDEF)
                starts[(*n)++] = sym.st_value;
        }
    }
    elf_end(elf);
    close(fd);
    return starts;
}

static void bench_file(const char *path) {
    if (access(path, R_OK) != 0) {
        printf("%s: not here, skipped\n", path);
        return;
    }
    double open_ms[RUNS], floor_ms[RUNS];
    uint32_t functions = 0;
    char err[256];
    for (int r = 0; r < RUNS; r++) {
        floor_ms[r] = read_symbols_ms(path);
        uint64_t t0 = cpu_ns();
        vor_module_symbols *m = vor_module_symbols_open(path, NULL, err, sizeof err);
        open_ms[r] = (cpu_ns() - t0) / 1e6;
        if (m == NULL) {
            printf("%s: %s\n", path, err);
            return;
        }
        functions = vor_module_symbols_function_count(m);
        vor_module_symbols_close(m);
    }
    double floor = median(floor_ms, RUNS), index = median(open_ms, RUNS);
    printf("%s\n  functions %u; open + index %.2f ms (floor, reading the symbol table: %.2f ms; %.1f x)\n", path,
           functions, index, floor, index / (floor > 0 ? floor : 1));

    uint32_t n = 0;
    uint64_t *starts = function_starts(path, &n);
    long rss0 = rss_kb();
    vor_module_symbols *m = vor_module_symbols_open(path, NULL, err, sizeof err);
    vor_symbol sym;
    uint32_t named = 0, with_line = 0;
    double worst_ms = 0;
    uint64_t t0 = cpu_ns();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = cpu_ns();
        if (vor_module_symbols_lookup(m, starts[i], &sym)) named++;
        if (sym.line) with_line++;
        double ms = (cpu_ns() - a) / 1e6;
        if (ms > worst_ms) worst_ms = ms;
    }
    double all_ms = (cpu_ns() - t0) / 1e6;
    printf("  DWARF %s; naming all %u: %.1f ms (%.2f us each), slowest one %.2f ms; %u named, %u with a line; "
           "RSS +%ld KiB, DWARF cache %zu KiB\n",
           vor_module_symbols_has_dwarf(m) ? "yes" : "no", n, all_ms, n ? all_ms * 1e3 / n : 0, worst_ms, named,
           with_line, rss_kb() - rss0, vor_dwarf_cache_bytes() / 1024);
    vor_module_symbols_close(m);
    free(starts);
}

int main(int argc, char **argv) {
    elf_version(EV_CURRENT);
    if (argc > 1) {
        for (int i = 1; i < argc; i++) bench_file(argv[i]);
        return 0;
    }
    const char *defaults[] = {"/proc/self/exe", "/usr/bin/cmake", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) bench_file(defaults[i]);
    return 0;
}
