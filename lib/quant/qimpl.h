/* qimpl.h - shared helpers of the quantization kernels (lib/quant only).
 *
 * Block layouts are byte arrays (alignment 1), so a block pointer may point
 * anywhere in a caller's buffer; 16-bit fields are little-endian. */
#ifndef MF_QIMPL_H
#define MF_QIMPL_H
#include "core/core.h"
#include "quant/quant.h"

/* The x86-64 vector kernels (quant_simd*.c), each chosen at run time, are
 * built when the compiler targets x86-64; every other machine compiles
 * their other branch, stubs that send every block to the scalar code.
 * MF_PORTABLE_KERNELS builds that branch here too (make check-portable). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(MF_PORTABLE_KERNELS)
#define MQ_X86_KERNELS 1
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#define QK_K 256
/* ggml treats a group whose max |x| is below this as all zeros */
#define GROUP_MAX_EPS 1e-15f

/* One row kernel: quantizes n_per_row floats (one row) into dst.
 * qw: NULL or the row's importance weights (n_per_row of them). */
typedef void (*mq_quant_fn)(const float *x, uint8_t *dst, int64_t n_per_row, const float *qw);
/* Dequantizes n elements (a block multiple). */
typedef void (*mq_deq_fn)(const uint8_t *src, float *dst, int64_t n);

/* ------------------------------------------------------------ rounding */

/* ggml's nearest_int: adding 1.5*2^23 leaves round-to-nearest-even of v in
 * the low mantissa bits. Valid for |v| <= 2^22; for larger, inf or NaN the
 * result is whatever those bits say (ggml's assert is compiled out in the
 * reference build, and the quantizers do reach it with inf on tiny inputs). */
static inline int mq_nearest_int(float v)
{
    float t = v + 12582912.f;
    uint32_t u;
    memcpy(&u, &t, 4);
    return (int)(u & 0x007fffff) - 0x00400000;
}

/* C's float-to-int conversion as x86-64 performs it (cvttss2si): truncation,
 * and INT32_MIN for NaN or out of range (undefined behaviour in C, which ggml
 * reaches when 1/d overflows; this reproduces the reference bytes). */
static inline int32_t mq_cvtt(float v)
{
    if (v >= -2147483648.0f && v < 2147483648.0f)
        return (int32_t)v;
    return INT32_MIN;
}

/* (int8_t)v and (uint8_t)v in ggml's code: gcc converts to int32 with
 * cvttss2si and keeps the low byte. */
static inline int8_t mq_to_i8(float v) { return (int8_t)(uint8_t)(uint32_t)mq_cvtt(v); }
static inline uint8_t mq_to_u8(float v) { return (uint8_t)(uint32_t)mq_cvtt(v); }

static inline int mq_min(int a, int b) { return a < b ? a : b; }
static inline int mq_max(int a, int b) { return a > b ? a : b; }
static inline int mq_clamp(int v, int lo, int hi) { return mq_max(lo, mq_min(hi, v)); }

/* ------------------------------------------------------------ fp16 fields */

static inline uint16_t mq_fp16(float f) { return mf_f32_to_f16(f); }
static inline float mq_f32(uint16_t h) { return mf_f16_to_f32(h); }
static inline void mq_put_f16(uint8_t *p, float f) { mf_wr16le(p, mf_f32_to_f16(f)); }
static inline float mq_get_f16(const uint8_t *p) { return mf_f16_to_f32(mf_rd16le(p)); }

