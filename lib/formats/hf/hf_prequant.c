/* hf_prequant.c - pre-quantized Hugging Face checkpoints: which stored
 * tensors make up each packed weight, described for lib/quant's
 * dequantizers (quant/prequant.h), and the logical view that lists the
 * original weights instead.
 *
 * The method comes from config.json's quantization_config.quant_method
 * (transformers' AUTO_QUANTIZER_MAPPING keys); the parts are found by the
 * names each producing tool writes:
 *   gptq, awq             M.qweight, M.qzeros, M.scales[, M.g_idx]  -> M.weight
 *   fp8, fbgemm_fp8       M.weight (F8) + M.weight_scale_inv (block) or
 *                         M.weight_scale (tensor / channel)         -> M.weight
 *   compressed-tensors    M.weight_packed (pack-quantized) or M.weight
 *                         (int / float / naive-quantized) + M.weight_scale
 *                         [+ M.weight_zero_point, M.weight_shape]  -> M.weight
 *   mxfp4 (gpt-oss)       P_blocks + P_scales                      -> P
 *   modelopt (NVFP4)      M.weight (U8) + M.weight_scale (F8) +
 *                         M.weight_scale_2                          -> M.weight
 *   bitsandbytes          M.weight (U8) + M.weight.absmax, quant_map, [nested_*],
 *                         quant_state.bitsandbytes__nf4|fp4 (4-bit); M.weight
 *                         (I8) + M.SCB (8-bit)                      -> M.weight
 * Activation scales (input_scale) are folded away with their weight. */
#include "formats/formats.h"
#include "formats/hf/hf_int.h"
#include "quant/prequant.h"
#include "core/json_build.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>

typedef struct pq_entry {
    mf_pq q;
    const char *logical;        /* the weight's name */
    const mf_tensor *parts[6];  /* the stored tensors folded into it */
    int nparts;
    bool ok;                    /* passed mf_pq_check */
    bool cfg_bad;               /* its quantization settings are invalid (why) */
    char why[400];              /* else the rule it breaks */
} pq_entry;

struct mf_hf_prequant {
    pq_entry *e;
    size_t n;
    const char *method;
};

/* ------------------------------------------------------------ lookups */

typedef struct name_index {
    const mf_tensor **v;
    size_t n;
} name_index;

static int cmp_tname(const void *a, const void *b)
{
    return strcmp((*(const mf_tensor *const *)a)->name, (*(const mf_tensor *const *)b)->name);
}

static int index_names(const mf_model *m, name_index *ix)
{
    ix->n = m->n_tensors;
    ix->v = malloc((ix->n ? ix->n : 1) * sizeof(*ix->v));
    if (!ix->v)
        return -1;
    for (size_t i = 0; i < ix->n; i++)
        ix->v[i] = &m->tensors[i];
    qsort(ix->v, ix->n, sizeof(*ix->v), cmp_tname);
    return 0;
}

/* The tensor named base[0..bl) + suffix, or NULL. */
static const mf_tensor *find(const name_index *ix, const char *base, size_t bl, const char *suffix)
{
    char buf[1024];
    if (bl + strlen(suffix) >= sizeof(buf))
        return NULL;
    snprintf(buf, sizeof(buf), "%.*s%s", (int)bl, base, suffix);
    mf_tensor key = {.name = buf};
    const mf_tensor *kp = &key;
    const mf_tensor **hit = ix->n ? bsearch(&kp, ix->v, ix->n, sizeof(*ix->v), cmp_tname) : NULL;
    return hit ? *hit : NULL;
}

static bool ends_with(const char *s, const char *suffix, size_t *base_len)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n < k || strcmp(s + n - k, suffix) != 0)
        return false;
    *base_len = n - k;
    return true;
}

static void set_part(pq_entry *e, mf_pq_part *p, const mf_tensor *t)
{
    if (!t)
        return;
    p->name = t->name;
    p->p = t->data;
    p->nbytes = t->data && !t->strides && !t->big_endian ? t->nbytes : 0;
    p->dt = t->dtype;
    p->ndim = t->ndim;
    memcpy(p->shape, t->shape, sizeof(p->shape[0]) * (size_t)t->ndim);
    if (e->nparts < 6)
        e->parts[e->nparts++] = t;
}

