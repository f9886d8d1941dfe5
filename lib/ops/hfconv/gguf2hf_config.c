/* gguf2hf_config.c - config.json, generation_config.json and the model
 * card of a GGUF -> HF conversion. config.json is the forward converter's
 * hyper-parameter table (arch_table.c) read backwards: each GGUF key it
 * writes from config keys "a|b|c" gives back config key a; computed values
 * ("@NAME") have their inverse here. So converting the result to GGUF again
 * reads back the same values. */
#include "ops/hfconv/gguf2hf_int.h"
#include "core/json_build.h"
#include "ops/tensor_f32.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

static int64_t key_int_of(const hfc *c, const char *suffix)
{
    int64_t x = 0;
    hfc_int(hfc_key(c, suffix), &x);
    return x;
}

/* The shortest decimal that reads back as the same float32 (Python prints
 * config floats as repr of a double; 1e-05, not 9.99999975e-06). */
static json_t *f32_json(double v)
{
    float f = (float)v;
    char buf[48];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof(buf), "%.*g", p, (double)f);
        if (strtof(buf, NULL) == f)
            return json_real(strtod(buf, NULL));
    }
    return json_real((double)f);
}

static json_t *value_json(const mf_value *v)
{
    int64_t x;
    if (v->type == MF_V_F32 || v->type == MF_V_F64)
        return f32_json(v->as.f);
    if (v->type == MF_V_BOOL)
        return json_boolean(v->as.b);
    if (v->type == MF_V_STR)
        return json_stringn(v->as.s.ptr, v->as.s.len);
    if (hfc_int(v, &x))
        return json_integer(x);
    return NULL;
}

/* An integer array as a JSON list (NULL: not one). */
static json_t *int_list(const mf_value *v)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < v->as.arr.n; i++) {
        int64_t x;
        if (!hfc_int(&v->as.arr.items[i], &x)) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, json_integer(x));
    }
    return a;
}

/* A GGUF key of the table: arch-prefixed unless general./tokenizer. */
static const mf_value *hp_value(const hfc *c, const char *key)
{
    if (!strncmp(key, "general.", 8) || !strncmp(key, "tokenizer.", 10))
        return mf_meta_get(c->m, key);
    return hfc_key(c, key);
}

static void set_new(json_t *cfg, const char *key, json_t *v)
{
    if (!v)
        return;
    for (const char *dot; (dot = strchr(key, '.')) != NULL; key = dot + 1) { /* "a.b": key b of object a */
        char part[128];
        snprintf(part, sizeof(part), "%.*s", (int)(dot - key), key);
        json_t *o = json_object_get(cfg, part);
        if (!json_is_object(o)) {
            o = json_object();
            json_object_set_new(cfg, part, o);
        }
        cfg = o;
    }
    if (json_object_get(cfg, key))
        json_decref(v); /* the first key that gives it wins */
    else
        json_object_set_new(cfg, key, v);
}

static int64_t cfg_int(json_t *cfg, const char *a, const char *b)
{
    json_t *v = json_object_get(cfg, a);
    if (!v && b)
        v = json_object_get(cfg, b);
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

/* The fraction p the forward converter turns back into `dim`: phi2 takes
 * int(p * n_embd) // n_head, the others int(p * (n_embd // n_head)). */
static json_t *rotary_fraction(int64_t dim, int64_t embd, int64_t heads, bool phi2)
{
    if (embd <= 0 || heads <= 0)
        return NULL;
    double den = phi2 ? (double)embd / (double)heads : (double)(embd / heads);
    double cands[] = {(double)dim / den, ((double)dim + 0.5 / (phi2 ? (double)heads : 1.0)) / den};
    for (int i = 0; i < 2; i++) {
        json_t *j = f32_json(cands[i]);
        double p = json_real_value(j);
        int64_t back = phi2 ? (int64_t)(p * (double)embd) / heads : (int64_t)(p * (double)(embd / heads));
        if (back == dim)
            return j;
        json_decref(j);
    }
    return NULL;
}

/* The inverses of the computed values (conv_calc in arch.h): x, the GGUF
 * value, back into config.json. */
static void embd_heads(json_t *cfg, int64_t *embd, int64_t *heads)
{
    *embd = cfg_int(cfg, "hidden_size", "n_embd");
    *heads = cfg_int(cfg, "num_attention_heads", "n_head");
}

void g2h_block_count(hfc *c, json_t *cfg, int64_t x)
{
    int64_t nextn = 0; /* GLM-4.5: the NextN layers were counted as blocks */
    if ((c->fwd->flags & AF_NEXTN) && hfc_int(hfc_key(c, "nextn_predict_layers"), &nextn) && nextn > 0 && nextn <= x)
        x -= nextn;
    set_new(cfg, "num_hidden_layers", json_integer(x));
}

void g2h_rope_dim_llama(hfc *c, json_t *cfg, int64_t x)
{
    int64_t embd, heads;
    embd_heads(cfg, &embd, &heads);
    if (!(c->fwd->flags & AF_NO_HEAD_DIM) && (heads <= 0 || embd / heads != x))
        set_new(cfg, "head_dim", json_integer(x));
}

static void partial_rotary(json_t *cfg, const char *key, int64_t x, bool phi2)
{
    int64_t embd, heads;
    embd_heads(cfg, &embd, &heads);
    set_new(cfg, key, rotary_fraction(x, embd, heads, phi2));
}

void g2h_rope_dim_phi2(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    partial_rotary(cfg, "partial_rotary_factor", x, true);
}

void g2h_rope_dim_partial(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    partial_rotary(cfg, "partial_rotary_factor", x, false);
}

void g2h_rope_dim_neox(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    partial_rotary(cfg, "rotary_pct", x, false);
}

/* Refact: the width follows from n_embd, which comes back as its own key */
void g2h_refact_ff(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    (void)cfg;
    (void)x;
}

void g2h_ffn_or_4x_embd(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "intermediate_size", json_integer(x));
}

/* EXAONE: a factor only when the dimension is not the whole head */
void g2h_rope_dim_pct_or_one(hfc *c, json_t *cfg, int64_t x)
{
    int64_t embd, heads;
    (void)c;
    embd_heads(cfg, &embd, &heads);
    if (heads > 0 && embd / heads != x)
        set_new(cfg, "partial_rotary_factor", rotary_fraction(x, embd, heads, false));
}

void g2h_qk_head_dim(hfc *c, json_t *cfg, int64_t x)
{
    int64_t rope = 0;
    hfc_int(hfc_key(c, "rope.dimension_count"), &rope);
    set_new(cfg, "qk_nope_head_dim", json_integer(x - rope));
}

void g2h_gating_func(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "scoring_func", json_string(x == 2 ? "sigmoid" : "softmax"));
}

/* Llama 4: a sliding window of 0 said every layer is full attention */
void g2h_llama4_no_swa(hfc *c, json_t *cfg, int64_t x)
{
    int64_t n = key_int_of(c, "block_count");
    if (x != 0 || n <= 0 || n > 4096)
        return;
    json_t *lt = json_array();
    for (int64_t i = 0; i < n; i++)
        json_array_append_new(lt, json_string("full_attention"));
    json_object_set_new(cfg, "layer_types", lt);
}

void g2h_sliding_window_gemma3(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "sliding_window", json_integer(x));
}

void g2h_rope_dim_glm4moe(hfc *c, json_t *cfg, int64_t x)
{
    int64_t hd = cfg_int(cfg, "head_dim", NULL);
    (void)c;
    if (hd > 0)
        set_new(cfg, "partial_rotary_factor", json_real((double)x / (double)hd));
}

void g2h_mamba_d_inner(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "intermediate_size", json_integer(x));
}

void g2h_mamba_dt_rank(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "time_step_rank", json_integer(x));
}

/* RoBERTa: the positions table had pad_token_id + 1 rows more */
void g2h_ctx_after_pad(hfc *c, json_t *cfg, int64_t x)
{
    int64_t pad;
    if (!hfc_int(mf_meta_get(c->m, "tokenizer.ggml.padding_token_id"), &pad))
        pad = -1;
    set_new(cfg, "max_position_embeddings", json_integer(x + pad + 1));
}

void g2h_falcon_mamba(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    if (x)
        json_object_set_new(cfg, "model_type", json_string("falcon_mamba"));
}

static json_t *f32_of(const hfc *c, const char *suffix)
{
    const mf_value *v = hfc_key(c, suffix);
    return v && (v->type == MF_V_F32 || v->type == MF_V_F64) ? f32_json(v->as.f) : NULL;
}

/* The inverses of the key blocks (conv_block in arch.h): rope scaling back
 * into rope_scaling (pooling_type has none: sentence-transformers'
 * modules.json is not written). */
void g2h_rope_linear(hfc *c, json_t *cfg)
{
    const mf_value *t = hfc_key(c, "rope.scaling.type");
    if (!t || t->type != MF_V_STR || strcmp(t->as.s.ptr, "linear"))
        return;
    json_t *rs = json_object();
    json_object_set_new(rs, "type", json_string("linear"));
    json_object_set_new(rs, "factor", f32_of(c, "rope.scaling.factor"));
    set_new(cfg, "rope_scaling", rs);
}

