/* mlx_affine.c - MLX affine quantization, both kernels' rounding rules
 * (the rules and their sources: mlx_affine.h). Every step is one float32
 * operation in MLX's order; -ffp-contract=off (Makefile) keeps them so. */
#include "quant/mlx_affine.h"
#include "core/cursor.h"

#include <stddef.h>

#include <math.h>

bool mf_mlx_affine_params_ok(int bits, int group_size)
{
    /* mlx/ops.cpp affine_quantize: "supported bits are 2, 3, 4, 5, 6 and 8",
     * "supported group sizes are 32, 64, and 128" */
    bool bits_ok = bits >= 2 && bits <= 8 && bits != 7;
    return bits_ok && (group_size == 32 || group_size == 64 || group_size == 128);
}

/* The group's extremes as each kernel scans them. CPU: std::max/std::min
 * from -inf/+inf ((a < b) ? b : a keeps the first of equals and skips
 * NaN). Metal: fmax/fmin from 0 and +inf (Limits<T>::max is infinity). */
static void group_range(const float *w, int n, int kernel, float *lo, float *hi)
{
    float mn = INFINITY, mx = kernel == MF_MLX_METAL ? 0.0f : -INFINITY;
    for (int j = 0; j < n; j++) {
        float v = w[j];
        if (kernel == MF_MLX_METAL) {
            mx = fmaxf(mx, v);
            mn = fminf(mn, v);
        } else {
            mx = mx < v ? v : mx;
            mn = v < mn ? v : mn;
        }
    }
    *lo = mn;
    *hi = mx;
}

/* std::rint (half to even, the default rounding mode) or Metal's round
 * (half away from zero). */
static inline float round_by(float x, int kernel)
{
    return kernel == MF_MLX_METAL ? roundf(x) : rintf(x);
}

/* One group's scale and bias (unrounded floats, as the codes use them). */
static void group_params(float lo, float hi, float n_bins, int kernel, float *scale_out,
                         float *bias_out)
{
    const float eps = 1e-7f;
    float s = (hi - lo) / n_bins;
    float scale = s < eps ? eps : s; /* std::max(s, eps); Metal's fmax agrees off NaN */
    bool side = fabsf(lo) > fabsf(hi);
    scale = side ? scale : -scale;
    float edge = side ? lo : hi;
    float q0 = round_by(edge / scale, kernel);
    float bias = 0.0f;
    if (q0 != 0.0f) {
        scale = edge / q0;
        bias = edge;
    }
    *scale_out = scale;
    *bias_out = bias;
}

/* The code of one value. CPU: std::min(std::max(q, 0.0f), n_bins). Metal:
 * min(q, n_bins) then a conversion to uint8_t; its q is never below -0.5
 * (w - edge has the sign of scale), so clamping at 0 changes nothing. */
static inline unsigned code_of(float w, float bias, float scale, float n_bins, int kernel)
{
    float q = round_by((w - bias) / scale, kernel);
    if (q != q) /* NaN (mlx_affine.h): x86-64's cast leaves 0; Metal's fmin, n_bins */
        return kernel == MF_MLX_METAL ? (unsigned)n_bins : 0;
    q = q < 0.0f ? 0.0f : q;
    q = n_bins < q ? n_bins : q;
    return (unsigned)q;
}

void mf_mlx_quantize_row(const float *w, uint64_t n, int bits, int group_size, int kernel,
                         uint8_t *packed, float *scales, float *biases)
{
    const float n_bins = (float)((1 << bits) - 1);
    uint64_t groups = n / (uint64_t)group_size;
    for (uint64_t g = 0; g < groups; g++) {
        const float *x = w + g * (uint64_t)group_size;
        float lo, hi, scale, bias;
        group_range(x, group_size, kernel, &lo, &hi);
        group_params(lo, hi, n_bins, kernel, &scale, &bias);
        scales[g] = scale;
        biases[g] = bias;
        /* a group is 32 * k codes: a whole number of bytes of the stream */
        uint8_t *out = packed + g * (uint64_t)group_size * (uint64_t)bits / 8;
        uint64_t acc = 0;
        int have = 0;
        for (int j = 0; j < group_size; j++) {
            acc |= (uint64_t)code_of(x[j], bias, scale, n_bins, kernel) << have;
            have += bits;
            while (have >= 8) {
                *out++ = (uint8_t)acc;
                acc >>= 8;
                have -= 8;
            }
        }
    }
}

unsigned mf_mlx_code_at(const uint8_t *row, uint64_t j, int bits, uint64_t row_bytes)
{
    /* bits <= 8: a code spans at most two bytes */
    uint64_t bit = j * (uint64_t)bits, byte = bit / 8;
    unsigned v = row[byte];
    if (byte + 1 < row_bytes)
        v |= (unsigned)row[byte + 1] << 8;
    return (v >> (bit % 8)) & ((1u << bits) - 1);
}

/* -------------------------------------------- MLX's GGUF loader (lossless) */

/* mlx/io/gguf_quants.cpp: the block's scale is copied, the bias is -8 or
 * -128 times it (float16 arithmetic: the product is exact, or overflows to
 * an infinity, either way what rounding the float product to float16
 * gives) or Q4_1's m; unpack_32_4 puts low nibbles 0..15 first, then the
 * high ones, two codes a byte, low nibble first: MLX's 4-bit stream. */
int mf_mlx_from_ggml_row(int ggml_type, const uint8_t *blocks, uint64_t n, uint8_t *packed,
                         uint16_t *scales, uint16_t *biases)
{
    size_t bsize = ggml_type == 2 ? 18 : ggml_type == 3 ? 20 : ggml_type == 8 ? 34 : 0;
    if (!bsize)
        return 0;
    for (uint64_t b = 0; b < n / 32; b++) {
        const uint8_t *blk = blocks + b * bsize;
        uint16_t d = (uint16_t)(blk[0] | blk[1] << 8);
        scales[b] = d;
        if (ggml_type == 8) {
            biases[b] = mf_f32_to_f16(-128.0f * mf_f16_to_f32(d));
            for (int j = 0; j < 32; j++)
                packed[b * 32 + (uint64_t)j] = (uint8_t)(blk[2 + j] ^ 0x80);
            continue;
        }
        const uint8_t *qs = blk + (ggml_type == 3 ? 4 : 2);
        biases[b] = ggml_type == 3 ? (uint16_t)(blk[2] | blk[3] << 8)
                                   : mf_f32_to_f16(-8.0f * mf_f16_to_f32(d));
        uint8_t *out = packed + b * 16;
        for (int j = 0; j < 16; j += 2) { /* codes j, j+1 (low nibbles); 16+j, 17+j (high) */
            out[j / 2] = (uint8_t)((qs[j] & 0x0F) | (qs[j + 1] & 0x0F) << 4);
            out[8 + j / 2] = (uint8_t)(qs[j] >> 4 | (qs[j + 1] >> 4) << 4);
        }
    }
    return ggml_type == 8 ? 8 : 4;
}
