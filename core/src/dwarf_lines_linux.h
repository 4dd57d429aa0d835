/* dwarf_lines_linux.h: source file and line (and, for code the symbol table does not
 * cover, the function name) of an address from an ELF file's DWARF, with libdw; memory
 * bounded by one cache shared by every open handle. Used by module_symbols_linux.c only.
 */
#ifndef VOR_DWARF_LINES_LINUX_H
#define VOR_DWARF_LINES_LINUX_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "platform.h"

/* Decoded DWARF kept by all handles of the process together (estimated from the line
 * rows and files decoded, plus decompressed debug sections). Past it the handle holding
 * the most forgets its decoded compile units, which are decoded again when needed. */
#define VOR_DWARF_CACHE_BYTES (64u << 20)

typedef struct vor_dwarf_lines vor_dwarf_lines;

/* A handle on the DWARF of `elf` (which must stay open until vor_dwarf_lines_close);
 * NULL when the file has no DWARF, when its compressed debug sections would not fit in
 * half the cache, or when libdw cannot read it. Reads only the compile units' address
 * ranges (an index, a few bytes per unit); line tables are decoded on demand. */
VOR_HIDDEN vor_dwarf_lines *vor_dwarf_lines_open(Elf *elf);
VOR_HIDDEN void vor_dwarf_lines_close(vor_dwarf_lines *d);

typedef struct vor_dwarf_place {
    char *file; /* out: source file, "" when unknown */
    size_t file_cap;
    uint32_t line;           /* out: 0 when unknown */
    char *function;          /* in/out: when function[0] is 0 on entry, the name of the DWARF */
    size_t function_cap;     /* subprogram containing the address (linkage name first) */
    uint64_t function_start; /* out with a function found here: its entry address */
} vor_dwarf_place;

/* Fills `place` for `address`; returns 1 if the address lies in a compile unit. */
VOR_HIDDEN int vor_dwarf_lines_find(vor_dwarf_lines *d, uint64_t address, vor_dwarf_place *place);

/* Bytes the cache holds now (estimate; tests and measurements). */
VOR_HIDDEN size_t vor_dwarf_cache_bytes(void);
/* Tests: another cache size (0 restores VOR_DWARF_CACHE_BYTES), applied at once. */
VOR_HIDDEN void vor_dwarf_cache_set_limit(size_t bytes);

#endif /* VOR_DWARF_LINES_LINUX_H */