/* MPT: ALiBi on when max_alibi_bias is not 0 */
void g2h_mpt_alibi(hfc *c, json_t *cfg)
{
    const mf_value *v = hfc_key(c, "attention.max_alibi_bias");
    if (!v || v->type != MF_V_F32)
        return;
    set_new(cfg, "attn_config.alibi", json_boolean(v->as.f != 0.0));
    set_new(cfg, "attn_config.alibi_bias_max", f32_of(c, "attention.max_alibi_bias"));
}

static void rope_yarn(hfc *c, json_t *cfg, bool deepseek)
{
    const mf_value *t = hfc_key(c, "rope.scaling.type");
    if (!t || t->type != MF_V_STR || strcmp(t->as.s.ptr, "yarn"))
        return;
    json_t *rs = json_object();
    json_object_set_new(rs, "type", json_string("yarn"));
    json_object_set_new(rs, "factor", f32_of(c, "rope.scaling.factor"));
    int64_t o = 0;
    if (hfc_int(hfc_key(c, "rope.scaling.original_context_length"), &o))
        json_object_set_new(rs, "original_max_position_embeddings", json_integer(o));
    const mf_value *lm = hfc_key(c, "rope.scaling.yarn_log_multiplier");
    if (deepseek && lm && lm->type == MF_V_F32)
        json_object_set_new(rs, "mscale_all_dim", f32_json(lm->as.f / 0.1));
    set_new(cfg, "rope_scaling", rs);
}

/* rope_scaling of the config, made on first use */
static json_t *rope_scaling_obj(json_t *cfg)
{
    json_t *rs = json_object_get(cfg, "rope_scaling");
    if (!json_is_object(rs)) {
        rs = json_object();
        json_object_set_new(cfg, "rope_scaling", rs);
    }
    return rs;
}

/* TextModel.set_gguf_parameters (2026): the scaling type and its keys into
 * rope_scaling (the converter reads rope_parameters or rope_scaling), the
 * thetas to rope_theta / rope_local_base_freq. */
void g2h_rope_2026(hfc *c, json_t *cfg)
{
    static const struct { const char *gguf, *hf; } yarn[] = {
        {"rope.scaling.factor", "factor"}, {"rope.scaling.yarn_ext_factor", "extrapolation_factor"},
        {"rope.scaling.yarn_attn_factor", "attention_factor"}, {"rope.scaling.yarn_beta_fast", "beta_fast"},
        {"rope.scaling.yarn_beta_slow", "beta_slow"},
    };
    const mf_value *t = hfc_key(c, "rope.scaling.type");
    if (t && t->type == MF_V_STR && (!strcmp(t->as.s.ptr, "yarn") || !strcmp(t->as.s.ptr, "linear") ||
                                     !strcmp(t->as.s.ptr, "longrope"))) {
        json_t *rs = rope_scaling_obj(cfg);
        json_object_set_new(rs, "rope_type", json_string(t->as.s.ptr));
        for (size_t i = 0; i < sizeof(yarn) / sizeof(yarn[0]); i++)
            if (i == 0 || !strcmp(t->as.s.ptr, "yarn"))
                set_new(rs, yarn[i].hf, f32_of(c, yarn[i].gguf));
        int64_t o = 0;
        if (hfc_int(hfc_key(c, "rope.scaling.original_context_length"), &o))
            set_new(rs, "original_max_position_embeddings", json_integer(o));
    }
    const mf_value *ms = hfc_key(c, "rope.dimension_sections"); /* Qwen3.5's mrope_section */
    if (ms && ms->type == MF_V_ARR) {
        json_t *a = json_array();
        for (size_t i = 0; i < ms->as.arr.n; i++)
            json_array_append_new(a, json_integer((json_int_t)ms->as.arr.items[i].as.i));
        json_object_set_new(rope_scaling_obj(cfg), "mrope_section", a);
    }
    set_new(cfg, "rope_theta", f32_of(c, "rope.freq_base"));
    set_new(cfg, "rope_local_base_freq", f32_of(c, "rope.freq_base_swa"));
}

/* HunYuan: the folded theta came from rope_theta 10000 and the alpha */
void g2h_rope_hunyuan(hfc *c, json_t *cfg)
{
    const mf_value *t = hfc_key(c, "rope.scaling.type");
    const mf_value *fb = hfc_key(c, "rope.freq_base");
    int64_t d = cfg_int(cfg, "head_dim", NULL);
    if (!t || t->type != MF_V_STR || strcmp(t->as.s.ptr, "none") || !fb || fb->type != MF_V_F32 || d <= 2)
        return;
    double alpha = pow(fb->as.f / 10000.0, (double)(d - 2) / (double)d);
    json_t *rs = json_object();
    json_object_set_new(rs, "type", json_string("dynamic"));
    json_object_set_new(rs, "alpha", json_real(round(alpha * 1e4) / 1e4));
    json_object_set_new(rs, "factor", json_real(1.0));
    json_object_set(cfg, "rope_scaling", rs);
    json_decref(rs);
    json_object_set_new(cfg, "rope_theta", json_real(10000.0));
    /* the released configs say 32K (the converter accepts 32K or 256K and
     * writes 256K either way) */
    json_object_set_new(cfg, "max_position_embeddings", json_integer(32 * 1024));
}

void g2h_rope_yarn(hfc *c, json_t *cfg)
{
    rope_yarn(c, cfg, false);
}

void g2h_rope_yarn_deepseek(hfc *c, json_t *cfg)
{
    rope_yarn(c, cfg, true);
}

/* LFM2's adjusted feed-forward length: the size itself, no adjusting */
void g2h_lfm2_ff_dim(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "block_ff_dim", json_integer(x));
    set_new(cfg, "intermediate_size", json_integer(x));
    set_new(cfg, "block_auto_adjust_ff_dim", json_false());
    set_new(cfg, "block_ffn_dim_multiplier", json_real(1.0));
    set_new(cfg, "block_multiple_of", json_integer(1));
}

/* Rwkv6Model's feed-forward length: intermediate_size as it is */
void g2h_rwkv_ff(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    set_new(cfg, "intermediate_size", json_integer(x));
}

/* GraniteHybridModel's d_inner = mamba_expand * hidden_size */
void g2h_granite_hybrid_inner(hfc *c, json_t *cfg, int64_t x)
{
    int64_t embd = key_int_of(c, "embedding_length");
    if (embd > 0 && x % embd == 0)
        set_new(cfg, "mamba_expand", json_integer(x / embd));
}

/* FalconH1Model's time_step_rank = mamba_d_ssm // mamba_d_head: the head
 * size back, and the head count FalconH1Config takes */
void g2h_falcon_h1_dt_rank(hfc *c, json_t *cfg, int64_t x)
{
    int64_t inner = key_int_of(c, "ssm.inner_size");
    if (x > 0 && inner % x == 0)
        set_new(cfg, "mamba_d_head", json_integer(inner / x));
    set_new(cfg, "mamba_n_heads", json_integer(x));
}

/* conv_per_layer_of's inverse: the per-layer list back to the key (its
 * non-zero value) and the layer kinds. */
static void per_layer_back(hfc *c, json_t *cfg)
{
    const char *spec = conv_per_layer_of(c->fwd), *key, *kinds_key, *zero, *other;
    char buf[160];
    const mf_value *v = NULL;
    for (const conv_hp *h = conv_base_hparams_2026; spec && h->key && !v; h++)
        if (h->src && !strncmp(h->src, spec, strcspn(spec, "@")) && h->src[strcspn(spec, "@")] == '|')
            v = hfc_key(c, h->key);
    if (!v || v->type != MF_V_ARR || conv_per_layer_parse(spec, buf, sizeof(buf), &key, &kinds_key, &zero, &other))
        return;
    json_t *kinds = json_array();
    int64_t x = 0;
    for (size_t i = 0; i < v->as.arr.n; i++) {
        int64_t y = v->as.arr.items[i].as.i;
        json_array_append_new(kinds, json_string(y ? other : zero));
        if (y)
            x = y;
    }
    set_new(cfg, key, json_integer(x));
    set_new(cfg, kinds_key, kinds);
}

void g2h_linear_inner(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    int64_t n = cfg_int(cfg, "linear_num_value_heads", NULL);
    if (n > 0)
        set_new(cfg, "linear_value_head_dim", json_integer(x / n));
}

/* rope dims back to partial_rotary_factor over head_dim */
void g2h_rope_dim_qwen3next(hfc *c, json_t *cfg, int64_t x)
{
    (void)c;
    int64_t embd, heads, hd = cfg_int(cfg, "head_dim", NULL);
    embd_heads(cfg, &embd, &heads);
    if (hd <= 0 && heads > 0)
        hd = embd / heads;
    if (hd > 0)
        set_new(cfg, "partial_rotary_factor", json_real((double)x / (double)hd));
}


/* MiniCPM: scale_emb, scale_depth and dim_model_base back from the three
 * f32 scales (each chosen so that the forward arithmetic gives the same f32) */
