/* quant_iq1.c - IQ1_S and IQ1_M quantization, as ggml's
 * quantize_row_iq1_s_impl / quantize_row_iq1_m_impl (llama.cpp b4747)
 * compute it.
 *
 * Values become -1, 0, +1 (shifted by +-IQ1S_DELTA) times a sub-block
 * scale, in groups of 8 that must be points of a 2048-entry grid. The
 * ternary split is found exactly: sort the values, try every pair of
 * boundaries (i1, i2) and both shift signs (IQ1_M: a sign per group of 8),
 * keep the best weighted least-squares fit; groups off the grid take the
 * nearest listed neighbour.
 *
 * ggml leaves the shift of a sub-block whose max |x| is below its epsilon
 * unset and reads it later (undefined bits; ../shared/quant-ref masks them).
 * Here it is 0 (the + shift), which keeps the output deterministic and
 * independent of the thread count. */
#include "quant/iq_lattice.h"

#define IQ1_DELTA 0.125f /* IQ1S_DELTA = IQ1M_DELTA */

static const float x_p[3] = {-1 + IQ1_DELTA, IQ1_DELTA, 1 + IQ1_DELTA};
static const float x_m[3] = {-1 - IQ1_DELTA, -IQ1_DELTA, 1 - IQ1_DELTA};

/* ------------------------------------------------------------ sorting */

typedef struct iq1_pair {
    float v;
    int i;
} iq1_pair;

/* ggml's iq1_sort_helper */
static int pair_cmp(const iq1_pair *l, const iq1_pair *r) { return l->v < r->v ? -1 : l->v > r->v ? 1 : 0; }

/* The sort ggml's qsort call performs with the reference's C library
 * (glibc): top-down merge sort, left half n/2, ties to the left run. Equal
 * values keep their order, and NaN (which compares "equal" to everything)
 * lands where glibc puts it. */
static void merge_sort(iq1_pair *b, int n, iq1_pair *tmp)
{
    if (n <= 1)
        return;
    int n1 = n / 2, n2 = n - n1;
    iq1_pair *b1 = b, *b2 = b + n1, *t = tmp;
    merge_sort(b1, n1, tmp);
    merge_sort(b2, n2, tmp);
    while (n1 > 0 && n2 > 0) {
        if (pair_cmp(b1, b2) <= 0) {
            *t++ = *b1++;
            --n1;
        } else {
            *t++ = *b2++;
            --n2;
        }
    }
    if (n1 > 0)
        memcpy(t, b1, (size_t)n1 * sizeof(*t));
    memcpy(b, tmp, (size_t)(n - n2) * sizeof(*b));
}

/* Whether xb (n values) holds a NaN. */
static bool has_nan(const float *xb, int n)
{
    bool nan = false;
    for (int j = 0; j < n; ++j)
        nan |= xb[j] != xb[j];
    return nan;
}

/* idx: the positions of xb (n of them) in ascending order of value. Without
 * NaN the order is a strict weak one (-0 and +0 tie), so the stable merge
 * sort's result is the only stable order: value i goes to the count of
 * values below it plus the equal ones before it (branch-free, which is what
 * makes it faster than the sort). With a NaN, the merge sort itself. */
static inline void sorted_order(const float *xb, int n, int *idx)
{
    if (!has_nan(xb, n)) {
        for (int i = 0; i < n; ++i) {
            int rank = 0;
            for (int j = 0; j < n; ++j)
                rank += (xb[j] < xb[i]) | ((xb[j] == xb[i]) & (j < i));
            idx[rank] = i;
        }
        return;
    }
    iq1_pair pairs[32], tmp[32];
    for (int j = 0; j < n; ++j)
        pairs[j] = (iq1_pair){xb[j], j};
    merge_sort(pairs, n, tmp);
    for (int j = 0; j < n; ++j)
        idx[j] = pairs[j].i;
}

void mq_iq1_sorted_order(const float *xb, int n, int *idx) { sorted_order(xb, n, idx); }

/* ------------------------------------------------------------ grid */

/* The 8 levels of grid point gi to L; returns gi. */
static int iq1_point_levels(const mq_lattice *lat, int gi, int8_t *L)
{
    const int8_t *pg = mq_lat_point(lat, gi);
    for (int i = 0; i < 8; ++i)
        L[i] = (int8_t)((pg[i] - 1) / 2);
    return gi;
}

