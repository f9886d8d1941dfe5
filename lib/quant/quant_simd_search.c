/* quant_simd_search.c - ggml's scale searches (quant_search.c) for eight
 * groups at once, one group per AVX2 lane, giving the scalar bits.
 *
 * Why the bits cannot change: every lane performs exactly the scalar code's
 * operations on its own group, in the same order (sums run over the group's
 * values one by one; products are grouped as in the scalar code, no FMA);
 * IEEE add/sub/mul/div are the same in a lane as in a scalar register.
 * Branches become masks: a lane takes the scalar branch's result where its
 * condition holds (comparisons with the same ordered/unordered semantics
 * as the C operators, so NaN goes where the scalar code sends it).
 * nearest_int is the same bit trick on the lane's bits; the levels it gives
 * are small integers, exactly representable as floats. */
#include "quant/qimpl.h"

#ifdef MQ_X86_KERNELS
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* mq_nearest_int in 8 lanes */
AVX2 static inline __m256i nearest_int8(__m256 v)
{
    __m256i u = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.f)));
    return _mm256_sub_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
}

AVX2 static inline __m256i clamp8(__m256i v, int lo, int hi)
{
    return _mm256_max_epi32(_mm256_set1_epi32(lo), _mm256_min_epi32(_mm256_set1_epi32(hi), v));
}

/* lanes of b where mask, else a */
AVX2 static inline __m256 sel(__m256 a, __m256 b, __m256 mask) { return _mm256_blendv_ps(a, b, mask); }
AVX2 static inline __m256i seli(__m256i a, __m256i b, __m256 mask)
{
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), mask));
}

/* Column i of the eight groups (x[j*n + i], j = 0..7) into lane j of t[i]. */
AVX2 static void transpose_in(const float *x, int n, __m256 *t)
{
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(n));
    for (int i = 0; i < n; ++i)
        t[i] = _mm256_i32gather_ps(x + i, idx, 4);
}

/* ------------------------------------------------------------ qkx */

/* Error of a fit in each lane: sum w*d^2 (or w*|d|), d = scale*L + min - x. */
AVX2 static __m256 qkx_error8(int n, const __m256 *x, const __m256 *w, const __m256i *L, __m256 scale, __m256 min,
                              bool use_mad)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 err = _mm256_setzero_ps();
    for (int i = 0; i < n; ++i) {
        __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale, _mm256_cvtepi32_ps(L[i])), min), x[i]);
        diff = use_mad ? _mm256_and_ps(diff, absmask) : _mm256_mul_ps(diff, diff);
        err = _mm256_add_ps(err, _mm256_mul_ps(w[i], diff));
    }
    return err;
}

/* Levels clamp(nearest_int(iscale*(x - min)), 0, nmax). */
AVX2 static void qkx_levels8(int n, int nmax, const __m256 *x, __m256 iscale, __m256 min, __m256i *L)
{
    for (int i = 0; i < n; ++i)
        L[i] = clamp8(nearest_int8(_mm256_mul_ps(iscale, _mm256_sub_ps(x[i], min))), 0, nmax);
}

