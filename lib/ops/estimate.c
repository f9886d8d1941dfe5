/* estimate.c - memory a model needs: weights (as stored, or at a chosen
 * type: parameters x bits per weight / 8) plus the KV cache
 * (layers x KV heads x (key dim + value dim) x context x batch x bytes per
 * element, i.e. 2 x layers x KV heads x head dim x ... when keys and values
 * have one head dim). The geometry comes from config.json (a Hugging Face
 * directory, which needs no weights) or from a GGUF file's metadata. */
#include "formats/formats.h"
#include "ops/hf_ops.h"
#include "ops/estimate.h"
#include "ops/quant_mix.h"

#include <math.h>
#include <stdlib.h>

/* Average bits per weight of llama.cpp's mixed quantization types, as its
 * quantize README measured them on Llama 2 7B (a mix puts some tensors at
 * higher precision, so the average depends a little on the model). */
static const struct { const char *name; double bpw; } mixes[] = {
    {"Q2_K_S", 3.35}, {"Q3_K_S", 3.50}, {"Q3_K_M", 3.91}, {"Q3_K_L", 4.27}, {"Q4_K_S", 4.58},
    {"Q4_K_M", 4.84}, {"Q5_K_S", 5.52}, {"Q5_K_M", 5.68},
};

int mf_type_bpw(const char *name, double *bpw, char *canon, size_t cl)
{
    char up[32];
    size_t n = strlen(name);
    if (n >= sizeof(up))
        return -1;
    for (size_t i = 0; i <= n; i++)
        up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
        if (!strcmp(up, mixes[i].name)) {
            *bpw = mixes[i].bpw;
            snprintf(canon, cl, "%s", mixes[i].name);
            return 0;
        }
    mf_dtype dt = mf_dtype_from_name(up);
    const mf_dtype_info *di = dt == MF_DTYPE_INVALID ? NULL : mf_dtype_info_of(dt);
    if (!di || !di->block_bytes || !di->block_elems)
        return -1;
    *bpw = di->bits ? (double)di->bits : 8.0 * di->block_bytes / di->block_elems;
    snprintf(canon, cl, "%s", di->name);
    return 0;
}

/* --------------------------------------------------------- geometry */

static const json_t *text_config(const json_t *cfg)
{
    /* multimodal configs keep the language model's sizes in text_config */
    json_t *tc = json_object_get(cfg, "text_config");
    if (json_is_object(tc) && !json_object_get(cfg, "num_hidden_layers"))
        return tc;
    return cfg;
}

static bool first_int(const json_t *cfg, const char *const *keys, int64_t *out)
{
    for (; *keys; keys++) {
        json_t *v = json_object_get(cfg, *keys);
        if (v && !json_is_null(v))
            return mf_hf_json_int(v, out);
    }
    return false;
}

static int geometry_from_config(const json_t *cfg0, mf_estimate *e, mf_status *st, const char *path)
{
    const json_t *cfg = text_config(cfg0);
    static const char *const layers[] = {"num_hidden_layers", "n_layer", "n_layers", "num_layers", NULL};
    static const char *const heads[] = {"num_attention_heads", "n_head", "n_heads", NULL};
    static const char *const kv[] = {"num_key_value_heads", "n_head_kv", "num_kv_heads", NULL};
    static const char *const hidden[] = {"hidden_size", "n_embd", "d_model", NULL};
    static const char *const ctx[] = {"max_position_embeddings", "n_positions", "n_ctx", "max_seq_len",
                                      "seq_length", NULL};
    int64_t h = 0, nh = 0;
    if (!first_int(cfg, layers, &e->n_layers) || !first_int(cfg, heads, &nh) || nh <= 0 ||
        e->n_layers < 0)
        return mf_fail(st, MF_ERR_FORMAT, path, -1,
                       "config.json has no usable num_hidden_layers / num_attention_heads");
    e->n_heads = nh;
    if (!first_int(cfg, kv, &e->n_kv_heads))
        e->n_kv_heads = json_is_true(json_object_get(cfg, "multi_query")) ? 1 : nh;
    first_int(cfg, hidden, &h);
    e->hidden = h;
    json_t *hd = json_object_get(cfg, "head_dim");
    if (!(hd && mf_hf_json_int(hd, &e->head_dim_k)))
        e->head_dim_k = h / nh;
    e->head_dim_v = e->head_dim_k;
    if (!first_int(cfg, ctx, &e->ctx_train))
        e->ctx_train = 0;
    const char *mt = json_string_value(json_object_get(cfg, "model_type"));
    snprintf(e->arch, sizeof(e->arch), "%s", mt ? mt : "unknown");
    return 0;
}

