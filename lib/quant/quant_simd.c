/* quant_simd.c - AVX2 versions of the simplest reference quantizers, chosen
 * at run time, giving the scalar kernels' bits exactly.
 *
 * Why the bits cannot change:
 *  - max |x| is order-independent when no value is NaN; blocks holding a NaN
 *    go to the scalar code (ggml's MAX is order-sensitive with NaN);
 *  - x * id is the same IEEE product in a vector lane;
 *  - roundf (ties away from zero) is rebuilt exactly: t = trunc(p), and
 *    p - t is exact, so |p - t| >= 0.5 decides the step away from zero;
 *  - the float-to-int conversion is cvttps2dq, which like cvttss2si gives
 *    INT32_MIN for NaN and out-of-range values; the low byte is kept, as the
 *    scalar code (and gcc for ggml's (int8_t) casts) does. */
#include "quant/qimpl.h"

#ifdef MQ_X86_KERNELS
#include <cpuid.h>
#include <stdatomic.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>

#define AVX2 __attribute__((target("avx2")))

/* Low bytes of 8 int32 lanes, in order, as 8 bytes. */
AVX2 static inline __attribute__((always_inline)) void store_low_bytes(__m256i v, uint8_t *out)
{
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    __m256i b = _mm256_shuffle_epi8(v, pick);
    uint32_t lo = (uint32_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(b));
    uint32_t hi = (uint32_t)_mm_cvtsi128_si32(_mm256_extracti128_si256(b, 1));
    mf_wr32le(out, lo);
    mf_wr32le(out + 4, hi);
}

/* max |x| of 32 values; false if any is NaN. */
AVX2 static bool amax32(const float *x, float *amax)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 m = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
    for (int j = 0; j < 32; j += 8) {
        __m256 v = _mm256_and_ps(_mm256_loadu_ps(x + j), absmask);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m = _mm256_max_ps(m, v);
    }
    if (_mm256_movemask_ps(nan))
        return false;
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    *amax = _mm_cvtss_f32(h);
    return true;
}

/* roundf(p), then (int32) as cvttss2si does. */
AVX2 static __m256i round_away_cvt(__m256 p)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 signmask = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256 frac = _mm256_and_ps(_mm256_sub_ps(p, t), absmask);
    __m256 step = _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ), _mm256_set1_ps(1.0f));
    t = _mm256_add_ps(t, _mm256_or_ps(step, _mm256_and_ps(p, signmask)));
    return _mm256_cvttps_epi32(t);
}

AVX2 static void q8_0_block_avx2(const float *x, uint8_t *y, float amax)
{
    const float d = amax / 127;
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y, d);
    const __m256 vid = _mm256_set1_ps(id);
    for (int j = 0; j < 32; j += 8)
        store_low_bytes(round_away_cvt(_mm256_mul_ps(_mm256_loadu_ps(x + j), vid)), y + 2 + j);
}

AVX2 static void q8_0_row_avx2(const float *x, uint8_t *y, int64_t n)
{
    for (int64_t ib = 0; ib < n / 32; ib++) {
        float amax;
        if (amax32(x + ib * 32, &amax))
            q8_0_block_avx2(x + ib * 32, y + ib * 34, amax);
        else
            mq_quant_q8_0_scalar_block(x + ib * 32, y + ib * 34);
    }
}

/* ggml's Q4_0/Q5_0 search for the value of largest magnitude (the first
 * wins; +0 when all are zero). false when x holds a NaN. */
AVX2 static bool max_by_abs32_avx2(const float *x, float *max)
{
    float amax;
    if (!amax32(x, &amax))
        return false;
    *max = 0.0f;
    if (amax == 0.0f)
        return true;
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), va = _mm256_set1_ps(amax);
    for (int j = 0; j < 32; j += 8) {
        int m = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), absmask), va, _CMP_EQ_OQ));
        if (m) {
            *max = x[j + __builtin_ctz((unsigned)m)];
            break;
        }
    }
    return true;
}

/* L[j] = (uint8_t)min(cap, (int8_t)(x[j]*id + bias)): the product and the sum
 * rounded separately, cvttps2dq like cvttss2si, the low byte sign-extended
 * as gcc's (int8_t) cast of the int32. */