void g2h_minicpm_scales(hfc *c, json_t *cfg)
{
    const mf_value *e = hfc_key(c, "embedding_scale"), *r = hfc_key(c, "residual_scale"),
                   *l = hfc_key(c, "logit_scale");
    int64_t layers = key_int_of(c, "block_count"), hidden = key_int_of(c, "embedding_length");
    if (!e || !r || !l || e->type != MF_V_F32 || r->type != MF_V_F32 || l->type != MF_V_F32 || l->as.f == 0)
        return;
    set_new(cfg, "scale_emb", f32_json(e->as.f));
    set_new(cfg, "scale_depth", json_real((double)(float)r->as.f * pow((double)layers, 0.5)));
    double base = (double)hidden / (double)(float)l->as.f;
    if (fabs(base - round(base)) < 1e-6 && (float)((double)hidden / round(base)) == (float)l->as.f)
        set_new(cfg, "dim_model_base", json_integer((json_int_t)round(base)));
    else
        set_new(cfg, "dim_model_base", json_real(base));
}

/* An i32 array key back as a JSON list (NULL: absent) */
static json_t *i32_list(const hfc *c, const char *suffix)
{
    const mf_value *v = hfc_key(c, suffix);
    if (!v || v->type != MF_V_ARR || v->as.arr.elem != MF_V_I32)
        return NULL;
    json_t *a = json_array();
    for (size_t i = 0; i < v->as.arr.n; i++)
        json_array_append_new(a, json_integer(v->as.arr.items[i].as.i));
    return a;
}

/* OpenELM: the layer count under its own key, the head lists, and FFN
 * multipliers that _make_divisible maps back to the same widths (each
 * width / model_dim, with divisor 256 when every width is a multiple of it,
 * else 1: rounding to the nearest integer) */
void g2h_openelm_layers(hfc *c, json_t *cfg)
{
    json_t *ffn = i32_list(c, "feed_forward_length");
    int64_t embd = key_int_of(c, "embedding_length");
    set_new(cfg, "num_transformer_layers", json_integer(key_int_of(c, "block_count")));
    json_object_del(cfg, "num_hidden_layers");
    set_new(cfg, "num_query_heads", i32_list(c, "attention.head_count"));
    set_new(cfg, "num_kv_heads", i32_list(c, "attention.head_count_kv"));
    if (!ffn || embd <= 0) {
        json_decref(ffn);
        return;
    }
    int64_t div = 256;
    for (size_t i = 0; i < json_array_size(ffn); i++)
        if (json_integer_value(json_array_get(ffn, i)) % 256 || json_integer_value(json_array_get(ffn, i)) < 256)
            div = 1;
    json_t *m = json_array();
    for (size_t i = 0; i < json_array_size(ffn); i++)
        json_array_append_new(m, json_real((double)json_integer_value(json_array_get(ffn, i)) / (double)embd));
    json_decref(ffn);
    set_new(cfg, "ffn_multipliers", m);
    set_new(cfg, "ffn_dim_divisor", json_integer(div));
}

/* Nemotron-NAS (DeciModel with block_configs): num_attention_heads (the
 * attention layers' count, else embedding / key length) and one block per
 * layer: KV heads > 0 -> n_heads_in_group = heads // kv; none -> a linear
 * layer (replace_with_linear) when it has heads, else a no-op; ffn_mult =
 * width * 3 / (2 * hidden_size), which the forward rounding (int(), then up
 * to a multiple of 256) takes back to a width that is such a multiple. */
void g2h_deci_layers(hfc *c, json_t *cfg)
{
    json_t *kv = i32_list(c, "attention.head_count_kv"), *hc = i32_list(c, "attention.head_count"),
           *ff = i32_list(c, "feed_forward_length");
    int64_t embd = key_int_of(c, "embedding_length"), heads = 0;
    size_t n = json_array_size(hc);
    for (size_t i = 0; i < n; i++)
        if (json_integer_value(json_array_get(hc, i)) > heads)
            heads = json_integer_value(json_array_get(hc, i));
    if (!heads && key_int_of(c, "attention.key_length") > 0)
        heads = embd / key_int_of(c, "attention.key_length");
    if (kv && ff && json_array_size(kv) == n && json_array_size(ff) == n && heads > 0 && embd > 0) {
        set_new(cfg, "num_attention_heads", json_integer(heads));
        json_t *bc = json_array();
        for (size_t i = 0; i < n; i++) {
            int64_t k = json_integer_value(json_array_get(kv, i)), h = json_integer_value(json_array_get(hc, i));
            json_t *at = json_object(), *fo = json_object(), *b = json_object();
            set_new(at, "n_heads_in_group", k > 0 ? json_integer(heads / k) : json_null());
            set_new(at, "no_op", json_boolean(k <= 0 && h <= 0));
            set_new(at, "replace_with_linear", json_boolean(k <= 0 && h > 0));
            set_new(fo, "ffn_mult", json_real((double)json_integer_value(json_array_get(ff, i)) * 3 / (2 * (double)embd)));
            set_new(fo, "no_op", json_false());
            set_new(fo, "replace_with_linear", json_false());
            set_new(b, "attention", at);
            set_new(b, "ffn", fo);
            json_array_append_new(bc, b);
        }
        set_new(cfg, "block_configs", bc);
    }
    json_decref(kv);
    json_decref(hc);
    json_decref(ff);
}

/* JAIS: SwiGLU and ALiBi; the embedding and head come back as the GGUF
 * holds them (already scaled), so their scales are 1. The ALiBi slopes
 * buffer is not written: the forward step then takes max_alibi_bias 8. */
void g2h_jais_config(hfc *c, json_t *cfg)
{
    (void)c;
    set_new(cfg, "activation_function", json_string("swiglu"));
    set_new(cfg, "position_embedding_type", json_string("alibi"));
    set_new(cfg, "embeddings_scale", json_real(1.0));
    set_new(cfg, "width_scale", json_real(1.0));
}

/* Qwen2-VL: the M-RoPE sections (the forward step padded them to 4 with
 * zeros; Qwen2-VL's three come back as three) */
void g2h_mrope_sections(hfc *c, json_t *cfg)
{
    const mf_value *v = hfc_key(c, "rope.dimension_sections");
    if (!v || v->type != MF_V_ARR || v->as.arr.elem != MF_V_I32)
        return;
    size_t n = v->as.arr.n;
    while (n > 3 && v->as.arr.items[n - 1].as.i == 0)
        n--;
    json_t *rs = json_object(), *ms = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(ms, json_integer(v->as.arr.items[i].as.i));
    json_object_set_new(rs, "mrope_section", ms);
    json_object_set_new(rs, "rope_type", json_string("default"));
    json_object_set_new(rs, "type", json_string("default"));
    set_new(cfg, "rope_scaling", rs);
}

/* Does the architecture's own list (not "@base") write this GGUF key? The
 * forward converter would then write it twice from a config holding both
 * sources, so only the architecture's source comes back. */
static bool arch_writes(const hfc *c, const char *key)
{
    for (const conv_hp *h = c->hparams; h->key; h++)
        if (h->key[0] != '@' && !strcmp(h->key, key))
            return true;
    return false;
}

/* Where the forward table's first alternative is a name the transformers
 * class does not take, the one it does (tests/data/hf_arch/
 * hf_config_keys.json): Phi3Config and PhiConfig read
 * max_position_embeddings, not n_positions (PhimoeConfig too); PhiConfig layer_norm_eps;
 * Starcoder2Config norm_epsilon; Qwen3MoeConfig, OlmoeConfig and Qwen3NextConfig num_experts.
 * The name must be one of the alternatives,
 * so that the forward converter reads it back. */
static const struct { const char *model_type, *gguf, *name; } hf_names[] = {
    {"phi3", "context_length", "max_position_embeddings"},
    {"phimoe", "context_length", "max_position_embeddings"},
    {"phi", "context_length", "max_position_embeddings"},
    {"phi", "attention.layer_norm_epsilon", "layer_norm_eps"},
    {"starcoder2", "attention.layer_norm_epsilon", "norm_epsilon"},
    {"qwen3_moe", "expert_count", "num_experts"}, /* where the keys' list has both names */
    {"olmoe", "expert_count", "num_experts"},
    {"qwen3_next", "expert_count", "num_experts"}, /* Qwen3NextConfig */
    {"qwen3_5_moe", "expert_count", "num_experts"}, /* Qwen3_5MoeTextConfig */
    /* the Mamba-2 hybrids' config classes take the "mamba_" names */
    {"granitemoehybrid", "ssm.conv_kernel", "mamba_d_conv"},
    {"granitemoehybrid", "ssm.state_size", "mamba_d_state"},
    {"granitemoehybrid", "ssm.group_count", "mamba_n_groups"},
    {"granitemoehybrid", "ssm.time_step_rank", "mamba_n_heads"},
    {"falcon_h1", "embedding_length", "hidden_size"},
    {"falcon_h1", "ssm.conv_kernel", "mamba_d_conv"},
    {"falcon_h1", "ssm.state_size", "mamba_d_state"},
    {"falcon_h1", "ssm.group_count", "mamba_n_groups"},
    {"falcon_h1", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
};

static bool is_alternative(const char *src, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = src; (p = strstr(p, name)); p += n)
        if ((p == src || p[-1] == '|') && (p[n] == 0 || p[n] == '|'))
            return true;
    return false;
}

