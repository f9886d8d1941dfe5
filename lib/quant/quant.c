/* quant.c - dispatch of the quantization kernels by dtype, row loops and the
 * multi-threaded driver. */
#include "quant/iq_lattice.h"
#include "quant/qimpl.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct qtype {
    mf_dtype dt;         /* block elements and bytes: mf_dtype_info_of (core/dtype.c) */
    mq_quant_fn quant;  /* NULL: cannot quantize */
    mq_deq_fn deq;      /* NULL: cannot dequantize */
    bool needs_imatrix; /* ggml_quantize_requires_imatrix */
    int lattice;        /* mq_lattice_id the quantizer searches, or -1 */
} qtype;

/* Plain float element types, as ggml's quantize_chunk / to_float treat them. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MQ_HOST_LE 1 /* a float's bytes in memory are its GGUF bytes */
#else
#define MQ_HOST_LE 0
#endif

static void quant_f32(const float *x, uint8_t *y, int64_t n, const float *qw)
{
    (void)qw;
    if (MQ_HOST_LE) {
        memcpy(y, x, (size_t)n * sizeof(float));
        return;
    }
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
    int64_t i = mq_simd_f32_to_bf16(x, y, n);
    for (; i < n; i++)
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
    if (mq_simd_f16_to_f32(x, y, n))
        return;
    for (int64_t i = 0; i < n; i++)
        y[i] = mf_f16_to_f32(mf_rd16le(x + 2 * i));
}

static void deq_bf16(const uint8_t *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = mf_bf16_to_f32(mf_rd16le(x + 2 * i));
}

static const qtype qtypes[] = {
    {MF_F32, quant_f32, deq_f32, false, -1},
    {MF_F16, quant_f16, deq_f16, false, -1},
    {MF_BF16, quant_bf16, deq_bf16, false, -1},
    {MF_Q4_0, mq_quant_q4_0, mq_deq_q4_0, false, -1},
    {MF_Q4_1, mq_quant_q4_1, mq_deq_q4_1, false, -1},
    {MF_Q5_0, mq_quant_q5_0, mq_deq_q5_0, false, -1},
    {MF_Q5_1, mq_quant_q5_1, mq_deq_q5_1, false, -1},
    {MF_Q8_0, mq_quant_q8_0, mq_deq_q8_0, false, -1},
    {MF_Q2_K, mq_quant_q2_k, mq_deq_q2_k, false, -1},
    {MF_Q3_K, mq_quant_q3_k, mq_deq_q3_k, false, -1},
    {MF_Q4_K, mq_quant_q4_k, mq_deq_q4_k, false, -1},
    {MF_Q5_K, mq_quant_q5_k, mq_deq_q5_k, false, -1},
    {MF_Q6_K, mq_quant_q6_k, mq_deq_q6_k, false, -1},
    /* Q8_K: an intermediate type of ggml's dot products; quantize_chunk
     * does not produce it, but its blocks have a well-defined value. */
    {MF_Q8_K, NULL, mq_deq_q8_k, false, -1},
    {MF_IQ4_NL, mq_quant_iq4_nl, mq_deq_iq4_nl, false, -1},
    {MF_IQ4_XS, mq_quant_iq4_xs, mq_deq_iq4_xs, false, -1},
    /* lattice i-quants: the quantizers search a grid built on first use */
    {MF_IQ2_XXS, mq_quant_iq2_xxs, mq_deq_iq2_xxs, true, MQ_LAT_IQ2_XXS},
    {MF_IQ2_XS, mq_quant_iq2_xs, mq_deq_iq2_xs, true, MQ_LAT_IQ2_XS},
    {MF_IQ3_XXS, mq_quant_iq3_xxs, mq_deq_iq3_xxs, false, MQ_LAT_IQ3_XXS},
    {MF_IQ3_S, mq_quant_iq3_s, mq_deq_iq3_s, false, MQ_LAT_IQ3_S},
    {MF_IQ2_S, mq_quant_iq2_s, mq_deq_iq2_s, false, MQ_LAT_IQ2_S},
    {MF_IQ1_S, mq_quant_iq1_s, mq_deq_iq1_s, true, MQ_LAT_IQ1},
    {MF_IQ1_M, mq_quant_iq1_m, mq_deq_iq1_m, false, MQ_LAT_IQ1},
    {MF_TQ1_0, mq_quant_tq1_0, mq_deq_tq1_0, false, -1},
    {MF_TQ2_0, mq_quant_tq2_0, mq_deq_tq2_0, false, -1},
    /* came to ggml after the reference commit (quant_fp4.c, ggml b10256) */
    {MF_MXFP4, mq_quant_mxfp4, mq_deq_mxfp4, false, -1},
    {MF_NVFP4, mq_quant_nvfp4, mq_deq_nvfp4, false, -1},
    {MF_Q1_0, mq_quant_q1_0, mq_deq_q1_0, false, -1},
    {MF_Q2_0, mq_quant_q2_0, mq_deq_q2_0, false, -1},
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
    const qtype *t = qtype_of(dt);
    return t && t->needs_imatrix;
}

