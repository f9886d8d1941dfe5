/* quant_ternary.c - TQ1_0 and TQ2_0: ternary weights {-1, 0, 1} * d with
 * d = max |x| of the 256-element block (BitNet b1.58, TriLMs). The
 * importance matrix is ignored.
 *
 * TQ1_0 (54 bytes): qs[48] @0, qh[4] @48, d @52. Five trits per byte of qs
 * (base 3, most significant first, scaled to a byte by ceil(v*256/243)), four
 * per byte of qh (shifted up one trit).
 * TQ2_0 (66 bytes): qs[64] @0, d @64. Two bits per value. */
#include "quant/qimpl.h"

#include <stdlib.h>

static float block_amax(const float *x)
{
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a; /* ggml's MAX */
    }
    return amax;
}

/* lroundf(v) + 1 stored in an int, as ggml writes it: -1, 0, 1 -> 0, 1, 2.
 * lroundf(NaN or inf) is LONG_MIN on x86-64 glibc; the int keeps the low 32
 * bits (gcc's conversion), which gives 1. */
static int trit(float v)
{
    long r = lroundf(v);
    return (int)(uint32_t)((unsigned long)r + 1ul);
}

/* n trits of x (stride apart), base 3, first one most significant. */
static uint8_t trits_to_byte(const float *x, int stride, int n, float id)
{
    uint8_t q = 0;
    for (int k = 0; k < n; ++k)
        q = (uint8_t)(q * 3 + trit(x[k * stride] * id));
    return q;
}

/* Scales a base-3 value (< 243) to a byte: ceil(q * 256 / 243). */
static uint8_t trit_byte_scale(uint8_t q)
{
    return (uint8_t)(((uint16_t)q * 256 + (243 - 1)) / 243);
}

static void tq1_0_block(const float *x, uint8_t *y)
{
    const float d = block_amax(x);
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y + 52, d);
    for (int m = 0; m < 32; ++m) /* bytes 0..31: elements m + 32k, k < 5 */
        y[m] = trit_byte_scale(trits_to_byte(x + m, 32, 5, id));
    x += 160;
    for (int m = 0; m < 16; ++m) /* bytes 32..47: elements 160 + m + 16k */
        y[32 + m] = trit_byte_scale(trits_to_byte(x + m, 16, 5, id));
    x += 80;
    for (int j = 0; j < 4; ++j) /* qh: elements 240 + j + 4k, k < 4 */
        y[48 + j] = trit_byte_scale((uint8_t)(trits_to_byte(x + j, 4, 4, id) * 3));
}

void mq_quant_tq1_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t i = 0; i < n / QK_K; ++i)
        if (!mq_simd_tq1_0_block(x + i * QK_K, y + i * 54))
            tq1_0_block(x + i * QK_K, y + i * 54);
}

/* Trit number k (0 = most significant) of a scaled byte. */
static float trit_value(uint8_t b, int k, float d)
{
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    uint8_t q = (uint8_t)(b * pow3[k]);
    int16_t xi = (int16_t)(((uint16_t)q * 3) >> 8);
    return (float)(xi - 1) * d;
}

void mq_deq_tq1_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 54) {
        const float d = mq_get_f16(x + 52);
        for (int k = 0; k < 5; ++k)
            for (int m = 0; m < 32; ++m)
                *y++ = trit_value(x[m], k, d);
        for (int k = 0; k < 5; ++k)
            for (int m = 0; m < 16; ++m)
                *y++ = trit_value(x[32 + m], k, d);
        for (int k = 0; k < 4; ++k)
            for (int j = 0; j < 4; ++j)
                *y++ = trit_value(x[48 + j], k, d);
    }
}

static void tq2_0_block(const float *x, uint8_t *y)
{
    const float d = block_amax(x);
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y + 64, d);
    for (int j = 0; j < 64; j += 32, x += 128) {
        for (int m = 0; m < 32; ++m) {
            uint8_t q = 0;
            for (int k = 0; k < 4; ++k)
                q = (uint8_t)(q + ((trit(x[m + k * 32] * id) & 3) << (2 * k)));
            y[j + m] = q;
        }
    }
}

void mq_quant_tq2_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t i = 0; i < n / QK_K; ++i)
        if (!mq_simd_tq2_0_block(x + i * QK_K, y + i * 66))
            tq2_0_block(x + i * QK_K, y + i * 66);
}

void mq_deq_tq2_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 66) {
        const float d = mq_get_f16(x + 64);
        for (int j = 0; j < 64; j += 32)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m)
                    *y++ = (float)(((x[j + m] >> (l * 2)) & 3) - 1) * d;
    }
}
