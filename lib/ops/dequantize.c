/* dequantize.c - tensors to plain floats in safetensors (see dequantize.h).
 * Each tensor's canonical bytes stream through a converter that turns whole
 * blocks into F32 (ggml's to_float, or tensor_f32.c for F64 and the FP8
 * types) and then into the output dtype, so any
 * input layout works and memory stays at one batch of blocks. */
#include "formats/formats.h"
#include "ops/dequantize.h"

#include "ops/tensor_f32.h"
#include "quant/quant.h"
#include "core/json_build.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>

#define BATCH_VALUES 65536

/* The caller's progress callback, fed cumulative input bytes. */
typedef struct deq_progress {
    mf_progress_fn fn;
    void *user;
    uint64_t done, total;
    const char *path;
} deq_progress;

static int deq_progress_add(deq_progress *p, uint64_t bytes, mf_status *st)
{
    p->done += bytes;
    return mf_progress_report(p->fn, p->user, p->done, p->total, p->path, st);
}

typedef struct conv_sink {
    mf_dtype src, dst;
    uint32_t blk_elems, blk_bytes, out_size;
    uint8_t pending[512]; /* a block split across two incoming chunks */
    size_t pending_n;
    float *f32;
    uint8_t *out;
    size_t batch_blocks;
    mf_sink_fn down;
    void *down_ctx;
    const char *name;
    deq_progress *progress;
} conv_sink;

static int conv_blocks(conv_sink *c, const uint8_t *p, size_t nblk, mf_status *st)
{
    while (nblk) {
        size_t k = nblk < c->batch_blocks ? nblk : c->batch_blocks;
        int64_t n = (int64_t)(k * c->blk_elems);
        if (mf_convert_to_f32(c->src, p, c->f32, (uint64_t)n) ||
            mf_quantize_rows(c->dst, c->f32, c->out, 1, n, NULL))
            return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1, "tensor %s: cannot convert %s to %s",
                           c->name, mf_dtype_name(c->src), mf_dtype_name(c->dst));
        if (c->down(c->down_ctx, c->out, (size_t)n * c->out_size, st))
            return -1;
        if (deq_progress_add(c->progress, k * c->blk_bytes, st))
            return -1;
        p += k * c->blk_bytes;
        nblk -= k;
    }
    return 0;
}

static int conv_sink_fn(void *ctx, const void *buf, size_t n, mf_status *st)
{
    conv_sink *c = ctx;
    const uint8_t *p = buf;
    if (c->pending_n) {
        size_t take = c->blk_bytes - c->pending_n;
        if (take > n)
            take = n;
        memcpy(c->pending + c->pending_n, p, take);
        c->pending_n += take;
        p += take;
        n -= take;
        if (c->pending_n < c->blk_bytes)
            return 0;
        c->pending_n = 0;
        if (conv_blocks(c, c->pending, 1, st))
            return -1;
    }
    size_t whole = n / c->blk_bytes;
    if (conv_blocks(c, p, whole, st))
        return -1;
    c->pending_n = n - whole * c->blk_bytes;
    memcpy(c->pending, p + whole * c->blk_bytes, c->pending_n);
    return 0;
}

/* ------------------------------------------------------------ metadata */

static json_t *value_json(const mf_value *v)
{
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        return v->as.u > INT64_MAX ? json_real((double)v->as.u) : json_integer((json_int_t)v->as.u);
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64: return json_integer(v->as.i);
    case MF_V_F32: case MF_V_F64: return json_real(v->as.f);
    case MF_V_BOOL: return json_boolean(v->as.b);
    case MF_V_STR: return json_stringn(v->as.s.ptr, v->as.s.len); /* NULL if not UTF-8 */
    default: return NULL;
    }
}

/* A short array as JSON text; NULL when too long, nested or not encodable. */
static char *array_text(const mf_value *v)
{
    if (v->as.arr.n > MF_DEQUANT_MAX_META_ARRAY || v->as.arr.elem == MF_V_ARR)
        return NULL;
    json_t *a = json_array();
    for (size_t i = 0; a && i < v->as.arr.n; i++) {
        json_t *x = value_json(&v->as.arr.items[i]);
        if (!x || json_array_append_new(a, x)) {
            json_decref(a);
            return NULL;
        }
    }
    char *s = a ? mf_json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

bool mf_meta_value_text(const mf_value *v, char **out, size_t *len)
{
    char buf[64];
    *out = NULL;
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v->as.u);
        break;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        snprintf(buf, sizeof(buf), "%lld", (long long)v->as.i);
        break;
    case MF_V_F32: snprintf(buf, sizeof(buf), "%.9g", v->as.f); break;
    case MF_V_F64: snprintf(buf, sizeof(buf), "%.17g", v->as.f); break;
    case MF_V_BOOL: snprintf(buf, sizeof(buf), "%s", v->as.b ? "true" : "false"); break;
    case MF_V_STR:
        if (mf_utf8_check((const uint8_t *)v->as.s.ptr, v->as.s.len) >= 0 ||
            memchr(v->as.s.ptr, 0, v->as.s.len))
            return false; /* safetensors' header is JSON: UTF-8 text only */
        *out = strndup(v->as.s.ptr, v->as.s.len);
        *len = v->as.s.len;
        return *out != NULL;
    case MF_V_ARR:
        *out = array_text(v);
        *len = *out ? strlen(*out) : 0;
        return *out != NULL;
    default:
        return false;
    }
    *out = strdup(buf);
    *len = strlen(buf);
    return *out != NULL;
}

/* ------------------------------------------------------------ the run */

typedef struct deq_job {
    mf_model *m;
    mf_dtype dtype;
    mf_out_tensor *outs;
    mf_kv *meta;
    size_t n_meta;
    float *f32;
    uint8_t *out;
    deq_progress progress;
} deq_job;

