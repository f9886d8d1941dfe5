/* quantize.c - GGUF quantization driver (see quantize.h).
 *
 * Follows llama.cpp's llama_model_quantize_impl (src/llama-quant.cpp,
 * c392e509): tensors in its order (mf_qmix_name_cmp), a type per tensor
 * from the mix, F16/BF16 (or, with --allow-requantize, quantized) rows
 * converted to F32 and quantized by ggml's reference kernels with the
 * tensor's importance vector; metadata copied, then general.quantization_version
 * and general.file_type set and the quantize.imatrix.* keys added. */
#include "formats/formats.h"
#include "ops/quantize.h"

#include "ops/imatrix.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rows are converted and quantized in chunks of about this many values
 * (16 MiB of F32), so peak memory does not grow with the tensor. */
#define CHUNK_VALUES (4u << 20)
#define GGML_QNT_VERSION 2
/* llama-quantize copies override strings into a 128-byte buffer */
#define KV_OVERRIDE_STR_MAX 127
/* llama_model_loader marks a file type it inferred from the tensors */
#define LLAMA_FTYPE_GUESSED 1024u

typedef struct qplan {
    const mf_tensor *t;
    int64_t ne[4];
    mf_dtype dst;
    bool convert, fallback;
    const float *imatrix; /* ne[0] * ne[2] values, or NULL */
    uint64_t out_bytes;
} qplan;

typedef MF_VEC(mf_kv) kv_vec;

/* One output file: --keep-split writes one per input file. */
typedef struct qshard {
    size_t first, n;   /* its tensors: plan[first .. first + n) */
    kv_vec meta;       /* shard 0: the copied keys (+ split.*); others: split.* only */
    char *path;        /* in the arena */
} qshard;

typedef struct qjob {
    const mf_quantize_opts *o;
    mf_model *m;
    mf_imatrix *im;
    qplan *plan;       /* output order */
    size_t n;
    kv_vec meta;
    mf_out_tensor *outs;
    mf_arena *arena;
    mf_quant_report_fn on_tensor;
    void *ctx;
    mf_quantize_result *res;
    float *f32, *deq;  /* chunk buffers */
    uint8_t *qbuf;
    /* row_sink's buffers, kept from tensor to tensor: fresh pages cost a
     * fault each on first write (on a virtual machine with shadow paging,
     * more than the conversion itself: half of an F16 -> BF16 run) */
    uint8_t *sink_raw[2], *sink_q[2];
    size_t sink_raw_cap, sink_q_cap;
    size_t cap_vals, cap_q;
    mf_quantize_opts opts;  /* the caller's, over the defaults */
    uint64_t done, total;   /* input tensor bytes, for progress */
    uint32_t file_type;     /* general.file_type written */
    qshard *shards;         /* output files (one unless keep_split) */
    size_t n_shards;
} qjob;

static int job_progress(qjob *j, uint64_t bytes, mf_status *st)
{
    j->done += bytes;
    return mf_progress_report(j->o->progress, j->o->progress_user, j->done, j->total,
                              j->m ? j->m->path : NULL, st);
}

void mf_quantize_opts_init(mf_quantize_opts *o, mf_ftype ftype)
{
    memset(o, 0, sizeof(*o));
    o->ftype = ftype;
    o->nthreads = 1;
    o->output_type = MF_DTYPE_INVALID;
    o->token_embd_type = MF_DTYPE_INVALID;
    o->struct_size = sizeof(*o);
}

/* ------------------------------------------------------------ the plan */

/* ggml_n_dims: llama-quantize writes a tensor's shape from the ggml tensor,
 * so outer dimensions of 1 (trailing ne == 1) are dropped, at least one kept. */
static int ggml_ndims(const mf_tensor *t)
{
    int n = t->ndim;
    while (n > 1 && t->shape[t->ndim - n] == 1)
        n--;
    return n;
}

static int ggml_shape(const mf_model *m, const mf_tensor *t, int64_t ne[4], mf_status *st)
{
    if (t->ndim > 4)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor %s has %d dimensions (GGUF: 4 at most)",
                       t->name, t->ndim);
    for (int i = 0; i < 4; i++)
        ne[i] = i < t->ndim ? t->shape[t->ndim - 1 - i] : 1;
    return 0;
}

static bool is_plain_float(mf_dtype dt) { return dt == MF_F32 || dt == MF_F16 || dt == MF_BF16; }

/* Can the source rows be turned into F32? Quantized ones only when asked:
 * quantization levels do not convert into each other without loss. */
static int check_source(const qjob *j, const qplan *p, mf_status *st)
{
    mf_dtype src = p->t->dtype;
    const mf_dtype_info *di = mf_dtype_info_of(src);
    if (is_plain_float(src))
        return 0;
    if (di && di->is_quant) {
        if (!j->o->allow_requantize)
            return mf_fail(st, MF_ERR_UNSUPPORTED, j->m->path, -1,
                           "tensor %s is already quantized (%s): quantization levels do not "
                           "convert into each other (%s is not a superset of %s; requantizing "
                           "adds the second loss to the first). Quantize from the F16/BF16/F32 "
                           "source instead, or pass --allow-requantize",
                           p->t->name, mf_dtype_name(src), mf_dtype_name(src), mf_dtype_name(p->dst));
        if (mf_can_dequantize(src))
            return 0;
    }
    return mf_fail(st, MF_ERR_UNSUPPORTED, j->m->path, -1, "tensor %s: cannot convert %s to %s",
                   p->t->name, mf_dtype_name(src), mf_dtype_name(p->dst));
}

