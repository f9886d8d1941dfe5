/* quant_iq3.c - IQ3_XXS and IQ3_S quantization, as ggml's
 * quantize_row_iq3_xxs_impl / quantize_row_iq3_s_impl (llama.cpp b4747)
 * compute it.
 *
 * Groups of 4 values become 4 magnitudes from a grid of 3-bit level vectors
 * (levels 1, 3, ..., 15 in units of the sub-block scale), searched over 31
 * (XXS) or 19 (S) trial scales per 32-value sub-block like the IQ2 types
 * (see quant_iq2.c). IQ3_XXS stores 7 signs per 8 values (even parity),
 * IQ3_S all 8 and a 9th index bit. Weights: imatrix * sqrt(sigma2 + x^2)
 * with sigma2 twice the mean square of the super-block, or x^2. */
#include "quant/iq_lattice.h"

#define IQ3_KMAXQ 8 /* levels 0..7 */

static int iq3_grid_index(const mq_lattice *lat, const int8_t *L)
{
    int gi = mq_lat_index(lat, mq_lat_pack(lat, L));
    return gi >= 0 ? gi : 0; /* not on the grid: ggml aborts */
}

static void iq3_weights(const float *xb, const float *qw, float sigma2, float *weight, float *waux)
{
    for (int i = 0; i < 32; ++i)
        weight[i] = qw ? qw[i] * sqrtf(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
    for (int i = 0; i < 32; ++i)
        waux[i] = sqrtf(weight[i]);
}

/* The scale search of one 32-value sub-block: nstep trial inverse scales
 * (15 + 0.2*is)/max for is in [-nstep, nstep]; then the groups that were off
 * the grid at the best scale (all groups when `redo_all`) are rounded again
 * at the fitted scale. L and on_grid persist between calls as in ggml.
 * Returns the scale (negative: the caller flips the signs). */
static float iq3_search(const mq_lattice *lat, const float *xval, const float *weight, const float *waux, float max,
                        int nstep, bool redo_all, int8_t *L, bool *on_grid)
{
    float ids[MQ_TRIALS_MAX];
    float scale = max / (2 * IQ3_KMAXQ - 1);
    const int ns = 2 * nstep + 1; /* nstep <= 15 */
    for (int is = -nstep; is <= nstep; ++is)
        ids[is + nstep] = (2 * IQ3_KMAXQ - 1 + is * 0.2f) / max;
    mq_trials t;
    mq_lat_trials(lat, 32, ids, ns, xval, weight, waux, &t);
    int best_s = mq_trials_best(&t, ns, &scale); /* none better: L and on_grid stay, as in ggml */
    if (best_s >= 0) {
        mq_trials_levels(lat, &t, 32, best_s, L);
        for (int k = 0; k < 8; ++k)
            on_grid[k] = !(t.off_grid[k] >> best_s & 1);
    }
    int n_not_ongrid = 0;
    for (int k = 0; k < 8; ++k)
        n_not_ongrid += !on_grid[k];
    if (n_not_ongrid > 0 && scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 8; ++k)
            if (redo_all || !on_grid[k])
                mq_lat_round(lat, id, scale, xval + 4 * k, waux + 4 * k, L + 4 * k);
        float sumqx, sumq2;
        mq_iq_sums(32, weight, xval, L, &sumqx, &sumq2);
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    return scale;
}

/* Block (98 bytes): d, 64 grid indices (8 bits), then per 32 values a
 * uint32 of 4 x 7 sign bits and a 4-bit scale on top. */
void mq_quant_iq3_xxs(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ3_XXS);
    int8_t L[32] = {0};
    bool on_grid[8] = {true, true, true, true, true, true, true, true}; /* uninitialized in ggml */
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 98) {
        const float *xbl = x + QK_K * ibl;
        uint8_t qs[64] = {0};
        uint32_t sas[8] = {0};
        float scales[8], weight[32], waux[32], xval[32], max_scale = 0;
        memset(y, 0, 98);
        if (!lat)
            continue;
        const float sigma2 = 2 * mq_sum_squares(xbl, QK_K) / QK_K;
        for (int ib = 0; ib < 8; ++ib) {
            const float *xb = xbl + 32 * ib;
            iq3_weights(xb, qw ? qw + QK_K * ibl + 32 * ib : NULL, sigma2, weight, waux);
            uint8_t signs[4];
            for (int k = 0; k < 4; ++k)
                signs[k] = mq_iq_even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = mq_max_ggml(xval, 32);
            if (max < 1e-8f) { /* GROUP_MAX_EPS_IQ3_XXS */
                scales[ib] = 0;
                memset(L, 0, 32);
                continue;
            }
            float scale = iq3_search(lat, xval, weight, waux, max, 15, false, L, on_grid);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k)
                    signs[k] = (uint8_t)(~signs[k] & 127);
            }
            for (int k = 0; k < 8; ++k)
                qs[8 * ib + k] = (uint8_t)iq3_grid_index(lat, L + 4 * k);
            sas[ib] = signs[0] | (uint32_t)signs[1] << 7 | (uint32_t)signs[2] << 14 | (uint32_t)signs[3] << 21;
            scales[ib] = scale;
            max_scale = mq_fmax_ggml(max_scale, scale);
        }
        if (!max_scale)
            continue;
        float d = max_scale / 31;
        mq_put_f16(y, d * 1.0125f);
        float id = 1 / d;
        for (int ib = 0; ib < 8; ++ib)
            sas[ib] |= (uint32_t)mq_iq_scale_code(id, scales[ib], 15) << 28;
        memcpy(y + 2, qs, 64);
        for (int ib = 0; ib < 8; ++ib)
            mf_wr32le(y + 66 + 4 * ib, sas[ib]);
    }
}