static bool converts(const mf_tensor *t)
{
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    return di && (di->is_float || di->is_quant) && mf_dtype_to_f32_supported(t->dtype);
}

static int fill_cb(void *ctx, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    deq_job *j = ctx;
    const mf_tensor *t = &j->m->tensors[i];
    /* already the output dtype (a logical view made in it): as it is */
    if (!converts(t) || t->dtype == j->dtype) {
        int rc = mf_tensor_stream(j->m, t, sink, sink_ctx, st);
        if (rc == 0)
            rc = deq_progress_add(&j->progress, t->nbytes, st);
        return rc;
    }
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    conv_sink c = {0};
    c.src = t->dtype;
    c.dst = j->dtype;
    c.blk_elems = di->block_elems;
    c.blk_bytes = di->block_bytes;
    c.out_size = mf_dtype_info_of(j->dtype)->block_bytes;
    c.f32 = j->f32;
    c.out = j->out;
    c.batch_blocks = BATCH_VALUES / c.blk_elems;
    c.down = sink;
    c.down_ctx = sink_ctx;
    c.name = t->name;
    c.progress = &j->progress;
    if (mf_tensor_stream(j->m, t, conv_sink_fn, &c, st))
        return -1;
    if (c.pending_n)
        return mf_fail(st, MF_ERR_FORMAT, j->m->path, -1, "tensor %s ends inside a block", t->name);
    return 0;
}

static int make_meta(deq_job *j, mf_dequantize_result *r, mf_status *st)
{
    j->meta = calloc(j->m->n_meta ? j->m->n_meta : 1, sizeof(mf_kv));
    if (!j->meta)
        return mf_oom(st, j->m->path);
    for (size_t i = 0; i < j->m->n_meta; i++) {
        char *text;
        size_t len;
        if (!mf_meta_value_text(&j->m->meta[i].v, &text, &len)) {
            r->meta_skipped++;
            continue;
        }
        mf_kv *kv = &j->meta[j->n_meta++];
        kv->key = j->m->meta[i].key;
        kv->v.type = MF_V_STR;
        kv->v.as.s.ptr = text;
        kv->v.as.s.len = len;
        r->meta_kept++;
    }
    return 0;
}

static int make_outs(deq_job *j, mf_dequantize_result *r, mf_status *st)
{
    j->outs = calloc(j->m->n_tensors ? j->m->n_tensors : 1, sizeof(mf_out_tensor));
    if (!j->outs)
        return mf_oom(st, j->m->path);
    for (size_t i = 0; i < j->m->n_tensors; i++) {
        const mf_tensor *t = &j->m->tensors[i];
        mf_out_tensor *o = &j->outs[i];
        o->name = t->name;
        o->ndim = t->ndim;
        memcpy(o->shape, t->shape, sizeof(o->shape));
        o->dtype = converts(t) ? j->dtype : t->dtype;
        if (converts(t))
            r->n_converted++;
        else
            r->n_copied++;
        uint64_t b;
        if (mf_dtype_nbytes(o->dtype, mf_tensor_nelems(t), &b) == 0)
            r->out_bytes += b;
    }
    r->n_tensors = j->m->n_tensors;
    return 0;
}

void mf_dequantize_opts_init(mf_dequantize_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->dtype = MF_F32;
}

int mf_dequantize_file(const char *in_path, const char *out_path,
                       const mf_dequantize_opts *opts, mf_dequantize_result *res,
                       mf_status *st)
{
    MF_ST_GUARD(st);
    mf_dequantize_opts o;
    mf_dequantize_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_dequantize_opts", st))
        return -1;
    mf_dtype dtype = o.dtype;
    mf_dequantize_result dummy;
    mf_dequantize_result *r = res ? res : &dummy;
    memset(r, 0, sizeof(*r));
    if (dtype != MF_F32 && dtype != MF_F16 && dtype != MF_BF16)
        return mf_fail(st, MF_ERR_USAGE, out_path, -1, "dequantize writes F32, F16 or BF16");
    deq_job j = {0};
    j.dtype = dtype;
    j.progress = (deq_progress){o.progress, o.progress_user, 0, 0, in_path};
    if (mf_open_model(in_path, 0, &j.m, st))
        return -1;
    if (mf_output_check(j.m, out_path, st)) {
        mf_close(j.m);
        return -1;
    }
    /* packed weights (MLX triples, GPTQ/AWQ/FP8/... checkpoints) are
     * written as their logical tensors, dequantized a tensor at a time */
    mf_model *stored = j.m, *view = NULL;
    if (mf_model_logical_view_as(stored, dtype, &view, st)) {
        mf_close(stored);
        return -1;
    }
    if (view)
        j.m = view;
    for (size_t i = 0; i < j.m->n_tensors; i++)
        j.progress.total += j.m->tensors[i].nbytes;
    j.f32 = malloc(BATCH_VALUES * sizeof(float));
    j.out = malloc(BATCH_VALUES * sizeof(float));
    int rc = !j.f32 || !j.out ? mf_oom(st, in_path) : 0;
    if (rc == 0)
        rc = make_meta(&j, r, st);
    if (rc == 0)
        rc = make_outs(&j, r, st);
    if (rc == 0)
        rc = mf_safetensors_write(out_path, j.outs, j.m->n_tensors, j.meta, j.n_meta, fill_cb, &j, st);
    for (size_t i = 0; i < j.n_meta; i++)
        free((void *)j.meta[i].v.as.s.ptr);
    free(j.meta);
    free(j.outs);
    free(j.f32);
    free(j.out);
    if (view)
        mf_close(view);
    mf_close(stored);
    return rc;
}