AVX2 static void offset_levels32_avx2(const float *x, float id, float bias, int cap, uint8_t *L)
{
    const __m256 vid = _mm256_set1_ps(id), vb = _mm256_set1_ps(bias);
    for (int j = 0; j < 32; j += 8) {
        __m256i v = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + j), vid), vb));
        v = _mm256_srai_epi32(_mm256_slli_epi32(v, 24), 24);
        store_low_bytes(_mm256_min_epi32(v, _mm256_set1_epi32(cap)), L + j);
    }
}

/* min and max of 32 values, as the scalar scan finds them (x < min, x > max,
 * first wins): false when a NaN is present or an extreme is zero (the
 * scan keeps the first of +0/-0 seen, which the vector max may not). */
AVX2 static bool min_max32_avx2(const float *x, float *pmin, float *pmax)
{
    __m256 lo = _mm256_loadu_ps(x), hi = lo, nan = _mm256_cmp_ps(lo, lo, _CMP_UNORD_Q);
    for (int j = 8; j < 32; j += 8) {
        __m256 v = _mm256_loadu_ps(x + j);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        lo = _mm256_min_ps(lo, v);
        hi = _mm256_max_ps(hi, v);
    }
    if (_mm256_movemask_ps(nan))
        return false;
    __m128 l = _mm_min_ps(_mm256_castps256_ps128(lo), _mm256_extractf128_ps(lo, 1));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(hi), _mm256_extractf128_ps(hi, 1));
    l = _mm_min_ps(l, _mm_movehl_ps(l, l));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    l = _mm_min_ss(l, _mm_shuffle_ps(l, l, 1));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    *pmin = _mm_cvtss_f32(l);
    *pmax = _mm_cvtss_f32(h);
    return *pmin != 0.0f && *pmax != 0.0f;
}

/* L[j] = (x[j] - min) * id + 0.5f converted as cvttss2si does, then the low
 * byte: sign-extended and capped at cap (Q4_1: min(15, (int8_t)v)), or as
 * is when cap < 0 (Q5_1: (uint8_t)v). */
AVX2 static void asym_levels32_avx2(const float *x, float min, float id, int cap, uint8_t *L)
{
    const __m256 vmin = _mm256_set1_ps(min), vid = _mm256_set1_ps(id), half = _mm256_set1_ps(0.5f);
    for (int j = 0; j < 32; j += 8) {
        __m256 p = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), vmin), vid), half);
        __m256i v = _mm256_cvttps_epi32(p);
        if (cap >= 0)
            v = _mm256_min_epi32(_mm256_srai_epi32(_mm256_slli_epi32(v, 24), 24), _mm256_set1_epi32(cap));
        store_low_bytes(v, L + j);
    }
}

/* pack_q4 / pack_q5 of quant_legacy.c: byte j of qs = L[j] | L[j+16] << 4
 * (Q5: L[j] & 15 in the low nibble; Q4 ORs L[j] whole, as its scalar code);
 * Q5's bit 4 of L[j] is bit j of qh. */
AVX2 static void pack_nibbles_avx2(const uint8_t *L, uint8_t *qs, bool mask_low)
{
    const __m128i lo = _mm_loadu_si128((const __m128i *)L), hi = _mm_loadu_si128((const __m128i *)(L + 16));
    const __m128i m = _mm_set1_epi8(0x0F);
    __m128i v = _mm_or_si128(mask_low ? _mm_and_si128(lo, m) : lo, _mm_slli_epi16(_mm_and_si128(hi, m), 4));
    _mm_storeu_si128((__m128i *)qs, v);
}

AVX2 static void pack_q5_avx2(const uint8_t *L, uint8_t *qh4, uint8_t *qs)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)L);
    mf_wr32le(qh4, (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(v, 3)));
    pack_nibbles_avx2(L, qs, true);
}

bool mq_simd_pack_q4(const uint8_t *L, uint8_t *qs)
{
    if (!mq_cpu_has_avx2())
        return false;
    pack_nibbles_avx2(L, qs, false);
    return true;
}

bool mq_simd_pack_q5(const uint8_t *L, uint8_t *qh4, uint8_t *qs)
{
    if (!mq_cpu_has_avx2())
        return false;
    pack_q5_avx2(L, qh4, qs);
    return true;
}

/* ------------------------------------------------------------ ternary */

/* max |x| of a 256-block and 1/max, when every value is finite and 1/max
 * too: then |x * id| <= 1 + ulp, where lroundf is roundf (ties away from
 * zero), which round_away_cvt rebuilds exactly. */