static int json_int(const json_t *o, const char *key, int dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

static bool json_flag(const json_t *o, const char *key, bool dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static const char *json_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* ------------------------------------------- the quantization config */

/* quantization_config's values are checked before any is used: a value
 * present but of the wrong type or outside what the method defines is an
 * error naming the key, never a default or a truncated int (group_size
 * 2^40 read through an int cast was 0, "no groups", and the scales'
 * shape then decided the layout). Ranges: the producing projects'
 * (AutoGPTQ/GPTQModel QuantizeConfig, AutoAWQ, transformers'
 * FineGrainedFP8Config, compressed-tensors' QuantizationArgs, ModelOpt's
 * hf_quant_config); what the dequantizers support is checked again per
 * weight against its shapes (mf_pq_check: group_size divides the inputs). */
#define MAX_GROUP (1 << 24)

typedef struct cfg_check {
    char *why;
    size_t cap;
    const char *where; /* "quantization_config" or a config group's "weights" path */
} cfg_check;

static int cfg_bad(cfg_check *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cfg_bad(cfg_check *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->why, k->cap, fmt, ap);
    va_end(ap);
    return -1;
}

#define NO_ALT LLONG_MIN

/* An optional integer member in [lo, hi] (or exactly `alt`, NO_ALT: none);
 * absent or null: fine (*out unchanged). */
static int cfg_int(cfg_check *k, const json_t *o, const char *key, long long lo, long long hi,
                   long long alt, long long *out)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    long long x = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
    if (!json_is_integer(v) || ((x < lo || x > hi) && x != alt))
        return cfg_bad(k, "%s.%s is %s%lld; it must be an integer from %lld to %lld%s", k->where,
                       key, json_is_integer(v) ? "" : "not an integer: ",
                       json_is_integer(v) ? x : 0LL, lo, hi, alt == NO_ALT ? "" : " (or -1)");
    *out = x;
    return 0;
}

static int cfg_bool(cfg_check *k, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (v && !json_is_boolean(v) && !json_is_null(v))
        return cfg_bad(k, "%s.%s must be true or false", k->where, key);
    return 0;
}

/* An optional string member that must be one of `allowed` (NULL-ended;
 * compared without case when nocase). */
static int cfg_oneof(cfg_check *k, const json_t *o, const char *key, bool nocase,
                     const char *const *allowed)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    const char *s = json_string_value(v);
    for (const char *const *a = allowed; s && *a; a++)
        if (nocase ? !strcasecmp(s, *a) : !strcmp(s, *a))
            return 0;
    char list[200] = "";
    for (const char *const *a = allowed; *a; a++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
                 a == allowed ? "" : ", ", *a);
    return cfg_bad(k, "%s.%s is %s%s%s; mfmt reads %s (another packing would be misread)",
                   k->where, key, s ? "\"" : "not a string", s ? s : "", s ? "\"" : "", list);
}

static int check_gptq_awq_cfg(cfg_check *k, const json_t *qc, bool awq)
{
    static const char *const formats[] = {"gptq", "gptq_v2", NULL};
    static const char *const versions[] = {"gemm", "gemv", NULL};
    long long v = 0;
    if (cfg_int(k, qc, "bits", 2, 8, NO_ALT, &v) ||
        (awq && cfg_int(k, qc, "w_bit", 2, 8, NO_ALT, &v)) ||
        cfg_int(k, qc, "group_size", 1, MAX_GROUP, -1, &v) ||
        (awq && cfg_int(k, qc, "q_group_size", 1, MAX_GROUP, -1, &v)) ||
        cfg_bool(k, qc, "sym") || cfg_bool(k, qc, "desc_act") || cfg_bool(k, qc, "zero_point"))
        return -1;
    return awq ? cfg_oneof(k, qc, "version", true, versions)
               : cfg_oneof(k, qc, "checkpoint_format", false, formats);
}

static int check_fp8_cfg(cfg_check *k, const json_t *qc)
{
    json_t *bs = json_object_get(qc, "weight_block_size");
    if (!bs || json_is_null(bs))
        return 0;
    if (!json_is_array(bs) || json_array_size(bs) != 2)
        return cfg_bad(k, "%s.weight_block_size must be [rows, columns]", k->where);
    for (size_t i = 0; i < 2; i++) {
        json_t *x = json_array_get(bs, i);
        if (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > MAX_GROUP)
            return cfg_bad(k, "%s.weight_block_size[%zu] must be an integer from 1 to %d",
                           k->where, i, MAX_GROUP);
    }
    return 0;
}

/* One config group's "weights" (compressed-tensors QuantizationArgs). */
static int check_ct_weights(cfg_check *k, const json_t *w)
{
    static const char *const types[] = {"int", "float", NULL};
    static const char *const strategies[] = {"tensor", "channel", "group", NULL};
    long long bits = 8, group = 0;
    if (!json_is_object(w))
        return cfg_bad(k, "%s must be an object", k->where);
    if (cfg_int(k, w, "num_bits", 1, 8, NO_ALT, &bits) ||
        cfg_int(k, w, "group_size", 1, MAX_GROUP, NO_ALT, &group) ||
        cfg_bool(k, w, "symmetric") || cfg_oneof(k, w, "type", false, types) ||
        cfg_oneof(k, w, "strategy", false, strategies))
        return -1;
    if (bits != 2 && bits != 4 && bits != 8)
        return cfg_bad(k, "%s.num_bits is %lld; mfmt reads 2, 4 or 8", k->where, bits);
    const char *strategy = json_string_value(json_object_get(w, "strategy"));
    if (strategy && !strcmp(strategy, "group") && group == 0)
        return cfg_bad(k, "%s.strategy is \"group\" without a group_size", k->where);
    if (strategy && strcmp(strategy, "group") && group != 0)
        return cfg_bad(k, "%s.group_size %lld with strategy \"%s\" (groups are strategy \"group\")",
                       k->where, group, strategy);
    return 0;
}

static int check_ct_cfg(cfg_check *k, const json_t *qc)
{
    static const char *const formats[] = {"pack-quantized", "int-quantized", "float-quantized",
                                          "naive-quantized", NULL};
    if (cfg_oneof(k, qc, "format", false, formats))
        return -1;
    json_t *groups = json_object_get(qc, "config_groups");
    if (groups && !json_is_object(groups))
        return cfg_bad(k, "%s.config_groups must be an object", k->where);
    const char *name, *first = NULL;
    json_t *g, *w0 = NULL;
    char where[300];
    json_object_foreach(groups, name, g) {
        json_t *w = json_object_get(g, "weights");
        if (!w || json_is_null(w))
            continue; /* activations only */
        snprintf(where, sizeof(where), "%s.config_groups.%s.weights", k->where, name);
        cfg_check sub = {k->why, k->cap, where};
        if (check_ct_weights(&sub, w) || cfg_oneof(&sub, g, "format", false, formats))
            return -1;
        /* one scheme is applied to every packed weight (the groups'
         * targets are not matched per layer): groups must agree */
        if (w0 && !json_equal(w0, w))
            return cfg_bad(k, "%s.config_groups \"%s\" and \"%s\" quantize weights differently: "
                           "mixed schemes are not supported", k->where, first, name);
        if (!w0)
            w0 = w, first = name;
    }
    return 0;
}

