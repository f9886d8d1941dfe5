/* prequant.c - the pre-quantized layouts of prequant.h.
 *
 * Each method restates the producing project's own dequantization (the
 * file and commit are cited at each); the arithmetic follows it step by
 * step in the dtype it uses, rounding where it rounds:
 *  - GPTQ (AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py,
 *    179776bd): codes and zero points are little-endian bit streams along
 *    the packed dimension (3-bit values straddle words the same way);
 *    zero = (stored & mask) + 1 for checkpoint_format "gptq" (v1), stored
 *    for gptq_v2; w = scales[g] * (q - zero) in the scales' dtype (fp16:
 *    the product of an fp16 and a small integer is exact in float, then
 *    rounded once), g = g_idx[i] when g_idx is stored, else i / group.
 *  - AWQ gemm (AutoAWQ awq/utils/packing_utils.py dequantize_gemm,
 *    7ee28736): qweight [in, out / 8], nibble k of a word holds output
 *    column AWQ_ORDER[k] = {0,2,4,6,1,3,5,7} of its eight; the same for
 *    qzeros; w = (q - z) * scales in the scales' dtype; the logical weight
 *    is the transpose ([out, in]).
 *  - FP8 and compressed-tensors (compressed_tensors/quantization/lifecycle/
 *    forward.py dequantize): x = q.to(scale.dtype); x = x - zp.to(scale.dtype)
 *    when there are zero points; x = x * scale: each step rounded to the
 *    scale's dtype. DeepSeek's 128x128 weight_scale_inv is F32, so that is
 *    the F32 product of transformers' finegrained_fp8 dequantization.
 *  - MXFP4 (transformers integrations/mxfp4.py convert_moe_packed_tensors,
 *    93a1c400): byte k of a 16-byte block holds elements 2k (low nibble)
 *    and 2k+1 (high); value = ldexp(FP4[code], scale - 127) in bf16; the
 *    result is transposed to [experts, in, out].
 *  - NVFP4 (ModelOpt export): weight U8 [out, in / 2] low nibble first,
 *    weight_scale E4M3 [out, in / 16], weight_scale_2 F32 scalar;
 *    w = E2M1[code] * scale * scale_2 in F32.
 * Then every value is rounded to q->native (a no-op when the last step's
 * dtype is native already). */
#include "quant/prequant.h"
#include "quant/qimpl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const method_names[MF_PQ_COUNT] = {
    [MF_PQ_GPTQ] = "gptq", [MF_PQ_AWQ] = "awq", [MF_PQ_FP8] = "fp8",
    [MF_PQ_CT_INT] = "compressed-tensors", [MF_PQ_MXFP4] = "mxfp4", [MF_PQ_NVFP4] = "nvfp4",
    [MF_PQ_BNB4] = "bitsandbytes-4bit", [MF_PQ_BNB8] = "bitsandbytes-8bit",
};

const char *mf_pq_method_name(mf_pq_method m)
{
    return m >= 0 && m < MF_PQ_COUNT ? method_names[m] : "?";
}

/* ------------------------------------------------------------ elements */

static const float fp4_values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                     -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

float mf_pq_e4m3_to_f32(uint8_t b)
{
    int s = b >> 7, e = (b >> 3) & 0xf, m = b & 7;
    float v;
    if (e == 0xf && m == 7)
        v = NAN; /* E4M3FN: no infinities, one NaN per sign */
    else if (e == 0)
        v = ldexpf((float)m, -9);
    else
        v = ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return s ? -v : v;
}

float mf_pq_e5m2_to_f32(uint8_t b)
{
    return mf_f16_to_f32((uint16_t)(b << 8)); /* the top byte of an IEEE half */
}

/* x rounded to bfloat16 and widened back: mf_f32_to_bf16's rounding
 * (nearest even, a NaN quieted), inline so the row loops vectorize. */
static inline float round_bf16(float x)
{
    uint32_t u = mf_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return mf_bits_f32((u | 0x400000u) & 0xffff0000u);
    return mf_bits_f32((u + 0x7fffu + ((u >> 16) & 1)) & 0xffff0000u);
}

/* f32 magnitudes whose f16 is a normal number: [2^-14, 65520) */
#define F16_NORMAL_LO 0x38800000u
#define F16_NORMAL_SPAN (0x477ff000u - 0x38800000u)

/* x rounded to binary16 and widened back. In the normal range dropping
 * 13 mantissa bits to nearest even is mf_f32_to_f16's rounding (the
 * exponent rebias cancels on the way back); zeros, subnormals,
 * overflow and NaN take the exact functions. */
static inline float round_f16(float x)
{
    uint32_t u = mf_f32_bits(x), ax = u & 0x7fffffffu;
    if (ax - F16_NORMAL_LO < F16_NORMAL_SPAN)
        return mf_bits_f32((u + 0xfffu + ((u >> 13) & 1)) & 0xffffe000u);
    return ax == 0 ? x : mf_f16_to_f32(mf_f32_to_f16(x));
}

static inline float round_to(float x, mf_dtype dt)
{
    return dt == MF_F16 ? round_f16(x) : dt == MF_BF16 ? round_bf16(x) : x;
}

/* Each of n floats rounded to dt (round_to), F16 with F16C when there. */
static void round_run(float *x, size_t n, mf_dtype dt)
{
    if (dt == MF_F16 && !mq_simd_round_f16(x, (int64_t)n))
        for (size_t i = 0; i < n; i++)
            x[i] = round_f16(x[i]);
    else if (dt == MF_BF16) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) /* eight at a time: gcc -O2 vectorizes that */
            for (int k = 0; k < 8; k++)
                x[i + k] = round_bf16(x[i + k]);
        for (; i < n; i++)
            x[i] = round_bf16(x[i]);
    }
}

/* Element i of a part as a float (the float and FP8 types; integers). */
static float load(const mf_pq_part *p, uint64_t i)
{
    switch (p->dt) {
    case MF_F16: return mf_f16_to_f32(mf_rd16le(p->p + 2 * i));
    case MF_BF16: return mf_bf16_to_f32(mf_rd16le(p->p + 2 * i));
    case MF_F32: return mf_bits_f32(mf_rd32le(p->p + 4 * i));
    case MF_F8_E4M3: return mf_pq_e4m3_to_f32(p->p[i]);
    case MF_F8_E5M2: return mf_pq_e5m2_to_f32(p->p[i]);
    case MF_I8: return (float)(int8_t)p->p[i];
    case MF_U8: return (float)p->p[i];
    case MF_I32: return (float)(int32_t)mf_rd32le(p->p + 4 * i);
    default: return NAN;
    }
}