/* The tensor's importance vector, as llama-quantize looks it up. */
static int find_imatrix(const qjob *j, qplan *p, mf_status *st)
{
    const mf_imatrix_entry *e = mf_imatrix_find(j->im, p->t->name);
    if (!e)
        return 0;
    if (e->n == (size_t)(p->ne[0] * p->ne[2])) {
        p->imatrix = e->values;
        return 0;
    }
    /* token_embd never has a valid entry (llama-imatrix does not see it) */
    if (strcmp(p->t->name, "token_embd.weight") == 0)
        return 0;
    return mf_fail(st, MF_ERR_FORMAT, j->o->imatrix_path, -1,
                   "imatrix entry for %s has %zu values, the tensor needs %lld", p->t->name, e->n,
                   (long long)(p->ne[0] * p->ne[2]));
}

/* llama-quantize refuses the lowest-bit types without importance data. */
static int check_imatrix_need(const qjob *j, const qplan *p, mf_status *st)
{
    mf_dtype d = p->dst;
    const char *nm = p->t->name;
    bool emb = strcmp(nm, "token_embd.weight") == 0, out = strcmp(nm, "output.weight") == 0;
    bool need = d == MF_IQ2_XXS || d == MF_IQ2_XS || d == MF_IQ2_S || d == MF_IQ1_S ||
                (d == MF_IQ1_M && !emb && !out) ||
                (d == MF_Q2_K && j->o->ftype == MF_FTYPE_Q2_K_S && !emb) ||
                mf_quant_requires_imatrix(d);
    if (need && !p->imatrix)
        return mf_fail(st, MF_ERR_USAGE, j->m->path, -1,
                       "missing importance matrix for tensor %s in a very low-bit quantization "
                       "(%s): the result would be garbage; pass --imatrix", nm, mf_dtype_name(d));
    return 0;
}

static int plan_one(qjob *j, mf_qmix *q, const mf_tensor *t, qplan *p, mf_status *st)
{
    p->t = t;
    if (ggml_shape(j->m, t, p->ne, st))
        return -1;
    /* COPY: llama-quantize's only_copy turns every tensor's quantize off */
    p->dst = j->o->only_copy ? t->dtype : mf_qmix_choose(q, t->name, p->ne, t->dtype, &p->fallback, st);
    if (p->dst == MF_DTYPE_INVALID)
        return -1;
    p->convert = p->dst != t->dtype;
    if (!p->convert) {
        p->out_bytes = t->nbytes;
        return 0;
    }
    if (check_source(j, p, st))
        return -1;
    if (!mf_can_quantize(p->dst))
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1,
                       "tensor %s: mfmt cannot quantize to %s yet", t->name, mf_dtype_name(p->dst));
    if (find_imatrix(j, p, st) || check_imatrix_need(j, p, st))
        return -1;
    if (mf_dtype_nbytes(p->dst, mf_tensor_nelems(t), &p->out_bytes))
        return mf_fail(st, MF_ERR_FORMAT, j->m->path, -1, "tensor %s: size overflows", t->name);
    return 0;
}

typedef struct order_item {
    const mf_tensor *t;
    size_t index;
} order_item;