/* quant_search.c's qkx_scan + the degenerate test + qkx_search, per lane. */
AVX2 static void qkx8(bool v3, int n, int nmax, const __m256 *x, const __m256 *w, __m256i *L, __m256 *scale_out,
                      __m256 *min_out, float rmin, float rdelta, int nstep, bool use_mad)
{
    __m256 min = x[0], max = x[0], sum_w = w[0], sum_x = _mm256_mul_ps(w[0], x[0]);
    for (int i = 1; i < n; ++i) {
        min = sel(min, x[i], _mm256_cmp_ps(x[i], min, _CMP_LT_OQ));
        max = sel(max, x[i], _mm256_cmp_ps(x[i], max, _CMP_GT_OQ));
        sum_w = _mm256_add_ps(sum_w, w[i]);
        sum_x = _mm256_add_ps(sum_x, _mm256_mul_ps(w[i], x[i]));
    }
    const __m256 zero = _mm256_setzero_ps();
    min = sel(min, zero, _mm256_cmp_ps(min, zero, _CMP_GT_OQ));
    /* degenerate lanes: qkx2 max == min, qkx3 max <= min -> L 0, scale 0 */
    const __m256 degenerate = v3 ? _mm256_cmp_ps(max, min, _CMP_LE_OQ) : _mm256_cmp_ps(max, min, _CMP_EQ_OQ);
    const __m256 range_min = min; /* the_min of a degenerate lane */
    __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)nmax), _mm256_sub_ps(max, min));
    __m256 scale = _mm256_div_ps(_mm256_set1_ps(1.0f), iscale);
    qkx_levels8(n, nmax, x, iscale, min, L);
    __m256 best_error = qkx_error8(n, x, w, L, scale, min, use_mad);
    __m256i Laux[32];
    for (int is = 0; nstep >= 1 && is <= nstep; ++is) {
        /* same scalar expression as qkx_search; min is the best fit so far */
        iscale = _mm256_div_ps(_mm256_set1_ps(rmin + rdelta * is + nmax), _mm256_sub_ps(max, min));
        qkx_levels8(n, nmax, x, iscale, min, Laux);
        __m256 sum_l = zero, sum_l2 = zero, sum_xl = zero;
        for (int i = 0; i < n; ++i) {
            __m256 wl = _mm256_mul_ps(w[i], _mm256_cvtepi32_ps(Laux[i]));
            sum_l = _mm256_add_ps(sum_l, wl);
            sum_l2 = _mm256_add_ps(sum_l2, _mm256_mul_ps(wl, _mm256_cvtepi32_ps(Laux[i])));
            sum_xl = _mm256_add_ps(sum_xl, _mm256_mul_ps(wl, x[i]));
        }
        __m256 D = _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_l2), _mm256_mul_ps(sum_l, sum_l));
        __m256 this_scale =
            _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_w, sum_xl), _mm256_mul_ps(sum_x, sum_l)), D);
        __m256 this_min = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_l2, sum_x), _mm256_mul_ps(sum_l, sum_xl)), D);
        const __m256 min_pos = _mm256_cmp_ps(this_min, zero, _CMP_GT_OQ);
        this_scale = sel(this_scale, _mm256_div_ps(sum_xl, sum_l2), min_pos);
        this_min = sel(this_min, zero, min_pos);
        __m256 cur_error = qkx_error8(n, x, w, Laux, this_scale, this_min, use_mad);
        __m256 upd = _mm256_and_ps(_mm256_cmp_ps(D, zero, _CMP_GT_OQ), _mm256_cmp_ps(cur_error, best_error, _CMP_LT_OQ));
        upd = _mm256_andnot_ps(degenerate, upd);
        if (_mm256_movemask_ps(upd)) {
            for (int i = 0; i < n; ++i)
                L[i] = seli(L[i], Laux[i], upd);
            best_error = sel(best_error, cur_error, upd);
            scale = sel(scale, this_scale, upd);
            min = sel(min, this_min, upd);
        }
    }
    for (int i = 0; i < n; ++i)
        L[i] = seli(L[i], _mm256_setzero_si256(), degenerate);
    *scale_out = sel(scale, zero, degenerate);
    *min_out = sel(min, range_min, degenerate);
}

/* Lane j of the n level vectors to L[j*n + i] (bytes). */
AVX2 static void store_levels(int n, const __m256i *Lv, uint8_t *L)
{
    for (int i = 0; i < n; ++i) {
        int32_t lanes[8];
        _mm256_storeu_si256((__m256i *)lanes, Lv[i]);
        for (int j = 0; j < 8; ++j)
            L[j * n + i] = (uint8_t)lanes[j];
    }
}

AVX2 static void qkx_quants8_avx2(bool v3, int n, int nmax, const float *x, const float *weights, uint8_t *L,
                                  float *scales, float *mins, float rmin, float rdelta, int nstep, bool use_mad)
{
    __m256 xt[32] = {0}, wt[32] = {0}, scale, min;
    __m256i Lv[32];
    transpose_in(x, n, xt);
    transpose_in(weights, n, wt);
    qkx8(v3, n, nmax, xt, wt, Lv, &scale, &min, rmin, rdelta, nstep, use_mad);
    store_levels(n, Lv, L);
    _mm256_storeu_ps(scales, scale);
    _mm256_storeu_ps(mins, _mm256_xor_ps(min, _mm256_set1_ps(-0.0f))); /* the_min = -min (a sign flip) */
}

bool mq_simd_qkx_quants8(bool v3, int n, int nmax, const float *x, const float *weights, uint8_t *L, float *scales,
                         float *mins, float rmin, float rdelta, int nstep, bool use_mad)
{
    if (n < 1 || n > 32 || !weights || !mq_cpu_has_avx2())
        return false;
    qkx_quants8_avx2(v3, n, nmax, x, weights, L, scales, mins, rmin, rdelta, nstep, use_mad);
    return true;
}

/* ------------------------------------------------------------ qx */

/* Per lane: the value of largest magnitude (the first of equals), its
 * magnitude in *amax. */
AVX2 static __m256 largest_magnitude8(const __m256 *x, int n, __m256 *amax)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 max = _mm256_setzero_ps(), am = _mm256_setzero_ps();
    for (int i = 0; i < n; ++i) {
        __m256 ax = _mm256_and_ps(x[i], absmask);
        __m256 upd = _mm256_cmp_ps(ax, am, _CMP_GT_OQ);
        am = sel(am, ax, upd);
        max = sel(max, x[i], upd);
    }
    *amax = am;
    return max;
}

