/* quant_iq2.c - IQ2_XXS, IQ2_XS and IQ2_S quantization, as ggml's
 * quantize_row_iq2_{xxs,xs,s}_impl (llama.cpp b4747) computes it.
 *
 * Each group of 8 values becomes 8 magnitudes from a grid of 2-bit level
 * vectors (levels 1, 3, 5 in units of the sub-block scale) and 8 signs.
 * Per sub-block (32 values for XXS, 16 for XS/S) a range of trial scales is
 * searched: every group is rounded to the nearest lattice point, and where
 * that point is not on the grid, the best of its listed neighbours is taken;
 * the scale with the best weighted least-squares fit wins. Sub-block scales
 * are then stored as 4-bit multiples of the super-block scale.
 * Weights: imatrix * sqrt(sigma2 + x^2) (IQ2_S without imatrix: sigma2/4 +
 * x^2), sigma2 being the mean square of the super-block (twice that for
 * IQ2_S). */
#include "quant/iq_lattice.h"

#define IQ2_KMAXQ 3 /* levels 0..2 */

/* Grid index of levels L; L that are not a grid point (only from
 * degenerate input, where ggml aborts) give index 0. */
static int iq2_grid_index(const mq_lattice *lat, const int8_t *L)
{
    int gi = mq_lat_index(lat, mq_lat_pack(lat, L));
    return gi >= 0 ? gi : 0;
}

/* ------------------------------------------------------------ IQ2_XXS */

/* One 32-value sub-block of IQ2_XXS: levels L, signs, returns the scale. */
static float iq2_xxs_sub(const mq_lattice *lat, const float *xb, const float *weight, int8_t *L, uint8_t signs[4],
                         int grid_index[4])
{
    float xval[32], waux[32];
    for (int i = 0; i < 32; ++i)
        waux[i] = sqrtf(weight[i]);
    for (int k = 0; k < 4; ++k)
        signs[k] = mq_iq_even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
    float max = mq_max_ggml(xval, 32);
    if (max < GROUP_MAX_EPS) {
        memset(L, 0, 32);
        return -1; /* skipped: scale 0, nothing stored */
    }
    float scale = mq_make_qp_quants(32, IQ2_KMAXQ + 1, xval, (uint8_t *)L, weight);
    float eff_max = scale * IQ2_KMAXQ;
    float ids[13];
    for (int is = -6; is <= 6; ++is)
        ids[is + 6] = (2 * IQ2_KMAXQ - 1 + is * 0.1f) / eff_max;
    mq_trials t;
    mq_lat_trials(lat, 32, ids, 13, xval, weight, waux, &t);
    int best_s = mq_trials_best(&t, 13, &scale); /* none better: L keeps the previous levels, as in ggml */
    if (best_s >= 0)
        mq_trials_levels(lat, &t, 32, best_s, L);
    if (scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 4; ++k) {
            mq_lat_round(lat, id, scale, xval + 8 * k, waux + 8 * k, L + 8 * k);
            /* ggml then reloads L from the grid point: the same levels */
        }
        float sumqx, sumq2;
        mq_iq_sums(32, weight, xval, L, &sumqx, &sumq2);
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    if (scale < 0) { /* "should never happen" in ggml; flip scale and signs */
        scale = -scale;
        for (int k = 0; k < 4; ++k)
            signs[k] = (uint8_t)(~signs[k] & 127);
    }
    for (int k = 0; k < 4; ++k)
        grid_index[k] = iq2_grid_index(lat, L + 8 * k);
    return scale;
}

/* Block (66 bytes): d, then per 32 values two uint32: 4 grid indices (8
 * bits each), and 4 x 7 sign bits + a 4-bit scale in the top bits. */