static int order_cmp(const void *a, const void *b)
{
    const order_item *x = a, *y = b;
    int c = mf_qmix_name_cmp(x->t->name, y->t->name);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

/* --keep-split: llama-quantize sorts the weights by the file they are in
 * (split index), then by their offset there */
static int split_order_cmp(const void *a, const void *b)
{
    const order_item *x = a, *y = b;
    if (x->t->file != y->t->file)
        return x->t->file < y->t->file ? -1 : 1;
    if (x->t->offset != y->t->offset)
        return x->t->offset < y->t->offset ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* llama_model_loader's table from the most common tensor type to a file type */
static uint32_t ftype_of_dtype(mf_dtype d)
{
    switch (d) {
    case MF_F16: return MF_FTYPE_F16;
    case MF_BF16: return MF_FTYPE_BF16;
    case MF_Q4_0: return MF_FTYPE_Q4_0;
    case MF_Q4_1: return MF_FTYPE_Q4_1;
    case MF_Q5_0: return MF_FTYPE_Q5_0;
    case MF_Q5_1: return MF_FTYPE_Q5_1;
    case MF_Q8_0: return MF_FTYPE_Q8_0;
    case MF_Q2_K: return MF_FTYPE_Q2_K;
    case MF_Q3_K: return MF_FTYPE_Q3_K_M;
    case MF_Q4_K: return MF_FTYPE_Q4_K_M;
    case MF_Q5_K: return MF_FTYPE_Q5_K_M;
    case MF_Q6_K: return MF_FTYPE_Q6_K;
    case MF_TQ1_0: return MF_FTYPE_TQ1_0;
    case MF_TQ2_0: return MF_FTYPE_TQ2_0;
    case MF_IQ2_XXS: return MF_FTYPE_IQ2_XXS;
    case MF_IQ2_XS: return MF_FTYPE_IQ2_XS;
    case MF_IQ2_S: return MF_FTYPE_IQ2_S;
    case MF_IQ3_XXS: return MF_FTYPE_IQ3_XXS;
    case MF_IQ1_S: return MF_FTYPE_IQ1_S;
    case MF_IQ1_M: return MF_FTYPE_IQ1_M;
    case MF_IQ4_NL: return MF_FTYPE_IQ4_NL;
    case MF_IQ4_XS: return MF_FTYPE_IQ4_XS;
    case MF_IQ3_S: return MF_FTYPE_IQ3_S;
    /* llama_model_loader b10256 guesses these three; MXFP4 is not guessed */
    case MF_NVFP4: return MF_FTYPE_NVFP4;
    case MF_Q1_0: return MF_FTYPE_Q1_0;
    case MF_Q2_0: return MF_FTYPE_Q2_0;
    default: return MF_FTYPE_ALL_F32; /* F32, and the types it does not know */
    }
}

/* COPY writes the input's file type as llama_model_loader reads it: its
 * general.file_type (gguf_get_val_u32: any other type stops llama.cpp), else
 * the type most tensors have, counted in the loader's (name) order, the
 * first to reach the highest count winning, marked "guessed". */
static int input_file_type(qjob *j, const order_item *ord, mf_status *st)
{
    const mf_value *v = mf_meta_get(j->m, "general.file_type");
    if (v) {
        if (v->type != MF_V_U32)
            return mf_fail(st, MF_ERR_FORMAT, j->m->path, -1,
                           "general.file_type is not a uint32; llama.cpp reads it as one (and "
                           "stops on any other type), so COPY cannot tell the input's file type");
        j->file_type = (uint32_t)v->as.u;
        return 0;
    }
    enum { N_COUNTED = 64 };
    uint32_t count[N_COUNTED] = {0}, best = 0;
    mf_dtype best_type = MF_F32;
    for (size_t i = 0; i < j->n; i++) {
        mf_dtype d = ord[i].t->dtype;
        if ((unsigned)d >= N_COUNTED)
            continue; /* not a ggml type: a GGUF reader refuses it before this */
        if (++count[d] > best) {
            best = count[d];
            best_type = d;
        }
    }
    j->file_type = ftype_of_dtype(best_type) | LLAMA_FTYPE_GUESSED;
    return 0;
}

static int make_plan(qjob *j, mf_status *st)
{
    mf_qmix_params mp;
    mf_qmix_params_init(&mp, j->o->ftype);
    mp.pure = j->o->pure;
    mp.leave_output = j->o->leave_output;
    mp.has_imatrix = j->im && j->im->n_entries > 0;
    mp.output_type = j->o->output_type;
    mp.token_embd_type = j->o->token_embd_type;
    mp.rules = j->o->mix_rules;
    mf_qmix_hparams h;
    mf_qmix_hparams_from_model(j->m, &h);
    mf_qmix q;
    mf_qmix_init(&q, &mp, &h);
    j->n = j->m->n_tensors;
    order_item *ord = mf_arena_calloc(j->arena, j->n ? j->n : 1, sizeof(*ord));
    j->plan = mf_arena_calloc(j->arena, j->n ? j->n : 1, sizeof(qplan));
    if (!ord || !j->plan)
        return mf_oom(st, j->m->path);
    for (size_t i = 0; i < j->n; i++) {
        ord[i] = (order_item){&j->m->tensors[i], i};
        mf_qmix_count(&q, j->m->tensors[i].name);
    }
    /* llama-quantize visits (and writes) the tensors in this order; the
     * attn_v and ffn_down rules count along it */
    qsort(ord, j->n, sizeof(*ord), order_cmp);
    if (j->o->only_copy && input_file_type(j, ord, st))
        return -1;
    if (j->o->keep_split)
        qsort(ord, j->n, sizeof(*ord), split_order_cmp);
    for (size_t i = 0; i < j->n; i++)
        if (plan_one(j, &q, ord[i].t, &j->plan[i], st))
            return -1;
    j->res->n_fallback = (size_t)q.n_fallback;
    j->res->n_k_quantized = (size_t)q.n_k_quantized;
    return 0;
}

/* ------------------------------------------------------------ metadata */

/* gguf_set_val_*: an existing key is removed and the new one appended. */
static int kv_set(kv_vec *v, const char *key, mf_value val)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i].key, key) == 0) {
            memmove(&v->v[i], &v->v[i + 1], (v->n - i - 1) * sizeof(mf_kv));
            v->n--;
            break;
        }
    mf_kv kv = {key, val, 0};
    return MF_VEC_PUSH(*v, kv);
}

static void kv_remove(kv_vec *v, const char *key)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i].key, key) == 0) {
            memmove(&v->v[i], &v->v[i + 1], (v->n - i - 1) * sizeof(mf_kv));
            v->n--;
            return;
        }
}

static mf_value typed_uint(mf_vtype t, uint64_t u)
{
    mf_value v = mf_value_uint(u);
    v.type = t;
    return v;
}

/* One --override-kv as llama.cpp's string_parse_kv_override reads it. */
static int parse_override(qjob *j, const char *text, const char **key, mf_value *v,
                          mf_status *st)
{
    const char *eq = text ? strchr(text, '=') : NULL;
    if (!eq || eq - text >= 128 || eq == text)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "--override-kv: malformed KV override '%s'",
                       text ? text : "");
    *key = mf_arena_printf(j->arena, "%.*s", (int)(eq - text), text);
    const char *val = eq + 1;
    if (!strncmp(val, "int:", 4)) {
        *v = mf_value_int((int32_t)strtol(val + 4, NULL, 10)); /* atol, then int32 as gguf_set_val_i32 */
        v->type = MF_V_I32;
    } else if (!strncmp(val, "float:", 6)) {
        v->type = MF_V_F32;
        v->as.f = (double)(float)strtod(val + 6, NULL);
    } else if (!strncmp(val, "bool:", 5)) {
        if (strcmp(val + 5, "true") && strcmp(val + 5, "false"))
            return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                           "--override-kv: invalid boolean value for KV override '%s'", text);
        *v = mf_value_bool(!strcmp(val + 5, "true"));
    } else if (!strncmp(val, "str:", 4)) {
        if (strlen(val + 4) > 127)
            return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                           "--override-kv: malformed KV override '%s', value cannot exceed 127 chars",
                           text);
        *v = mf_value_str(j->arena, val + 4, strlen(val + 4));
    } else {
        return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                       "--override-kv: invalid type for KV override '%s' (int:, float:, bool:, str:)",
                       text);
    }
    return *key ? 0 : mf_oom(st, NULL);
}