/* make_qx_quants with rmse_type 1 (weights qw, or x^2), per lane. */
AVX2 static void qx8(int n, int nmax, const __m256 *x, const __m256 *w, __m256i *L, __m256 *scale_out)
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 amax, max = largest_magnitude8(x, n, &amax);
    const __m256 tiny = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)-nmax), max);
    __m256 sumlx = zero, suml2 = zero;
    for (int i = 0; i < n; ++i) {
        __m256i l = clamp8(nearest_int8(_mm256_mul_ps(iscale, x[i])), -nmax, nmax - 1);
        L[i] = _mm256_add_epi32(l, _mm256_set1_epi32(nmax));
        __m256 lf = _mm256_cvtepi32_ps(l);
        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w[i], x[i]), lf));
        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], lf), lf));
    }
    /* suml2 ? sumlx/suml2 : 0 (NaN is true) */
    __m256 scale = _mm256_and_ps(_mm256_div_ps(sumlx, suml2), _mm256_cmp_ps(suml2, zero, _CMP_NEQ_UQ));
    __m256 best = _mm256_mul_ps(scale, sumlx);
    __m256i Laux[32];
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        iscale = _mm256_div_ps(_mm256_set1_ps(-(nmax + 0.1f * is)), max);
        sumlx = suml2 = zero;
        for (int i = 0; i < n; ++i) {
            __m256i l = clamp8(nearest_int8(_mm256_mul_ps(iscale, x[i])), -nmax, nmax - 1);
            Laux[i] = _mm256_add_epi32(l, _mm256_set1_epi32(nmax));
            __m256 lf = _mm256_cvtepi32_ps(l);
            sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w[i], x[i]), lf));
            suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], lf), lf));
        }
        __m256 upd = _mm256_and_ps(_mm256_cmp_ps(suml2, zero, _CMP_GT_OQ),
                                   _mm256_cmp_ps(_mm256_mul_ps(sumlx, sumlx), _mm256_mul_ps(best, suml2), _CMP_GT_OQ));
        if (_mm256_movemask_ps(upd)) {
            for (int i = 0; i < n; ++i)
                L[i] = seli(L[i], Laux[i], upd);
            scale = sel(scale, _mm256_div_ps(sumlx, suml2), upd);
            best = sel(best, _mm256_mul_ps(scale, sumlx), upd);
        }
    }
    for (int i = 0; i < n; ++i)
        L[i] = seli(L[i], _mm256_setzero_si256(), tiny);
    *scale_out = sel(scale, zero, tiny);
}

/* qx8 for groups whose values are all finite (the common case), with
 * fewer operations per value and trial, same bits:
 *  - with x finite and |x| <= |max|, |iscale * x| <= nmax + 1 < 2^22, where
 *    nearest_int is round-half-to-even, so the level is
 *    clamp(roundeven(iscale * x)) computed in floats (the integer levels
 *    are exact there). A level -0.0 instead of 0 changes no sum: the sums
 *    start at +0 and a sum only becomes -0 from -0 + -0. Lanes whose group
 *    is all below GROUP_MAX_EPS (max may be 0) compute garbage that the
 *    final mask discards, as in qx8.
 *  - L is the levels of the last trial that won (scalar: recomputed from
 *    that trial's iscale each time one wins), so only the winning inverse
 *    scale is kept per lane and L computed once at the end;
 *  - w * x[i] is the same product in every trial, computed once. */