static int64_t meta_int(const mf_model *m, const char *arch, const char *suffix, int64_t dflt)
{
    char key[160];
    snprintf(key, sizeof(key), "%s.%s", arch, suffix);
    const mf_value *v = mf_meta_get(m, key);
    if (!v)
        return dflt;
    if (v->type == MF_V_ARR && v->as.arr.n) { /* per-layer values: the largest */
        int64_t mx = 0;
        for (size_t i = 0; i < v->as.arr.n; i++) {
            const mf_value *x = &v->as.arr.items[i];
            int64_t y = x->type == MF_V_I8 || x->type == MF_V_I16 || x->type == MF_V_I32 || x->type == MF_V_I64
                            ? x->as.i : (int64_t)x->as.u;
            mx = y > mx ? y : mx;
        }
        return mx;
    }
    if (v->type == MF_V_I8 || v->type == MF_V_I16 || v->type == MF_V_I32 || v->type == MF_V_I64)
        return v->as.i;
    if (v->type <= MF_V_U64 && v->type != MF_V_F32 && v->type != MF_V_STR && v->type != MF_V_BOOL)
        return (int64_t)v->as.u;
    return dflt;
}

static int geometry_from_gguf(const mf_model *m, mf_estimate *e, mf_status *st)
{
    const mf_value *a = mf_meta_get(m, "general.architecture");
    if (!a || a->type != MF_V_STR)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "no general.architecture: the KV cache cannot be sized");
    snprintf(e->arch, sizeof(e->arch), "%s", a->as.s.ptr);
    e->n_layers = meta_int(m, e->arch, "block_count", -1);
    e->n_heads = meta_int(m, e->arch, "attention.head_count", -1);
    if (e->n_layers < 0 || e->n_heads <= 0)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "no %s.block_count / attention.head_count", e->arch);
    e->n_kv_heads = meta_int(m, e->arch, "attention.head_count_kv", e->n_heads);
    e->hidden = meta_int(m, e->arch, "embedding_length", 0);
    e->head_dim_k = meta_int(m, e->arch, "attention.key_length", e->hidden / e->n_heads);
    e->head_dim_v = meta_int(m, e->arch, "attention.value_length", e->hidden / e->n_heads);
    e->ctx_train = meta_int(m, e->arch, "context_length", 0);
    return 0;
}

/* The dtype that holds the most parameters (not the largest tensor's: in
 * a Q4_K_M file output.weight alone is Q6_K and the biggest tensor). */
static mf_dtype dtype_of_most_params(const mf_model *m)
{
    struct { mf_dtype dt; uint64_t params; } seen[64];
    size_t n_seen = 0;
    mf_dtype best = MF_DTYPE_INVALID;
    uint64_t most = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        uint64_t n = mf_tensor_nelems(&m->tensors[i]);
        size_t k = 0;
        while (k < n_seen && seen[k].dt != m->tensors[i].dtype)
            k++;
        if (k == n_seen) {
            if (n_seen == 64)
                continue;
            seen[n_seen].dt = m->tensors[i].dtype;
            seen[n_seen++].params = 0;
        }
        seen[k].params += n == UINT64_MAX ? 0 : n;
        if (best == MF_DTYPE_INVALID || seen[k].params > most) {
            most = seen[k].params;
            best = seen[k].dt;
        }
    }
    return best;
}

static void weights_from_tensors(const mf_model *m, mf_estimate *e)
{
    e->n_params = 0;
    e->weight_bytes = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        uint64_t n = mf_tensor_nelems(&m->tensors[i]);
        e->n_params += n == UINT64_MAX ? 0 : n;
        e->weight_bytes += m->tensors[i].nbytes;
    }
    mf_dtype dt = dtype_of_most_params(m);
    if (dt == MF_DTYPE_INVALID)
        snprintf(e->weight_type, sizeof(e->weight_type), "no tensors");
    else
        snprintf(e->weight_type, sizeof(e->weight_type), "as stored (mostly %s)", mf_dtype_name(dt));
}

/* A pre-quantized checkpoint: the parameters are the logical weights'
 * (the reader's logical view), the bytes those its quantizer keeps in
 * memory: the packed tensors as stored, give or take what each loader
 * drops or adds (mf_hf_prequant_memory). */