static void config_name(const hfc *c, const conv_hp *h, char *key, size_t cap)
{
    for (size_t i = 0; i < sizeof(hf_names) / sizeof(hf_names[0]); i++)
        if (!strcmp(hf_names[i].model_type, c->model_type) && !strcmp(hf_names[i].gguf, h->key) &&
            is_alternative(h->src, hf_names[i].name)) {
            snprintf(key, cap, "%s", hf_names[i].name);
            return;
        }
    size_t n = strcspn(h->src, "|");
    snprintf(key, cap, "%.*s", (int)n, h->src);
}

/* Keys the class needs that the forward converter does not read (so the
 * table cannot give them): from_pretrained would otherwise take its
 * default, another model than the GGUF's (PhiConfig's intermediate_size is
 * 8192, MambaConfig derives intermediate_size from expand). */
static void class_keys(hfc *c, json_t *cfg)
{
    const char *mt = c->model_type;
    int64_t x;
    if (!strcmp(mt, "phi")) {
        if (hfc_int(hfc_key(c, "feed_forward_length"), &x))
            set_new(cfg, "intermediate_size", json_integer(x));
        if (hfc_int(hfc_key(c, "attention.head_count_kv"), &x))
            set_new(cfg, "num_key_value_heads", json_integer(x));
    }
    if (!strcmp(mt, "gpt2") && hfc_int(hfc_key(c, "context_length"), &x))
        set_new(cfg, "n_positions", json_integer(x)); /* GPT2Config's name; the converter reads n_ctx */
    if (!strcmp(mt, "cohere") && hfc_int(hfc_key(c, "context_length"), &x))
        set_new(cfg, "max_position_embeddings", json_integer(x)); /* beside model_max_length */
    if (!strcmp(mt, "mamba") || !strcmp(mt, "falcon_mamba")) {
        int64_t embd = key_int_of(c, "embedding_length");
        if (hfc_int(hfc_key(c, "ssm.inner_size"), &x) && embd > 0 && x % embd == 0)
            set_new(cfg, "expand", json_integer(x / embd));
    }
    /* Rwkv6Config (remote code, RWKV/v6-Finch-*-HF): the attention width and
     * head count it derives; the time-mix sizes follow from hidden_size */
    if (!strcmp(mt, "rwkv6")) {
        int64_t embd = key_int_of(c, "embedding_length"), hs = key_int_of(c, "wkv.head_size");
        set_new(cfg, "attention_hidden_size", json_integer(embd));
        if (hs > 0 && embd % hs == 0)
            set_new(cfg, "num_attention_heads", json_integer(embd / hs));
        set_new(cfg, "head_size_divisor", json_integer(8));
    }
    /* GraniteMoeHybridConfig: the SSM head size (the converter reads only the
     * head count); no rope in a hybrid (rope.scaling.finetuned false) */
    if (!strcmp(mt, "granitemoehybrid")) {
        int64_t heads = key_int_of(c, "ssm.time_step_rank");
        if (hfc_int(hfc_key(c, "ssm.inner_size"), &x) && heads > 0 && x % heads == 0)
            set_new(cfg, "mamba_d_head", json_integer(x / heads));
        if (hfc_int(hfc_key(c, "rope.scaling.finetuned"), &x) && !x)
            set_new(cfg, "position_embedding_type", json_string("nope"));
        /* the base key's value was written over by 2**20: that one */
        if (hfc_int(hfc_key(c, "context_length"), &x))
            set_new(cfg, "max_position_embeddings", json_integer(x));
    }
    /* GemmaConfig (transformers 4.38+) reads hidden_activation first; llama.cpp's
     * Gemma is GELU (tanh); its rotary base is the default 10000 */
    if (!strcmp(mt, "gemma") || !strcmp(mt, "gemma2"))
        set_new(cfg, "hidden_activation", json_string("gelu_pytorch_tanh"));
    if (!strcmp(mt, "gemma"))
        set_new(cfg, "rope_theta", json_real(10000.0));
}

static bool has_tensor(const hfc *c, const char *name)
{
    return mf_tensor_find(c->m, name) != NULL;
}

/* Flags of the class that only the tensors say (no GGUF key holds them,
 * the forward converter reads none): without them from_pretrained builds
 * the class default - biases dropped or expected, another FFN, another
 * residual - not the model the GGUF describes. */
static void tensor_flags(hfc *c, json_t *cfg)
{
    const char *mt = c->model_type;
    bool qkv_bias = has_tensor(c, "blk.0.attn_q.bias");
    if (!strcmp(mt, "phimoe")) { /* PhimoeConfig: attention_bias, lm_head_bias */
        set_new(cfg, "attention_bias", json_boolean(qkv_bias));
        set_new(cfg, "lm_head_bias", json_boolean(has_tensor(c, "output.bias")));
    }
    if (!strcmp(mt, "glm4_moe"))
        set_new(cfg, "attention_bias", json_boolean(qkv_bias));
    if (!strcmp(mt, "stablelm")) {
        set_new(cfg, "use_qkv_bias", json_boolean(qkv_bias));
        set_new(cfg, "qk_layernorm", json_boolean(has_tensor(c, "blk.0.attn_q_norm.weight")));
        /* llama.cpp's stablelm runs the residual parallel when a block has
         * no ffn_norm, whatever use_parallel_residual says (the converter
         * writes its default, true, for a config without the key):
         * StableLmConfig's default (false) is right when there is one, and
         * leaving the key out gives the converter's true again */
        json_t *pr = json_object_get(cfg, "use_parallel_residual");
        if (has_tensor(c, "blk.0.ffn_norm.weight") && json_is_true(pr))
            json_object_del(cfg, "use_parallel_residual");
    }
    if (!strcmp(mt, "mamba") || !strcmp(mt, "falcon_mamba")) { /* MambaConfig: both default true */
        set_new(cfg, "use_bias", json_boolean(has_tensor(c, "blk.0.ssm_in.bias")));
        set_new(cfg, "use_conv_bias", json_boolean(has_tensor(c, "blk.0.ssm_conv1d.bias")));
    }
    /* T5Config: llama.cpp's T5 runs a GELU-gated FFN when ffn_gate exists, else ReLU */
    if (!strcmp(mt, "t5"))
        set_new(cfg, "feed_forward_proj", json_string(has_tensor(c, "enc.blk.0.ffn_gate.weight") ||
                                                              has_tensor(c, "blk.0.ffn_gate.weight")
                                                          ? "gated-gelu"
                                                          : "relu"));
    /* Gemma 2 / 3 scale queries by query_pre_attn_scalar ** -0.5; llama.cpp
     * by the head size, but n_embd / n_head for the 27B (46 and 62 layers:
     * llama-model.cpp's f_attention_scale) */
    if (!strcmp(mt, "gemma2") || !strcmp(mt, "gemma3_text")) {
        int64_t n = key_int_of(c, "block_count"), hd = key_int_of(c, "attention.key_length");
        int64_t embd = key_int_of(c, "embedding_length"), heads = key_int_of(c, "attention.head_count");
        bool is_27b = n == (!strcmp(mt, "gemma2") ? 46 : 62);
        if (is_27b && heads > 0)
            hd = embd / heads;
        if (hd > 0)
            set_new(cfg, "query_pre_attn_scalar", json_integer(hd));
    }
    /* JAIS: llama.cpp scales attention by 1 / head size (scale_qk_dot_by_d) */
    if (!strcmp(mt, "jais"))
        set_new(cfg, "scale_qk_dot_by_d", json_true());
    /* Jina-BERT v2: ALiBi, no position table */
    if (!strcmp(c->arch, "jina-bert-v2"))
        set_new(cfg, "position_embedding_type", json_string("alibi"));
    /* FalconH1Config: the mixer's gated RMS norm when the GGUF has one;
     * llama.cpp gates, then normalizes */
    if (!strcmp(mt, "falcon_h1")) {
        set_new(cfg, "mamba_rms_norm", json_boolean(has_tensor(c, "blk.0.ssm_norm.weight")));
        set_new(cfg, "mamba_norm_before_gate", json_false());
    }
    /* the 2026 layout wrote head_count_kv 1 (MLA's compressed cache); the
     * class's num_key_value_heads is the heads of attn_k_b, which the
     * forward step views kv_b_proj by */
    const mf_tensor *kb = mf_tensor_find(c->m, "blk.0.attn_k_b.weight");
    if ((!strcmp(mt, "deepseek_v2") || !strcmp(mt, "deepseek_v3")) && kb && kb->ndim == 3)
        json_object_set_new(cfg, "num_key_value_heads", json_integer(kb->shape[0]));
    /* DeepseekV2Model (2026): yarn_log_multiplier = 0.1 * mscale_all_dim */
    const mf_value *lm = hfc_key(c, "rope.scaling.yarn_log_multiplier");
    json_t *rs = json_object_get(cfg, "rope_scaling");
    if (c->l2026 && !strncmp(mt, "deepseek_v", 10) && lm && lm->type == MF_V_F32 && json_is_object(rs))
        set_new(rs, "mscale_all_dim", f32_json(lm->as.f / 0.1));
    /* DeepseekV2Config's q_lora_rank defaults to 1536: a GGUF without one
     * (V2-Lite: q_proj straight) says None (the converter skips a null) */
    if ((!strcmp(mt, "deepseek_v2") || !strcmp(mt, "deepseek_v3")) && !hfc_key(c, "attention.q_lora_rank"))
        set_new(cfg, "q_lora_rank", json_null());
    /* DeepseekV3Config limits routing to topk_group of n_group expert
     * groups (8 and 4 by default); a GGUF without expert_group_count
     * (c392e50's) runs llama.cpp's top-k over all experts: one group */
    if (!strcmp(mt, "deepseek_v3")) {
        int64_t groups = 1, used = 1;
        hfc_int(hfc_key(c, "expert_group_count"), &groups);
        hfc_int(hfc_key(c, "expert_group_used_count"), &used);
        set_new(cfg, "n_group", json_integer(groups));
        set_new(cfg, "topk_group", json_integer(used));
    }
    /* Qwen3MoeConfig's norm_topk_prob is false; llama.cpp's qwen3moe
     * always normalizes the chosen experts' weights */
    if (!strcmp(mt, "qwen3_moe"))
        set_new(cfg, "norm_topk_prob", json_true());
}

