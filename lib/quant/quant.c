/* quant.c - dispatch of the quantization kernels by dtype, row loops and the
 * multi-threaded driver. */
#include "quant/iq_lattice.h"
#include "quant/qimpl.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct qtype {
    mf_dtype dt;
    uint32_t blck, bytes;
    mq_quant_fn quant;  /* NULL: cannot quantize */
    mq_deq_fn deq;      /* NULL: cannot dequantize */
    bool needs_imatrix; /* ggml_quantize_requires_imatrix */
    int lattice;        /* mq_lattice_id the quantizer searches, or -1 */
} qtype;

/* Plain float element types, as ggml's quantize_chunk / to_float treat them. */
static void quant_f32(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        mf_wr32le(y + 4 * i, u);
    }
}

static void quant_f16(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t i = 0; i < n; i++)
        mf_wr16le(y + 2 * i, mf_f32_to_f16(x[i]));
}

static void quant_bf16(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    for (int64_t i = 0; i < n; i++)
        mf_wr16le(y + 2 * i, mf_f32_to_bf16(x[i]));
}

static void deq_f32(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = mf_rd32le(x + 4 * i);
        memcpy(&y[i], &u, 4);
    }
}

static void deq_f16(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = mf_f16_to_f32(mf_rd16le(x + 2 * i));
}

static void deq_bf16(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = mf_bf16_to_f32(mf_rd16le(x + 2 * i));
}

static const qtype qtypes[] = {
    {MF_F32, 1, 4, quant_f32, deq_f32, false, -1},
    {MF_F16, 1, 2, quant_f16, deq_f16, false, -1},
    {MF_BF16, 1, 2, quant_bf16, deq_bf16, false, -1},
    {MF_Q4_0, 32, 18, mq_quant_q4_0, mq_deq_q4_0, false, -1},
    {MF_Q4_1, 32, 20, mq_quant_q4_1, mq_deq_q4_1, false, -1},
    {MF_Q5_0, 32, 22, mq_quant_q5_0, mq_deq_q5_0, false, -1},
    {MF_Q5_1, 32, 24, mq_quant_q5_1, mq_deq_q5_1, false, -1},
    {MF_Q8_0, 32, 34, mq_quant_q8_0, mq_deq_q8_0, false, -1},
    {MF_Q2_K, QK_K, 84, mq_quant_q2_k, mq_deq_q2_k, false, -1},
    {MF_Q3_K, QK_K, 110, mq_quant_q3_k, mq_deq_q3_k, false, -1},
    {MF_Q4_K, QK_K, 144, mq_quant_q4_k, mq_deq_q4_k, false, -1},
    {MF_Q5_K, QK_K, 176, mq_quant_q5_k, mq_deq_q5_k, false, -1},
    {MF_Q6_K, QK_K, 210, mq_quant_q6_k, mq_deq_q6_k, false, -1},
    /* Q8_K: an intermediate type of ggml's dot products; quantize_chunk
     * does not produce it, but its blocks have a well-defined value. */
    {MF_Q8_K, QK_K, 292, NULL, mq_deq_q8_k, false, -1},
    {MF_IQ4_NL, 32, 18, mq_quant_iq4_nl, mq_deq_iq4_nl, false, -1},
    {MF_IQ4_XS, QK_K, 136, mq_quant_iq4_xs, mq_deq_iq4_xs, false, -1},
    /* lattice i-quants: the quantizers search a grid built on first use */
    {MF_IQ2_XXS, QK_K, 66, mq_quant_iq2_xxs, mq_deq_iq2_xxs, true, MQ_LAT_IQ2_XXS},
    {MF_IQ2_XS, QK_K, 74, mq_quant_iq2_xs, mq_deq_iq2_xs, true, MQ_LAT_IQ2_XS},
    {MF_IQ3_XXS, QK_K, 98, mq_quant_iq3_xxs, mq_deq_iq3_xxs, false, MQ_LAT_IQ3_XXS},
    {MF_IQ3_S, QK_K, 110, mq_quant_iq3_s, mq_deq_iq3_s, false, MQ_LAT_IQ3_S},
    {MF_IQ2_S, QK_K, 82, mq_quant_iq2_s, mq_deq_iq2_s, false, MQ_LAT_IQ2_S},
    {MF_IQ1_S, QK_K, 50, mq_quant_iq1_s, mq_deq_iq1_s, true, MQ_LAT_IQ1},
    {MF_IQ1_M, QK_K, 56, mq_quant_iq1_m, mq_deq_iq1_m, false, MQ_LAT_IQ1},
    {MF_TQ1_0, QK_K, 54, mq_quant_tq1_0, mq_deq_tq1_0, false, -1},
    {MF_TQ2_0, QK_K, 66, mq_quant_tq2_0, mq_deq_tq2_0, false, -1},
    /* MXFP4 came to ggml after the reference commit; dequantize only. */
    {MF_MXFP4, 32, 17, NULL, mq_deq_mxfp4, false, -1},
};

