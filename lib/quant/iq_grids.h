/* iq_grids.h - lattice tables of ggml's i-quants (iq_grids.c, iq_kgrid.c). */
#ifndef MF_IQ_GRIDS_H
#define MF_IQ_GRIDS_H
#include <stdint.h>

/* Dequantization grids as ggml-common.h stores them (one byte per value). */
extern const uint64_t mq_iq2xxs_grid[256];
extern const uint64_t mq_iq2xs_grid[512];
extern const uint32_t mq_iq3xxs_grid[256];
extern const uint32_t mq_iq3s_grid[512];

/* Compact lattices (iq_kgrid.c): fields of 2 bits (8 per entry) or 3 bits
 * (4 per entry), least significant first. */
extern const uint16_t mq_kgrid_2bit_256[256];   /* IQ2_XXS */
extern const uint16_t mq_kgrid_2bit_512[512];   /* IQ2_XS */
extern const uint16_t mq_kgrid_2bit_1024[1024]; /* IQ2_S */
extern const uint16_t mq_kgrid_1bit_2048[2048]; /* IQ1_S, IQ1_M */
extern const uint16_t mq_kgrid_3bit_256[256];   /* IQ3_XXS */
extern const uint16_t mq_kgrid_3bit_512[512];   /* IQ3_S */

/* Byte j of a grid entry (entries are little-endian byte vectors). */
static inline uint8_t mq_grid_byte(uint64_t entry, int j) { return (uint8_t)(entry >> (8 * j)); }

/* Field j (0..7) of a 2-bit compact entry. */
static inline int mq_kgrid2_field(uint16_t entry, int j) { return (entry >> (2 * j)) & 3; }

#endif