AVX2 static inline __m256 qx_levelf(__m256 iscale, __m256 x, __m256 lo, __m256 hi)
{
    __m256 r = _mm256_round_ps(_mm256_mul_ps(iscale, x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm256_min_ps(_mm256_max_ps(r, lo), hi);
}

AVX2 static void qx8_finite(int n, int nmax, const __m256 *x, const __m256 *w, __m256i *L, __m256 *scale_out)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 zero = _mm256_setzero_ps();
    const __m256 lo = _mm256_set1_ps((float)-nmax), hi = _mm256_set1_ps((float)(nmax - 1));
    __m256 max = zero, amax = zero;
    for (int i = 0; i < n; ++i) {
        __m256 ax = _mm256_and_ps(x[i], absmask);
        __m256 upd = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = sel(amax, ax, upd);
        max = sel(max, x[i], upd);
    }
    const __m256 tiny = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    __m256 wx[32];
    for (int i = 0; i < n; ++i)
        wx[i] = _mm256_mul_ps(w[i], x[i]);
    __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)-nmax), max), best_is = iscale;
    __m256 sumlx = zero, suml2 = zero;
    for (int i = 0; i < n; ++i) {
        __m256 l = qx_levelf(iscale, x[i], lo, hi);
        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(wx[i], l));
        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], l), l));
    }
    /* suml2 ? sumlx/suml2 : 0 (NaN is true) */
    __m256 scale = _mm256_and_ps(_mm256_div_ps(sumlx, suml2), _mm256_cmp_ps(suml2, zero, _CMP_NEQ_UQ));
    __m256 best = _mm256_mul_ps(scale, sumlx);
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        iscale = _mm256_div_ps(_mm256_set1_ps(-(nmax + 0.1f * is)), max);
        sumlx = suml2 = zero;
        for (int i = 0; i < n; ++i) {
            __m256 l = qx_levelf(iscale, x[i], lo, hi);
            sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(wx[i], l));
            suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], l), l));
        }
        __m256 upd = _mm256_and_ps(_mm256_cmp_ps(suml2, zero, _CMP_GT_OQ),
                                   _mm256_cmp_ps(_mm256_mul_ps(sumlx, sumlx), _mm256_mul_ps(best, suml2), _CMP_GT_OQ));
        best_is = sel(best_is, iscale, upd);
        scale = sel(scale, _mm256_div_ps(sumlx, suml2), upd);
        best = sel(best, _mm256_mul_ps(scale, sumlx), upd);
    }
    for (int i = 0; i < n; ++i) {
        __m256i l = _mm256_add_epi32(_mm256_cvtps_epi32(qx_levelf(best_is, x[i], lo, hi)), _mm256_set1_epi32(nmax));
        L[i] = seli(l, _mm256_setzero_si256(), tiny);
    }
    *scale_out = sel(scale, zero, tiny);
}

/* all 8 x n values finite */
AVX2 static bool all_finite(int n, const __m256 *x)
{
    const __m256 inf = _mm256_set1_ps(INFINITY), absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 bad = _mm256_setzero_ps();
    for (int i = 0; i < n; ++i) /* NaN compares unordered: NLT is true */
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_and_ps(x[i], absmask), inf, _CMP_NLT_UQ));
    return !_mm256_movemask_ps(bad);
}

AVX2 static void qx_quants8_avx2(int n, int nmax, const float *x, int8_t *L, const float *qw, float *scales)
{
    __m256 xt[32] = {0}, wt[32] = {0}, scale;
    __m256i Lv[32];
    transpose_in(x, n, xt);
    if (qw)
        transpose_in(qw, n, wt);
    else
        for (int i = 0; i < n; ++i)
            wt[i] = _mm256_mul_ps(xt[i], xt[i]);
    if (all_finite(n, xt))
        qx8_finite(n, nmax, xt, wt, Lv, &scale);
    else
        qx8(n, nmax, xt, wt, Lv, &scale);
    store_levels(n, Lv, (uint8_t *)L);
    _mm256_storeu_ps(scales, scale);
}

bool mq_simd_qx_quants8(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales)
{
    if (n < 1 || n > 32 || rmse_type != 1 || !mq_cpu_has_avx2())
        return false;
    qx_quants8_avx2(n, nmax, x, L, qw, scales);
    return true;
}

AVX2 static void q3_8(int n, int nmax, const __m256 *x, __m256i *L, __m256 *scale_out);
AVX2 static void q3_quants8_avx2(int n, int nmax, const float *x, int8_t *L, float *scales)
{
    __m256 xt[32] = {0}, scale;
    __m256i Lv[32];
    transpose_in(x, n, xt);
    q3_8(n, nmax, xt, Lv, &scale);
    store_levels(n, Lv, (uint8_t *)L);
    _mm256_storeu_ps(scales, scale);
}

/* ------------------------------------------------------------ qx, 16 lanes */

/* qx8_finite with AVX-512: sixteen groups (a whole Q6_K super-block) per
 * vector, the same operations lane by lane. */
