/* quant_legacy.c - the 32-element block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
 *
 * Without an importance matrix ggml uses the "_ref" rounding quantizers;
 * with one, Q4_0/Q5_0 search a scale with make_qx_quants and Q4_1/Q5_1 a
 * scale and minimum with make_qkx3_quants, weighting each value by
 * imatrix[col] * sqrt(sigma2 + x^2) where sigma2 is the row's mean square.
 *
 * Layouts (bytes): Q4_0 d[2] qs[16]; Q4_1 d[2] m[2] qs[16];
 * Q5_0 d[2] qh[4] qs[16]; Q5_1 d[2] m[2] qh[4] qs[16]; Q8_0 d[2] qs[32]; Nibble j of qs holds element j (low) and j+16 (high). */
#include "quant/qimpl.h"

#include <float.h>

#define QK 32

/* ---------------------------------------------------------- block scans */

/* The value of largest magnitude; the first one wins a tie (ggml: `amax < |v|`). */
static float max_by_abs(const float *x)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < QK; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

static void min_max(const float *x, float *pmin, float *pmax)
{
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < QK; j++) {
        if (x[j] < min)
            min = x[j];
        if (x[j] > max)
            max = x[j];
    }
    *pmin = min;
    *pmax = max;
}

/* Mean of x^2 over the whole row, accumulated in order (the imatrix paths). */
static float row_sigma2(const float *x, int64_t n)
{
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; j++)
        sum_x2 += x[j] * x[j];
    return sum_x2 / n;
}

static void imatrix_weights(const float *xb, const float *qw, float sigma2, float *w)
{
    for (int j = 0; j < QK; j++)
        w[j] = qw[j] * sqrtf(sigma2 + xb[j] * xb[j]);
}

/* Packs 5-bit values: low nibbles into qs, bit 4 of L[j] into bit j of qh. */
static void pack_q5(const uint8_t *L, uint8_t *qh4, uint8_t *qs)
{
    if (mq_simd_pack_q5(L, qh4, qs))
        return;
    uint32_t qh = 0;
    for (int j = 0; j < QK / 2; j++) {
        qs[j] = (uint8_t)((L[j] & 0x0F) | ((L[j + 16] & 0x0F) << 4));
        qh |= ((L[j] & 0x10u) >> 4) << j;
        qh |= ((L[j + 16] & 0x10u) >> 4) << (j + QK / 2);
    }
    mf_wr32le(qh4, qh);
}

static void pack_q4(const uint8_t *L, uint8_t *qs)
{
    if (mq_simd_pack_q4(L, qs))
        return;
    for (int j = 0; j < QK / 2; j++)
        qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
}

/* The Q4_0/Q5_0 reference rounding (nmax 8 / 16): d = max/-nmax with max
 * the first value of largest magnitude, L = min(2nmax-1, (int8_t)(x/d +
 * nmax + 0.5)); the AVX2 path when the block holds no NaN. */
static void sym_ref_levels(const float *x, int nmax, uint8_t *y, uint8_t *L)
{
    float max;
    const bool simd = mq_simd_max_by_abs32(x, &max);
    if (!simd)
        max = max_by_abs(x);
    const float d = max / -nmax;
    const float id = d ? 1.0f / d : 0.0f;
    const float bias = nmax + 0.5f;
    mq_put_f16(y, d);
    if (simd) {
        mq_simd_offset_levels32(x, id, bias, 2 * nmax - 1, L);
        return;
    }
    for (int j = 0; j < QK; j++)
        L[j] = (uint8_t)mq_min(2 * nmax - 1, mq_to_i8(x[j] * id + bias));
}

/* The imatrix path of the 32-blocks (ggml's quantize_row_*_impl): weights
 * qw*sqrt(sigma2 + x^2), then make_qx_quants (symmetric types) or
 * make_qkx3_quants (with a min) per block, eight blocks per batch (AVX2
 * lanes, see quant_simd_search.c). put stores one block. */
typedef void (*put_block_fn)(uint8_t *y, float d, float the_min, const uint8_t *L);