/* pass 0: keys read straight from config.json; pass 1: computed values
 * (they need the sizes of pass 0); pass 2: the written blocks. */
static void put_hparams(hfc *c, json_t *cfg, const conv_hp *list, bool base, int pass)
{
    for (const conv_hp *h = list; h->key; h++) {
        if (!strcmp(h->key, "@base")) {
            put_hparams(c, cfg, c->l2026 ? conv_base_hparams_2026 : conv_base_hparams, true, pass);
            continue;
        }
        if (h->block) {
            if (pass == 2 && h->block->back)
                h->block->back(c, cfg);
            continue;
        }
        if (base && arch_writes(c, h->key))
            continue;
        const mf_value *v = hp_value(c, h->key);
        if (!v || (!h->calc && (!h->src || h->src[0] == '='))) /* '=': a constant, from no config key */
            continue;
        if (h->calc) {
            int64_t x;
            if (pass == 1 && h->calc->back && hfc_int(v, &x))
                h->calc->back(c, cfg, x);
            continue;
        }
        if (pass != 0)
            continue;
        char key[128];
        config_name(c, h, key, sizeof(key));
        int64_t x;
        if (!strncmp(key, "4*", 2)) {
            if (hfc_int(v, &x))
                set_new(cfg, key + 2, json_integer(x / 4));
            continue;
        }
        /* Command-R's class reads its context length from config.json's
         * model_max_length (max_position_embeddings is then not known) */
        if ((c->fwd->flags & AF_CTX_MODEL_MAX) && !strcmp(key, "max_position_embeddings"))
            snprintf(key, sizeof(key), "model_max_length");
        if (!strncmp(key, "rope:", 5)) /* a rope_parameters value (2026): into rope_scaling */
            set_new(rope_scaling_obj(cfg), key + 5, value_json(v));
        else if (!strncmp(key, "ropefull:", 9)) /* the theta: rope_theta */
            set_new(cfg, key + 9, value_json(v));
        else if (key[0] && v->type == MF_V_ARR && (c->fwd->flags & AF_LAYER_HEADS)) /* DeciLM-7B's per-layer KV heads */
            set_new(cfg, key, int_list(v));
        else if (key[0])
            set_new(cfg, key, value_json(v));
    }
}

bool hfc_fwd_constant(const hfc *c, const char *key)
{
    for (const conv_hp *h = c->hparams; h->key; h++)
        if (!strcmp(h->key, key) && h->src && h->src[0] == '=')
            return true;
    return false;
}

/* PhimoeConfig's rope_scaling must also hold short_mscale, long_mscale and
 * original_max_position_embeddings (configuration_phimoe.py's validation).
 * The mscales multiply cos and sin (PhimoeRotaryEmbedding), as llama.cpp's
 * rope.scaling.attn_factor does: both are that factor, so transformers
 * runs the model the GGUF describes (the forward converter reads neither:
 * it works attn_factor out from the contexts). */
static void phimoe_mscales(hfc *c, json_t *rs)
{
    const mf_value *af = hfc_key(c, "rope.scaling.attn_factor");
    if (af && (af->type == MF_V_F32 || af->type == MF_V_F64)) {
        json_object_set_new(rs, "short_mscale", f32_json(af->as.f));
        json_object_set_new(rs, "long_mscale", f32_json(af->as.f));
    }
    int64_t o = 0;
    if (hfc_int(hfc_key(c, "rope.scaling.original_context_length"), &o))
        json_object_set_new(rs, "original_max_position_embeddings", json_integer(o));
}

/* Phi-3 LongRoPE: the factors travelled as tensors. */
static void longrope(hfc *c, json_t *cfg)
{
    const mf_tensor *lf = mf_tensor_find(c->m, "rope_factors_long.weight"),
                    *sf = mf_tensor_find(c->m, "rope_factors_short.weight");
    if (!lf || !sf || lf->dtype != MF_F32 || sf->dtype != MF_F32 || !lf->data || !sf->data)
        return;
    json_t *rs = json_object(), *l = json_array(), *s = json_array();
    for (uint64_t i = 0; i < mf_tensor_nelems(lf); i++) {
        float f;
        memcpy(&f, lf->data + 4 * i, 4);
        json_array_append_new(l, f32_json(f));
    }
    for (uint64_t i = 0; i < mf_tensor_nelems(sf); i++) {
        float f;
        memcpy(&f, sf->data + 4 * i, 4);
        json_array_append_new(s, f32_json(f));
    }
    json_object_set_new(rs, "type", json_string("longrope"));
    json_object_set_new(rs, "long_factor", l);
    json_object_set_new(rs, "short_factor", s);
    if (!strcmp(c->model_type, "phimoe"))
        phimoe_mscales(c, rs);
    set_new(cfg, "rope_scaling", rs);
}

/* gpt-oss: experts written as MXFP4 blocks and scales need the release's
 * quantization_config (the rest is not quantized). */
static void mxfp4_config(hfc *c, json_t *cfg)
{
    bool packed = false;
    for (size_t i = 0; i < c->items.n && !packed; i++)
        packed = c->items.v[i].out.dtype == MF_U8;
    if (!packed)
        return;
    static const char *const keep[] = {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
                                       "lm_head"};
    json_t *q = json_object(), *m = json_array();
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
        json_array_append_new(m, json_string(keep[i]));
    json_object_set_new(q, "modules_to_not_convert", m);
    json_object_set_new(q, "quant_method", json_string("mxfp4"));
    set_new(cfg, "quantization_config", q);
}

/* Llama4Model swapped intermediate_size (experts) for intermediate_size_mlp */
static void llama4_sizes(json_t *cfg)
{
    json_t *dense = json_incref(json_object_get(cfg, "intermediate_size")),
           *moe = json_incref(json_object_get(cfg, "intermediate_size_moe"));
    json_object_del(cfg, "intermediate_size_moe");
    if (dense)
        json_object_set(cfg, "intermediate_size_mlp", dense);
    if (moe)
        json_object_set(cfg, "intermediate_size", moe);
    json_decref(dense);
    json_decref(moe);
}

/* ------------------------------------------------ llama3 rope scaling */

/* Do these llama3 parameters give the stored rope_freqs, bit for bit? */
static bool llama3_gives(const float *r, size_t n, double base, int64_t dim, double f, double lo, double hi,
                         double *tmp)
{
    if (!(lo > 0) || !(hi >= lo)) /* equal: a step (Llama 4's 1 and 1) */
        return false;
    conv_llama3_rope_factors(base, dim, f, lo, hi, 8192.0, tmp);
    for (size_t i = 0; i < n; i++) {
        float v = (float)tmp[i];
        if (memcmp(&v, &r[i], 4))
            return false;
    }
    return true;
}

/* The shortest decimals (same significant digits for both) that still
 * give the tensor: config.json then says 1.0 and 4.0, not 0.99999994. */
static bool llama3_try(const float *r, size_t n, double base, int64_t dim, double f, double lo, double hi,
                       double *tmp, double out[3])
{
    for (int p = 1; p <= 17; p++) {
        char a[40], b[40], d[40];
        snprintf(a, sizeof(a), "%.*g", p, lo);
        snprintf(b, sizeof(b), "%.*g", p, hi);
        snprintf(d, sizeof(d), "%.*g", p, f);
        double l = strtod(a, NULL), h = strtod(b, NULL), ff = strtod(d, NULL);
        if (llama3_gives(r, n, base, dim, ff, l, h, tmp)) {
            out[0] = ff;
            out[1] = l;
            out[2] = h;
            return true;
        }
    }
    return false;
}