#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline __m512 qx_levelf16(__m512 iscale, __m512 x, __m512 lo, __m512 hi)
{
    __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(iscale, x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_min_ps(_mm512_max_ps(r, lo), hi);
}

/* false when a value is not finite (the caller takes the 8-lane path) */
AVX512 static bool qx_quants16_avx512(int n, int nmax, const float *xs, int8_t *L, const float *qw, float *scales)
{
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(n));
    const __m512 zero = _mm512_setzero_ps();
    const __m512 inf = _mm512_set1_ps(INFINITY);
    __m512 x[32], w[32], wx[32];
    __mmask16 bad = 0;
    for (int i = 0; i < n; ++i) {
        x[i] = _mm512_i32gather_ps(idx, xs + i, 4);
        bad |= _mm512_cmp_ps_mask(_mm512_abs_ps(x[i]), inf, _CMP_NLT_UQ);
    }
    if (bad)
        return false;
    for (int i = 0; i < n; ++i) {
        w[i] = qw ? _mm512_i32gather_ps(idx, qw + i, 4) : _mm512_mul_ps(x[i], x[i]);
        wx[i] = _mm512_mul_ps(w[i], x[i]);
    }
    const __m512 lo = _mm512_set1_ps((float)-nmax), hi = _mm512_set1_ps((float)(nmax - 1));
    __m512 max = zero, amax = zero;
    for (int i = 0; i < n; ++i) {
        __m512 ax = _mm512_abs_ps(x[i]);
        __mmask16 upd = _mm512_cmp_ps_mask(ax, amax, _CMP_GT_OQ);
        amax = _mm512_mask_blend_ps(upd, amax, ax);
        max = _mm512_mask_blend_ps(upd, max, x[i]);
    }
    const __mmask16 tiny = _mm512_cmp_ps_mask(amax, _mm512_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    __m512 iscale = _mm512_div_ps(_mm512_set1_ps((float)-nmax), max), best_is = iscale;
    __m512 sumlx = zero, suml2 = zero;
    for (int i = 0; i < n; ++i) {
        __m512 l = qx_levelf16(iscale, x[i], lo, hi);
        sumlx = _mm512_add_ps(sumlx, _mm512_mul_ps(wx[i], l));
        suml2 = _mm512_add_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], l), l));
    }
    /* suml2 ? sumlx/suml2 : 0 (NaN is true) */
    __m512 scale = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(suml2, zero, _CMP_NEQ_UQ), _mm512_div_ps(sumlx, suml2));
    __m512 best = _mm512_mul_ps(scale, sumlx);
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        iscale = _mm512_div_ps(_mm512_set1_ps(-(nmax + 0.1f * is)), max);
        sumlx = suml2 = zero;
        for (int i = 0; i < n; ++i) {
            __m512 l = qx_levelf16(iscale, x[i], lo, hi);
            sumlx = _mm512_add_ps(sumlx, _mm512_mul_ps(wx[i], l));
            suml2 = _mm512_add_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], l), l));
        }
        __mmask16 upd = _mm512_cmp_ps_mask(suml2, zero, _CMP_GT_OQ) &
                        _mm512_cmp_ps_mask(_mm512_mul_ps(sumlx, sumlx), _mm512_mul_ps(best, suml2), _CMP_GT_OQ);
        best_is = _mm512_mask_blend_ps(upd, best_is, iscale);
        scale = _mm512_mask_blend_ps(upd, scale, _mm512_div_ps(sumlx, suml2));
        best = _mm512_mask_blend_ps(upd, best, _mm512_mul_ps(scale, sumlx));
    }
    for (int i = 0; i < n; ++i) {
        __m512i l = _mm512_add_epi32(_mm512_cvtps_epi32(qx_levelf16(best_is, x[i], lo, hi)), _mm512_set1_epi32(nmax));
        l = _mm512_maskz_mov_epi32((__mmask16)~tiny, l);
        int32_t lanes[16];
        _mm512_storeu_si512(lanes, l);
        for (int j = 0; j < 16; ++j)
            L[j * n + i] = (int8_t)lanes[j];
    }
    _mm512_storeu_ps(scales, _mm512_maskz_mov_ps((__mmask16)~tiny, scale));
    return true;
}

bool mq_simd_qx_quants16(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales)
{
    if (n < 1 || n > 32 || rmse_type != 1 || !mq_cpu_has_avx512())
        return false;
    return qx_quants16_avx512(n, nmax, x, L, qw, scales);
}

/* ------------------------------------------------------------ q3 */

/* make_q3_quants(n, nmax, x, L) per lane (Q3_K without imatrix): the start
 * of make_qx_quants, then passes moving single values. A lane whose pass
 * changed nothing would change nothing in another pass (its state is the
 * same), so passes run until no lane changes, at most 5, as the scalar
 * loop's per-group break. Levels stay in the integer domain (nearest_int's
 * bit trick), so any input gives the scalar bits. */
