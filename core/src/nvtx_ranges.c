/* nvtx_ranges.c: VOR_NVTX=1 turns every scope into an NVTX range in the domain "vor" and
 * every frame mark into an NVTX mark, so instrumented code lines up with CUDA work in
 * Nsight Systems.
 *
 * It uses NVTX v3's header-only API (third_party/nvtx3, vendored unchanged): the first NVTX
 * call reads NVTX_INJECTION64_PATH, dlopens that tool and hands it NVTX's export table; with
 * no tool every later call returns at once. That first call is made here when the session
 * starts (nvtxDomainCreateA), off the hot path. Ranges are push/pop ranges: per thread and
 * nested, exactly like vor's scopes. A scope's range is pushed before vor reads the clock
 * and popped after, so its NVTX time encloses the time vor records and the NVTX calls do
 * not count in the scope's own duration.
 *
 * Names: a scope site's name. Sites of -finstrument-functions get their full names off the
 * hot path (sites.c, the frame thread, from DWARF and symbol tables), too late and too slow
 * for a range; a range needs one at the function's first call. So the first range of each
 * function asks dladdr, once, for its dynamic symbol (exact address match only: executables
 * linked with -rdynamic, shared libraries' exported functions) and keeps the answer in a
 * fixed lock-free table; anything else is named by its address ("0x4011d6"), for good, so a
 * function has one name in the tool (except a call on another thread while the first is being
 * named, which gets the address rather than wait: the namer may need the loader's lock that a
 * waiting thread could hold). A full table (FUNCTION_NAMES functions) names the rest by
 * address too. No allocation: the table is static.
 */
#include "nvtx_ranges.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVTX_AS_SYSTEM_HEADER
#include "nvtx3/nvToolsExt.h"

int vor_nvtx_on;
static nvtxDomainHandle_t vor_domain;
static int decided;

/* VOR_NVTX: 1 = on; unset, empty or 0 = off; anything else is reported and ignored (off). */
static int nvtx_wanted(void) {
    const char *text = getenv("VOR_NVTX");
    if (text == NULL || *text == '\0' || strcmp(text, "0") == 0) return 0;
    if (strcmp(text, "1") == 0) return 1;
    vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_NVTX=\"%.40s\" must be 0 or 1; ignored (off)", text);
    return 0;
}

/* Called from start_session under the frame lock, before collection starts: the hot path
 * reads the flag only while collecting, so no scope sees it change. */
void vor_nvtx_begin_session(void) {
    if (decided) return;
    decided = 1;
    if (!nvtx_wanted()) return;
    vor_domain = nvtxDomainCreateA("vor"); /* NVTX's initialisation: loads the tool, if any */
    vor_atomic_store_release(&vor_nvtx_on, 1);
}

/* "0x" and the lowercase hex digits of `v`, NUL-terminated; `out` holds 19 bytes. */
static const char *hex_address(uintptr_t v, char out[19]) {
    char digits[16];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v & 15u];
        v >>= 4;
    } while (v != 0);
    out[0] = '0';
    out[1] = 'x';
    for (int i = 0; i < n; i++) out[2 + i] = digits[n - 1 - i];
    out[2 + n] = '\0';
    return out;
}

#define FUNCTION_NAMES 1024u /* a power of two */
#define FUNCTION_NAME_BYTES 88u
#define FUNCTION_NAME_PROBES 16u

typedef struct function_name {
    void *fn;  /* claimed with a compare-and-swap; never freed */
    int ready; /* text is written (release/acquire) */
    char text[FUNCTION_NAME_BYTES];
} function_name;

static function_name function_names[FUNCTION_NAMES];

static void name_function(function_name *slot, void *fn) {
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_sname != NULL && info.dli_saddr == fn) {
        size_t n = strnlen(info.dli_sname, FUNCTION_NAME_BYTES - 1);
        memcpy(slot->text, info.dli_sname, n);
        slot->text[n] = '\0';
    } else {
        char address[19];
        memcpy(slot->text, hex_address((uintptr_t)fn, address), sizeof address);
    }
    vor_atomic_store_release(&slot->ready, 1);
}

/* The range name of function `fn`: its slot's text, or its address in `fallback` while
 * another thread is naming it or when the table is full. */
static const char *function_range_name(void *fn, char fallback[19]) {
    uint64_t h = ((uint64_t)(uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15ull;
    for (uint32_t probe = 0; probe < FUNCTION_NAME_PROBES; probe++) {
        function_name *slot = &function_names[((uint32_t)(h >> 40) + probe) & (FUNCTION_NAMES - 1)];
        void *key = vor_atomic_load_acquire(&slot->fn);
        if (key == NULL) {
            void *expected = NULL;
            if (vor_atomic_cas(&slot->fn, &expected, fn)) {
                name_function(slot, fn);
                return slot->text;
            }
            key = expected;
        }
        if (key == fn) return vor_atomic_load_acquire(&slot->ready) ? slot->text : hex_address((uintptr_t)fn, fallback);
    }
    return hex_address((uintptr_t)fn, fallback);
}

void vor_nvtx_push(const vor_site *site) {
    char address[19];
    void *fn = vor_function_site_address(site);
    const char *name = fn != NULL ? function_range_name(fn, address) : site->name;
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name != NULL ? name : "(unnamed)";
    nvtxDomainRangePushEx(vor_domain, &a);
}

void vor_nvtx_pop(void) {
    nvtxDomainRangePop(vor_domain);
}

void vor_nvtx_frame(uint64_t index) {
    char text[32];
    snprintf(text, sizeof text, "frame %llu", (unsigned long long)index);
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = index;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text;
    nvtxDomainMarkEx(vor_domain, &a);
}
