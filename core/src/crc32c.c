/* crc32c.c: CRC-32C (reflected polynomial 0x82F63B78), slicing by 8: eight 256-entry
 * tables let the loop take eight bytes per step, several times the speed of a table per
 * byte, which keeps the check well under the cost of compressing the record it covers.
 * The tables (8 KiB) are built once, on first use, under pthread_once, rather than
 * committed as two thousand literals; nothing is computed in a program that never
 * writes or reads a capture.
 */
#include "crc32c.h"

#include <pthread.h>

static uint32_t crc_tables[8][256];
static pthread_once_t crc_tables_once = PTHREAD_ONCE_INIT;

static void build_crc_tables(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_tables[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^ crc_tables[0][crc_tables[t - 1][i] & 0xFFu];
}

uint32_t vor_crc32c(uint32_t crc, const void *data, size_t n) {
    pthread_once(&crc_tables_once, build_crc_tables);
    const uint8_t *p = data;
    const uint32_t(*t)[256] = (const uint32_t(*)[256])crc_tables;
    crc = ~crc;
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
    return ~crc;
}