/* ggml's iq1_find_best_neighbour2: the listed grid point minimising
 * sum w*(scale*xg[level] - x)^2; its levels go to L. ggml's fallback scan
 * over the whole grid (when every distance is NaN or >= FLT_MAX) indexes x
 * by the grid position, reading past the 8 values; here it reads x[j].
 * Nothing found: the first neighbour (ggml aborts). */
static int iq1_best_neighbour(const mq_lattice *lat, const uint16_t *nb, const float *xval, const float *weight,
                              float scale, const float *xg, int8_t *L)
{
    float best_score = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= nb[0]; ++j) {
        const int8_t *pg = mq_lat_point(lat, nb[j]);
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            float q = xg[(pg[i] - 1) / 2];
            float w = weight[i];
            float diff = scale * q - xval[i];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            grid_index = nb[j];
        }
    }
    for (int i = 0; grid_index < 0 && i < lat->ngrid; ++i) {
        const int8_t *pg = mq_lat_point(lat, i);
        float d2 = 0;
        for (int j = 0; j < 8; ++j) {
            float w = weight[j];
            float q = xg[(pg[j] - 1) / 2];
            float diff = scale * q - xval[j];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            grid_index = i;
        }
    }
    if (grid_index < 0)
        grid_index = nb[1];
    return iq1_point_levels(lat, grid_index, L);
}

/* Grid index of the 8 levels L; off the grid, the best neighbour (L is
 * updated). *on_grid is cleared when a neighbour was needed. */
static int iq1_grid_index(const mq_lattice *lat, const float *xb, const float *weight, float scale, const float *xx,
                          int8_t *L, bool *on_grid)
{
    uint32_t u = mq_lat_pack(lat, L);
    int gi = mq_lat_index(lat, u);
    if (gi >= 0)
        return gi;
    *on_grid = false;
    const uint16_t *nb = mq_lat_neighbours(lat, u);
    if (!nb)
        return 0;
    gi = mq_simd_iq1_best_neighbour(lat, u, scale, xx, xb, weight);
    if (gi < 0)
        return iq1_best_neighbour(lat, nb, xb, weight, scale, xx, L);
    return iq1_point_levels(lat, gi, L);
}

/* Levels from the boundaries: 0 below i1, 1 up to i2, 2 above (in sorted
 * order); a negative scale mirrors them. */
static void iq1_levels(const int *idx, int n, int i1, int i2, int8_t *L)
{
    for (int j = 0; j < n; ++j)
        L[idx[j]] = (int8_t)(j < i1 ? 0 : j < i2 ? 1 : 2);
}

static float max_abs(const float *xb, int n)
{
    float max = fabsf(xb[0]);
    for (int i = 1; i < n; ++i)
        max = mq_fmax_ggml(max, fabsf(xb[i]));
    return max;
}

/* ------------------------------------------------------------ IQ1_S */

/* Best ternary split of a 32-value sub-block, from prefix sums over the
 * sorted values. Returns false when no split has a positive fit (ggml
 * aborts there). */
static bool iq1_s_split(const float *xb, const float *weight, const int *idx, float *scale, int *bi1, int *bi2,
                        int *shift)
{
    float sumx[33], sumw[33];
    sumx[0] = sumw[0] = 0;
    for (int j = 0; j < 32; ++j) {
        int i = idx[j];
        sumx[j + 1] = sumx[j] + weight[i] * xb[i];
        sumw[j + 1] = sumw[j] + weight[i];
    }
    float best_score = -FLT_MIN;
    *bi1 = *bi2 = -1;
    for (int i1 = 0; i1 <= 32; ++i1) {
        for (int i2 = i1; i2 <= 32; ++i2) {
            for (int s = 0; s < 2; ++s) {
                const float *xs = s ? x_m : x_p;
                float sumqx = (sumx[i1] - sumx[0]) * xs[0] + (sumx[i2] - sumx[i1]) * xs[1] + (sumx[32] - sumx[i2]) * xs[2];
                float sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0] + (sumw[i2] - sumw[i1]) * xs[1] * xs[1] +
                              (sumw[32] - sumw[i2]) * xs[2] * xs[2];
                if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                    *scale = sumqx / sumq2;
                    best_score = *scale * sumqx;
                    *bi1 = i1;
                    *bi2 = i2;
                    *shift = s ? -1 : 1;
                }
            }
        }
    }
    return *bi1 >= 0;
}

/* Block (50 bytes): d, 32 low bytes of 11-bit grid indices, 8 uint16: three
 * high index bits per group, 3-bit scale << 12, shift sign << 15. */