static void quantized_params(const mf_model *m, const json_t *cfg, mf_estimate *e)
{
    const json_t *qc = json_object_get(cfg, "quantization_config");
    mf_model *view = NULL;
    mf_status vs;
    mf_status_init(&vs);
    if (!json_is_object(qc) || mf_model_logical_view_as(m, MF_DTYPE_INVALID, &view, &vs) || !view) {
        mf_status_clear(&vs);
        return;
    }
    mf_status_clear(&vs);
    e->n_params = 0;
    for (size_t i = 0; i < view->n_tensors; i++) {
        uint64_t n = mf_tensor_nelems(&view->tensors[i]);
        e->n_params += n == UINT64_MAX ? 0 : n;
    }
    mf_close(view);
    const char *qm = json_string_value(json_object_get(qc, "quant_method"));
    snprintf(e->weight_type, sizeof(e->weight_type), "%.20s, packed as stored", qm ? qm : "quantized");
    uint64_t b;
    if (mf_hf_prequant_memory(m, &b, e->weight_note, sizeof(e->weight_note))) {
        e->weight_bytes = b;
        snprintf(e->weight_type, sizeof(e->weight_type), "%.20s, packed, as its quantizer holds it",
                 qm ? qm : "quantized");
    }
}

/* MXFP4_MOE (llama.cpp after b4747) puts MoE expert matrices in MXFP4 and
 * the rest of what it quantizes in Q8_0, so its average depends on how much
 * of the model the experts are. Without GGUF names (a Hugging Face
 * directory) it is counted from the HF names: experts ("...experts...",
 * or a 3-D stack) MXFP4, other matrices Q8_0, and what llama-quantize copies as F32 -
 * vectors (one dimension that is not 1) and MoE routers ("mlp.gate",
 * "router", "gate_inp"). */
#define MXFP4_MOE_NOTE                                                                               \
    "from the names: experts' matrices at MXFP4 (4.25 bits), other matrices at Q8_0 (8.5), vectors "   \
    "and routers F32"

static bool is_expert_name(const char *n)
{
    return strstr(n, ".experts.") || strstr(n, "_exps.") || strstr(n, "experts.") == n;
}

static bool is_router_name(const char *n)
{
    size_t l = strlen(n);
    return strstr(n, "router") || strstr(n, "gate_inp") ||
           (l > 12 && !strcmp(n + l - 12, ".gate.weight"));
}

static void mxfp4_moe_add(const char *name, int ndim, const int64_t *shape, uint64_t nelems, uint64_t *bits)
{
    int dims = 0;
    for (int d = 0; d < ndim; d++)
        dims += shape[d] != 1;
    /* a 3-D matrix is a stack of experts (GraniteMoE's input_linear, gpt-oss) */
    double bpw = dims < 2 || is_router_name(name) ? 32.0 : dims > 2 || is_expert_name(name) ? 4.25 : 8.5;
    *bits += (uint64_t)ceil((double)nelems * bpw);
}

static int torch_dtype_bytes(const json_t *cfg)
{
    const char *t = json_string_value(json_object_get(cfg, "torch_dtype"));
    if (!t)
        t = json_string_value(json_object_get(cfg, "dtype"));
    if (t && (!strcmp(t, "float16") || !strcmp(t, "bfloat16")))
        return 2;
    if (t && !strcmp(t, "float64"))
        return 8;
    return 4; /* transformers loads float32 unless told otherwise */
}

static int weights_from_config(const json_t *cfg0, mf_estimate *e, uint64_t *mxfp4_moe_bytes, const char *path,
                               mf_status *st)
{
    const json_t *cfg = text_config(cfg0);
    mf_hf_shape *v;
    size_t n;
    bool tied;
    mf_status why;
    mf_status_init(&why);
    if (mf_hf_expected_tensors(cfg, &v, &n, &tied, &why)) {
        mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                "no weights to measure and the parameters cannot be computed: %s", why.msg);
        mf_status_clear(&why);
        return -1;
    }
    e->n_params = 0;
    uint64_t bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].optional) /* a tied lm_head is the embedding */
            continue;
        uint64_t k = 1;
        for (int d = 0; d < v[i].ndim; d++)
            k *= (uint64_t)v[i].shape[d];
        e->n_params += k;
        mxfp4_moe_add(v[i].name, v[i].ndim, v[i].shape, k, &bits);
    }
    *mxfp4_moe_bytes = (bits + 7) / 8;
    mf_hf_shapes_free(v, n);
    int b = torch_dtype_bytes(cfg0);
    e->weight_bytes = e->n_params * (uint64_t)b;
    e->params_from_config = true;
    snprintf(e->weight_type, sizeof(e->weight_type), "as config.json's torch_dtype (%d bytes)", b);
    return 0;
}