/* Solves factor, low_freq_factor and high_freq_factor from rope_freqs
 * (LlamaModel.generate_extra_tensors stored only the result) with the
 * original context llama.cpp's converter assumes, 8192: the values depend
 * on context / low and context / high only, so any context has an
 * equivalent pair and transformers' llama3 rotation is the same. Below the
 * wavelength context / high a factor is 1, above context / low it is
 * `factor`, between them 1 / ((1 - s) / factor + s) with s linear in
 * 1 / wavelength: two such points give the pair; with fewer, the usual
 * values (Llama 3.1: 1 and 4) or any pair between the plateaus. */
static bool llama3_search(const float *r, size_t n, double base, int64_t dim, double *wl, double *tmp, double out[3])
{
    const double ctx = 8192.0;
    for (size_t i = 0; i < n; i++) {
        float x = (float)(2 * i) / (float)dim, freq = 1.0f / powf((float)base, x);
        wl[i] = (double)((1.0f / freq) * (float)(2 * M_PI));
    }
    /* a step from 1 to the factor (Llama 4 writes low = high = 1) */
    if (n && llama3_try(r, n, base, dim, r[n - 1], 1, 1, tmp, out))
        return true;
    double factors[] = {r[n - 1], 8, 16, 32, 4, 2, 64};
    for (size_t k = 0; k < sizeof(factors) / sizeof(factors[0]); k++) {
        double f = factors[k];
        if (!(f > 1))
            continue;
        /* the usual pairs first */
        static const double pairs[][2] = {{1, 4}, {1, 2}, {2, 8}, {1, 8}, {0.5, 2}};
        for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++)
            if (llama3_try(r, n, base, dim, f, pairs[p][0], pairs[p][1], tmp, out))
                return true;
        /* s = ctx / wl / (hi - lo) - lo / (hi - lo) through the smoothed points */
        size_t sm[2], ns = 0;
        double max_one = 0, min_top = INFINITY;
        for (size_t i = 0; i < n; i++) {
            if (r[i] == 1.0f)
                max_one = wl[i] > max_one ? wl[i] : max_one;
            else if (r[i] == (float)f)
                min_top = wl[i] < min_top ? wl[i] : min_top;
            else if (ns < 2)
                sm[ns++] = i;
            else
                sm[1] = i;
        }
        if (ns == 2) {
            double s0 = (1 / (double)r[sm[0]] - 1 / f) / (1 - 1 / f), s1 = (1 / (double)r[sm[1]] - 1 / f) / (1 - 1 / f);
            double x0 = ctx / wl[sm[0]], x1 = ctx / wl[sm[1]], a = (s1 - s0) / (x1 - x0), b = s0 - a * x0;
            if (a > 0 && llama3_try(r, n, base, dim, f, -b / a, -b / a + 1 / a, tmp, out))
                return true;
        } else if (ns == 0 && max_one > 0 && isfinite(min_top)) {
            /* any pair with ctx / hi and ctx / lo between the plateaus */
            double w = sqrt(max_one * min_top);
            if (llama3_try(r, n, base, dim, f, ctx / w * 0.999, ctx / w * 1.001, tmp, out))
                return true;
        }
    }
    return false;
}

/* llama3_search with the wavelengths' room (malloc'd: any head size) */
static bool llama3_solve(const float *r, size_t n, double base, int64_t dim, double *tmp, double out[3])
{
    double *wl = malloc(sizeof(double) * n);
    if (!wl)
        return false;
    bool found = llama3_search(r, n, base, dim, wl, tmp, out);
    free(wl);
    return found;
}

static int llama3_rope(hfc *c, json_t *cfg)
{
    const mf_tensor *t = mf_tensor_find(c->m, "rope_freqs.weight");
    if (!t || !(c->fwd->flags & AF_LLAMA3_ROPE))
        return 0;
    int64_t dim = key_int_of(c, "rope.dimension_count"), heads = key_int_of(c, "attention.head_count");
    if (dim <= 0 && heads > 0)
        dim = key_int_of(c, "embedding_length") / heads;
    const mf_value *fb = hfc_key(c, "rope.freq_base");
    double base = fb && fb->type == MF_V_F32 ? fb->as.f : 10000.0;
    size_t n = (size_t)mf_tensor_nelems(t);
    float *r = NULL;
    double *tmp = malloc(sizeof(double) * (n ? n : 1)), sol[3];
    int rc = tmp ? mf_tensor_read_f32(c->m, t, &r, c->st) : mf_oom(c->st, c->path);
    if (rc == 0 && (dim <= 0 || (size_t)(dim + 1) / 2 != n || !llama3_solve(r, n, base, dim, tmp, sol)))
        rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, (int64_t)t->offset,
                     "rope_freqs.weight is not llama3 rope scaling of any factors mfmt can solve for "
                     "(rope dimension %lld, base %g): config.json could not say it", (long long)dim, base);
    if (rc == 0) {
        json_t *rs = json_object();
        json_object_set_new(rs, "rope_type", json_string("llama3"));
        json_object_set_new(rs, "factor", json_real(sol[0]));
        json_object_set_new(rs, "low_freq_factor", json_real(sol[1]));
        json_object_set_new(rs, "high_freq_factor", json_real(sol[2]));
        json_object_set_new(rs, "original_max_position_embeddings", json_integer(8192));
        set_new(cfg, "rope_scaling", rs);
    }
    free(r);
    free(tmp);
    return rc;
}

/* Falcon's decoder layout, which FalconConfig takes as flags: two layer
 * norms per block are new_decoder_architecture (KV heads then from
 * num_kv_heads); the old one has one KV head when multi_query. */
static void falcon_layout(hfc *c, json_t *cfg)
{
    bool new_arch = mf_tensor_find(c->m, "blk.0.attn_norm_2.weight") != NULL;
    int64_t kv = key_int_of(c, "attention.head_count_kv");
    set_new(cfg, "new_decoder_architecture", json_boolean(new_arch));
    if (!new_arch)
        set_new(cfg, "multi_query", json_boolean(kv == 1));
    set_new(cfg, "bias", json_boolean(mf_tensor_find(c->m, "blk.0.attn_qkv.bias") != NULL));
}

static const char *torch_dtype(const hfc *c)
{
    size_t n[3] = {0};
    for (size_t i = 0; i < c->items.n; i++) {
        mf_dtype d = c->items.v[i].out.dtype;
        if (d != MF_F32 && d != MF_F16 && d != MF_BF16)
            continue; /* packed bytes (MXFP4 blocks and scales) */
        n[d == MF_F32 ? 0 : d == MF_F16 ? 1 : 2] += mf_tensor_nelems(c->items.v[i].src);
    }
    return n[0] >= n[1] && n[0] >= n[2] ? "float32" : n[1] >= n[2] ? "float16" : "bfloat16";
}

static void put_token_ids(const hfc *c, json_t *j, bool all_types)
{
    for (size_t t = 0; t < HFC_N_SPECIAL; t++) {
        int64_t x;
        if (!hfc_int(mf_meta_get(c->m, hfc_special[t].gguf), &x))
            continue;
        if (all_types ? c->special_in_config[t] : t == 0 || t == 1 || t == 4)
            set_new(j, hfc_special[t].id_key, json_integer(x));
    }
}

/* Factors the forward rules multiplied into the weights (OP_SCALE and
 * OP_SCALE_ROWS naming a config key: Falcon-H1's muP multipliers): GGUF
 * keeps only the products, so they come back as the weights with every
 * factor 1 ("KEY[i]": a list of ones long enough; OP_SCALE_ROWS' list is
 * the five zxbcdt blocks) - converting again gives the same GGUF. */
static void unit_scales(hfc *c, json_t *cfg)
{
    for (const conv_rule *r = c->rules; r->pat; r++) {
        if ((r->op != OP_SCALE && r->op != OP_SCALE_ROWS) || !r->count_key || (r->op == OP_SCALE && r->factor))
            continue;
        char key[96];
        size_t n = strcspn(r->count_key, "["), len = r->op == OP_SCALE_ROWS ? 5 : 0;
        snprintf(key, sizeof(key), "%.*s", (int)(n < sizeof(key) ? n : sizeof(key) - 1), r->count_key);
        if (r->count_key[n] == '[')
            len = (size_t)strtoul(r->count_key + n + 1, NULL, 10) + 1;
        if (!len) {
            set_new(cfg, key, json_real(1.0));
            continue;
        }
        json_t *a = json_object_get(cfg, key);
        if (!json_is_array(a)) {
            a = json_array();
            set_new(cfg, key, a);
        }
        while (a && json_array_size(a) < len)
            json_array_append_new(a, json_real(1.0));
    }
}

/* Composite classes (Qwen3_5Config, Qwen3_5MoeConfig: configuration_qwen3_5*.py
 * of transformers) read the language model's keys only from text_config,
 * a config of its own model_type: everything but the class's own keys goes
 * there. The forward converter lifts text_config to the top again
 * ({**hparams, **text_config}), so it reads the same values. */
static const struct { const char *model_type, *text_model_type; } composite[] = {
    {"qwen3_5", "qwen3_5_text"},
    {"qwen3_5_moe", "qwen3_5_moe_text"},
};

static const char *text_model_type_of(const char *model_type)
{
    for (size_t i = 0; i < sizeof(composite) / sizeof(composite[0]); i++)
        if (!strcmp(composite[i].model_type, model_type))
            return composite[i].text_model_type;
    return NULL;
}