void mq_quant_iq1_s(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ1);
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 50) {
        const float *xbl = x + QK_K * ibl;
        uint16_t qh[8] = {0};
        float scales[8], weight[32], max_scale = 0;
        int8_t L[32], shifts[8];
        memset(y, 0, 50);
        if (!lat || !qw)
            continue;
        const float sigma2 = 2 * mq_sum_squares(xbl, QK_K) / QK_K;
        for (int ib = 0; ib < 8; ++ib) {
            const float *xb = xbl + 32 * ib, *w = qw + QK_K * ibl + 32 * ib;
            for (int i = 0; i < 32; ++i)
                weight[i] = w[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            int idx[32], i1, i2, shift = 0;
            float scale = max_abs(xb, 32);
            scales[ib] = 0;
            shifts[ib] = 0;
            if (scale < 1e-12f) /* GROUP_MAX_EPS_IQ1_S: skipped */
                continue;
            sorted_order(xb, 32, idx);
            if (!iq1_s_split(xb, weight, idx, &scale, &i1, &i2, &shift))
                continue;
            iq1_levels(idx, 32, i1, i2, L);
            if (scale < 0) {
                for (int j = 0; j < 32; ++j)
                    L[j] = (int8_t)(2 - L[j]);
                scale = -scale;
                shift = -shift;
            }
            const float *xx = shift == 1 ? x_p : x_m;
            bool all_on_grid = true;
            int index[4];
            for (int k = 0; k < 4; ++k)
                index[k] = iq1_grid_index(lat, xb + 8 * k, weight + 8 * k, scale, xx, L + 8 * k, &all_on_grid);
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < 4; ++k) {
                    const int8_t *pg = mq_lat_point(lat, index[k]);
                    for (int j = 0; j < 8; ++j) {
                        float wj = weight[8 * k + j];
                        float q = xx[(pg[j] - 1) / 2];
                        sumqx += wj * q * xb[8 * k + j];
                        sumq2 += wj * q * q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0)
                    scale = sumqx / sumq2;
            }
            for (int k = 0; k < 4; ++k) {
                y[2 + 4 * ib + k] = (uint8_t)(index[k] & 255);
                qh[ib] |= (uint16_t)((index[k] >> 8) << 3 * k);
            }
            scales[ib] = scale;
            shifts[ib] = (int8_t)shift;
            max_scale = mq_fmax_ggml(max_scale, scale);
        }
        if (max_scale) {
            float d = max_scale / 15;
            mq_put_f16(y, d * 1.125f);
            float id = 1 / d;
            for (int ib = 0; ib < 8; ++ib) {
                int l = mq_iq_scale_code(id, scales[ib], 7);
                if (shifts[ib] == -1)
                    l |= 8;
                qh[ib] |= (uint16_t)(l << 12);
            }
        }
        for (int ib = 0; ib < 8; ++ib)
            mf_wr16le(y + 34 + 2 * ib, qh[ib]);
    }
}

/* ------------------------------------------------------------ IQ1_M */

/* Shift table of the 4 sign combinations k of IQ1_M's two groups:
 * 0 (+,+), 1 (+,-), 2 (-,+), 3 (-,-); group 0 is the first 8 values. */
static const float *iq1_m_shift(int k, int group)
{
    return group == 0 ? (k < 2 ? x_p : x_m) : (k % 2 == 0 ? x_p : x_m);
}

/* The 24 terms of each sorted value j: term[j][level][c] is, for c = k,
 * w*xs[level]*x, for c = 4 + k, w*xs[level]*xs[level], xs the shift of
 * combination k for the value's group (products grouped as ggml's). */
static void iq1_m_terms(const float *xb, const float *weight, const int *idx, float term[16][3][8])
{
    for (int j = 0; j < 16; ++j) {
        const int i = idx[j];
        for (int level = 0; level < 3; ++level) {
            for (int k = 0; k < 4; ++k) {
                const float xs = iq1_m_shift(k, i >= 8)[level];
                term[j][level][k] = weight[i] * xs * xb[i];
                term[j][level][4 + k] = weight[i] * xs * xs;
            }
        }
    }
}

static inline void iq1_m_add(float *sum, const float *term)
{
    for (int c = 0; c < 8; ++c)
        sum[c] += term[c];
}