/* ------------------------------------------------- a mix, per tensor */

/* A GGUF and a llama-quantize mix (Q4_K_M, MXFP4_MOE, IQ4_XS, ...): the
 * bytes the quantized file's tensors would take, tensor by tensor, with the
 * type llama-quantize's rules choose for each (mf_qmix, visited in its
 * order: the attn_v / ffn_down rules count along it), instead of the
 * README's average bits per weight measured on Llama 2 7B. No imatrix is
 * assumed unless the type needs one (with one, Q4_0/Q5_0/IQ4_XS/IQ3_XXS
 * choose a little differently for ffn_down). Returns false (e untouched) when the
 * rules refuse the model; the caller then keeps the average. */
typedef struct mix_item {
    const mf_tensor *t;
    size_t index;
} mix_item;

static int mix_item_cmp(const void *a, const void *b)
{
    const mix_item *x = a, *y = b;
    int c = mf_qmix_name_cmp(x->t->name, y->t->name);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

static bool mix_tensor_bytes(mf_qmix *q, const mf_tensor *t, uint64_t *bytes, uint64_t *changed,
                             const mf_tensor **requant)
{
    if (t->ndim > 4)
        return false;
    int64_t ne[4];
    for (int i = 0; i < 4; i++)
        ne[i] = i < t->ndim ? t->shape[t->ndim - 1 - i] : 1;
    bool fallback = false;
    mf_status st;
    mf_status_init(&st);
    mf_dtype d = mf_qmix_choose(q, t->name, ne, t->dtype, &fallback, &st);
    mf_status_clear(&st);
    if (d == MF_DTYPE_INVALID)
        return false;
    uint64_t b = t->nbytes;
    if (d != t->dtype) {
        if (mf_dtype_nbytes(d, mf_tensor_nelems(t), &b))
            return false;
        (*changed)++;
        const mf_dtype_info *si = mf_dtype_info_of(t->dtype);
        if (si && si->is_quant && !*requant)
            *requant = t;
    }
    *bytes += b;
    return true;
}

static bool weights_at_mix_gguf(const mf_model *m, mf_ftype ft, int rules, mf_estimate *e)
{
    mf_qmix_params mp;
    mf_qmix_params_init(&mp, ft);
    mp.rules = rules == MF_MIX_RULES_B10256 ? MF_MIX_RULES_B10256 : MF_MIX_RULES_ECBCB7EA;
    mp.has_imatrix = mf_ftype_needs_imatrix(ft);
    mf_qmix_hparams h;
    mf_qmix_hparams_from_model(m, &h);
    if (!h.arch)
        return false;
    mf_qmix q;
    mf_qmix_init(&q, &mp, &h);
    mix_item *ord = calloc(m->n_tensors ? m->n_tensors : 1, sizeof(*ord));
    if (!ord)
        return false;
    for (size_t i = 0; i < m->n_tensors; i++) {
        ord[i] = (mix_item){&m->tensors[i], i};
        mf_qmix_count(&q, m->tensors[i].name);
    }
    qsort(ord, m->n_tensors, sizeof(*ord), mix_item_cmp);
    uint64_t bytes = 0, changed = 0;
    const mf_tensor *requant = NULL;
    bool ok = true;
    for (size_t i = 0; ok && i < m->n_tensors; i++)
        ok = mix_tensor_bytes(&q, ord[i].t, &bytes, &changed, &requant);
    free(ord);
    if (!ok)
        return false;
    e->weight_bytes = bytes;
    snprintf(e->weight_type, sizeof(e->weight_type), "%s", mf_ftype_name(ft));
    snprintf(e->weight_note, sizeof(e->weight_note),
             "per tensor, the types llama-quantize's %s rules choose for this file %s (%llu of %zu "
             "tensors requantized, the rest copied)",
             mf_ftype_name(ft), mp.has_imatrix ? "with an imatrix" : "without an imatrix",
             (unsigned long long)changed, m->n_tensors);
    if (requant) /* llama-quantize: "requantizing from type %s is disabled" */
        snprintf(e->weight_note + strlen(e->weight_note), sizeof(e->weight_note) - strlen(e->weight_note),
                 "; llama-quantize refuses it without --allow-requantize: %.60s is already %s", requant->name,
                 mf_dtype_name(requant->dtype));
    return true;
}

static uint64_t mxfp4_moe_bytes_of(const mf_model *m)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        uint64_t n = mf_tensor_nelems(&m->tensors[i]);
        mxfp4_moe_add(m->tensors[i].name, m->tensors[i].ndim, m->tensors[i].shape, n == UINT64_MAX ? 0 : n,
                      &bits);
    }
    return (bits + 7) / 8;
}

