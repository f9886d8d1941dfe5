/* quant_fp4.c - the ggml block types added after the reference commit:
 * MXFP4 (39), NVFP4 (40), Q1_0 (41), Q2_0 (42), as ggml b10256 defines them
 * (ggml-common.h for the layouts, ggml-quants.c for quantize_row_*_ref and
 * dequantize_row_*, ggml-impl.h for the E8M0 / UE4M3 scale conversions).
 *
 * Layouts (bytes):
 *   MXFP4 e[1] qs[16]      32 values; E8M0 scale; nibble j: element j (low)
 *                          and j + 16 (high); values E2M1.
 *   NVFP4 d[4] qs[32]      64 values in 4 sub-blocks of 16, each with a
 *                          UE4M3 scale d[s]; sub-block s's nibbles are
 *                          qs[8s..8s+8): element j (low) and j + 8 (high).
 *   Q1_0  d[2] qs[16]      128 values; bit j (LSB first) set: +d, else -d.
 *   Q2_0  d[2] qs[16]      64 values; 2-bit code q of element j at bits
 *                          2(j%4) of byte j/4; value (q - 1) * d.
 * ggml keeps the E2M1 values doubled (kvalues_fp4) and halves the scales,
 * so every product here is exact and contraction cannot change a bit. */
#include "quant/qimpl.h"

/* E2M1 values doubled (ggml's kvalues_fp4, shared by MXFP4 and NVFP4). */
static const int8_t kvalues_fp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* 2^(e-128) as ggml's e8m0_to_fp32_half builds it (e = 0, 1: subnormals;
 * e = 255 gives 2^127, not NaN). */
static float e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* ggml_ue4m3_to_fp32: unsigned E4M3 (bias 7), halved like e8m0_half;
 * 0 and 0x7f read as 0. */
static float ue4m3_half(uint8_t x)
{
    if (x == 0 || x == 0x7f)
        return 0.0f;
    int exp = (x >> 3) & 0xf, man = x & 7;
    float raw = exp == 0 ? ldexpf((float)man, -9) : ldexpf(1.0f + (float)man / 8.0f, exp - 7);
    return raw * 0.5f;
}

/* ggml_fp32_to_ue4m3: clamps to 448, rounds the mantissa half up (not to
 * even), saturates at 0x7e; subnormals by x * 2^9 + 0.5 truncated. */
static uint8_t f32_to_ue4m3(float x)
{
    if (!(x > 0.0f))
        return 0;
    if (x > 448.0f)
        x = 448.0f;
    uint32_t bits;
    memcpy(&bits, &x, 4);
    int exp = (int)((bits >> 23) & 0xff) - 127 + 7;
    int man = (int)((bits >> 20) & 7);
    if (exp <= 0) {
        int sub = (int)(x * 512.0f + 0.5f);
        if (sub > 7)
            sub = 7;
        return sub < 1 ? 0 : (uint8_t)sub;
    }
    if (exp >= 15)
        return 0x7e;
    man += (int)((bits >> 19) & 1);
    if (man > 7) {
        man = 0;
        if (++exp >= 15)
            return 0x7e;
    }
    return (uint8_t)((exp << 3) | man);
}

/* ggml's best_index_mxfp4: the first code whose value times e is nearest x. */
static uint8_t best_fp4(float x, float e)
{
    int best = 0;
    float best_err = fabsf(kvalues_fp4[0] * e - x);
    for (int i = 1; i < 16; i++) {
        float err = fabsf(kvalues_fp4[i] * e - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return (uint8_t)best;
}

/* ---------------------------------------------------------------- MXFP4 */

void mq_quant_mxfp4(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw; /* ggml's quantize_mxfp4 ignores the importance matrix */
    for (int64_t ib = 0; ib < n / 32; ib++, x += 32, y += 17) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            if (amax < fabsf(x[j]))
                amax = fabsf(x[j]);
        /* (uint8_t)(floorf(log2f(amax)) - 2 + 127): a float converted as gcc does */
        const uint8_t e = amax > 0.0f ? (uint8_t)(uint32_t)mq_cvtt(floorf(log2f(amax)) - 2 + 127) : 0;
        const float d = e8m0_half(e);
        y[0] = e;
        for (int j = 0; j < 16; j++)
            y[1 + j] = (uint8_t)(best_fp4(x[j], d) | best_fp4(x[16 + j], d) << 4);
    }
}

void mq_deq_mxfp4(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / 32; ib++, x += 17, y += 32) {
        const float d = e8m0_half(x[0]);
        for (int j = 0; j < 16; j++) {
            y[j] = kvalues_fp4[x[1 + j] & 0x0f] * d;
            y[j + 16] = kvalues_fp4[x[1 + j] >> 4] * d;
        }
    }
}