/* A type's block: the dtype table's (one home for the sizes). */
static uint32_t blck_of(const qtype *t) { return mf_dtype_info_of(t->dt)->block_elems; }
static uint32_t bytes_of(const qtype *t) { return mf_dtype_info_of(t->dt)->block_bytes; }

/* Bytes of one row, or -1 when n is not a positive block multiple or the
 * size overflows. */
static int64_t row_bytes(const qtype *t, int64_t n)
{
    if (n <= 0 || n % blck_of(t))
        return -1;
    int64_t nblk = n / blck_of(t);
    if (nblk > INT64_MAX / bytes_of(t))
        return -1;
    return nblk * bytes_of(t);
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
    if (!t || !t->deq || n < 0 || n % blck_of(t))
        return -1;
    if (n == 0)
        return 0;
    if (!src || !dst || row_bytes(t, n) < 0)
        return -1;
    t->deq(src, dst, n);
    return 0;
}

/* ------------------------------------------------------------ threads */

/* Rows are converted to F32 this many values at a time per thread (64 KiB),
 * so the floats a quantizer reads are still in the core's cache. */
#define BATCH_VALUES 16384
#define MAX_THREADS 64

/* One thread's share: rows [row0, row0 + nrows) of the call. */
typedef struct qshare {
    const qtype *t, *src_t; /* src_t NULL: the source is F32 floats */
    const uint8_t *src;
    uint8_t *dst;
    int64_t nrows, n_per_row, src_rb, dst_rb;
    const float *imatrix;
    int rc;
} qshare;

static void *qshare_run(void *arg)
{
    qshare *s = arg;
    if (!s->src_t) {
        for (int64_t r = 0; r < s->nrows; r++)
            s->t->quant((const float *)(s->src + r * s->src_rb), s->dst + r * s->dst_rb, s->n_per_row, s->imatrix);
        return NULL;
    }
    int64_t batch = s->n_per_row >= BATCH_VALUES ? 1 : BATCH_VALUES / s->n_per_row;
    float *buf = malloc((size_t)(batch * s->n_per_row) * sizeof(float));
    if (!buf) {
        s->rc = -1;
        return NULL;
    }
    /* F32 out on a little-endian host: the source rows convert straight
     * into the output, which quant_f32 would only copy */
    const bool direct = MQ_HOST_LE && s->t->dt == MF_F32 && (uintptr_t)s->dst % sizeof(float) == 0;
    for (int64_t r = 0; r < s->nrows; r += batch) {
        int64_t k = s->nrows - r < batch ? s->nrows - r : batch;
        if (direct) {
            s->src_t->deq(s->src + r * s->src_rb, (float *)(void *)(s->dst + r * s->dst_rb), k * s->n_per_row);
            continue;
        }
        s->src_t->deq(s->src + r * s->src_rb, buf, k * s->n_per_row);
        for (int64_t i = 0; i < k; i++)
            s->t->quant(buf + i * s->n_per_row, s->dst + (r + i) * s->dst_rb, s->n_per_row, s->imatrix);
    }
    free(buf);
    return NULL;
}

/* A started quantization (mf_quant_task_start); rows are independent, so
 * each thread takes a contiguous share and the output does not depend on
 * the thread count. */
