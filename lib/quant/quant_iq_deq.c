/* quant_iq_deq.c - dequantization of the lattice i-quants IQ2_XXS, IQ2_XS,
 * IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M, as ggml's dequantize_row_*
 * computes them (same products in the same order, so the same floats).
 *
 * Layouts (bytes): IQ2_XXS 66: d[2] qs[64]; IQ2_XS 74: d[2] qs[64] scales[8];
 * IQ2_S 82: d[2] qs[32] signs[32] qh[8] scales[8];
 * IQ3_XXS 98: d[2] qs[64] scales_and_signs[32]; IQ3_S 110: d[2] qs[64] qh[8]
 * signs[32] scales[4]; IQ1_S 50: d[2] qs[32] qh[8 x u16];
 * IQ1_M 56: qs[32] qh[16] scales[4 x u16] (the fp16 d in their top nibbles).
 * In the IQ2/IQ3 types each group of 8 values is a grid point (magnitudes)
 * times signs; IQ2_XXS/IQ2_XS/IQ3_XXS store 7 sign bits and the 8th makes
 * the count of negative signs even (ksigns). IQ1 grid values are -1, 0, 1,
 * shifted by +-IQ1S_DELTA. */
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

/* IQ2_S magnitudes of a 2-bit lattice field (3 never occurs in the table). */
static const uint8_t iq2_magnitude[4] = {8, 25, 43, 0};

void mq_deq_iq2_s(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 82) {
        const float d = mq_get_f16(x);
        const uint8_t *qs = x + 2, *signs = x + 2 + QK_K / 8, *qh = x + 66, *scales = x + 74;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, qs += 4, signs += 4) {
            const float db[2] = {d * (0.5f + (scales[ib32] & 0xf)) * 0.25f, d * (0.5f + (scales[ib32] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint16_t entry = mq_kgrid_2bit_1024[qs[l] | ((qh[ib32] << (8 - 2 * l)) & 0x300)];
                for (int j = 0; j < 8; ++j)
                    y[j] = db[l / 2] * iq2_magnitude[mq_kgrid2_field(entry, j)] * sign_of(signs[l], j);
            }
        }
    }
}

/* IQ1 grid values of a 2-bit lattice field, and ggml's IQ1S_DELTA (which
 * IQ1_M's dequantizer uses as well). */
static const int8_t iq1_value[4] = {-1, 0, 1, 0};
#define IQ1S_DELTA 0.125f

/* 8 values dl * (grid + delta) of IQ1 grid point idx (0..2047). */
static void iq1_put8(float *y, float dl, int idx, float delta)
{
    const uint16_t entry = mq_kgrid_1bit_2048[idx];
    for (int j = 0; j < 8; ++j)
        y[j] = dl * (iq1_value[mq_kgrid2_field(entry, j)] + delta);
}

void mq_deq_iq1_s(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 50) {
        const float d = mq_get_f16(x);
        const uint8_t *qs = x + 2;
        for (int ib = 0; ib < QK_K / 32; ++ib, qs += 4) {
            const uint16_t qh = mf_rd16le(x + 34 + 2 * ib);
            const float dl = d * (2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -IQ1S_DELTA : IQ1S_DELTA;
            for (int l = 0; l < 4; ++l, y += 8)
                iq1_put8(y, dl, qs[l] | (((qh >> 3 * l) & 7) << 8), delta);
        }
    }
}

/* IQ1_M's super-block scale: an fp16 split over the top nibbles of the four
 * 16-bit scale words. */
static float iq1m_d(const uint8_t *scales)
{
    uint16_t sc[4];
    for (int k = 0; k < 4; ++k)
        sc[k] = mf_rd16le(scales + 2 * k);
    return mq_f32((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
}

void mq_deq_iq1_m(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 56) {
        const float d = iq1m_d(x + 48);
        const uint8_t *qs = x, *qh = x + 32;
        for (int ib = 0; ib < QK_K / 32; ++ib, qs += 4, qh += 2) {
            const uint16_t sc = mf_rd16le(x + 48 + 2 * (ib / 2));
            const float dl1 = d * (2 * ((sc >> (6 * (ib % 2) + 0)) & 0x7) + 1);
            const float dl2 = d * (2 * ((sc >> (6 * (ib % 2) + 3)) & 0x7) + 1);
            /* each qh byte: index bits 8-10 of two grid points (bits 0-2 and
             * 4-6) and their delta signs (bits 3 and 7) */
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint8_t h = qh[l / 2];
                const int idx = qs[l] | ((h << (l % 2 ? 4 : 8)) & 0x700);
                const float delta = h & (l % 2 ? 0x80 : 0x08) ? -IQ1S_DELTA : IQ1S_DELTA;
                iq1_put8(y, l < 2 ? dl1 : dl2, idx, delta);
            }
        }
    }
}
