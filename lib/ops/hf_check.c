/* hf_check.c - the load report of a Hugging Face directory: the parameter
 * names and shapes transformers' modeling code declares for the config
 * (modeling_llama/mistral/qwen2/qwen3/gemma/gemma2/phi3/gpt2.py), against
 * the tensors the weights hold: missing, unexpected and shape-mismatched
 * keys, as from_pretrained would warn about or refuse them.
 *  - tie_word_embeddings (each architecture's default when absent): the
 *    output head shares the embedding; lm_head.weight may be absent;
 *  - a checkpoint of the base model (no "model." / "transformer." prefix)
 *    is compared without the prefix, as from_pretrained loads it;
 *  - buffers transformers ignores (rotary_emb.inv_freq, GPT-2's attn.bias
 *    and attn.masked_bias) are not unexpected;
 *  - quantized checkpoints (quantization_config) hold other names and
 *    shapes: not checked. */
#include "ops/hf_ops.h"

#include <stdlib.h>

typedef mf_hf_shape expect;

typedef struct builder {
    expect *v;
    size_t n, cap;
    bool oom;
} builder;

static void add(builder *b, bool optional, int ndim, int64_t d0, int64_t d1, const char *fmt, ...)
    MF_PRINTF(6, 7);
static void add(builder *b, bool optional, int ndim, int64_t d0, int64_t d1, const char *fmt, ...)
{
    if (b->oom)
        return;
    if (b->n == b->cap && mf_vec_grow((void **)&b->v, &b->cap, b->n + 1, sizeof(expect))) {
        b->oom = true;
        return;
    }
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    expect *e = &b->v[b->n];
    e->name = strdup(name);
    if (!e->name) {
        b->oom = true;
        return;
    }
    e->ndim = ndim;
    e->shape[0] = d0;
    e->shape[1] = d1;
    e->optional = optional;
    b->n++;
}

typedef struct dims {
    int64_t H, L, nH, nKV, hd, I, V, P;
    bool tie, attn_bias, mlp_bias;
} dims;

static bool cfg_int(const json_t *cfg, const char *key, int64_t *out)
{
    json_t *v = json_object_get(cfg, key);
    return v && !json_is_null(v) && mf_hf_json_int(v, out);
}