static int build_meta(qjob *j, mf_status *st)
{
    kv_vec *v = &j->meta;
    int rc = 0;
    for (size_t i = 0; i < j->m->n_meta && rc == 0; i++)
        rc = MF_VEC_PUSH(*v, j->m->meta[i]);
    rc = rc || kv_set(v, "general.quantization_version", typed_uint(MF_V_U32, GGML_QNT_VERSION));
    rc = rc || kv_set(v, "general.file_type", typed_uint(MF_V_U32, j->file_type));
    /* the output is one file */
    kv_remove(v, "split.no");
    kv_remove(v, "split.count");
    kv_remove(v, "split.tensors.count");
    for (size_t i = 0; rc == 0 && i < j->o->n_kv_overrides; i++) {
        const char *key = NULL;
        mf_value val = {0};
        if (parse_override(j, j->o->kv_overrides[i], &key, &val, st))
            return -1;
        rc = kv_set(v, key, val);
    }
    if (rc == 0 && j->im && j->im->n_entries) {
        /* llama-quantize passes these as KV overrides (strings cut at 127
         * bytes, integers as int32) */
        const char *f = j->o->imatrix_path;
        size_t fl = strnlen(f, KV_OVERRIDE_STR_MAX);
        rc = kv_set(v, "quantize.imatrix.file", mf_value_str(j->arena, f, fl));
        if (rc == 0 && j->im->dataset) {
            size_t dl = strnlen(j->im->dataset, KV_OVERRIDE_STR_MAX);
            rc = kv_set(v, "quantize.imatrix.dataset", mf_value_str(j->arena, j->im->dataset, dl));
        }
        mf_value n = mf_value_int((int64_t)j->im->n_entries);
        n.type = MF_V_I32;
        rc = rc || kv_set(v, "quantize.imatrix.entries_count", n);
        if (rc == 0 && j->im->chunks > 0) {
            mf_value c = mf_value_int(j->im->chunks);
            c.type = MF_V_I32;
            rc = kv_set(v, "quantize.imatrix.chunks_count", c);
        }
    }
    return rc ? mf_oom(st, j->m->path) : 0;
}

/* ---------------------------------------------------- output file size */

static uint64_t value_bytes(const mf_value *v)
{
    switch (v->type) {
    case MF_V_U8: case MF_V_I8: case MF_V_BOOL: return 1;
    case MF_V_U16: case MF_V_I16: return 2;
    case MF_V_U32: case MF_V_I32: case MF_V_F32: return 4;
    case MF_V_U64: case MF_V_I64: case MF_V_F64: return 8;
    case MF_V_STR: return 8 + v->as.s.len;
    case MF_V_ARR: {
        uint64_t n = 4 + 8;
        for (size_t i = 0; i < v->as.arr.n; i++)
            n += value_bytes(&v->as.arr.items[i]);
        return n;
    }
    default: return 0;
    }
}

static uint64_t out_alignment(const kv_vec *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i].key, "general.alignment") == 0 && v->v[i].v.type == MF_V_U32 &&
            v->v[i].v.as.u && !(v->v[i].v.as.u & (v->v[i].v.as.u - 1)))
            return v->v[i].v.as.u;
    return 32;
}

/* The size of the GGUF v3 file llama-quantize writes: header (KVs, tensor
 * infos) padded to the alignment, each tensor padded, the last too. */
static uint64_t gguf_file_bytes(const qjob *j, const qshard *s)
{
    uint64_t n = 4 + 4 + 8 + 8, align = out_alignment(&s->meta);
    for (size_t i = 0; i < s->meta.n; i++)
        n += 8 + strlen(s->meta.v[i].key) + 4 + value_bytes(&s->meta.v[i].v);
    for (size_t i = s->first; i < s->first + s->n; i++)
        n += 8 + strlen(j->plan[i].t->name) + 4 + 8 * (uint64_t)ggml_ndims(j->plan[i].t) + 4 + 8;
    n = mf_align_up(n, align);
    for (size_t i = s->first; i < s->first + s->n; i++)
        n += mf_align_up(j->plan[i].out_bytes, align);
    return n;
}

/* ------------------------------------------------------- output files */

/* llama_split_path: PREFIX-%05d-of-%05d.gguf, the prefix being OUT less the
 * ".gguf" that llama-quantize's command line drops for --keep-split */
static char *shard_path(qjob *j, const char *out, size_t s, size_t n)
{
    size_t len = strlen(out);
    if (len >= 5 && strcmp(out + len - 5, ".gguf") == 0)
        len -= 5;
    return mf_arena_printf(j->arena, "%.*s-%05zu-of-%05zu.gguf", (int)len, out, s + 1, n);
}

/* The split keys llama-quantize sets in every output file when there are
 * several: split.no and split.count as u16, split.tensors.count as i32 (all
 * tensors of the set), appended after the copied keys. */
static int add_split_keys(const qjob *j, kv_vec *v, size_t s)
{
    mf_value total = mf_value_int((int64_t)j->n);
    total.type = MF_V_I32;
    return kv_set(v, "split.no", typed_uint(MF_V_U16, s)) ||
           kv_set(v, "split.count", typed_uint(MF_V_U16, j->n_shards)) ||
           kv_set(v, "split.tensors.count", total);
}

/* One output file, or with keep_split one per input file (llama-quantize:
 * "assume split index is continuous", their count the highest index + 1),
 * each holding the tensors of its input file. */
