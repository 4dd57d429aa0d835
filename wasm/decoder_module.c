/* decoder_module.c: the entry of the vor_decoder wasm module (the panel's capture
 * decoder). It has no main(); referencing the decoder here makes the linker keep it and
 * its exported functions (wasm/src/capture_decoder.c), and the capture index the page uses
 * for files opened on it (wasm/src/capture_index_wasm.c). */
#include <stddef.h>

typedef struct vor_wasm_decoder vor_wasm_decoder;
vor_wasm_decoder *vor_wasm_decoder_new(void);
typedef struct vor_wasm_index vor_wasm_index;
vor_wasm_index *vor_wasm_index_new(unsigned max_entries);

/* Keeps the decoder's and the index's object files in the link. */
void *vor_decoder_module_anchor(int which);
void *vor_decoder_module_anchor(int which) {
    return which ? (void *)&vor_wasm_index_new : (void *)&vor_wasm_decoder_new;
}