void mq_quant_iq2_xxs(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ2_XXS);
    int8_t L[32] = {0};
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 66) {
        const float *xbl = x + QK_K * ibl;
        uint32_t q2[16] = {0};
        float scales[8], weight[32], max_scale = 0;
        memset(y, 0, 66);
        if (!lat || !qw)
            continue;
        const float sigma2 = mq_sum_squares(xbl, QK_K) / QK_K;
        for (int ib = 0; ib < 8; ++ib) {
            const float *xb = xbl + 32 * ib, *w = qw + QK_K * ibl + 32 * ib;
            for (int i = 0; i < 32; ++i)
                weight[i] = w[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            uint8_t signs[4];
            int gi[4];
            float scale = iq2_xxs_sub(lat, xb, weight, L, signs, gi);
            scales[ib] = scale < 0 ? 0 : scale;
            if (scale < 0)
                continue;
            for (int k = 0; k < 4; ++k) {
                q2[2 * ib + 0] |= (uint32_t)gi[k] << 8 * k;
                q2[2 * ib + 1] |= (uint32_t)signs[k] << 7 * k;
            }
            max_scale = mq_fmax_ggml(max_scale, scale);
        }
        if (!max_scale)
            continue;
        float d = max_scale / 31;
        mq_put_f16(y, d);
        float id = 1 / d;
        for (int ib = 0; ib < 8; ++ib)
            q2[2 * ib + 1] |= (uint32_t)mq_iq_scale_code(id, scales[ib], 15) << 28;
        for (int i = 0; i < 16; ++i)
            mf_wr32le(y + 2 + 4 * i, q2[i]);
    }
}

/* ------------------------------------------------------------ IQ2_XS, IQ2_S */

/* The 16-value sub-block search shared by IQ2_XS and IQ2_S: levels L for
 * both groups of 8 (the grid point's), returns the scale (negative: the
 * caller flips signs as ggml does). The scale search keeps the first best;
 * groups that were off the grid at the best scale are rounded again at the
 * fitted scale. L persists between calls like ggml's (a search that never
 * improves keeps the previous levels). */
static float iq2_sub16(const mq_lattice *lat, const float *xval, const float *weight, int8_t *L)
{
    float waux[16];
    bool on_grid[2] = {true, true};
    for (int i = 0; i < 16; ++i)
        waux[i] = sqrtf(weight[i]);
    float max = mq_max_ggml(xval, 16);
    float scale = max / (2 * IQ2_KMAXQ - 1);
    float ids[19];
    for (int is = -9; is <= 9; ++is)
        ids[is + 9] = (2 * IQ2_KMAXQ - 1 + is * 0.1f) / max;
    mq_trials t;
    mq_lat_trials(lat, 16, ids, 19, xval, weight, waux, &t);
    int best_s = mq_trials_best(&t, 19, &scale);
    if (best_s >= 0) {
        mq_trials_levels(lat, &t, 16, best_s, L);
        on_grid[0] = !(t.off_grid[0] >> best_s & 1);
        on_grid[1] = !(t.off_grid[1] >> best_s & 1);
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 2; ++k)
            if (!on_grid[k])
                mq_lat_round(lat, id, scale, xval + 8 * k, waux + 8 * k, L + 8 * k);
        float sumqx, sumq2;
        mq_iq_sums(16, weight, xval, L, &sumqx, &sumq2);
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    return scale;
}

/* Block (74 bytes): d, 32 uint16 (9-bit grid index | 7 sign bits << 9),
 * 8 bytes of two 4-bit scales. */