/* Qwen3_5TextConfig's rope: rope_parameters with the theta, the rotary
 * fraction (also kept as the kwarg its __post_init__ defaults, which the
 * forward converter reads), the M-RoPE sections as the released configs
 * have them (three: the forward step pads to four) and interleaved (the
 * IMROPE llama.cpp runs for qwen35) */
static void text_rope_parameters(json_t *text)
{
    json_t *rp = json_object_get(text, "rope_scaling");
    rp = json_is_object(rp) ? json_incref(rp) : json_object();
    json_object_del(text, "rope_scaling");
    json_t *theta = json_object_get(text, "rope_theta");
    if (theta) {
        json_object_set(rp, "rope_theta", theta);
        json_object_del(text, "rope_theta");
    }
    if (!json_object_get(rp, "rope_type"))
        json_object_set_new(rp, "rope_type", json_string("default"));
    json_t *prf = json_object_get(text, "partial_rotary_factor");
    if (prf)
        json_object_set(rp, "partial_rotary_factor", prf);
    json_t *ms = json_object_get(rp, "mrope_section");
    while (json_array_size(ms) > 3 && json_integer_value(json_array_get(ms, json_array_size(ms) - 1)) == 0)
        json_array_remove(ms, json_array_size(ms) - 1);
    if (ms)
        json_object_set_new(rp, "mrope_interleaved", json_true());
    json_object_set_new(text, "rope_parameters", rp);
}

/* layer_types, which the class reads before full_attention_interval (a
 * kwarg it pops only when layer_types is None): every interval-th layer
 * full attention */
static void text_layer_types(json_t *text)
{
    json_t *fai = json_object_get(text, "full_attention_interval");
    int64_t every = json_is_integer(fai) ? json_integer_value(fai) : 4, n = cfg_int(text, "num_hidden_layers", NULL);
    if (every <= 0 || n <= 0 || n > 65536)
        return;
    json_t *lt = json_array();
    for (int64_t i = 0; i < n; i++)
        json_array_append_new(lt, json_string((i + 1) % every ? "linear_attention" : "full_attention"));
    json_object_set_new(text, "layer_types", lt);
}

static void nest_text_config(json_t *cfg, const char *text_model_type)
{
    static const char *const top_only[] = {"architectures", "model_type", "torch_dtype", NULL};
    json_t *text = json_object();
    const char *k;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(cfg, tmp, k, v) {
        bool stays = false;
        for (const char *const *t = top_only; *t; t++)
            stays |= !strcmp(*t, k);
        if (stays)
            continue;
        json_object_set(text, k, v);
        if (strcmp(k, "tie_word_embeddings")) /* both classes take it */
            json_object_del(cfg, k);
    }
    json_object_set_new(text, "model_type", json_string(text_model_type));
    text_rope_parameters(text);
    text_layer_types(text);
    json_object_set_new(cfg, "text_config", text);
}

static json_t *build_config(hfc *c)
{
    json_t *cfg = json_object();
    json_t *archs = json_array();
    json_array_append_new(archs, json_string(c->hf_class));
    json_object_set_new(cfg, "architectures", archs);
    json_object_set_new(cfg, "model_type", json_string(c->model_type));
    per_layer_back(c, cfg);
    for (int pass = 0; pass < 3; pass++)
        put_hparams(c, cfg, c->hparams, false, pass);
    int64_t ttc;
    if (hfc_int(mf_meta_get(c->m, "tokenizer.ggml.token_type_count"), &ttc))
        set_new(cfg, "type_vocab_size", json_integer(ttc));
    if (c->fwd->flags & (AF_LONGROPE | AF_ROPE_FACTORS | AF_ROPE_FACTORS_QK))
        longrope(c, cfg);
    if (c->fwd->flags & AF_MXFP4)
        mxfp4_config(c, cfg);
    if (c->fwd->flags & AF_LLAMA4)
        llama4_sizes(cfg);
    if (!strcmp(c->arch, "falcon"))
        falcon_layout(c, cfg);
    class_keys(c, cfg);
    tensor_flags(c, cfg);
    unit_scales(c, cfg);
    if (llama3_rope(c, cfg)) {
        json_decref(cfg);
        return NULL;
    }
    const mf_value *tok = mf_meta_get(c->m, "tokenizer.ggml.tokens");
    if (tok && tok->type == MF_V_ARR)
        set_new(cfg, "vocab_size", json_integer((json_int_t)tok->as.arr.n));
    /* rows cut by pad_token_id + 1 (RoBERTa): the forward converter reads the id from config.json */
    for (const conv_rule *r = c->rules; r->pat; r++) {
        int64_t pad;
        if (r->op == OP_DROP_ROWS && hfc_int(mf_meta_get(c->m, "tokenizer.ggml.padding_token_id"), &pad))
            set_new(cfg, r->count_key, json_integer(pad));
    }
    bool has_output = mf_tensor_find(c->m, "output.weight") != NULL && !hfc_output_is_copy(c);
    bool always_tied = !strcmp(c->arch, "gpt2");
    set_new(cfg, "tie_word_embeddings", json_boolean(always_tied || !has_output));
    set_new(cfg, "torch_dtype", json_string(torch_dtype(c)));
    put_token_ids(c, cfg, true);
    const char *text_mt = text_model_type_of(c->model_type);
    if (text_mt)
        nest_text_config(cfg, text_mt);
    return cfg;
}

/* ------------------------------------------------------------ model card */

typedef MF_VEC(char) textbuf;

static void yaml_str(textbuf *b, const char *s)
{
    json_t *j = json_string(s);
    char *q = j ? mf_json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    const char *t = q ? q : "\"\"";
    size_t n = strlen(t);
    if (!mf_vec_grow((void **)&b->v, &b->cap, b->n + n + 1, 1)) {
        memcpy(b->v + b->n, t, n);
        b->n += n;
    }
    free(q);
}

static void yaml_raw(textbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (!mf_vec_grow((void **)&b->v, &b->cap, b->n + n + 1, 1)) {
        memcpy(b->v + b->n, s, n);
        b->n += n;
    }
}

static void card_scalar(hfc *c, textbuf *b, const char *gguf, const char *card)
{
    const mf_value *v = mf_meta_get(c->m, gguf);
    if (!v || v->type != MF_V_STR)
        return;
    yaml_raw(b, card);
    yaml_raw(b, ": ");
    yaml_str(b, v->as.s.ptr);
    yaml_raw(b, "\n");
}

static void card_list(hfc *c, textbuf *b, const char *gguf, const char *card)
{
    const mf_value *v = mf_meta_get(c->m, gguf);
    if (!v || v->type != MF_V_ARR || v->as.arr.elem != MF_V_STR || !v->as.arr.n)
        return;
    yaml_raw(b, card);
    yaml_raw(b, ":\n");
    for (size_t i = 0; i < v->as.arr.n; i++) {
        yaml_raw(b, "- ");
        yaml_str(b, v->as.arr.items[i].as.s.ptr);
        yaml_raw(b, "\n");
    }
}

/* general.base_model.N.repo_url (or .name) back to repo ids. */
static void card_sources(hfc *c, textbuf *b, const char *what, const char *card)
{
    char key[160];
    snprintf(key, sizeof(key), "general.%s.count", what);
    int64_t n = 0;
    if (!hfc_int(mf_meta_get(c->m, key), &n) || n <= 0)
        return;
    yaml_raw(b, card);
    yaml_raw(b, ":\n");
    for (int64_t i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "general.%s.%lld.repo_url", what, (long long)i);
        const mf_value *u = mf_meta_get(c->m, key);
        const char *id = u && u->type == MF_V_STR ? u->as.s.ptr : NULL;
        static const char hub[] = "https://huggingface.co/";
        if (id && !strncmp(id, hub, sizeof(hub) - 1))
            id += sizeof(hub) - 1;
        if (!id) {
            snprintf(key, sizeof(key), "general.%s.%lld.name", what, (long long)i);
            u = mf_meta_get(c->m, key);
            id = u && u->type == MF_V_STR ? u->as.s.ptr : "unknown";
        }
        yaml_raw(b, "- ");
        yaml_str(b, id);
        yaml_raw(b, "\n");
    }
}

/* The remote-code families (Qwen v1, ChatGLM3 / GLM-4): transformers loads
 * them only through the classes config.json's auto_map names, in .py files
 * of the original repository. The GGUF keeps no auto_map; the family's own
 * (Qwen-7B's, chatglm3-6b's and glm-4-9b-chat's config.json) is written
 * back. The code is not: mfmt writes and fetches no code (the model card
 * names the files to copy). NULL for the other families. */
static const char *const qwen_auto_map[][2] = {
    {"AutoConfig", "configuration_qwen.QWenConfig"}, {"AutoModelForCausalLM", "modeling_qwen.QWenLMHeadModel"},
};
static const char *const chatglm_auto_map[][2] = {
    {"AutoConfig", "configuration_chatglm.ChatGLMConfig"},
    {"AutoModel", "modeling_chatglm.ChatGLMForConditionalGeneration"},
    {"AutoModelForCausalLM", "modeling_chatglm.ChatGLMForConditionalGeneration"},
    {"AutoModelForSeq2SeqLM", "modeling_chatglm.ChatGLMForConditionalGeneration"},
    {"AutoModelForSequenceClassification", "modeling_chatglm.ChatGLMForSequenceClassification"},
};