AVX2 static bool tq_scale(const float *x, float *d, float *id)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 inf = _mm256_set1_ps(INFINITY);
    __m256 m = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
    for (int j = 0; j < QK_K; j += 8) {
        __m256 v = _mm256_and_ps(_mm256_loadu_ps(x + j), absmask);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, inf, _CMP_NLT_UQ));
        m = _mm256_max_ps(m, v);
    }
    if (_mm256_movemask_ps(bad))
        return false;
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    *d = _mm_cvtss_f32(h);
    *id = *d ? 1.0f / *d : 0.0f;
    return isfinite(*id);
}

/* trits (lroundf(x * id) + 1: 0, 1, 2) of 8 values */
AVX2 static __m256i trits8(const float *x, __m256 vid)
{
    return _mm256_add_epi32(round_away_cvt(_mm256_mul_ps(_mm256_loadu_ps(x), vid)), _mm256_set1_epi32(1));
}

/* n trits at stride apart, base 3, first most significant (each step
 * below 243: no byte wrap), scaled to a byte: ceil(q * 256 / 243), the
 * integer division done in floats (exact: numerator < 2^16). */
AVX2 static __m256i trit_bytes8(const float *x, int stride, int n, __m256 vid, bool times3)
{
    __m256i q = _mm256_setzero_si256();
    for (int k = 0; k < n; ++k)
        q = _mm256_add_epi32(_mm256_mullo_epi32(q, _mm256_set1_epi32(3)), trits8(x + k * stride, vid));
    if (times3)
        q = _mm256_mullo_epi32(q, _mm256_set1_epi32(3));
    __m256i num = _mm256_add_epi32(_mm256_slli_epi32(q, 8), _mm256_set1_epi32(242));
    return _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(num), _mm256_set1_ps(243.0f)));
}

AVX2 static bool tq1_0_block_avx2(const float *x, uint8_t *y)
{
    float d, id;
    if (!tq_scale(x, &d, &id))
        return false;
    const __m256 vid = _mm256_set1_ps(id);
    mq_put_f16(y + 52, d);
    for (int m = 0; m < 32; m += 8) /* bytes 0..31: elements m + 32k, k < 5 */
        store_low_bytes(trit_bytes8(x + m, 32, 5, vid, false), y + m);
    for (int m = 0; m < 16; m += 8) /* bytes 32..47: elements 160 + m + 16k */
        store_low_bytes(trit_bytes8(x + 160 + m, 16, 5, vid, false), y + 32 + m);
    /* qh: elements 240 + j + 4k, k < 4, j < 4; lanes 4..7 of the vector
     * read the zero padding of a copy, never past the block */
    float tail[32] = {0};
    uint8_t qh[8];
    memcpy(tail, x + 240, 16 * sizeof(float));
    store_low_bytes(trit_bytes8(tail, 4, 4, vid, true), qh);
    memcpy(y + 48, qh, 4);
    return true;
}

AVX2 static bool tq2_0_block_avx2(const float *x, uint8_t *y)
{
    float d, id;
    if (!tq_scale(x, &d, &id))
        return false;
    const __m256 vid = _mm256_set1_ps(id);
    mq_put_f16(y + 64, d);
    for (int j = 0; j < 64; j += 32, x += 128)
        for (int m = 0; m < 32; m += 8) {
            __m256i q = _mm256_setzero_si256();
            for (int k = 0; k < 4; ++k)
                q = _mm256_or_si256(q, _mm256_slli_epi32(trits8(x + m + 32 * k, vid), 2 * k));
            store_low_bytes(q, y + j + m);
        }
    return true;
}

bool mq_simd_tq1_0_block(const float *x, uint8_t *y)
{
    return mq_cpu_has_avx2() && tq1_0_block_avx2(x, y);
}

bool mq_simd_tq2_0_block(const float *x, uint8_t *y)
{
    return mq_cpu_has_avx2() && tq2_0_block_avx2(x, y);
}

bool mq_simd_min_max32(const float *x, float *min, float *max)
{
    return mq_cpu_has_avx2() && min_max32_avx2(x, min, max);
}

void mq_simd_asym_levels32(const float *x, float min, float id, int cap, uint8_t *L)
{
    asym_levels32_avx2(x, min, id, cap, L);
}

/* vcvtph2ps is exact for every half; NaNs come back quiet with their
 * payload, as mf_f16_to_f32 does. */
__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint8_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * i))));
    for (; i < n; i++)
        dst[i] = mf_f16_to_f32(mf_rd16le(src + 2 * i));
}

