/* quant_search.c - ggml's scale searches for the K-quants and the imatrix
 * paths of the 32-blocks.
 *
 * These reproduce the reference (llama.cpp b4747, Feb 2025) operation by
 * operation: every product and sum is rounded to float in the order written,
 * ties and comparisons are as in ggml (strict `>` / `<`), and the degenerate
 * cases (0/0 scales that become NaN, nearest_int of inf) are not "fixed",
 * since the reference bytes carry their results. */
#include "quant/qimpl.h"

/* Weight of x in make_qx_quants when no importance weights are given. */
static float qx_weight(const float *qw, int i, const float *x, int rmse_type)
{
    if (qw)
        return qw[i];
    switch (rmse_type) {
    case 1: return x[i] * x[i];
    case 2: return 1;
    case 3: return fabsf(x[i]);
    default: return sqrtf(fabsf(x[i]));
    }
}

static int qx_level(float iscale, float x, int nmax)
{
    return mq_clamp(mq_nearest_int(iscale * x), -nmax, nmax - 1);
}

/* The value of largest magnitude (the first of equals), its magnitude in
 * *amax; 0 and 0 for no values. */
static float largest_magnitude(const float *x, int n, float *amax)
{
    float max = 0;
    *amax = 0;
    for (int i = 0; i < n; ++i) {
        float ax = fabsf(x[i]);
        if (ax > *amax) {
            *amax = ax;
            max = x[i];
        }
    }
    return max;
}

/* Symmetric quants L in [0, 2*nmax) with scale s: x ~ s * (L - nmax).
 * Starts from the value of largest magnitude mapping to -nmax, then tries 18
 * nearby inverse scales and keeps the one maximising sumlx^2/suml2. */
