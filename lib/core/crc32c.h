/* crc32c.h - CRC-32C for LevelDB tables and TensorFlow checkpoints. */
#ifndef MF_CRC32C_H
#define MF_CRC32C_H
#include <stddef.h>
#include <stdint.h>
/* crc of more bytes after `crc` (start with 0). */
uint32_t mf_crc32c_extend(uint32_t crc, const uint8_t *p, size_t n);
static inline uint32_t mf_crc32c(const uint8_t *p, size_t n) { return mf_crc32c_extend(0, p, n); }
uint32_t mf_crc32c_unmask(uint32_t masked);
#endif
