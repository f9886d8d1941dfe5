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

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

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

static float round_to(float x, mf_dtype dt)
{
    if (dt == MF_F16)
        return mf_f16_to_f32(mf_f32_to_f16(x));
    if (dt == MF_BF16)
        return mf_bf16_to_f32(mf_f32_to_bf16(x));
    return x;
}

/* Element i of a part as a float (the float and FP8 types; integers). */
static float load(const mf_pq_part *p, uint64_t i)
{
    switch (p->dt) {
    case MF_F16: return mf_f16_to_f32(mf_rd16le(p->p + 2 * i));
    case MF_BF16: return mf_bf16_to_f32(mf_rd16le(p->p + 2 * i));
    case MF_F32: {
        uint32_t u = mf_rd32le(p->p + 4 * i);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
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

/* ---------------------------------------------------------------- GPTQ */

static int64_t group_of(const mf_pq *q, int64_t i)
{
    if (q->g_idx.p)
        return load_i32(&q->g_idx, (uint64_t)i);
    return q->group_size > 0 ? i / q->group_size : 0;
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

/* The common case (2, 4 or 8 bits, contiguous groups), in tiles of 64
 * outputs so that each word's codes land in one run of the output row:
 * the same values as the general loop below. */
static void gptq_matrix_fast(const mf_pq *q, float *out)
{
    enum { TILE = 64 };
    const int64_t R = q->rows, C = q->cols, per = 32 / q->bits;
    const int64_t gs = q->group_size > 0 ? q->group_size : C, zwords = q->zero.shape[1];
    const unsigned mask = (1u << q->bits) - 1;
    const mf_dtype sd = q->scale.dt;
    const bool twice = sd != q->native;
    float s[TILE];
    int z[TILE];
    /* up to 4 bits: each output's 16 (or fewer) values of a group, worked
     * out once (the same arithmetic), then looked up per code */
    const bool lut = q->bits <= 4;
    static _Thread_local float table[TILE][16];
    for (int64_t ob = 0; ob < R; ob += TILE) {
        int64_t on = R - ob < TILE ? R - ob : TILE;
        for (int64_t g = 0; g < C / gs; g++) {
            for (int64_t t = 0; t < on; t++) {
                s[t] = load(&q->scale, (uint64_t)(g * R + ob + t));
                z[t] = (int)stream_code(&q->zero, (uint64_t)(g * zwords), 1, (uint64_t)(ob + t),
                                        q->bits) + q->zero_offset;
                for (unsigned c = 0; lut && c <= mask; c++) {
                    float v = round_to(s[t] * (float)((int)c - z[t]), sd);
                    table[t][c] = twice ? round_to(v, q->native) : v;
                }
            }
            for (int64_t k = g * gs / per; k < (g + 1) * gs / per; k++) {
                const uint8_t *row = q->w.p + 4 * (uint64_t)(k * R + ob);
                for (int64_t t = 0; t < on; t++) {
                    uint32_t w = mf_rd32le(row + 4 * t);
                    float *o = out + (ob + t) * C + k * per;
                    if (lut) {
                        for (int64_t j = 0; j < per; j++)
                            o[j] = table[t][(w >> (q->bits * j)) & mask];
                        continue;
                    }
                    for (int64_t j = 0; j < per; j++) {
                        float v = round_to(s[t] * (float)((int)((w >> (q->bits * j)) & mask) - z[t]), sd);
                        o[j] = twice ? round_to(v, q->native) : v;
                    }
                }
            }
        }
    }
}

static void gptq_matrix(const mf_pq *q, float *out)
{
    if (32 % q->bits == 0 && (q->group_size <= 0 || q->group_size % (32 / q->bits) == 0) &&
        gptq_plain_groups(q)) {
        gptq_matrix_fast(q, out);
        return;
    }
    const int64_t R = q->rows, C = q->cols;
    const int64_t zwords = q->zero.shape[1];
    const mf_dtype sd = q->scale.dt;
    for (int64_t i = 0; i < C; i++) {
        int64_t g = group_of(q, i);
        for (int64_t o = 0; o < R; o++) {
            int qc = (int)stream_code(&q->w, (uint64_t)o, (uint64_t)R, (uint64_t)i, q->bits);
            int z = (int)stream_code(&q->zero, (uint64_t)(g * zwords), 1, (uint64_t)o, q->bits) +
                    q->zero_offset;
            float s = load(&q->scale, (uint64_t)(g * R + o));
            out[o * C + i] = round_to(round_to(s * (float)(qc - z), sd), q->native);
        }
    }
}

/* ----------------------------------------------------------------- AWQ */

static const int awq_nibble_of_col[8] = {0, 4, 1, 5, 2, 6, 3, 7}; /* AWQ_REVERSE_ORDER */

static unsigned awq_code(const mf_pq_part *p, uint64_t row, uint64_t words, int64_t col)
{
    uint32_t w = mf_rd32le(p->p + 4 * (row * words + (uint64_t)col / 8));
    return (w >> (4 * awq_nibble_of_col[col % 8])) & 0xf;
}

/* WQLinear_GEMV (AutoAWQ awq/modules/linear/gemv.py from_linear @88e4c76b):
 * qweight [out, in / 8], nibble k of word c holds input c * 8 + k (natural
 * order); qzeros [out, zw], nibble k of word c the zero of group c * 8 + k;
 * scales [out, zw * 8], group g's in column g (the rest is padding); zw as
 * calculate_zeros_width gives it. Same arithmetic as GEMM. */
static unsigned nibble(const mf_pq_part *p, uint64_t row, uint64_t words, int64_t k)
{
    uint32_t w = mf_rd32le(p->p + 4 * (row * words + (uint64_t)k / 8));
    return (w >> (4 * (k % 8))) & 0xf;
}

static void awq_gemv_matrix(const mf_pq *q, float *out)
{
    const int64_t R = q->rows, C = q->cols;
    const uint64_t wwords = (uint64_t)q->w.shape[1], zwords = (uint64_t)q->zero.shape[1],
                   scols = (uint64_t)q->scale.shape[1];
    const mf_dtype sd = q->scale.dt;
    for (int64_t o = 0; o < R; o++)
        for (int64_t i = 0; i < C; i++) {
            int64_t g = group_of(q, i);
            int qc = (int)nibble(&q->w, (uint64_t)o, wwords, i);
            int z = (int)nibble(&q->zero, (uint64_t)o, zwords, g);
            float s = load(&q->scale, (uint64_t)o * scols + (uint64_t)g);
            out[o * C + i] = round_to(round_to((float)(qc - z) * s, sd), q->native);
        }
}

static void awq_matrix(const mf_pq *q, float *out)
{
    if (q->gemv) {
        awq_gemv_matrix(q, out);
        return;
    }
    const int64_t R = q->rows, C = q->cols, words = q->w.shape[1];
    const mf_dtype sd = q->scale.dt;
    for (int64_t i = 0; i < C; i++) {
        int64_t g = group_of(q, i);
        for (int64_t o = 0; o < R; o++) {
            int qc = (int)awq_code(&q->w, (uint64_t)i, (uint64_t)words, o);
            int z = (int)awq_code(&q->zero, (uint64_t)g, (uint64_t)words, o);
            float s = load(&q->scale, (uint64_t)(g * R + o));
            out[o * C + i] = round_to(round_to((float)(qc - z) * s, sd), q->native);
        }
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

/* The stored code of element (o, i) of a compressed-tensors weight: int8
 * values, or pack-quantized int32 words (pack_to_int32: element j of a
 * word at bits j * bits, stored offset by 2^(bits-1) to be unsigned). */
static float ct_code(const mf_pq *q, int64_t o, int64_t i)
{
    if (q->w.dt == MF_I32) {
        uint64_t words = (uint64_t)q->w.shape[1];
        int v = (int)stream_code(&q->w, (uint64_t)o * words, 1, (uint64_t)i, q->bits);
        return (float)(v - (1 << (q->bits - 1)));
    }
    return load(&q->w, (uint64_t)(o * q->cols + i));
}

static void scaled_matrix(const mf_pq *q, int64_t mat, float *out)
{
    const int64_t R = q->rows, C = q->cols;
    const mf_dtype sd = q->scale.dt;
    const uint64_t base = (uint64_t)(mat * R * C);
    for (int64_t o = 0; o < R; o++)
        for (int64_t i = 0; i < C; i++) {
            float x = q->method == MF_PQ_CT_INT ? ct_code(q, o, i)
                                                : load(&q->w, base + (uint64_t)(o * C + i));
            x = round_to(x, sd);
            uint64_t si = scale_index(q, o, i);
            if (q->zero.p)
                x = round_to(x - round_to(load(&q->zero, si), sd), sd);
            out[o * C + i] = round_to(round_to(x * load(&q->scale, si), sd), q->native);
        }
}

/* --------------------------------------------------------------- MXFP4 */

static void mxfp4_matrix(const mf_pq *q, int64_t mat, float *out)
{
    /* stored [E, out, G, 16]: logical [in = G * 32, out] of expert mat */
    const int64_t IN = q->rows, OUT = q->cols, G = IN / 32;
    for (int64_t o = 0; o < OUT; o++)
        for (int64_t g = 0; g < G; g++) {
            uint64_t blk = (uint64_t)((mat * OUT + o) * G + g);
            int e = (int)q->scale.p[blk] - 127;
            const uint8_t *b = q->w.p + blk * 16;
            for (int k = 0; k < 32; k++) {
                int code = k & 1 ? b[k / 2] >> 4 : b[k / 2] & 0xf;
                float v = round_to(fp4_values[code], MF_BF16);
                out[(g * 32 + k) * OUT + o] = round_to(round_to(ldexpf(v, e), MF_BF16), q->native);
            }
        }
}

/* --------------------------------------------------------------- NVFP4 */

static void nvfp4_matrix(const mf_pq *q, int64_t mat, float *out)
{
    const int64_t R = q->rows, C = q->cols;
    const float s2 = load(&q->scale2, 0);
    const uint64_t wbase = (uint64_t)(mat * R * (C / 2)), sbase = (uint64_t)(mat * R * (C / 16));
    for (int64_t o = 0; o < R; o++)
        for (int64_t i = 0; i < C; i++) {
            uint8_t b = q->w.p[wbase + (uint64_t)(o * (C / 2) + i / 2)];
            int code = i & 1 ? b >> 4 : b & 0xf;
            float s = load(&q->scale, sbase + (uint64_t)(o * (C / 16) + i / 16));
            out[o * C + i] = round_to((fp4_values[code] * s) * s2, q->native);
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

static void bnb4_matrix(const mf_pq *q, float *out)
{
    const uint64_t n = (uint64_t)q->rows * (uint64_t)q->cols, bs = (uint64_t)q->blocksize;
    float am = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i % bs == 0)
            am = bnb_absmax(q, i / bs);
        uint8_t b = q->w.p[i / 2];
        int code = i & 1 ? b & 0xf : b >> 4;
        out[i] = round_to(load(&q->code, (uint64_t)code) * am, q->native);
    }
}

/* int8_vectorwise_dequant: A * SCB.view(-1, 1) * 7.874015718698502e-3
 * (two F32 roundings), then the dtype. */
static void bnb8_matrix(const mf_pq *q, float *out)
{
    const float inv127 = 7.874015718698502e-3f;
    for (int64_t o = 0; o < q->rows; o++) {
        float s = load(&q->scale, (uint64_t)o);
        for (int64_t i = 0; i < q->cols; i++) {
            float a = (float)(int8_t)q->w.p[o * q->cols + i];
            float t = a * s;
            out[o * q->cols + i] = round_to(t * inv127, q->native);
        }
    }
}

void mf_pq_matrix(const mf_pq *q, int64_t mat, float *out)
{
    switch (q->method) {
    case MF_PQ_GPTQ: gptq_matrix(q, out); break;
    case MF_PQ_AWQ: awq_matrix(q, out); break;
    case MF_PQ_FP8: case MF_PQ_CT_INT: scaled_matrix(q, mat, out); break;
    case MF_PQ_MXFP4: mxfp4_matrix(q, mat, out); break;
    case MF_PQ_NVFP4: nvfp4_matrix(q, mat, out); break;
    case MF_PQ_BNB4: bnb4_matrix(q, out); break;
    case MF_PQ_BNB8: bnb8_matrix(q, out); break;
    default: break;
    }
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
    if (q->nmat < 1 || q->rows < 1 || q->cols < 1)
        return breach(&w, &q->w, "has no elements");
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