static int32_t load_i32(const mf_pq_part *p, uint64_t i)
{
    return (int32_t)mf_rd32le(p->p + 4 * i);
}

/* Code k of a bit stream of `bits`-bit codes held in 32-bit words, words
 * w(0), w(1), ... at word_at(base + j * stride) (little-endian inside a
 * word; a code may straddle two words, as 3-bit GPTQ codes do). */
static unsigned stream_code(const mf_pq_part *p, uint64_t base, uint64_t stride, uint64_t k,
                            int bits)
{
    uint64_t bit = k * (uint64_t)bits, w = bit / 32;
    unsigned sh = (unsigned)(bit % 32), mask = (1u << bits) - 1;
    uint64_t lo = mf_rd32le(p->p + 4 * (base + w * stride));
    if (sh + (unsigned)bits > 32)
        lo |= (uint64_t)mf_rd32le(p->p + 4 * (base + (w + 1) * stride)) << 32;
    return (unsigned)(lo >> sh) & mask;
}

/* ------------------------------------------------------------- scratch */

/* What a call of mf_pq_rows works in: a tile of ROWS logical rows of
 * floats (rows `stride` floats apart: one row plus a cache line, so that
 * the rows of a tile, written side by side, do not share L1 sets), and
 * the value tables of the tile's rows (GPTQ / AWQ: 16 values per row and
 * group; FP8 / NVFP4: the 256 codes of the element type). */
enum { ROWS = 8 };

typedef struct pq_scratch {
    float *rows;    /* ROWS * stride */
    int64_t stride;
    float *tab;     /* table_floats() */
    float *s;       /* ROWS * groups (8-bit GPTQ: the scales) */
    int *z;         /* ROWS * groups (8-bit GPTQ: the zero points) */
    bool plain;     /* GPTQ: every input i in group i / group_size (g_idx absent or so) */
} pq_scratch;

static int64_t groups_in_row(const mf_pq *q)
{
    if (q->method == MF_PQ_GPTQ || q->method == MF_PQ_AWQ)
        return q->group_size > 0 ? q->cols / q->group_size : 1;
    return 1;
}

/* The group of input i: g_idx[i] when stored (act-order), else i / group. */
static int64_t group_of(const mf_pq *q, int64_t i)
{
    if (q->g_idx.p)
        return load_i32(&q->g_idx, (uint64_t)i);
    return q->group_size > 0 ? i / q->group_size : 0;
}

/* --------------------------------------------------------- GPTQ and AWQ */

/* The 2^bits values of one (output, group): scale * (q - zero) rounded
 * to the scale's dtype, then to native (GPTQ: scales * (w - zeros);
 * AWQ: (w - z) * s: the same product). */
static void int_table(const mf_pq *q, float s, int z, float *tab)
{
    for (int c = 0; c < 16; c++) /* 2^bits used; the rest keeps the run whole */
        tab[c] = s * (float)(c - z);
}

/* The tables of int_table rounded as upstream rounds: to the scale's
 * dtype, then to native. */
static void round_tables(const mf_pq *q, float *tab, size_t n)
{
    round_run(tab, n, q->scale.dt);
    if (q->native != q->scale.dt)
        round_run(tab, n, q->native);
}

/* GPTQ row o's per-group values: tables at tab (up to 4 bits) or scale
 * and zero point at s, z. */
static void gptq_row_tables(const mf_pq *q, int64_t o, float *tab, float *s, int *z)
{
    const int64_t R = q->rows, zwords = q->zero.shape[1], ng = groups_in_row(q);
    for (int64_t g = 0; g < ng; g++) {
        s[g] = load(&q->scale, (uint64_t)(g * R + o));
        z[g] = (int)stream_code(&q->zero, (uint64_t)(g * zwords), 1, (uint64_t)o, q->bits) +
               q->zero_offset;
        if (q->bits <= 4)
            int_table(q, s[g], z[g], tab + g * 16);
    }
    if (q->bits <= 4)
        round_tables(q, tab, (size_t)ng * 16);
}

static float gptq_value(const mf_pq *q, float s, int z, unsigned c)
{
    return round_to(round_to(s * (float)((int)c - z), q->scale.dt), q->native);
}

/* Outputs o0 .. o0 + n - 1 of a GPTQ weight whose codes fill whole words
 * and whose groups are contiguous: qweight is [in * b / 32, out], so word
 * (k, o) holds inputs k * per ... k * per + per - 1 of output o, and the
 * tile reads the n words of a row of qweight side by side. */
static void gptq_tile(const mf_pq *q, int64_t o0, int64_t n, pq_scratch *w)
{
    const int64_t R = q->rows, C = q->cols, ng = groups_in_row(q), S = w->stride;
    const int b = q->bits, per = 32 / b;
    const unsigned mask = (1u << b) - 1;
    const int64_t words_per_group = (q->group_size > 0 ? q->group_size : C) / per;
    for (int64_t t = 0; t < n; t++)
        gptq_row_tables(q, o0 + t, w->tab + t * ng * 16, w->s + t * ng, w->z + t * ng);
    for (int64_t k = 0; k < C / per; k++) {
        const uint8_t *wp = q->w.p + 4 * (uint64_t)(k * R + o0);
        const int64_t g = k / words_per_group;
        for (int64_t t = 0; t < n; t++) {
            const uint32_t word = mf_rd32le(wp + 4 * t);
            const float *tab = w->tab + (t * ng + g) * 16;
            float *d = w->rows + t * S + k * per;
            if (b == 4) {
                d[0] = tab[word & 0xf], d[1] = tab[(word >> 4) & 0xf];
                d[2] = tab[(word >> 8) & 0xf], d[3] = tab[(word >> 12) & 0xf];
                d[4] = tab[(word >> 16) & 0xf], d[5] = tab[(word >> 20) & 0xf];
                d[6] = tab[(word >> 24) & 0xf], d[7] = tab[word >> 28];
            }
            else if (b < 4)
                for (int j = 0; j < per; j++)
                    d[j] = tab[(word >> (b * j)) & mask];
            else
                for (int j = 0; j < per; j++)
                    d[j] = gptq_value(q, w->s[t * ng + g], w->z[t * ng + g], (word >> (b * j)) & mask);
        }
    }
}

/* Logical row o (output o) of a GPTQ weight, any layout that passed the
 * check: 3-bit codes straddling words, act-order g_idx. */