static int make_shards(qjob *j, const char *out_path, mf_status *st)
{
    size_t n = 1;
    for (size_t i = 0; j->o->keep_split && i < j->n; i++)
        if (j->plan[i].t->file + (size_t)1 > n)
            n = j->plan[i].t->file + (size_t)1;
    if (n > 65535)
        return mf_fail(st, MF_ERR_FORMAT, j->m->path, -1, "%zu files: split.count is a u16", n);
    j->shards = mf_arena_calloc(j->arena, n, sizeof(qshard));
    if (!j->shards)
        return mf_oom(st, j->m->path);
    j->n_shards = n;
    for (size_t i = 0; i < j->n; i++) {
        qshard *s = &j->shards[j->o->keep_split ? j->plan[i].t->file : 0];
        if (s->n == 0)
            s->first = i;
        s->n++; /* the plan is in file order: each file's tensors are contiguous */
    }
    for (size_t s = 0; s < n; s++) {
        qshard *q = &j->shards[s];
        int rc = 0;
        for (size_t i = 0; s == 0 && i < j->meta.n && rc == 0; i++)
            rc = MF_VEC_PUSH(q->meta, j->meta.v[i]);
        if (rc || (n > 1 && add_split_keys(j, &q->meta, s)))
            return mf_oom(st, j->m->path);
        if (out_path && j->o->keep_split) {
            q->path = shard_path(j, out_path, s, n);
            if (!q->path)
                return mf_oom(st, j->m->path);
        } else {
            q->path = (char *)out_path;
        }
        if (mf_output_check(j->m, q->path, st) || mf_output_check_path(j->o->imatrix_path, q->path, st))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------- conversions */

static int ensure_buffers(qjob *j, size_t vals, size_t qbytes, mf_status *st)
{
    if (vals > j->cap_vals) {
        float *a = realloc(j->f32, vals * sizeof(float));
        if (!a)
            return mf_oom(st, j->m->path);
        j->f32 = a;
        float *b = realloc(j->deq, vals * sizeof(float));
        if (!b)
            return mf_oom(st, j->m->path);
        j->deq = b;
        j->cap_vals = vals;
    }
    if (qbytes > j->cap_q) {
        uint8_t *q = realloc(j->qbuf, qbytes);
        if (!q)
            return mf_oom(st, j->m->path);
        j->qbuf = q;
        j->cap_q = qbytes;
    }
    return 0;
}

/* Error statistics of a dry run, accumulated over chunks. */
typedef struct err_acc {
    double se, max_abs, xy, xx, yy;
    uint64_t n;
    bool nonfinite;
} err_acc;

static void err_add(err_acc *a, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)y[i];
        a->se += d * d;
        if (fabs(d) > a->max_abs || isnan(d))
            a->max_abs = fabs(d);
        a->xy += (double)x[i] * y[i];
        a->xx += (double)x[i] * x[i];
        a->yy += (double)y[i] * y[i];
    }
    a->n += n;
}

static void err_finish(const err_acc *a, mf_quant_tensor_report *r)
{
    r->nonfinite = a->nonfinite;
    r->rmse = a->n ? sqrt(a->se / (double)a->n) : 0;
    r->max_abs = a->max_abs;
    if (a->xx == 0 && a->yy == 0)
        r->cosine = 1; /* both all zero: identical */
    else if (a->xx == 0 || a->yy == 0)
        r->cosine = 0;
    else
        r->cosine = a->xy / (sqrt(a->xx) * sqrt(a->yy));
}

/* ggml_validate_row_data, as llama-quantize applies it to what it writes:
 * no NaN or infinite scale (or value, for the float types). A block's values
 * are finite exactly when its scales are, so the dry run's dequantized rows
 * tell the same. */
static int64_t first_nonfinite_row(const float *y, int64_t rows, int64_t ne0)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < ne0; i++)
            if (!isfinite(y[r * ne0 + i]))
                return r;
    return -1;
}

static int invalid_output(const qjob *j, const qplan *p, int64_t row, mf_status *st)
{
    return mf_fail(st, MF_ERR_FORMAT, j->m->path, -1,
                   "tensor %s, row %lld: the %s data holds NaN or infinity (from the input "
                   "values or an overflowing scale); llama-quantize refuses such output "
                   "(\"quantized data validation failed\") and so does mfmt",
                   p->t->name, (long long)row, mf_dtype_name(p->dst));
}

/* The dry run: converts and quantizes `rows` rows of one matrix, then
 * dequantizes them again for the error statistics. */
static int dry_run_chunk(qjob *j, const qplan *p, const uint8_t *src, int64_t rows, const float *imat,
                         err_acc *acc, mf_status *st)
{
    int64_t ne0 = p->ne[0];
    size_t vals = (size_t)(rows * ne0);
    uint64_t qbytes;
    mf_dtype_nbytes(p->dst, (uint64_t)vals, &qbytes); /* checked by the plan */
    if (ensure_buffers(j, vals, (size_t)qbytes, st))
        return -1;
    if (mf_dequantize_row(p->t->dtype, src, j->f32, (int64_t)vals))
        return mf_fail(st, MF_ERR_UNSUPPORTED, j->m->path, -1, "tensor %s: cannot read %s rows",
                       p->t->name, mf_dtype_name(p->t->dtype));
    if (mf_quantize_rows_mt(p->dst, j->f32, j->qbuf, rows, ne0, imat, j->o->nthreads))
        return mf_fail(st, MF_ERR_UNSUPPORTED, j->m->path, -1, "tensor %s: quantizing to %s failed",
                       p->t->name, mf_dtype_name(p->dst));
    if (mf_dequantize_row(p->dst, j->qbuf, j->deq, (int64_t)vals))
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1, "cannot dequantize %s", mf_dtype_name(p->dst));
    acc->nonfinite |= first_nonfinite_row(j->deq, rows, ne0) >= 0;
    err_add(acc, j->f32, j->deq, vals);
    return 0;
}

/* The source rows are gathered into chunks of whole rows that never cross a
 * matrix (experts, ne[2], each have their own imatrix slice): straight from
 * the mapping when the tensor is stored plainly, else from mf_tensor_stream
 * (any layout, byte order handled) into one of two buffers. Writing runs
 * one chunk behind: chunk k is quantized on the worker threads while the
 * caller validates and writes chunk k-1. */
typedef struct pending {
    mf_quant_task *task; /* NULL: none */
    int64_t rows, row0;
    int slot;
} pending;

typedef struct row_sink {
    qjob *j;
    const qplan *p;
    uint8_t *raw[2];   /* gathered source rows (the streamed path) */
    uint8_t *q[2];     /* quantized output */
    int slot;          /* the buffers the next chunk uses */
    uint64_t row_bytes, have;
    int64_t chunk_rows, row_in_mat, mat;
    mf_sink_fn sink;
    void *sink_ctx;
    err_acc *acc;      /* the dry run (synchronous) */
    pending pend;      /* the chunk being quantized */
} row_sink;

static int64_t rows_wanted(const row_sink *r)
{
    int64_t left = r->p->ne[1] - r->row_in_mat;
    return left < r->chunk_rows ? left : r->chunk_rows;
}

