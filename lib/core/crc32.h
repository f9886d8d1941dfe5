/* crc32.h - CRC-32 of zip members (the gzip polynomial, as zlib's crc32):
 * carry-less multiplication folding where the processor has PCLMULQDQ,
 * zlib's crc32 otherwise and for the ends. */
#ifndef MF_CRC32_H
#define MF_CRC32_H
#include <stddef.h>
#include <stdint.h>
/* crc of more bytes after `crc` (start with 0): zlib's crc32(crc, p, n). */
uint32_t mf_crc32(uint32_t crc, const uint8_t *p, size_t n);
#endif
