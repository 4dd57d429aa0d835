/* crc32c.c: CRC-32C (reflected polynomial 0x82F63B78). On x86-64 CPUs with SSE4.2 the
 * `crc32` instruction computes exactly this CRC, eight bytes per instruction; elsewhere
 * (wasm, other CPUs), slicing by 8: eight 256-entry tables let the loop take eight bytes
 * per step, several times the speed of a table per byte. A 1.1 capture record costs two
 * checks (its size's and its own), so on small metrics-only records the check is a
 * visible share of reading and writing them: hence the instruction where there is one.
 * The choice and the tables (8 KiB) are made once, on first use, under pthread_once;
 * nothing is computed in a program that never writes or reads a capture.
 */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

static uint32_t crc_tables[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VOR_CRC32C_HARDWARE 1
static int crc_hardware;

__attribute__((target("sse4.2"))) static uint32_t crc_by_instruction(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8); /* little-endian, any alignment */
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_tables[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^ crc_tables[0][crc_tables[t - 1][i] & 0xFFu];
#if defined(VOR_CRC32C_HARDWARE)
    __builtin_cpu_init();
    crc_hardware = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_by_tables(uint32_t crc, const uint8_t *p, size_t n) {
    const uint32_t(*t)[256] = (const uint32_t(*)[256])crc_tables;
    while (n >= 8) {
        /* Bytes are assembled little-endian by hand: no alignment or byte-order assumption. */
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        crc = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
              t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = t[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    return crc;
}

uint32_t vor_crc32c(uint32_t crc, const void *data, size_t n) {
    pthread_once(&crc_once, crc_init);
#if defined(VOR_CRC32C_HARDWARE)
    if (crc_hardware) return ~crc_by_instruction(~crc, data, n);
#endif
    return ~crc_by_tables(~crc, data, n);
}

uint32_t vor_crc32c_portable(uint32_t crc, const void *data, size_t n) {
    pthread_once(&crc_once, crc_init);
    return ~crc_by_tables(~crc, data, n);
}