static void imatrix_row(const float *x, uint8_t *y, int64_t n, const float *qw, bool asym, int nmax, int bytes,
                        put_block_fn put)
{
    const float sigma2 = row_sigma2(x, n);
    for (int64_t ib = 0; ib < n / QK; ib += 8) {
        const int nb = n / QK - ib < 8 ? (int)(n / QK - ib) : 8;
        float w[8 * QK], d[8], min[8] = {0};
        uint8_t L[8 * QK], Laux[QK];
        const float *xb = x + ib * QK;
        for (int k = 0; k < nb; k++)
            imatrix_weights(xb + k * QK, qw + (ib + k) * QK, sigma2, w + k * QK);
        if (nb == 8 && asym)
            mq_make_qkx_quants8(true, QK, nmax, xb, w, L, d, min, -0.9f, 0.05f, 36, false);
        else if (nb == 8)
            mq_make_qx_quants8(QK, nmax, xb, (int8_t *)L, 1, w, d);
        for (int k = 0; nb < 8 && k < nb; k++)
            d[k] = asym ? mq_make_qkx3_quants(QK, nmax, xb + k * QK, w + k * QK, L + k * QK, &min[k], Laux, -0.9f,
                                              0.05f, 36, false)
                        : mq_make_qx_quants(QK, nmax, xb + k * QK, (int8_t *)L + k * QK, 1, w + k * QK);
        for (int k = 0; k < nb; k++)
            put(y + (ib + k) * bytes, d[k], min[k], L + k * QK);
    }
}

/* A legacy type: its reference block quantizer (no importance), how the
 * imatrix search stores a block, with a min or not, the top level, the
 * block's bytes. */
typedef struct legacy_type {
    mf_dtype dt;
    void (*ref_block)(const float *x, uint8_t *y);
    put_block_fn put;
    bool asym;
    int nmax, bytes;
} legacy_type;

/* quantize_row_*_ref without importance weights, quantize_*_impl with. */
static void legacy_row(const legacy_type *t, const float *x, uint8_t *y, int64_t n,
                       const float *qw)
{
    if (!qw) {
        if (mq_simd512_legacy_row(t->dt, x, y, n, t->ref_block))
            return;
        for (int64_t ib = 0; ib < n / QK; ib++)
            t->ref_block(x + ib * QK, y + ib * t->bytes);
        return;
    }
    imatrix_row(x, y, n, qw, t->asym, t->nmax, t->bytes, t->put);
}

static void put_q4_0(uint8_t *y, float d, float the_min, const uint8_t *L)
{
    (void)the_min;
    mq_put_f16(y, d);
    pack_q4(L, y + 2);
}

static void put_q5_0(uint8_t *y, float d, float the_min, const uint8_t *L)
{
    (void)the_min;
    mq_put_f16(y, d);
    pack_q5(L, y + 2, y + 6);
}

static void put_q4_1(uint8_t *y, float d, float the_min, const uint8_t *L)
{
    mq_put_f16(y, d);
    mq_put_f16(y + 2, -the_min);
    pack_q4(L, y + 4);
}

static void put_q5_1(uint8_t *y, float d, float the_min, const uint8_t *L)
{
    mq_put_f16(y, d);
    mq_put_f16(y + 2, -the_min);
    pack_q5(L, y + 4, y + 8);
}

/* ---------------------------------------------------------- Q4_0 */

static void q4_0_ref_block(const float *x, uint8_t *y)
{
    uint8_t L[QK];
    sym_ref_levels(x, 8, y, L);
    pack_q4(L, y + 2);
}

void mq_quant_q4_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    static const legacy_type t = {MF_Q4_0, q4_0_ref_block, put_q4_0, false, 8, 18};
    legacy_row(&t, x, y, n, qw);
}

void mq_deq_q4_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / QK; ib++, x += 18, y += QK) {
        const float d = mq_get_f16(x);
        for (int j = 0; j < QK / 2; j++) {
            y[j] = ((x[2 + j] & 0x0F) - 8) * d;
            y[j + 16] = ((x[2 + j] >> 4) - 8) * d;
        }
    }
}

/* ---------------------------------------------------------- Q4_1 */

static void q4_1_ref_block(const float *x, uint8_t *y)
{
    float min, max;
    const bool simd = mq_simd_min_max32(x, &min, &max);
    if (!simd)
        min_max(x, &min, &max);
    const float d = (max - min) / 15;
    const float id = d ? 1.0f / d : 0.0f;
    uint8_t L[QK];
    mq_put_f16(y, d);
    mq_put_f16(y + 2, min);
    if (simd)
        mq_simd_asym_levels32(x, min, id, 15, L);
    else
        for (int j = 0; j < QK; j++)
            L[j] = (uint8_t)mq_min(15, mq_to_i8((x[j] - min) * id + 0.5f));
    pack_q4(L, y + 4);
}