AVX2 static void q3_8(int n, int nmax, const __m256 *x, __m256i *L, __m256 *scale_out)
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 amax, max = largest_magnitude8(x, n, &amax);
    const __m256 tiny = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    const __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)-nmax), max);
    __m256 w[32], wx[32], sumlx = zero, suml2 = zero;
    for (int i = 0; i < n; ++i) {
        w[i] = _mm256_mul_ps(x[i], x[i]);
        wx[i] = _mm256_mul_ps(w[i], x[i]);
        L[i] = clamp8(nearest_int8(_mm256_mul_ps(iscale, x[i])), -nmax, nmax - 1);
        __m256 lf = _mm256_cvtepi32_ps(L[i]);
        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(wx[i], lf));
        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], lf), lf));
    }
    __m256 active = _mm256_castsi256_ps(_mm256_set1_epi32(-1)); /* lanes still changing */
    for (int itry = 0; itry < 5 && _mm256_movemask_ps(active); ++itry) {
        __m256 changed = zero;
        for (int i = 0; i < n; ++i) {
            __m256 lf = _mm256_cvtepi32_ps(L[i]);
            __m256 slx = _mm256_sub_ps(sumlx, _mm256_mul_ps(wx[i], lf));
            __m256 pos = _mm256_and_ps(active, _mm256_cmp_ps(slx, zero, _CMP_GT_OQ));
            if (!_mm256_movemask_ps(pos))
                continue;
            __m256 sl2 = _mm256_sub_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], lf), lf));
            __m256i nl = clamp8(nearest_int8(_mm256_div_ps(_mm256_mul_ps(x[i], sl2), slx)), -nmax, nmax - 1);
            __m256 diff = _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(nl, L[i])), pos);
            __m256 nf = _mm256_cvtepi32_ps(nl);
            slx = _mm256_add_ps(slx, _mm256_mul_ps(wx[i], nf));
            sl2 = _mm256_add_ps(sl2, _mm256_mul_ps(_mm256_mul_ps(w[i], nf), nf));
            __m256 better = _mm256_cmp_ps(_mm256_mul_ps(_mm256_mul_ps(slx, slx), suml2),
                                          _mm256_mul_ps(_mm256_mul_ps(sumlx, sumlx), sl2), _CMP_GT_OQ);
            __m256 take = _mm256_and_ps(_mm256_and_ps(diff, _mm256_cmp_ps(sl2, zero, _CMP_GT_OQ)), better);
            L[i] = seli(L[i], nl, take);
            sumlx = sel(sumlx, slx, take);
            suml2 = sel(suml2, sl2, take);
            changed = _mm256_or_ps(changed, take);
        }
        active = _mm256_and_ps(active, changed);
    }
    for (int i = 0; i < n; ++i)
        L[i] = seli(_mm256_add_epi32(L[i], _mm256_set1_epi32(nmax)), _mm256_setzero_si256(), tiny);
    *scale_out = sel(_mm256_div_ps(sumlx, suml2), zero, tiny);
}

bool mq_simd_q3_quants8(int n, int nmax, const float *x, int8_t *L, float *scales)
{
    if (n < 1 || n > 32 || !mq_cpu_has_avx2())
        return false;
    q3_quants8_avx2(n, nmax, x, L, scales);
    return true;
}

/* q3_8 for a whole Q3_K super-block: its sixteen groups of 16 in the
 * sixteen lanes of AVX-512 vectors, the same operations lane by lane (one
 * pass of twice the width instead of two). The groups are turned into
 * lanes by a shuffle transpose, not gathers: a gather of 16 floats costs
 * several times a shuffle on some CPUs (AMD before Zen 5). */
AVX512 static inline __m512i nearest_int16(__m512 v)
{
    __m512i u = _mm512_castps_si512(_mm512_add_ps(v, _mm512_set1_ps(12582912.f)));
    return _mm512_sub_epi32(_mm512_and_si512(u, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x00400000));
}

AVX512 static inline __m512i clamp16(__m512i v, int lo, int hi)
{
    return _mm512_max_epi32(_mm512_set1_epi32(lo), _mm512_min_epi32(_mm512_set1_epi32(hi), v));
}

/* r[i] element j <-> r[j] element i, in four stages: stage d swaps bit d
 * of the row index with bit d of the element index (permutex2var pairs). */
AVX512 static void transpose16x16(__m512 *r)
{
    for (int d = 1; d < 16; d <<= 1) {
        int32_t lo[16], hi[16];
        for (int j = 0; j < 16; ++j) {
            lo[j] = (j & d) ? 16 + j - d : j;
            hi[j] = (j & d) ? 16 + j : j + d;
        }
        const __m512i ilo = _mm512_loadu_si512(lo), ihi = _mm512_loadu_si512(hi);
        for (int i = 0; i < 16; ++i) {
            if (i & d)
                continue;
            __m512 a = r[i], b = r[i + d];
            r[i] = _mm512_permutex2var_ps(a, ilo, b);
            r[i + d] = _mm512_permutex2var_ps(a, ihi, b);
        }
    }
}