/* vcvtps2ph with imm 0 rounds to nearest even, overflowing to infinity
 * at 65520 and rounding into the subnormals as IEEE says: mf_f32_to_f16
 * for every non-NaN. A NaN keeps part of its payload there, where
 * mf_f32_to_f16 gives the canonical quiet NaN, so a run of 8 holding one
 * is redone by it. */
__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const float *src, uint8_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            for (int k = 0; k < 8; k++)
                mf_wr16le(dst + 2 * (i + k), mf_f32_to_f16(src[i + k]));
            continue;
        }
        _mm_storeu_si128((__m128i *)(dst + 2 * i), _mm256_cvtps_ph(v, 0));
    }
    for (; i < n; i++)
        mf_wr16le(dst + 2 * i, mf_f32_to_f16(src[i]));
}

/* Each float rounded to binary16 and back, in place: vcvtps2ph (nearest
 * even) then vcvtph2ps, mf_f16_to_f32(mf_f32_to_f16(x)) for every
 * non-NaN; a run of 8 holding a NaN takes those functions. */
__attribute__((target("avx,f16c"))) static void round_f16_f16c(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            for (int k = 0; k < 8; k++)
                x[i + k] = mf_f16_to_f32(mf_f32_to_f16(x[i + k]));
            continue;
        }
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, 0)));
    }
    for (; i < n; i++)
        x[i] = mf_f16_to_f32(mf_f32_to_f16(x[i]));
}

static bool have_avx2, have_f16c, have_avx512;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
/* mf_quant_set_simd: the MF_QUANT_* kernels allowed from now on */
static _Atomic unsigned simd_allowed = ~0u;

/* The kernels are chosen from CPUID, per CPU at run time. MFMT_SIMD forces
 * a tier for testing and benchmarks (every tier gives the same bytes):
 * "scalar" (as MFMT_NO_SIMD), "avx2" (no AVX-512 kernel even where the CPU
 * has it: the path of an AVX2-only CPU, or the better one on a CPU whose
 * AVX-512 runs slow), "avx512" or unset: whatever the CPU has. A tier the
 * CPU lacks is never used. */
static void cpu_probe(void)
{
    __builtin_cpu_init();
    const char *force = getenv("MFMT_SIMD");
    const bool off = getenv("MFMT_NO_SIMD") != NULL || (force && !strcmp(force, "scalar"));
    const bool no512 = force && !strcmp(force, "avx2");
    have_avx2 = __builtin_cpu_supports("avx2") && !off;
    have_avx512 = have_avx2 && __builtin_cpu_supports("avx512f") && !no512;
    /* gcc 12's __builtin_cpu_supports has no "f16c"; CPUID.1:ECX bit 29 */
    unsigned a, b, c, d;
    have_f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && __builtin_cpu_supports("avx") && !off;
}

/* the F16C kernels may run (CPU has F16C, MFMT_NO_SIMD unset, allowed) */
static bool f16c_ok(void)
{
    pthread_once(&cpu_once, cpu_probe);
    return have_f16c && (simd_allowed & MF_QUANT_F16C);
}

bool mq_simd_f16_to_f32(const uint8_t *src, float *dst, int64_t n)
{
    const bool ok = f16c_ok();
    if (ok)
        f16_to_f32_f16c(src, dst, n);
    return ok;
}

/* mf_f32_to_bf16 in eight lanes: the same integer steps on each value's
 * bits, then the low halves of the 32-bit results packed in order. */
__attribute__((target("avx2"))) static int64_t f32_to_bf16_avx2(const float *x, uint8_t *y, int64_t n)
{
    const __m256i absmask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i one = _mm256_set1_epi32(1), round = _mm256_set1_epi32(0x7fff), quiet = _mm256_set1_epi32(64);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i r[2];
        for (int h = 0; h < 2; ++h) {
            __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x + i + 8 * h));
            __m256i hi = _mm256_srli_epi32(u, 16);
            __m256i even = _mm256_srli_epi32(
                _mm256_add_epi32(u, _mm256_add_epi32(round, _mm256_and_si256(hi, one))), 16);
            __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absmask), inf);
            r[h] = _mm256_blendv_epi8(even, _mm256_or_si256(hi, quiet), nan);
        }
        /* packus works within 128-bit halves: put the quarters back in order */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xd8);
        _mm256_storeu_si256((__m256i *)(y + 2 * i), packed);
    }
    return i;
}

