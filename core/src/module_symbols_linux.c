/* module_symbols_linux.c: the symbolizer of one ELF file (see module_symbols_linux.h):
 * its build id, an index of its functions, and file/line through dwarf_lines_linux.c.
 *
 * Why it is shaped so:
 *   - libelf reads the file (mapped read-only with ELF_C_READ_MMAP: the symbol and string
 *     tables are used in place, never copied), dwelf gives the build id, libdw the DWARF:
 *     no ELF or DWARF parsing of our own.
 *   - The symbol table: .symtab (every function, static and hidden ones included), else
 *     the separate debug file's (found by build id under the debug directory), else
 *     .dynsym (exported functions only). libdwfl's dwfl_module_addrsym scans the whole
 *     table per lookup (5 ms per lookup with 165,000 symbols), so the functions are
 *     indexed here once: 16 bytes per function (address, size, name offset), sorted,
 *     aliases merged (global before weak before local), sorted by a radix sort. Measured:
 *     the 165,000 symbols of a 153 MB shared object index in 4 ms (qsort: 60 ms); lookups
 *     are a binary search.
 *   - Names: a symbol renamed by GCC without changing the function (".lto_priv.N" of a
 *     static function under LTO, ".localalias") is shown under its source name; C++
 *     names are demangled when the process has __cxa_demangle (any C++ program: libstdc++).
 *   - Memory per open file: the function index, plus libelf's descriptors; the file is
 *     mapped, not read. DWARF memory is bounded process-wide by dwarf_lines_linux.c.
 */
#include "module_symbols_linux.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf_lines_linux.h"
#include "utf8.h"

/* Present when a C++ runtime is linked into the process; NULL otherwise. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status) __attribute__((weak));

typedef struct function_entry {
    uint64_t address;
    uint32_t size; /* 0 = unknown: the entry names its exact address only */
    uint32_t name; /* offset in the string table */
} function_entry;

typedef struct elf_file {
    int fd;
    Elf *elf;
} elf_file;

struct vor_module_symbols {
    elf_file main;
    elf_file debug; /* separate debug file, when one was used */
    char build_id[VOR_BUILD_ID_HEX_BYTES];
    function_entry *functions; /* sorted by address, one per address */
    uint32_t n_functions;
    int full_symtab;     /* the index is from a .symtab, not .dynsym */
    const char *strings; /* the string table the names point into */
    size_t strings_size;
    Elf *dwarf_elf;         /* the file with DWARF, NULL when none */
    vor_dwarf_lines *lines; /* opened at the first lookup */
    int lines_tried;
};

static void set_error(char *err, size_t cap, const char *fmt, ...) {
    if (err == NULL || cap == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

void vor_build_id_hex(const uint8_t *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    if (n > (VOR_BUILD_ID_HEX_BYTES - 1) / 2) n = 0;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

static void close_file(elf_file *f) {
    if (f->elf) elf_end(f->elf);
    if (f->fd >= 0) close(f->fd);
    f->elf = NULL;
    f->fd = -1;
}

/* Opens an executable or shared object (or debug file) for reading. */
static int open_file(const char *path, elf_file *f, char *err, size_t cap) {
    f->elf = NULL;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        set_error(err, cap, "cannot open: %s", strerror(errno));
        return 0;
    }
    struct stat st;
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        set_error(err, cap, "not a regular file");
        close_file(f);
        return 0;
    }
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr ehdr;
    if (f->elf == NULL || elf_kind(f->elf) != ELF_K_ELF || gelf_getehdr(f->elf, &ehdr) == NULL) {
        set_error(err, cap, "not an ELF file");
        close_file(f);
        return 0;
    }
    if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) {
        set_error(err, cap, "an ELF %s, not an executable or shared object",
                  ehdr.e_type == ET_REL    ? "object file"
                  : ehdr.e_type == ET_CORE ? "core file"
                                           : "file of another type");
        close_file(f);
        return 0;
    }
    return 1;
}

static void read_build_id(Elf *elf, char *out) {
    const void *bits = NULL;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    if (n > 0 && bits != NULL)
        vor_build_id_hex(bits, (size_t)n, out);
    else
        out[0] = '\0';
}

/* The section of type `type` (SHT_SYMTAB, SHT_DYNSYM) with entries, or NULL. */
static Elf_Scn *find_symbols(Elf *elf, GElf_Word type) {
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == type && shdr.sh_entsize > 0 &&
            shdr.sh_size / shdr.sh_entsize > 1)
            return scn;
    }
    return NULL;
}

static int has_dwarf(Elf *elf) {
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type == SHT_NOBITS) continue;
        const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
        if (name && (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0)) return 1;
    }
    return 0;
}

/* DIR/.build-id/xx/rest.debug, when it is there and has the same build id. */
static int open_debug_file(const char *dir, const char *build_id, elf_file *f) {
    if (strlen(build_id) < 4) return 0;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", dir, build_id, build_id + 2);
    if (n < 0 || (size_t)n >= sizeof path || access(path, R_OK) != 0) return 0;
    if (!open_file(path, f, NULL, 0)) return 0;
    char id[VOR_BUILD_ID_HEX_BYTES];
    read_build_id(f->elf, id);
    if (strcmp(id, build_id) != 0) {
        close_file(f);
        return 0;
    }
    return 1;
}