/* ------------------------------------------------------------ totals */

/* The weights at the type asked for: per tensor where the model's tensors
 * are at hand (m: a GGUF's exact mix; MXFP4_MOE from any model's names),
 * else the type's (or the mix's average) bits per weight. */
static int weights_at_type(mf_estimate *e, const char *type, int rules, const mf_model *m,
                           uint64_t mxfp4_moe_bytes, const char *path, mf_status *st)
{
    mf_ftype ft = mf_ftype_parse(type);
    e->weight_note[0] = 0;
    if (m && m->format == MF_FMT_GGUF && ft != MF_FTYPE_INVALID && weights_at_mix_gguf(m, ft, rules, e))
        return 0;
    if (ft == MF_FTYPE_MXFP4_MOE && m)
        mxfp4_moe_bytes = mxfp4_moe_bytes_of(m);
    if (ft == MF_FTYPE_MXFP4_MOE && mxfp4_moe_bytes) {
        e->weight_bytes = mxfp4_moe_bytes;
        snprintf(e->weight_type, sizeof(e->weight_type), "MXFP4_MOE");
        snprintf(e->weight_note, sizeof(e->weight_note), "%s", MXFP4_MOE_NOTE);
        return 0;
    }
    double bpw;
    char canon[32];
    if (mf_type_bpw(type, &bpw, canon, sizeof(canon)))
        return mf_fail(st, MF_ERR_USAGE, path, -1,
                       "weight type \"%s\" unknown (F16, BF16, Q8_0, Q4_0, Q4_K_M, Q5_K_M, MXFP4_MOE, ...)",
                       type);
    e->weight_bytes = (uint64_t)ceil((double)e->n_params * bpw / 8.0);
    snprintf(e->weight_type, sizeof(e->weight_type), "%s", canon);
    return 0;
}

static int apply_options(mf_estimate *e, const mf_estimate_opts *o, const mf_model *m, uint64_t mxfp4_moe_bytes,
                         const char *path, mf_status *st)
{
    e->batch = o && o->batch > 0 ? o->batch : 1;
    e->ctx = o && o->ctx > 0 ? o->ctx : e->ctx_train > 0 ? e->ctx_train : 4096;
    const char *kvt = o && o->kv_type ? o->kv_type : "f16";
    mf_dtype kdt;
    char up[32];
    size_t kl = strlen(kvt);
    for (size_t i = 0; i <= kl && i < sizeof(up); i++)
        up[i] = (char)(kvt[i] >= 'a' && kvt[i] <= 'z' ? kvt[i] - 32 : kvt[i]);
    up[sizeof(up) - 1] = 0;
    kdt = mf_dtype_from_name(up);
    const mf_dtype_info *kdi = kdt == MF_DTYPE_INVALID ? NULL : mf_dtype_info_of(kdt);
    if (!kdi || kdi->ggml_id < 0 || !kdi->is_float || kdi->block_bytes == 0)
        return mf_fail(st, MF_ERR_USAGE, path, -1, "KV cache type \"%s\" unknown (f32, f16, bf16, q8_0, q4_0, ...)", kvt);
    snprintf(e->kv_type, sizeof(e->kv_type), "%s", kdi->name);
    e->kv_bytes_per_elem = (double)kdi->block_bytes / kdi->block_elems;
    /* per layer and token: K (kv heads x key dim) and V (kv heads x value dim), whole blocks */
    uint64_t kb, vb, nk = (uint64_t)(e->n_kv_heads * e->head_dim_k), nv = (uint64_t)(e->n_kv_heads * e->head_dim_v);
    kb = (nk + kdi->block_elems - 1) / kdi->block_elems * kdi->block_bytes;
    vb = (nv + kdi->block_elems - 1) / kdi->block_elems * kdi->block_bytes;
    uint64_t per_token = kb + vb, t;
    if (mf_mul_ovf(per_token, (uint64_t)e->n_layers, &t) || mf_mul_ovf(t, (uint64_t)e->ctx, &t) ||
        mf_mul_ovf(t, (uint64_t)e->batch, &e->kv_bytes))
        return mf_fail(st, MF_ERR_USAGE, path, -1, "KV cache size overflows 64 bits");
    if (o && o->weight_type && weights_at_type(e, o->weight_type, o->mix_rules, m, mxfp4_moe_bytes, path, st))
        return -1;
    e->weight_bpw = e->n_params ? 8.0 * (double)e->weight_bytes / (double)e->n_params : 0;
    e->total_bytes = e->weight_bytes + e->kv_bytes;
    return 0;
}

