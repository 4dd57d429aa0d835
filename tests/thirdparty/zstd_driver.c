/* zstd_driver.c: drives Debian's libzstd (tests/thirdparty) in steps: each step makes a
 * text-like input, compresses it at a level that changes from step to step (levels 1, 3,
 * 6 and 9: the fast, double-fast, lazy2 and binary-tree match finders), every fourth
 * step through the streaming API, then decompresses it and checks the round trip.
 *
 * Hand-placed scopes: the step, its phases, and each call into the library's entry points
 * (ZSTD_compressCCtx, ZSTD_compressStream2, ZSTD_decompressDCtx), named after what they do
 * rather than after the function, so that in the -finstrument-functions build the scope
 * and the function it calls stay two rows.
 * Small on purpose: 1 KiB per step (times --scale), 20,000 to 42,000 function calls into
 * the library per step with every function instrumented (the inline helpers of its headers,
 * MEM_read32 and the like, are most of them: -finstrument-functions instruments inlined
 * copies too), within vor's default buffers; eight steps cover each level and the
 * streaming API twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vor/vor.h>
#include <zstd.h>

#include "driver.h"

const char driver_name[] = "zstd_driver";
const int driver_default_steps = 8;
const char driver_usage[] = "";

int driver_option(const char *name, const char *value) {
    (void)name;
    (void)value;
    return 0;
}

static const int levels[] = {1, 3, 6, 9};
static size_t input_bytes;
static unsigned char *input, *compressed, *output;
static size_t compressed_capacity;
static ZSTD_CCtx *cctx;
static ZSTD_DCtx *dctx;

int driver_init(int scale) {
    input_bytes = (size_t)1024 * (size_t)scale;
    compressed_capacity = ZSTD_compressBound(input_bytes);
    input = malloc(input_bytes);
    output = malloc(input_bytes);
    compressed = malloc(compressed_capacity);
    cctx = ZSTD_createCCtx();
    dctx = ZSTD_createDCtx();
    if (!input || !output || !compressed || !cctx || !dctx) {
        fprintf(stderr, "%s: out of memory\n", driver_name);
        return 1;
    }
    return 0;
}

/* Words drawn by a fixed generator: compressible like text, different every step. */
static void make_input(int step) {
    VOR_SCOPE("make input");
    static const char *const words[] = {"frame", "scope", "profile", "the", "of", "a", "library", "compress",
                                        "block", "match", "literal", "sequence", "entropy", "window", "hash",
                                        "table", "and", "to", "in", "steps"};
    uint32_t x = 0x9e3779b9u * (uint32_t)(step + 1);
    size_t n = 0;
    while (n < input_bytes) {
        x = x * 1664525u + 1013904223u;
        const char *w = words[(x >> 16) % (sizeof words / sizeof words[0])];
        size_t len = strlen(w);
        for (size_t i = 0; i < len && n < input_bytes; i++) input[n++] = (unsigned char)w[i];
        if (n < input_bytes) input[n++] = (x >> 8) % 11 == 0 ? '\n' : ' ';
    }
}

static size_t compress_one_shot(int level) {
    VOR_SCOPE("compress one-shot");
    return ZSTD_compressCCtx(cctx, compressed, compressed_capacity, input, input_bytes, level);
}

/* The streaming API in chunks of 4 KiB. Returns the compressed size, or an error code. */
static size_t compress_streaming(int level) {
    VOR_SCOPE("compress streaming");
    size_t r = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setPledgedSrcSize(cctx, input_bytes);
    if (ZSTD_isError(r)) return r;
    ZSTD_outBuffer out = {compressed, compressed_capacity, 0};
    for (size_t at = 0; at < input_bytes;) {
        size_t chunk = input_bytes - at < 4096 ? input_bytes - at : 4096;
        ZSTD_inBuffer in = {input + at, chunk, 0};
        ZSTD_EndDirective end = at + chunk == input_bytes ? ZSTD_e_end : ZSTD_e_continue;
        do {
            r = ZSTD_compressStream2(cctx, &out, &in, end);
            if (ZSTD_isError(r)) return r;
        } while (in.pos < in.size || (end == ZSTD_e_end && r != 0));
        at += chunk;
    }
    return out.pos;
}

static size_t decompress_once(size_t n) {
    VOR_SCOPE("decompress");
    return ZSTD_decompressDCtx(dctx, output, input_bytes, compressed, n);
}

int driver_step(int step, uint64_t *checksum) {
    VOR_SCOPE("step");
    make_input(step);
    int level = levels[step % (int)(sizeof levels / sizeof levels[0])];
    size_t n = step % 4 == 3 ? compress_streaming(level) : compress_one_shot(level);
    if (ZSTD_isError(n)) {
        fprintf(stderr, "%s: step %d: compression failed: %s\n", driver_name, step, ZSTD_getErrorName(n));
        return 1;
    }
    size_t m = decompress_once(n);
    VOR_SCOPE("verify");
    if (ZSTD_isError(m) || m != input_bytes || memcmp(input, output, input_bytes) != 0) {
        fprintf(stderr, "%s: step %d: the round trip at level %d differs\n", driver_name, step, level);
        return 1;
    }
    *checksum = driver_hash(*checksum, compressed, n);
    return 0;
}

void driver_finish(void) {
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
    free(input);
    free(output);
    free(compressed);
}
