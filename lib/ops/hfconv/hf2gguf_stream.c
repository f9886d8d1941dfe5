/* hf2gguf_stream.c - the bytes of an HF -> GGUF conversion's tensors (see
 * hf2gguf.c): each output tensor's sources read row chunk by row chunk,
 * mapped, transposed, through float32 as torch and numpy convert, encoded
 * (or quantized for a mix) and handed to mf_gguf_write's sink; a source's
 * pages are dropped once its tensor is written. */
#include "ops/hfconv/hf2gguf_int.h"
#include "quant/quant.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* ------------------------------------------------------- value coding */

/* numpy's half -> float for every half, built once (the conversion of
 * F16 sources is a table lookup). */
static float f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void f16_table_init(void)
{
    for (uint32_t h = 0; h < 65536; h++)
        f16_table[h] = mf_f16_to_f32_numpy((uint16_t)h);
}

/* Source elements as float32 (torch's .to(torch.float32)); halves as
 * numpy reads them (NaN payloads kept). */
static void row_to_f32(mf_dtype dt, const uint8_t *p, size_t n, float *out)
{
    size_t i;
    switch (dt) {
    case MF_F32: memcpy(out, p, n * 4); return;
    case MF_F16:
        pthread_once(&f16_once, f16_table_init);
        for (i = 0; i < n; i++)
            out[i] = f16_table[mf_rd16le(p + 2 * i)];
        return;
    default: /* the other types as tensor_f32.c reads them */
        if (mf_convert_to_f32(dt, p, out, n))
            memset(out, 0, n * sizeof(*out));
    }
}

/* TensorNameMap.get_name(name, try_suffixes=(".weight", ".bias")): the
 * name itself, else without the suffix (which is put back). */
/* ---------------------------------------------------------- streaming */

/* A source's bytes: mapped in place, or read whole into *owned. */
static const uint8_t *seg_data(const seg *s, uint8_t **owned, mf_status *st)
{
    *owned = NULL;
    const uint8_t *plain = mf_tensor_data(NULL, s->t);
    if (plain)
        return plain;
    mf_buf_sink col = {.cap = s->t->nbytes, .too_long = "tensor stream longer than its size"};
    col.p = malloc(col.cap ? col.cap : 1);
    if (!col.p) {
        mf_oom(st, s->part->path);
        return NULL;
    }
    if (mf_tensor_stream(s->part, s->t, mf_buf_sink_fn, &col, st) || col.n != col.cap) {
        free(col.p);
        if (!st->code)
            mf_fail(st, MF_ERR_FORMAT, s->part->path, -1, "tensor \"%s\": short stream", s->t->name);
        return NULL;
    }
    *owned = col.p;
    return col.p;
}

/* The sources of one output tensor, ready to read. */
typedef struct reader {
    const out_tensor *o;
    const uint8_t **data;
    uint8_t **owned;
    int64_t *first_row; /* row index where each source starts */
    int64_t rows;
    float iscale;       /* OP_TERNARY: 1 / the tensor's mean |w| */
    float *scratch;     /* a row, for a column map */
} reader;

static void reader_close(reader *r)
{
    for (size_t i = 0; r->owned && i < r->o->n_segs; i++) {
        free(r->owned[i]);
        if (!r->owned[i] && r->data && r->data[i])
            mf_tensor_release(r->o->segs[i].part, r->o->segs[i].t);
    }
    free(r->data);
    free(r->owned);
    free(r->first_row);
    free(r->scratch);
}

static int reader_open(reader *r, const out_tensor *o, mf_status *st)
{
    memset(r, 0, sizeof(*r));
    r->o = o;
    size_t n = o->n_segs ? o->n_segs : 1;
    r->data = calloc(n, sizeof(*r->data));
    r->owned = calloc(n, sizeof(*r->owned));
    r->first_row = calloc(n + 1, sizeof(int64_t));
    r->scratch = o->col_map ? malloc((size_t)o->row_len * sizeof(float)) : NULL;
    if (!r->data || !r->owned || !r->first_row || (o->col_map && !r->scratch))
        return mf_oom(st, NULL);
    for (size_t i = 0; i < o->n_segs; i++) {
        const mf_tensor *t = o->segs[i].t;
        int64_t ne = h2g_numel(t->shape, t->ndim);
        if (o->transpose ? 0 : ne % o->row_len)
            return mf_fail(st, MF_ERR_FORMAT, o->segs[i].part->path, -1,
                           "tensor \"%s\": %lld values are not rows of %lld", t->name, (long long)ne,
                           (long long)o->row_len);
        r->first_row[i + 1] = r->first_row[i] + (o->transpose ? 0 : ne / o->row_len);
        if (!(r->data[i] = seg_data(&o->segs[i], &r->owned[i], st)))
            return -1;
    }
    r->rows = r->first_row[o->n_segs];
    return 0;
}

