/* sites.c: the table of scope sites, and the sites of functions found by
 * -finstrument-functions.
 *
 * Macro sites are static structs in the user's code; the frame thread gives each an id
 * the first time a frame records it (ids 1, 2, ...), so the hot path never touches the
 * table. The table only grows (sites are program text) and is capped at VOR_MAX_SITES.
 *
 * Function sites are created by the instrumentation hooks, on any thread, in a fixed
 * open-addressing table keyed by the function address (lock-free insertion by CAS).
 * Their names are looked up later by the frame thread with dladdr, off the hot path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(VOR_PLATFORM_LINUX) || defined(__linux__)
#include <dlfcn.h>
#endif

#include "utf8.h"
#include "vor_internal.h"

#if defined(VOR_PLATFORM_WASM)
/* wasm/js/function_names.js: the name of the function at table index `pointer`. */
extern void vor_wasm_function_name(uint32_t pointer, char *buf, uint32_t cap);
#endif

static void function_site_name(vor_site *site);

static vor_site **site_table;   /* site_table[id - 1]; grows by doubling up to VOR_MAX_SITES */
static uint32_t site_capacity;
static uint32_t site_count;     /* atomic for readers on other threads */
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
    char name[FUNCTION_NAME_BYTES];
} function_slot;

static function_slot *function_table; /* atomic pointer, allocated on first use */
static vor_site unknown_function_site = {"(more functions than vor can name)", NULL, NULL, 0, 0};

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

/* Fills in the name of a function site (frame thread, first time a frame records it; uses
 * dladdr), or names a user site declared with a NULL name. */
static void function_site_name(vor_site *site) {
    if (site->name != NULL) return;
    function_slot *table = vor_atomic_load_acquire(&function_table);
    if (table == NULL || (char *)site < (char *)table || (char *)site >= (char *)(table + FUNCTION_TABLE_SIZE)) {
        /* A user site declared with a NULL name. */
        vor_log(VOR_LOG_NAME_NULL, "a scope site at %s:%u", site->file ? site->file : "?", (unsigned)site->line);
        site->name = "(unnamed)";
        return;
    }
    function_slot *slot = (function_slot *)((char *)site - offsetof(function_slot, site));
    void *fn = slot->fn;
#if defined(VOR_PLATFORM_LINUX)
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn) {
        snprintf(slot->name, sizeof slot->name, "%s", info.dli_sname);
    } else if (dladdr(fn, &info) && info.dli_fname) {
        /* Static functions and executables linked without -rdynamic have no dynamic
         * symbol: name them by module and offset, which addr2line can resolve. */
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(slot->name, sizeof slot->name, "%s+0x%lx", base ? base + 1 : info.dli_fname,
                 (unsigned long)((char *)fn - (char *)info.dli_fbase));
    } else {
        snprintf(slot->name, sizeof slot->name, "%p", fn);
    }
#else
    /* wasm (platform.h admits no other): the pointer is a table index;
     * wasm/js/function_names.js names it from the module's name section, else
     * "wasm-function[INDEX]" by its function index. */
    vor_wasm_function_name((uint32_t)(uintptr_t)fn, slot->name, (uint32_t)sizeof slot->name);
#endif
    site->function = slot->name;
    site->name = slot->name;
}

int vor_function_site_is_unknown(const vor_site *site) {
    return site == &unknown_function_site;
}

void *vor_function_site_address(const vor_site *site) {
    function_slot *table = vor_atomic_load_acquire(&function_table);
    if (table == NULL || (const char *)site < (const char *)table ||
        (const char *)site >= (const char *)(table + FUNCTION_TABLE_SIZE))
        return NULL;
    const function_slot *slot = (const function_slot *)((const char *)site - offsetof(function_slot, site));
    return vor_atomic_load_relaxed(&((function_slot *)slot)->fn);
}