/* Waits for a chunk being quantized, validates and writes it. */
static int finish_pending(row_sink *r, pending *c, mf_status *st)
{
    if (!c->task)
        return 0;
    qjob *j = r->j;
    const qplan *p = r->p;
    int rc = mf_quant_task_wait(c->task);
    c->task = NULL;
    if (rc)
        return mf_fail(st, MF_ERR_UNSUPPORTED, j->m->path, -1, "tensor %s: quantizing to %s failed",
                       p->t->name, mf_dtype_name(p->dst));
    int64_t bad = mf_quant_first_invalid_row(p->dst, r->q[c->slot], c->rows, p->ne[0]);
    if (bad >= 0)
        return invalid_output(j, p, c->row0 + bad, st);
    uint64_t qbytes;
    mf_dtype_nbytes(p->dst, (uint64_t)(c->rows * p->ne[0]), &qbytes); /* checked by the plan */
    if (r->sink && r->sink(r->sink_ctx, r->q[c->slot], (size_t)qbytes, st))
        return -1;
    return job_progress(j, (uint64_t)c->rows * r->row_bytes, st);
}

/* Starts quantizing a chunk into the next output buffer, then finishes the
 * previous one (the one before it in the same buffer is done by then). */
static int pipeline_chunk(row_sink *r, const uint8_t *src, int64_t rows, const float *imat, int64_t row0,
                          mf_status *st)
{
    qjob *j = r->j;
    const qplan *p = r->p;
    pending prev = r->pend;
    r->pend = (pending){NULL, rows, row0, r->slot};
    if (mf_quant_task_start(&r->pend.task, p->dst, p->t->dtype, src, r->q[r->slot], rows, p->ne[0], imat,
                            j->o->nthreads)) {
        mf_quant_task_wait(prev.task);
        return mf_fail(st, MF_ERR_UNSUPPORTED, j->m->path, -1, "tensor %s: cannot quantize %s rows to %s",
                       p->t->name, mf_dtype_name(p->t->dtype), mf_dtype_name(p->dst));
    }
    r->slot ^= 1;
    return finish_pending(r, &prev, st);
}

/* One chunk of rows is complete at src. */
static int flush_rows(row_sink *r, const uint8_t *src, int64_t rows, mf_status *st)
{
    const qplan *p = r->p;
    const float *imat = p->imatrix ? p->imatrix + (r->mat % p->ne[2]) * p->ne[0] : NULL;
    int64_t row0 = r->mat * p->ne[1] + r->row_in_mat;
    if (r->acc) {
        if (dry_run_chunk(r->j, p, src, rows, imat, r->acc, st))
            return -1;
        if (job_progress(r->j, (uint64_t)rows * r->row_bytes, st))
            return -1;
    } else if (pipeline_chunk(r, src, rows, imat, row0, st)) {
        return -1;
    }
    r->have = 0;
    r->row_in_mat += rows;
    if (r->row_in_mat == p->ne[1]) {
        r->row_in_mat = 0;
        r->mat++;
    }
    return 0;
}

static int row_sink_fn(void *ctx, const void *buf, size_t n, mf_status *st)
{
    row_sink *r = ctx;
    const uint8_t *b = buf;
    while (n) {
        int64_t rows = rows_wanted(r);
        uint64_t want = (uint64_t)rows * r->row_bytes - r->have;
        uint64_t take = n < want ? n : want;
        memcpy(r->raw[r->slot] + r->have, b, (size_t)take);
        r->have += take;
        b += take;
        n -= (size_t)take;
        if (r->have == (uint64_t)rows * r->row_bytes && flush_rows(r, r->raw[r->slot], rows, st))
            return -1;
    }
    return 0;
}

/* Chunks straight from the mapping: no copy of the source. As
 * mf_stream_mapped does, the pages are read ahead and dropped from this
 * process afterwards (the page cache keeps them), so about one tensor
 * stays resident. */
static int convert_mapped(row_sink *r, mf_status *st)
{
    const mf_tensor *t = r->p->t;
    const uint8_t *src = t->data;
    uint8_t *lo;
    size_t len;
    bool span = mf_tensor_mapped_span(r->j->m, t, &lo, &len);
    if (span)
        madvise(lo, len, MADV_SEQUENTIAL);
    int64_t total = r->p->ne[1] * r->p->ne[2] * r->p->ne[3];
    int rc = 0;
    for (int64_t done = 0; done < total && rc == 0;) {
        int64_t rows = rows_wanted(r);
        rc = flush_rows(r, src + (uint64_t)done * r->row_bytes, rows, st);
        done += rows;
    }
    if (rc == 0)
        rc = finish_pending(r, &r->pend, st);
    if (span)
        madvise(lo, len, MADV_DONTNEED);
    return rc;
}

/* bufs[0..1] of at least `want` bytes each, grown (never shrunk) */
static int grow_pair(uint8_t **bufs, size_t *cap, size_t want)
{
    if (want <= *cap)
        return 0;
    for (int i = 0; i < 2; i++) {
        free(bufs[i]);
        bufs[i] = malloc(want);
    }
    *cap = bufs[0] && bufs[1] ? want : 0;
    return *cap ? 0 : -1;
}

static int alloc_chunk_buffers(row_sink *r, bool mapped, mf_status *st)
{
    qjob *j = r->j;
    uint64_t qbytes;
    mf_dtype_nbytes(r->p->dst, (uint64_t)(r->chunk_rows * r->p->ne[0]), &qbytes); /* checked by the plan */
    if (!mapped && grow_pair(j->sink_raw, &j->sink_raw_cap, (size_t)((uint64_t)r->chunk_rows * r->row_bytes)))
        return mf_oom(st, j->m->path);
    if (!r->acc && grow_pair(j->sink_q, &j->sink_q_cap, (size_t)qbytes))
        return mf_oom(st, j->m->path);
    for (int i = 0; i < 2; i++) {
        r->raw[i] = mapped ? NULL : j->sink_raw[i];
        r->q[i] = r->acc ? NULL : j->sink_q[i];
    }
    return 0;
}

