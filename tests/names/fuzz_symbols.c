/* fuzz_symbols.c: libFuzzer target for the symbolizer (`vor symbolize` reads files the
 * user names): any bytes, written to a temporary file, are opened as an ELF file and a
 * spread of addresses is looked up. Nothing may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "module_symbols_linux.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/vor-fuzz-symbols-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    int written = write(fd, data, size) == (ssize_t)size;
    close(fd);
    if (written) {
        char err[256];
        vor_module_symbols_options options = {"", NULL};
        vor_module_symbols *m = vor_module_symbols_open(path, &options, err, sizeof err);
        if (m != NULL) {
            vor_symbol sym;
            for (uint64_t address = 0; address < 0x40000; address += 0x1000 + (address & 0x30))
                vor_module_symbols_lookup(m, address, &sym);
            vor_module_symbols_close(m);
        }
    }
    unlink(path);
    return 0;
}
