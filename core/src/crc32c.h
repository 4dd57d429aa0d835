/* crc32c.h: CRC-32C (Castagnoli), the check value of every .vor record and of the
 * capture header (docs/FORMAT.md). A CRC, not a hash, because its guarantee is what a
 * capture needs: every error burst of up to 32 bits (any damaged byte, any four adjacent
 * damaged bytes) is always caught, and anything else is missed with odds of 2^-32.
 */
#ifndef VOR_CRC32C_H
#define VOR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC-32C over `n` more bytes. Start with crc = 0; feeding the bytes in
 * pieces gives the same value as feeding them at once. CRC-32C("123456789") = 0xE3069283. */
uint32_t vor_crc32c(uint32_t crc, const void *data, size_t n);

/* The same without the CPU's crc32 instruction (the tables every platform has): the tests
 * check that both give the same values. */
uint32_t vor_crc32c_portable(uint32_t crc, const void *data, size_t n);

#endif /* VOR_CRC32C_H */
