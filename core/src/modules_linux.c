/* modules_linux.c: the table of loaded modules that -finstrument-functions functions
 * were found in (id, path, GNU build id, load bias), and their symbols, read once per
 * module through the symbolizer (module_symbols_linux.c).
 *
 * When and where symbols are read (and why): lazily, on the frame thread, the first
 * time a frame records a function of the module (sites are named then: vor_site_register).
 * Measured (thread CPU time; docs/PERFORMANCE.md): the function index of a 153 MB shared
 * object with 93,000 functions takes 4 ms, of a usual library well under 1 ms; a compile
 * unit's line table is decoded the first time one of its functions is named: 24 ms for
 * SQLite's amalgamation (one 8.6 MB unit), under 1 ms for usual files.
 * So vor_frame_mark pays each module once and each compile unit once, in the first
 * frames that record them. The alternatives were weighed: loading at session start
 * reads every loaded library (libc, libstdc++, ...) although instrumented code is
 * almost always in the program or the user's own libraries, and still leaves
 * dlopen()ed modules and line tables to the frame thread; a background thread cannot
 * deliver a name later (a site is declared, with its name, in the record of the frame
 * that first used it), so the frame thread would have to wait for it anyway or write a
 * worse name depending on timing. Reading on demand keeps names deterministic, adds no
 * thread to the measured program, and costs memory only for modules that hold recorded
 * functions.
 *
 * Memory: at most VOR_MAX_MODULES entries (a path each); per module with symbols, the
 * function index (16 bytes per function) and the mapped file; DWARF under the shared
 * VOR_DWARF_CACHE_BYTES (dwarf_lines_linux.c). Symbols stay for the life of the process
 * (sites, and their names, do too).
 *
 * The build id recorded is the loaded image's (its PT_NOTE segment, read in memory), and
 * a module's file is read only if its build id is the same: a library rebuilt on disk
 * while the program runs is not used to name the old code (its functions are named
 * module+0xoffset, and the capture keeps module, build id and offset). The main program
 * is read through /proc/self/exe, which is the running binary even if its path now
 * holds another.
 */
#include "platform.h"

#if defined(VOR_PLATFORM_LINUX)

#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "module_symbols_linux.h"
#include "modules.h"
#include "vor_internal.h"

typedef struct module_entry {
    char *path;
    char build_id[VOR_BUILD_ID_HEX_BYTES];
    uint64_t bias;
    int is_main;
    vor_module_symbols *symbols;
    int symbols_state; /* 0 not read yet, 1 read, -1 unavailable */
} module_entry;

static module_entry modules[VOR_MAX_MODULES];
static uint32_t module_count; /* published with release after the entry is filled */

/* What dl_iterate_phdr found for one address. */
typedef struct object_search {
    uintptr_t address;
    int index; /* objects seen so far: the first is the main program */
    int found;
    int is_main;
    uint64_t bias;
    char name[PATH_MAX];
    char build_id[VOR_BUILD_ID_HEX_BYTES];
} object_search;

static int in_loaded_segment(const struct dl_phdr_info *info, uintptr_t start, size_t size) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && start >= lo && start - lo <= ph->p_memsz && size <= ph->p_memsz - (start - lo))
            return 1;
    }
    return 0;
}

/* The GNU build id of a loaded object, from its note segments in memory (mapped by the
 * dynamic loader as part of a loadable segment; anything else is not read). */
static void loaded_build_id(const struct dl_phdr_info *info, char *out) {
    out[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const uint8_t *notes = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        size_t size = ph->p_memsz, align = ph->p_align == 8 ? 8 : 4;
        if (!in_loaded_segment(info, (uintptr_t)notes, size)) continue;
        size_t pos = 0;
        while (size - pos >= sizeof(ElfW(Nhdr))) {
            ElfW(Nhdr) nh;
            memcpy(&nh, notes + pos, sizeof nh);
            size_t name_at = pos + sizeof nh;
            size_t desc_at = name_at + ((nh.n_namesz + align - 1) & ~(align - 1));
            size_t next = desc_at + ((nh.n_descsz + align - 1) & ~(align - 1));
            if (desc_at > size || nh.n_descsz > size - desc_at) break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(notes + name_at, "GNU", 4) == 0) {
                vor_build_id_hex(notes + desc_at, nh.n_descsz, out);
                return;
            }
            if (next > size) break;
            pos = next;
        }
    }
}

static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    object_search *s = data;
    int index = s->index++;
    if (!in_loaded_segment(info, s->address, 1)) return 0;
    s->found = 1;
    s->is_main = index == 0;
    s->bias = info->dlpi_addr;
    snprintf(s->name, sizeof s->name, "%s", info->dlpi_name ? info->dlpi_name : "");
    loaded_build_id(info, s->build_id);
    return 1;
}