void mq_quant_q4_1(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    static const legacy_type t = {MF_Q4_1, q4_1_ref_block, put_q4_1, true, 15, 20};
    legacy_row(&t, x, y, n, qw);
}

void mq_deq_q4_1(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / QK; ib++, x += 20, y += QK) {
        const float d = mq_get_f16(x), m = mq_get_f16(x + 2);
        for (int j = 0; j < QK / 2; j++) {
            y[j] = (x[4 + j] & 0x0F) * d + m;
            y[j + 16] = (x[4 + j] >> 4) * d + m;
        }
    }
}

/* ---------------------------------------------------------- Q5_0 */

static void q5_0_ref_block(const float *x, uint8_t *y)
{
    uint8_t L[QK];
    sym_ref_levels(x, 16, y, L);
    pack_q5(L, y + 2, y + 6);
}

void mq_quant_q5_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    static const legacy_type t = {MF_Q5_0, q5_0_ref_block, put_q5_0, false, 16, 22};
    legacy_row(&t, x, y, n, qw);
}

/* The fifth bit of element j is bit j of qh (j < 16) or bit j+16 for the
 * high halves; ggml extracts both with one shift pattern. */
static void unpack_q5(const uint8_t *qh4, const uint8_t *qs, int *q)
{
    const uint32_t qh = mf_rd32le(qh4);
    for (int j = 0; j < QK / 2; j++) {
        q[j] = (qs[j] & 0x0F) | (int)(((qh >> j) << 4) & 0x10);
        q[j + 16] = (qs[j] >> 4) | (int)((qh >> (j + 12)) & 0x10);
    }
}

void mq_deq_q5_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / QK; ib++, x += 22, y += QK) {
        const float d = mq_get_f16(x);
        int q[QK];
        unpack_q5(x + 2, x + 6, q);
        for (int j = 0; j < QK; j++)
            y[j] = (q[j] - 16) * d;
    }
}

/* ---------------------------------------------------------- Q5_1 */

static void q5_1_ref_block(const float *x, uint8_t *y)
{
    float min, max;
    const bool simd = mq_simd_min_max32(x, &min, &max);
    if (!simd)
        min_max(x, &min, &max);
    const float d = (max - min) / 31;
    const float id = d ? 1.0f / d : 0.0f;
    uint8_t L[QK];
    mq_put_f16(y, d);
    mq_put_f16(y + 2, min);
    if (simd)
        mq_simd_asym_levels32(x, min, id, -1, L);
    else
        for (int j = 0; j < QK; j++) /* (uint8_t)(x + 0.5f), no cap */
            L[j] = mq_to_u8((x[j] - min) * id + 0.5f);
    pack_q5(L, y + 4, y + 8);
}

void mq_quant_q5_1(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    static const legacy_type t = {MF_Q5_1, q5_1_ref_block, put_q5_1, true, 31, 24};
    legacy_row(&t, x, y, n, qw);
}

void mq_deq_q5_1(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / QK; ib++, x += 24, y += QK) {
        const float d = mq_get_f16(x), m = mq_get_f16(x + 2);
        int q[QK];
        unpack_q5(x + 4, x + 8, q);
        for (int j = 0; j < QK; j++)
            y[j] = q[j] * d + m;
    }
}

/* ---------------------------------------------------------- Q8_0 */

/* ggml's MAX(a, b) is (a > b ? a : b); kept so NaN ordering matches. */
static float q8_amax(const float *x)
{
    float amax = 0.0f;
    for (int j = 0; j < QK; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

void mq_quant_q8_0_scalar_block(const float *x, uint8_t *y)
{
    const float d = q8_amax(x) / 127;
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y, d);
    for (int j = 0; j < QK; j++) /* roundf: ties away from zero */
        y[2 + j] = (uint8_t)mq_to_i8(roundf(x[j] * id));
}

/* Q8_0 ignores the importance matrix. */
void mq_quant_q8_0(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    if (mq_simd512_legacy_row(MF_Q8_0, x, y, n, mq_quant_q8_0_scalar_block) || mq_simd_q8_0(x, y, n))
        return;
    for (int64_t ib = 0; ib < n / QK; ib++)
        mq_quant_q8_0_scalar_block(x + ib * QK, y + ib * 34);
}

void mq_deq_q8_0(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / QK; ib++, x += 34, y += QK) {
        const float d = mq_get_f16(x);
        for (int j = 0; j < QK; j++)
            y[j] = (int8_t)x[2 + j] * d;
    }
}

