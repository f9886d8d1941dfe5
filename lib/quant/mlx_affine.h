/* mlx_affine.h - MLX's affine quantization (mlx.core.quantize with
 * mode="affine") and its inverse (mlx.core.dequantize), bit for bit.
 *
 * Along a row, each group of `group_size` values (32, 64 or 128) shares a
 * scale s and a bias b; value j is stored as the unsigned `bits`-bit code
 * q_j (bits 2, 3, 4, 5, 6 or 8) and means s * q_j + b. The codes of a row
 * form one little-endian bit stream (code j at bits j*bits ...), which MLX
 * holds as uint32 words: n * bits / 32 words per row of n values.
 *
 * Two kernels with two rounding rules (MLX computes in float32 either way):
 *   MF_MLX_CPU   mlx/backend/cpu/quantized.cpp quantize<T, U>: the running
 *                maximum starts at -inf, codes and q0 round half to even
 *                (std::rint), codes clamped to [0, 2^bits - 1]. What
 *                mlx_lm.convert writes on Linux (or with the CPU device).
 *   MF_MLX_METAL mlx/backend/metal/kernels/quantized.h affine_quantize: the
 *                running maximum starts at 0, q0 and codes round half away
 *                from zero (Metal's round), codes clamped above only. What
 *                a Mac's GPU writes.
 * Both: scale = max((max - min) / (2^bits - 1), 1e-7), negated unless
 * |min| > |max|; edge = min or max accordingly; q0 = round(edge / scale);
 * if q0 != 0 then scale = edge / q0, bias = edge, else bias = 0; code =
 * round((w - bias) / scale) with that unrounded float scale and bias; the
 * stored scale and bias are those floats rounded to the weights' type.
 * A NaN weight: the CPU kernel casts NaN to uint64_t (undefined in C++;
 * x86-64's conversion gives 2^63, whose bit falls outside the stored
 * word), so code 0 on Linux x86-64; the Metal kernel's min(NaN, n_bins) is
 * fmin (Metal's common-function min), which returns n_bins, so code
 * 2^bits - 1. Both kernels' range scans skip a NaN. mfmt writes these two
 * codes. Infinite weights make every code of their group undefined. */
#ifndef MF_MLX_AFFINE_H
#define MF_MLX_AFFINE_H
#include <stdbool.h>
#include <stdint.h>

enum { MF_MLX_CPU = 0, MF_MLX_METAL = 1 };

/* The parameters mlx.core.quantize accepts (affine mode). */
bool mf_mlx_affine_params_ok(int bits, int group_size);

/* Bytes of the packed codes of n values. */
static inline uint64_t mf_mlx_packed_bytes(uint64_t n, int bits)
{
    return n * (uint64_t)bits / 8;
}

/* Quantizes one row of n values (n a multiple of group_size; parameters
 * checked with mf_mlx_affine_params_ok): packed gets n * bits / 8 bytes
 * (the bit stream), scales and biases n / group_size floats each (round
 * them to the weights' type to store them). */
void mf_mlx_quantize_row(const float *w, uint64_t n, int bits, int group_size, int kernel,
                         uint8_t *packed, float *scales, float *biases);

/* MLX's GGUF loader (mlx/io/gguf_quants.cpp): one row of n values (n a
 * multiple of 32) of ggml blocks of type 2 (Q4_0), 3 (Q4_1) or 8 (Q8_0) as
 * the affine triple MLX makes of it without loss, group 32: the codes
 * (4 bits for Q4_0/Q4_1: block value j is nibble j of the block's 16
 * bytes, low nibbles first; 8 bits for Q8_0: the int8 q + 128) packed as
 * mf_mlx_quantize_row packs them (n * bits / 8 bytes), and per block the
 * float16 scale d and bias (-8 d, m, -128 d; float16 bits). Returns the
 * bits, or 0 for another type. */
int mf_mlx_from_ggml_row(int ggml_type, const uint8_t *blocks, uint64_t n, uint8_t *packed,
                         uint16_t *scales, uint16_t *biases);

/* Code j of a packed row of row_bytes bytes. */
unsigned mf_mlx_code_at(const uint8_t *row, uint64_t j, int bits, uint64_t row_bytes);

#endif