/* Block (110 bytes): d, 64 low bytes of 9-bit grid indices, 8 bytes of
 * ninth bits, 32 sign bytes, 4 bytes of two 4-bit scales (d*(1+2l)).
 * As in ggml, an all-zero sub-block does not advance the index and sign
 * positions: the next sub-block's bytes take its place. */
void mq_quant_iq3_s(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ3_S);
    int8_t L[32] = {0};
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 110) {
        const float *xbl = x + QK_K * ibl;
        uint8_t *qs = y + 2, *qh = y + 66, *signs_out = y + 74, *sc = y + 106;
        float scales[8], weight[32], waux[32], xval[32], max_scale = 0;
        bool on_grid[8];
        memset(y, 0, 110);
        if (!lat)
            continue;
        const float sigma2 = 2 * mq_sum_squares(xbl, QK_K) / QK_K;
        for (int ib = 0; ib < 8; ++ib) {
            const float *xb = xbl + 32 * ib;
            iq3_weights(xb, qw ? qw + QK_K * ibl + 32 * ib : NULL, sigma2, weight, waux);
            uint8_t signs[4] = {0, 0, 0, 0};
            for (int i = 0; i < 32; ++i) {
                xval[i] = xb[i] >= 0 ? xb[i] : -xb[i];
                if (!(xb[i] >= 0))
                    signs[i / 8] |= (uint8_t)(1 << (i % 8));
            }
            float max = mq_max_ggml(xval, 32);
            if (!max) {
                scales[ib] = 0;
                continue;
            }
            memset(on_grid, 0, sizeof(on_grid));
            float scale = iq3_search(lat, xval, weight, waux, max, 9, true, L, on_grid);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k)
                    signs[k] = (uint8_t)~signs[k];
            }
            for (int k = 0; k < 8; ++k) {
                const int gi = iq3_grid_index(lat, L + 4 * k);
                qs[k] = (uint8_t)(gi & 255);
                qh[ib] |= (uint8_t)((gi >> 8) << k);
            }
            qs += 8;
            memcpy(signs_out, signs, 4);
            signs_out += 4;
            scales[ib] = scale;
            max_scale = mq_fmax_ggml(max_scale, scale);
        }
        if (!max_scale)
            continue;
        float d = max_scale / 31;
        mq_put_f16(y, d * 1.033f);
        float id = 1 / d;
        for (int ib = 0; ib < 8; ib += 2)
            sc[ib / 2] = (uint8_t)(mq_iq_scale_code(id, scales[ib], 15) | mq_iq_scale_code(id, scales[ib + 1], 15) << 4);
    }
}
