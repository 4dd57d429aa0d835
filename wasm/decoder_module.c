/* decoder_module.c: the entry of the vor_decoder wasm module (the panel's capture
 * decoder). It has no main(); referencing the decoder here makes the linker keep it and
 * its exported functions (wasm/src/capture_decoder.c). */
#include <stddef.h>

typedef struct vor_wasm_decoder vor_wasm_decoder;
vor_wasm_decoder *vor_wasm_decoder_new(void);

/* Keeps the decoder's object file in the link. */
void *vor_decoder_module_anchor(void);
void *vor_decoder_module_anchor(void) {
    return (void *)&vor_wasm_decoder_new;
}