int mf_estimate_config(const json_t *cfg, const mf_estimate_opts *o, mf_estimate *e, mf_status *st)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->source, sizeof(e->source), "config.json");
    uint64_t moe = 0;
    if (geometry_from_config(cfg, e, st, "config.json") || weights_from_config(cfg, e, &moe, "config.json", st))
        return -1;
    return apply_options(e, o, NULL, moe, "config.json", st);
}

/* A Hugging Face directory: the weights when they are there and readable,
 * else computed from config.json. */
static int estimate_hf_dir(const char *path, const mf_estimate_opts *o, mf_estimate *e, mf_status *st)
{
    json_t *cfg = mf_hf_load_config(path, true, st);
    if (!cfg)
        return -1;
    int rc = json_is_object(cfg) ? geometry_from_config(cfg, e, st, path)
                                 : mf_fail(st, MF_ERR_FORMAT, path, -1, "config.json is not an object");
    mf_model *m = NULL;
    uint64_t moe = 0;
    if (rc == 0) {
        mf_status sub;
        mf_status_init(&sub);
        if (mf_open_model(path, 0, &m, &sub) == 0 && m->n_tensors) {
            weights_from_tensors(m, e);
            quantized_params(m, cfg, e);
            snprintf(e->source, sizeof(e->source), "weights");
        } else {
            mf_close(m);
            m = NULL;
            rc = weights_from_config(cfg, e, &moe, path, st);
            snprintf(e->source, sizeof(e->source), "config.json");
        }
        mf_status_clear(&sub);
    }
    /* a pre-quantized checkpoint's stored tensors are packed: a mix is
     * counted over its logical (dequantized) tensors */
    bool packed = json_is_object(json_object_get(cfg, "quantization_config"));
    json_decref(cfg);
    mf_model *view = NULL;
    if (rc == 0 && m && packed) {
        mf_status vs;
        mf_status_init(&vs);
        if (mf_model_logical_view_as(m, MF_DTYPE_INVALID, &view, &vs))
            view = NULL;
        mf_status_clear(&vs);
    }
    if (rc == 0)
        rc = apply_options(e, o, packed ? view : m, moe, path, st);
    mf_close(view);
    mf_close(m);
    return rc ? -1 : 0;
}

int mf_estimate_path_into(const char *path, const mf_estimate_opts *o, mf_estimate *e,
                          mf_status *st)
{
    memset(e, 0, sizeof(*e));
    if (mf_is_dir(path))
        return estimate_hf_dir(path, o, e, st);
    mf_model *m;
    if (mf_open_model(path, 0, &m, st))
        return -1;
    int rc = 0;
    if (m->format == MF_FMT_GGUF) {
        rc = geometry_from_gguf(m, e, st);
        snprintf(e->source, sizeof(e->source), "gguf");
    } else {
        rc = mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                     "a %s file has no model geometry: give its Hugging Face directory (config.json) or a GGUF file",
                     mf_format_name(m->format));
    }
    if (rc == 0) {
        weights_from_tensors(m, e);
        rc = apply_options(e, o, m, 0, path, st);
    }
    mf_close(m);
    return rc ? -1 : 0;
}

void mf_estimate_opts_init(mf_estimate_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

int mf_estimate_path(const char *path, const mf_estimate_opts *opts, mf_estimate **out,
                     mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_estimate_opts o;
    mf_estimate_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_estimate_opts", st))
        return -1;
    mf_estimate *e = calloc(1, sizeof(*e));
    if (!e)
        return mf_oom(st, path);
    if (mf_estimate_path_into(path, &o, e, st)) {
        free(e);
        return -1;
    }
    *out = e;
    return 0;
}

void mf_estimate_free(mf_estimate *e)
{
    free(e);
}
