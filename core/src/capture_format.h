/* capture_format.h: the constants of the .vor capture format, shared by the writer and
 * the reader. docs/FORMAT.md is the specification; this file only names its numbers.
 */
#ifndef VOR_CAPTURE_FORMAT_H
#define VOR_CAPTURE_FORMAT_H

#define VOR_CAPTURE_MAGIC "\x89VOR\r\n\x1a\n"
#define VOR_CAPTURE_MAGIC_BYTES 8u
#define VOR_CAPTURE_FIXED_HEADER_BYTES 16u /* magic, u16 major, u16 minor, u32 body length */
#define VOR_CAPTURE_MAX_HEADER_BODY (1u << 20)
#define VOR_CAPTURE_CHECK_BYTES 4u          /* u32 CRC-32C after the header body and each length */
#define VOR_CAPTURE_MIN_RECORD 6u           /* check, a 1-byte varint, at least 1 byte */
#define VOR_CAPTURE_LZ4_WINDOW 65536u       /* bytes of earlier records a record may refer to */
#define VOR_CAPTURE_MAX_STRING 65535u       /* longest string a reader accepts */

/* Header flags (varint). */
#define VOR_HEADER_FLAME 1u

/* System column encodings (u8 in the header). */
#define VOR_ENCODING_ABSOLUTE 0u /* zigzag varint of the raw value */
#define VOR_ENCODING_DELTA 1u    /* zigzag varint of raw - previous raw */

/* Record kinds (first byte of a decoded record). */
#define VOR_RECORD_FRAME 1u
#define VOR_RECORD_END 2u

/* Frame record flags (varint), in the order of their sections. */
#define VOR_FRAME_DECLARATIONS 1u
#define VOR_FRAME_PRESENCE 2u
#define VOR_FRAME_DROPS 4u
#define VOR_FRAME_FLAME 8u
#define VOR_FRAME_KNOWN_FLAGS 15u

#endif /* VOR_CAPTURE_FORMAT_H */