struct mf_quant_task {
    int n;
    qshare shares[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    bool started[MAX_THREADS];
};

/* Checks the arguments, as mf_quantize_rows does, plus the source type:
 * F32 (read as floats when aligned) or anything mfmt dequantizes. */
static int share_setup(mf_quant_task *k, mf_dtype dt, mf_dtype src_dt, const void *src, void *dst, int64_t nrows,
                       int64_t n_per_row, const float *imatrix, int nthreads)
{
    const qtype *t = qtype_of(dt), *st = qtype_of(src_dt);
    int64_t rb = check_quant_args(t, src, dst, nrows, n_per_row, imatrix);
    int64_t srb = st && st->deq ? row_bytes(st, n_per_row) : -1;
    if (rb < 0 || srb < 0 || (nrows > 0 && nrows > INT64_MAX / srb))
        return -1;
    if (src_dt == MF_F32 && ((uintptr_t)src % sizeof(float)) == 0)
        st = NULL;
    nthreads = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
    if (nthreads > nrows)
        nthreads = (int)nrows;
    k->n = nthreads; /* 0 for no rows */
    int64_t row = 0;
    for (int i = 0; i < nthreads; i++) {
        int64_t cnt = nrows / nthreads + (i < nrows % nthreads);
        k->shares[i] = (qshare){t, st, (const uint8_t *)src + row * srb, (uint8_t *)dst + row * rb, cnt, n_per_row,
                                srb, rb, imatrix, 0};
        k->started[i] = false;
        row += cnt;
    }
    return 0;
}

static void share_start(mf_quant_task *k, int first)
{
    for (int i = first; i < k->n; i++)
        k->started[i] = pthread_create(&k->tids[i], NULL, qshare_run, &k->shares[i]) == 0;
}

/* Joins the threads; a share whose thread could not start runs here. */
static int share_finish(mf_quant_task *k)
{
    int rc = 0;
    for (int i = 0; i < k->n; i++) {
        if (k->started[i])
            pthread_join(k->tids[i], NULL);
        else
            qshare_run(&k->shares[i]);
        rc |= k->shares[i].rc;
    }
    return rc ? -1 : 0;
}

int mf_quantize_rows_mt(mf_dtype dt, const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix,
                        int nthreads)
{
    return mf_quantize_rows_from(dt, MF_F32, src, dst, nrows, n_per_row, imatrix, nthreads);
}

int mf_quantize_rows_from(mf_dtype dt, mf_dtype src_dt, const void *src, void *dst, int64_t nrows, int64_t n_per_row,
                          const float *imatrix, int nthreads)
{
    mf_quant_task k;
    if (share_setup(&k, dt, src_dt, src, dst, nrows, n_per_row, imatrix, nthreads))
        return -1;
    share_start(&k, 1); /* the calling thread does share 0 */
    return share_finish(&k);
}

int mf_quant_task_start(mf_quant_task **out, mf_dtype dt, mf_dtype src_dt, const void *src, void *dst, int64_t nrows,
                        int64_t n_per_row, const float *imatrix, int nthreads)
{
    mf_quant_task *k = malloc(sizeof(*k));
    *out = NULL;
    if (!k)
        return -1;
    if (share_setup(k, dt, src_dt, src, dst, nrows, n_per_row, imatrix, nthreads)) {
        free(k);
        return -1;
    }
    share_start(k, 0);
    *out = k;
    return 0;
}

int mf_quant_task_wait(mf_quant_task *k)
{
    if (!k)
        return -1;
    int rc = share_finish(k);
    free(k);
    return rc;
}

/* ------------------------------------------------------------ validation */

/* Where ggml_validate_row_data looks in one block: the fp16 scale fields
 * (offsets; -1: none), or every element for the float types. */
typedef struct scale_fields {
    int d, m;
} scale_fields;

static scale_fields scales_of(mf_dtype dt)
{
    switch (dt) {
    case MF_Q4_1: case MF_Q5_1: case MF_Q4_K: case MF_Q5_K: return (scale_fields){0, 2};
    case MF_Q2_K: return (scale_fields){80, 82};  /* scales[16] qs[64] d dmin */
    case MF_Q3_K: return (scale_fields){108, -1}; /* hmask[32] qs[64] scales[12] d */
    case MF_Q6_K: return (scale_fields){208, -1}; /* ql[128] qh[64] scales[16] d */
    case MF_TQ1_0: return (scale_fields){52, -1}; /* qs[48] qh[4] d */
    case MF_TQ2_0: return (scale_fields){64, -1}; /* qs[64] d */
    default: return (scale_fields){0, -1};        /* d first */
    }
}

static bool f16_finite(uint16_t h) { return (h & 0x7c00) != 0x7c00; }

/* IQ1_M keeps its fp16 scale in the top nibbles of four 16-bit scale words. */
static bool iq1_m_block_ok(const uint8_t *b)
{
    const uint8_t *sc = b + 48; /* qs[32] qh[16] scales[8] */
    uint16_t h = (uint16_t)((mf_rd16le(sc) >> 12) | ((mf_rd16le(sc + 2) >> 8) & 0x00f0) |
                            ((mf_rd16le(sc + 4) >> 4) & 0x0f00) | (mf_rd16le(sc + 6) & 0xf000));
    return f16_finite(h);
}

static bool block_ok(const qtype *t, const uint8_t *b)
{
    switch (t->dt) {
    case MF_F32: return (mf_rd32le(b) & 0x7f800000u) != 0x7f800000u;
    case MF_F16: return f16_finite(mf_rd16le(b));
    case MF_BF16: return (mf_rd16le(b) & 0x7f80) != 0x7f80;
    case MF_IQ1_M: return iq1_m_block_ok(b);
    case MF_MXFP4: return b[0] != 0xff; /* validate_e_e8m0 */
    case MF_NVFP4: return true;         /* every UE4M3 byte is valid */
    default: break;
    }
    scale_fields f = scales_of(t->dt);
    return f16_finite(mf_rd16le(b + f.d)) && (f.m < 0 || f16_finite(mf_rd16le(b + f.m)));
}

/* A row of F32/F16/BF16 values all finite (block_ok of each, as one loop
 * the compiler vectorizes: no call and no branch per value). */
static unsigned float_nonfinite(mf_dtype dt, const uint8_t *q)
{
    return dt == MF_F32   ? (mf_rd32le(q) & 0x7f800000u) == 0x7f800000u
           : dt == MF_F16 ? (mf_rd16le(q) & 0x7c00u) == 0x7c00u
                          : (mf_rd16le(q) & 0x7f80u) == 0x7f80u;
}

static bool float_row_ok(mf_dtype dt, const uint8_t *p, int64_t n)
{
    const int es = dt == MF_F32 ? 4 : 2;
    unsigned bad = 0;
    int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* words loaded as they lie, 64 at a time: loops of a fixed length,
     * which gcc -O2 turns into vector compares */
    enum { B = 64 };
    for (; i + B <= n && !bad; i += B) {
        const uint8_t *q = p + es * i;
        if (dt == MF_F32) {
            uint32_t w[B];
            memcpy(w, q, sizeof(w));
            for (int k = 0; k < B; k++)
                bad |= (w[k] & 0x7f800000u) == 0x7f800000u;
        } else {
            uint16_t w[B];
            const uint16_t e = dt == MF_F16 ? 0x7c00u : 0x7f80u;
            memcpy(w, q, sizeof(w));
            for (int k = 0; k < B; k++)
                bad |= (w[k] & e) == e;
        }
    }
#endif
    for (; i < n && !bad; i++)
        bad = float_nonfinite(dt, p + es * i);
    return !bad;
}

int64_t mf_quant_first_invalid_row(mf_dtype dt, const void *q, int64_t nrows, int64_t n_per_row)
{
    const qtype *t = qtype_of(dt);
    int64_t rb = t ? row_bytes(t, n_per_row) : -1;
    if (rb < 0)
        return -1;
    const uint8_t *p = q;
    if (dt == MF_F32 || dt == MF_F16 || dt == MF_BF16) {
        for (int64_t r = 0; r < nrows; r++)
            if (!float_row_ok(dt, p + r * rb, n_per_row))
                return r;
        return -1;
    }
    const int64_t nblk = n_per_row / blck_of(t), bb = bytes_of(t);
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t b = 0; b < nblk; b++)
            if (!block_ok(t, p + r * rb + b * bb))
                return r;
    return -1;
}
