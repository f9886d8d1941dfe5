/* quant_k.c - the K-quants: 256-element super-blocks of 16 or 32-element
 * sub-blocks, each with its own quantized scale (and min).
 *
 * Layouts (byte offsets), from ggml-common.h:
 *   Q2_K  84: scales[16] @0 (lo nibble scale, hi nibble min), qs[64] @16, d @80, dmin @82
 *   Q3_K 110: hmask[32] @0, qs[64] @32, scales[12] @96 (6-bit, packed), d @108
 *   Q4_K 144: d @0, dmin @2, scales[12] @4 (6-bit scale+min, packed), qs[128] @16
 *   Q5_K 176: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48
 *   Q6_K 210: ql[128] @0, qh[64] @128, scales[16] @192 (int8), d @208
 *   Q8_K 292: d (f32) @0, qs[256] @4, bsums[16] (int16) @260
 * Without an importance matrix ggml uses quantize_row_*_ref; with one, the
 * *_impl variants (Q3_K/Q6_K share the structure of their _ref). */
#include "quant/qimpl.h"

/* ------------------------------------------------------------ packing */

/* 2-bit levels: byte l of each 32-byte group holds elements l, l+32, l+64,
 * l+96 of its 128-element half (Q2_K, Q3_K low bits). */
static void pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