/* Source row `row` (of the sources read as one) as float32, or raw bytes
 * when raw. */
static void read_row(const reader *r, int64_t row, float *f32, uint8_t *raw)
{
    const out_tensor *o = r->o;
    size_t s = 0;
    while (s + 1 < o->n_segs && row >= r->first_row[s + 1])
        s++;
    mf_dtype dt = o->segs[s].t->dtype;
    size_t es = mf_dtype_info_of(dt)->block_bytes;
    const uint8_t *p = r->data[s] + (uint64_t)(row - r->first_row[s]) * (uint64_t)o->row_len * es;
    if (raw)
        memcpy(raw, p, (size_t)o->row_len * es);
    else
        row_to_f32(dt, p, (size_t)o->row_len, f32);
}

/* torch.exp on float32 CPU tensors: SLEEF's expf (1.0 ULP, "u10") as
 * torch's vectorised kernels run it, with fused multiply-adds. Mamba's
 * -exp(A_log) matches the converter's bytes only with this exact rounding. */
static float pow2i(int q)
{
    uint32_t u = (uint32_t)(q + 0x7f) << 23;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float conv_torch_expf(float d)
{
    /* outside [-104, 104] (and NaN) the result is known before q is made:
     * rintf of a NaN or of 1e30 has no int (a GGUF's A tensor is any float) */
    if (isnan(d))
        return d;
    if (d < -104)
        return 0;
    if (d > 104)
        return INFINITY;
    int q = (int)rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf((float)q, -0.693145751953125f, d);
    s = fmaf((float)q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = fmaf(s * s, u, s) + 1.0f;
    return u * pow2i(q >> 1) * pow2i(q - (q >> 1));
}

static void elementwise(const reader *r, int64_t row, float *f32, bool half);

/* Output row r (a column of the source when transposed) as float32 after
 * the element-wise op, in the source's precision as torch computes it. */
static void output_row(const reader *r, int64_t row, float *f32)
{
    const out_tensor *o = r->o;
    if (o->out_perm)
        row = o->out_perm[row];
    if (o->transpose) {
        /* a column of the source: of the row_len source rows of block
         * row / per (listed by the row map: a transpose per head; else
         * consecutive: per expert), t_cols columns from t_col0 each */
        const mf_tensor *t = o->segs[0].t;
        mf_dtype dt = t->dtype;
        size_t es = mf_dtype_info_of(dt)->block_bytes;
        int64_t cols = t->shape[t->ndim - 1], n = o->row_len, per = o->t_cols ? o->t_cols : cols;
        int64_t col = o->t_col0 + row % per, first = row / per * n;
        for (int64_t i = 0; i < n; i++) {
            int64_t sr = o->row_map ? o->row_map[first + i] : first + i;
            row_to_f32(dt, r->data[0] + ((uint64_t)sr * (uint64_t)cols + (uint64_t)col) * es, 1, f32 + i);
        }
    } else {
        read_row(r, o->row_map ? o->row_map[row] : row, f32, NULL);
    }
    if (o->col_map) { /* columns re-ordered within the row */
        memcpy(r->scratch, f32, (size_t)o->row_len * sizeof(float));
        for (int64_t i = 0; i < o->row_len; i++)
            f32[i] = r->scratch[o->col_map[i]];
    }
    mf_dtype sdt = o->segs[0].t->dtype;
    bool half = sdt == MF_F16; /* torch keeps F16 tensors F16 */
    elementwise(r, row, f32, half);
    if (o->row_scale) { /* the second multiplication, rounded again */
        float f = half ? mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(o->row_scale[row])) : o->row_scale[row];
        for (int64_t i = 0; i < o->row_len; i++) {
            float v = f32[i] * f;
            f32[i] = half ? mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(v)) : v;
        }
    }
}

