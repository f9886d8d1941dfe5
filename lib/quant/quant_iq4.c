/* quant_iq4.c - IQ4_NL (32-element blocks) and IQ4_XS (256-element
 * super-blocks of 32 with 6-bit sub-scales): 4-bit indices into a fixed
 * non-linear table of 16 levels.
 *
 * Layouts: IQ4_NL 18 bytes: d[2] qs[16]; IQ4_XS 136 bytes: d[2] scales_h[2]
 * scales_l[4] qs[128]. Both go through ggml's quantize_row_iq4_nl_impl with
 * ntry = 7, with or without an importance matrix. */
#include "quant/qimpl.h"

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                         1,    13,   25,  38,  53,  69,  89,  113};

/* Index of the level nearest to x (sorted levels). Binary search, then the
 * closer neighbour, the upper one on a tie, compared as x - lo < hi - x in
 * float as ggml does (a NaN x ends on the last level). */
static int best_index_int8(int n, const int8_t *val, float x)
{
    if (x <= val[0])
        return 0;
    if (x >= val[n - 1])
        return n - 1;
    int ml = 0, mu = n - 1;
    while (mu - ml > 1) {
        int mav = (ml + mu) / 2;
        if (x < val[mav])
            mu = mav;
        else
            ml = mav;
    }
    return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

typedef struct iq4_out {
    uint8_t *d;        /* fp16 super-block scale */
    uint8_t *qs;       /* nibbles, SB/2 bytes */
    uint8_t *scales_h; /* IQ4_XS only: 2 bytes, 2 bits per sub-block */
    uint8_t *scales_l; /* IQ4_XS only: 4 bytes, 4 bits per sub-block */
} iq4_out;

/* Weighted sums of one trial: levels of id*x, sumqx and sumq2. */
static void iq4_trial(const float *xb, const float *weight, float id, uint8_t *Lb, float *psumqx, float *psumq2)
{
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
        int l = best_index_int8(16, kvalues_iq4nl, id * xb[j]);
        if (Lb)
            Lb[j] = (uint8_t)l;
        float q = kvalues_iq4nl[l];
        float w = weight[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
    }
    *psumqx = sumqx;
    *psumq2 = sumq2;
}

/* Best scale of one 32-element sub-block: start from max/values[0], refine
 * by least squares, then try 2*ntry+1 other inverse scales. Returns 0 for
 * an all-zero group (without touching Lb). */
static float iq4_block_scale(const float *xb, const float *weight, uint8_t *Lb, int ntry)
{
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
        float ax = fabsf(xb[j]);
        if (ax > amax) {
            amax = ax;
            max = xb[j];
        }
    }
    if (amax < GROUP_MAX_EPS)
        return 0;
    float d = ntry > 0 ? -max / kvalues_iq4nl[0] : max / kvalues_iq4nl[0];
    float sumqx, sumq2;
    iq4_trial(xb, weight, 1 / d, Lb, &sumqx, &sumq2);
    d = sumqx / sumq2; /* unguarded in the reference */
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; ++itry) {
        float id = (itry + kvalues_iq4nl[0]) / max;
        iq4_trial(xb, weight, id, NULL, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

float mq_iq4_block_scale_scalar(const float *xb, const float *weight, int ntry)
{
    uint8_t L[32];
    return iq4_block_scale(xb, weight, L, ntry);
}

const int8_t *mq_iq4_values(void) { return kvalues_iq4nl; }

/* ggml's quantize_row_iq4_nl_impl for SB = 32 (IQ4_NL) or 256 (IQ4_XS),
 * split in three: the weights of a super-block, the sub-block scales (eight
 * at a time in AVX2 lanes), and the rest, which stores the block. */
static void iq4_weights(int SB, const float *x, const float *qw, float *weight)
{
    float sigma2 = 0;
    for (int j = 0; j < SB; ++j)
        sigma2 += x[j] * x[j];
    sigma2 *= 2.f / SB;
    for (int j = 0; j < SB; ++j)
        weight[j] = qw ? qw[j] * sqrtf(sigma2 + x[j] * x[j]) : x[j] * x[j];
}

/* The scales of nb (<= 8) consecutive 32-value sub-blocks. The levels the
 * search finds are recomputed from the stored scales afterwards. */
static void iq4_scales(const float *x, const float *weight, int nb, int ntry, float *scales)
{
    if (nb == 8 && mq_simd_iq4_scales8(x, weight, kvalues_iq4nl, ntry, scales))
        return;
    uint8_t L[32];
    for (int k = 0; k < nb; ++k)
        scales[k] = iq4_block_scale(x + 32 * k, weight + 32 * k, L, ntry);
}

static void iq4_finish(int SB, const float *x, const float *scales, iq4_out o, int ntry)
{
    uint8_t L[QK_K] = {0};
    memset(o.qs, 0, (size_t)SB / 2);
    mq_put_f16(o.d, 0.f);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < SB / 32; ++ib) {
        const float d = scales[ib];
        if (fabsf(d) > amax_scale) {
            amax_scale = fabsf(d);
            max_scale = d;
        }
    }

    if (SB / 32 > 1) {
        memset(o.scales_h, 0, 2);
        uint16_t scales_h = 0;
        float d = -max_scale / 32;
        mq_put_f16(o.d, d);
        float id = d ? 1 / d : 0.f;
        for (int ib = 0; ib < SB / 32; ++ib) {
            int l = mq_clamp(mq_nearest_int(id * scales[ib]), -32, 31);
            float dl = d * l;
            float idl = dl ? 1 / dl : 0.f;
            for (int j = 0; j < 32; ++j)
                L[ib * 32 + j] = (uint8_t)best_index_int8(16, kvalues_iq4nl, idl * x[ib * 32 + j]);
            l += 32;
            if (ib % 2 == 0)
                o.scales_l[ib / 2] = (uint8_t)(l & 0xf);
            else
                o.scales_l[ib / 2] |= (uint8_t)((l & 0xf) << 4);
            scales_h |= (uint16_t)((l >> 4) << 2 * (ib % 8));
        }
        mf_wr16le(o.scales_h, scales_h);
    } else {
        mq_put_f16(o.d, scales[0]);
        if (ntry > 0) {
            float id = scales[0] ? 1 / scales[0] : 0;
            for (int j = 0; j < SB; ++j)
                L[j] = (uint8_t)best_index_int8(16, kvalues_iq4nl, id * x[j]);
        }
    }
    for (int i = 0; i < SB / 32; ++i)
        for (int j = 0; j < 16; ++j)
            o.qs[16 * i + j] = (uint8_t)(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

/* IQ4_NL: every 32 values are a super-block of their own (own sigma2);
 * eight of them share one batched scale search. */
void mq_quant_iq4_nl(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    for (int64_t ib = 0; ib < n / 32; ib += 8) {
        const int nb = n / 32 - ib < 8 ? (int)(n / 32 - ib) : 8;
        float weight[8 * 32], scales[8];
        for (int k = 0; k < nb; ++k)
            iq4_weights(32, x + 32 * (ib + k), qw ? qw + 32 * (ib + k) : NULL, weight + 32 * k);
        iq4_scales(x + 32 * ib, weight, nb, 7, scales);
        for (int k = 0; k < nb; ++k) {
            uint8_t *yb = y + 18 * (ib + k);
            iq4_out o = {yb, yb + 2, NULL, NULL};
            iq4_finish(32, x + 32 * (ib + k), scales + k, o, 7);
        }
    }
}

void mq_quant_iq4_xs(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    for (int64_t ib = 0; ib < n / QK_K; ++ib, y += 136) {
        float weight[QK_K], scales[QK_K / 32];
        iq4_weights(QK_K, x + QK_K * ib, qw ? qw + QK_K * ib : NULL, weight);
        iq4_scales(x + QK_K * ib, weight, 8, 7, scales);
        iq4_out o = {y, y + 8, y + 2, y + 4};
        iq4_finish(QK_K, x + QK_K * ib, scales, o, 7);
    }
}

void mq_deq_iq4_nl(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / 32; ++ib, x += 18, y += 32) {
        const float d = mq_get_f16(x);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * kvalues_iq4nl[x[2 + j] & 0xf];
            y[j + 16] = d * kvalues_iq4nl[x[2 + j] >> 4];
        }
    }
}

void mq_deq_iq4_xs(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n / QK_K; ++i, x += 136) {
        const float d = mq_get_f16(x);
        const uint16_t scales_h = mf_rd16le(x + 2);
        const uint8_t *qs = x + 8;
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32, qs += 16) {
            const int ls = ((x[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
            const float dl = d * (ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}
