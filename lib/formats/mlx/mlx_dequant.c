/* mlx_dequant.c - MLX affine dequantization (w = scale * q + bias per
 * group; codes a little-endian bit stream per row) and the logical view a
 * converter writes from. Arithmetic: see mlx.h. */
#include "formats/mlx/mlx.h"
#include "formats/formats.h"
#include "quant/mlx_affine.h"

#include <stdlib.h>

enum { CHUNK = 1 << 20 };

static float load_float(const uint8_t *p, mf_dtype dt)
{
    if (dt == MF_F16)
        return mf_f16_to_f32(mf_rd16le(p));
    if (dt == MF_BF16)
        return mf_bf16_to_f32(mf_rd16le(p));
    uint32_t u = mf_rd32le(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Rounds a float to the nearest value of dt (ties to even). */
static float round_to(float x, mf_dtype dt)
{
    if (dt == MF_F16)
        return mf_f16_to_f32(mf_f32_to_f16(x));
    if (dt == MF_BF16)
        return mf_bf16_to_f32(mf_f32_to_bf16(x));
    return x;
}

static void store(uint8_t *p, float v, mf_dtype out)
{
    if (out == MF_F16) {
        mf_wr16le(p, mf_f32_to_f16(v));
    } else if (out == MF_BF16) {
        mf_wr16le(p, mf_f32_to_bf16(v));
    } else {
        uint32_t u;
        memcpy(&u, &v, 4);
        mf_wr32le(p, u);
    }
}

static int check_source(const mf_model *m, const mf_tensor *t, uint64_t nbytes, mf_status *st)
{
    if (!t->data || t->big_endian || t->strides)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1,
                       "MLX: \"%s\" is not stored plainly in a mapping", t->name);
    if (t->nbytes != nbytes)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "MLX: \"%s\" holds %llu bytes, not %llu",
                       t->name, (unsigned long long)t->nbytes, (unsigned long long)nbytes);
    return 0;
}

static bool out_type_ok(mf_dtype dt)
{
    return dt == MF_F32 || dt == MF_F16 || dt == MF_BF16;
}

typedef struct outbuf {
    uint8_t *p;
    size_t n;
    mf_sink_fn sink;
    void *ctx;
} outbuf;

static int flush(outbuf *o, mf_status *st)
{
    int rc = o->n ? o->sink(o->ctx, o->p, o->n, st) : 0;
    o->n = 0;
    return rc;
}

/* calc: the type the scales and biases are cast to and the arithmetic is
 * done in (q->dtype: as stored). */
static int dequantize_in(const mf_model *m, const mf_mlx_quant *q, mf_dtype calc, mf_dtype out,
                         mf_sink_fn sink, void *ctx, mf_status *st)
{
    if (out == MF_DTYPE_INVALID)
        out = q->dtype;
    if (!out_type_ok(out) || !out_type_ok(q->dtype) || !out_type_ok(calc) || q->bits < 1 ||
        q->bits > 8 ||
        q->group_size < 1 || q->ndim < 1)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1,
                       "MLX: cannot dequantize \"%s\" to %s", q->weight->name, mf_dtype_name(out));
    uint64_t in = (uint64_t)q->shape[q->ndim - 1], rows = 1;
    for (int i = 0; i < q->ndim - 1; i++)
        rows *= (uint64_t)q->shape[i]; /* bounded: the weight's bytes are mapped */
    uint64_t groups = in / (uint64_t)q->group_size, row_bytes = in * (uint64_t)q->bits / 8;
    size_t es = q->dtype == MF_F32 ? 4 : 2, os = out == MF_F32 ? 4 : 2;
    if (check_source(m, q->weight, rows * row_bytes, st) ||
        check_source(m, q->scales, rows * groups * es, st) ||
        check_source(m, q->biases, rows * groups * es, st))
        return -1;
    outbuf o = {malloc(CHUNK), 0, sink, ctx};
    if (!o.p)
        return mf_oom(st, m->path);
    int rc = 0;
    for (uint64_t r = 0; r < rows && rc == 0; r++) {
        const uint8_t *row = q->weight->data + r * row_bytes;
        const uint8_t *srow = q->scales->data + r * groups * es;
        const uint8_t *brow = q->biases->data + r * groups * es;
        for (uint64_t j = 0; j < in && rc == 0; j++) {
            uint64_t g = j / (uint64_t)q->group_size;
            float s = round_to(load_float(srow + g * es, q->dtype), calc);
            float b = round_to(load_float(brow + g * es, q->dtype), calc);
            float t = round_to(s * (float)mf_mlx_code_at(row, j, q->bits, row_bytes), calc);
            float w = round_to(t + b, calc);
            store(o.p + o.n, w, out);
            o.n += os;
            if (o.n + os > CHUNK)
                rc = flush(&o, st);
        }
    }
    if (rc == 0)
        rc = flush(&o, st);
    free(o.p);
    return rc;
}