AVX512 static void q3_quants16_avx512(const float *xs, int8_t *Lout, float *scales)
{
    enum { n = 16, nmax = 4 };
    const __m512 zero = _mm512_setzero_ps();
    __m512 x[n], w[n], wx[n];
    __m512i L[n];
    for (int g = 0; g < 16; ++g)
        x[g] = _mm512_loadu_ps(xs + 16 * g);
    transpose16x16(x);
    __m512 max = zero, amax = zero;
    for (int i = 0; i < n; ++i) {
        __m512 ax = _mm512_abs_ps(x[i]);
        __mmask16 upd = _mm512_cmp_ps_mask(ax, amax, _CMP_GT_OQ);
        amax = _mm512_mask_blend_ps(upd, amax, ax);
        max = _mm512_mask_blend_ps(upd, max, x[i]);
    }
    const __mmask16 tiny = _mm512_cmp_ps_mask(amax, _mm512_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    const __m512 iscale = _mm512_div_ps(_mm512_set1_ps((float)-nmax), max);
    __m512 sumlx = zero, suml2 = zero;
    for (int i = 0; i < n; ++i) {
        w[i] = _mm512_mul_ps(x[i], x[i]);
        wx[i] = _mm512_mul_ps(w[i], x[i]);
        L[i] = clamp16(nearest_int16(_mm512_mul_ps(iscale, x[i])), -nmax, nmax - 1);
        __m512 lf = _mm512_cvtepi32_ps(L[i]);
        sumlx = _mm512_add_ps(sumlx, _mm512_mul_ps(wx[i], lf));
        suml2 = _mm512_add_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], lf), lf));
    }
    __mmask16 active = 0xffff; /* lanes still changing */
    for (int itry = 0; itry < 5 && active; ++itry) {
        __mmask16 changed = 0;
        for (int i = 0; i < n; ++i) {
            __m512 lf = _mm512_cvtepi32_ps(L[i]);
            __m512 slx = _mm512_sub_ps(sumlx, _mm512_mul_ps(wx[i], lf));
            __mmask16 pos = active & _mm512_cmp_ps_mask(slx, zero, _CMP_GT_OQ);
            if (!pos)
                continue;
            __m512 sl2 = _mm512_sub_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], lf), lf));
            __m512i nl = clamp16(nearest_int16(_mm512_div_ps(_mm512_mul_ps(x[i], sl2), slx)), -nmax, nmax - 1);
            __mmask16 diff = pos & ~_mm512_cmpeq_epi32_mask(nl, L[i]);
            __m512 nf = _mm512_cvtepi32_ps(nl);
            slx = _mm512_add_ps(slx, _mm512_mul_ps(wx[i], nf));
            sl2 = _mm512_add_ps(sl2, _mm512_mul_ps(_mm512_mul_ps(w[i], nf), nf));
            __mmask16 better = _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_mul_ps(slx, slx), suml2),
                                                  _mm512_mul_ps(_mm512_mul_ps(sumlx, sumlx), sl2), _CMP_GT_OQ);
            __mmask16 take = diff & _mm512_cmp_ps_mask(sl2, zero, _CMP_GT_OQ) & better;
            L[i] = _mm512_mask_blend_epi32(take, L[i], nl);
            sumlx = _mm512_mask_blend_ps(take, sumlx, slx);
            suml2 = _mm512_mask_blend_ps(take, suml2, sl2);
            changed |= take;
        }
        active &= changed;
    }
    __m512 lv[n];
    for (int i = 0; i < n; ++i)
        lv[i] = _mm512_castsi512_ps(
            _mm512_maskz_mov_epi32((__mmask16)~tiny, _mm512_add_epi32(L[i], _mm512_set1_epi32(nmax))));
    transpose16x16(lv);
    for (int g = 0; g < 16; ++g)
        _mm_storeu_si128((__m128i *)(Lout + 16 * g), _mm512_cvtepi32_epi8(_mm512_castps_si512(lv[g])));
    _mm512_storeu_ps(scales, _mm512_maskz_mov_ps((__mmask16)~tiny, _mm512_div_ps(sumlx, suml2)));
}

bool mq_simd_q3_quants16(const float *x, int8_t *L, float *scales)
{
    if (!mq_cpu_has_avx512())
        return false;
    q3_quants16_avx512(x, L, scales);
    return true;
}

/* Q3_K's final levels of one 16-value group: clamp(nearest_int(x / d),
 * -4, 3) + 4, the same division in each lane. */
AVX2 static void q3_group_levels_avx2(const float *x, float d, int8_t *L)
{
    const __m256 vd = _mm256_set1_ps(d);
    for (int k = 0; k < 16; k += 8) {
        __m256i l = clamp8(nearest_int8(_mm256_div_ps(_mm256_loadu_ps(x + k), vd)), -4, 3);
        l = _mm256_add_epi32(l, _mm256_set1_epi32(4));
        __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
        _mm_storel_epi64((__m128i *)(L + k), _mm_packs_epi16(p, p));
    }
}

bool mq_simd_q3_group_levels(const float *x, float d, int8_t *L)
{
    if (!mq_cpu_has_avx2())
        return false;
    q3_group_levels_avx2(x, d, L);
    return true;
}

/* ------------------------------------------------------------ iq4 */

/* best_index_int8(16, val, x) per lane, and val at that index: for x inside
 * (val[0], val[15]) the binary search ends on lo = the largest level <= x
 * and hi = the next; x - lo < hi - x picks lo (compared in float); x <=
 * val[0] gives 0, x >= val[15] or NaN gives 15, as the scalar search. */