/* ---------------------------------------------------------------- NVFP4 */

void mq_quant_nvfp4(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t ib = 0; ib < n / 64; ib++, x += 64, y += 36) {
        for (int s = 0; s < 4; s++) {
            const float *xb = x + 16 * s;
            float amax = 0.0f;
            for (int j = 0; j < 16; j++)
                if (amax < fabsf(xb[j]))
                    amax = fabsf(xb[j]);
            const uint8_t ue = f32_to_ue4m3(amax / 6.0f);
            const float d = ue4m3_half(ue);
            y[s] = ue;
            for (int j = 0; j < 8; j++)
                y[4 + 8 * s + j] = (uint8_t)(best_fp4(xb[j], d) | best_fp4(xb[8 + j], d) << 4);
        }
    }
}

void mq_deq_nvfp4(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / 64; ib++, x += 36, y += 64) {
        for (int s = 0; s < 4; s++) {
            const float d = ue4m3_half(x[s]);
            const uint8_t *qs = x + 4 + 8 * s;
            for (int j = 0; j < 8; j++) {
                y[16 * s + j] = kvalues_fp4[qs[j] & 0x0f] * d;
                y[16 * s + j + 8] = kvalues_fp4[qs[j] >> 4] * d;
            }
        }
    }
}

/* ----------------------------------------------------------------- Q1_0 */

void mq_quant_q1_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw; /* quantize_q1_0 runs the reference row quantizer either way */
    for (int64_t ib = 0; ib < n / 128; ib++, x += 128, y += 18) {
        float sum_abs = 0.0f;
        for (int j = 0; j < 128; j++)
            sum_abs += fabsf(x[j]);
        mq_put_f16(y, sum_abs / 128);
        memset(y + 2, 0, 16);
        for (int j = 0; j < 128; j++)
            if (x[j] >= 0.0f)
                y[2 + j / 8] |= (uint8_t)(1u << (j % 8));
    }
}

void mq_deq_q1_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / 128; ib++, x += 18, y += 128) {
        const float d = mq_get_f16(x), neg_d = -d;
        for (int j = 0; j < 128; j++)
            y[j] = (x[2 + j / 8] >> (j % 8)) & 1 ? d : neg_d;
    }
}

/* ----------------------------------------------------------------- Q2_0 */

void mq_quant_q2_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t ib = 0; ib < n / 64; ib++, x += 64, y += 18) {
        float amax = 0.0f;
        for (int j = 0; j < 64; j++)
            if (fabsf(x[j]) > amax)
                amax = fabsf(x[j]);
        const float d = amax, id = d > 0.0f ? 1.0f / d : 0.0f;
        mq_put_f16(y, d);
        memset(y + 2, 0, 16);
        for (int j = 0; j < 64; j++) {
            /* (int)roundf(w * id) + 1, clamped to [0, 3] */
            int q = mq_cvtt(roundf(x[j] * id)) + 1;
            q = mq_clamp(q, 0, 3);
            y[2 + j / 4] |= (uint8_t)(q << (2 * (j % 4)));
        }
    }
}

void mq_deq_q2_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / 64; ib++, x += 18, y += 64) {
        const float d = mq_get_f16(x);
        for (int j = 0; j < 64; j++)
            y[j] = ((int)((x[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}
