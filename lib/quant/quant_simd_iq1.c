/* quant_simd_iq1.c - IQ1_M's split search (quant_iq1.c's iq1_m_split) for
 * the 16 sub-blocks of a super-block at once, one sub-block per vector lane
 * (16 with AVX-512F, 8 twice with AVX2), giving the scalar code's bits.
 *
 * Why the bits cannot change: the candidates (i1, i2) and their order are
 * the same for every sub-block, so each lane walks the scalar loops in step:
 * the same terms (w*xs)*x and (w*xs)*xs, products grouped as the scalar
 * code, no FMA (the target attributes do not enable it and the build has
 * -ffp-contract=off), added in the same order to the same carried partial
 * sums; the candidate test sumq2 > 0 && sumqx^2 > best*sumq2 uses ordered
 * comparisons (false on NaN, as C's `>`), and a lane takes the candidate's
 * scale sumqx/sumq2 and best score scale*sumqx where its test holds, in the
 * scalar order (i1, i2, k). Only the level of a term differs between
 * candidates, never between lanes; the sign combination k picks each lane's
 * shift by its value's group (a blend). */
#include "quant/qimpl.h"

#ifdef MQ_X86_KERNELS
#include <float.h>
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f")))

#define IQ1_DELTA 0.125f /* quant_iq1.c */
static const float x_p[3] = {-1 + IQ1_DELTA, IQ1_DELTA, 1 + IQ1_DELTA};
static const float x_m[3] = {-1 - IQ1_DELTA, -IQ1_DELTA, 1 - IQ1_DELTA};

/* Sub-blocks l0..l0+n-1 in sorted order, transposed: lane l of row j is
 * sub-block l0+l's j-th smallest value (w, x) and its group (g: -1 for the
 * second 8 values, else 0). */
static void gather_sorted(const float *x, const float *weight, const int *idx, int l0, int n, float *W, float *X,
                          int32_t *G)
{
    for (int l = 0; l < n; ++l) {
        const int ib = l0 + l;
        for (int j = 0; j < 16; ++j) {
            const int i = idx[16 * ib + j];
            W[n * j + l] = weight[16 * ib + i];
            X[n * j + l] = x[16 * ib + i];
            G[n * j + l] = i >= 8 ? -1 : 0;
        }
    }
}

/* lane l of code: -1 (no candidate) or (i1*17 + i2)*4 + k */
static void decode(const int32_t *code, int l0, int n, int *i1, int *i2, int *k)
{
    for (int l = 0; l < n; ++l) {
        const int c = code[l];
        i1[l0 + l] = c < 0 ? -1 : c / 4 / 17;
        i2[l0 + l] = c < 0 ? -1 : c / 4 % 17;
        k[l0 + l] = c < 0 ? -1 : c % 4;
    }
}

/* ------------------------------------------------------------ AVX-512 */

/* term[j][level][c], c = k: w*xs*x, c = 4 + k: w*xs*xs (iq1_m_terms) */
AVX512 static void terms16(const float *W, const float *X, const int32_t *G, __m512 term[16][3][8])
{
    for (int j = 0; j < 16; ++j) {
        const __m512 w = _mm512_loadu_ps(W + 16 * j), x = _mm512_loadu_ps(X + 16 * j);
        const __mmask16 g = _mm512_test_epi32_mask(_mm512_loadu_si512(G + 16 * j), _mm512_set1_epi32(-1));
        for (int level = 0; level < 3; ++level) {
            const __m512 sp = _mm512_set1_ps(x_p[level]), sm = _mm512_set1_ps(x_m[level]);
            const __m512 wp = _mm512_mul_ps(w, sp), wm = _mm512_mul_ps(w, sm);
            const __m512 qxp = _mm512_mul_ps(wp, x), qxm = _mm512_mul_ps(wm, x);
            const __m512 q2p = _mm512_mul_ps(wp, sp), q2m = _mm512_mul_ps(wm, sm);
            __m512 *t = term[j][level];
            /* k: 0 (+,+), 1 (+,-), 2 (-,+), 3 (-,-) by group 0, group 1 */
            t[0] = qxp, t[1] = _mm512_mask_blend_ps(g, qxp, qxm);
            t[2] = _mm512_mask_blend_ps(g, qxm, qxp), t[3] = qxm;
            t[4] = q2p, t[5] = _mm512_mask_blend_ps(g, q2p, q2m);
            t[6] = _mm512_mask_blend_ps(g, q2m, q2p), t[7] = q2m;
        }
    }
}