static void gptq_row(const mf_pq *q, int64_t o, pq_scratch *w, float *dst)
{
    const int64_t R = q->rows, C = q->cols;
    gptq_row_tables(q, o, w->tab, w->s, w->z);
    for (int64_t i = 0; i < C; i++) {
        int64_t g = group_of(q, i);
        unsigned c = stream_code(&q->w, (uint64_t)o, (uint64_t)R, (uint64_t)i, q->bits);
        dst[i] = q->bits <= 4 ? w->tab[g * 16 + c] : gptq_value(q, w->s[g], w->z[g], c);
    }
}

/* Nibble k of a word of 8 4-bit codes in AWQ gemm's order: output column
 * AWQ_ORDER[k] = {0,2,4,6,1,3,5,7}[k], so column c is in nibble
 * AWQ_REVERSE_ORDER[c]. */
static const int awq_nibble_of_col[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/* Logical row o of an AWQ gemm weight, alone (awq_gemm_tile's values). */
static void awq_gemm_row(const mf_pq *q, int64_t o, pq_scratch *w, float *dst)
{
    const int64_t R = q->rows, C = q->cols, words = q->w.shape[1], ng = groups_in_row(q);
    const int64_t gs = q->group_size > 0 ? q->group_size : C;
    const unsigned sh = 4u * (unsigned)awq_nibble_of_col[o % 8];
    for (int64_t g = 0; g < ng; g++) {
        uint32_t zw = mf_rd32le(q->zero.p + 4 * (uint64_t)(g * words + o / 8));
        int_table(q, load(&q->scale, (uint64_t)(g * R + o)), (int)((zw >> sh) & 0xf),
                  w->tab + g * 16);
    }
    round_tables(q, w->tab, (size_t)ng * 16);
    for (int64_t i = 0; i < C; i++) {
        uint32_t word = mf_rd32le(q->w.p + 4 * (uint64_t)(i * words + o / 8));
        dst[i] = w->tab[(i / gs) * 16 + ((word >> sh) & 0xf)];
    }
}

/* The 8 outputs o0 .. o0 + 7 (o0 a multiple of 8) of an AWQ gemm weight:
 * qweight [in, out / 8], output o's code of input i in nibble
 * awq_nibble_of_col[o % 8] of word [i, o / 8]: one word per input for the
 * whole tile. */
static void awq_gemm_tile(const mf_pq *q, int64_t o0, pq_scratch *w)
{
    const int64_t R = q->rows, C = q->cols, words = q->w.shape[1], ng = groups_in_row(q);
    const int64_t gs = q->group_size > 0 ? q->group_size : C, S = w->stride;
    for (int64_t t = 0; t < 8; t++) {
        const unsigned sh = 4u * (unsigned)awq_nibble_of_col[t];
        for (int64_t g = 0; g < ng; g++) {
            uint32_t zw = mf_rd32le(q->zero.p + 4 * (uint64_t)(g * words + o0 / 8));
            int_table(q, load(&q->scale, (uint64_t)(g * R + o0 + t)), (int)((zw >> sh) & 0xf),
                      w->tab + (t * ng + g) * 16);
        }
    }
    round_tables(q, w->tab, (size_t)(8 * ng * 16));
    for (int64_t i = 0; i < C; i++) {
        const uint32_t word = mf_rd32le(q->w.p + 4 * (uint64_t)(i * words + o0 / 8));
        const int64_t g = i / gs;
        for (int t = 0; t < 8; t++)
            w->rows[t * S + i] =
                w->tab[(t * ng + g) * 16 + ((word >> (4 * awq_nibble_of_col[t])) & 0xf)];
    }
}

/* WQLinear_GEMV (AutoAWQ awq/modules/linear/gemv.py from_linear @88e4c76b):
 * qweight [out, in / 8], nibble k of word c holds input c * 8 + k (natural
 * order); qzeros [out, zw], nibble k of word c the zero of group c * 8 + k;
 * scales [out, zw * 8], group g's in column g (the rest is padding); zw as
 * calculate_zeros_width gives it. Same arithmetic as GEMM. */
static void awq_gemv_row(const mf_pq *q, int64_t o, pq_scratch *w, float *dst)
{
    const int64_t C = q->cols, ng = groups_in_row(q);
    const int64_t gs = q->group_size > 0 ? q->group_size : C;
    const uint8_t *zrow = q->zero.p + 4 * (uint64_t)(o * q->zero.shape[1]);
    const uint8_t *wrow = q->w.p + 4 * (uint64_t)(o * q->w.shape[1]);
    for (int64_t g = 0; g < ng; g++) {
        int z = (int)((mf_rd32le(zrow + 4 * (g / 8)) >> (4 * (g % 8))) & 0xf);
        int_table(q, load(&q->scale, (uint64_t)(o * q->scale.shape[1] + g)), z, w->tab + g * 16);
    }
    round_tables(q, w->tab, (size_t)ng * 16);
    for (int64_t k = 0; k < C / 8; k++) {
        uint32_t word = mf_rd32le(wrow + 4 * k);
        const float *tab = w->tab + (k * 8 / gs) * 16;
        for (int j = 0; j < 8; j++)
            dst[k * 8 + j] = tab[(word >> (4 * j)) & 0xf];
    }
}

/* ------------------------------------------- FP8 and compressed-tensors */

/* The index of the scale (and zero point) of element (o, i). */
static uint64_t scale_index(const mf_pq *q, int64_t o, int64_t i)
{
    switch (q->scale_kind) {
    case MF_PQ_SCALE_TENSOR: return 0;
    case MF_PQ_SCALE_CHANNEL: return (uint64_t)o;
    case MF_PQ_SCALE_GROUP: return (uint64_t)(o * (q->cols / q->group_size) + i / q->group_size);
    case MF_PQ_SCALE_BLOCK: {
        int64_t bc = (q->cols + q->block_cols - 1) / q->block_cols;
        return (uint64_t)((o / q->block_rows) * bc + i / q->block_cols);
    }
    }
    return 0;
}

/* The inputs one scale covers along a row. */
static int64_t scale_run(const mf_pq *q)
{
    switch (q->scale_kind) {
    case MF_PQ_SCALE_GROUP: return q->group_size;
    case MF_PQ_SCALE_BLOCK: return q->block_cols;
    default: return q->cols;
    }
}

/* The codes of row o, inputs [i0, i1), as floats in the scale's dtype
 * (x = q.to(scale.dtype)): FP8 through the 256-entry table, int8 values,
 * or pack-quantized int32 words (pack_to_int32: element j of a word at
 * bits j * bits, stored offset by 2^(bits-1) to be unsigned). */
static void scaled_codes(const mf_pq *q, int64_t mat, int64_t o, int64_t i0, int64_t i1,
                         const float *fp8, float *x)
{
    if (q->w.dt == MF_I32) {
        const uint64_t base = (uint64_t)(o * q->w.shape[1]);
        const int off = 1 << (q->bits - 1);
        for (int64_t i = i0; i < i1; i++)
            x[i - i0] = (float)((int)stream_code(&q->w, base, 1, (uint64_t)i, q->bits) - off);
        return;
    }
    const uint8_t *p = q->w.p + (uint64_t)((mat * q->rows + o) * q->cols);
    if (q->w.dt == MF_I8) {
        for (int64_t i = i0; i < i1; i++)
            x[i - i0] = (float)(int8_t)p[i];
        return;
    }
    for (int64_t i = i0; i < i1; i++)
        x[i - i0] = fp8[p[i]];
}

/* compressed_tensors/quantization/lifecycle/forward.py dequantize: x =
 * q.to(scale.dtype); x -= zero_point.to(scale.dtype); x *= scale, each
 * step rounded to the scale's dtype; then native. */
static void scaled_row(const mf_pq *q, int64_t mat, int64_t o, pq_scratch *w, float *dst)
{
    const int64_t C = q->cols, run = scale_run(q);
    /* f32_math: every step in float32 (round_run to F32 keeps the values) */
    const mf_dtype sd = q->f32_math ? MF_F32 : q->scale.dt, nat = q->f32_math ? MF_F32 : q->native;
    for (int64_t i0 = 0; i0 < C; i0 += run) {
        int64_t i1 = i0 + run < C ? i0 + run : C, n = i1 - i0;
        uint64_t si = scale_index(q, o, i0);
        float s = load(&q->scale, si), *x = dst + i0;
        scaled_codes(q, mat, o, i0, i1, w->tab, x);
        round_run(x, (size_t)n, sd);
        if (q->zero.p) {
            float zp = round_to(load(&q->zero, si), sd);
            for (int64_t i = 0; i < n; i++)
                x[i] -= zp;
            round_run(x, (size_t)n, sd);
        }
        for (int64_t i = 0; i < n; i++)
            x[i] *= s;
        round_run(x, (size_t)n, sd);
        if (nat != sd)
            round_run(x, (size_t)n, nat);
    }
}

/* --------------------------------------------------------------- MXFP4 */

/* Logical row r (input r) of expert mat: stored [E, out, G, 16], the
 * logical tensor [E, in = G * 32, out] (convert_moe_packed_tensors'
 * transpose); element r of a block in byte r / 2, low nibble for even r;
 * value ldexp(FP4[code], scale - 127) in bf16. */
static void mxfp4_row(const mf_pq *q, int64_t mat, int64_t r, float *dst)
{
    const int64_t OUT = q->cols, G = q->rows / 32, g = r / 32, k = r % 32;
    const unsigned sh = k & 1 ? 4 : 0;
    for (int64_t o = 0; o < OUT; o++) {
        uint64_t blk = (uint64_t)((mat * OUT + o) * G + g);
        int code = (q->w.p[blk * 16 + (uint64_t)k / 2] >> sh) & 0xf;
        float v = round_bf16(ldexpf(round_bf16(fp4_values[code]), (int)q->scale.p[blk] - 127));
        dst[o] = round_to(v, q->native);
    }
}

/* --------------------------------------------------------------- NVFP4 */

/* ModelOpt: weight U8 [out, in / 2] low nibble first, weight_scale E4M3
 * [out, in / 16], weight_scale_2 F32: (E2M1[code] * scale) * scale_2 in
 * F32, then native. */
static void nvfp4_row(const mf_pq *q, int64_t mat, int64_t o, const float *e4m3, float *dst)
{
    const int64_t R = q->rows, C = q->cols;
    const float s2 = load(&q->scale2, 0);
    const uint8_t *wr = q->w.p + (uint64_t)((mat * R + o) * (C / 2));
    const uint8_t *sr = q->scale.p + (uint64_t)((mat * R + o) * (C / 16));
    for (int64_t b = 0; b < C / 16; b++) {
        const float s = e4m3[sr[b]];
        for (int j = 0; j < 16; j++) {
            uint8_t byte = wr[b * 8 + j / 2];
            int code = j & 1 ? byte >> 4 : byte & 0xf;
            dst[b * 16 + j] = round_to((fp4_values[code] * s) * s2, q->native);
        }
    }
}

/* --------------------------------------------------------- bitsandbytes */

/* bitsandbytes' CPU reference (_dequantize_4bit_impl): byte k of the
 * flattened weight holds elements 2k (high nibble) and 2k+1 (low);
 * w = quant_map[code] * absmax[i / blocksize] in F32, then the dtype.
 * Nested: absmax = nested_code[a] * nested_absmax[j / nested_blocksize]
 * (dequantize_blockwise, F32), then + offset. */
static float bnb_absmax(const mf_pq *q, uint64_t b)
{
    if (!q->nested_absmax.p)
        return load(&q->scale, b);
    float v = load(&q->nested_code, q->scale.p[b]) *
              load(&q->nested_absmax, b / (uint64_t)q->nested_blocksize);
    return v + q->offset;
}

static void bnb4_row(const mf_pq *q, int64_t o, float *dst)
{
    const uint64_t C = (uint64_t)q->cols, bs = (uint64_t)q->blocksize, i0 = (uint64_t)o * C;
    float map[16];
    for (int c = 0; c < 16; c++)
        map[c] = load(&q->code, (uint64_t)c);
    for (uint64_t i = i0; i < i0 + C;) {
        const float am = bnb_absmax(q, i / bs);
        const uint64_t end = (i / bs + 1) * bs < i0 + C ? (i / bs + 1) * bs : i0 + C;
        for (; i < end; i++) {
            uint8_t b = q->w.p[i / 2];
            dst[i - i0] = round_to(map[i & 1 ? b & 0xf : b >> 4] * am, q->native);
        }
    }
}

/* int8_vectorwise_dequant: A * SCB.view(-1, 1) * 7.874015718698502e-3
 * (two F32 roundings), then the dtype. */
static void bnb8_row(const mf_pq *q, int64_t o, float *dst)
{
    const float inv127 = 7.874015718698502e-3f, s = load(&q->scale, (uint64_t)o);
    const uint8_t *p = q->w.p + (uint64_t)(o * q->cols);
    for (int64_t i = 0; i < q->cols; i++)
        dst[i] = round_to(((float)(int8_t)p[i] * s) * inv127, q->native);
}

/* ------------------------------------------------------------ the rows */

static void pq_row(const mf_pq *q, int64_t mat, int64_t r, pq_scratch *w, float *dst)
{
    switch (q->method) {
    case MF_PQ_GPTQ: gptq_row(q, r, w, dst); break;
    case MF_PQ_AWQ: awq_gemv_row(q, r, w, dst); break;
    case MF_PQ_FP8: case MF_PQ_CT_INT: scaled_row(q, mat, r, w, dst); break;
    case MF_PQ_MXFP4: mxfp4_row(q, mat, r, dst); break;
    case MF_PQ_NVFP4: nvfp4_row(q, mat, r, w->tab, dst); break;
    case MF_PQ_BNB4: bnb4_row(q, r, dst); break;
    case MF_PQ_BNB8: bnb8_row(q, r, dst); break;
    default: break;
    }
}

/* Rows r0 .. r0 + n - 1 (n <= ROWS) into w->rows: a whole tile where the
 * layout packs several outputs a word, else a row at a time. */
static void pq_tile(const mf_pq *q, int64_t mat, int64_t r0, int64_t n, pq_scratch *w)
{
    if (q->method == MF_PQ_GPTQ && 32 % q->bits == 0 && w->plain &&
        (q->group_size <= 0 || q->group_size % (32 / q->bits) == 0)) {
        gptq_tile(q, r0, n, w);
        return;
    }
    if (q->method == MF_PQ_AWQ && !q->gemv) {
        if (r0 % 8 == 0 && n == 8) {
            awq_gemm_tile(q, r0, w);
            return;
        }
        for (int64_t k = 0; k < n; k++) /* a tile not on a word */
            awq_gemm_row(q, r0 + k, w, w->rows + k * w->stride);
        return;
    }
    for (int64_t k = 0; k < n; k++)
        pq_row(q, mat, r0 + k, w, w->rows + k * w->stride);
}

/* F16 of n floats without F16C: the normal range in a loop gcc can
 * vectorize, then any zero, subnormal, overflow or NaN of the run redone
 * by mf_f32_to_f16. */
static void encode_f16_run(const float *src, size_t n, uint16_t *h)
{
    unsigned other = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = mf_f32_bits(src[i]), ax = u & 0x7fffffffu;
        h[i] = (uint16_t)(((u >> 16) & 0x8000u) | (((ax + 0xfffu + ((ax >> 13) & 1)) - 0x38000000u) >> 13));
        other |= ax - F16_NORMAL_LO >= F16_NORMAL_SPAN;
    }
    for (size_t i = 0; other && i < n; i++)
        if ((mf_f32_bits(src[i]) & 0x7fffffffu) - F16_NORMAL_LO >= F16_NORMAL_SPAN)
            h[i] = mf_f32_to_f16(src[i]);
}