static json_t *remote_auto_map(const hfc *c)
{
    const char *const(*rows)[2] = c->fwd->vocab == V_QWEN ? qwen_auto_map
                                  : c->fwd->vocab == V_CHATGLM ? chatglm_auto_map : NULL;
    size_t n = c->fwd->vocab == V_QWEN ? sizeof(qwen_auto_map) / sizeof(qwen_auto_map[0])
                                       : sizeof(chatglm_auto_map) / sizeof(chatglm_auto_map[0]);
    if (!rows)
        return NULL;
    json_t *m = json_object();
    for (size_t i = 0; m && i < n; i++)
        json_object_set_new(m, rows[i][0], json_string(rows[i][1]));
    return m;
}

/* The model card's note for those families: which code files auto_map
 * names and where they come from. */
static void card_remote_code(const hfc *c, textbuf *b)
{
    if (c->fwd->vocab != V_QWEN && c->fwd->vocab != V_CHATGLM)
        return;
    bool qwen = c->fwd->vocab == V_QWEN;
    yaml_raw(b, "\nThis family loads in transformers only with its own code (`trust_remote_code=True`): "
                "`config.json` and `tokenizer_config.json` name in `auto_map` the classes of ");
    yaml_raw(b, qwen ? "`configuration_qwen.py`, `modeling_qwen.py` and `tokenization_qwen.py` "
                     "(Qwen v1, e.g. the Qwen/Qwen-7B repository)"
                     : "`configuration_chatglm.py`, `modeling_chatglm.py` and `tokenization_chatglm.py` "
                       "(THUDM/chatglm3-6b or THUDM/glm-4-9b-chat, whichever this model came from)");
    yaml_raw(b, ". mfmt writes and fetches no code: copy those files from the original repository into this "
                "directory before loading it with transformers.\n");
}

static int write_card(hfc *c)
{
    textbuf b = {0};
    yaml_raw(&b, "---\n");
    static const struct { const char *gguf, *card; } scalars[] = {
        {"general.name", "name"}, {"general.author", "author"}, {"general.version", "version"},
        {"general.organization", "organization"}, {"general.finetune", "finetune"},
        {"general.basename", "basename"}, {"general.size_label", "size_label"},
        {"general.description", "description"}, {"general.license", "license"},
        {"general.license.name", "license_name"}, {"general.license.link", "license_link"},
    };
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
        card_scalar(c, &b, scalars[i].gguf, scalars[i].card);
    card_sources(c, &b, "base_model", "base_model");
    card_sources(c, &b, "dataset", "datasets");
    card_list(c, &b, "general.tags", "tags");
    card_list(c, &b, "general.languages", "language");
    yaml_raw(&b, "---\n\nConverted from GGUF by mfmt.\n");
    card_remote_code(c, &b);
    int rc = b.v ? hfc_write_bytes(c, "README.md", b.v, b.n) : mf_oom(c->st, c->path);
    free(b.v);
    return rc;
}

/* sentence-transformers' pooling, which the converter reads for BERT:
 * modules.json naming a Pooling module and that module's config. */
static int write_pooling(hfc *c)
{
    int64_t type;
    if (!hfc_int(hfc_key(c, "pooling_type"), &type) || (type != 1 && type != 2))
        return 0;
    char *sub = mf_path_join(c->a, c->tmp_dir, "1_Pooling");
    if (!sub)
        return mf_oom(c->st, c->path);
    if (mkdir(sub, 0755) != 0)
        return mf_fail(c->st, MF_ERR_IO, sub, -1, "mkdir failed: %s", strerror(errno));
    json_t *mods = json_array(), *t = json_object(), *p = json_object();
    json_object_set_new(t, "idx", json_integer(0));
    json_object_set_new(t, "name", json_string("0"));
    json_object_set_new(t, "path", json_string(""));
    json_object_set_new(t, "type", json_string("sentence_transformers.models.Transformer"));
    json_object_set_new(p, "idx", json_integer(1));
    json_object_set_new(p, "name", json_string("1"));
    json_object_set_new(p, "path", json_string("1_Pooling"));
    json_object_set_new(p, "type", json_string("sentence_transformers.models.Pooling"));
    json_array_append_new(mods, t);
    json_array_append_new(mods, p);
    if (hfc_write_json(c, "modules.json", mods))
        return -1;
    json_t *pc = json_object();
    json_object_set_new(pc, "word_embedding_dimension",
                        json_integer(key_int_of(c, "embedding_length")));
    json_object_set_new(pc, "pooling_mode_cls_token", json_boolean(type == 2));
    json_object_set_new(pc, "pooling_mode_mean_tokens", json_boolean(type == 1));
    json_object_set_new(pc, "pooling_mode_max_tokens", json_false());
    json_object_set_new(pc, "pooling_mode_mean_sqrt_len_tokens", json_false());
    return hfc_write_json(c, "1_Pooling/config.json", pc);
}

/* general.sampling.* (gguf-py 0.18 took them from generation_config.json) */
static void put_sampling(const hfc *c, json_t *gen)
{
    static const struct { const char *key, *hf; } keys[] = {
        {"sequence", "sequence"}, {"top_k", "top_k"}, {"top_p", "top_p"}, {"min_p", "min_p"},
        {"xtc_probability", "xtc_probability"}, {"xtc_threshold", "xtc_threshold"}, {"temp", "temperature"},
        {"penalty_last_n", "penalty_last_n"}, {"penalty_repeat", "penalty_repeat"}, {"mirostat", "mirostat"},
        {"mirostat_tau", "mirostat_tau"}, {"mirostat_eta", "mirostat_eta"},
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char k[64];
        snprintf(k, sizeof(k), "general.sampling.%s", keys[i].key);
        const mf_value *v = mf_meta_get(c->m, k);
        if (v)
            set_new(gen, keys[i].hf, value_json(v));
    }
}

int hfc_write_config(hfc *c)
{
    json_t *cfg = build_config(c);
    json_t *am = cfg ? remote_auto_map(c) : NULL;
    if (am)
        json_object_set_new(cfg, "auto_map", am);
    if (!cfg || hfc_write_json(c, "config.json", cfg))
        return c->st->code ? -1 : mf_oom(c->st, c->path);
    json_t *gen = json_object();
    put_token_ids(c, gen, false);
    put_sampling(c, gen);
    if (hfc_write_json(c, "generation_config.json", gen))
        return -1;
    return write_card(c) ? -1 : write_pooling(c);
}

/* RWKV6-Qwen2: the head count from the head size (its head_count key is 0) */
void g2h_head_size_of_heads(hfc *c, json_t *cfg, int64_t x)
{
    int64_t embd = key_int_of(c, "embedding_length");
    if (x > 0 && embd > 0 && embd % x == 0)
        set_new(cfg, "num_attention_heads", json_integer(embd / x));
}

/* ChatGLM: partial_rotary_factor only when the dimension is not half a head */
void g2h_rope_dim_chatglm(hfc *c, json_t *cfg, int64_t x)
{
    int64_t embd = key_int_of(c, "embedding_length"), heads = key_int_of(c, "attention.head_count");
    if (embd <= 0 || heads <= 0 || (int64_t)((double)(embd / heads) * 0.5) == x)
        return;
    set_new(cfg, "partial_rotary_factor", rotary_fraction(x, embd, heads, false));
}

/* ChatGLM: rope_ratio from the base; the keys ChatGLMModel reads besides
 * its find_hparam lists (num_hidden_layers and num_attention_heads strictly,
 * padded_vocab_size for the vocabulary) and, for ChatGLM3's SentencePiece
 * vocabulary, the _name_or_path that selects it (set_vocab_chatglm3). */
void g2h_chatglm(hfc *c, json_t *cfg)
{
    const mf_value *base = hfc_key(c, "rope.freq_base");
    if (base && base->type == MF_V_F32 && base->as.f != 10000.0)
        set_new(cfg, "rope_ratio", f32_json(base->as.f / 10000.0));
    int64_t x;
    if (hfc_int(hfc_key(c, "block_count"), &x))
        set_new(cfg, "num_hidden_layers", json_integer(x));
    if (hfc_int(hfc_key(c, "attention.head_count"), &x))
        set_new(cfg, "num_attention_heads", json_integer(x));
    const mf_value *tokens = mf_meta_get(c->m, "tokenizer.ggml.tokens"), *pre = mf_meta_get(c->m, "tokenizer.ggml.pre");
    if (tokens && tokens->type == MF_V_ARR)
        set_new(cfg, "padded_vocab_size", json_integer((json_int_t)tokens->as.arr.n));
    if (pre && pre->type == MF_V_STR && !strcmp(pre->as.s.ptr, "chatglm-spm"))
        set_new(cfg, "_name_or_path", json_string("THUDM/chatglm3-6b"));
}