/* A function symbol being indexed: key = address << 3 | rank, where rank orders the
 * names of one address (global, weak, local; sized before unsized): the smallest key of
 * an address is the name kept. */
typedef struct keyed_entry {
    uint64_t key;
    uint32_t size;
    uint32_t name;
} keyed_entry;

_Static_assert(sizeof(keyed_entry) == sizeof(function_entry), "the index is compacted in place");

static uint64_t name_rank(const GElf_Sym *sym) {
    int b = GELF_ST_BIND(sym->st_info);
    return (uint64_t)(b == STB_GLOBAL ? 0 : b == STB_WEAK ? 2 : 4) + (sym->st_size == 0);
}

/* Sorts by key with a least-significant-digit radix sort over the bits the keys use:
 * 3 passes of 11 bits for a 100 MB library, against 60 ms for qsort of 165,000 symbols.
 * `tmp` has room for n entries; returns the array holding the result. */
static keyed_entry *radix_sort(keyed_entry *a, keyed_entry *tmp, size_t n) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].key < lo) lo = a[i].key;
        if (a[i].key > hi) hi = a[i].key;
    }
    enum { BITS = 11, BUCKETS = 1 << BITS };
    size_t count[BUCKETS];
    for (unsigned shift = 0; n > 1 && shift < 64 && ((hi - lo) >> shift) != 0; shift += BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++) count[((a[i].key - lo) >> shift) & (BUCKETS - 1)]++;
        size_t at = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) tmp[count[((a[i].key - lo) >> shift) & (BUCKETS - 1)]++] = a[i];
        keyed_entry *swap = a;
        a = tmp;
        tmp = swap;
    }
    return a;
}

/* Indexes the function symbols of `scn`. Returns 0 when out of memory. */
static int index_functions(vor_module_symbols *m, Elf *elf, Elf_Scn *scn) {
    GElf_Shdr shdr;
    Elf_Data *data = elf_getdata(scn, NULL);
    Elf_Scn *strscn = gelf_getshdr(scn, &shdr) ? elf_getscn(elf, shdr.sh_link) : NULL;
    Elf_Data *strdata = strscn ? elf_getdata(strscn, NULL) : NULL;
    if (data == NULL || strdata == NULL || strdata->d_size == 0) return 1;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    keyed_entry *all = malloc((count ? count : 1) * sizeof *all), *tmp = malloc((count ? count : 1) * sizeof *tmp);
    if (all == NULL || tmp == NULL) {
        free(all);
        free(tmp);
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym sym;
        if (gelf_getsym(data, (int)i, &sym) == NULL) continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
            sym.st_value >> 61 != 0 || sym.st_name == 0 || sym.st_name >= strdata->d_size)
            continue;
        all[n++] = (keyed_entry){sym.st_value << 3 | name_rank(&sym),
                                 sym.st_size > UINT32_MAX ? UINT32_MAX : (uint32_t)sym.st_size, (uint32_t)sym.st_name};
    }
    keyed_entry *sorted = radix_sort(all, tmp, n);
    /* The sorted entries are compacted in place into the index (16 bytes either way). */
    function_entry *functions = (function_entry *)sorted;
    uint32_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t address = sorted[i].key >> 3;
        if (kept > 0 && functions[kept - 1].address == address) continue;
        keyed_entry e = sorted[i];
        functions[kept++] = (function_entry){address, e.size, e.name};
    }
    free(sorted == all ? tmp : all);
    function_entry *shrunk = realloc(functions, (kept ? kept : 1) * sizeof *functions);
    m->functions = shrunk ? shrunk : functions;
    m->n_functions = kept;
    m->strings = strdata->d_buf;
    m->strings_size = strdata->d_size;
    return 1;
}

