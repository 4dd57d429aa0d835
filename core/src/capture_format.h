/* capture_format.h: the constants of the .vor capture format, shared by the writer and
 * the reader. docs/FORMAT.md is the specification; this file only names its numbers.
 * Where 1.0 and 1.1 differ, the name says which.
 */
#ifndef VOR_CAPTURE_FORMAT_H
#define VOR_CAPTURE_FORMAT_H

#define VOR_CAPTURE_MAGIC "\x89VOR\r\n\x1a\n"
#define VOR_CAPTURE_MAGIC_BYTES 8u
#define VOR_CAPTURE_FIXED_HEADER_BYTES 16u /* magic, u16 major, u16 minor, u32 body length B */
#define VOR_CAPTURE_MAX_HEADER_BODY (1u << 20)
#define VOR_CAPTURE_CHECK_BYTES 4u    /* u32 CRC-32C */
#define VOR_CAPTURE_MAX_STRING 65535u /* longest string a reader accepts */

/* 1.0 records: [u32 length][u32 check][varint D << 1 | stored][block], one LZ4 chain. */
#define VOR_CAPTURE_1_0_MIN_RECORD 6u /* check, a 1-byte varint, at least 1 byte */
#define VOR_CAPTURE_LZ4_WINDOW 65536u /* bytes of earlier records a 1.0 record may refer to */

/* 1.1 header: B is followed by its own check (CRC-32C of bytes 8..15), so a damaged B is
 * an error rather than a header that seems to be still arriving. */
#define VOR_CAPTURE_1_1_FIXED_HEADER_BYTES 20u

/* 1.1 records: [u32 size][u16 size check][u32 record check][body of `size` bytes].
 * size: bits 0..30 the body's length, bit 31 set when the body is [varint D][LZ4 block]
 * (compressed alone), clear when the body is the decoded record itself. */
#define VOR_RECORD_HEAD_BYTES 10u
#define VOR_RECORD_COMPRESSED 0x80000000u
#define VOR_RECORD_SIZE_MASK 0x7FFFFFFFu
#define VOR_RECORD_MIN_BODY 1u

/* Header flags (varint). */
#define VOR_HEADER_FLAME 1u

/* System column encodings (u8 in the header). 1.1 captures use absolute only. */
#define VOR_ENCODING_ABSOLUTE 0u /* zigzag varint of the raw value */
#define VOR_ENCODING_DELTA 1u    /* 1.0: zigzag varint of raw - previous raw */

/* 1.1 header: cross-origin isolation (u8). */
#define VOR_ISOLATION_UNKNOWN 0u /* not a browser page, or unknown: -1 in vor_reader_info */
#define VOR_ISOLATION_NO 1u
#define VOR_ISOLATION_YES 2u

/* Record kinds (first byte of a decoded record). */
#define VOR_RECORD_FRAME 1u
#define VOR_RECORD_END 2u
#define VOR_RECORD_STATE 3u /* 1.1 addition: what a reader starting mid-capture needs (§4.8) */

/* State record flags (varint), in the order of their sections. */
#define VOR_STATE_DECLARATIONS 1u
#define VOR_STATE_VALUES 2u

/* Frame record flags (varint), in the order of their sections. */
#define VOR_FRAME_DECLARATIONS 1u
#define VOR_FRAME_PRESENCE 2u
#define VOR_FRAME_DROPS 4u
#define VOR_FRAME_FLAME 8u
#define VOR_FRAME_KNOWN_FLAGS 15u

/* 1.1 user values: the first byte of a value. */
#define VOR_VALUE_UNCHANGED 0x00u /* the column's last full value */
#define VOR_VALUE_ZERO 0x80u      /* +0.0 (L = 8, N = 0) */

/* 1.1 limits. */
#define VOR_CAPTURE_MAX_OPEN_SCOPES 256u /* per thread and frame (VOR_MAX_DEPTH) */
#define VOR_CAPTURE_MAX_MODULE_ID 65535u

#endif /* VOR_CAPTURE_FORMAT_H */