static int check_modelopt_cfg(cfg_check *k, const json_t *qc)
{
    static const char *const algos[] = {"NVFP4", NULL};
    long long g = 16;
    if (cfg_oneof(k, qc, "quant_algo", false, algos) ||
        cfg_int(k, qc, "group_size", 1, MAX_GROUP, NO_ALT, &g))
        return -1;
    return g == 16 ? 0 : cfg_bad(k, "%s.group_size is %lld; NVFP4 scales 16 values each", k->where, g);
}

/* ----------------------------------------------------------- per method */

typedef struct find_ctx {
    const name_index *ix;
    const json_t *qc;       /* quantization_config */
    mf_dtype native;        /* config.json torch_dtype */
} find_ctx;

/* GPTQ and AWQ: M.qweight. */
static bool describe_gptq_awq(const find_ctx *c, const mf_tensor *t, bool awq, pq_entry *e)
{
    size_t bl;
    if (!ends_with(t->name, ".qweight", &bl))
        return false;
    mf_pq *q = &e->q;
    q->method = awq ? MF_PQ_AWQ : MF_PQ_GPTQ;
    q->nmat = 1;
    q->bits = json_int(c->qc, awq ? "w_bit" : "bits", json_int(c->qc, "bits", 4));
    q->group_size = json_int(c->qc, awq ? "q_group_size" : "group_size",
                             json_int(c->qc, "group_size", 128));
    q->sym = json_flag(c->qc, "sym", !awq);
    q->desc_act = json_flag(c->qc, "desc_act", false);
    const char *fmt = json_str(c->qc, "checkpoint_format");
    q->zero_offset = awq || (fmt && strcmp(fmt, "gptq_v2") == 0) ? 0 : 1;
    set_part(e, &q->w, t);
    set_part(e, &q->zero, find(c->ix, t->name, bl, ".qzeros"));
    set_part(e, &q->scale, find(c->ix, t->name, bl, ".scales"));
    if (!awq)
        set_part(e, &q->g_idx, find(c->ix, t->name, bl, ".g_idx"));
    const char *version = json_str(c->qc, "version");
    q->gemv = awq && version && !strcasecmp(version, "gemv");
    if (t->ndim == 2 && q->bits > 0) {
        if (q->gemv) { /* [out, in / 8] */
            q->rows = t->shape[0];
            q->cols = t->shape[1] * 8;
        } else if (awq) {
            q->cols = t->shape[0];
            q->rows = t->shape[1] * (32 / q->bits);
        } else {
            q->cols = t->shape[0] * 32 / q->bits;
            q->rows = t->shape[1];
        }
    }
    q->native = q->scale.p ? q->scale.dt : c->native;
    return true;
}

static mf_pq_scale_kind kind_of_scale(const mf_tensor *s, int64_t rows, int64_t cols, int group)
{
    uint64_t n = mf_tensor_nelems(s);
    if (n == 1)
        return MF_PQ_SCALE_TENSOR;
    if (s->ndim >= 1 && s->shape[0] == rows && (s->ndim == 1 || (s->ndim == 2 && s->shape[1] == 1)))
        return MF_PQ_SCALE_CHANNEL;
    (void)cols;
    (void)group;
    return MF_PQ_SCALE_GROUP;
}

/* fp8 / fbgemm_fp8 / compressed-tensors float-quantized: M.weight in F8. */
static bool describe_fp8(const find_ctx *c, const mf_tensor *t, pq_entry *e)
{
    size_t bl;
    if ((t->dtype != MF_F8_E4M3 && t->dtype != MF_F8_E5M2) || !ends_with(t->name, ".weight", &bl) ||
        t->ndim < 2 || t->ndim > 3)
        return false;
    mf_pq *q = &e->q;
    q->method = MF_PQ_FP8;
    q->bits = 8;
    q->nmat = t->ndim == 3 ? t->shape[0] : 1;
    q->rows = t->shape[t->ndim - 2];
    q->cols = t->shape[t->ndim - 1];
    q->native = c->native;
    set_part(e, &q->w, t);
    const mf_tensor *inv = find(c->ix, t->name, bl, ".weight_scale_inv");
    const mf_tensor *s = inv ? inv : find(c->ix, t->name, bl, ".weight_scale");
    set_part(e, &q->scale, s);
    set_part(e, &q->zero, find(c->ix, t->name, bl, ".weight_zero_point"));
    const mf_tensor *in = find(c->ix, t->name, bl, ".input_scale");
    if (in && e->nparts < 6)
        e->parts[e->nparts++] = in;
    json_t *bs = json_object_get(c->qc, "weight_block_size");
    if (inv && json_is_array(bs) && json_array_size(bs) == 2) {
        q->scale_kind = MF_PQ_SCALE_BLOCK;
        q->block_rows = (int)json_integer_value(json_array_get(bs, 0));
        q->block_cols = (int)json_integer_value(json_array_get(bs, 1));
    } else if (inv && inv->ndim == 2 && mf_tensor_nelems(inv) > 1) {
        q->scale_kind = MF_PQ_SCALE_BLOCK; /* DeepSeek-V3's default */
        q->block_rows = q->block_cols = 128;
    } else if (s) {
        q->scale_kind = kind_of_scale(s, q->rows, q->cols, 0);
        if (q->scale_kind == MF_PQ_SCALE_GROUP && s->ndim == 2 && s->shape[1] > 0)
            q->group_size = (int)(q->cols / s->shape[1]);
    }
    return true;
}