float mq_make_qx_quants(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw)
{
    float amax, max = largest_magnitude(x, n, &amax);
    if (amax < GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    float iscale = -nmax / max;
    if (rmse_type == 0) {
        for (int i = 0; i < n; ++i)
            L[i] = (int8_t)(nmax + qx_level(iscale, x[i], nmax));
        return 1 / iscale;
    }
    bool return_early = false;
    if (rmse_type < 0) {
        rmse_type = -rmse_type;
        return_early = true;
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = qx_level(iscale, x[i], nmax);
        L[i] = (int8_t)(l + nmax);
        float w = qx_weight(qw, i, x, rmse_type);
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    if (return_early)
        return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = qx_level(iscale, x[i], nmax);
            float w = qx_weight(qw, i, x, rmse_type);
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i)
                L[i] = (int8_t)(nmax + qx_level(iscale, x[i], nmax));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* Q3_K's search (do_rmse = true in the only caller): start like
 * make_qx_quants, then up to 5 passes moving single values to the level that
 * the current fit suggests, weighted by x^2. The final division is
 * unguarded, as in the reference. */
float mq_make_q3_quants(int n, int nmax, const float *x, int8_t *L)
{
    float amax, max = largest_magnitude(x, n, &amax);
    if (amax < GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = qx_level(iscale, x[i], nmax);
        L[i] = (int8_t)l;
        float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                int new_l = mq_clamp(mq_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (int8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed)
            break;
    }
    for (int i = 0; i < n; ++i)
        L[i] = (int8_t)(L[i] + nmax);
    return sumlx / suml2;
}

/* Asymmetric quants L in [0, nmax]: x ~ scale * L - the_min. Shared part of
 * make_qkx2_quants / make_qkx3_quants: weighted sums of the data. */
typedef struct qkx_data {
    float min, max, sum_w, sum_x;
} qkx_data;

static qkx_data qkx_scan(int n, const float *x, const float *weights)
{
    qkx_data s = {x[0], x[0], 0, 0};
    s.sum_w = weights ? weights[0] : x[0] * x[0];
    s.sum_x = s.sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < s.min)
            s.min = x[i];
        if (x[i] > s.max)
            s.max = x[i];
        float w = weights ? weights[i] : x[i] * x[i];
        s.sum_w += w;
        s.sum_x += w * x[i];
    }
    return s;
}

static float qkx_weight(const float *weights, const float *x, int i)
{
    return weights ? weights[i] : x[i] * x[i];
}

/* Error of the fit (scale, min) for levels L: sum of w*|d| or w*d^2. */
static float qkx_error(int n, const float *x, const float *weights, const uint8_t *L, float scale, float min,
                       bool use_mad)
{
    float err = 0;
    for (int i = 0; i < n; ++i) {
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        err += qkx_weight(weights, x, i) * diff;
    }
    return err;
}

/* The common search loop: for each trial inverse scale, quantize, solve the
 * weighted least squares for (scale, min), keep it if the error drops. */
static float qkx_search(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                        uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad, qkx_data s)
{
    float min = s.min;
    float iscale = nmax / (s.max - min);
    float scale = 1 / iscale;
    for (int i = 0; i < n; ++i)
        L[i] = (uint8_t)mq_clamp(mq_nearest_int(iscale * (x[i] - min)), 0, nmax);
    float best_error = qkx_error(n, x, weights, L, scale, min, use_mad);
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        /* min is the best fit so far, not the block minimum */
        iscale = (rmin + rdelta * is + nmax) / (s.max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = mq_clamp(mq_nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t)l;
            float w = qkx_weight(weights, x, i);
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        float D = s.sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (s.sum_w * sum_xl - s.sum_x * sum_l) / D;
            float this_min = (sum_l2 * s.sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = qkx_error(n, x, weights, Laux, this_scale, this_min, use_mad);
            if (cur_error < best_error) {
                memcpy(L, Laux, (size_t)n);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/* Both variants differ only in the degenerate-range test (== vs <=). */
float mq_make_qkx2_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                          uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad)
{
    qkx_data s = qkx_scan(n, x, weights);
    if (s.min > 0)
        s.min = 0;
    if (s.max == s.min) {
        memset(L, 0, (size_t)n);
        *the_min = -s.min;
        return 0.f;
    }
    return qkx_search(n, nmax, x, weights, L, the_min, Laux, rmin, rdelta, nstep, use_mad, s);
}

float mq_make_qkx3_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                          uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad)
{
    qkx_data s = qkx_scan(n, x, weights);
    if (s.min > 0)
        s.min = 0;
    if (s.max <= s.min) {
        memset(L, 0, (size_t)n);
        *the_min = -s.min;
        return 0.f;
    }
    return qkx_search(n, nmax, x, weights, L, the_min, Laux, rmin, rdelta, nstep, use_mad, s);
}

/* Positive values x (sub-block scales or mins) to levels L in [0, nmax]
 * with one scale, weighted by quant_weights; used by the K-quants' imatrix
 * paths. L keeps the low byte of each level, the sums the full int, as in
 * the reference (they differ only for non-finite inputs). */
static float qp_mse(int n, int nmax, const float *x, const float *qw, float iscale, float scale)
{
    float mse = 0;
    for (int i = 0; i < n; ++i) {
        int l = mq_min(nmax, mq_nearest_int(iscale * x[i]));
        float diff = x[i] - scale * l;
        mse += qw[i] * diff * diff;
    }
    return mse;
}

float mq_make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *quant_weights)
{
    float max = 0;
    for (int i = 0; i < n; ++i)
        max = max > x[i] ? max : x[i];
    if (!max) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    float iscale = nmax / max;
    for (int i = 0; i < n; ++i)
        L[i] = (uint8_t)mq_nearest_int(iscale * x[i]);
    float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        float diff = x[i] - scale * L[i];
        best_mse += quant_weights[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0)
            continue;
        float iscale_is = (0.1f * is + nmax) / max;
        float mse = qp_mse(n, nmax, x, quant_weights, iscale_is, 1 / iscale_is);
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = mq_min(nmax, mq_nearest_int(iscale * x[i]));
        L[i] = (uint8_t)l;
        float w = quant_weights[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            float w = quant_weights[i];
            float slx = sumlx - w * x[i] * L[i];
            float sl2 = suml2 - w * L[i] * L[i];
            if (slx > 0 && sl2 > 0) {
                int new_l = mq_min(nmax, mq_nearest_int(x[i] * sl2 / slx));
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (uint8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed)
            break;
    }
    return sumlx / suml2;
}

/* ------------------------------------------------------------ batches */

void mq_make_qkx_quants8(bool v3, int n, int nmax, const float *x, const float *weights, uint8_t *L, float *scales,
                         float *mins, float rmin, float rdelta, int nstep, bool use_mad)
{
    if (mq_simd_qkx_quants8(v3, n, nmax, x, weights, L, scales, mins, rmin, rdelta, nstep, use_mad))
        return;
    uint8_t Laux[32];
    for (int j = 0; j < 8; ++j) {
        const float *xj = x + j * n, *wj = weights + j * n;
        scales[j] = v3 ? mq_make_qkx3_quants(n, nmax, xj, wj, L + j * n, &mins[j], Laux, rmin, rdelta, nstep, use_mad)
                       : mq_make_qkx2_quants(n, nmax, xj, wj, L + j * n, &mins[j], Laux, rmin, rdelta, nstep, use_mad);
    }
}

void mq_make_qx_quants8(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales)
{
    if (mq_simd_qx_quants8(n, nmax, x, L, rmse_type, qw, scales))
        return;
    for (int j = 0; j < 8; ++j)
        scales[j] = mq_make_qx_quants(n, nmax, x + j * n, L + j * n, rmse_type, qw ? qw + j * n : NULL);
}