static bool cfg_bool(const json_t *cfg, const char *key, bool dflt)
{
    json_t *v = json_object_get(cfg, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* The decoder-only llama family: llama, mistral, qwen2, qwen3, gemma, gemma2. */
static void llama_like(builder *b, const dims *d, const char *mt)
{
    bool qwen2 = !strcmp(mt, "qwen2"), qwen3 = !strcmp(mt, "qwen3"), gemma2 = !strcmp(mt, "gemma2");
    bool qkv_bias = qwen2 || d->attn_bias, o_bias = d->attn_bias && !qwen2;
    int64_t q = d->nH * d->hd, kv = d->nKV * d->hd;
    add(b, false, 2, d->V, d->H, "model.embed_tokens.weight");
    for (int64_t l = 0; l < d->L; l++) {
        const char *p = "model.layers";
        add(b, false, 1, d->H, 0, "%s.%lld.input_layernorm.weight", p, (long long)l);
        add(b, false, 2, q, d->H, "%s.%lld.self_attn.q_proj.weight", p, (long long)l);
        add(b, false, 2, kv, d->H, "%s.%lld.self_attn.k_proj.weight", p, (long long)l);
        add(b, false, 2, kv, d->H, "%s.%lld.self_attn.v_proj.weight", p, (long long)l);
        add(b, false, 2, d->H, q, "%s.%lld.self_attn.o_proj.weight", p, (long long)l);
        if (qkv_bias) {
            add(b, false, 1, q, 0, "%s.%lld.self_attn.q_proj.bias", p, (long long)l);
            add(b, false, 1, kv, 0, "%s.%lld.self_attn.k_proj.bias", p, (long long)l);
            add(b, false, 1, kv, 0, "%s.%lld.self_attn.v_proj.bias", p, (long long)l);
        }
        if (o_bias)
            add(b, false, 1, d->H, 0, "%s.%lld.self_attn.o_proj.bias", p, (long long)l);
        if (qwen3) {
            add(b, false, 1, d->hd, 0, "%s.%lld.self_attn.q_norm.weight", p, (long long)l);
            add(b, false, 1, d->hd, 0, "%s.%lld.self_attn.k_norm.weight", p, (long long)l);
        }
        add(b, false, 1, d->H, 0, "%s.%lld.post_attention_layernorm.weight", p, (long long)l);
        if (gemma2) {
            add(b, false, 1, d->H, 0, "%s.%lld.pre_feedforward_layernorm.weight", p, (long long)l);
            add(b, false, 1, d->H, 0, "%s.%lld.post_feedforward_layernorm.weight", p, (long long)l);
        }
        add(b, false, 2, d->I, d->H, "%s.%lld.mlp.gate_proj.weight", p, (long long)l);
        add(b, false, 2, d->I, d->H, "%s.%lld.mlp.up_proj.weight", p, (long long)l);
        add(b, false, 2, d->H, d->I, "%s.%lld.mlp.down_proj.weight", p, (long long)l);
        if (d->mlp_bias) {
            add(b, false, 1, d->I, 0, "%s.%lld.mlp.gate_proj.bias", p, (long long)l);
            add(b, false, 1, d->I, 0, "%s.%lld.mlp.up_proj.bias", p, (long long)l);
            add(b, false, 1, d->H, 0, "%s.%lld.mlp.down_proj.bias", p, (long long)l);
        }
    }
    add(b, false, 1, d->H, 0, "model.norm.weight");
    add(b, d->tie, 2, d->V, d->H, "lm_head.weight");
}

static void phi3(builder *b, const dims *d)
{
    int64_t op = d->nH * d->hd, qkv = op + 2 * d->nKV * d->hd;
    add(b, false, 2, d->V, d->H, "model.embed_tokens.weight");
    for (int64_t l = 0; l < d->L; l++) {
        add(b, false, 1, d->H, 0, "model.layers.%lld.input_layernorm.weight", (long long)l);
        add(b, false, 2, qkv, d->H, "model.layers.%lld.self_attn.qkv_proj.weight", (long long)l);
        add(b, false, 2, d->H, op, "model.layers.%lld.self_attn.o_proj.weight", (long long)l);
        add(b, false, 1, d->H, 0, "model.layers.%lld.post_attention_layernorm.weight", (long long)l);
        add(b, false, 2, 2 * d->I, d->H, "model.layers.%lld.mlp.gate_up_proj.weight", (long long)l);
        add(b, false, 2, d->H, d->I, "model.layers.%lld.mlp.down_proj.weight", (long long)l);
    }
    add(b, false, 1, d->H, 0, "model.norm.weight");
    add(b, d->tie, 2, d->V, d->H, "lm_head.weight");
}

/* GPT-2's Conv1D layers store weights as [in, out]. */
static void gpt2(builder *b, const dims *d)
{
    int64_t E = d->H, inner = d->I;
    add(b, false, 2, d->V, E, "transformer.wte.weight");
    add(b, false, 2, d->P, E, "transformer.wpe.weight");
    for (int64_t l = 0; l < d->L; l++) {
        long long i = (long long)l;
        add(b, false, 1, E, 0, "transformer.h.%lld.ln_1.weight", i);
        add(b, false, 1, E, 0, "transformer.h.%lld.ln_1.bias", i);
        add(b, false, 2, E, 3 * E, "transformer.h.%lld.attn.c_attn.weight", i);
        add(b, false, 1, 3 * E, 0, "transformer.h.%lld.attn.c_attn.bias", i);
        add(b, false, 2, E, E, "transformer.h.%lld.attn.c_proj.weight", i);
        add(b, false, 1, E, 0, "transformer.h.%lld.attn.c_proj.bias", i);
        add(b, false, 1, E, 0, "transformer.h.%lld.ln_2.weight", i);
        add(b, false, 1, E, 0, "transformer.h.%lld.ln_2.bias", i);
        add(b, false, 2, E, inner, "transformer.h.%lld.mlp.c_fc.weight", i);
        add(b, false, 1, inner, 0, "transformer.h.%lld.mlp.c_fc.bias", i);
        add(b, false, 2, inner, E, "transformer.h.%lld.mlp.c_proj.weight", i);
        add(b, false, 1, E, 0, "transformer.h.%lld.mlp.c_proj.bias", i);
    }
    add(b, false, 1, E, 0, "transformer.ln_f.weight");
    add(b, false, 1, E, 0, "transformer.ln_f.bias");
    add(b, d->tie, 2, d->V, E, "lm_head.weight");
}

static int read_dims(const json_t *cfg, const char *mt, dims *d, mf_status *st)
{
    memset(d, 0, sizeof(*d));
    bool gpt = !strcmp(mt, "gpt2");
    const char *hk = gpt ? "n_embd" : "hidden_size", *lk = gpt ? "n_layer" : "num_hidden_layers",
               *nk = gpt ? "n_head" : "num_attention_heads";
    if (!cfg_int(cfg, hk, &d->H) || !cfg_int(cfg, lk, &d->L) || !cfg_int(cfg, nk, &d->nH) ||
        !cfg_int(cfg, "vocab_size", &d->V)) {
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1,
                       "config.json lacks %s, %s, %s or vocab_size", hk, lk, nk);
    }
    if (d->H <= 0 || d->L < 0 || d->L > 100000 || d->nH <= 0 || d->V <= 0) {
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1, "config.json sizes out of range");
    }
    if (!cfg_int(cfg, "num_key_value_heads", &d->nKV))
        d->nKV = d->nH;
    if (!cfg_int(cfg, "head_dim", &d->hd))
        d->hd = d->H / d->nH;
    if (gpt) {
        if (!cfg_int(cfg, "n_inner", &d->I))
            d->I = 4 * d->H;
        if (!cfg_int(cfg, "n_positions", &d->P))
            d->P = 1024;
    } else if (!cfg_int(cfg, "intermediate_size", &d->I)) {
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1, "config.json lacks intermediate_size");
    }
    bool tie_default = !strcmp(mt, "gemma") || !strcmp(mt, "gemma2") || gpt;
    d->tie = cfg_bool(cfg, "tie_word_embeddings", tie_default);
    d->attn_bias = cfg_bool(cfg, "attention_bias", false);
    d->mlp_bias = cfg_bool(cfg, "mlp_bias", false);
    if (strcmp(mt, "llama") && strcmp(mt, "qwen3") && strcmp(mt, "gemma") && strcmp(mt, "gemma2"))
        d->attn_bias = false;
    if (strcmp(mt, "llama"))
        d->mlp_bias = false;
    return 0;
}