/* compressed-tensors int: M.weight_packed, or M.weight in I8. */
static bool describe_ct_int(const find_ctx *c, const mf_tensor *t, pq_entry *e)
{
    size_t bl;
    bool packed = ends_with(t->name, ".weight_packed", &bl);
    if (!packed && (t->dtype != MF_I8 || !ends_with(t->name, ".weight", &bl)))
        return false;
    if (t->ndim != 2)
        return false;
    mf_pq *q = &e->q;
    q->method = MF_PQ_CT_INT;
    q->nmat = 1;
    q->native = c->native;
    set_part(e, &q->w, t);
    const mf_tensor *s = find(c->ix, t->name, bl, ".weight_scale");
    set_part(e, &q->scale, s);
    set_part(e, &q->zero, find(c->ix, t->name, bl, ".weight_zero_point"));
    const mf_tensor *shape = find(c->ix, t->name, bl, ".weight_shape");
    if (shape && e->nparts < 6)
        e->parts[e->nparts++] = shape;
    const mf_tensor *in = find(c->ix, t->name, bl, ".input_scale");
    if (in && e->nparts < 6)
        e->parts[e->nparts++] = in;
    q->rows = t->shape[0];
    q->bits = 8;
    if (packed) {
        /* the config's num_bits (config_groups.*.weights.num_bits) */
        json_t *groups = json_object_get(c->qc, "config_groups");
        const char *k;
        json_t *g;
        json_object_foreach(groups, k, g) {
            json_t *w = json_object_get(g, "weights");
            q->bits = json_int(w, "num_bits", q->bits);
            q->group_size = json_int(w, "group_size", 0);
            q->sym = json_flag(w, "symmetric", true);
        }
        q->cols = q->bits > 0 ? t->shape[1] * 32 / q->bits : 0;
        if (shape && shape->data && mf_tensor_nelems(shape) == 2 &&
            (shape->dtype == MF_I64 || shape->dtype == MF_I32)) {
            bool i64 = shape->dtype == MF_I64;
            int64_t r = i64 ? (int64_t)mf_rd64le(shape->data) : (int32_t)mf_rd32le(shape->data);
            int64_t cc = i64 ? (int64_t)mf_rd64le(shape->data + 8) : (int32_t)mf_rd32le(shape->data + 4);
            if (r == q->rows && cc > 0)
                q->cols = cc;
        }
    } else {
        q->cols = t->shape[1];
    }
    if (s) {
        q->scale_kind = kind_of_scale(s, q->rows, q->cols, q->group_size);
        if (q->scale_kind == MF_PQ_SCALE_GROUP && s->ndim == 2 && s->shape[1] > 0 && !q->group_size)
            q->group_size = (int)(q->cols / s->shape[1]);
    }
    return true;
}

/* gpt-oss: P_blocks + P_scales. */
static bool describe_mxfp4(const find_ctx *c, const mf_tensor *t, pq_entry *e, char *logical,
                           size_t cap)
{
    size_t bl;
    if (!ends_with(t->name, "_blocks", &bl) || t->ndim != 4)
        return false;
    mf_pq *q = &e->q;
    q->method = MF_PQ_MXFP4;
    q->bits = 4;
    q->group_size = 32;
    q->nmat = t->shape[0];
    q->cols = t->shape[1];
    q->rows = t->shape[2] * t->shape[3] * 2;
    q->native = MF_BF16; /* convert_moe_packed_tensors' dtype */
    set_part(e, &q->w, t);
    set_part(e, &q->scale, find(c->ix, t->name, bl, "_scales"));
    snprintf(logical, cap, "%.*s", (int)bl, t->name);
    return true;
}

/* ModelOpt NVFP4: M.weight in U8 + M.weight_scale (F8) + M.weight_scale_2. */
static bool describe_nvfp4(const find_ctx *c, const mf_tensor *t, pq_entry *e)
{
    size_t bl;
    if (t->dtype != MF_U8 || t->ndim != 2 || !ends_with(t->name, ".weight", &bl))
        return false;
    const mf_tensor *s = find(c->ix, t->name, bl, ".weight_scale");
    if (!s)
        return false;
    mf_pq *q = &e->q;
    q->method = MF_PQ_NVFP4;
    q->bits = 4;
    q->group_size = 16;
    q->nmat = 1;
    q->rows = t->shape[0];
    q->cols = t->shape[1] * 2;
    q->native = c->native;
    set_part(e, &q->w, t);
    set_part(e, &q->scale, s);
    set_part(e, &q->scale2, find(c->ix, t->name, bl, ".weight_scale_2"));
    const mf_tensor *in = find(c->ix, t->name, bl, ".input_scale");
    if (in && e->nparts < 6)
        e->parts[e->nparts++] = in;
    return true;
}

/* bitsandbytes 4-bit (transformers' serialization of Params4bit: bnb's
 * QuantState.as_dict(packed=True)): M.weight U8, M.weight.absmax,
 * M.weight.quant_map, [M.weight.nested_absmax, M.weight.nested_quant_map],
 * and M.weight.quant_state.bitsandbytes__nf4 (or __fp4): a U8 tensor
 * holding JSON {quant_type, blocksize, dtype, shape, nested_blocksize,
 * nested_offset}. */