static int convert_tensor(qjob *j, const qplan *p, mf_sink_fn sink, void *sink_ctx,
                          err_acc *acc, mf_status *st)
{
    const mf_tensor *t = p->t;
    row_sink r = {.j = j, .p = p, .sink = sink, .sink_ctx = sink_ctx, .acc = acc};
    if (mf_tensor_nelems(t) == 0)
        return 0;
    if (mf_dtype_nbytes(t->dtype, (uint64_t)p->ne[0], &r.row_bytes) || p->ne[1] < 1)
        return mf_fail(st, MF_ERR_FORMAT, j->m->path, -1, "tensor %s: rows are not whole blocks",
                       t->name);
    r.chunk_rows = p->ne[0] >= (int64_t)CHUNK_VALUES ? 1 : (int64_t)CHUNK_VALUES / p->ne[0];
    if (r.chunk_rows > p->ne[1])
        r.chunk_rows = p->ne[1];
    /* a plain little-endian tensor in the mapping is read where it lies */
    bool mapped = mf_tensor_data(j->m, t) &&
                  t->nbytes == r.row_bytes * (uint64_t)(p->ne[1] * p->ne[2] * p->ne[3]);
    int rc = alloc_chunk_buffers(&r, mapped, st);
    if (rc == 0)
        rc = mapped ? convert_mapped(&r, st) : mf_tensor_stream(j->m, t, row_sink_fn, &r, st);
    if (rc == 0)
        rc = finish_pending(&r, &r.pend, st);
    else if (r.pend.task)
        mf_quant_task_wait(r.pend.task);
    if (rc == 0 && (r.have || r.row_in_mat))
        rc = mf_fail(st, MF_ERR_FORMAT, j->m->path, -1, "tensor %s ends inside a row", t->name);
    return rc;
}

static int report_tensor(qjob *j, const qplan *p, const err_acc *acc, mf_status *st)
{
    mf_quant_tensor_report r = {0};
    r.name = p->t->name;
    r.src = p->t->dtype;
    r.dst = p->dst;
    memcpy(r.ne, p->ne, sizeof(r.ne));
    r.n_dims = mf_qmix_n_dims(p->ne);
    r.nelems = mf_tensor_nelems(p->t);
    r.src_bytes = p->t->nbytes;
    r.dst_bytes = p->out_bytes;
    r.converted = p->convert;
    r.fallback = p->fallback;
    r.imatrix = p->imatrix != NULL;
    if (acc)
        err_finish(acc, &r);
    if (j->on_tensor && j->on_tensor(j->ctx, &r))
        return mf_fail(st, MF_ERR_CANCELLED, j->m->path, -1, "cancelled");
    return 0;
}

/* A tensor kept as it is (F16 -> F16, COPY, the F32 norms of every mix):
 * when its bytes lie plainly in a local input file they go by
 * copy_file_range (mf_sink_copy_file: the kernel copies, or shares extents
 * on btrfs/XFS; no mapping faulted in, no copy through this process), else
 * through the reader's stream. Small tensors are streamed: an open costs
 * more than their copy. */
#define COPY_MIN (64u << 10)
static int copy_tensor(qjob *j, const mf_tensor *t, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const mf_model *m = t->owner ? t->owner : j->m;
    const uint8_t *plain = t->nbytes >= COPY_MIN ? mf_tensor_data(m, t) : NULL;
    const mf_file *f = plain ? mf_tensor_file(m, t) : NULL;
    if (f && f->base && f->path && !f->borrowed && !mf_source_is_remote(f->base) && plain >= f->base &&
        (uint64_t)(plain - f->base) + t->nbytes <= f->size)
        return mf_sink_copy_file(sink, sink_ctx, f->path, (uint64_t)(plain - f->base), t->nbytes, st);
    return mf_tensor_stream(j->m, t, sink, sink_ctx, st);
}

static int emit_tensor(qjob *j, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const qplan *p = &j->plan[i];
    err_acc acc = {0};
    int rc;
    if (p->convert)
        rc = convert_tensor(j, p, sink, sink_ctx, j->o->dry_run ? &acc : NULL, st);
    else {
        rc = sink ? copy_tensor(j, p->t, sink, sink_ctx, st) : 0;
        if (rc == 0)
            rc = job_progress(j, p->t->nbytes, st);
    }
    if (rc == 0)
        rc = report_tensor(j, p, p->convert && j->o->dry_run ? &acc : NULL, st);
    return rc;
}

typedef struct shard_fill {
    qjob *j;
    size_t first;
} shard_fill;

static int fill_cb(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    shard_fill *f = ctx;
    return emit_tensor(f->j, f->first + index, sink, sink_ctx, st);
}

/* Each file atomically; if one fails, the ones written before it go too,
 * so that no partial set is left. */