static bool ignored_buffer(const char *name)
{
    size_t n = strlen(name);
    static const char *const tails[] = {".rotary_emb.inv_freq", ".attn.bias", ".attn.masked_bias", NULL};
    for (size_t i = 0; tails[i]; i++) {
        size_t k = strlen(tails[i]);
        if (n >= k && !strcmp(name + n - k, tails[i]))
            return true;
    }
    return false;
}

static char *shape_text(int ndim, const int64_t *s)
{
    char buf[128];
    size_t k = (size_t)snprintf(buf, sizeof(buf), "[");
    for (int i = 0; i < ndim && k < sizeof(buf); i++)
        k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (k < sizeof(buf))
        snprintf(buf + k, sizeof(buf) - k, "]");
    return strdup(buf);
}

static int push(char ***v, size_t *n, char *s)
{
    if (!s)
        return -1;
    char **nv = realloc(*v, (*n + 1) * sizeof(char *));
    if (!nv) {
        free(s);
        return -1;
    }
    *v = nv;
    (*v)[(*n)++] = s;
    return 0;
}

static char *fmt_str(const char *fmt, ...) MF_PRINTF(1, 2);
static char *fmt_str(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static int compare(const mf_model *m, builder *b, const char *prefix, mf_load_report *r)
{
    /* a base-model checkpoint: compare without the prefix */
    bool has_prefix = false;
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < m->n_tensors && !has_prefix; i++)
        has_prefix = !strncmp(m->tensors[i].name, prefix, pl) && m->tensors[i].name[pl] == '.';
    if (!has_prefix && m->n_tensors)
        for (size_t i = 0; i < b->n; i++)
            if (!strncmp(b->v[i].name, prefix, pl) && b->v[i].name[pl] == '.')
                memmove(b->v[i].name, b->v[i].name + pl + 1, strlen(b->v[i].name + pl + 1) + 1);
    mf_strset expected = {0};
    for (size_t i = 0; i < b->n; i++)
        if (mf_strset_add(&expected, b->v[i].name) < 0) {
            mf_strset_free(&expected);
            return -1;
        }
    int rc = 0;
    r->n_expected = 0;
    for (size_t i = 0; i < b->n && rc == 0; i++) {
        const expect *e = &b->v[i];
        r->n_expected += !e->optional;
        const mf_tensor *t = mf_tensor_find(m, e->name);
        if (!t) {
            if (!e->optional)
                rc = push(&r->missing, &r->n_missing, strdup(e->name));
            continue;
        }
        r->n_found++;
        bool same = t->ndim == e->ndim;
        for (int d = 0; same && d < e->ndim; d++)
            same = t->shape[d] == e->shape[d];
        if (!same) {
            char *have = shape_text(t->ndim, t->shape), *want = shape_text(e->ndim, e->shape);
            rc = push(&r->mismatched, &r->n_mismatched,
                      have && want ? fmt_str("%s: shape %s, config implies %s", e->name, have, want) : NULL);
            free(have);
            free(want);
        }
    }
    for (size_t i = 0; i < m->n_tensors && rc == 0; i++) {
        const char *name = m->tensors[i].name;
        if (!mf_strset_has(&expected, name) && !ignored_buffer(name))
            rc = push(&r->unexpected, &r->n_unexpected, strdup(name));
    }
    mf_strset_free(&expected);
    return rc;
}