static mf_dtype torch_dtype_named(const char *d, mf_dtype dflt)
{
    if (!d)
        return dflt;
    if (!strcmp(d, "float16") || !strcmp(d, "half"))
        return MF_F16;
    if (!strcmp(d, "bfloat16"))
        return MF_BF16;
    if (!strcmp(d, "float32") || !strcmp(d, "float"))
        return MF_F32;
    return dflt;
}

static bool describe_bnb4(const find_ctx *c, const mf_tensor *t, pq_entry *e)
{
    size_t bl;
    if (t->dtype != MF_U8 || !ends_with(t->name, ".weight", &bl))
        return false;
    const mf_tensor *qs = find(c->ix, t->name, bl, ".weight.quant_state.bitsandbytes__nf4");
    if (!qs)
        qs = find(c->ix, t->name, bl, ".weight.quant_state.bitsandbytes__fp4");
    if (!qs)
        return false;
    mf_pq *q = &e->q;
    q->method = MF_PQ_BNB4;
    q->bits = 4;
    q->nmat = 1;
    set_part(e, &q->w, t);
    set_part(e, &q->scale, find(c->ix, t->name, bl, ".weight.absmax"));
    set_part(e, &q->code, find(c->ix, t->name, bl, ".weight.quant_map"));
    set_part(e, &q->nested_absmax, find(c->ix, t->name, bl, ".weight.nested_absmax"));
    set_part(e, &q->nested_code, find(c->ix, t->name, bl, ".weight.nested_quant_map"));
    if (e->nparts < 6)
        e->parts[e->nparts++] = qs;
    json_t *j = qs->data && !qs->strides ? mf_json_loadb((const char *)qs->data, qs->nbytes, 0, NULL) : NULL;
    json_t *shape = json_object_get(j, "shape");
    if (json_is_array(shape) && json_array_size(shape) == 2) {
        q->rows = json_integer_value(json_array_get(shape, 0));
        q->cols = json_integer_value(json_array_get(shape, 1));
    }
    /* blocksize and nested_blocksize: ints, or 0 (refused by the check)
     * when present out of range, never truncated to an int */
    long long bs = 64, nbs = 256;
    cfg_check k = {e->why, sizeof(e->why), qs->name};
    if (cfg_int(&k, j, "blocksize", 1, MAX_GROUP, NO_ALT, &bs) ||
        cfg_int(&k, j, "nested_blocksize", 1, MAX_GROUP, NO_ALT, &nbs))
        e->cfg_bad = true;
    q->blocksize = (int)bs;
    q->group_size = q->blocksize;
    q->nested_blocksize = (int)nbs;
    json_t *off = json_object_get(j, "nested_offset");
    q->offset = json_is_number(off) ? (float)json_number_value(off) : 0.0f;
    q->native = torch_dtype_named(json_str(j, "dtype"), c->native);
    json_decref(j);
    return true;
}

/* bitsandbytes 8-bit: M.weight I8 + M.SCB F32 [out]. */
static bool describe_bnb8(const find_ctx *c, const mf_tensor *t, pq_entry *e)
{
    size_t bl;
    if (t->dtype != MF_I8 || t->ndim != 2 || !ends_with(t->name, ".weight", &bl))
        return false;
    const mf_tensor *scb = find(c->ix, t->name, bl, ".SCB");
    if (!scb)
        return false;
    mf_pq *q = &e->q;
    q->method = MF_PQ_BNB8;
    q->bits = 8;
    q->nmat = 1;
    q->rows = t->shape[0];
    q->cols = t->shape[1];
    q->scale_kind = MF_PQ_SCALE_CHANNEL;
    q->native = c->native;
    set_part(e, &q->w, t);
    set_part(e, &q->scale, scb);
    const mf_tensor *wf = find(c->ix, t->name, bl, ".weight_format");
    if (wf && e->nparts < 6)
        e->parts[e->nparts++] = wf;
    return true;
}

/* ------------------------------------------------------------- finding */

typedef enum family { F_NONE, F_GPTQ, F_AWQ, F_FP8, F_CT, F_MXFP4, F_NVFP4, F_BNB } family;

static family family_of(const json_t *qc, const char **method)
{
    const char *m = json_str(qc, "quant_method");
    *method = m ? m : "?";
    if (!m)
        return F_NONE;
    if (!strcmp(m, "gptq"))
        return F_GPTQ;
    if (!strcmp(m, "awq"))
        return F_AWQ;
    if (!strcmp(m, "fp8") || !strcmp(m, "fbgemm_fp8"))
        return F_FP8;
    if (!strcmp(m, "compressed-tensors"))
        return F_CT;
    if (!strcmp(m, "mxfp4"))
        return F_MXFP4;
    if (!strcmp(m, "modelopt"))
        return F_NVFP4;
    if (!strcmp(m, "bitsandbytes"))
        return F_BNB;
    return F_NONE;
}

/* The quantization config's values (cfg_check above): 0, or -1 with why. */
static int check_qc(family f, const json_t *qc, char *why, size_t cap)
{
    cfg_check k = {why, cap, "quantization_config"};
    switch (f) {
    case F_GPTQ: return check_gptq_awq_cfg(&k, qc, false);
    case F_AWQ: return check_gptq_awq_cfg(&k, qc, true);
    case F_FP8: return check_fp8_cfg(&k, qc);
    case F_CT: return check_ct_cfg(&k, qc);
    case F_NVFP4: return check_modelopt_cfg(&k, qc);
    default: return 0; /* mxfp4: nothing configurable; bitsandbytes: per weight */
    }
}

