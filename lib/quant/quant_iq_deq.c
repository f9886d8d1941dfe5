/* quant_iq_deq.c - dequantization of the lattice i-quants IQ2_XXS, IQ2_XS,
 * IQ3_XXS and IQ3_S, as ggml's dequantize_row_* computes them.
 *
 * Layouts (bytes): IQ2_XXS 66: d[2] qs[64]; IQ2_XS 74: d[2] qs[64] scales[8];
 * IQ3_XXS 98: d[2] qs[64] scales_and_signs[32]; IQ3_S 110: d[2] qs[64] qh[8]
 * signs[32] scales[4]. Each group of 8 values is a grid point (magnitudes)
 * times signs; 7 sign bits are stored and the 8th makes the count of
 * negative signs even (ksigns). */
#include "quant/iq_grids.h"
#include "quant/qimpl.h"

/* ggml's ksigns_iq2xs[i]: i with bit 7 set when i has an odd number of bits. */
static uint8_t ksigns(uint32_t i)
{
    i &= 127;
    return (uint8_t)(i | (uint32_t)(__builtin_popcount(i) & 1) << 7);
}

static float sign_of(uint8_t signs, int j) { return signs & (1u << j) ? -1.f : 1.f; }

/* 8 values db * grid[j] * sign_j. */
static void put8(float *y, float db, uint64_t grid, uint8_t signs)
{
    for (int j = 0; j < 8; ++j)
        y[j] = db * mq_grid_byte(grid, j) * sign_of(signs, j);
}

void mq_deq_iq2_xxs(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 66) {
        const float d = mq_get_f16(x);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint8_t *q = x + 2 + 8 * ib32; /* 4 grid indices, then 32 bits of signs + scale */
            const uint32_t aux1 = mf_rd32le(q + 4);
            const float db = d * (0.5f + (aux1 >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, y += 8)
                put8(y, db, mq_iq2xxs_grid[q[l]], ksigns(aux1 >> 7 * l));
        }
    }
}

void mq_deq_iq2_xs(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 74) {
        const float d = mq_get_f16(x);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint8_t sc = x[66 + ib32];
            const float db[2] = {d * (0.5f + (sc & 0xf)) * 0.25f, d * (0.5f + (sc >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint16_t q = mf_rd16le(x + 2 + 2 * (4 * ib32 + l));
                put8(y, db[l / 2], mq_iq2xs_grid[q & 511], ksigns(q >> 9));
            }
        }
    }
}

/* 4 values db * grid[j] * sign, signs bits from `first`. */
static void put4(float *y, float db, uint32_t grid, uint8_t signs, int first)
{
    for (int j = 0; j < 4; ++j)
        y[j] = db * mq_grid_byte(grid, j) * sign_of(signs, first + j);
}

void mq_deq_iq3_xxs(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 98) {
        const float d = mq_get_f16(x);
        const uint8_t *qs = x + 2, *scales_and_signs = x + 2 + QK_K / 4;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, qs += 8) {
            const uint32_t aux32 = mf_rd32le(scales_and_signs + 4 * ib32);
            const float db = d * (0.5f + (aux32 >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint8_t signs = ksigns(aux32 >> 7 * l);
                put4(y, db, mq_iq3xxs_grid[qs[2 * l + 0]], signs, 0);
                put4(y + 4, db, mq_iq3xxs_grid[qs[2 * l + 1]], signs, 4);
            }
        }
    }
}

/* One 32-value half of an IQ3_S pair: 9-bit grid indices (8 bits in qs, the
 * ninth from qh), explicit sign bytes. */
static void iq3s_32(float *y, float db, const uint8_t *qs, uint8_t qh, const uint8_t *signs)
{
    for (int l = 0; l < 4; ++l, y += 8) {
        const uint32_t g1 = mq_iq3s_grid[qs[2 * l + 0] | ((qh << (8 - 2 * l)) & 256)];
        const uint32_t g2 = mq_iq3s_grid[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)];
        put4(y, db, g1, signs[l], 0);
        put4(y + 4, db, g2, signs[l], 4);
    }
}

void mq_deq_iq3_s(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 110) {
        const float d = mq_get_f16(x);
        const uint8_t *qs = x + 2, *qh = x + 66, *signs = x + 74, *scales = x + 106;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32 += 2, qs += 16, qh += 2, signs += 8, y += 64) {
            const float db1 = d * (1 + 2 * (scales[ib32 / 2] & 0xf));
            const float db2 = d * (1 + 2 * (scales[ib32 / 2] >> 4));
            iq3s_32(y, db1, qs, qh[0], signs);
            iq3s_32(y + 32, db2, qs + 8, qh[1], signs + 4);
        }
    }
}
