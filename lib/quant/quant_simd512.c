/* quant_simd512.c - AVX-512F rows of the 32-element reference quantizers
 * (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 without an importance matrix), chosen at
 * run time over the AVX2 block kernels of quant_simd.c when the CPU has
 * AVX-512F. One call quantizes a whole row: a block is two 16-lane
 * vectors, the levels are narrowed with vpmovdb (the low byte, as the
 * scalar (uint8_t)/(int8_t) casts keep) and packed in registers; the AVX2
 * path called three kernels per block (scan, levels, pack), each with its
 * CPU check. On an AMD Zen 5 (issue 23) this is what made the
 * nearly-a-copy types faster than llama-quantize by the margin Intel
 * machines showed.
 *
 * The bits are the scalar code's, for the reasons quant_simd.c gives: max
 * and min are order-independent without NaN (a block holding one goes to
 * the scalar block; the asymmetric types also send blocks whose min or
 * max is zero there, since the scan keeps the first of +0/-0); each
 * product and sum is rounded on its own (-ffp-contract=off); roundf is
 * rebuilt exactly from the truncation; cvttps2dq gives what cvttss2si
 * gives. test_quant_simd compares every path with the scalar code. */
#include "quant/qimpl.h"

#ifdef MQ_X86_KERNELS
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define INLINE inline __attribute__((always_inline))

/* roundf(p) (ties away from zero), then (int32) as cvttss2si does. */
AVX512 static INLINE __m512i round_away_cvt(__m512 p)
{
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32((int)0x80000000u));
    __m512 t = _mm512_roundscale_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512 frac = _mm512_abs_ps(_mm512_sub_ps(p, t));
    __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    __m512 one = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_set1_ps(1.0f)),
                                                     _mm512_and_si512(_mm512_castps_si512(p),
                                                                      _mm512_castps_si512(sign))));
    return _mm512_cvttps_epi32(_mm512_mask_add_ps(t, up, t, one));
}

AVX512 static INLINE bool has_nan(__m512 a, __m512 b)
{
    return (_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q)) != 0;
}

/* (int8_t) of the int32 lanes, as gcc's cast of a cvttss2si result. */
AVX512 static INLINE __m512i low_byte_signed(__m512i v)
{
    return _mm512_srai_epi32(_mm512_slli_epi32(v, 24), 24);
}

/* Q4: byte j = L[j] | L[j+16] << 4 (the low byte); a = lanes 0..15, b = 16..31. */
AVX512 static INLINE void pack_q4(__m512i a, __m512i b, uint8_t *qs)
{
    _mm_storeu_si128((__m128i *)qs, _mm512_cvtepi32_epi8(_mm512_or_si512(a, _mm512_slli_epi32(b, 4))));
}

/* Q5: low nibbles as Q4 (masked), bit 4 of L[j] into bit j of qh. */
AVX512 static INLINE void pack_q5(__m512i a, __m512i b, uint8_t *qh4, uint8_t *qs)
{
    const __m512i m = _mm512_set1_epi32(0x0F), b4 = _mm512_set1_epi32(0x10);
    uint32_t qh = (uint32_t)_mm512_test_epi32_mask(a, b4) | (uint32_t)_mm512_test_epi32_mask(b, b4) << 16;
    mf_wr32le(qh4, qh);
    pack_q4(_mm512_and_si512(a, m), _mm512_and_si512(b, m), qs);
}

AVX512 static bool q8_0_block(const float *x, uint8_t *y)
{
    __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
    if (has_nan(a, b))
        return false;
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)));
    const float d = amax / 127;
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y, d);
    const __m512 vid = _mm512_set1_ps(id);
    _mm_storeu_si128((__m128i *)(y + 2), _mm512_cvtepi32_epi8(round_away_cvt(_mm512_mul_ps(a, vid))));
    _mm_storeu_si128((__m128i *)(y + 18), _mm512_cvtepi32_epi8(round_away_cvt(_mm512_mul_ps(b, vid))));
    return true;
}

/* Q4_0 (nmax 8) / Q5_0 (nmax 16): d = max / -nmax with max the first value
 * of largest magnitude, L = min(2nmax-1, (int8_t)(x*id + nmax + 0.5)). */