static const qtype *qtype_of(mf_dtype dt)
{
    for (size_t i = 0; i < sizeof(qtypes) / sizeof(qtypes[0]); i++)
        if (qtypes[i].dt == dt)
            return &qtypes[i];
    return NULL;
}

bool mf_can_quantize(mf_dtype dt)
{
    const qtype *t = qtype_of(dt);
    return t && t->quant;
}

bool mf_can_dequantize(mf_dtype dt)
{
    const qtype *t = qtype_of(dt);
    return t && t->deq;
}

bool mf_quant_requires_imatrix(mf_dtype dt)
{
    return dt == MF_IQ2_XXS || dt == MF_IQ2_XS || dt == MF_IQ1_S;
}

/* Bytes of one row, or -1 when n is not a positive block multiple or the
 * size overflows. */
static int64_t row_bytes(const qtype *t, int64_t n)
{
    if (n <= 0 || n % t->blck)
        return -1;
    int64_t nblk = n / t->blck;
    if (nblk > INT64_MAX / t->bytes)
        return -1;
    return nblk * t->bytes;
}

/* Checks the arguments of a quantization; returns the row size or -1. */
static int64_t check_quant_args(const qtype *t, const float *src, const void *dst, int64_t nrows, int64_t n_per_row,
                                const float *imatrix)
{
    if (!t || !t->quant || nrows < 0)
        return -1;
    if (t->needs_imatrix && !imatrix)
        return -1;
    if (t->lattice >= 0 && !mq_lattice_get((mq_lattice_id)t->lattice))
        return -1; /* out of memory building the search grid */
    int64_t rb = row_bytes(t, n_per_row);
    if (rb < 0 || (nrows > 0 && (!src || !dst)))
        return -1;
    if (nrows > 0 && (nrows > INT64_MAX / rb || nrows > INT64_MAX / n_per_row))
        return -1;
    return rb;
}

int mf_quantize_rows(mf_dtype dt, const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix)
{
    const qtype *t = qtype_of(dt);
    int64_t rb = check_quant_args(t, src, dst, nrows, n_per_row, imatrix);
    if (rb < 0)
        return -1;
    uint8_t *out = dst;
    for (int64_t r = 0; r < nrows; r++)
        t->quant(src + r * n_per_row, out + r * rb, n_per_row, imatrix);
    return 0;
}

int mf_dequantize_row(mf_dtype dt, const void *src, float *dst, int64_t n)
{
    const qtype *t = qtype_of(dt);
    if (!t || !t->deq || n < 0 || n % t->blck)
        return -1;
    if (n == 0)
        return 0;
    if (!src || !dst || row_bytes(t, n) < 0)
        return -1;
    t->deq(src, dst, n);
    return 0;
}

/* ------------------------------------------------------------ threads */

typedef struct qjob {
    mf_dtype dt;
    const float *src;
    uint8_t *dst;
    int64_t nrows, n_per_row;
    const float *imatrix;
    int rc;
} qjob;

static void *qjob_run(void *arg)
{
    qjob *j = arg;
    j->rc = mf_quantize_rows(j->dt, j->src, j->dst, j->nrows, j->n_per_row, j->imatrix);
    return NULL;
}

/* Rows are independent, so each thread takes a contiguous share; a thread
 * that cannot be started has its share done by the caller. */
int mf_quantize_rows_mt(mf_dtype dt, const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix,
                        int nthreads)
{
    const qtype *t = qtype_of(dt);
    int64_t rb = check_quant_args(t, src, dst, nrows, n_per_row, imatrix);
    if (rb < 0)
        return -1;
    if (nthreads > 64)
        nthreads = 64;
    if (nthreads <= 1 || nrows < 2)
        return mf_quantize_rows(dt, src, dst, nrows, n_per_row, imatrix);
    if (nthreads > nrows)
        nthreads = (int)nrows;
    qjob jobs[64];
    pthread_t tids[64];
    bool started[64];
    int64_t row = 0;
    for (int i = 0; i < nthreads; i++) {
        int64_t cnt = nrows / nthreads + (i < nrows % nthreads);
        jobs[i] = (qjob){dt, src + row * n_per_row, (uint8_t *)dst + row * rb, cnt, n_per_row, imatrix, 0};
        row += cnt;
        started[i] = i > 0 && pthread_create(&tids[i], NULL, qjob_run, &jobs[i]) == 0;
    }
    int rc = 0;
    for (int i = 0; i < nthreads; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        else
            qjob_run(&jobs[i]);
        rc |= jobs[i].rc;
    }
    return rc ? -1 : 0;
}
