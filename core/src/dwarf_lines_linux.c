/* dwarf_lines_linux.c: file and line of an address from DWARF (libdw), with the decoded
 * DWARF of the whole process kept under VOR_DWARF_CACHE_BYTES.
 *
 * Why it is shaped so:
 *   - Finding the compile unit of an address: libdw 0.188 (Debian 12) finds it only
 *     through .debug_aranges, which clang does not emit; so each handle builds its own
 *     index of the units' address ranges (DW_AT_ranges / low_pc-high_pc of every unit
 *     DIE) once, at open: 24 bytes per range, no line table decoded.
 *   - A unit's line table is decoded by libdw the first time one of its addresses is
 *     asked for, and libdw keeps it until dwarf_end: about 100 bytes per row (measured:
 *     SQLite's 8.6 MB amalgamation is one unit of 210,000 rows: 21 MB, 24 ms of CPU to
 *     decode). So the bytes decoded are estimated per unit (rows, files) and summed over
 *     every handle; past VOR_DWARF_CACHE_BYTES the handle holding the most is reset
 *     (dwarf_end, then dwarf_begin_elf again on the next lookup): memory stays under the
 *     cache size plus the largest single unit, and a reset unit is decoded again only if
 *     asked for again. Compressed debug sections are decompressed by libdw for the life
 *     of the file; their size counts against the cache too, and a file whose
 *     decompressed DWARF would take more than half of it is not read (no lines).
 *   - Function names come from the symbol table (module_symbols_linux.c); DWARF names
 *     only code the symbol table does not cover, through dwarf_getscopes, which walks the
 *     unit's DIEs: rare, so not indexed.
 * One thread at a time uses the handles of a process (see module_symbols_linux.h): the
 * handle list and the cache total are not locked.
 */
#include "dwarf_lines_linux.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "module_symbols_linux.h"

/* Estimated bytes libdw keeps per decoded line row, per file entry, per unit. */
#define ROW_BYTES 100u
#define FILE_BYTES 256u
#define UNIT_BYTES 1024u

typedef struct unit_range {
    uint64_t low, high; /* [low, high) */
    uint32_t unit;      /* index in units[] */
} unit_range;

typedef struct unit_entry {
    Dwarf_Off die_offset; /* the unit DIE, for dwarf_offdie */
    size_t decoded_bytes; /* estimate of what libdw holds for it; 0 = not decoded */
} unit_entry;

struct vor_dwarf_lines {
    Elf *elf;
    Dwarf *dwarf;       /* NULL after a reset, until the next lookup */
    unit_range *ranges; /* sorted by low */
    uint32_t n_ranges;
    unit_entry *units;
    uint32_t n_units;
    size_t fixed_bytes;    /* decompressed sections and the index: held until close */
    size_t decoded_bytes;  /* sum of units[].decoded_bytes */
    vor_dwarf_lines *next; /* every open handle, for the shared cache */
};

static vor_dwarf_lines *open_handles;
static size_t cache_total;
static size_t cache_limit = VOR_DWARF_CACHE_BYTES;

size_t vor_dwarf_cache_bytes(void) {
    return cache_total;
}

static void cache_trim(vor_dwarf_lines *keep);

void vor_dwarf_cache_set_limit(size_t bytes) {
    cache_limit = bytes ? bytes : VOR_DWARF_CACHE_BYTES;
    cache_trim(NULL);
}

/* Bytes the debug sections take once decompressed, for those stored compressed (.zdebug
 * or SHF_COMPRESSED); 0 when none is. */
static size_t compressed_debug_bytes(Elf *elf) {
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return 0;
    size_t total = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == NULL) continue;
        const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
        if (name == NULL) continue;
        if (shdr.sh_flags & SHF_COMPRESSED) {
            GElf_Chdr chdr;
            if (gelf_getchdr(scn, &chdr) != NULL) total += chdr.ch_size;
        } else if (strncmp(name, ".zdebug", 7) == 0) {
            total += shdr.sh_size * 4; /* the GNU format's size is in the data; estimate */
        }
    }
    return total;
}

static int compare_ranges(const void *a, const void *b) {
    const unit_range *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* The index of units and their address ranges. Returns 0 when out of memory. */
static int build_unit_index(vor_dwarf_lines *d) {
    uint32_t cap_ranges = 0, cap_units = 0;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die unit_die;
    while (dwarf_get_units(d->dwarf, cu, &cu, &version, &unit_type, &unit_die, NULL) == 0) {
        if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton && unit_type != DW_UT_partial) continue;
        if (d->n_units == cap_units) {
            cap_units = cap_units ? cap_units * 2 : 64;
            unit_entry *grown = realloc(d->units, cap_units * sizeof *grown);
            if (grown == NULL) return 0;
            d->units = grown;
        }
        uint32_t unit = d->n_units;
        Dwarf_Addr base, start, end;
        int ranges_here = 0;
        for (ptrdiff_t off = 0; (off = dwarf_ranges(&unit_die, off, &base, &start, &end)) > 0;) {
            if (end <= start) continue;
            if (d->n_ranges == cap_ranges) {
                cap_ranges = cap_ranges ? cap_ranges * 2 : 64;
                unit_range *grown = realloc(d->ranges, cap_ranges * sizeof *grown);
                if (grown == NULL) return 0;
                d->ranges = grown;
            }
            d->ranges[d->n_ranges++] = (unit_range){start, end, unit};
            ranges_here++;
        }
        if (ranges_here == 0) continue; /* a unit without code */
        d->units[unit] = (unit_entry){dwarf_dieoffset(&unit_die), 0};
        d->n_units++;
    }
    if (d->n_ranges > 1) qsort(d->ranges, d->n_ranges, sizeof *d->ranges, compare_ranges);
    return 1;
}