static const char *const known_types[] = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2",
                                          "phi3", "gpt2", NULL};

/* The builder for cfg's model_type; -1 with st (MF_ERR_UNSUPPORTED: why
 * not, no file named) when there is none. */
static int build_expected(const json_t *cfg, builder *b, dims *d, const char **arch, mf_status *st)
{
    const char *mt = json_string_value(json_object_get(cfg, "model_type"));
    size_t k = 0;
    while (mt && known_types[k] && strcmp(known_types[k], mt))
        k++;
    if (!mt || !known_types[k]) {
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1,
                       "model_type %s is not one mfmt knows the tensors of", mt ? mt : "(none)");
    }
    if (read_dims(cfg, mt, d, st))
        return -1;
    *arch = known_types[k];
    if (!strcmp(mt, "phi3"))
        phi3(b, d);
    else if (!strcmp(mt, "gpt2"))
        gpt2(b, d);
    else
        llama_like(b, d, mt);
    return 0;
}

int mf_hf_expected_tensors(const json_t *cfg, mf_hf_shape **out, size_t *n, bool *tied,
                           mf_status *st)
{
    builder b = {0};
    dims d;
    const char *arch;
    *out = NULL;
    *n = 0;
    if (build_expected(cfg, &b, &d, &arch, st)) {
        for (size_t i = 0; i < b.n; i++)
            free(b.v[i].name);
        free(b.v);
        return -1;
    }
    if (b.oom) {
        for (size_t i = 0; i < b.n; i++)
            free(b.v[i].name);
        free(b.v);
        return mf_oom(st, NULL);
    }
    if (tied)
        *tied = d.tie;
    *out = (mf_hf_shape *)b.v; /* same layout */
    *n = b.n;
    return 0;
}