/* The path shown for a module: absolute where it can be made so. */
static char *module_path(const object_search *s) {
    char resolved[PATH_MAX];
    if (s->is_main) {
        ssize_t n = readlink("/proc/self/exe", resolved, sizeof resolved - 1);
        if (n > 0) {
            resolved[n] = '\0';
            return strdup(resolved);
        }
        return strdup(s->name[0] ? s->name : "(main program)");
    }
    if (realpath(s->name, resolved) != NULL) return strdup(resolved);
    return strdup(s->name);
}

uint32_t vor_module_of_address(const void *address, uint64_t *offset) {
    object_search *s = calloc(1, sizeof *s); /* PATH_MAX: not on the frame thread's stack */
    if (s == NULL) return 0;
    s->address = (uintptr_t)address;
    dl_iterate_phdr(find_object, s);
    uint32_t id = 0;
    if (s->found) {
        *offset = (uint64_t)((uintptr_t)address - s->bias);
        uint32_t n = module_count;
        for (uint32_t i = 0; i < n && id == 0; i++) {
            const module_entry *m = &modules[i];
            if (m->bias == s->bias && m->is_main == s->is_main && strcmp(m->build_id, s->build_id) == 0) {
                /* Same image at the same place; a different path with no build id to tell
                 * them apart is a different module (one dlclose()d, another loaded). */
                char *path = s->build_id[0] ? NULL : module_path(s);
                if (path == NULL || strcmp(path, m->path) == 0) id = i + 1;
                free(path);
            }
        }
        if (id == 0 && n < VOR_MAX_MODULES) {
            module_entry *m = &modules[n];
            m->path = module_path(s);
            if (m->path != NULL) {
                memcpy(m->build_id, s->build_id, sizeof m->build_id);
                m->bias = s->bias;
                m->is_main = s->is_main;
                m->symbols = NULL;
                m->symbols_state = 0;
                vor_atomic_store_release(&module_count, n + 1);
                id = n + 1;
            }
        }
    }
    free(s);
    return id;
}

static vor_module_symbols *symbols_of(module_entry *m) {
    if (m->symbols_state != 0) return m->symbols;
    char err[512];
    vor_module_symbols_options options = {NULL, m->build_id[0] ? m->build_id : NULL};
    m->symbols = vor_module_symbols_open(m->is_main ? "/proc/self/exe" : m->path, &options, err, sizeof err);
    m->symbols_state = m->symbols ? 1 : -1;
    if (m->symbols == NULL)
        vor_log(VOR_LOG_SYMBOLS_UNAVAILABLE, "%s: %s", m->path, err);
    else if (!vor_module_symbols_has_symtab(m->symbols) && m->build_id[0] != '\0')
        vor_log(VOR_LOG_SYMBOLS_UNAVAILABLE,
                "%s is stripped and its debug file (%s/.build-id/%.2s/%s.debug) is not "
                "there: only its exported functions have names",
                m->path, VOR_DEFAULT_DEBUG_DIR, m->build_id, m->build_id + 2);
    else if (!vor_module_symbols_has_symtab(m->symbols))
        vor_log(VOR_LOG_SYMBOLS_UNAVAILABLE,
                "%s is stripped and has no build id to find its debug file by: only its "
                "exported functions have names",
                m->path);
    return m->symbols;
}

int vor_module_function_name(uint32_t id, uint64_t offset, char *name, size_t name_cap, char *file, size_t file_cap,
                             uint32_t *line) {
    if (id == 0 || id > vor_atomic_load_acquire(&module_count)) return 0;
    vor_module_symbols *symbols = symbols_of(&modules[id - 1]);
    vor_symbol sym;
    if (symbols == NULL || !vor_module_symbols_lookup(symbols, offset, &sym) || sym.function_start != offset) return 0;
    snprintf(name, name_cap, "%s", sym.function);
    snprintf(file, file_cap, "%s", sym.file);
    *line = sym.line;
    return 1;
}

const char *vor_module_base_name(uint32_t id) {
    if (id == 0 || id > vor_atomic_load_acquire(&module_count)) return "";
    const char *path = modules[id - 1].path;
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

uint32_t vor_module_count(void) {
    return vor_atomic_load_acquire(&module_count);
}

int vor_module_get(uint32_t id, vor_module_info *out) {
    if (id == 0 || id > vor_atomic_load_acquire(&module_count)) return 0;
    const module_entry *m = &modules[id - 1];
    out->id = id;
    out->path = m->path;
    out->build_id = m->build_id;
    out->load_address = m->bias;
    return 1;
}

#endif /* VOR_PLATFORM_LINUX */