AVX512 static INLINE bool sym_block(const float *x, uint8_t *y, int nmax, bool five)
{
    __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
    if (has_nan(a, b))
        return false;
    __m512 aa = _mm512_abs_ps(a), ab = _mm512_abs_ps(b);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(aa, ab));
    float max = 0.0f;
    if (amax != 0.0f) {
        __m512 va = _mm512_set1_ps(amax);
        uint32_t hit = (uint32_t)_mm512_cmp_ps_mask(aa, va, _CMP_EQ_OQ) |
                       (uint32_t)_mm512_cmp_ps_mask(ab, va, _CMP_EQ_OQ) << 16;
        max = x[__builtin_ctz(hit)];
    }
    const float d = max / -nmax;
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y, d);
    const __m512 vid = _mm512_set1_ps(id), bias = _mm512_set1_ps(nmax + 0.5f);
    const __m512i cap = _mm512_set1_epi32(2 * nmax - 1);
    __m512i la = _mm512_min_epi32(low_byte_signed(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(a, vid), bias))), cap);
    __m512i lb = _mm512_min_epi32(low_byte_signed(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(b, vid), bias))), cap);
    if (five)
        pack_q5(la, lb, y + 2, y + 6);
    else
        pack_q4(la, lb, y + 2);
    return true;
}

/* Q4_1 (nmax 15, L capped at 15 after the (int8_t) cast) / Q5_1 (nmax 31,
 * (uint8_t) with no cap): d = (max - min) / nmax, L from (x - min)*id + 0.5. */
AVX512 static INLINE bool asym_block(const float *x, uint8_t *y, bool five)
{
    __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
    if (has_nan(a, b))
        return false;
    const float min = _mm512_reduce_min_ps(_mm512_min_ps(a, b));
    const float max = _mm512_reduce_max_ps(_mm512_max_ps(a, b));
    if (min == 0.0f || max == 0.0f)
        return false;
    const float d = (max - min) / (five ? 31 : 15);
    const float id = d ? 1.0f / d : 0.0f;
    mq_put_f16(y, d);
    mq_put_f16(y + 2, min);
    const __m512 vmin = _mm512_set1_ps(min), vid = _mm512_set1_ps(id), half = _mm512_set1_ps(0.5f);
    __m512i la = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(a, vmin), vid), half));
    __m512i lb = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(b, vmin), vid), half));
    if (five) {
        pack_q5(la, lb, y + 4, y + 8);
    } else {
        const __m512i cap = _mm512_set1_epi32(15);
        pack_q4(_mm512_min_epi32(low_byte_signed(la), cap), _mm512_min_epi32(low_byte_signed(lb), cap), y + 4);
    }
    return true;
}

AVX512 static bool q4_0_block(const float *x, uint8_t *y) { return sym_block(x, y, 8, false); }
AVX512 static bool q5_0_block(const float *x, uint8_t *y) { return sym_block(x, y, 16, true); }
AVX512 static bool q4_1_block(const float *x, uint8_t *y) { return asym_block(x, y, false); }
AVX512 static bool q5_1_block(const float *x, uint8_t *y) { return asym_block(x, y, true); }

/* One row loop per type, so the block kernel is inlined into it. */
#define ROW(NAME, BLOCK, BYTES)                                                                  \
    AVX512 static void NAME(const float *x, uint8_t *y, int64_t n, mq_block_fn scalar)         \
    {                                                                                            \
        for (int64_t ib = 0; ib < n / 32; ib++)                                                  \
            if (!BLOCK(x + ib * 32, y + ib * (BYTES)))                                           \
                scalar(x + ib * 32, y + ib * (BYTES));                                           \
    }
ROW(q8_0_row, q8_0_block, 34)
ROW(q4_0_row, q4_0_block, 18)
ROW(q5_0_row, q5_0_block, 22)
ROW(q4_1_row, q4_1_block, 20)
ROW(q5_1_row, q5_1_block, 24)

bool mq_simd512_legacy_row(mf_dtype dt, const float *x, uint8_t *y, int64_t n, mq_block_fn scalar)
{
    if (!mq_cpu_has_avx512())
        return false;
    switch (dt) {
    case MF_Q8_0: q8_0_row(x, y, n, scalar); return true;
    case MF_Q4_0: q4_0_row(x, y, n, scalar); return true;
    case MF_Q5_0: q5_0_row(x, y, n, scalar); return true;
    case MF_Q4_1: q4_1_row(x, y, n, scalar); return true;
    case MF_Q5_1: q5_1_row(x, y, n, scalar); return true;
    default: return false;
    }
}

#else

bool mq_simd512_legacy_row(mf_dtype dt, const float *x, uint8_t *y, int64_t n, mq_block_fn scalar)
{
    (void)dt, (void)x, (void)y, (void)n, (void)scalar;
    return false;
}

#endif
