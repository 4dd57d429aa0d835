/* module_symbols_linux.h: the symbolizer: names code in one ELF file (an executable, a
 * shared object or a separate debug file) from its symbol table and DWARF, with elfutils.
 *
 * One implementation for two users: the runtime names the functions of
 * -finstrument-functions with it (modules_linux.c, on the frame thread), and the `vor`
 * command names what a capture recorded as module + offset (`vor symbolize`). It is part
 * of libvor natively (hidden: not exported from libvor.so); native/cli links libvor.a and
 * includes this header.
 *
 * Addresses are in the file's own virtual address space: what `nm` prints and what
 * `addr2line -e FILE ADDRESS` takes. For loaded code that is the code address minus the
 * module's load bias (the address its vaddr 0 is mapped at; 0 for a non-PIE executable),
 * which is what captures record as a function's module offset.
 *
 * A handle is used by one thread at a time, and all the handles of a process share one
 * bounded DWARF cache (dwarf_lines_linux.c), so a process uses them from one thread at a
 * time (the runtime: the frame thread, under the frame lock).
 */
#ifndef VOR_MODULE_SYMBOLS_LINUX_H
#define VOR_MODULE_SYMBOLS_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "platform.h"
#include "utf8.h"

/* A GNU build id in lowercase hex: up to 64 bytes (SHA-1 ids have 20), and the NUL. */
#define VOR_BUILD_ID_HEX_BYTES 129u
#define VOR_SYMBOL_NAME_BYTES 256u  /* longer (C++) names are cut */
#define VOR_SYMBOL_FILE_BYTES 1025u /* VOR_MAX_FILE_BYTES and the NUL */
/* Where separate debug files are looked up by build id when no directory is given
 * (Debian's -dbgsym packages install there: DIR/.build-id/xx/rest.debug). */
#define VOR_DEFAULT_DEBUG_DIR "/usr/lib/debug"

typedef struct vor_module_symbols vor_module_symbols;

typedef struct vor_module_symbols_options {
    /* Where to look for a separate debug file by build id when the file has no symbol
     * table or no DWARF: NULL = VOR_DEFAULT_DEBUG_DIR, "" = nowhere. */
    const char *debug_dir;
    /* NULL: any file. Otherwise the open fails, with a message giving both ids, unless
     * the file's build id is this one (lowercase hex). */
    const char *expected_build_id;
} vor_module_symbols_options;

/* What is known about one address. Every field may be empty: "" and 0. */
typedef struct vor_symbol {
    char function[VOR_SYMBOL_NAME_BYTES]; /* the function containing the address (C++ demangled when
                                             the program has __cxa_demangle) */
    uint64_t function_start;              /* its first address; == the address for a function entry */
    char file[VOR_SYMBOL_FILE_BYTES];     /* source file of the address (DWARF line table) */
    uint32_t line;
} vor_symbol;

/* Opens `path` (options may be NULL). On failure returns NULL and writes the problem,
 * without the path, to err: "not an ELF file", "build id 1a2b... differs from the
 * expected 3c4d...", ... Builds the function index (a few ms per 10,000 functions);
 * DWARF is read when a lookup first needs it. */
VOR_HIDDEN vor_module_symbols *vor_module_symbols_open(const char *path, const vor_module_symbols_options *options,
                                                       char *err, size_t err_cap);
VOR_HIDDEN void vor_module_symbols_close(vor_module_symbols *m);

/* The file's GNU build id in lowercase hex; "" when it has none. */
VOR_HIDDEN const char *vor_module_symbols_build_id(const vor_module_symbols *m);
/* Functions in the index (symbol table entries of type function, aliases merged). */
VOR_HIDDEN uint32_t vor_module_symbols_function_count(const vor_module_symbols *m);
/* 1 when the index comes from a full symbol table (.symtab of the file or of its debug
 * file); 0 when only the dynamic one was there (a stripped file: exported functions only). */
VOR_HIDDEN int vor_module_symbols_has_symtab(const vor_module_symbols *m);
/* 1 when the file (or its separate debug file) has DWARF to give files and lines. */
VOR_HIDDEN int vor_module_symbols_has_dwarf(const vor_module_symbols *m);

/* Names `address`: returns 1 when a function contains it (out->function set), 0 when
 * none does (out->function ""; file and line may still be known). */
VOR_HIDDEN int vor_module_symbols_lookup(vor_module_symbols *m, uint64_t address, vor_symbol *out);

/* The two helpers below are inline so that dwarf_lines_linux.c, which this file's lookups
 * call, does not call back into module_symbols_linux.c (no dependency cycle). */

/* Copies NUL-terminated `s` (NULL = "") into out, cut to fit cap at a UTF-8 character
 * boundary (utf8.h's rule). */
static inline void vor_symbol_copy(char *out, size_t cap, const char *s) {
    if (cap == 0) return;
    size_t n = s && *s ? vor_utf8_cut(s, cap - 1) : 0;
    if (n > 0) memcpy(out, s, n);
    out[n] = '\0';
}

/* For `n` entries of `stride` bytes sorted by the uint64_t each starts with: how many
 * have a key <= `key` (so the last of them is entry result - 1; 0 = none). */
static inline size_t vor_sorted_count_at_or_below(const void *entries, size_t n, size_t stride, uint64_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t k;
        memcpy(&k, (const char *)entries + mid * stride, sizeof k);
        if (k <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Writes `n` bytes of build id as lowercase hex into out (VOR_BUILD_ID_HEX_BYTES);
 * ids longer than 64 bytes give "". */
VOR_HIDDEN void vor_build_id_hex(const uint8_t *bytes, size_t n, char *out);

#endif /* VOR_MODULE_SYMBOLS_LINUX_H */