/* n floats to dt at dst, little-endian: F32 as they are, BF16 and F16
 * rounded to nearest even exactly as mf_f32_to_bf16 / mf_f32_to_f16 (F16
 * with F16C when the CPU has it). Runs of RUN elements so that gcc's -O2
 * vectorizer takes the loops. */
static void encode(const float *src, size_t n, mf_dtype dt, uint8_t *dst)
{
    enum { RUN = 256 };
    if (dt == MF_F16 && mq_simd_f32_to_f16(src, dst, (int64_t)n))
        return;
    for (size_t i0 = 0; i0 < n; i0 += RUN) {
        const size_t m = n - i0 < RUN ? n - i0 : RUN;
        const float *x = src + i0;
        uint16_t h[RUN];
        if (dt == MF_F32) {
            for (size_t i = 0; i < m; i++)
                mf_wr32le(dst + 4 * (i0 + i), mf_f32_bits(x[i]));
            continue;
        }
        if (dt == MF_F16)
            encode_f16_run(x, m, h);
        else if (m == RUN)
            for (size_t i = 0; i < RUN; i++)
                h[i] = (uint16_t)(mf_f32_bits(round_bf16(x[i])) >> 16);
        else
            for (size_t i = 0; i < m; i++)
                h[i] = (uint16_t)(mf_f32_bits(round_bf16(x[i])) >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(dst + 2 * i0, h, 2 * m);
#else
        for (size_t i = 0; i < m; i++)
            mf_wr16le(dst + 2 * (i0 + i), h[i]);
#endif
    }
}

/* g_idx absent or i / group_size for every input: groups are contiguous */
static bool gptq_plain_groups(const mf_pq *q)
{
    if (q->group_size <= 0)
        return !q->g_idx.p;
    for (int64_t i = 0; q->g_idx.p && i < q->cols; i++)
        if (load_i32(&q->g_idx, (uint64_t)i) != i / q->group_size)
            return false;
    return true;
}

static size_t table_floats(const mf_pq *q)
{
    if (q->method == MF_PQ_GPTQ || q->method == MF_PQ_AWQ)
        return (size_t)(ROWS * groups_in_row(q) * 16);
    return 256;
}

int mf_pq_rows(const mf_pq *q, int64_t mat, int64_t row0, int64_t nrows, mf_dtype dt, void *dst)
{
    const int64_t C = q->cols, ng = groups_in_row(q);
    const size_t es = dt == MF_F32 ? 4 : 2;
    pq_scratch w = {
        .stride = C + 16,
        .tab = malloc(table_floats(q) * sizeof(float)),
        .s = malloc((size_t)(ROWS * ng) * sizeof(float)),
        .z = malloc((size_t)(ROWS * ng) * sizeof(int)),
        .plain = q->method == MF_PQ_GPTQ && gptq_plain_groups(q),
    };
    w.rows = malloc((size_t)(ROWS * w.stride) * sizeof(float));
    int rc = w.rows && w.tab && w.s && w.z ? 0 : -1;
    if (rc == 0 && (q->method == MF_PQ_NVFP4 || q->w.dt == MF_F8_E4M3 || q->w.dt == MF_F8_E5M2))
        for (int c = 0; c < 256; c++) /* the element type's values */
            w.tab[c] = q->method == MF_PQ_NVFP4 || q->w.dt == MF_F8_E4M3
                           ? mf_pq_e4m3_to_f32((uint8_t)c)
                           : mf_pq_e5m2_to_f32((uint8_t)c);
    for (int64_t r = 0; rc == 0 && r < nrows; r += ROWS) {
        int64_t n = nrows - r < ROWS ? nrows - r : ROWS;
        pq_tile(q, mat, row0 + r, n, &w);
        for (int64_t k = 0; k < n; k++)
            encode(w.rows + k * w.stride, (size_t)C, dt, (uint8_t *)dst + (size_t)((r + k) * C) * es);
    }
    free(w.rows);
    free(w.tab);
    free(w.s);
    free(w.z);
    return rc;
}

/* --------------------------------------------------------------- checks */

static int64_t nelems(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n = shape[d] > 0 && n <= INT64_MAX / shape[d] ? n * shape[d] : (shape[d] == 0 ? 0 : -1);
    return n;
}

typedef struct why_buf {
    char *p;
    size_t cap;
} why_buf;

static int breach(why_buf *w, const mf_pq_part *part, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int breach(why_buf *w, const mf_pq_part *part, const char *fmt, ...)
{
    int k = snprintf(w->p, w->cap, "\"%s\": ", part && part->name ? part->name : "?");
    if (k >= 0 && (size_t)k < w->cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->p + k, w->cap - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void shape_text(const mf_pq_part *p, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "[");
    for (int d = 0; d < p->ndim && k > 0 && (size_t)k < cap; d++)
        k += snprintf(buf + k, cap - (size_t)k, "%s%lld", d ? ", " : "", (long long)p->shape[d]);
    if (k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, "]");
}

/* The part has exactly this shape (ndim dims) and its bytes hold it. */
static int want_shape(why_buf *w, const mf_pq_part *p, const char *rule, int ndim, ...)
{
    int64_t want[MF_MAX_DIMS];
    va_list ap;
    va_start(ap, ndim);
    for (int d = 0; d < ndim; d++)
        want[d] = va_arg(ap, int64_t);
    va_end(ap);
    bool ok = p->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++)
        ok = p->shape[d] == want[d];
    if (!ok) {
        char have[160], exp[160];
        shape_text(p, have, sizeof(have));
        mf_pq_part tmp = {.ndim = ndim};
        memcpy(tmp.shape, want, sizeof(want[0]) * (size_t)ndim);
        shape_text(&tmp, exp, sizeof(exp));
        return breach(w, p, "shape %s, but %s needs %s", have, rule, exp);
    }
    uint64_t n;
    if (mf_dtype_nbytes(p->dt, (uint64_t)nelems(p->shape, p->ndim), &n) || n != p->nbytes || !p->p)
        return breach(w, p, "holds %llu bytes, not the %llu its %s shape needs",
                      (unsigned long long)p->nbytes, (unsigned long long)n, mf_dtype_name(p->dt));
    return 0;
}

static int want_dtype(why_buf *w, const mf_pq_part *p, const char *what, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    bool ok = false;
    for (int k = 0; k < n; k++)
        ok |= p->dt == (mf_dtype)va_arg(ap, int);
    va_end(ap);
    return ok ? 0 : breach(w, p, "is %s; %s", mf_dtype_name(p->dt), what);
}

static bool is_float_scale(mf_dtype dt)
{
    return dt == MF_F16 || dt == MF_BF16 || dt == MF_F32;
}

/* Groups along the input dimension: cols / group (group -1: one). */
static int groups_of(why_buf *w, const mf_pq *q, int64_t *ngroups)
{
    if (q->group_size == -1 || q->group_size == 0) {
        *ngroups = 1;
        return 0;
    }
    if (q->group_size < 0 || q->cols % q->group_size)
        return breach(w, &q->w, "group size %d does not divide the input dimension %lld",
                      q->group_size, (long long)q->cols);
    *ngroups = q->cols / q->group_size;
    return 0;
}

static int check_g_idx(why_buf *w, const mf_pq *q, int64_t ngroups)
{
    if (!q->g_idx.p)
        return 0;
    if (want_dtype(w, &q->g_idx, "g_idx must be I32", 1, MF_I32) ||
        want_shape(w, &q->g_idx, "one group index per input", 1, q->cols))
        return -1;
    for (int64_t i = 0; i < q->cols; i++) {
        int32_t g = load_i32(&q->g_idx, (uint64_t)i);
        if (g < 0 || g >= ngroups)
            return breach(w, &q->g_idx, "g_idx[%lld] = %d is out of range: there are %lld groups",
                          (long long)i, g, (long long)ngroups);
    }
    return 0;
}

static int check_gptq(why_buf *w, const mf_pq *q)
{
    int64_t ng = 1;
    int b = q->bits;
    if (b != 2 && b != 3 && b != 4 && b != 8)
        return breach(w, &q->w, "GPTQ stores 2, 3, 4 or 8 bits, not %d", b);
    if (want_dtype(w, &q->w, "GPTQ qweight must be I32", 1, MF_I32) || groups_of(w, q, &ng))
        return -1;
    if (q->w.ndim != 2 || (q->cols * b) % 32 || (q->rows * b) % 32)
        return breach(w, &q->w, "GPTQ qweight must be [in * %d / 32, out] with whole words", b);
    if (q->group_size > 0 && q->scale.ndim == 2 && q->scale.shape[0] * q->group_size != q->cols)
        return breach(w, &q->w, "holds %lld packed rows (%lld inputs), but %lld groups of %d in "
                      "the scales need %lld inputs", (long long)q->w.shape[0], (long long)q->cols,
                      (long long)q->scale.shape[0], q->group_size,
                      (long long)(q->scale.shape[0] * q->group_size));
    if (want_shape(w, &q->w, "the packed input dimension", 2, q->cols * b / 32, q->rows) ||
        want_dtype(w, &q->scale, "GPTQ scales must be F16, BF16 or F32", 3, MF_F16, MF_BF16, MF_F32) ||
        want_shape(w, &q->scale, "one scale per group and output", 2, ng, q->rows) ||
        want_dtype(w, &q->zero, "GPTQ qzeros must be I32", 1, MF_I32) ||
        want_shape(w, &q->zero, "packed zero points per group", 2, ng, q->rows * b / 32))
        return -1;
    return check_g_idx(w, q, ng);
}

/* AutoAWQ gemv.py calculate_zeros_width: the packed zero words per row. */
static int64_t awq_zeros_width(int64_t in, int group)
{
    int mult = group >= 128 ? 1 : group == 64 ? 2 : group == 32 ? 4 : 0;
    if (!mult)
        return -1; /* NotImplementedError upstream */
    int64_t base = (in / group + 7) / 8;
    return (base + mult - 1) / mult * mult;
}

static int check_awq_gemv(why_buf *w, const mf_pq *q)
{
    int64_t ng = 1;
    if (q->bits != 4)
        return breach(w, &q->w, "AWQ gemv stores 4 bits, not %d", q->bits);
    if (want_dtype(w, &q->w, "AWQ qweight must be I32", 1, MF_I32) || groups_of(w, q, &ng))
        return -1;
    int group = q->group_size > 0 ? q->group_size : (int)q->cols;
    int64_t zw = awq_zeros_width(q->cols, group);
    if (zw < 0)
        return breach(w, &q->w, "AWQ gemv takes group sizes of 32, 64 or >= 128, not %d", group);
    if (want_shape(w, &q->w, "AWQ gemv's [out, in / 8]", 2, q->rows, q->cols / 8) ||
        want_dtype(w, &q->scale, "AWQ scales must be F16, BF16 or F32", 3, MF_F16, MF_BF16, MF_F32) ||
        want_shape(w, &q->scale, "AWQ gemv's [out, zeros width * 8] scales", 2, q->rows, zw * 8) ||
        want_dtype(w, &q->zero, "AWQ qzeros must be I32", 1, MF_I32) ||
        want_shape(w, &q->zero, "AWQ gemv's [out, zeros width] packed zero points", 2, q->rows, zw))
        return -1;
    return 0;
}

static int check_awq(why_buf *w, const mf_pq *q)
{
    int64_t ng = 1;
    if (q->gemv)
        return check_awq_gemv(w, q);
    if (q->bits != 4)
        return breach(w, &q->w, "AWQ gemm stores 4 bits, not %d", q->bits);
    if (q->rows % 8)
        return breach(w, &q->w, "AWQ packs 8 outputs a word: %lld outputs", (long long)q->rows);
    if (want_dtype(w, &q->w, "AWQ qweight must be I32", 1, MF_I32) || groups_of(w, q, &ng) ||
        want_shape(w, &q->w, "AWQ gemm's [in, out / 8]", 2, q->cols, q->rows / 8) ||
        want_dtype(w, &q->scale, "AWQ scales must be F16, BF16 or F32", 3, MF_F16, MF_BF16, MF_F32) ||
        want_shape(w, &q->scale, "one scale per group and output", 2, ng, q->rows) ||
        want_dtype(w, &q->zero, "AWQ qzeros must be I32", 1, MF_I32) ||
        want_shape(w, &q->zero, "packed zero points per group", 2, ng, q->rows / 8))
        return -1;
    return 0;
}

/* The scale (and zero point) shape of an FP8 / compressed-tensors weight. */
static int check_scale_layout(why_buf *w, const mf_pq *q, const mf_pq_part *p)
{
    int64_t R = q->rows, C = q->cols, ng = 1;
    switch (q->scale_kind) {
    case MF_PQ_SCALE_TENSOR: {
        int64_t n = nelems(p->shape, p->ndim);
        uint64_t b;
        if (n != 1 || !p->p || mf_dtype_nbytes(p->dt, 1, &b) || b != p->nbytes)
            return breach(w, p, "a per-tensor scale must hold one value, not %lld", (long long)n);
        return 0;
    }
    case MF_PQ_SCALE_CHANNEL:
        if (p->ndim == 1)
            return want_shape(w, p, "one scale per output", 1, R);
        return want_shape(w, p, "one scale per output", 2, R, (int64_t)1);
    case MF_PQ_SCALE_GROUP:
        if (groups_of(w, q, &ng))
            return -1;
        return want_shape(w, p, "one scale per output and group", 2, R, ng);
    case MF_PQ_SCALE_BLOCK:
        if (q->block_rows < 1 || q->block_cols < 1)
            return breach(w, p, "weight_block_size must be positive");
        return want_shape(w, p, "one scale per block", 2, (R + q->block_rows - 1) / q->block_rows,
                          (C + q->block_cols - 1) / q->block_cols);
    }
    return breach(w, p, "unknown scale layout");
}

static int check_scaled(why_buf *w, const mf_pq *q)
{
    if (q->method == MF_PQ_FP8) {
        if (want_dtype(w, &q->w, "an FP8 weight must be F8_E4M3 or F8_E5M2", 2, MF_F8_E4M3,
                       MF_F8_E5M2))
            return -1;
        if (q->nmat == 1 ? want_shape(w, &q->w, "the weight", 2, q->rows, q->cols)
                         : want_shape(w, &q->w, "the experts' weight", 3, q->nmat, q->rows, q->cols))
            return -1;
    } else if (q->w.dt == MF_I32) {
        if (q->bits < 2 || q->bits > 8 || 32 % q->bits)
            return breach(w, &q->w, "pack-quantized stores 2, 4 or 8 bits, not %d", q->bits);
        if ((q->cols * q->bits) % 32)
            return breach(w, &q->w, "%lld inputs do not fill whole int32 words", (long long)q->cols);
        if (want_shape(w, &q->w, "pack-quantized [out, in * bits / 32]", 2, q->rows,
                       q->cols * q->bits / 32))
            return -1;
    } else if (want_dtype(w, &q->w, "int-quantized weights are I8", 3, MF_I8, MF_F8_E4M3, MF_F8_E5M2) ||
               want_shape(w, &q->w, "the weight", 2, q->rows, q->cols)) {
        return -1;
    }
    if (q->method == MF_PQ_CT_INT && q->nmat != 1)
        return breach(w, &q->w, "compressed-tensors weights are 2-D");
    if (!is_float_scale(q->scale.dt))
        return breach(w, &q->scale, "is %s; scales are F16, BF16 or F32", mf_dtype_name(q->scale.dt));
    if (q->nmat != 1 && q->scale_kind != MF_PQ_SCALE_TENSOR)
        return breach(w, &q->scale, "experts' FP8 weights take one scale each");
    if (check_scale_layout(w, q, &q->scale))
        return -1;
    return q->zero.p ? check_scale_layout(w, q, &q->zero) : 0;
}

static int check_mxfp4(why_buf *w, const mf_pq *q)
{
    int64_t G = q->rows / 32;
    if (q->rows % 32)
        return breach(w, &q->w, "MXFP4 blocks hold 32 values: %lld inputs", (long long)q->rows);
    if (want_dtype(w, &q->w, "MXFP4 blocks are U8", 1, MF_U8) ||
        want_shape(w, &q->w, "[experts, out, blocks, 16]", 4, q->nmat, q->cols, G, (int64_t)16) ||
        want_dtype(w, &q->scale, "MXFP4 scales are U8 (E8M0)", 2, MF_U8, MF_F8_E8M0) ||
        want_shape(w, &q->scale, "one scale per block", 3, q->nmat, q->cols, G))
        return -1;
    return 0;
}

static int check_nvfp4(why_buf *w, const mf_pq *q)
{
    if (q->cols % 16)
        return breach(w, &q->w, "NVFP4 scales 16 values each: %lld inputs", (long long)q->cols);
    if (want_dtype(w, &q->w, "NVFP4 weights are U8 (two E2M1 a byte)", 1, MF_U8) ||
        want_shape(w, &q->w, "[out, in / 2]", 2, q->rows, q->cols / 2) ||
        want_dtype(w, &q->scale, "NVFP4 block scales are F8_E4M3", 1, MF_F8_E4M3) ||
        want_shape(w, &q->scale, "one scale per 16 inputs", 2, q->rows, q->cols / 16))
        return -1;
    if (!q->scale2.p || nelems(q->scale2.shape, q->scale2.ndim) != 1 ||
        q->scale2.dt != MF_F32 || q->scale2.nbytes != 4)
        return breach(w, q->scale2.p ? &q->scale2 : &q->w,
                      "NVFP4 needs weight_scale_2, one F32 value");
    return 0;
}

static int check_bnb4(why_buf *w, const mf_pq *q)
{
    uint64_t n = (uint64_t)q->rows * (uint64_t)q->cols;
    if (q->blocksize < 2 || q->blocksize % 2)
        return breach(w, &q->w, "blocksize %d is not a positive even number", q->blocksize);
    uint64_t nblk = (n + (uint64_t)q->blocksize - 1) / (uint64_t)q->blocksize;
    if (q->w.dt != MF_U8 || q->w.nbytes != (n + 1) / 2 || !q->w.p)
        return breach(w, &q->w, "holds %llu bytes; the quant_state shape [%lld, %lld] needs %llu "
                      "(two 4-bit codes a byte)", (unsigned long long)q->w.nbytes,
                      (long long)q->rows, (long long)q->cols, (unsigned long long)((n + 1) / 2));
    if (!q->code.p || q->code.dt != MF_F32 || q->code.nbytes != 16 * 4)
        return breach(w, q->code.p ? &q->code : &q->w, "quant_map must be 16 F32 values");
    if (!q->nested_absmax.p)
        return !q->scale.p || q->scale.dt != MF_F32 || q->scale.nbytes != nblk * 4
                   ? breach(w, q->scale.p ? &q->scale : &q->w,
                            "absmax must hold one F32 per block of %d: %llu", q->blocksize,
                            (unsigned long long)nblk)
                   : 0;
    if (!q->scale.p || q->scale.dt != MF_U8 || q->scale.nbytes != nblk)
        return breach(w, q->scale.p ? &q->scale : &q->w,
                      "nested absmax must hold one U8 code per block of %d: %llu", q->blocksize,
                      (unsigned long long)nblk);
    if (q->nested_blocksize < 1)
        return breach(w, &q->nested_absmax, "nested_blocksize must be positive");
    uint64_t nn = (nblk + (uint64_t)q->nested_blocksize - 1) / (uint64_t)q->nested_blocksize;
    if (q->nested_absmax.dt != MF_F32 || q->nested_absmax.nbytes != nn * 4)
        return breach(w, &q->nested_absmax, "must hold one F32 per %d absmax values: %llu",
                      q->nested_blocksize, (unsigned long long)nn);
    if (!q->nested_code.p || q->nested_code.dt != MF_F32 || q->nested_code.nbytes != 256 * 4)
        return breach(w, q->nested_code.p ? &q->nested_code : &q->nested_absmax,
                      "nested_quant_map must be 256 F32 values");
    return 0;
}

static int check_bnb8(why_buf *w, const mf_pq *q)
{
    if (want_dtype(w, &q->w, "LLM.int8 weights are I8", 1, MF_I8) ||
        want_shape(w, &q->w, "the weight", 2, q->rows, q->cols) ||
        want_dtype(w, &q->scale, "SCB is F32", 1, MF_F32) ||
        want_shape(w, &q->scale, "one SCB per output row", 1, q->rows))
        return -1;
    return 0;
}

int mf_pq_check(const mf_pq *q, char *why, size_t cap)
{
    why_buf w = {why, cap};
    uint64_t n;
    if (q->nmat < 1 || q->rows < 1 || q->cols < 1)
        return breach(&w, &q->w, "has no elements");
    /* shapes come from files and configs (bitsandbytes' quant_state JSON):
     * the logical tensor's element count must be a number */
    if (mf_mul_ovf((uint64_t)q->nmat, (uint64_t)q->rows, &n) || mf_mul_ovf(n, (uint64_t)q->cols, &n) ||
        n > ((uint64_t)1 << 48))
        return breach(&w, &q->w, "a logical shape [%lld, %lld, %lld] of more than 2^48 elements",
                      (long long)q->nmat, (long long)q->rows, (long long)q->cols);
    if (q->native != MF_F32 && q->native != MF_F16 && q->native != MF_BF16)
        return breach(&w, &q->w, "dequantizes to %s, not a float type", mf_dtype_name(q->native));
    switch (q->method) {
    case MF_PQ_GPTQ: return q->nmat == 1 ? check_gptq(&w, q) : breach(&w, &q->w, "GPTQ weights are 2-D");
    case MF_PQ_AWQ: return q->nmat == 1 ? check_awq(&w, q) : breach(&w, &q->w, "AWQ weights are 2-D");
    case MF_PQ_FP8: case MF_PQ_CT_INT: return check_scaled(&w, q);
    case MF_PQ_MXFP4: return check_mxfp4(&w, q);
    case MF_PQ_NVFP4: return q->nmat == 1 ? check_nvfp4(&w, q) : breach(&w, &q->w, "NVFP4 weights are 2-D");
    case MF_PQ_BNB4: return check_bnb4(&w, q);
    case MF_PQ_BNB8: return check_bnb8(&w, q);
    default: return breach(&w, &q->w, "unknown method");
    }
}

double mf_pq_bits_per_weight(const mf_pq *q)
{
    double stored = (double)(q->w.nbytes + q->scale.nbytes + q->zero.nbytes + q->g_idx.nbytes +
                             q->scale2.nbytes + q->code.nbytes + q->nested_absmax.nbytes +
                             q->nested_code.nbytes) * 8.0;
    double n = (double)q->nmat * (double)q->rows * (double)q->cols;
    return n > 0 ? stored / n : 0.0;
}