static bool describe(const find_ctx *c, family f, const mf_tensor *t, pq_entry *e, char *logical,
                     size_t cap)
{
    size_t bl;
    bool hit = false;
    switch (f) {
    case F_GPTQ: hit = describe_gptq_awq(c, t, false, e); break;
    case F_AWQ: hit = describe_gptq_awq(c, t, true, e); break;
    case F_FP8: hit = describe_fp8(c, t, e); break;
    case F_CT: hit = describe_ct_int(c, t, e) || describe_fp8(c, t, e); break;
    case F_MXFP4: hit = describe_mxfp4(c, t, e, logical, cap); break;
    case F_NVFP4: hit = describe_nvfp4(c, t, e); break;
    case F_BNB: hit = describe_bnb4(c, t, e) || describe_bnb8(c, t, e); break;
    default: break;
    }
    if (hit && f != F_MXFP4) {
        const char *n = t->name;
        if (ends_with(n, ".qweight", &bl) || ends_with(n, ".weight_packed", &bl) ||
            ends_with(n, ".weight", &bl))
            /* the base module's name + ".weight" */
            snprintf(logical, cap, "%.*s.weight", (int)bl, n);
    }
    return hit;
}

static mf_dtype native_dtype(const json_t *cfg)
{
    const char *d = json_str(cfg, "torch_dtype");
    return torch_dtype_named(d ? d : json_str(cfg, "dtype"), MF_BF16);
}

static int add_meta(mf_model *m, const mf_hf_prequant *p, const json_t *qc, mf_status *st)
{
    if (mf_hf_meta_str(m, "quant.method", p->method, st))
        return -1;
    if (p->n == 0)
        return 0;
    const mf_pq *q = &p->e[0].q;
    double bpw = 0, n = 0;
    for (size_t i = 0; i < p->n; i++) {
        double k = (double)p->e[i].q.nmat * (double)p->e[i].q.rows * (double)p->e[i].q.cols;
        bpw += mf_pq_bits_per_weight(&p->e[i].q) * k;
        n += k;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%.4f", n > 0 ? bpw / n : 0.0);
    if (mf_hf_meta_str(m, "quant.layout", q->gemv ? "awq-gemv" : mf_pq_method_name(q->method), st) ||
        mf_hf_meta_int(m, "quant.bits", q->bits, st) ||
        mf_hf_meta_int(m, "quant.group_size", q->group_size ? q->group_size : -1, st) ||
        mf_hf_meta_bool(m, "quant.sym", q->sym, st) ||
        mf_hf_meta_bool(m, "quant.desc_act", q->desc_act, st) ||
        mf_hf_meta_str(m, "quant.scale_dtype", mf_dtype_name(q->scale.dt), st) ||
        mf_hf_meta_str(m, "quant.bits_per_weight", buf, st) ||
        mf_hf_meta_int(m, "quant.n_packed", (int64_t)p->n, st))
        return -1;
    if (q->method == MF_PQ_GPTQ &&
        mf_hf_meta_str(m, "quant.checkpoint_format", q->zero_offset ? "gptq" : "gptq_v2", st))
        return -1;
    if (q->scale_kind == MF_PQ_SCALE_BLOCK) {
        snprintf(buf, sizeof(buf), "[%d, %d]", q->block_rows, q->block_cols);
        if (mf_hf_meta_str(m, "quant.block_size", buf, st))
            return -1;
    }
    (void)qc;
    for (size_t i = 0; i < p->n; i++) {
        const pq_entry *e = &p->e[i];
        char key[1200], val[300];
        snprintf(key, sizeof(key), "quant.logical.%s", e->logical);
        if (e->q.nmat > 1)
            snprintf(val, sizeof(val), "[%lld, %lld, %lld] %s, %s %d-bit",
                     (long long)e->q.nmat, (long long)e->q.rows, (long long)e->q.cols,
                     mf_dtype_name(e->q.native), mf_pq_method_name(e->q.method), e->q.bits);
        else
            snprintf(val, sizeof(val), "[%lld, %lld] %s, %s %d-bit", (long long)e->q.rows,
                     (long long)e->q.cols, mf_dtype_name(e->q.native),
                     mf_pq_method_name(e->q.method), e->q.bits);
        if (mf_hf_meta_str(m, key, e->ok ? val : e->why, st))
            return -1;
    }
    return 0;
}

int mf_hf_prequant_open(mf_model *m, const json_t *cfg, bool strict, mf_status *st)
{
    const json_t *qc = json_object_get(cfg, "quantization_config");
    if (!json_is_object(qc))
        return 0;
    mf_hf_prequant *p = mf_arena_calloc(m->arena, 1, sizeof(*p));
    if (!p)
        return mf_oom(st, m->path);
    family f = family_of(qc, &p->method);
    p->method = mf_arena_strdup(m->arena, p->method);
    m->priv = p;
    if (f == F_NONE) {
        mf_model_note(m, "quantization_config.quant_method \"%s\": its tensors are listed as "
                      "stored; mfmt does not dequantize this method", p->method);
        return add_meta(m, p, qc, st);
    }
    char cfg_why[380] = ""; /* fits e.why after "config.json: " */
    if (check_qc(f, qc, cfg_why, sizeof(cfg_why))) {
        const char *file = m->format == MF_FMT_HF_DIR ? mf_path_join(m->arena, m->path, "config.json")
                                                      : m->path;
        if (strict)
            mf_breach(st, file ? file : m->path, -1, "%s", cfg_why);
        else
            mf_model_note(m, "config.json: %s: the packed weights cannot be read", cfg_why);
    }
    name_index ix;
    if (index_names(m, &ix))
        return mf_oom(st, m->path);
    find_ctx c = {&ix, qc, native_dtype(cfg)};
    MF_VEC(pq_entry) ents = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->n_tensors; i++) {
        pq_entry e = {0};
        char logical[1024] = "";
        if (!describe(&c, f, &m->tensors[i], &e, logical, sizeof(logical)))
            continue;
        e.logical = mf_arena_strdup(m->arena, logical);
        if (cfg_why[0]) { /* reported once, above */
            snprintf(e.why, sizeof(e.why), "config.json: %s", cfg_why);
            e.ok = false;
            if (!e.logical || MF_VEC_PUSH(ents, e))
                rc = mf_oom(st, m->path);
            continue;
        }
        e.ok = !e.cfg_bad && mf_pq_check(&e.q, e.why, sizeof(e.why)) == 0;
        if (!e.ok) {
            if (strict)
                mf_breach(st, m->path, -1, "%s: %s", p->method, e.why);
            else
                mf_model_note(m, "%s: %s", p->method, e.why);
        }
        if (!e.logical || MF_VEC_PUSH(ents, e))
            rc = mf_oom(st, m->path);
    }
    free(ix.v);
    if (rc == 0) {
        p->e = mf_arena_calloc(m->arena, ents.n ? ents.n : 1, sizeof(pq_entry));
        if (!p->e)
            rc = mf_oom(st, m->path);
        else if (ents.n)
            memcpy(p->e, ents.v, ents.n * sizeof(pq_entry));
        p->n = ents.n;
    }
    MF_VEC_FREE(ents);
    if (rc == 0)
        mf_model_note(m, "%zu %s-quantized weights are listed as stored; their logical shapes are "
                      "in quant.logical.*, and the logical view (--logical, convert, dequantize) "
                      "gives them as floats", p->n, p->method);
    return rc ? rc : add_meta(m, p, qc, st);
}