#define ADD8_512(s, t)                                                                                                 \
    do {                                                                                                               \
        _Pragma("GCC unroll 8") for (int c_ = 0; c_ < 8; ++c_)                                                                                 \
            (s)[c_] = _mm512_add_ps((s)[c_], (t)[c_]);                                                                 \
    } while (0)

AVX512 static void search16(__m512 term[16][3][8], float *scale_out, int32_t *code_out)
{
    const __m512 zero = _mm512_setzero_ps();
    __m512 best = _mm512_set1_ps(-FLT_MIN), scale = zero, p0[8];
    __m512i code = _mm512_set1_epi32(-1);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c)
        p0[c] = zero;
    for (int i1 = 0; i1 <= 16; ++i1) {
        __m512 s[8];
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c)
            s[c] = p0[c];
        for (int i2 = i1; i2 <= 16; ++i2) {
            __m512 t[8];
#pragma GCC unroll 8
            for (int c = 0; c < 8; ++c)
                t[c] = s[c];
            for (int j = i2; j < 16; ++j)
                ADD8_512(t, term[j][2]);
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
                const __m512 qx = t[k], q2 = t[4 + k];
                const __mmask16 up = _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(q2, zero, _CMP_GT_OQ),
                                                             _mm512_mul_ps(qx, qx), _mm512_mul_ps(best, q2),
                                                             _CMP_GT_OQ);
                if (up) {
                    const __m512 sc = _mm512_div_ps(qx, q2);
                    scale = _mm512_mask_mov_ps(scale, up, sc);
                    best = _mm512_mask_mov_ps(best, up, _mm512_mul_ps(sc, qx));
                    code = _mm512_mask_mov_epi32(code, up, _mm512_set1_epi32((i1 * 17 + i2) * 4 + k));
                }
            }
            if (i2 < 16)
                ADD8_512(s, term[i2][1]);
        }
        if (i1 < 16)
            ADD8_512(p0, term[i1][0]);
    }
    _mm512_storeu_ps(scale_out, scale);
    _mm512_storeu_si512(code_out, code);
}

AVX512 static void splits_avx512(const float *x, const float *weight, const int *idx, float *scale, int *i1,
                                 int *i2, int *k)
{
    float W[256], X[256];
    int32_t G[256], code[16];
    __m512 term[16][3][8];
    gather_sorted(x, weight, idx, 0, 16, W, X, G);
    terms16(W, X, G, term);
    search16(term, scale, code);
    decode(code, 0, 16, i1, i2, k);
}

/* ------------------------------------------------------------ AVX2 */

AVX2 static void terms8(const float *W, const float *X, const int32_t *G, __m256 term[16][3][8])
{
    for (int j = 0; j < 16; ++j) {
        const __m256 w = _mm256_loadu_ps(W + 8 * j), x = _mm256_loadu_ps(X + 8 * j);
        const __m256 g = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(G + 8 * j)));
        for (int level = 0; level < 3; ++level) {
            const __m256 sp = _mm256_set1_ps(x_p[level]), sm = _mm256_set1_ps(x_m[level]);
            const __m256 wp = _mm256_mul_ps(w, sp), wm = _mm256_mul_ps(w, sm);
            const __m256 qxp = _mm256_mul_ps(wp, x), qxm = _mm256_mul_ps(wm, x);
            const __m256 q2p = _mm256_mul_ps(wp, sp), q2m = _mm256_mul_ps(wm, sm);
            __m256 *t = term[j][level];
            t[0] = qxp, t[1] = _mm256_blendv_ps(qxp, qxm, g);
            t[2] = _mm256_blendv_ps(qxm, qxp, g), t[3] = qxm;
            t[4] = q2p, t[5] = _mm256_blendv_ps(q2p, q2m, g);
            t[6] = _mm256_blendv_ps(q2m, q2p, g), t[7] = q2m;
        }
    }
}