/* The element-wise op of an output row (o->ew), as torch rounds it. */
static void elementwise(const reader *r, int64_t row, float *f32, bool half)
{
    const out_tensor *o = r->o;
    (void)row;
    if (o->ew == OP_SKIP)
        return;
    if (o->ew == OP_TERNARY) { /* (w * iscale).round().clamp(-1, 1) / iscale, .type(dtype): F16
                                  stays F16; BF16 was made F32 before modify_tensors */
        for (int64_t i = 0; i < o->row_len; i++) {
            float q = nearbyintf(f32[i] * r->iscale);
            float v = (q > 1.0f ? 1.0f : q < -1.0f ? -1.0f : q) / r->iscale;
            f32[i] = half ? mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(v)) : v;
        }
        return;
    }
    /* an F16 tensor times a Python float: torch casts the scalar to F16 first */
    float scale = half ? mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(o->scale)) : o->scale;
    for (int64_t i = 0; i < o->row_len; i++) {
        float v = o->ew == OP_ADD_ONE ? f32[i] + 1.0f : o->ew == OP_SCALE ? f32[i] * scale : -conv_torch_expf(f32[i]);
        f32[i] = half ? mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(v)) : v;
    }
}

/* OP_TERNARY's scale: weight.float().abs().mean().clamp(min=1e-5), its
 * reciprocal in float32 (the sum taken in double). */
static int ternary_scale(reader *r, int64_t nrows, mf_status *st)
{
    const out_tensor *o = r->o;
    float *row = malloc((size_t)o->row_len * sizeof(float));
    if (!row)
        return mf_oom(st, NULL);
    double sum = 0;
    for (int64_t k = 0; k < nrows; k++) {
        read_row(r, o->row_map ? o->row_map[k] : k, row, NULL);
        for (int64_t i = 0; i < o->row_len; i++)
            sum += fabs((double)row[i]);
    }
    free(row);
    float mean = (float)(sum / (double)(nrows * o->row_len));
    if (!(mean >= 1e-5f))
        mean = 1e-5f;
    r->iscale = 1.0f / mean;
    return 0;
}

/* torch.equal of two tensors' values (Mamba's tied output check). */
bool h2g_same_values(const conv *c, const out_tensor *a, const mf_model *part, const mf_tensor *t)
{
    if (a->n_segs != 1 || a->row_map || a->col_map || a->out_perm || a->transpose || a->ew != OP_SKIP || a->segs[0].t->ndim != t->ndim ||
        memcmp(a->segs[0].t->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim))
        return false;
    out_tensor b = *a;
    seg s = {part, t};
    b.segs = &s;
    reader ra, rb;
    mf_status tmp;
    mf_status_init(&tmp);
    bool same = reader_open(&ra, a, &tmp) == 0 && reader_open(&rb, &b, &tmp) == 0;
    float *x = malloc((size_t)a->row_len * 2 * sizeof(float));
    same = same && x;
    for (int64_t row = 0; same && row < ra.rows; row++) {
        read_row(&ra, row, x, NULL);
        read_row(&rb, row, x + a->row_len, NULL);
        for (int64_t i = 0; same && i < a->row_len; i++)
            same = x[i] == x[a->row_len + i];
    }
    free(x);
    reader_close(&ra);
    reader_close(&rb);
    mf_status_clear(&tmp);
    (void)c;
    return same;
}

/* float32 values in the type `dt` stores, encoded. */
static int encode_rows(const conv *c, mf_dtype dt, float *f32, uint8_t *out, int64_t nr, int64_t row,
                       mf_status *st)
{
    size_t n = (size_t)(nr * row);
    if (dt == MF_F32) {
        memcpy(out, f32, n * 4);
    } else if (dt == MF_F16) {
        for (size_t i = 0; i < n; i++)
            mf_wr16le(out + 2 * i, mf_f32_to_f16_numpy(f32[i]));
    } else if (dt == MF_BF16) {
        for (size_t i = 0; i < n; i++)
            mf_wr16le(out + 2 * i, mf_f32_to_bf16(f32[i]));
    } else if (mf_quantize_rows_mt(dt, f32, out, nr, row, NULL, c->opts.threads)) {
        return mf_fail(st, MF_ERR_UNSUPPORTED, c->dir, -1, "cannot quantize to %s", mf_dtype_name(dt));
    }
    return 0;
}

