/* iq_grids.h - lattice tables of ggml's i-quants (iq_grids.c). */
#ifndef MF_IQ_GRIDS_H
#define MF_IQ_GRIDS_H
#include <stdint.h>

extern const uint64_t mq_iq2xxs_grid[256];
extern const uint64_t mq_iq2xs_grid[512];
extern const uint32_t mq_iq3xxs_grid[256];
extern const uint32_t mq_iq3s_grid[512];

/* Byte j of a grid entry (entries are little-endian byte vectors). */
static inline uint8_t mq_grid_byte(uint64_t entry, int j) { return (uint8_t)(entry >> (8 * j)); }

#endif