static int write_shards(qjob *j, mf_status *st)
{
    for (size_t s = 0; s < j->n_shards; s++) {
        const qshard *q = &j->shards[s];
        shard_fill f = {j, q->first};
        if (mf_gguf_write_all_padded(q->path, j->outs + q->first, q->n, q->meta.v, q->meta.n, fill_cb,
                                     &f, st)) {
            for (size_t k = 0; k < s; k++)
                unlink(j->shards[k].path);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ the run */

static bool name_has_any(const char *name, const char *const *pats, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pats[i] && strstr(name, pats[i]))
            return true;
    return false;
}

/* prepare_imatrix of llama-quantize: entries whose name contains an
 * excluded string go; with includes, only entries containing one stay. */
static void filter_imatrix(const mf_quantize_opts *o, mf_imatrix *im)
{
    size_t k = 0;
    for (size_t i = 0; i < im->n_entries; i++) {
        const char *nm = im->entries[i].name;
        if (name_has_any(nm, o->exclude_weights, o->n_exclude_weights))
            continue;
        if (o->n_include_weights && !name_has_any(nm, o->include_weights, o->n_include_weights))
            continue;
        im->entries[k++] = im->entries[i]; /* still sorted by name */
    }
    im->n_entries = k;
}

static int open_inputs(qjob *j, const char *in_path, mf_status *st)
{
    if (mf_open_model(in_path, 0, &j->m, st))
        return -1;
    if (j->m->format != MF_FMT_GGUF)
        return mf_fail(st, MF_ERR_USAGE, in_path, -1, "quantize reads GGUF files; this is %s",
                       mf_format_name(j->m->format));
    /* llama_model_loader: "illegal split file idx ..., model must be loaded
     * with the first split" (a later file alone has no model keys) */
    const mf_value *no = mf_meta_get(j->m, "split.no");
    if (no && no->type == MF_V_U16 && no->as.u > 0)
        return mf_fail(st, MF_ERR_USAGE, in_path, -1,
                       "file %llu of a split set: quantize the set from its first file "
                       "(NAME-00001-of-...)", (unsigned long long)no->as.u + 1);
    if (j->o->imatrix_path) {
        if (mf_imatrix_load(j->o->imatrix_path, &j->im, st))
            return -1;
        if (j->o->n_include_weights && j->o->n_exclude_weights)
            return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                           "--include-weights and --exclude-weights cannot be used together");
        filter_imatrix(j->o, j->im);
        j->res->imatrix_entries = j->im->n_entries;
    }
    if (mf_ftype_needs_imatrix(j->o->ftype) && !(j->im && j->im->n_entries))
        return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                       "%s needs an importance matrix (--imatrix): without one the result is "
                       "garbage, and llama-quantize refuses it too", mf_ftype_name(j->o->ftype));
    return 0;
}

static int make_outs(qjob *j, mf_status *st)
{
    j->outs = mf_arena_calloc(j->arena, j->n ? j->n : 1, sizeof(mf_out_tensor));
    if (!j->outs)
        return mf_oom(st, j->m->path);
    mf_quantize_result *r = j->res;
    for (size_t i = 0; i < j->n; i++) {
        const qplan *p = &j->plan[i];
        j->outs[i].name = p->t->name;
        j->outs[i].dtype = p->dst;
        j->outs[i].ndim = ggml_ndims(p->t);
        memcpy(j->outs[i].shape, p->t->shape + (p->t->ndim - j->outs[i].ndim),
               sizeof(int64_t) * (size_t)j->outs[i].ndim);
        r->n_converted += p->convert;
        r->imatrix_used += p->imatrix != NULL;
        r->n_params += mf_tensor_nelems(p->t);
        r->in_tensor_bytes += p->t->nbytes;
        r->out_tensor_bytes += p->out_bytes;
    }
    r->n_tensors = j->n;
    j->total = r->in_tensor_bytes;
    r->bpw = r->n_params ? 8.0 * (double)r->out_tensor_bytes / (double)r->n_params : 0;
    for (size_t s = 0; s < j->n_shards; s++)
        r->out_file_bytes += gguf_file_bytes(j, &j->shards[s]);
    return 0;
}

static int run(qjob *j, const char *in_path, const char *out_path, mf_status *st)
{
    if (open_inputs(j, in_path, st) || make_plan(j, st) || build_meta(j, st) ||
        make_shards(j, out_path, st) || make_outs(j, st))
        return -1;
    if (!j->o->dry_run)
        return write_shards(j, st);
    for (size_t i = 0; i < j->n; i++)
        if (emit_tensor(j, i, NULL, NULL, st))
            return -1;
    return 0;
}

int mf_quantize_file(const char *in_path, const char *out_path, const mf_quantize_opts *opts,
                     mf_quant_report_fn on_tensor, void *ctx, mf_quantize_result *res,
                     mf_status *st)
{
    MF_ST_GUARD(st);
    mf_quantize_result dummy;
    qjob j = {0};
    if (!opts)
        return mf_fail(st, MF_ERR_USAGE, in_path, -1, "mf_quantize_file needs options (the ftype)");
    mf_quantize_opts_init(&j.opts, opts->ftype);
    if (mf_opts_copy(&j.opts, sizeof(j.opts), opts, "mf_quantize_opts", st))
        return -1;
    if (j.opts.mix_rules != MF_MIX_RULES_ECBCB7EA && j.opts.mix_rules != MF_MIX_RULES_B10256)
        return mf_fail(st, MF_ERR_USAGE, in_path, -1, "mix_rules %d: MF_MIX_RULES_ECBCB7EA or _B10256",
                       (int)j.opts.mix_rules);
    if (j.opts.only_copy) /* llama-quantize: COPY is ALL_F32 with only_copy */
        j.opts.ftype = MF_FTYPE_ALL_F32;
    const mf_quantize_opts *o = &j.opts;
    j.o = o;
    j.file_type = (uint32_t)o->ftype;
    j.on_tensor = on_tensor;
    j.ctx = ctx;
    j.res = res ? res : &dummy;
    memset(j.res, 0, sizeof(*j.res));
    if (mf_ftype_base_type(o->ftype) == MF_DTYPE_INVALID)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "unknown file type %d", (int)o->ftype);
    if (!o->dry_run && !out_path)
        return mf_fail(st, MF_ERR_USAGE, in_path, -1, "no output path");
    j.arena = mf_arena_new();
    if (!j.arena)
        return mf_oom(st, in_path);
    int rc = run(&j, in_path, out_path, st);
    free(j.f32);
    free(j.deq);
    free(j.qbuf);
    for (int i = 0; i < 2; i++) {
        free(j.sink_raw[i]);
        free(j.sink_q[i]);
    }
    MF_VEC_FREE(j.meta);
    for (size_t s = 0; s < j.n_shards; s++)
        MF_VEC_FREE(j.shards[s].meta);
    mf_imatrix_free(j.im);
    mf_close(j.m);
    mf_arena_free(j.arena);
    return rc;
}
