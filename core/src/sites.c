/* sites.c: the table of scope sites, and the sites of functions found by
 * -finstrument-functions.
 *
 * Macro sites are static structs in the user's code; the frame thread gives each an id
 * the first time a frame records it (ids 1, 2, ...), so the hot path never touches the
 * table. The table only grows (sites are program text) and is capped at VOR_MAX_SITES.
 *
 * Function sites are created by the instrumentation hooks, on any thread, in a fixed
 * open-addressing table keyed by the function address (lock-free insertion by CAS).
 * They are named later, off the hot path, by the frame thread when a frame first records
 * them. Natively: the module holding the address (modules_linux.c) and its symbol table
 * and DWARF give the name, source file and line of every function, static and hidden
 * ones included, without -rdynamic; each function site also keeps its module id and
 * offset, which captures record (so a function can be named after the run from the right
 * binary). Code no symbol names falls back to dladdr, then to module+0xOFFSET (an offset
 * addr2line takes). In wasm the module's name section names them (function_names.js).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "vor_internal.h"

#if defined(VOR_PLATFORM_LINUX)
#include <dlfcn.h>

#include "module_symbols_linux.h"
#include "modules.h"
#include "string_pool.h"
#endif

#if defined(VOR_PLATFORM_WASM)
/* wasm/js/function_names.js: the name of the function at table index `pointer`. */
extern void vor_wasm_function_name(uint32_t pointer, char *buf, uint32_t cap);
#endif

static void function_site_name(vor_site *site);

static vor_site **site_table; /* site_table[id - 1]; grows by doubling up to VOR_MAX_SITES */
static uint32_t site_capacity;
static uint32_t site_count; /* atomic for readers on other threads */
static vor_mutex site_lock = VOR_MUTEX_INIT;

uint32_t vor_site_register(vor_site *site) {
    if (site->id != 0) return site->id;
    if (site->name == NULL) function_site_name(site);
    if (strnlen(site->name, VOR_MAX_NAME_BYTES + 1) > VOR_MAX_NAME_BYTES)
        vor_log(VOR_LOG_NAME_TOO_LONG, "scope \"%.*s...\" (outputs keep %u bytes)", (int)vor_utf8_cut(site->name, 40),
                site->name, (unsigned)VOR_MAX_NAME_BYTES);
    vor_mutex_lock(&site_lock);
    uint32_t id = 0;
    if (site_count >= VOR_MAX_SITES) {
        vor_mutex_unlock(&site_lock);
        vor_log(VOR_LOG_TOO_MANY_SITES, "limit %u", (unsigned)VOR_MAX_SITES);
        return 0;
    }
    if (site_count == site_capacity) {
        uint32_t capacity = site_capacity ? site_capacity * 2 : 256;
        vor_site **grown = realloc(site_table, capacity * sizeof *grown);
        if (grown == NULL) {
            vor_mutex_unlock(&site_lock);
            vor_log(VOR_LOG_OUT_OF_MEMORY, "site table");
            return 0;
        }
        site_table = grown;
        site_capacity = capacity;
    }
    site_table[site_count] = site;
    id = site_count + 1;
    site->id = id;
    vor_atomic_store_release(&site_count, site_count + 1);
    vor_mutex_unlock(&site_lock);
    return id;
}

/* fork(): the table's lock is taken before and released after (session.c). */
void vor_sites_fork(vor_fork_phase phase) {
    if (phase == VOR_FORK_PREPARE)
        pthread_mutex_lock(&site_lock);
    else
        pthread_mutex_unlock(&site_lock);
}

uint32_t vor_site_count(void) {
    return vor_atomic_load_acquire(&site_count);
}

const vor_site *vor_site_get(uint32_t id) {
    vor_mutex_lock(&site_lock);
    const vor_site *s = (id >= 1 && id <= site_count) ? site_table[id - 1] : NULL;
    vor_mutex_unlock(&site_lock);
    return s;
}

/* ---- Function sites (-finstrument-functions) ---------------------------------------- */

#define FUNCTION_TABLE_SIZE 16384u /* power of two; about 16k distinct functions */
#define FUNCTION_NAME_BYTES 160u

typedef struct function_slot {
    void *fn; /* atomic: NULL = free */
    vor_site site;
    uint32_t module_id; /* set with the name (frame thread): 0 = no module */
    uint64_t offset;    /* with module_id: fn minus the module's load bias */
    char name[FUNCTION_NAME_BYTES];
} function_slot;

