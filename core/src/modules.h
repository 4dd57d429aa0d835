/* modules.h: the loaded modules (executable, shared objects) that -finstrument-functions
 * functions live in, and their names, for sites.c. vor_module_count/get (the capture's
 * module declarations) are declared in vor_internal.h. Frame thread only (frame lock
 * held; fork() waits for it, so a child never sees the table half-updated).
 */
#ifndef VOR_MODULES_H
#define VOR_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"

#define VOR_MAX_MODULES 256u /* beyond: functions are named by address, with no module */

/* The module holding the code at `address` (registered the first time), and the
 * address's offset in it (address minus the module's load bias: the address in the ELF
 * file, as nm and addr2line show it). 0 when no loaded module holds it or the table is
 * full. */
VOR_HIDDEN uint32_t vor_module_of_address(const void *address, uint64_t *offset);

/* The function at `offset` in module `id`: writes its name (NUL-terminated, cut at
 * name_cap), source file (file_cap) and line; returns 1 when the module's symbols have
 * a function starting exactly at `offset`, else 0 (nothing written). The module's
 * symbols are read the first time (cached for the life of the process). */
VOR_HIDDEN int vor_module_function_name(uint32_t id, uint64_t offset, char *name, size_t name_cap, char *file,
                                        size_t file_cap, uint32_t *line);

/* The file name of module `id` without its directories ("" for an unknown id). */
VOR_HIDDEN const char *vor_module_base_name(uint32_t id);

#endif /* VOR_MODULES_H */