/* ------------------------------------------------------ memory */

static uint64_t elems_of(const mf_pq_part *p)
{
    uint64_t n = 1;
    for (int d = 0; d < p->ndim; d++)
        n *= (uint64_t)p->shape[d];
    return p->p ? n : 0;
}

static bool part_named(const mf_tensor *t, const char *piece)
{
    return strstr(t->name, piece) != NULL;
}

/* What each loader keeps, against what is stored (the modules' buffers,
 * read from the producing projects' code):
 *  - gptq / awq (QuantLinear, WQLinear_GEMM/GEMV), fp8 (FP8Linear),
 *    mxfp4 (Mxfp4GptOssExperts with the triton kernels; without them
 *    transformers dequantizes to bf16), modelopt (vLLM's ModelOptNvFp4):
 *    the stored tensors as they are;
 *  - fbgemm_fp8 (FbgemmFp8Linear): plus input_scale_ub, an F32 [1] buffer
 *    per Linear that is not saved;
 *  - compressed-tensors (CompressedLinear, run_compressed): the stored
 *    tensors, plus a zero point per scale (int8, or fp8 for float
 *    schemes: _initialize_scale_zero_point's force_zero_point) where the
 *    checkpoint stores none (symmetric schemes);
 *  - bitsandbytes 4-bit (Params4bit + QuantState.from_dict): the packed
 *    weight, absmax, quant_map and the nested ones, plus the nested
 *    offset (an F32 scalar); the quant_state JSON is parsed, not kept;
 *  - bitsandbytes 8-bit (Int8Params): weight and SCB; weight_format is
 *    read at load and dropped. */
bool mf_hf_prequant_memory(const mf_model *m, uint64_t *bytes, char *how, size_t cap)
{
    const mf_hf_prequant *p = m->format == MF_FMT_HF_DIR ? m->priv : NULL;
    if (!p || p->n == 0)
        return false;
    uint64_t total = 0, dropped = 0, added = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        total += m->tensors[i].nbytes;
    const bool fbgemm = !strcmp(p->method, "fbgemm_fp8"), ct = !strcmp(p->method, "compressed-tensors");
    for (size_t i = 0; i < p->n; i++) {
        const pq_entry *e = &p->e[i];
        const mf_pq *q = &e->q;
        for (int k = 0; k < e->nparts; k++)
            if ((q->method == MF_PQ_BNB4 && part_named(e->parts[k], ".quant_state.")) ||
                (q->method == MF_PQ_BNB8 && part_named(e->parts[k], ".weight_format")))
                dropped += e->parts[k]->nbytes;
        if (q->method == MF_PQ_BNB4 && q->nested_absmax.p)
            added += 4;
        if (fbgemm)
            added += 4;
        if (ct && !q->zero.p)
            added += elems_of(&q->scale);
    }
    *bytes = total - dropped + added;
    const char *m0 = p->method;
    if (!strcmp(m0, "bitsandbytes"))
        snprintf(how, cap, "bitsandbytes keeps the packed weights, absmax and quant maps (4-bit; "
                 "the quant_state JSON is parsed, not kept) or weight and SCB (8-bit)");
    else if (fbgemm)
        snprintf(how, cap, "FbgemmFp8Linear keeps the stored weight and weight_scale, plus a "
                 "4-byte input_scale_ub per Linear");
    else if (ct)
        snprintf(how, cap, "CompressedLinear keeps the stored tensors, plus a zero point per "
                 "scale where a symmetric scheme stores none");
    else if (!strcmp(m0, "mxfp4"))
        snprintf(how, cap, "the MXFP4 experts stay packed (_blocks, _scales) as with the triton "
                 "kernels; without them transformers holds them as bf16");
    else
        snprintf(how, cap, "%s's modules keep the stored tensors as they are", m0);
    return true;
}

