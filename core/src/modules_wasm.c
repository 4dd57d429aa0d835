/* modules_wasm.c: a WebAssembly program is one module whose functions are named from its
 * name section when first recorded (wasm/js/function_names.js), so function sites carry
 * no module: captures of wasm runs declare none. (A build id of the wasm module, for
 * naming after the fact, is not something Emscripten 3.1.6 emits.)
 */
#include "platform.h"

#if defined(VOR_PLATFORM_WASM)

#include "vor_internal.h"

uint32_t vor_module_count(void) {
    return 0;
}

int vor_module_get(uint32_t id, vor_module_info *out) {
    (void)id;
    (void)out;
    return 0;
}

#endif /* VOR_PLATFORM_WASM */