void mq_quant_iq2_xs(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ2_XS);
    int8_t L[16] = {0};
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 74) {
        const float *xbl = x + QK_K * ibl;
        uint16_t q2[32] = {0};
        float scales[16], weight[16], xval[16], max_scale = 0;
        memset(y, 0, 74);
        if (!lat || !qw)
            continue;
        const float sigma2 = mq_sum_squares(xbl, QK_K) / QK_K;
        for (int ib = 0; ib < 16; ++ib) {
            const float *xb = xbl + 16 * ib, *w = qw + QK_K * ibl + 16 * ib;
            for (int i = 0; i < 16; ++i)
                weight[i] = w[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            uint8_t signs[2];
            for (int k = 0; k < 2; ++k)
                signs[k] = mq_iq_even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = mq_max_ggml(xval, 16);
            if (max < GROUP_MAX_EPS) {
                scales[ib] = 0;
                memset(L, 0, 16);
                continue;
            }
            float scale = iq2_sub16(lat, xval, weight, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 2; ++k)
                    signs[k] = (uint8_t)(~signs[k] & 127);
            }
            for (int k = 0; k < 2; ++k)
                q2[2 * ib + k] = (uint16_t)(iq2_grid_index(lat, L + 8 * k) | signs[k] << 9);
            scales[ib] = scale;
            max_scale = mq_fmax_ggml(max_scale, scale);
        }
        if (!max_scale)
            continue;
        float d = max_scale / 31;
        mq_put_f16(y, d);
        float id = 1 / d;
        for (int ib = 0; ib < 16; ++ib)
            y[66 + ib / 2] |= (uint8_t)(mq_iq_scale_code(id, scales[ib], 15) << 4 * (ib % 2));
        for (int i = 0; i < 32; ++i)
            mf_wr16le(y + 2 + 2 * i, q2[i]);
    }
}

/* Block (82 bytes): d, 32 low bytes of 10-bit grid indices, 32 sign bytes
 * (8 explicit signs per group), 8 bytes of high index bits (2 per group),
 * 8 bytes of two 4-bit scales. */
void mq_quant_iq2_s(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ2_S);
    int8_t L[16] = {0};
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 82) {
        const float *xbl = x + QK_K * ibl;
        uint8_t *qs = y + 2, *signs_out = y + 2 + QK_K / 8, *qh = y + 66, *sc = y + 74;
        float scales[16], weight[16], xval[16], max_scale = 0;
        memset(y, 0, 82);
        if (!lat)
            continue;
        const float sigma2 = 2 * mq_sum_squares(xbl, QK_K) / QK_K;
        for (int ib = 0; ib < 16; ++ib) {
            const float *xb = xbl + 16 * ib;
            if (qw) {
                const float *w = qw + QK_K * ibl + 16 * ib;
                for (int i = 0; i < 16; ++i)
                    weight[i] = w[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; ++i)
                    weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            uint8_t signs[2] = {0, 0};
            for (int i = 0; i < 16; ++i) {
                xval[i] = xb[i] >= 0 ? xb[i] : -xb[i];
                if (!(xb[i] >= 0))
                    signs[i / 8] |= (uint8_t)(1 << (i % 8));
            }
            float max = mq_max_ggml(xval, 16);
            if (max < 1e-8f) { /* GROUP_MAX_EPS_IQ2_S */
                scales[ib] = 0;
                continue;
            }
            float scale = iq2_sub16(lat, xval, weight, L);
            if (scale < 0) {
                scale = -scale;
                signs[0] = (uint8_t)~signs[0];
                signs[1] = (uint8_t)~signs[1];
            }
            for (int k = 0; k < 2; ++k) {
                const int gi = iq2_grid_index(lat, L + 8 * k), i8 = 2 * ib + k;
                qs[i8] = (uint8_t)(gi & 255);
                qh[i8 / 4] |= (uint8_t)((gi >> 8) << 2 * (i8 % 4));
                signs_out[i8] = signs[k];
            }
            scales[ib] = scale;
            max_scale = mq_fmax_ggml(max_scale, scale);
        }
        if (!max_scale)
            continue;
        float d = max_scale / 31;
        mq_put_f16(y, d * 0.9875f);
        float id = 1 / d;
        for (int ib = 0; ib < 16; ++ib)
            sc[ib / 2] |= (uint8_t)(mq_iq_scale_code(id, scales[ib], 15) << 4 * (ib % 2));
    }
}