int mf_mlx_dequantize(const mf_model *m, const mf_mlx_quant *q, mf_dtype out, mf_sink_fn sink,
                      void *ctx, mf_status *st)
{
    return dequantize_in(m, q, q->dtype, out, sink, ctx, st);
}

/* ------------------------------------------------------ the logical view */

typedef struct view_priv {
    const mf_model *src;
    bool cast_first; /* scales and biases cast to the view's type first */
} view_priv;

static int view_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                       mf_status *st)
{
    const view_priv *vp = m->priv;
    if (!t->priv)
        return mf_stream_mapped(m, t, sink, ctx, st);
    const mf_mlx_quant *q = t->priv;
    return dequantize_in(vp->src, q, vp->cast_first ? t->dtype : q->dtype, t->dtype, sink, ctx,
                         st);
}

static const mf_reader view_reader = {
    .format = MF_FMT_MLX,
    .stream = view_stream,
};

/* For each tensor of src: the triple whose weight it is, or a marker for
 * scales and biases (folded into their weight), or NULL. O(n). */
static const mf_mlx_quant folded;

static const mf_mlx_quant **roles_of(const mf_model *src, const mf_mlx_quant *q, size_t nq)
{
    const mf_mlx_quant **role = calloc(src->n_tensors ? src->n_tensors : 1, sizeof(*role));
    if (!role)
        return NULL;
    for (size_t i = 0; i < nq; i++) {
        role[q[i].weight - src->tensors] = &q[i];
        role[q[i].scales - src->tensors] = &folded;
        role[q[i].biases - src->tensors] = &folded;
    }
    return role;
}

static int add_view_tensor(mf_model *v, const mf_model *src, const mf_tensor *t,
                           const mf_mlx_quant *q, mf_dtype out, mf_status *st)
{
    mf_tensor *d = mf_model_add_tensor(v, st);
    if (!d)
        return -1;
    if (!q) {
        *d = *t;
        if (!d->owner)
            d->owner = src;
        return 0;
    }
    d->name = t->name;
    d->dtype = out == MF_DTYPE_INVALID ? q->dtype : out;
    d->ndim = q->ndim;
    memcpy(d->shape, q->shape, sizeof(d->shape[0]) * (size_t)q->ndim);
    d->priv = (void *)q;
    return mf_tensor_set_nbytes(d, v->path, -1, st);
}

static int make_view(const mf_model *src, mf_dtype out, bool cast_first, mf_model **view,
                     mf_status *st);

int mf_mlx_dequantized_view(const mf_model *src, mf_dtype out, mf_model **view, mf_status *st)
{
    return make_view(src, out, false, view, st);
}

int mf_mlx_cast_dequantized_view(const mf_model *src, mf_dtype cast, mf_model **view,
                                 mf_status *st)
{
    *view = NULL;
    const mf_mlx_quant *q;
    if (mf_mlx_quants(src, &q) == 0)
        return 0;
    return make_view(src, cast, cast != MF_DTYPE_INVALID, view, st);
}

static int make_view(const mf_model *src, mf_dtype out, bool cast_first, mf_model **view,
                     mf_status *st)
{
    *view = NULL;
    if (out != MF_DTYPE_INVALID && !out_type_ok(out))
        return mf_fail(st, MF_ERR_USAGE, src->path, -1,
                       "MLX weights dequantize to F32, F16 or BF16, not %s", mf_dtype_name(out));
    const mf_mlx_quant *q;
    size_t nq = mf_mlx_quants(src, &q);
    mf_model *v = mf_model_new(MF_FMT_MLX, src->path);
    view_priv *vp = v ? mf_arena_alloc(v->arena, sizeof(*vp)) : NULL;
    if (!vp) {
        mf_close(v);
        return mf_oom(st, src->path);
    }
    vp->src = src;
    vp->cast_first = cast_first;
    v->priv = vp;
    v->reader = &view_reader;
    snprintf(v->version, sizeof(v->version), "%.40s, dequantized", src->version);
    for (size_t i = 0; i < src->n_meta; i++) {
        mf_kv *kv = mf_model_add_meta(v, src->meta[i].key, st);
        if (!kv) {
            mf_close(v);
            return -1;
        }
        kv->v = src->meta[i].v; /* values stay in src's arena: src outlives the view */
        kv->offset = src->meta[i].offset;
    }
    const mf_mlx_quant **role = roles_of(src, q, nq);
    if (!role) {
        mf_close(v);
        return mf_oom(st, src->path);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < src->n_tensors; i++)
        if (role[i] != &folded)
            rc = add_view_tensor(v, src, &src->tensors[i], role[i], out, st);
    free(role);
    if (rc) {
        mf_close(v);
        return -1;
    }
    *view = v;
    return 0;
}

/* The reader's logical_view hook: a view only when something is packed. */
int mf_mlx_logical_view(const mf_model *m, mf_dtype out, mf_model **view, mf_status *st)
{
    const mf_mlx_quant *q;
    *view = NULL;
    if (mf_mlx_quants(m, &q) == 0)
        return 0;
    return mf_mlx_dequantized_view(m, out, view, st);
}