static void cache_add(vor_dwarf_lines *d, size_t bytes) {
    d->decoded_bytes += bytes;
    cache_total += bytes;
}

/* Forgets every unit libdw decoded for `d` (the index stays). */
static void reset_decoded(vor_dwarf_lines *d) {
    if (d->dwarf) dwarf_end(d->dwarf);
    d->dwarf = NULL;
    for (uint32_t i = 0; i < d->n_units; i++) d->units[i].decoded_bytes = 0;
    cache_total -= d->decoded_bytes;
    d->decoded_bytes = 0;
}

/* Brings the cache back under its size by resetting the handles holding the most,
 * except `keep` (in use by the caller). */
static void cache_trim(vor_dwarf_lines *keep) {
    while (cache_total > cache_limit) {
        vor_dwarf_lines *largest = NULL;
        for (vor_dwarf_lines *h = open_handles; h != NULL; h = h->next)
            if (h != keep && h->decoded_bytes > 0 && (largest == NULL || h->decoded_bytes > largest->decoded_bytes))
                largest = h;
        if (largest == NULL) return;
        reset_decoded(largest);
    }
}

vor_dwarf_lines *vor_dwarf_lines_open(Elf *elf) {
    size_t compressed = compressed_debug_bytes(elf);
    if (compressed > cache_limit / 2) return NULL;
    vor_dwarf_lines *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->elf = elf;
    d->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (d->dwarf == NULL || !build_unit_index(d) || d->n_ranges == 0) {
        if (d->dwarf) dwarf_end(d->dwarf);
        free(d->ranges);
        free(d->units);
        free(d);
        return NULL;
    }
    d->fixed_bytes = compressed + d->n_ranges * sizeof *d->ranges + d->n_units * sizeof *d->units;
    cache_total += d->fixed_bytes;
    d->next = open_handles;
    open_handles = d;
    cache_trim(d);
    return d;
}

void vor_dwarf_lines_close(vor_dwarf_lines *d) {
    if (d == NULL) return;
    reset_decoded(d);
    cache_total -= d->fixed_bytes;
    for (vor_dwarf_lines **p = &open_handles; *p != NULL; p = &(*p)->next) {
        if (*p == d) {
            *p = d->next;
            break;
        }
    }
    free(d->ranges);
    free(d->units);
    free(d);
}

/* The range holding `address` (ranges of different units do not overlap in well-formed
 * DWARF; the last one starting at or before the address is taken). */
static const unit_range *find_range(const vor_dwarf_lines *d, uint64_t address) {
    size_t at = vor_sorted_count_at_or_below(d->ranges, d->n_ranges, sizeof *d->ranges, address);
    if (at == 0) return NULL;
    const unit_range *r = &d->ranges[at - 1];
    return address < r->high ? r : NULL;
}

/* The name of the innermost subprogram containing `address`, and its entry address. */
static void subprogram_name(Dwarf_Die *unit_die, uint64_t address, vor_dwarf_place *place) {
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(unit_die, address, &scopes);
    for (int i = 0; i < n; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram) continue;
        Dwarf_Attribute attr;
        const char *name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
        if (name == NULL) name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr));
        Dwarf_Addr entry;
        if (name != NULL) {
            vor_symbol_copy(place->function, place->function_cap, name);
            place->function_start = dwarf_entrypc(&scopes[i], &entry) == 0 ? entry : address;
        }
        break;
    }
    free(scopes);
}

int vor_dwarf_lines_find(vor_dwarf_lines *d, uint64_t address, vor_dwarf_place *place) {
    vor_symbol_copy(place->file, place->file_cap, "");
    place->line = 0;
    const unit_range *r = find_range(d, address);
    if (r == NULL) return 0;
    if (d->dwarf == NULL && (d->dwarf = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL)) == NULL) return 0;
    unit_entry *unit = &d->units[r->unit];
    Dwarf_Die unit_die;
    if (dwarf_offdie(d->dwarf, unit->die_offset, &unit_die) == NULL) return 0;

    Dwarf_Line *row = dwarf_getsrc_die(&unit_die, address);
    if (row != NULL) {
        int line = 0;
        vor_symbol_copy(place->file, place->file_cap, dwarf_linesrc(row, NULL, NULL));
        if (dwarf_lineno(row, &line) == 0 && line > 0) place->line = (uint32_t)line;
    }
    if (place->function_cap > 0 && place->function[0] == '\0') subprogram_name(&unit_die, address, place);

    if (unit->decoded_bytes == 0) {
        Dwarf_Lines *lines;
        Dwarf_Files *files;
        size_t n_lines = 0, n_files = 0;
        if (dwarf_getsrclines(&unit_die, &lines, &n_lines) != 0) n_lines = 0; /* decoded above: cached */
        if (dwarf_getsrcfiles(&unit_die, &files, &n_files) != 0) n_files = 0;
        unit->decoded_bytes = UNIT_BYTES + n_lines * ROW_BYTES + n_files * FILE_BYTES;
        cache_add(d, unit->decoded_bytes);
        cache_trim(d);
        /* One unit larger than the whole cache: answered, then forgotten. */
        if (cache_total > cache_limit) reset_decoded(d);
    }
    return 1;
}