AVX2 static __m256 iq4_level8(__m256 x, const __m256 *val)
{
    __m256 lo = val[0], hi = val[15];
    for (int k = 1; k < 15; ++k) {
        lo = sel(lo, val[k], _mm256_cmp_ps(val[k], x, _CMP_LE_OQ));
        hi = sel(hi, val[15 - k], _mm256_cmp_ps(val[15 - k], x, _CMP_GT_OQ));
    }
    __m256 q = sel(hi, lo, _mm256_cmp_ps(_mm256_sub_ps(x, lo), _mm256_sub_ps(hi, x), _CMP_LT_OQ));
    q = sel(q, val[0], _mm256_cmp_ps(x, val[0], _CMP_LE_OQ));
    /* NaN and x >= val[15]: the last level */
    return sel(q, val[15], _mm256_cmp_ps(x, val[15], _CMP_NLT_UQ));
}

/* One trial of iq4_block_scale per lane: sum w*q*x and w*q*q. */
AVX2 static void iq4_trial8(const __m256 *x, const __m256 *w, __m256 id, const __m256 *val, __m256 *sumqx,
                            __m256 *sumq2)
{
    __m256 sqx = _mm256_setzero_ps(), sq2 = _mm256_setzero_ps();
    for (int j = 0; j < 32; ++j) {
        __m256 q = iq4_level8(_mm256_mul_ps(id, x[j]), val);
        __m256 wq = _mm256_mul_ps(w[j], q);
        sqx = _mm256_add_ps(sqx, _mm256_mul_ps(wq, x[j]));
        sq2 = _mm256_add_ps(sq2, _mm256_mul_ps(wq, q));
    }
    *sumqx = sqx;
    *sumq2 = sq2;
}

AVX2 static void iq4_scales8_avx2(const float *xs, const float *ws, const int8_t *values, int ntry, float *scales)
{
    __m256 x[32] = {0}, w[32] = {0}, val[16];
    transpose_in(xs, 32, x);
    transpose_in(ws, 32, w);
    for (int k = 0; k < 16; ++k)
        val[k] = _mm256_set1_ps((float)values[k]);
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), zero = _mm256_setzero_ps();
    __m256 amax = zero, max = zero;
    for (int j = 0; j < 32; ++j) {
        __m256 ax = _mm256_and_ps(x[j], absmask);
        __m256 upd = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = sel(amax, ax, upd);
        max = sel(max, x[j], upd);
    }
    const __m256 tiny = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    const __m256 v0 = val[0];
    __m256 d = ntry > 0 ? _mm256_div_ps(_mm256_xor_ps(max, _mm256_set1_ps(-0.0f)), v0) : _mm256_div_ps(max, v0);
    __m256 sumqx, sumq2;
    iq4_trial8(x, w, _mm256_div_ps(_mm256_set1_ps(1.0f), d), val, &sumqx, &sumq2);
    d = _mm256_div_ps(sumqx, sumq2); /* unguarded, as the scalar code */
    __m256 best = _mm256_mul_ps(d, sumqx);
    for (int itry = -ntry; itry <= ntry; ++itry) {
        __m256 id = _mm256_div_ps(_mm256_set1_ps((float)(itry + values[0])), max);
        iq4_trial8(x, w, id, val, &sumqx, &sumq2);
        __m256 upd = _mm256_and_ps(_mm256_cmp_ps(sumq2, zero, _CMP_GT_OQ),
                                   _mm256_cmp_ps(_mm256_mul_ps(sumqx, sumqx), _mm256_mul_ps(best, sumq2), _CMP_GT_OQ));
        d = sel(d, _mm256_div_ps(sumqx, sumq2), upd);
        best = sel(best, _mm256_mul_ps(d, sumqx), upd);
    }
    _mm256_storeu_ps(scales, sel(d, zero, tiny));
}

bool mq_simd_iq4_scales8(const float *x, const float *weight, const int8_t *values, int ntry, float *scales)
{
    if (!mq_cpu_has_avx2())
        return false;
    iq4_scales8_avx2(x, weight, values, ntry, scales);
    return true;
}

#else

bool mq_simd_qx_quants16(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales)
{
    return false;
}

bool mq_simd_q3_quants8(int n, int nmax, const float *x, int8_t *L, float *scales) { return false; }
bool mq_simd_q3_quants16(const float *x, int8_t *L, float *scales) { return false; }
bool mq_simd_q3_group_levels(const float *x, float d, int8_t *L) { return false; }

bool mq_simd_iq4_scales8(const float *x, const float *weight, const int8_t *values, int ntry, float *scales)
{
    return false;
}

bool mq_simd_qkx_quants8(bool v3, int n, int nmax, const float *x, const float *weights, uint8_t *L, float *scales,
                         float *mins, float rmin, float rdelta, int nstep, bool use_mad)
{
    return false;
}

bool mq_simd_qx_quants8(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales)
{
    return false;
}

#endif