int64_t mq_simd_f32_to_bf16(const float *x, uint8_t *y, int64_t n)
{
    return mq_cpu_has_avx2() ? f32_to_bf16_avx2(x, y, n) : 0;
}

bool mq_simd_f32_to_f16(const float *src, uint8_t *dst, int64_t n)
{
    const bool ok = f16c_ok();
    if (ok)
        f32_to_f16_f16c(src, dst, n);
    return ok;
}

bool mq_simd_round_f16(float *x, int64_t n)
{
    const bool ok = f16c_ok();
    if (ok)
        round_f16_f16c(x, n);
    return ok;
}

bool mq_cpu_has_avx2(void)
{
    pthread_once(&cpu_once, cpu_probe);
    return have_avx2 && (simd_allowed & MF_QUANT_AVX2);
}

bool mq_cpu_has_avx512(void)
{
    pthread_once(&cpu_once, cpu_probe);
    return have_avx512 && (simd_allowed & MF_QUANT_AVX2) && (simd_allowed & MF_QUANT_AVX512);
}

unsigned mf_quant_set_simd(unsigned allowed)
{
    pthread_once(&cpu_once, cpu_probe);
    return atomic_exchange(&simd_allowed, allowed);
}

unsigned mf_quant_simd_level(void)
{
    return (mq_cpu_has_avx2() ? MF_QUANT_AVX2 : 0) | (mq_cpu_has_avx512() ? MF_QUANT_AVX512 : 0) |
           (have_f16c && (simd_allowed & MF_QUANT_F16C) ? MF_QUANT_F16C : 0);
}

bool mq_simd_q8_0(const float *x, uint8_t *y, int64_t n)
{
    if (!mq_cpu_has_avx2())
        return false;
    q8_0_row_avx2(x, y, n);
    return true;
}

bool mq_simd_max_by_abs32(const float *x, float *max)
{
    return mq_cpu_has_avx2() && max_by_abs32_avx2(x, max);
}

void mq_simd_offset_levels32(const float *x, float id, float bias, int cap, uint8_t *L)
{
    offset_levels32_avx2(x, id, bias, cap, L);
}

#else

bool mq_simd_f32_to_f16(const float *src, uint8_t *dst, int64_t n)
{
    (void)src, (void)dst, (void)n;
    return false;
}

bool mq_simd_round_f16(float *x, int64_t n)
{
    (void)x, (void)n;
    return false;
}

bool mq_simd_pack_q4(const uint8_t *L, uint8_t *qs)
{
    (void)L, (void)qs;
    return false;
}

bool mq_simd_pack_q5(const uint8_t *L, uint8_t *qh4, uint8_t *qs)
{
    (void)L, (void)qh4, (void)qs;
    return false;
}

bool mq_simd_tq1_0_block(const float *x, uint8_t *y)
{
    (void)x, (void)y;
    return false;
}

bool mq_simd_tq2_0_block(const float *x, uint8_t *y)
{
    (void)x, (void)y;
    return false;
}

bool mq_simd_min_max32(const float *x, float *min, float *max)
{
    (void)x, (void)min, (void)max;
    return false;
}

void mq_simd_asym_levels32(const float *x, float min, float id, int cap, uint8_t *L)
{
    (void)x, (void)min, (void)id, (void)cap, (void)L;
}

int64_t mq_simd_f32_to_bf16(const float *x, uint8_t *y, int64_t n)
{
    (void)x, (void)y, (void)n;
    return 0;
}

bool mq_cpu_has_avx2(void) { return false; }
bool mq_cpu_has_avx512(void) { return false; }
unsigned mf_quant_set_simd(unsigned allowed) { (void)allowed; return MF_QUANT_ALL; }
unsigned mf_quant_simd_level(void) { return 0; }

bool mq_simd_f16_to_f32(const uint8_t *src, float *dst, int64_t n)
{
    (void)src, (void)dst, (void)n;
    return false;
}

bool mq_simd_max_by_abs32(const float *x, float *max)
{
    (void)x, (void)max;
    return false;
}

void mq_simd_offset_levels32(const float *x, float id, float bias, int cap, uint8_t *L)
{
    (void)x, (void)id, (void)bias, (void)cap, (void)L;
}

bool mq_simd_q8_0(const float *x, uint8_t *y, int64_t n)
{
    (void)x, (void)y, (void)n;
    return false;
}

#endif