/* Rounds values through the plain conversion's type (a mix quantizes the
 * F16 file's values, as llama-quantize does on it). */
static void round_through(mf_dtype plan, float *f32, size_t n)
{
    if (plan == MF_F16)
        for (size_t i = 0; i < n; i++)
            f32[i] = mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(f32[i]));
    else if (plan == MF_BF16)
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)mf_f32_to_bf16(f32[i]) << 16;
            memcpy(&f32[i], &u, 4);
        }
}

/* One OCP MXFP4 block as ggml stores it (GptOssModel.repack_mxfp4): the
 * e8m0 scale byte, then 16 bytes where byte j holds value j in its low
 * nibble and value j + 16 in its high one; the checkpoint's byte i holds
 * values 2i (low) and 2i + 1 (high). */
static void mxfp4_block(uint8_t scale, const uint8_t *in, uint8_t *out)
{
    out[0] = scale;
    for (int j = 0; j < 16; j++) {
        int lo = j, hi = j + 16;
        uint8_t a = (uint8_t)((in[lo / 2] >> (4 * (lo % 2))) & 0x0F), b = (uint8_t)((in[hi / 2] >> (4 * (hi % 2))) & 0x0F);
        out[1 + j] = (uint8_t)(a | (b << 4));
    }
}

/* An OP_MXFP4 tensor: its rows repacked without requantizing; a mix's other
 * type gets the MXFP4 values (llama-quantize dequantizes them). */
static int fill_mxfp4(conv *c, const out_tensor *o, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const mf_tensor *bt = o->segs[0].t;
    int64_t nb = bt->shape[2], src_rows = bt->shape[0] * bt->shape[1];
    int64_t nrows = h2g_numel(o->shape, o->ndim) / o->row_len;
    uint8_t *owned_b = NULL, *owned_s = NULL;
    const uint8_t *b = seg_data(&o->segs[0], &owned_b, st), *sc = b ? seg_data(&o->segs[1], &owned_s, st) : NULL;
    size_t packed = (size_t)nb * 17;
    uint64_t orow_bytes;
    mf_dtype_nbytes(o->dtype, (uint64_t)o->row_len, &orow_bytes);
    uint8_t *row = malloc(packed), *obuf = malloc((size_t)orow_bytes);
    float *f32 = o->dtype == MF_MXFP4 ? NULL : malloc((size_t)o->row_len * sizeof(float));
    int rc = !b || !sc ? -1 : (!row || !obuf || (o->dtype != MF_MXFP4 && !f32)) ? mf_oom(st, c->dir) : 0;
    for (int64_t r = 0; rc == 0 && r < nrows; r++) {
        int64_t src = o->row_map[r];
        if (src < 0 || src >= src_rows) {
            rc = mf_fail(st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": row %lld out of range", o->name, (long long)src);
            break;
        }
        for (int64_t j = 0; j < nb; j++)
            mxfp4_block(sc[src * nb + j], b + (src * nb + j) * 16, row + j * 17);
        if (o->dtype == MF_MXFP4) {
            rc = sink(sink_ctx, row, packed, st);
            continue;
        }
        if (mf_convert_to_f32(MF_MXFP4, row, f32, (size_t)o->row_len))
            rc = mf_fail(st, MF_ERR_UNSUPPORTED, c->dir, -1, "tensor \"%s\": cannot read MXFP4", o->name);
        if (rc == 0)
            rc = encode_rows(c, o->dtype, f32, obuf, 1, o->row_len, st);
        if (rc == 0)
            rc = sink(sink_ctx, obuf, (size_t)orow_bytes, st);
    }
    free(row);
    free(obuf);
    free(f32);
    for (int i = 0; i < 2; i++) {
        uint8_t *owned = i ? owned_s : owned_b;
        if (owned)
            free(owned);
        else if (i ? sc : b)
            mf_tensor_release(o->segs[i].part, o->segs[i].t);
    }
    c->done += (uint64_t)nrows * orow_bytes;
    if (rc == 0)
        rc = mf_progress_report(c->opts.progress, c->opts.progress_user, c->done, c->total_bytes, c->dir, st);
    return rc;
}

