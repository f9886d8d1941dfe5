/* fuzz_quant.c - libFuzzer harness for lib/quant (no files involved).
 *
 * Byte 0 picks the mode (bit 7) and the type (the other bits, modulo the
 * table below).
 *  - Dequantize: the rest of the input is up to 64 blocks of the type, in a
 *    buffer of exactly that size (ASan sees any read past it); every type
 *    mfmt can dequantize, with arbitrary scales, indices and NaN/inf halves.
 *    Passing = no crash and no sanitizer report.
 *  - Round trip: byte 1 picks a power of two 2^-4..2^6, byte 2 the options
 *    (importance matrix, one or two rows of 256); then little-endian int16
 *    values (x = v/32768 * scale; missing bytes are 0) and, with an imatrix,
 *    one byte per column for weights in [0.1, 10]. The row is quantized,
 *    dequantized, and in every block (32 values, or 256 for the super-block
 *    types) max |y - x| must stay within the type's bound times the block's
 *    max |x|, plus 2^-10 for scales fp16 cannot hold. Two rows are also
 *    quantized with two threads, which must give the same bytes. A failure
 *    aborts (a crash for libFuzzer).
 *
 * The bounds are sanity bounds. Without an imatrix the rounding types sit
 * near their step (Q8_0 1/254, Q4_0 1/16 plus clipping at 1/8, ...); the
 * others are about twice the worst ratio measured over 24000 varied and
 * adversarial rows per type (sparse rows, spikes, mixed scales, extreme
 * importance weights). The lowest-bit types are loose on
 * purpose: ggml's weights (x^2 without an imatrix) ignore zeros, which may
 * then dequantize to a full level. They catch garbage (wrong blocks, NaN,
 * wild scales), not quality; bit-exactness is tests/test_quant_ref.c's job. */
#include "core/core.h"
#include "quant/quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fq_type {
    mf_dtype dt;
    float k, kw; /* bound on max error / block max |x|, without and with imatrix */
} fq_type;

static const fq_type fq_types[] = {
    {MF_F32, 0.0f, 0.0f},         {MF_F16, 0.001f, 0.001f},     {MF_BF16, 0.004f, 0.004f},
    {MF_Q8_0, 0.01f, 0.01f},      {MF_Q4_0, 0.16f, 0.9f},       {MF_Q4_1, 0.14f, 0.9f},
    {MF_Q5_0, 0.13f, 0.6f},       {MF_Q5_1, 0.07f, 0.5f},       {MF_Q2_K, 1.5f, 2.0f},
    {MF_Q3_K, 0.6f, 1.0f},        {MF_Q4_K, 0.3f, 0.6f},        {MF_Q5_K, 0.15f, 0.3f},
    {MF_Q6_K, 0.06f, 0.2f},       {MF_IQ4_NL, 0.3f, 0.5f},      {MF_IQ4_XS, 0.3f, 0.5f},
    {MF_TQ1_0, 1.0f, 1.0f},       {MF_TQ2_0, 1.0f, 1.0f},       {MF_IQ2_XXS, 0.0f, 4.0f},
    {MF_IQ2_XS, 0.0f, 5.0f},      {MF_IQ2_S, 2.0f, 2.0f},       {MF_IQ3_XXS, 3.0f, 3.0f},
    {MF_IQ3_S, 5.0f, 5.0f},       {MF_IQ1_S, 0.0f, 5.0f},       {MF_IQ1_M, 32.0f, 5.0f},
    /* dequantize only */
    {MF_Q8_K, -1, -1},            {MF_MXFP4, -1, -1},
};
#define FQ_NTYPES (sizeof(fq_types) / sizeof(fq_types[0]))

static void fq_fail(const char *what, const fq_type *t, int block, double err, double amax)
{
    fprintf(stderr, "fuzz_quant: %s %s: block %d: max error %g, block max |x| %g\n", what, mf_dtype_name(t->dt),
            block, err, amax);
    abort();
}

static void fq_dequantize(const fq_type *t, const uint8_t *data, size_t size)
{
    const mf_dtype_info *info = mf_dtype_info_of(t->dt);
    size_t nblk = size / info->block_bytes;
    if (nblk > 64)
        nblk = 64;
    if (!nblk)
        return;
    uint8_t *blocks = malloc(nblk * info->block_bytes);
    float *y = malloc(nblk * info->block_elems * sizeof(float));
    if (!blocks || !y)
        abort();
    memcpy(blocks, data, nblk * info->block_bytes);
    if (mf_dequantize_row(t->dt, blocks, y, (int64_t)(nblk * info->block_elems)) != 0)
        fq_fail("dequantize refused", t, 0, 0, 0);
    volatile float sink = 0;
    for (size_t i = 0; i < nblk * info->block_elems; i++)
        sink += y[i]; /* every output written (MSan/valgrind would see it) */
    (void)sink;
    free(blocks);
    free(y);
}

enum { FQ_N = 256 };

static void fq_roundtrip(const fq_type *t, const uint8_t *data, size_t size)
{
    if (t->k < 0 || size < 2)
        return;
    const float scale = ldexpf(1.0f, (int)(data[0] % 11) - 4);
    const bool use_imatrix = (data[1] & 1) || mf_quant_requires_imatrix(t->dt);
    const int nrows = data[1] & 2 ? 2 : 1;
    data += 2, size -= 2;
    static float x[2 * FQ_N], y[2 * FQ_N], w[FQ_N];
    static uint8_t q[2 * FQ_N * 4], q2[2 * FQ_N * 4];
    size_t pos = 0;
    for (int i = 0; i < nrows * FQ_N; i++, pos += 2) {
        int16_t v = pos + 1 < size ? (int16_t)(data[pos] | data[pos + 1] << 8) : 0;
        x[i] = (float)v / 32768.0f * scale;
    }
    for (int i = 0; i < FQ_N; i++, pos++)
        w[i] = 0.1f + (pos < size ? data[pos] : 128) * (9.9f / 255.0f);
    const float *im = use_imatrix ? w : NULL;
    if (mf_quantize_rows(t->dt, x, q, nrows, FQ_N, im) != 0)
        fq_fail("quantize refused", t, 0, 0, 0);
    if (mf_dequantize_row(t->dt, q, y, nrows * FQ_N) != 0)
        fq_fail("dequantize refused", t, 0, 0, 0);
    const mf_dtype_info *info = mf_dtype_info_of(t->dt);
    const int region = info->block_elems > 1 ? (int)info->block_elems : 32;
    const float k = use_imatrix ? t->kw : t->k;
    for (int b = 0; b < nrows * FQ_N; b += region) {
        float amax = 0, err = 0;
        for (int i = b; i < b + region; i++) {
            amax = fmaxf(amax, fabsf(x[i]));
            float e = fabsf(y[i] - x[i]);
            err = e > err || e != e ? e : err; /* NaN propagates */
        }
        if (!(err <= k * amax + 0x1p-10f))
            fq_fail("round trip error", t, b / region, err, amax);
    }
    if (nrows == 2) {
        size_t rb = (size_t)(FQ_N / info->block_elems) * info->block_bytes;
        if (mf_quantize_rows_mt(t->dt, x, q2, 2, FQ_N, im, 2) != 0 || memcmp(q, q2, 2 * rb) != 0)
            fq_fail("threads changed the bytes", t, 0, 0, 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const fq_type *t = &fq_types[(data[0] & 0x7f) % FQ_NTYPES];
    if (data[0] & 0x80)
        fq_roundtrip(t, data + 1, size - 1);
    else
        fq_dequantize(t, data + 1, size - 1);
    return 0;
}