/* ------------------------------------------------------------ kernels */
/* quant_legacy.c */
void mq_quant_q4_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q4_1(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q5_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q5_1(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q8_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_deq_q4_0(const uint8_t *x, float *y, int64_t n);
void mq_deq_q4_1(const uint8_t *x, float *y, int64_t n);
void mq_deq_q5_0(const uint8_t *x, float *y, int64_t n);
void mq_deq_q5_1(const uint8_t *x, float *y, int64_t n);
void mq_deq_q8_0(const uint8_t *x, float *y, int64_t n);
void mq_quant_q8_0_scalar_block(const float *x, uint8_t *y);
/* quant_fp4.c: MXFP4, NVFP4, Q1_0, Q2_0 (ggml after b4747) */
void mq_quant_mxfp4(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_nvfp4(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q1_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q2_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_deq_mxfp4(const uint8_t *x, float *y, int64_t n);
void mq_deq_nvfp4(const uint8_t *x, float *y, int64_t n);
void mq_deq_q1_0(const uint8_t *x, float *y, int64_t n);
void mq_deq_q2_0(const uint8_t *x, float *y, int64_t n);

/* quant_simd.c: vector versions, used when the CPU has them (and the
 * environment variable MFMT_NO_SIMD is unset); false: use the scalar code. */
bool mq_simd_q8_0(const float *x, uint8_t *y, int64_t n);
/* true when the AVX2 kernels may run (CPU has AVX2, MFMT_NO_SIMD unset) */
bool mq_cpu_has_avx2(void);
/* the same for the AVX-512F kernels (AVX2 too, MFMT_NO_SIMD unset) */
bool mq_cpu_has_avx512(void);
/* F16 -> F32 of n halves (little-endian, any alignment) with F16C, the same
 * floats as mf_f16_to_f32 (tests compare all 65536); false: no F16C. */
bool mq_simd_f16_to_f32(const uint8_t *src, float *dst, int64_t n);
/* F32 -> BF16 (mf_f32_to_bf16: NaN made quiet, else round to nearest even)
 * of the first values of x, a whole number of vectors; returns how many
 * (0: no AVX2, the caller converts them all). */
int64_t mq_simd_f32_to_bf16(const float *x, uint8_t *y, int64_t n);
/* F32 -> F16 of n floats with F16C (little-endian, any alignment), the
 * same halves as mf_f32_to_f16; false: no F16C. */
bool mq_simd_f32_to_f16(const float *src, uint8_t *dst, int64_t n);
/* x[i] = mf_f16_to_f32(mf_f32_to_f16(x[i])) for n floats with F16C; false:
 * no F16C. */
bool mq_simd_round_f16(float *x, int64_t n);
/* Q4_0/Q5_0 reference path: the value of largest magnitude of 32 (false:
 * no AVX2 or a NaN, use the scalar code); then, only after it returned true,
 * the levels min(cap, (int8_t)(x*id + bias)). */
bool mq_simd_max_by_abs32(const float *x, float *max);
void mq_simd_offset_levels32(const float *x, float id, float bias, int cap, uint8_t *L);

/* Q4_1/Q5_1 reference path: min and max of 32 (false: no AVX2, a NaN, or a
 * zero extreme, use the scalar scan); then, only after it returned true,
 * the levels (x - min) * id + 0.5 (see quant_simd.c). */
bool mq_simd_min_max32(const float *x, float *min, float *max);
/* one TQ1_0 / TQ2_0 block (false: no AVX2 or a non-finite value or
 * scale, use the scalar code) */
bool mq_simd_tq1_0_block(const float *x, uint8_t *y);
bool mq_simd_tq2_0_block(const float *x, uint8_t *y);
/* the 32-blocks' nibble and fifth-bit packing (false: no AVX2) */
bool mq_simd_pack_q4(const uint8_t *L, uint8_t *qs);
bool mq_simd_pack_q5(const uint8_t *L, uint8_t *qh4, uint8_t *qs);
void mq_simd_asym_levels32(const float *x, float min, float id, int cap, uint8_t *L);

/* quant_simd512.c: a whole row of Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0 by the
 * reference rounding (no importance matrix) with AVX-512F; blocks the
 * vector code leaves (a NaN, a zero extreme) go to `scalar`, the type's
 * scalar block. false: no AVX-512 (or turned off), nothing written. */
typedef void (*mq_block_fn)(const float *x, uint8_t *y);
bool mq_simd512_legacy_row(mf_dtype dt, const float *x, uint8_t *y, int64_t n, mq_block_fn scalar);

/* quant_search.c: ggml's scale searches, shared by several types */
float mq_make_qx_quants(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw);
float mq_make_q3_quants(int n, int nmax, const float *x, int8_t *L);
float mq_make_qkx2_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                          uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad);
float mq_make_qkx3_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                          uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad);
float mq_make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *quant_weights);
/* Eight independent searches on consecutive groups of n values (group j:
 * x + j*n, weights + j*n, L + j*n), results in scales[j] / mins[j]. Same
 * bits as eight scalar calls; AVX2 runs the groups in parallel lanes.
 * qkx: make_qkx2_quants, or make_qkx3_quants when v3 (weights required). */
void mq_make_qkx_quants8(bool v3, int n, int nmax, const float *x, const float *weights, uint8_t *L, float *scales,
                         float *mins, float rmin, float rdelta, int nstep, bool use_mad);
/* qx: make_qx_quants(n, nmax, x + j*n, L + j*n, rmse_type, qw ? qw + j*n : NULL) */
void mq_make_qx_quants8(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales);

/* quant_simd_search.c: the AVX2 lanes of the two above (n <= 32);
 * false: not handled, use the scalar code. */
bool mq_simd_qkx_quants8(bool v3, int n, int nmax, const float *x, const float *weights, uint8_t *L, float *scales,
                         float *mins, float rmin, float rdelta, int nstep, bool use_mad);
bool mq_simd_qx_quants8(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales);
/* mq_make_qx_quants8 for sixteen groups with AVX-512 (false: no AVX-512,
 * or a non-finite value: use two eight-group calls) */
bool mq_simd_qx_quants16(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw, float *scales);
/* make_q3_quants(n, nmax, x + j*n, L + j*n) for j = 0..7 (n <= 32), and
 * Q3_K's final levels of a 16-value group for scale d; false: use the
 * scalar code. */
bool mq_simd_q3_quants8(int n, int nmax, const float *x, int8_t *L, float *scales);
/* the same for a whole Q3_K super-block (16 groups of 16, nmax 4) in
 * AVX-512 lanes; false: no AVX-512 (use the 8-lane kernel) */
bool mq_simd_q3_quants16(const float *x, int8_t *L, float *scales);
bool mq_simd_q3_group_levels(const float *x, float d, int8_t *L);
/* quant_iq4.c's sub-block scale search for eight consecutive 32-value
 * groups (levels: the 16 sorted IQ4 values); false: use the scalar code. */
bool mq_simd_iq4_scales8(const float *x, const float *weight, const int8_t *values, int ntry, float *scales);

/* quant_simd_iq1.c: IQ1_M's split search (quant_iq1.c) of the 16
 * sub-blocks of a super-block (x, weight: 16 values each; idx: each
 * sub-block's positions in sorted order), one sub-block per lane: per
 * sub-block its scale and boundaries i1, i2 and sign combination k (-1: no
 * candidate fits). false: no AVX2, use the scalar code. */
bool mq_simd_iq1_m_splits(const float *x, const float *weight, const int *idx, float *scale, int *i1, int *i2,
                          int *k);

/* quant_k.c */
void mq_quant_q2_k(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q3_k(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q4_k(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q5_k(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_q6_k(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_deq_q2_k(const uint8_t *x, float *y, int64_t n);
void mq_deq_q3_k(const uint8_t *x, float *y, int64_t n);
void mq_deq_q4_k(const uint8_t *x, float *y, int64_t n);
void mq_deq_q5_k(const uint8_t *x, float *y, int64_t n);
void mq_deq_q6_k(const uint8_t *x, float *y, int64_t n);
void mq_deq_q8_k(const uint8_t *x, float *y, int64_t n);

/* quant_iq4.c */
void mq_quant_iq4_nl(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq4_xs(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_deq_iq4_nl(const uint8_t *x, float *y, int64_t n);
/* the scalar sub-block scale search and the 16 levels (for tests) */
float mq_iq4_block_scale_scalar(const float *xb, const float *weight, int ntry);
const int8_t *mq_iq4_values(void);
void mq_deq_iq4_xs(const uint8_t *x, float *y, int64_t n);

/* quant_iq_deq.c */
void mq_deq_iq2_xxs(const uint8_t *x, float *y, int64_t n);
void mq_deq_iq2_xs(const uint8_t *x, float *y, int64_t n);
void mq_deq_iq3_xxs(const uint8_t *x, float *y, int64_t n);
void mq_deq_iq3_s(const uint8_t *x, float *y, int64_t n);
void mq_deq_iq2_s(const uint8_t *x, float *y, int64_t n);
void mq_deq_iq1_s(const uint8_t *x, float *y, int64_t n);
void mq_deq_iq1_m(const uint8_t *x, float *y, int64_t n);

/* quant_iq2.c, quant_iq3.c, quant_iq1.c: the lattice i-quants */
void mq_quant_iq2_xxs(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq2_xs(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq2_s(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq3_xxs(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq3_s(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq1_s(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_iq1_m(const float *x, uint8_t *y, int64_t n, const float *qw);
/* the order IQ1_S/IQ1_M sort a sub-block in (n <= 32): what ggml's qsort
 * call gives with glibc (for tests) */
void mq_iq1_sorted_order(const float *xb, int n, int *idx);

/* quant_ternary.c */
void mq_quant_tq1_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_quant_tq2_0(const float *x, uint8_t *y, int64_t n, const float *qw);
void mq_deq_tq1_0(const uint8_t *x, float *y, int64_t n);
void mq_deq_tq2_0(const uint8_t *x, float *y, int64_t n);

#endif /* MF_QIMPL_H */