/* ------------------------------------------------------ the logical view */

typedef struct view_priv {
    const mf_model *src;
    bool fp8_f32; /* FP8 weights as llama.cpp's converter dequantizes them (mf_pq.f32_math) */
} view_priv;

static bool fp8_in_f32(const mf_model *view, const pq_entry *e)
{
    const view_priv *vp = view->priv;
    return vp && vp->fp8_f32 && e->q.method == MF_PQ_FP8;
}

/* A packed weight as its floats, a few MiB of rows at a time through one
 * buffer (mf_pq_rows writes the output dtype straight away). */
static int view_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                       mf_status *st)
{
    enum { CHUNK = 4 << 20 };
    const pq_entry *e = t->priv;
    if (!e->ok)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "%s", e->why);
    const size_t es = t->dtype == MF_F32 ? 4 : 2, row = (size_t)e->q.cols * es;
    const int64_t step = row >= CHUNK ? 1 : (int64_t)(CHUNK / row);
    const int64_t n = step < e->q.rows ? step : e->q.rows;
    uint8_t *o = malloc((size_t)n * row);
    if (!o)
        return mf_oom(st, m->path);
    int rc = 0;
    for (int64_t k = 0; rc == 0 && k < e->q.nmat; k++)
        for (int64_t r = 0; rc == 0 && r < e->q.rows; r += n) {
            int64_t h = e->q.rows - r < n ? e->q.rows - r : n;
            mf_pq q = e->q;
            q.f32_math = fp8_in_f32(m, e);
            if (mf_pq_rows(&q, k, r, h, t->dtype, o))
                rc = mf_oom(st, m->path);
            else
                rc = sink(ctx, o, (size_t)h * row, st);
        }
    free(o);
    return rc;
}

static const mf_reader view_reader = {
    .format = MF_FMT_HF_DIR,
    .name = "hf-dir",
    .stream = view_stream,
};

static int prequant_view(const mf_model *src, mf_dtype out, bool fp8_f32, mf_model **view, mf_status *st);

int mf_hf_prequant_view(const mf_model *src, mf_dtype out, mf_model **view, mf_status *st)
{
    return prequant_view(src, out, false, view, st);
}

int mf_hf_prequant_view_llama(const mf_model *src, mf_model **view, mf_status *st)
{
    if (src->format != MF_FMT_HF_DIR)
        return mf_model_logical_view_as(src, MF_DTYPE_INVALID, view, st);
    return prequant_view(src, MF_DTYPE_INVALID, true, view, st);
}

static int prequant_view(const mf_model *src, mf_dtype out, bool fp8_f32, mf_model **view, mf_status *st)
{
    *view = NULL;
    const mf_hf_prequant *p = src->priv;
    if (!p || p->n == 0)
        return 0;
    if (out != MF_DTYPE_INVALID && out != MF_F32 && out != MF_F16 && out != MF_BF16)
        return mf_fail(st, MF_ERR_USAGE, src->path, -1,
                       "quantized weights dequantize to F32, F16 or BF16, not %s", mf_dtype_name(out));
    const pq_entry **role = calloc(src->n_tensors ? src->n_tensors : 1, sizeof(*role));
    static const pq_entry folded;
    if (!role)
        return mf_oom(st, src->path);
    for (size_t i = 0; i < p->n; i++)
        for (int k = 0; k < p->e[i].nparts; k++)
            role[p->e[i].parts[k] - src->tensors] = &folded;
    for (size_t i = 0; i < p->n; i++)
        role[p->e[i].parts[0] - src->tensors] = &p->e[i];
    mf_model *v = mf_model_new(src->format, src->path);
    view_priv *vp = v ? mf_arena_alloc(v->arena, sizeof(*vp)) : NULL;
    int rc = vp ? 0 : mf_oom(st, src->path);
    if (rc == 0) {
        vp->src = src;
        vp->fp8_f32 = fp8_f32;
        v->priv = vp;
        v->reader = &view_reader;
        snprintf(v->version, sizeof(v->version), "%.40s, dequantized", src->version);
    }
    for (size_t i = 0; rc == 0 && i < src->n_meta; i++) {
        mf_kv *kv = mf_model_add_meta(v, src->meta[i].key, st);
        if (!kv)
            rc = -1;
        else
            kv->v = src->meta[i].v, kv->offset = src->meta[i].offset;
    }
    for (size_t i = 0; rc == 0 && i < src->n_tensors; i++) {
        if (role[i] == &folded)
            continue;
        mf_tensor *d = mf_model_add_tensor(v, st);
        if (!d) {
            rc = -1;
            break;
        }
        const pq_entry *e = role[i];
        if (!e) {
            *d = src->tensors[i];
            if (!d->owner)
                d->owner = src;
            continue;
        }
        if (!e->ok) {
            rc = mf_fail(st, MF_ERR_FORMAT, src->path, -1, "%s: %s", p->method, e->why);
            break;
        }
        d->name = e->logical;
        d->dtype = fp8_f32 && e->q.method == MF_PQ_FP8 ? MF_F32 : out == MF_DTYPE_INVALID ? e->q.native : out;
        d->ndim = e->q.nmat > 1 ? 3 : 2;
        int k = 0;
        if (e->q.nmat > 1)
            d->shape[k++] = e->q.nmat;
        d->shape[k++] = e->q.rows;
        d->shape[k] = e->q.cols;
        d->priv = (void *)e;
        rc = mf_tensor_set_nbytes(d, v->path, -1, st);
    }
    free(role);
    if (rc) {
        mf_close(v);
        return -1;
    }
    *view = v;
    return 0;
}