/* Best split and sign combination of a 16-value sub-block. ggml sums each
 * candidate (i1, i2) from scratch: 0, then each value's term in sorted
 * order, level 0 below i1, 1 up to i2, 2 above. The first i2 terms of that
 * sequence are the same for every i2' >= i2, so the partial sums are carried
 * over (p0: i1 terms at level 0; s: then level 1 up to i2) and only the
 * level-2 tail is added per candidate: the same float additions in the same
 * order, hence the same sums, with a third of the work. The candidates are
 * then tested in ggml's order (i1, i2, k). mq_simd_iq1_m_split runs this
 * with one sub-block per vector lane. */
static bool iq1_m_split(const float *xb, const float *weight, const int *idx, float *scale, int *bi1, int *bi2,
                        int *best_k)
{
    float term[16][3][8], p0[8] = {0}, best_score = -FLT_MIN;
    iq1_m_terms(xb, weight, idx, term);
    *bi1 = *bi2 = *best_k = -1;
    for (int i1 = 0; i1 <= 16; ++i1) {
        float s[8];
        memcpy(s, p0, sizeof(s));
        for (int i2 = i1; i2 <= 16; ++i2) {
            float t[8];
            memcpy(t, s, sizeof(t));
            for (int j = i2; j < 16; ++j)
                iq1_m_add(t, term[j][2]);
            for (int k = 0; k < 4; ++k) {
                const float sumqx = t[k], sumq2 = t[4 + k];
                if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                    *scale = sumqx / sumq2;
                    best_score = *scale * sumqx;
                    *bi1 = i1;
                    *bi2 = i2;
                    *best_k = k;
                }
            }
            if (i2 < 16)
                iq1_m_add(s, term[i2][1]);
        }
        if (i1 < 16)
            iq1_m_add(p0, term[i1][0]);
    }
    return *best_k >= 0;
}