#define ADD8_256(s, t)                                                                                                 \
    do {                                                                                                               \
        _Pragma("GCC unroll 8") for (int c_ = 0; c_ < 8; ++c_)                                                                                 \
            (s)[c_] = _mm256_add_ps((s)[c_], (t)[c_]);                                                                 \
    } while (0)

AVX2 static void search8(__m256 term[16][3][8], float *scale_out, int32_t *code_out)
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 best = _mm256_set1_ps(-FLT_MIN), scale = zero, p0[8];
    __m256 code = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c)
        p0[c] = zero;
    for (int i1 = 0; i1 <= 16; ++i1) {
        __m256 s[8];
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c)
            s[c] = p0[c];
        for (int i2 = i1; i2 <= 16; ++i2) {
            __m256 t[8];
#pragma GCC unroll 8
            for (int c = 0; c < 8; ++c)
                t[c] = s[c];
            for (int j = i2; j < 16; ++j)
                ADD8_256(t, term[j][2]);
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
                const __m256 qx = t[k], q2 = t[4 + k];
                const __m256 up = _mm256_and_ps(
                    _mm256_cmp_ps(q2, zero, _CMP_GT_OQ),
                    _mm256_cmp_ps(_mm256_mul_ps(qx, qx), _mm256_mul_ps(best, q2), _CMP_GT_OQ));
                if (_mm256_movemask_ps(up)) {
                    const __m256 sc = _mm256_div_ps(qx, q2);
                    scale = _mm256_blendv_ps(scale, sc, up);
                    best = _mm256_blendv_ps(best, _mm256_mul_ps(sc, qx), up);
                    code = _mm256_blendv_ps(code, _mm256_castsi256_ps(_mm256_set1_epi32((i1 * 17 + i2) * 4 + k)),
                                            up);
                }
            }
            if (i2 < 16)
                ADD8_256(s, term[i2][1]);
        }
        if (i1 < 16)
            ADD8_256(p0, term[i1][0]);
    }
    _mm256_storeu_ps(scale_out, scale);
    _mm256_storeu_si256((__m256i *)code_out, _mm256_castps_si256(code));
}

AVX2 static void splits_avx2(const float *x, const float *weight, const int *idx, float *scale, int *i1, int *i2,
                             int *k)
{
    float W[128], X[128];
    int32_t G[128], code[8];
    __m256 term[16][3][8];
    for (int l0 = 0; l0 < 16; l0 += 8) {
        gather_sorted(x, weight, idx, l0, 8, W, X, G);
        terms8(W, X, G, term);
        search8(term, scale + l0, code);
        decode(code, l0, 8, i1, i2, k);
    }
}

bool mq_simd_iq1_m_splits(const float *x, const float *weight, const int *idx, float *scale, int *i1, int *i2,
                          int *k)
{
    if (mq_cpu_has_avx512())
        splits_avx512(x, weight, idx, scale, i1, i2, k);
    else if (mq_cpu_has_avx2())
        splits_avx2(x, weight, idx, scale, i1, i2, k);
    else
        return false;
    return true;
}

#else

bool mq_simd_iq1_m_splits(const float *x, const float *weight, const int *idx, float *scale, int *i1, int *i2,
                          int *k)
{
    return false;
}

#endif