void mf_hf_shapes_free(mf_hf_shape *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

static int load_report_fill_view(const mf_model *m, mf_load_report *r, mf_status *st);

/* transformers' AUTO_QUANTIZER_MAPPING (quantizers/auto.py) for the
 * methods mfmt reads, and what each needs to load the packed weights. */
static const struct {
    const char *method, *quantizer, *requires;
} quantizers[] = {
    {"gptq", "GptqHfQuantizer", "optimum and gptqmodel (or auto-gptq) for the packed kernels"},
    {"awq", "AwqQuantizer", "autoawq; its gemm kernels need a CUDA device (CPU: ipex)"},
    {"fp8", "FineGrainedFP8HfQuantizer",
     "a CUDA device of compute capability >= 8.9 for the FP8 kernels (else dequantized)"},
    {"fbgemm_fp8", "FbgemmFp8HfQuantizer", "fbgemm-gpu and a CUDA device of compute capability >= 9.0"},
    {"compressed-tensors", "CompressedTensorsHfQuantizer", "the compressed-tensors package"},
    {"mxfp4", "Mxfp4HfQuantizer",
     "triton and the kernels package for MXFP4 matmuls on a GPU; else dequantized to bf16"},
    {"bitsandbytes", "Bnb4BitHfQuantizer / Bnb8BitHfQuantizer", "bitsandbytes and a CUDA device"},
    {"modelopt", "ModelOpt (not in transformers' quantizer mapping here)",
     "NVFP4 kernels: a CUDA device of compute capability >= 10.0 (TensorRT-LLM, vLLM)"},
};

/* The modules a quantizer leaves in float: modules_to_not_convert (gptq,
 * awq, fp8, mxfp4, bitsandbytes), ignore (compressed-tensors, modelopt),
 * and lm_head, which every one of them skips when nothing is listed. */
static int fill_quant(const json_t *qc, mf_load_report *r)
{
    const char *m = json_string_value(json_object_get(qc, "quant_method"));
    snprintf(r->quant_method, sizeof(r->quant_method), "%s", m ? m : "?");
    for (size_t i = 0; i < sizeof(quantizers) / sizeof(quantizers[0]); i++)
        if (m && !strcmp(quantizers[i].method, m)) {
            r->quantizer = quantizers[i].quantizer;
            r->requires = quantizers[i].requires;
        }
    static const char *const keys[] = {"modules_to_not_convert", "ignore", "llm_int8_skip_modules"};
    for (size_t k = 0; k < 3; k++) {
        json_t *a = json_object_get(qc, keys[k]), *v;
        size_t i;
        json_array_foreach(a, i, v) if (json_is_string(v) &&
                                        push(&r->not_converted, &r->n_not_converted,
                                             strdup(json_string_value(v))))
            return -1;
    }
    if (r->n_not_converted == 0)
        return push(&r->not_converted, &r->n_not_converted, strdup("lm_head"));
    return 0;
}

static int load_report_fill(const mf_model *m0, mf_load_report *r, mf_status *st)
{
    memset(r, 0, sizeof(*r));
    /* packed weights are compared by the original names and shapes */
    mf_model *view = NULL;
    mf_status vs;
    mf_status_init(&vs);
    if (mf_model_logical_view_as(m0, MF_DTYPE_INVALID, &view, &vs))
        view = NULL; /* a corrupt layout: compare as stored; validate says why */
    mf_status_clear(&vs);
    const mf_model *m = view ? view : m0;
    int rc = load_report_fill_view(m, r, st);
    mf_close(view);
    return rc;
}

static int load_report_fill_view(const mf_model *m, mf_load_report *r, mf_status *st)
{
    json_t *cfg = mf_hf_load_config(m->path, true, st);
    if (!cfg)
        return -1;
    builder b = {0};
    dims d;
    const char *arch;
    int rc = 0;
    mf_status why;
    mf_status_init(&why);
    const json_t *qc = json_object_get(cfg, "quantization_config");
    if (json_is_object(qc) && fill_quant(qc, r)) {
        json_decref(cfg);
        return mf_oom(st, m->path);
    }
    if (!m->n_tensors)
        snprintf(r->why_not, sizeof(r->why_not), "no weights were read");
    else if (build_expected(cfg, &b, &d, &arch, &why) != 0)
        snprintf(r->why_not, sizeof(r->why_not), "%.255s", why.msg);
    else {
        r->arch = arch;
        r->tied = d.tie;
        const char *mt = json_string_value(json_object_get(cfg, "model_type"));
        rc = b.oom ? -1 : compare(m, &b, strcmp(mt, "gpt2") ? "model" : "transformer", r);
        if (rc)
            mf_oom(st, m->path);
    }
    for (size_t i = 0; i < b.n; i++)
        free(b.v[i].name);
    free(b.v);
    mf_status_clear(&why);
    json_decref(cfg);
    return rc;
}

static void load_report_clear(mf_load_report *r)
{
    for (size_t i = 0; i < r->n_missing; i++)
        free(r->missing[i]);
    for (size_t i = 0; i < r->n_unexpected; i++)
        free(r->unexpected[i]);
    for (size_t i = 0; i < r->n_mismatched; i++)
        free(r->mismatched[i]);
    for (size_t i = 0; i < r->n_not_converted; i++)
        free(r->not_converted[i]);
    free(r->missing);
    free(r->unexpected);
    free(r->mismatched);
    free(r->not_converted);
}

int mf_hf_load_report(const mf_model *m, mf_load_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    if (m->format != MF_FMT_HF_DIR)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "a load report is made for a Hugging Face directory, not a %s model",
                       mf_format_name(m->format));
    mf_load_report *r = calloc(1, sizeof(*r));
    if (!r)
        return mf_oom(st, m->path);
    if (load_report_fill(m, r, st)) {
        load_report_clear(r);
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

void mf_load_report_free(mf_load_report *r)
{
    if (!r)
        return;
    load_report_clear(r);
    free(r);
}