static function_slot *function_table; /* atomic pointer, allocated on first use */
static vor_site unknown_function_site = {"(more functions than vor can name)", NULL, NULL, 0, 0};

/* The slot a function site lives in; NULL for any other site. */
static function_slot *function_slot_of(const vor_site *site) {
    function_slot *table = vor_atomic_load_acquire(&function_table);
    if (table == NULL || (const char *)site < (const char *)table ||
        (const char *)site >= (const char *)(table + FUNCTION_TABLE_SIZE))
        return NULL;
    return (function_slot *)((const char *)site - offsetof(function_slot, site));
}

static function_slot *get_function_table(void) {
    function_slot *table = vor_atomic_load_acquire(&function_table);
    if (table) return table;
    function_slot *fresh = calloc(FUNCTION_TABLE_SIZE, sizeof *fresh);
    if (fresh == NULL) return NULL;
    function_slot *expected = NULL;
    if (!vor_atomic_cas(&function_table, &expected, fresh)) {
        free(fresh);
        return expected;
    }
    return fresh;
}

vor_site *vor_function_site(void *fn) {
    function_slot *table = get_function_table();
    if (table == NULL) return &unknown_function_site;
    uintptr_t h = (uintptr_t)fn;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    for (uint32_t probe = 0; probe < 64; probe++) {
        function_slot *slot = &table[(h + probe) & (FUNCTION_TABLE_SIZE - 1)];
        void *key = vor_atomic_load_acquire(&slot->fn);
        if (key == fn) return &slot->site;
        if (key == NULL) {
            void *expected = NULL;
            if (vor_atomic_cas(&slot->fn, &expected, fn)) return &slot->site;
            if (expected == fn) return &slot->site;
        }
    }
    return &unknown_function_site;
}

#if defined(VOR_PLATFORM_LINUX)
/* Names a native function: module symbols first (name, file, line), then the dynamic
 * symbol table, then module+0xOFFSET. */
static void name_native_function(function_slot *slot) {
    void *fn = slot->fn;
    uint64_t offset = 0;
    uint32_t module = vor_module_of_address(fn, &offset);
    char file[VOR_SYMBOL_FILE_BYTES];
    uint32_t line = 0;
    Dl_info info;
    if (module != 0 &&
        vor_module_function_name(module, offset, slot->name, sizeof slot->name, file, sizeof file, &line)) {
        slot->site.file = file[0] ? vor_string_intern(file) : NULL;
        slot->site.line = line;
    } else if (dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn) {
        snprintf(slot->name, sizeof slot->name, "%s", info.dli_sname);
    } else if (module != 0) {
        snprintf(slot->name, sizeof slot->name, "%s+0x%llx", vor_module_base_name(module), (unsigned long long)offset);
    } else {
        snprintf(slot->name, sizeof slot->name, "%p", fn);
    }
    slot->module_id = module;
    slot->offset = offset;
}
#endif

/* Fills in the name of a function site (frame thread, first time a frame records it),
 * or names a user site declared with a NULL name. */
static void function_site_name(vor_site *site) {
    if (site->name != NULL) return;
    function_slot *slot = function_slot_of(site);
    if (slot == NULL) {
        /* A user site declared with a NULL name. */
        vor_log(VOR_LOG_NAME_NULL, "a scope site at %s:%u", site->file ? site->file : "?", (unsigned)site->line);
        site->name = "(unnamed)";
        return;
    }
#if defined(VOR_PLATFORM_LINUX)
    name_native_function(slot);
#else
    /* wasm (platform.h admits no other): the pointer is a table index;
     * wasm/js/function_names.js names it from the module's name section, else
     * "wasm-function[INDEX]" by its function index. */
    vor_wasm_function_name((uint32_t)(uintptr_t)slot->fn, slot->name, (uint32_t)sizeof slot->name);
#endif
    site->function = slot->name;
    site->name = slot->name;
}

int vor_function_site_is_unknown(const vor_site *site) {
    return site == &unknown_function_site;
}

void *vor_function_site_address(const vor_site *site) {
    function_slot *slot = function_slot_of(site);
    return slot ? vor_atomic_load_relaxed(&slot->fn) : NULL;
}

int vor_site_module_address(const vor_site *site, uint32_t *module_id, uint64_t *address) {
    function_slot *slot = function_slot_of(site);
    if (slot == NULL || slot->module_id == 0) return 0;
    *module_id = slot->module_id;
    *address = slot->offset;
    return 1;
}