/* 4-bit levels: 32-byte groups hold elements j+l (low) and j+l+32 (high). */
static void pack_4bit(const uint8_t *L, uint8_t *qs)
{
    for (int j = 0; j < QK_K; j += 64, qs += 32)
        for (int l = 0; l < 32; ++l)
            qs[l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
}

/* 6-bit scale and min of sub-block j from the 12-byte K4 scale field. */
static void get_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m)
{
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

/* Inverse of get_scale_min_k4 for 8 (scale, min) pairs of 6 bits. */
static void put_scales_k4(const uint8_t *ls, const uint8_t *lm, uint8_t *sc)
{
    for (int j = 0; j < QK_K / 32; ++j) {
        if (j < 4) {
            sc[j] = ls[j];
            sc[j + 4] = lm[j];
        } else {
            sc[j + 4] = (uint8_t)((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            sc[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            sc[j - 0] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

/* Q3_K's 6-bit scale j, stored as (scale + 32). */
static int q3_scale(const uint8_t *sc, int j)
{
    int lo = j < 8 ? sc[j] & 0xF : sc[j - 8] >> 4;
    return (lo | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

static void put_q3_scale(uint8_t *sc, int j, int l)
{
    if (j < 8)
        sc[j] = (uint8_t)(l & 0xF);
    else
        sc[j - 8] |= (uint8_t)((l & 0xF) << 4);
    sc[j % 4 + 8] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
}

/* x*x summed over n values, in order. */
static float sum_sq(const float *x, int n)
{
    float s = 0;
    for (int l = 0; l < n; ++l)
        s += x[l] * x[l];
    return s;
}

static void imatrix_weights(const float *x, const float *qw, float sigma2, float *w, int n)
{
    for (int l = 0; l < n; ++l)
        w[l] = qw[l] * sqrtf(sigma2 + x[l] * x[l]);
}

/* ------------------------------------------------------------ Q2_K */


/* A row of a K type whose blocks are quantized one by one: quantize_row_*_ref
 * without importance weights, quantize_*_impl with. */
static void k_row(const float *x, uint8_t *y, int64_t n, const float *qw, int bytes,
                  void (*ref_block)(const float *x, uint8_t *y),
                  void (*imatrix_block)(const float *x, uint8_t *y, const float *qw))
{
    for (int64_t i = 0; i < n / QK_K; ++i) {
        if (qw)
            imatrix_block(x + i * QK_K, y + i * bytes, qw + i * QK_K);
        else
            ref_block(x + i * QK_K, y + i * bytes);
    }
}

/* Final pass shared by both Q2_K paths: levels from the stored fp16 scales. */
static void q2_requantize(const float *x, const uint8_t *scales, float dm, float mm, uint8_t *L)
{
    for (int j = 0; j < QK_K / 16; ++j) {
        const float d = dm * (scales[j] & 0xF);
        if (!d)
            continue;
        const float m = mm * (scales[j] >> 4);
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = (uint8_t)mq_clamp(mq_nearest_int((x[16 * j + ii] + m) / d), 0, 3);
    }
}

static void q2_k_ref_block(const float *x, uint8_t *y)
{
    uint8_t L[QK_K];
    float weights[QK_K], mins[QK_K / 16], scales[QK_K / 16];
    const float q4scale = 15.f;
    float max_scale = 0, max_min = 0;
    for (int l = 0; l < QK_K; ++l)
        weights[l] = fabsf(x[l]);
    for (int h = 0; h < 2; ++h)
        mq_make_qkx_quants8(false, 16, 3, x + 128 * h, weights + 128 * h, L + 128 * h, scales + 8 * h, mins + 8 * h,
                            -0.5f, 0.1f, 15, true);
    for (int j = 0; j < QK_K / 16; ++j) {
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    uint8_t *sc = y;
    if (max_scale > 0) {
        float iscale = q4scale / max_scale;
        for (int j = 0; j < QK_K / 16; ++j)
            sc[j] = (uint8_t)mq_nearest_int(iscale * scales[j]);
        mq_put_f16(y + 80, max_scale / q4scale);
    } else {
        memset(sc, 0, QK_K / 16);
        mq_put_f16(y + 80, 0.f);
    }
    if (max_min > 0) {
        float iscale = q4scale / max_min;
        for (int j = 0; j < QK_K / 16; ++j)
            sc[j] |= (uint8_t)((unsigned)mq_nearest_int(iscale * mins[j]) << 4);
        mq_put_f16(y + 82, max_min / q4scale);
    } else {
        mq_put_f16(y + 82, 0.f);
    }
    q2_requantize(x, sc, mq_get_f16(y + 80), mq_get_f16(y + 82), L);
    pack_2bit(L, y + 16);
}

static void q2_k_imatrix_block(const float *x, uint8_t *y, const float *qw)
{
    uint8_t L[QK_K], Ls[QK_K / 16], Lm[QK_K / 16];
    float mins[QK_K / 16], scales[QK_K / 16], sw[QK_K / 16], weight[QK_K];
    const float sigma2 = sum_sq(x, QK_K) / QK_K; /* no factor 2 here, unlike the others */
    for (int j = 0; j < QK_K / 16; ++j) {
        imatrix_weights(x + 16 * j, qw + 16 * j, sigma2, weight + 16 * j, 16);
        sw[j] = 0;
        for (int l = 0; l < 16; ++l)
            sw[j] += weight[16 * j + l];
    }
    for (int h = 0; h < 2; ++h)
        mq_make_qkx_quants8(true, 16, 3, x + 128 * h, weight + 128 * h, L + 128 * h, scales + 8 * h, mins + 8 * h,
                            -0.9f, 0.05f, 36, false);
    float dm = mq_make_qp_quants(QK_K / 16, 15, scales, Ls, sw);
    float mm = mq_make_qp_quants(QK_K / 16, 15, mins, Lm, sw);
    mq_put_f16(y + 80, dm);
    mq_put_f16(y + 82, mm);
    for (int j = 0; j < QK_K / 16; ++j)
        y[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));
    q2_requantize(x, y, mq_get_f16(y + 80), mq_get_f16(y + 82), L);
    pack_2bit(L, y + 16);
}

void mq_quant_q2_k(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    k_row(x, y, n, qw, 84, q2_k_ref_block, q2_k_imatrix_block);
}

void mq_deq_q2_k(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 84) {
        const float d = mq_get_f16(x + 80), min = mq_get_f16(x + 82);
        const uint8_t *q = x + 16;
        int is = 0;
        for (int half = 0; half < 2; ++half, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int g = 0; g < 2; ++g) { /* two 16-element sub-blocks */
                    uint8_t sc = x[is++];
                    float dl = d * (sc & 0xF), ml = min * (sc >> 4);
                    for (int l = 0; l < 16; ++l)
                        *y++ = dl * ((q[l + 16 * g] >> shift) & 3) - ml;
                }
            }
        }
    }
}

/* ------------------------------------------------------------ Q3_K */

/* Levels from the stored scales, then the high bits into hmask (bit k of
 * hmask[m] is element 32k + m) and the low two bits into qs. */
static void q3_finish(const float *x, int8_t *L, uint8_t *y)
{
    const uint8_t *sc = y + 96;
    const float d_all = mq_get_f16(y + 108);
    for (int j = 0; j < QK_K / 16; ++j) {
        float d = d_all * q3_scale(sc, j);
        if (!d || mq_simd_q3_group_levels(x + 16 * j, d, L + 16 * j))
            continue;
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = (int8_t)(mq_clamp(mq_nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
    }
    /* branch-free (levels of real data are above 3 about half the time, a
     * branch mispredicted that often cost a third of Q3_K's time); the
     * inner loop over 32 bytes is one vector for the compiler */
    uint8_t *hmask = y;
    memset(hmask, 0, QK_K / 8);
    for (int k = 0; k < QK_K / 32; ++k)
        for (int m = 0; m < 32; ++m) {
            uint8_t high = (uint8_t)(L[32 * k + m] > 3);
            hmask[m] = (uint8_t)(hmask[m] | (high << k));
            L[32 * k + m] = (int8_t)(L[32 * k + m] - 4 * high);
        }
    pack_2bit((const uint8_t *)L, y + 32);
}

static void q3_k_ref_block(const float *x, uint8_t *y)
{
    int8_t L[QK_K];
    float scales[QK_K / 16];
    float max_scale = 0, amax = 0;
    for (int h = 0; h < 2 && !mq_simd_q3_quants16(x, L, scales); ++h)
        if (!mq_simd_q3_quants8(16, 4, x + 128 * h, L + 128 * h, scales + 8 * h))
            for (int j = 8 * h; j < 8 * h + 8; ++j)
                scales[j] = mq_make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    for (int j = 0; j < QK_K / 16; ++j) {
        float scale = fabsf(scales[j]);
        if (scale > amax) {
            amax = scale;
            max_scale = scales[j];
        }
    }
    uint8_t *sc = y + 96;
    memset(sc, 0, 12);
    if (max_scale) {
        float iscale = -32.f / max_scale;
        for (int j = 0; j < QK_K / 16; ++j) {
            int l = (int8_t)mq_nearest_int(iscale * scales[j]); /* ggml stores it in an int8_t first */
            put_q3_scale(sc, j, mq_clamp(l, -32, 31) + 32);
        }
        mq_put_f16(y + 108, 1 / iscale);
    } else {
        mq_put_f16(y + 108, 0.f);
    }
    q3_finish(x, L, y);
}

static void q3_k_imatrix_block(const float *x, uint8_t *y, const float *qw)
{
    int8_t L[QK_K], Ls[QK_K / 16];
    float scales[QK_K / 16], weight[QK_K], sw[QK_K / 16];
    const float sigma2 = 2 * sum_sq(x, QK_K) / QK_K;
    for (int j = 0; j < QK_K / 16; ++j) {
        imatrix_weights(x + 16 * j, qw + 16 * j, sigma2, weight + 16 * j, 16);
        float sumw = 0;
        for (int l = 0; l < 16; ++l)
            sumw += weight[16 * j + l];
        sw[j] = sumw;
    }
    if (!mq_simd_qx_quants16(16, 4, x, L, 1, weight, scales))
        for (int h = 0; h < 2; ++h)
            mq_make_qx_quants8(16, 4, x + 128 * h, L + 128 * h, 1, weight + 128 * h, scales + 8 * h);
    uint8_t *sc = y + 96;
    memset(sc, 0, 12);
    float d_block = mq_make_qx_quants(QK_K / 16, 32, scales, Ls, 1, sw);
    for (int j = 0; j < QK_K / 16; ++j)
        put_q3_scale(sc, j, Ls[j]);
    mq_put_f16(y + 108, d_block);
    q3_finish(x, L, y);
}

void mq_quant_q3_k(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    k_row(x, y, n, qw, 110, q3_k_ref_block, q3_k_imatrix_block);
}

void mq_deq_q3_k(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 110) {
        const float d_all = mq_get_f16(x + 108);
        const uint8_t *hm = x, *q = x + 32;
        int is = 0;
        uint8_t m = 1;
        for (int half = 0; half < 2; ++half, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = (uint8_t)(m << 1)) {
                for (int g = 0; g < 2; ++g) {
                    float dl = d_all * q3_scale(x + 96, is++);
                    for (int l = 16 * g; l < 16 * g + 16; ++l)
                        *y++ = dl * (((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
                }
            }
        }
    }
}

/* ------------------------------------------------------------ Q4_K / Q5_K */

/* Levels in [0, nmax] from the stored fp16 d/dmin and 6-bit scales. */
static void k4_requantize(const float *x, const uint8_t *y, int nmax, uint8_t *L)
{
    const float dd = mq_get_f16(y), dmin = mq_get_f16(y + 2);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, y + 4, &sc, &m);
        const float d = dd * sc;
        if (!d)
            continue;
        const float dm = dmin * m;
        for (int ii = 0; ii < 32; ++ii)
            L[32 * j + ii] = (uint8_t)mq_clamp(mq_nearest_int((x[32 * j + ii] + dm) / d), 0, nmax);
    }
}

/* The _ref scale/min choice of Q4_K (nmax 15) and Q5_K (nmax 31): a
 * make_qkx2_quants search per 32 values, weighted by rms + |x|. */
static void k4_ref_scales(const float *x, uint8_t *y, uint8_t *L, int nmax, float rmin, float rdelta, int nstep)
{
    uint8_t ls[QK_K / 32], lm[QK_K / 32];
    float weights[QK_K], mins[QK_K / 32], scales[QK_K / 32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < QK_K / 32; ++j) {
        float av_x = sqrtf(sum_sq(x + 32 * j, 32) / 32);
        for (int l = 0; l < 32; ++l)
            weights[32 * j + l] = av_x + fabsf(x[32 * j + l]);
    }
    mq_make_qkx_quants8(false, 32, nmax, x, weights, L, scales, mins, rmin, rdelta, nstep, false);
    for (int j = 0; j < QK_K / 32; ++j) {
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < QK_K / 32; ++j) {
        ls[j] = (uint8_t)mq_min(63, (uint8_t)mq_nearest_int(inv_scale * scales[j]));
        lm[j] = (uint8_t)mq_min(63, (uint8_t)mq_nearest_int(inv_min * mins[j]));
    }
    put_scales_k4(ls, lm, y + 4);
    mq_put_f16(y, max_scale / 63.f);
    mq_put_f16(y + 2, max_min / 63.f);
}

/* The imatrix scale/min choice: make_qkx3_quants per 32 values, then
 * make_qp_quants for the 6-bit scales and mins (Q5_K caps those at 63 once
 * more, which matters only for levels that wrapped around). */
static void k4_imatrix_scales(const float *x, uint8_t *y, uint8_t *L, int nmax, const float *qw)
{
    uint8_t Ls[QK_K / 32], Lm[QK_K / 32];
    float weights[QK_K], sw[QK_K / 32], mins[QK_K / 32], scales[QK_K / 32];
    const float sigma2 = 2 * sum_sq(x, QK_K) / QK_K;
    for (int j = 0; j < QK_K / 32; ++j) {
        imatrix_weights(x + 32 * j, qw + 32 * j, sigma2, weights + 32 * j, 32);
        float sumw = 0;
        for (int l = 0; l < 32; ++l)
            sumw += weights[32 * j + l];
        sw[j] = sumw;
    }
    mq_make_qkx_quants8(true, 32, nmax, x, weights, L, scales, mins, -0.9f, 0.05f, 36, false);
    float d_block = mq_make_qp_quants(QK_K / 32, 63, scales, Ls, sw);
    float m_block = mq_make_qp_quants(QK_K / 32, 63, mins, Lm, sw);
    if (nmax == 31) {
        for (int j = 0; j < QK_K / 32; ++j) {
            Ls[j] = (uint8_t)mq_min(63, Ls[j]);
            Lm[j] = (uint8_t)mq_min(63, Lm[j]);
        }
    }
    put_scales_k4(Ls, Lm, y + 4);
    mq_put_f16(y, d_block);
    mq_put_f16(y + 2, m_block);
}

/* Q4_K and Q5_K: a scale and a min per 32 values (make_qkx2_quants with the
 * type's search range, or the imatrix search), then the levels again from
 * the stored scales, packed. */
typedef struct k4_type {
    int nmax, bytes;
    float rmin, rdelta;
    int nstep;
    void (*pack)(const uint8_t *L, uint8_t *y);
} k4_type;

static void k4_row(const k4_type *t, const float *x, uint8_t *y, int64_t n, const float *qw)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K, y += t->bytes) {
        uint8_t L[QK_K];
        if (qw)
            k4_imatrix_scales(x, y, L, t->nmax, qw + i * QK_K);
        else
            k4_ref_scales(x, y, L, t->nmax, t->rmin, t->rdelta, t->nstep);
        k4_requantize(x, y, t->nmax, L);
        t->pack(L, y);
    }
}

static void pack_q4_k(const uint8_t *L, uint8_t *y)
{
    pack_4bit(L, y + 16);
}

void mq_quant_q4_k(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    static const k4_type t = {15, 144, -1.f, 0.1f, 20, pack_q4_k};
    k4_row(&t, x, y, n, qw);
}

void mq_deq_q4_k(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 144) {
        const float d = mq_get_f16(x), min = mq_get_f16(x + 2);
        const uint8_t *q = x + 16;
        for (int is = 0; is < QK_K / 32; is += 2, q += 32) {
            uint8_t sc, m;
            get_scale_min_k4(is + 0, x + 4, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            get_scale_min_k4(is + 1, x + 4, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * (q[l] >> 4) - m2;
        }
    }
}

/* 5-bit levels: low nibbles as in pack_4bit, bit 4 of element 64k + j into
 * bit 2k of qh[j], of element 64k + 32 + j into bit 2k+1. */
static void pack_5bit(const uint8_t *L, uint8_t *qh, uint8_t *ql)
{
    memset(qh, 0, QK_K / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < QK_K; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j], l2 = L[n + j + 32];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] |= m1;
            }
            if (l2 > 15) {
                l2 -= 16;
                qh[j] |= m2;
            }
            ql[j] = (uint8_t)(l1 | (l2 << 4));
        }
        m1 = (uint8_t)(m1 << 2);
        m2 = (uint8_t)(m2 << 2);
    }
}

static void pack_q5_k(const uint8_t *L, uint8_t *y)
{
    pack_5bit(L, y + 16, y + 48);
}

void mq_quant_q5_k(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    static const k4_type t = {31, 176, -0.5f, 0.1f, 15, pack_q5_k};
    k4_row(&t, x, y, n, qw);
}

void mq_deq_q5_k(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 176) {
        const float d = mq_get_f16(x), min = mq_get_f16(x + 2);
        const uint8_t *qh = x + 16, *ql = x + 48;
        uint8_t u1 = 1, u2 = 2;
        for (int is = 0; is < QK_K / 32; is += 2, ql += 32) {
            uint8_t sc, m;
            get_scale_min_k4(is + 0, x + 4, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            get_scale_min_k4(is + 1, x + 4, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
            u1 = (uint8_t)(u1 << 2);
            u2 = (uint8_t)(u2 << 2);
        }
    }
}

/* ------------------------------------------------------------ Q6_K */

static void pack_6bit(const int8_t *Ls, uint8_t *ql, uint8_t *qh)
{
    const uint8_t *L = (const uint8_t *)Ls;
    for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32) {
        for (int l = 0; l < 32; ++l) {
            const uint8_t q1 = L[j + l + 0] & 0xF, q2 = L[j + l + 32] & 0xF;
            const uint8_t q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
            ql[l + 0] = (uint8_t)(q1 | (q3 << 4));
            ql[l + 32] = (uint8_t)(q2 | (q4 << 4));
            qh[l] = (uint8_t)((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                              ((L[j + l + 96] >> 4) << 6));
        }
    }
}

/* qw: NULL (weights x^2) or the raw importance of the block (ggml passes it
 * unscaled here). */
static void q6_k_block(const float *x, uint8_t *y, const float *qw)
{
    int8_t L[QK_K];
    float scales[QK_K / 16];
    float max_scale = 0, max_abs_scale = 0;
    if (!mq_simd_qx_quants16(16, 32, x, L, 1, qw, scales))
        for (int h = 0; h < 2; ++h)
            mq_make_qx_quants8(16, 32, x + 128 * h, L + 128 * h, 1, qw ? qw + 128 * h : NULL, scales + 8 * h);
    for (int ib = 0; ib < QK_K / 16; ++ib) {
        const float scale = scales[ib];
        const float abs_scale = fabsf(scale);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }
    if (max_abs_scale < GROUP_MAX_EPS) {
        memset(y, 0, 210);
        return;
    }
    int8_t *sc = (int8_t *)(y + 192);
    float iscale = -128.f / max_scale;
    mq_put_f16(y + 208, 1 / iscale);
    for (int ib = 0; ib < QK_K / 16; ++ib)
        sc[ib] = (int8_t)mq_min(127, mq_nearest_int(iscale * scales[ib]));
    const float dd = mq_get_f16(y + 208);
    for (int j = 0; j < QK_K / 16; ++j) {
        float d = dd * sc[j];
        if (!d)
            continue;
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = (int8_t)(mq_clamp(mq_nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
    }
    pack_6bit(L, y, y + 128);
}

void mq_quant_q6_k(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    for (int64_t i = 0; i < n / QK_K; ++i)
        q6_k_block(x + i * QK_K, y + i * 210, qw ? qw + i * QK_K : NULL);
}

void mq_deq_q6_k(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 210) {
        const float d = mq_get_f16(x + 208);
        const uint8_t *ql = x, *qh = x + 128;
        const int8_t *sc = (const int8_t *)(x + 192);
        for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                int is = l / 16;
                const int q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l + 0] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
        }
    }
}

/* ------------------------------------------------------------ Q8_K */

void mq_deq_q8_k(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 292) {
        float d;
        uint32_t u = mf_rd32le(x);
        memcpy(&d, &u, 4);
        for (int j = 0; j < QK_K; ++j)
            *y++ = d * (int8_t)x[4 + j];
    }
}