vor_module_symbols *vor_module_symbols_open(const char *path, const vor_module_symbols_options *options, char *err,
                                            size_t err_cap) {
    static int elf_ready;
    if (!elf_ready) {
        if (elf_version(EV_CURRENT) == EV_NONE) {
            set_error(err, err_cap, "libelf is unusable");
            return NULL;
        }
        elf_ready = 1;
    }
    vor_module_symbols *m = calloc(1, sizeof *m);
    if (m == NULL) {
        set_error(err, err_cap, "out of memory");
        return NULL;
    }
    m->debug.fd = -1;
    if (!open_file(path, &m->main, err, err_cap)) {
        free(m);
        return NULL;
    }
    read_build_id(m->main.elf, m->build_id);
    const char *expected = options ? options->expected_build_id : NULL;
    if (expected != NULL && strcmp(expected, m->build_id) != 0) {
        if (m->build_id[0] == '\0')
            set_error(err, err_cap, "has no build id; expected %s", expected);
        else
            set_error(err, err_cap, "build id %s differs from the expected %s", m->build_id, expected);
        vor_module_symbols_close(m);
        return NULL;
    }

    Elf_Scn *symtab = find_symbols(m->main.elf, SHT_SYMTAB);
    Elf *symbols_elf = m->main.elf;
    m->dwarf_elf = has_dwarf(m->main.elf) ? m->main.elf : NULL;
    const char *debug_dir = options && options->debug_dir ? options->debug_dir : VOR_DEFAULT_DEBUG_DIR;
    if ((symtab == NULL || m->dwarf_elf == NULL) && debug_dir[0] != '\0' &&
        open_debug_file(debug_dir, m->build_id, &m->debug)) {
        Elf_Scn *debug_symtab = find_symbols(m->debug.elf, SHT_SYMTAB);
        if (symtab == NULL && debug_symtab != NULL) {
            symtab = debug_symtab;
            symbols_elf = m->debug.elf;
        }
        if (m->dwarf_elf == NULL && has_dwarf(m->debug.elf)) m->dwarf_elf = m->debug.elf;
    }
    m->full_symtab = symtab != NULL;
    if (symtab == NULL) symtab = find_symbols(m->main.elf, SHT_DYNSYM);
    if (symtab != NULL && !index_functions(m, symbols_elf, symtab)) {
        set_error(err, err_cap, "out of memory indexing its symbols");
        vor_module_symbols_close(m);
        return NULL;
    }
    return m;
}

void vor_module_symbols_close(vor_module_symbols *m) {
    if (m == NULL) return;
    vor_dwarf_lines_close(m->lines);
    free(m->functions);
    close_file(&m->debug);
    close_file(&m->main);
    free(m);
}

const char *vor_module_symbols_build_id(const vor_module_symbols *m) {
    return m->build_id;
}

uint32_t vor_module_symbols_function_count(const vor_module_symbols *m) {
    return m->n_functions;
}

int vor_module_symbols_has_symtab(const vor_module_symbols *m) {
    return m->full_symtab;
}

int vor_module_symbols_has_dwarf(const vor_module_symbols *m) {
    return m->dwarf_elf != NULL;
}

/* The index entry of the function containing `address`, or NULL. */
static const function_entry *find_function(const vor_module_symbols *m, uint64_t address) {
    size_t at = vor_sorted_count_at_or_below(m->functions, m->n_functions, sizeof *m->functions, address);
    if (at == 0) return NULL;
    const function_entry *f = &m->functions[at - 1];
    if (f->address == address || address - f->address < f->size) return f;
    return NULL;
}

/* Copies a symbol name as shown: GCC's renamings of the same function dropped, C++
 * demangled when possible, cut at the buffer's size. */
static void display_name(const char *name, char *out, size_t cap) {
    size_t n = strlen(name);
    const char *lto = strstr(name, ".lto_priv.");
    if (lto != NULL) n = (size_t)(lto - name);
    static const char localalias[] = ".localalias";
    size_t la = sizeof localalias - 1;
    if (n > la && memcmp(name + n - la, localalias, la) == 0) n -= la;
    char plain[VOR_SYMBOL_NAME_BYTES * 4];
    if (n >= sizeof plain) n = sizeof plain - 1;
    memcpy(plain, name, n);
    plain[n] = '\0';
    if (__cxa_demangle != NULL && plain[0] == '_' && plain[1] == 'Z') {
        int status = -1;
        char *demangled = __cxa_demangle(plain, NULL, NULL, &status);
        if (status == 0 && demangled != NULL) {
            vor_symbol_copy(out, cap, demangled);
            free(demangled);
            return;
        }
        free(demangled);
    }
    vor_symbol_copy(out, cap, plain);
}

int vor_module_symbols_lookup(vor_module_symbols *m, uint64_t address, vor_symbol *out) {
    out->function[0] = '\0';
    out->function_start = 0;
    out->file[0] = '\0';
    out->line = 0;
    const function_entry *f = find_function(m, address);
    if (f != NULL) {
        const char *name = m->strings + f->name;
        display_name(strnlen(name, m->strings_size - f->name) < m->strings_size - f->name ? name : "", out->function,
                     sizeof out->function);
        out->function_start = f->address;
    }
    if (m->lines == NULL && !m->lines_tried && m->dwarf_elf != NULL) {
        m->lines_tried = 1;
        m->lines = vor_dwarf_lines_open(m->dwarf_elf);
    }
    if (m->lines != NULL) {
        char dwarf_name[VOR_SYMBOL_NAME_BYTES] = "";
        vor_dwarf_place place = {out->file, sizeof out->file, 0, dwarf_name, f ? 0 : sizeof dwarf_name, 0};
        vor_dwarf_lines_find(m->lines, address, &place);
        out->line = place.line;
        if (f == NULL && dwarf_name[0] != '\0') {
            display_name(dwarf_name, out->function, sizeof out->function);
            out->function_start = place.function_start;
        }
    }
    return out->function[0] != '\0';
}
