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
 * Names: a scope site's name. Sites of -finstrument-functions are named off the hot path
 * (sites.c, the frame thread), so their ranges carry the function's address ("0x4011d6");
 * `vor symbolize` or the capture names them.
 */
#include "nvtx_ranges.h"

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

void vor_nvtx_push(const vor_site *site) {
    char address[19];
    void *fn = vor_function_site_address(site);
    const char *name = fn != NULL ? hex_address((uintptr_t)fn, address) : site->name;
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