int h2g_fill_tensor(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    conv *c = ctx;
    const out_tensor *o = &c->out[index];
    if (o->mxfp4)
        return fill_mxfp4(c, o, sink, sink_ctx, st);
    int64_t row = o->row_len, nrows = row ? h2g_numel(o->shape, o->ndim) / row : 0;
    if (row == 0 || nrows == 0)
        return 0;
    reader rd;
    int rc = o->generated ? (memset(&rd, 0, sizeof(rd)), 0) : reader_open(&rd, o, st);
    if (rc == 0 && !o->generated && !o->transpose && rd.rows != (o->row_map ? rd.rows : nrows))
        rc = mf_fail(st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": sources hold %lld rows, not %lld", o->name,
                     (long long)rd.rows, (long long)nrows);
    if (rc == 0 && o->ew == OP_TERNARY && !o->transpose)
        rc = ternary_scale(&rd, nrows, st);
    mf_dtype sdt = o->generated ? MF_F32 : o->segs[0].t->dtype;
    bool raw = !o->generated && !o->transpose && !o->col_map && !o->out_perm && o->ew == OP_SKIP && sdt == o->dtype &&
               (sdt == MF_F16 || sdt == MF_F32);
    for (size_t i = 0; raw && i < o->n_segs; i++)
        raw = o->segs[i].t->dtype == sdt;
    /* F16 values without an op are F16 already: no rounding through F16 */
    bool exact_in_plan = !o->generated && o->ew == OP_SKIP && o->plan == MF_F16;
    for (size_t i = 0; exact_in_plan && i < o->n_segs; i++)
        exact_in_plan = o->segs[i].t->dtype == MF_F16;
    uint64_t orow_bytes;
    mf_dtype_nbytes(o->dtype, (uint64_t)row, &orow_bytes);
    /* chunks of 4 MiB of float32; 32 MiB when quantizing (fewer thread starts) */
    uint64_t budget = o->dtype == o->plan || o->dtype == MF_F32 || o->dtype == MF_F16 || o->dtype == MF_BF16
                          ? 4u << 20 : 32u << 20;
    int64_t chunk = (int64_t)(budget / ((uint64_t)row * 4 + orow_bytes));
    if (chunk < 1)
        chunk = 1;
    if (chunk > nrows)
        chunk = nrows;
    float *f32 = raw ? NULL : malloc((size_t)(chunk * row) * sizeof(float));
    uint8_t *obuf = malloc((size_t)(chunk * (int64_t)orow_bytes));
    if (rc == 0 && ((!raw && !f32) || !obuf))
        rc = mf_oom(st, c->dir);
    if (rc == 0 && raw && !o->row_map && o->n_segs == 1) { /* the mapped bytes as they are */
        const uint8_t *p = rd.data[0];
        uint64_t left = (uint64_t)nrows * orow_bytes;
        for (uint64_t step = 4u << 20; rc == 0 && left; left -= step < left ? step : left) {
            size_t k = (size_t)(step < left ? step : left);
            rc = sink(sink_ctx, p, k, st);
            p += k;
        }
        nrows = 0; /* done */
    }
    for (int64_t r0 = 0; rc == 0 && r0 < nrows; r0 += chunk) {
        int64_t nr = nrows - r0 < chunk ? nrows - r0 : chunk;
        for (int64_t r = 0; r < nr; r++) {
            if (raw)
                read_row(&rd, o->row_map ? o->row_map[r0 + r] : r0 + r, NULL, obuf + (uint64_t)r * orow_bytes);
            else if (o->generated)
                memcpy(f32 + r * row, o->generated + (r0 + r) * row, (size_t)row * sizeof(float));
            else
                output_row(&rd, r0 + r, f32 + r * row);
        }
        if (!raw) {
            if (o->dtype != o->plan && !exact_in_plan)
                round_through(o->plan, f32, (size_t)(nr * row));
            rc = encode_rows(c, o->dtype, f32, obuf, nr, row, st);
        }
        if (rc == 0)
            rc = sink(sink_ctx, obuf, (size_t)(nr * (int64_t)orow_bytes), st);
    }
    free(f32);
    free(obuf);
    if (!o->generated)
        reader_close(&rd);
    c->done += (uint64_t)(row ? h2g_numel(o->shape, o->ndim) / row : 0) * orow_bytes;
    if (rc == 0)
        rc = mf_progress_report(c->opts.progress, c->opts.progress_user, c->done,
                                c->total_bytes, c->dir, st);
    return rc;
}