static void iq1_m_weights(const float *xb, const float *qw, float sigma2, float *weight)
{
    for (int i = 0; i < 16; ++i)
        weight[i] = qw ? qw[i] * sqrtf(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
}

/* The super-block scale: least squares of the final levels and 3-bit
 * sub-block scales against x, stored as fp16 in the scale words' top
 * nibbles. */
static void iq1_m_finish(const mq_lattice *lat, const float *xbl, const float *qw, float sigma2, const float *scales,
                         const int8_t *shifts, float max_scale, uint8_t *y)
{
    static const uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    uint8_t *qs = y, *qh = y + 32;
    uint16_t sc[4] = {0, 0, 0, 0};
    float d = max_scale / 15;
    float id = 1 / d;
    float sumqx_f = 0, sumq2_f = 0, weight[16];
    for (int ib = 0; ib < 16; ++ib) {
        int l = mq_iq_scale_code(id, scales[ib], 7);
        sc[ib / 4] |= (uint16_t)(l << 3 * (ib % 4));
        qh[ib] |= masks[shifts[ib]];
        const float *xb = xbl + 16 * ib;
        iq1_m_weights(xb, qw ? qw + 16 * ib : NULL, sigma2, weight);
        for (int k = 0; k < 2; ++k) {
            const float *xx = iq1_m_shift(shifts[ib], k);
            const int8_t *pg = mq_lat_point(lat, qs[2 * ib + k] + ((qh[ib] << (8 - 4 * k)) & 0x700));
            for (int j = 0; j < 8; ++j) {
                float w = weight[8 * k + j];
                float q = xx[(pg[j] - 1) / 2] * (2 * l + 1);
                sumqx_f += w * q * xb[8 * k + j];
                sumq2_f += w * q * q;
            }
        }
    }
    if (sumq2_f > 0)
        d = sumqx_f / sumq2_f;
    uint16_t s = mq_fp16(d * 1.1125f);
    sc[0] |= (uint16_t)((s & 0x000f) << 12);
    sc[1] |= (uint16_t)((s & 0x00f0) << 8);
    sc[2] |= (uint16_t)((s & 0x0f00) << 4);
    sc[3] |= (uint16_t)(s & 0xf000);
    for (int k = 0; k < 4; ++k)
        mf_wr16le(y + 48 + 2 * k, sc[k]);
}

/* The 16 sub-blocks' weights and sorted orders, and which take part
 * (max |x| at least GROUP_MAX_EPS_IQ1_M; a skipped one gets the identity
 * order, so the vector search reads defined values, and is never used). */
static void iq1_m_prepare(const float *xbl, const float *qwbl, float sigma2, float *weight, int *idx, bool *live)
{
    for (int ib = 0; ib < 16; ++ib) {
        const float *xb = xbl + 16 * ib;
        iq1_m_weights(xb, qwbl ? qwbl + 16 * ib : NULL, sigma2, weight + 16 * ib);
        live[ib] = !(max_abs(xb, 16) < 1e-7f); /* GROUP_MAX_EPS_IQ1_M */
        if (live[ib])
            sorted_order(xb, 16, idx + 16 * ib);
        else
            for (int j = 0; j < 16; ++j)
                idx[16 * ib + j] = j;
    }
}

/* Sub-block ib's levels, grid indices and scale from its split: writes its
 * index bytes to y, returns its scale (0: skipped) and sign combination. */
static float iq1_m_sub_block(const mq_lattice *lat, const float *xb, const float *weight, const int *idx, float scale,
                             int i1, int i2, int best_k, int ib, int8_t *shift, uint8_t *y)
{
    int8_t L[16];
    iq1_levels(idx, 16, i1, i2, L);
    if (scale < 0) {
        for (int j = 0; j < 16; ++j)
            L[j] = (int8_t)(2 - L[j]);
        scale = -scale;
        best_k = 3 - best_k; /* both signs flip */
    }
    bool all_on_grid = true;
    int index[2];
    for (int k = 0; k < 2; ++k)
        index[k] = iq1_grid_index(lat, xb + 8 * k, weight + 8 * k, scale, iq1_m_shift(best_k, k), L + 8 * k,
                                  &all_on_grid);
    if (!all_on_grid) {
        float sumqx_f = 0, sumq2_f = 0;
        for (int k = 0; k < 2; ++k) {
            const float *xx = iq1_m_shift(best_k, k);
            const int8_t *pg = mq_lat_point(lat, index[k]);
            for (int j = 0; j < 8; ++j) {
                float w = weight[8 * k + j];
                float q = xx[(pg[j] - 1) / 2];
                sumqx_f += w * q * xb[8 * k + j];
                sumq2_f += w * q * q;
            }
        }
        if (sumqx_f > 0 && sumq2_f > 0)
            scale = sumqx_f / sumq2_f;
    }
    y[2 * ib + 0] = (uint8_t)(index[0] & 255);
    y[2 * ib + 1] = (uint8_t)(index[1] & 255);
    y[32 + ib] = (uint8_t)((index[0] >> 8) | ((index[1] >> 8) << 4));
    *shift = (int8_t)best_k;
    return scale;
}

/* Block (56 bytes): 32 low bytes of 11-bit grid indices, 16 bytes of two
 * (3 high index bits + shift sign bit), 4 uint16 of four 3-bit scales and
 * a nibble of the fp16 super-block scale. The split searches of the 16
 * sub-blocks run together (vector lanes) when the CPU allows. */
void mq_quant_iq1_m(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ1);
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl, y += 56) {
        const float *xbl = x + QK_K * ibl;
        const float *qwbl = qw ? qw + QK_K * ibl : NULL;
        float scales[16], weight[256], split_scale[16], max_scale = 0;
        int idx[256], i1[16], i2[16], best_k[16];
        int8_t shifts[16];
        bool live[16];
        memset(y, 0, 56);
        if (!lat)
            continue;
        const float sigma2 = 2 * mq_sum_squares(xbl, QK_K) / QK_K;
        iq1_m_prepare(xbl, qwbl, sigma2, weight, idx, live);
        if (!mq_simd_iq1_m_splits(xbl, weight, idx, split_scale, i1, i2, best_k))
            for (int ib = 0; ib < 16; ++ib)
                if (live[ib])
                    iq1_m_split(xbl + 16 * ib, weight + 16 * ib, idx + 16 * ib, &split_scale[ib], &i1[ib], &i2[ib],
                                &best_k[ib]);
        for (int ib = 0; ib < 16; ++ib) {
            scales[ib] = 0;
            shifts[ib] = 0;
            if (!live[ib] || best_k[ib] < 0)
                continue;
            scales[ib] = iq1_m_sub_block(lat, xbl + 16 * ib, weight + 16 * ib, idx + 16 * ib, split_scale[ib], i1[ib],
                                         i2[ib], best_k[ib], ib, &shifts[ib], y);
            max_scale = mq_fmax_ggml(max_scale, scales[ib]);
        }
        if (max_scale)
            iq1_m_finish(lat, xbl, qwbl, sigma2, scales, shifts, max_scale, y);
    }
}
