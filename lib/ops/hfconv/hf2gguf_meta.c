/* hf2gguf_meta.c - the keys of an HF -> GGUF conversion (see hf2gguf.c):
 * config.json values, the architecture's hyper-parameter keys in
 * set_gguf_parameters' order (arch_table.c), general.* (hf2gguf_general.c)
 * and the tokenizer (hf2gguf_vocab.c). */
#include "ops/hfconv/hf2gguf_int.h"
#include "ops/hfconv/arch_file.h"
#include "core/json_build.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------ config values */

/* A config.json value; "a.b" is key b of the object a (MPT's and DBRX's
 * attn_config / ffn_config). */
json_t *h2g_hparam(const conv *c, const char *key)
{
    return h2g_json_path(c->cfg, key);
}

/* Key "a.b" of root: key b of root's object a. */
json_t *h2g_json_path(json_t *root, const char *key)
{
    json_t *o = root;
    for (const char *dot; (dot = strchr(key, '.')) != NULL; key = dot + 1) {
        char part[128];
        if ((size_t)(dot - key) >= sizeof(part))
            return NULL;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - key), key);
        o = json_object_get(o, part);
        if (!json_is_object(o))
            return NULL;
    }
    return json_object_get(o, key);
}

/* Model.find_hparam: the first key present decides, null or not. */
json_t *h2g_find_hparam(const conv *c, const char *const *keys)
{
    for (; *keys; keys++) {
        json_t *v = h2g_hparam(c, *keys);
        if (v)
            return v;
    }
    return NULL;
}

int h2g_need_int(const conv *c, json_t *v, const char *what, int64_t *out)
{
    if (!mf_hf_json_int(v, out))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is not an integer", what);
    return 0;
}

int h2g_head_counts(const conv *c, int64_t *n_head, int64_t *n_kv)
{
    if (h2g_need_int(c, h2g_hparam(c, "num_attention_heads"), "num_attention_heads", n_head))
        return -1;
    json_t *kv = h2g_hparam(c, "num_key_value_heads");
    *n_kv = 0;
    if (json_is_array(kv)) { /* per layer (conv_per_layer): the attention layers' count */
        size_t i;
        json_t *e;
        json_array_foreach(kv, i, e) {
            int64_t x;
            if (h2g_need_int(c, e, "num_key_value_heads", &x))
                return -1;
            *n_kv = x > *n_kv ? x : *n_kv;
        }
    } else if (kv && !json_is_null(kv) && h2g_need_int(c, kv, "num_key_value_heads", n_kv)) {
        return -1;
    }
    if (*n_head <= 0 || *n_kv < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json head counts must be positive");
    return 0;
}

/* ------------------------------------------------------------ metadata */

/* The values computed by the converter (conv_calc in arch.h): each a new
 * reference, NULL with st set on error. */
json_t *h2g_block_count(conv *c)
{
    return json_integer(c->block_count);
}

json_t *h2g_file_type(conv *c)
{
    return json_integer(c->ftype);
}

/* head_dim, else hidden_size // num_attention_heads */
json_t *h2g_rope_dim_llama(conv *c)
{
    int64_t a, b;
    json_t *v = h2g_hparam(c, "head_dim");
    if (v)
        return json_incref(v);
    if (h2g_need_hp_int(c, "hidden_size", &a) || h2g_need_hp_int(c, "num_attention_heads", &b))
        return NULL;
    return json_integer(a / b);
}

static int embd_and_heads(conv *c, int64_t *embd, int64_t *heads)
{
    return h2g_need_hp_int(c, h2g_hparam(c, "hidden_size") ? "hidden_size" : "n_embd", embd) ||
           h2g_need_hp_int(c, h2g_hparam(c, "num_attention_heads") ? "num_attention_heads" : "n_head", heads);
}

/* n_embd // n_head */
json_t *h2g_head_dim_embd(conv *c)
{
    int64_t a, b;
    if (embd_and_heads(c, &a, &b))
        return NULL;
    return json_integer(a / b);
}

/* A partial rotary dimension from the fraction config key pk: phi2 takes
 * int(pct * n_embd) // n_head, the others int(pct * (n_embd // n_head)). */
static json_t *rope_dim_of(conv *c, const char *pk, bool phi2)
{
    int64_t a, b;
    json_t *pct = h2g_hparam(c, pk);
    if (!json_is_number(pct)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no numeric %s", pk);
        return NULL;
    }
    if (embd_and_heads(c, &a, &b))
        return NULL;
    double p = json_number_value(pct);
    return json_integer(phi2 ? (int64_t)(p * (double)a) / b : (int64_t)(p * (double)(a / b)));
}

json_t *h2g_rope_dim_phi2(conv *c)
{
    return rope_dim_of(c, "partial_rotary_factor", true);
}

json_t *h2g_rope_dim_partial(conv *c)
{
    return rope_dim_of(c, h2g_hparam(c, "partial_rotary_factor") ? "partial_rotary_factor" : "rope_pct", false);
}

json_t *h2g_rope_dim_neox(conv *c)
{
    return rope_dim_of(c, "rotary_pct", false);
}

/* config.json ka + kb */
static json_t *sum_of(conv *c, const char *ka, const char *kb)
{
    int64_t a, b;
    if (h2g_need_int(c, h2g_hparam(c, ka), ka, &a) || h2g_need_int(c, h2g_hparam(c, kb), kb, &b))
        return NULL;
    return json_integer(a + b);
}

json_t *h2g_qk_head_dim(conv *c)
{
    return sum_of(c, "qk_nope_head_dim", "qk_rope_head_dim");
}

/* ExpertGatingFuncType: SOFTMAX 1, SIGMOID 2 */
json_t *h2g_gating_func(conv *c)
{
    const char *f = json_string_value(h2g_hparam(c, "scoring_func"));
    if (f && !strcmp(f, "softmax"))
        return json_integer(1);
    if (f && !strcmp(f, "sigmoid"))
        return json_integer(2);
    mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "unsupported scoring_func value: %s", f ? f : "(none)");
    return NULL;
}

/* MambaModel: d_inner (asserted 2 * d_model) or dt_rank, each with its default. */
static json_t *mamba_dim(conv *c, bool inner)
{
    static const char *const dm[] = {"hidden_size", "d_model", NULL}, *const di[] = {"intermediate_size", "d_inner", NULL},
                             *const dr[] = {"time_step_rank", "dt_rank", NULL};
    int64_t a, d;
    if (h2g_need_int(c, h2g_find_hparam(c, dm), "hidden_size", &a))
        return NULL;
    json_t *v = h2g_find_hparam(c, inner ? di : dr);
    d = 0;
    if (v && !json_is_null(v) && h2g_need_int(c, v, inner ? "intermediate_size" : "time_step_rank", &d))
        return NULL;
    if (d == 0) /* "or" the default */
        d = inner ? 2 * a : (a + 15) / 16;
    if (inner && d != 2 * a) { /* "assert d_inner == 2 * d_model" */
        mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "Mamba with d_inner %lld != 2 * d_model %lld",
                (long long)d, (long long)a);
        return NULL;
    }
    return json_integer(d);
}

json_t *h2g_mamba_d_inner(conv *c)
{
    return mamba_dim(c, true);
}

json_t *h2g_mamba_dt_rank(conv *c)
{
    return mamba_dim(c, false);
}

/* RobertaModel.__init__: max_position_embeddings less pad_token_id + 1 */
json_t *h2g_ctx_after_pad(conv *c)
{
    json_t *m = h2g_hparam(c, "max_position_embeddings"), *pad = h2g_hparam(c, "pad_token_id");
    int64_t ctx, p = -1;
    if (!m || h2g_need_int(c, m, "max_position_embeddings", &ctx))
        return NULL;
    if (pad && !json_is_null(pad) && h2g_need_int(c, pad, "pad_token_id", &p))
        return NULL;
    return json_integer(ctx - (p + 1));
}

json_t *h2g_falcon_mamba(conv *c)
{
    const char *mt = json_string_value(h2g_hparam(c, "model_type"));
    return json_boolean(mt && !strcmp(mt, "falcon_mamba"));
}

/* RefactModel: inner 4 * n_embd, hidden int(2 * inner / 3), rounded up to a
 * multiple of 256 */
json_t *h2g_refact_ff(conv *c)
{
    int64_t e;
    if (h2g_need_hp_int(c, "n_embd", &e))
        return NULL;
    int64_t hidden = (int64_t)(2.0 * (double)(4 * e) / 3.0);
    return json_integer(256 * ((hidden + 255) / 256));
}

/* JaisModel.__init__: the embeddings scale (mup_embeddings_scale, else
 * embeddings_scale; the class asserts one is there) and the width scale
 * (mup_output_alpha * mup_width_scale, else width_scale) */
json_t *h2g_jais_embd_scale(conv *c)
{
    static const char *const keys[] = {"mup_embeddings_scale", "embeddings_scale", NULL};
    json_t *v = h2g_find_hparam(c, keys);
    if (!json_is_number(v)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no numeric mup_embeddings_scale or embeddings_scale (JAIS)");
        return NULL;
    }
    return json_incref(v);
}

json_t *h2g_jais_width_scale(conv *c)
{
    json_t *a = h2g_hparam(c, "mup_output_alpha"), *w = h2g_hparam(c, "mup_width_scale");
    if (a) {
        if (json_is_number(a) && json_is_number(w))
            return json_real(json_number_value(a) * json_number_value(w));
    } else if (json_is_number(h2g_hparam(c, "width_scale"))) {
        return json_incref(h2g_hparam(c, "width_scale"));
    }
    mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no numeric mup_output_alpha and mup_width_scale, "
            "or width_scale (JAIS)");
    return NULL;
}

/* The rows of a split's first part (conv_split.first_rows, arch.h). */

/* GraniteMoeModel: "Merged FFN tensor size must be 2 * intermediate_size" */
int h2g_rows_granitemoe_ffn(conv *c, int64_t bid, int64_t rows, int64_t *first)
{
    (void)bid;
    if (h2g_need_hp_int(c, "intermediate_size", first))
        return -1;
    if (rows != 2 * *first)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "Merged FFN tensor size must be 2 * intermediate_size "
                       "(%lld rows, intermediate_size %lld)", (long long)rows, (long long)*first);
    return 0;
}

/* RefactModel: k is n_head_kv (1) * head_dim rows of kv */
int h2g_rows_refact_kv(conv *c, int64_t bid, int64_t rows, int64_t *first)
{
    int64_t embd, heads;
    (void)bid;
    (void)rows;
    if (h2g_need_hp_int(c, "n_embd", &embd) || h2g_need_hp_int(c, "n_head", &heads))
        return -1;
    *first = embd / heads;
    return 0;
}

/* RefactModel: gate is ff_dim rows of gate_up */
int h2g_rows_refact_ff(conv *c, int64_t bid, int64_t rows, int64_t *first)
{
    (void)bid;
    (void)rows;
    json_t *v = h2g_refact_ff(c);
    if (!v)
        return -1;
    *first = json_integer_value(v);
    json_decref(v);
    return 0;
}

/* OpenELMModel._make_divisible (Apple's configuration_openelm.py) */
static int64_t openelm_divisible(double v, int64_t d)
{
    int64_t nv = (int64_t)(v + (double)d / 2) / d * d;
    if (nv < d)
        nv = d;
    if ((double)nv < 0.9 * v)
        nv += d;
    return nv;
}

/* OpenELMModel.__init__: _ffn_dims, one per ffn_multipliers entry */
static int openelm_ffn_dims(conv *c, int64_t **dims, size_t *n)
{
    json_t *m = h2g_hparam(c, "ffn_multipliers");
    int64_t embd, div;
    *dims = NULL;
    if (!json_is_array(m) || json_array_size(m) > (1u << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no ffn_multipliers list (OpenELM)");
    if (h2g_need_hp_int(c, "model_dim", &embd) || h2g_need_hp_int(c, "ffn_dim_divisor", &div))
        return -1;
    *n = json_array_size(m);
    *dims = malloc((*n ? *n : 1) * sizeof(int64_t));
    if (!*dims)
        return mf_oom(c->st, c->dir);
    for (size_t i = 0; i < *n; i++) {
        json_t *x = json_array_get(m, i);
        if (!json_is_number(x)) {
            free(*dims);
            *dims = NULL;
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json ffn_multipliers[%zu] is not a number", i);
        }
        (*dims)[i] = openelm_divisible(json_number_value(x) * (double)embd, div);
    }
    return 0;
}

/* OpenELMModel.modify_tensors: proj_1 = gate (_ffn_dims[bid] rows), up */
int h2g_rows_openelm_ffn(conv *c, int64_t bid, int64_t rows, int64_t *first)
{
    int64_t *dims;
    size_t n;
    (void)rows;
    if (openelm_ffn_dims(c, &dims, &n))
        return -1;
    int rc = (size_t)bid < n ? 0 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "block %lld has no ffn_multipliers entry", (long long)bid);
    if (rc == 0)
        *first = dims[bid];
    free(dims);
    return rc;
}

/* ExaoneModel: intermediate_size when the key is there, else 4 * hidden_size */
json_t *h2g_ffn_or_4x_embd(conv *c)
{
    int64_t h;
    json_t *v = h2g_hparam(c, "intermediate_size");
    if (v)
        return json_incref(v);
    if (h2g_need_hp_int(c, "hidden_size", &h))
        return NULL;
    return json_integer(4 * h);
}

/* ExaoneModel: int(f * (hidden_size // num_attention_heads)), f the first of
 * partial_rotary_factor, rope_pct present, 1.0 when none or null */
json_t *h2g_rope_dim_pct_or_one(conv *c)
{
    static const char *const keys[] = {"partial_rotary_factor", "rope_pct", NULL};
    int64_t a, b;
    json_t *pct = h2g_find_hparam(c, keys);
    if (pct && !json_is_null(pct) && !json_is_number(pct)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json partial_rotary_factor is not a number");
        return NULL;
    }
    if (embd_and_heads(c, &a, &b))
        return NULL;
    double p = pct && !json_is_null(pct) ? json_number_value(pct) : 1.0;
    return json_integer((int64_t)(p * (double)(a / b)));
}

static void arch_key(const conv *c, const char *key, char *out, size_t cap)
{
    if (!strncmp(key, "general.", 8) || !strncmp(key, "tokenizer.", 10))
        snprintf(out, cap, "%s", key);
    else
        snprintf(out, cap, "%s.%s", c->arch->name, key);
}

/* A "=V" constant as JSON. */
static json_t *constant(const char *v)
{
    char *end;
    long long i = strtoll(v, &end, 10);
    if (*v && !*end)
        return json_integer(i);
    double d = strtod(v, &end);
    if (*v && !*end)
        return json_real(d);
    return json_string(v);
}

static bool falsy(const json_t *v)
{
    return !v || json_is_null(v) || json_is_false(v) || (json_is_integer(v) && !json_integer_value(v)) ||
           (json_is_real(v) && json_real_value(v) == 0.0);
}

/* A config key, or "rope:k" / "ropefull:k": TextModel.rope_parameters' k,
 * or k of its full_attention part when it has one (2026). Borrowed. */
static json_t *config_value(conv *c, const char *k)
{
    if (!strncmp(k, "rope:", 5))
        return json_object_get(h2g_rope_params(c), k + 5);
    if (!strncmp(k, "ropefull:", 9)) {
        json_t *rp = h2g_rope_params(c), *full = json_object_get(rp, "full_attention");
        return json_object_get(full ? full : rp, k + 9);
    }
    if (k[0] == '^') /* an mmproj class's global_config (the whole config.json) */
        return h2g_json_path(c->global, k + 1);
    if (!strncmp(k, "pre:", 4)) /* its preprocessor_config */
        return h2g_json_path(c->pre, k + 4);
    if (!strncmp(k, "aud:", 4)) /* its audio encoder's config (hparams_audio) */
        return h2g_json_path(c->audio, k + 4);
    return h2g_hparam(c, k);
}

/* The value of a key list ("a|b", "4*a", "a||=V", "a|=V"): a new reference or NULL. */
json_t *h2g_lookup(conv *c, const char *src)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", src);
    char *or_default = strstr(buf, "||=");
    if (or_default) {
        *or_default = 0;
        or_default += 3;
    }
    int64_t mul = 1;
    char *p = buf;
    if (p[0] >= '0' && p[0] <= '9' && p[1] == '*') {
        mul = p[0] - '0';
        p += 2;
    }
    json_t *v = NULL;
    for (char *save = NULL, *k = strtok_r(p, "|", &save); k; k = strtok_r(NULL, "|", &save)) {
        if (k[0] == '=') {
            v = constant(k + 1);
            break;
        }
        json_t *x = config_value(c, k);
        if (x) { /* the first present decides, null or not */
            v = json_incref(x);
            break;
        }
    }
    if (or_default && falsy(v)) {
        json_decref(v);
        v = constant(or_default);
    }
    if (v && mul != 1 && json_is_integer(v)) {
        json_t *m = json_integer(json_integer_value(v) * mul);
        json_decref(v);
        v = m;
    }
    return v;
}

/* A list of integers (a per-layer value): gguf-py writes Python int lists
 * as INT32 arrays. */
static int put_int_array(conv *c, const char *key, json_t *v, const char *what)
{
    mf_value *a = mf_kv_arr(c->kv, key, MF_V_I32, json_array_size(v));
    for (size_t i = 0; i < json_array_size(v); i++) {
        int64_t x;
        if (h2g_need_int(c, json_array_get(v, i), what, &x))
            return -1;
        if (x < INT32_MIN || x > INT32_MAX)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s[%zu] does not fit an i32", what, i);
        if (a)
            a->as.arr.items[i].as.i = x;
    }
    return 0;
}

static int put_value(conv *c, const conv_hp *h, json_t *v)
{
    char key[160];
    arch_key(c, h->key, key, sizeof(key));
    const char *what = !h->src || h->src[0] == '=' ? h->key : h->src;
    if ((h->type == 'u' || h->type == 'i') && json_is_array(v))
        return put_int_array(c, key, v, what);
    switch (h->type) {
    case 'u': case 'i': {
        int64_t x;
        if (json_is_boolean(v))
            x = json_is_true(v);
        else if (h2g_need_int(c, v, what, &x))
            return -1;
        if (h->type == 'u' ? (x < 0 || x > UINT32_MAX) : (x < INT32_MIN || x > INT32_MAX))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s = %lld does not fit a %s32",
                           what, (long long)x, h->type == 'u' ? "u" : "i");
        if (h->type == 'u')
            mf_kv_u32(c->kv, key, (uint32_t)x);
        else
            mf_kv_i32(c->kv, key, (int32_t)x);
        return 0;
    }
    case 'f':
        if (!json_is_number(v))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is not a number", what);
        mf_kv_f32(c->kv, key, (float)json_number_value(v));
        return 0;
    case 'F': { /* a list of numbers: gguf-py's add_array of floats, F32 */
        mf_value *a = json_is_array(v) ? mf_kv_arr(c->kv, key, MF_V_F32, json_array_size(v)) : NULL;
        if (!json_is_array(v))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "%s is not a list of numbers", what);
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            if (!json_is_number(e))
                return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "%s[%zu] is not a number", what, i);
            if (a)
                a->as.arr.items[i].as.f = (float)json_number_value(e);
        }
        return 0;
    }
    case 'B': { /* a list of booleans: a BOOL array */
        mf_value *a = json_is_array(v) ? mf_kv_arr(c->kv, key, MF_V_BOOL, json_array_size(v)) : NULL;
        if (!json_is_array(v))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "%s is not a list of booleans", what);
        for (size_t i = 0; a && i < json_array_size(v); i++)
            a->as.arr.items[i].as.b = json_is_true(json_array_get(v, i));
        return 0;
    }
    case 'b':
        if (!json_is_boolean(v) && !json_is_integer(v))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is not a boolean", what);
        mf_kv_bool(c->kv, key, json_is_boolean(v) ? json_is_true(v) : json_integer_value(v) != 0);
        return 0;
    default:
        if (!json_is_string(v))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is not a string", what);
        mf_kv_str(c->kv, key, json_string_value(v), json_string_length(v));
        return 0;
    }
}

/* BertModel: modules.json + the Pooling module's config */
int h2g_pooling_type(conv *c)
{
    char *p = mf_path_join_new(c->dir, "modules.json");
    if (!p)
        return mf_oom(c->st, c->dir);
    if (!mf_path_exists(p)) {
        free(p);
        return 0;
    }
    json_t *mods = mf_hf_load_json(p, c->st);
    free(p);
    if (!mods)
        return -1;
    const char *path = NULL;
    for (size_t i = 0; i < json_array_size(mods) && !path; i++) {
        json_t *m = json_array_get(mods, i);
        const char *t = json_string_value(json_object_get(m, "type"));
        if (t && !strcmp(t, "sentence_transformers.models.Pooling"))
            path = json_string_value(json_object_get(m, "path"));
    }
    int rc = 0;
    if (path) {
        char *sub = mf_path_join_new(c->dir, path);
        char *cp = sub ? mf_path_join_new(sub, "config.json") : NULL;
        free(sub);
        json_t *pool = NULL;
        if (!cp)
            rc = mf_oom(c->st, c->dir);
        else if (strstr(path, ".."))
            rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "modules.json: pooling path \"%s\" leaves the directory", path);
        if (rc == 0) {
            pool = mf_hf_load_json(cp, c->st);
            rc = pool ? 0 : -1;
        }
        if (rc == 0) {
            char key[160];
            arch_key(c, "pooling_type", key, sizeof(key));
            if (!falsy(json_object_get(pool, "pooling_mode_mean_tokens")))
                mf_kv_u32(c->kv, key, 1); /* PoolingType.MEAN */
            else if (!falsy(json_object_get(pool, "pooling_mode_cls_token")))
                mf_kv_u32(c->kv, key, 2); /* PoolingType.CLS */
            else
                rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, cp, -1, "only MEAN and CLS pooling types are supported");
        }
        json_decref(pool);
        free(cp);
    }
    json_decref(mods);
    return rc;
}

/* "rope_scaling" with "factor" and the given type, else NULL. */
static json_t *rope_scaling_of(const conv *c, const char *type)
{
    json_t *rs = h2g_hparam(c, "rope_scaling");
    const char *t = json_string_value(json_object_get(rs, "type"));
    if (!json_is_object(rs) || !json_object_get(rs, "factor") || !t || strcmp(t, type))
        return NULL;
    return rs;
}

static int put_f32_of(conv *c, const char *key, json_t *v, const char *what)
{
    conv_hp h = {key, 'f', what, 0, NULL, NULL};
    if (!v)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s", what);
    return put_value(c, &h, v);
}

/* The key blocks the converter writes (conv_block in arch.h). */
int h2g_rope_linear(conv *c)
{
    char key[160];
    json_t *rs = rope_scaling_of(c, "linear");
    if (!rs)
        return 0;
    arch_key(c, "rope.scaling.type", key, sizeof(key));
    mf_kv_str(c->kv, key, "linear", 6);
    return put_f32_of(c, "rope.scaling.factor", json_object_get(rs, "factor"), "rope_scaling.factor");
}

/* NemotronModel: "none" without rope_scaling. With it, c392e50 writes
 * linear and a factor read from the top level of config.json (not from
 * rope_scaling) - refused rather than guessed. */
int h2g_rope_nemotron(conv *c)
{
    char key[160];
    json_t *rs = h2g_hparam(c, "rope_scaling");
    if (rs && !json_is_null(rs))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1,
                       "config.json rope_scaling for Nemotron is not converted by mfmt yet");
    arch_key(c, "rope.scaling.type", key, sizeof(key));
    mf_kv_str(c->kv, key, "none", 4);
    return 0;
}

/* MPTModel: max_alibi_bias is alibi_bias_max with ALiBi, else 0 */
int h2g_mpt_alibi(conv *c)
{
    json_t *alibi = h2g_hparam(c, "attn_config.alibi");
    if (!alibi)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no attn_config.alibi");
    if (!json_is_true(alibi) && !(json_is_integer(alibi) && json_integer_value(alibi))) {
        json_t *zero = json_real(0.0);
        int rc = put_f32_of(c, "attention.max_alibi_bias", zero, "attn_config.alibi_bias_max");
        json_decref(zero);
        return rc;
    }
    return put_f32_of(c, "attention.max_alibi_bias", h2g_hparam(c, "attn_config.alibi_bias_max"),
                      "attn_config.alibi_bias_max");
}

/* yarn: type, factor, original context; DeepSeek-V2 also the log multiplier */
static int rope_yarn(conv *c, bool deepseek)
{
    char key[160];
    json_t *rs = rope_scaling_of(c, "yarn");
    if (!rs)
        return 0;
    arch_key(c, "rope.scaling.type", key, sizeof(key));
    mf_kv_str(c->kv, key, "yarn", 4);
    conv_hp orig = {"rope.scaling.original_context_length", 'u', "rope_scaling.original_max_position_embeddings", 0,
                    NULL, NULL};
    json_t *o = json_object_get(rs, "original_max_position_embeddings");
    if (put_f32_of(c, "rope.scaling.factor", json_object_get(rs, "factor"), "rope_scaling.factor"))
        return -1;
    if (!o)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_scaling (yarn) has no original_max_position_embeddings");
    if (put_value(c, &orig, o))
        return -1;
    if (!deepseek)
        return 0;
    json_t *m = json_object_get(rs, "mscale_all_dim");
    if (!json_is_number(m))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_scaling has no numeric mscale_all_dim");
    json_t *lm = json_real(0.1 * json_number_value(m));
    int rc = put_f32_of(c, "rope.scaling.yarn_log_multiplier", lm, "rope_scaling.mscale_all_dim");
    json_decref(lm);
    return rc;
}

/* ------------------------------------------ the 2026-02 converter's */

/* TextModel.__init__ (ecbcb7ea): rope_parameters (or rope_scaling, or {})
 * with rope_theta, rope_type and a sliding_attention theta mirrored into
 * it. Built once; a borrowed reference. */
json_t *h2g_rope_params(conv *c)
{
    static const char *const theta_keys[] = {"global_rope_theta", "rope_global_theta", "rope_theta_global",
                                             "rope_theta", "rotary_emb_base", NULL};
    static const char *const local_keys[] = {"local_rope_theta", "rope_local_theta", "rope_theta_local",
                                             "swa_rope_theta", "rope_local_base_freq", NULL};
    if (c->rope)
        return c->rope;
    json_t *rp = h2g_hparam(c, "rope_parameters");
    if (!rp)
        rp = h2g_hparam(c, "rope_scaling");
    c->rope = json_is_object(rp) ? json_deep_copy(rp) : json_object();
    if (!c->rope || json_object_get(c->rope, "full_attention") || json_object_get(c->rope, "sliding_attention"))
        return c->rope;
    json_t *theta = h2g_find_hparam(c, theta_keys), *local = h2g_find_hparam(c, local_keys);
    if (local && !json_is_null(local))
        json_object_set_new(c->rope, "sliding_attention", json_pack("{sO}", "rope_theta", local));
    if (!json_object_get(c->rope, "rope_theta") && theta && !json_is_null(theta))
        json_object_set(c->rope, "rope_theta", theta);
    json_t *type = json_object_get(c->rope, "type");
    if (!json_object_get(c->rope, "rope_type") && type && !json_is_null(type))
        json_object_set(c->rope, "rope_type", type);
    return c->rope;
}

static int put_opt_f32(conv *c, const char *key, json_t *v, const char *what)
{
    return v && !json_is_null(v) ? put_f32_of(c, key, v, what) : 0;
}

/* The yarn keys of TextModel.set_gguf_parameters (2026) */
static int rope_yarn_2026(conv *c, json_t *rp)
{
    conv_hp orig = {"rope.scaling.original_context_length", 'u', "rope_parameters.original_max_position_embeddings",
                    0, NULL, NULL};
    json_t *o = json_object_get(rp, "original_max_position_embeddings"), *af = json_object_get(rp, "attention_factor");
    if (!o)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_parameters (yarn) has no original_max_position_embeddings");
    if (!af)
        af = json_object_get(rp, "attn_factor");
    return put_value(c, &orig, o) ||
           put_opt_f32(c, "rope.scaling.yarn_ext_factor", json_object_get(rp, "extrapolation_factor"), "extrapolation_factor") ||
           put_opt_f32(c, "rope.scaling.yarn_attn_factor", af, "attention_factor") ||
           put_opt_f32(c, "rope.scaling.yarn_beta_fast", json_object_get(rp, "beta_fast"), "beta_fast") ||
           put_opt_f32(c, "rope.scaling.yarn_beta_slow", json_object_get(rp, "beta_slow"), "beta_slow") ? -1 : 0;
}

/* rope.dimension_sections: mrope_section padded to 4 (INT32 items) */
static int mrope_sections(conv *c, json_t *ms)
{
    char key[160];
    arch_key(c, "rope.dimension_sections", key, sizeof(key));
    mf_value *a = mf_kv_arr(c->kv, key, MF_V_I32, 4);
    for (size_t i = 0; a && i < 4; i++) {
        int64_t x = 0;
        if (i < json_array_size(ms) && h2g_need_int(c, json_array_get(ms, i), "mrope_section", &x))
            return -1;
        a->as.arr.items[i].as.i = x;
    }
    return 0;
}

/* TextModel.set_gguf_parameters (2026): the rope scaling type and its keys
 * (from rope_parameters' full_attention, else itself), mrope sections, the
 * theta and the sliding-window theta. */
int h2g_rope_2026(conv *c)
{
    char key[160];
    json_t *all = h2g_rope_params(c);
    if (!all)
        return mf_oom(c->st, c->dir);
    json_t *rp = json_object_get(all, "full_attention");
    if (!rp)
        rp = all;
    const char *type = json_string_value(json_object_get(rp, "rope_type"));
    json_t *factor = json_object_get(rp, "factor");
    bool has_factor = factor && !json_is_null(factor);
    const char *gguf_type = !type ? NULL
                          : !strcmp(type, "linear") && has_factor ? "linear"
                          : !strcmp(type, "yarn") && has_factor ? "yarn"
                          : !strcmp(type, "su") || !strcmp(type, "longrope") ? "longrope" : NULL;
    if (gguf_type) {
        arch_key(c, "rope.scaling.type", key, sizeof(key));
        mf_kv_str(c->kv, key, gguf_type, strlen(gguf_type));
    }
    if (gguf_type && strcmp(gguf_type, "longrope") &&
        put_f32_of(c, "rope.scaling.factor", factor, "rope_parameters.factor"))
        return -1;
    if (gguf_type && !strcmp(gguf_type, "yarn") && rope_yarn_2026(c, rp))
        return -1;
    json_t *ms = json_object_get(all, "mrope_section");
    if (ms && mrope_sections(c, ms))
        return -1;
    return put_opt_f32(c, "rope.freq_base", json_object_get(rp, "rope_theta"), "rope_theta") ||
           put_opt_f32(c, "rope.freq_base_swa",
                       json_object_get(json_object_get(all, "sliding_attention"), "rope_theta"), "rope_theta") ? -1 : 0;
}

/* DeepseekV2Model (2026): the compressed cache's key length */
json_t *h2g_mla_key_length(conv *c)
{
    return sum_of(c, "kv_lora_rank", "qk_rope_head_dim");
}

/* DeepseekV2Model (2026): 0.1 * rope_parameters.mscale_all_dim, when present */
json_t *h2g_yarn_log_mul_2026(conv *c)
{
    json_t *rp = h2g_rope_params(c), *m = json_object_get(rp, "mscale_all_dim");
    if (!rp)
        mf_oom(c->st, c->dir);
    if (!m || json_is_null(m))
        return NULL;
    if (!json_is_number(m)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_parameters mscale_all_dim is not a number");
        return NULL;
    }
    return json_real(0.1 * json_number_value(m));
}

/* Glm4MoeModel: int((head_dim or n_embd // n_head) * partial_rotary_factor (0.5)) */
json_t *h2g_rope_dim_glm4moe(conv *c)
{
    json_t *hd = h2g_hparam(c, "head_dim"), *prf = h2g_hparam(c, "partial_rotary_factor");
    int64_t d, a, b;
    if (hd && !json_is_null(hd)) {
        if (h2g_need_int(c, hd, "head_dim", &d))
            return NULL;
    } else {
        if (h2g_need_hp_int(c, "hidden_size", &a) || h2g_need_hp_int(c, "num_attention_heads", &b))
            return NULL;
        d = a / b;
    }
    if (prf && !json_is_number(prf)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json partial_rotary_factor is not a number");
        return NULL;
    }
    return json_integer((int64_t)((double)d * (prf ? json_number_value(prf) : 0.5)));
}

/* HunYuanModel: with rope_type dynamic, NTK-aware alpha scaling folded into
 * rope.freq_base = theta * alpha^(d / (d - 2)) (in double, as Python), scaling
 * "none" with factor 1, the context 256K (both written over in place) */
int h2g_rope_hunyuan(conv *c)
{
    json_t *rp = h2g_rope_params(c);
    const char *rt = json_string_value(json_object_get(rp, "rope_type"));
    if (!rt || strcmp(rt, "dynamic"))
        return 0;
    json_t *alpha = json_object_get(rp, "alpha"), *theta = json_object_get(rp, "rope_theta");
    int64_t d, ctx;
    if (h2g_need_hp_int(c, "head_dim", &d) || h2g_need_hp_int(c, "max_position_embeddings", &ctx))
        return -1;
    double a = alpha ? json_number_value(alpha) : 50, base = theta ? json_number_value(theta) : 10000.0;
    if (base != 10000.0 || (ctx != 32 * 1024 && ctx != 256 * 1024) || d <= 2)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "HunYuan dynamic RoPE scaling assumptions changed "
                       "(theta 10000, max_position_embeddings 32K or 256K): the converter refuses it");
    json_t *fb = json_real(base * pow(a, (double)d / (double)(d - 2))), *one = json_real(1.0);
    char key[160];
    arch_key(c, "rope.scaling.type", key, sizeof(key));
    int rc = put_f32_of(c, "rope.freq_base", fb, "rope_theta");
    mf_kv_str(c->kv, key, "none", 4);
    rc = rc ? rc : put_f32_of(c, "rope.scaling.factor", one, "factor");
    arch_key(c, "rope.scaling.original_context_length", key, sizeof(key));
    mf_kv_u32(c->kv, key, 256 * 1024);
    arch_key(c, "context_length", key, sizeof(key));
    mf_kv_u32(c->kv, key, 256 * 1024);
    json_decref(fb);
    json_decref(one);
    return rc;
}

/* Ernie4_5MoeModel: intermediate_size // num_key_value_heads when there
 * are shared experts and both keys */
json_t *h2g_ernie_shexp_ffl(conv *c)
{
    json_t *n = h2g_hparam(c, "moe_num_shared_experts"), *ff = h2g_hparam(c, "intermediate_size"),
           *kv = h2g_hparam(c, "num_key_value_heads");
    int64_t shared = 0, f, k;
    if (!n || json_is_null(n) || !ff || json_is_null(ff) || !kv || json_is_null(kv))
        return NULL;
    if (h2g_need_int(c, n, "moe_num_shared_experts", &shared) || h2g_need_int(c, ff, "intermediate_size", &f) ||
        h2g_need_int(c, kv, "num_key_value_heads", &k))
        return NULL;
    if (shared <= 0)
        return NULL;
    if (k <= 0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json num_key_value_heads must be positive");
        return NULL;
    }
    return json_integer(f / k);
}

/* Llama4Model: sliding window 0 when every layer_types entry is full_attention */
json_t *h2g_llama4_no_swa(conv *c)
{
    json_t *lt = h2g_hparam(c, "layer_types");
    if (!json_is_array(lt))
        return NULL;
    for (size_t i = 0; i < json_array_size(lt); i++) {
        const char *t = json_string_value(json_array_get(lt, i));
        if (!t || strcmp(t, "full_attention"))
            return NULL;
    }
    return json_integer(0);
}

/* Gemma3Model: sliding_window unless sliding_window_pattern is 1 */
json_t *h2g_sliding_window_gemma3(conv *c)
{
    json_t *pat = h2g_hparam(c, "sliding_window_pattern"), *sw = h2g_hparam(c, "sliding_window");
    if (json_is_integer(pat) && json_integer_value(pat) == 1)
        return NULL;
    if (!sw)
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no sliding_window");
    return sw ? json_incref(sw) : NULL;
}

/* ExpertGatingFuncType from the first of the score keys present (2026) */
json_t *h2g_gating_func_2026(conv *c)
{
    static const char *const keys[] = {"score_function", "scoring_func", "score_func", "moe_router_activation",
                                       "moe_router_activation_func", NULL};
    json_t *v = h2g_find_hparam(c, keys);
    if (!v || json_is_null(v))
        return NULL;
    const char *f = json_string_value(v);
    if (f && (!strcmp(f, "softmax") || !strcmp(f, "sigmoid")))
        return json_integer(!strcmp(f, "softmax") ? 1 : 2);
    mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "unsupported expert score gating function value: %s",
            f ? f : "(not a string)");
    return NULL;
}

/* gguf-py 0.18 Metadata: general.sampling.* from generation_config.json
 * (a missing or unreadable file: none), in set_gguf_meta_model's order. */
static int sampling_keys(conv *c)
{
    static const struct { const char *src, *key; char type; } keys[] = {
        {"sequence", "sequence", 's'}, {"top_k", "top_k", 'i'}, {"top_p", "top_p", 'f'},
        {"min_p", "min_p", 'f'}, {"xtc_probability", "xtc_probability", 'f'},
        {"xtc_threshold", "xtc_threshold", 'f'}, {"temperature", "temp", 'f'},
        {"penalty_last_n", "penalty_last_n", 'i'}, {"penalty_repeat", "penalty_repeat", 'f'},
        {"mirostat", "mirostat", 'i'}, {"mirostat_tau", "mirostat_tau", 'f'}, {"mirostat_eta", "mirostat_eta", 'f'},
    };
    char *p = mf_path_join_new(c->dir, "generation_config.json");
    if (!p)
        return mf_oom(c->st, c->dir);
    json_t *g = mf_path_exists(p) ? mf_json_load_file(p, 0, NULL) : NULL; /* "not all models have valid" ones */
    free(p);
    int rc = 0;
    for (size_t i = 0; rc == 0 && json_is_object(g) && i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(g, keys[i].src);
        char key[64];
        snprintf(key, sizeof(key), "general.sampling.%s", keys[i].key);
        conv_hp h = {key, keys[i].type, keys[i].src, 0, NULL, NULL};
        if (v && !json_is_null(v))
            rc = put_value(c, &h, v);
    }
    json_decref(g);
    return rc;
}

int h2g_rope_yarn(conv *c)
{
    return rope_yarn(c, false);
}

int h2g_rope_yarn_deepseek(conv *c)
{
    return rope_yarn(c, true);
}

/* LFM2Model._add_feed_forward_length: block_ff_dim, with auto adjust
 * int(2 * ff / 3), times the multiplier, rounded up to block_multiple_of */
json_t *h2g_lfm2_ff_dim(conv *c)
{
    int64_t ff, mult;
    json_t *adj = h2g_hparam(c, "block_auto_adjust_ff_dim"), *m = h2g_hparam(c, "block_ffn_dim_multiplier");
    if (h2g_need_hp_int(c, "block_ff_dim", &ff) || h2g_need_hp_int(c, "block_multiple_of", &mult))
        return NULL;
    if (!adj || !m) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no block_auto_adjust_ff_dim or block_ffn_dim_multiplier");
        return NULL;
    }
    if (json_is_true(adj)) {
        ff = (int64_t)(2.0 * (double)ff / 3.0);
        if (!json_is_null(m)) {
            if (!json_is_number(m)) {
                mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json block_ffn_dim_multiplier is not a number");
                return NULL;
            }
            ff = (int64_t)(json_number_value(m) * (double)ff);
        }
        ff = mult * ((ff + mult - 1) / mult);
    }
    return json_integer(ff);
}

/* The class's per-layer value (LFM2Model.set_gguf_parameters' rewrite of
 * num_key_value_heads): config.json's key becomes a list over the layers. */
int h2g_per_layer_config(conv *c)
{
    const char *spec = conv_per_layer_of(c->arch), *key, *kinds_key, *zero, *other;
    char buf[160];
    if (!spec)
        return 0;
    if (conv_per_layer_parse(spec, buf, sizeof(buf), &key, &kinds_key, &zero, &other))
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "per-layer rule \"%s\" is malformed", spec);
    json_t *kinds = h2g_hparam(c, kinds_key), *v = h2g_hparam(c, key);
    int64_t x;
    if (!json_is_array(kinds))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no list %s", kinds_key);
    if (!v || h2g_need_int(c, v, key, &x))
        return v ? -1 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s", key);
    json_t *a = json_array();
    for (size_t i = 0; a && i < json_array_size(kinds); i++) {
        const char *k = json_string_value(json_array_get(kinds, i));
        json_array_append_new(a, json_integer(k && !strcmp(k, zero) ? 0 : x));
    }
    if (!a || json_object_set_new(c->cfg, key, a))
        return mf_oom(c->st, c->dir);
    return 0;
}

/* Qwen3NextModel: ssm.inner_size = linear_value_head_dim * linear_num_value_heads */
json_t *h2g_linear_inner(conv *c)
{
    int64_t d, n;
    if (h2g_need_hp_int(c, "linear_value_head_dim", &d) || h2g_need_hp_int(c, "linear_num_value_heads", &n))
        return NULL;
    return json_integer(d * n);
}

/* Qwen3NextModel: int((head_dim or hidden_size // heads) * partial_rotary_factor (0.25)) */
json_t *h2g_rope_dim_qwen3next(conv *c)
{
    int64_t dim, embd, heads;
    json_t *hd = h2g_hparam(c, "head_dim"), *pf = h2g_hparam(c, "partial_rotary_factor");
    if (hd && !json_is_null(hd)) {
        if (h2g_need_int(c, hd, "head_dim", &dim))
            return NULL;
    } else {
        if (h2g_need_hp_int(c, "hidden_size", &embd) || h2g_need_hp_int(c, "num_attention_heads", &heads))
            return NULL;
        dim = embd / heads;
    }
    if (pf && !json_is_number(pf)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json partial_rotary_factor is not a number");
        return NULL;
    }
    return json_integer((int64_t)((double)dim * (pf ? json_number_value(pf) : 0.25)));
}

/* MiniCPMModel.set_gguf_parameters: embedding_scale = float(scale_emb),
 * residual_scale = scale_depth / num_hidden_layers ** 0.5, logit_scale =
 * hidden_size / dim_model_base (Python floats, written as f32), and the
 * rope scaling type when it is longrope. */
int h2g_minicpm_scales(conv *c)
{
    static const char *const need[] = {"scale_emb", "scale_depth", "dim_model_base", NULL};
    for (size_t i = 0; need[i]; i++)
        if (!json_is_number(h2g_hparam(c, need[i])))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no numeric %s (MiniCPM)", need[i]);
    int64_t layers, hidden;
    if (h2g_need_hp_int(c, "num_hidden_layers", &layers) || h2g_need_hp_int(c, "hidden_size", &hidden))
        return -1;
    char key[160];
    arch_key(c, "embedding_scale", key, sizeof(key));
    mf_kv_f32(c->kv, key, (float)json_number_value(h2g_hparam(c, "scale_emb")));
    arch_key(c, "residual_scale", key, sizeof(key));
    mf_kv_f32(c->kv, key, (float)(json_number_value(h2g_hparam(c, "scale_depth")) / pow((double)layers, 0.5)));
    double base = json_number_value(h2g_hparam(c, "dim_model_base"));
    if (base == 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json dim_model_base is 0 (MiniCPM)");
    arch_key(c, "logit_scale", key, sizeof(key));
    mf_kv_f32(c->kv, key, (float)((double)hidden / base));
    json_t *rs = h2g_hparam(c, "rope_scaling");
    const char *t = json_string_value(json_object_get(rs, "type"));
    if (t && !strcmp(t, "longrope")) {
        arch_key(c, "rope.scaling.type", key, sizeof(key));
        mf_kv_str(c->kv, key, "longrope", 8);
    }
    return 0;
}

/* An i32 array key from a list of integers (gguf-py's add_array of ints). */
static int put_i32_array(conv *c, const char *k, const int64_t *v, size_t n, const char *what)
{
    char key[160];
    arch_key(c, k, key, sizeof(key));
    mf_value *a = mf_kv_arr(c->kv, key, MF_V_I32, n);
    for (size_t i = 0; a && i < n; i++) {
        if (v[i] < INT32_MIN || v[i] > INT32_MAX)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s[%zu] does not fit an i32", what, i);
        a->as.arr.items[i].as.i = v[i];
    }
    return 0;
}

/* OpenELMModel.set_gguf_parameters: per-layer FFN widths, query and KV head
 * counts as arrays (the class asserts one entry per block) */
int h2g_openelm_layers(conv *c)
{
    static const char *const lists[] = {"num_query_heads", "num_kv_heads"};
    static const char *const keys[] = {"attention.head_count", "attention.head_count_kv"};
    int64_t *dims, v[2][1024];
    size_t n;
    if (openelm_ffn_dims(c, &dims, &n))
        return -1;
    int rc = (int64_t)n == c->block_count && n <= 1024 ? 0 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
             "config.json: %zu ffn_multipliers for %lld layers (OpenELM)", n, (long long)c->block_count);
    for (int l = 0; rc == 0 && l < 2; l++) {
        json_t *a = h2g_hparam(c, lists[l]);
        if (!json_is_array(a) || json_array_size(a) != n)
            rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s must list one value per layer", lists[l]);
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = h2g_need_int(c, json_array_get(a, i), lists[l], &v[l][i]);
    }
    if (rc == 0)
        rc = put_i32_array(c, "feed_forward_length", dims, n, "ffn_multipliers");
    for (int l = 0; rc == 0 && l < 2; l++)
        rc = put_i32_array(c, keys[l], v[l], n, lists[l]);
    free(dims);
    return rc;
}

/* JaisModel.__init__ asserts SwiGLU and ALiBi; it writes no key */
int h2g_jais_config(conv *c)
{
    const char *act = json_string_value(h2g_hparam(c, "activation_function")),
               *pos = json_string_value(h2g_hparam(c, "position_embedding_type"));
    if (!act || strcmp(act, "swiglu") || !pos || strcmp(pos, "alibi"))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "JAIS: the converter takes activation_function "
                       "swiglu and position_embedding_type alibi only");
    return 0;
}

/* Qwen2VLModel: rope_scaling.mrope_section padded with zeros to 4, an
 * array of i32 (gguf-py's add_array of Python ints) */
int h2g_mrope_sections(conv *c)
{
    json_t *ms = json_object_get(h2g_hparam(c, "rope_scaling"), "mrope_section");
    size_t n = json_array_size(ms);
    if (!json_is_array(ms) || n > 64)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no rope_scaling.mrope_section list");
    char key[160];
    arch_key(c, "rope.dimension_sections", key, sizeof(key));
    mf_value *a = mf_kv_arr(c->kv, key, MF_V_I32, n < 4 ? 4 : n);
    for (size_t i = 0; a && i < n; i++) {
        int64_t x;
        if (h2g_need_int(c, json_array_get(ms, i), "rope_scaling.mrope_section", &x))
            return -1;
        if (x < INT32_MIN || x > INT32_MAX)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json rope_scaling.mrope_section %lld does "
                           "not fit an i32", (long long)x);
        a->as.arr.items[i].as.i = x;
    }
    return 0;
}

static int hyper_parameters(conv *c, const conv_hp *list)
{
    for (const conv_hp *h = list; h->key; h++) {
        if (!strcmp(h->key, "@set")) { /* the class sets hparams[k] = v first */
            const char *eq = strchr(h->src, '=');
            char k[64];
            snprintf(k, sizeof(k), "%.*s", (int)(eq - h->src), h->src);
            if (json_object_set_new(c->cfg, k, constant(eq + 1)))
                return mf_oom(c->st, c->dir);
            continue;
        }
        if (!strcmp(h->key, "@base")) {
            if (hyper_parameters(c, c->l2026 ? conv_base_hparams_2026 : conv_base_hparams))
                return -1;
            continue;
        }
        if (h->block) {
            if (h->block->fwd(c))
                return -1;
            continue;
        }
        json_t *v = h->calc ? h->calc->fwd(c) : h2g_lookup(c, h->src);
        if (!v && c->st->code)
            return -1;
        bool skip = (!v || json_is_null(v)) || ((h->flags & HP_TRUTHY) && falsy(v));
        if (skip && !(h->flags & HP_OPT) && h->src && !strncmp(h->src, "pre:", 4)) {
            json_decref(v);
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "preprocessor_config.json (or processor_config.json) "
                           "has no %s (for %s.%s)", h->src + 4, c->arch->name, h->key);
        }
        if (skip && !(h->flags & HP_OPT)) {
            json_decref(v);
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s%s (for %s.%s)",
                           h->calc ? "@" : "", h->calc ? h->calc->name : h->src, c->arch->name, h->key);
        }
        int rc = skip ? 0 : put_value(c, h, v);
        json_decref(v);
        if (rc)
            return -1;
    }
    return 0;
}

/* gguf-py's parameter counts: experts' tensors ("_exps.") count once per
 * expert for the size label "Nx..." */
static void param_counts(const conv *c, mf_hf_params *p)
{
    int64_t expert_sum = 0, n_expert_tensors = 0;
    memset(p, 0, sizeof(*p));
    for (size_t i = 0; i < c->n_out; i++) {
        const out_tensor *o = &c->out[i];
        int64_t n = h2g_numel(o->shape, o->ndim);
        /* an experts' bias [E, n] counts per expert too (gguf-py 0.18.0's
         * shape[-2 if ".bias" in name else -3]; no c392e50 family has one) */
        bool bias = strstr(o->name, ".bias") != NULL;
        if (strstr(o->name, "_exps.") && o->ndim >= (bias ? 2 : 3)) {
            int64_t e = o->shape[o->ndim - (bias ? 2 : 3)];
            p->expert += e ? n / e : 0;
            expert_sum += e;
            n_expert_tensors++;
        } else {
            p->shared += n;
        }
        p->total += n;
    }
    p->expert_count = n_expert_tensors ? expert_sum / n_expert_tensors : 0;
}

int h2g_build_metadata(conv *c, mf_hf_meta_in *in)
{
    mf_hf_params pc;
    param_counts(c, &pc); /* vocab-only: no tensors, so no parameters (write_vocab) */
    if (c->mm) { /* MmprojModel: general.type mmproj, no sampling keys, no vocabulary */
        mf_kv_str(c->kv, "general.type", "mmproj", 6);
        in->mmproj = true;
        if (mf_hf_general_meta(c->dir, c->global, &pc, in, c->kv, c->st) || hyper_parameters(c, c->hparams))
            return -1;
        mf_kv_u32(c->kv, "general.quantization_version", 2);
        return c->kv->failed ? mf_oom(c->st, c->dir) : 0;
    }
    mf_kv_str(c->kv, "general.type", "model", 5);
    mf_hf_vocab_opts vo = {.kind = (int)c->arch->vocab, .arch = c->arch->name,
                           .note = c->opts.note, .note_user = c->opts.note_user, .l2026 = c->l2026,
                           .pre_fallback = c->arch_file ? c->arch_file->pre_tokenizer : NULL};
    if (c->l2026) { /* ModelBase.prepare_metadata, then TextModel's set_vocab */
        if (sampling_keys(c) || mf_hf_general_meta(c->dir, c->cfg, &pc, in, c->kv, c->st) ||
            hyper_parameters(c, c->hparams))
            return -1;
        mf_kv_u32(c->kv, "general.quantization_version", 2);
        if (mf_hf_vocab_keys(c->dir, c->cfg, &vo, c->kv, c->st))
            return -1;
    } else {
        if (mf_hf_general_meta(c->dir, c->cfg, &pc, in, c->kv, c->st) || hyper_parameters(c, c->hparams) ||
            mf_hf_vocab_keys(c->dir, c->cfg, &vo, c->kv, c->st))
            return -1;
        mf_kv_u32(c->kv, "general.quantization_version", 2);
    }
    if (c->kv->failed)
        return c->kv->dup[0] ? mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "duplicated key name \"%s\"", c->kv->dup)
                             : mf_oom(c->st, c->dir);
    return 0;
}

/* A config value of find_hparam(keys) (the first of "a|b" present), an integer. */
static int first_int(conv *c, const char *keys, int64_t *x)
{
    char k[64];
    for (const char *p = keys;;) {
        size_t n = strcspn(p, "|");
        snprintf(k, sizeof(k), "%.*s", (int)n, p);
        json_t *v = h2g_hparam(c, k);
        if (v && !json_is_null(v))
            return h2g_need_int(c, v, k, x);
        if (!p[n])
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has none of %s", keys);
        p += n + 1;
    }
}

/* GraniteHybridModel: d_inner = find_hparam(["expand", "num_heads"]) *
 * find_hparam(["mamba_head_dim", "hidden_size", "d_model"]), each also with
 * the "mamba_" prefix after the plain names */
json_t *h2g_granite_hybrid_inner(conv *c)
{
    int64_t e, d;
    if (first_int(c, "expand|num_heads|mamba_expand|mamba_num_heads", &e) ||
        first_int(c, "mamba_head_dim|hidden_size|d_model|mamba_mamba_head_dim|mamba_hidden_size|mamba_d_model", &d))
        return NULL;
    return json_integer(e * d);
}

/* FalconH1Model (Mamba2Model.set_gguf_parameters): time_step_rank =
 * d_inner (mamba_d_ssm) // (find_hparam(["mamba_d_head", "head_dim"]) or 64) */
json_t *h2g_falcon_h1_dt_rank(conv *c)
{
    int64_t inner, hd = 64;
    json_t *v = NULL;
    const char *const heads[] = {"mamba_d_head", "head_dim", "mamba_mamba_d_head", "mamba_head_dim"};
    for (size_t i = 0; i < 4 && !(v && !json_is_null(v)); i++)
        v = h2g_hparam(c, heads[i]);
    if (first_int(c, "mamba_d_ssm|mamba_mamba_d_ssm", &inner) ||
        (v && !json_is_null(v) && (h2g_need_int(c, v, "mamba_d_head", &hd))))
        return NULL;
    if (hd <= 0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json mamba_d_head must be positive");
        return NULL;
    }
    return json_integer(inner / hd);
}

/* FalconH1Model.modify_tensors: in_proj's rows [z: d_ssm][x: d_ssm]
 * [B: g * d_state][C: g * d_state][dt: the rest] times ssm_multipliers[0..4]
 * (config keys mamba_d_ssm, mamba_n_groups, mamba_d_state) */
int h2g_falcon_h1_zxbcdt(conv *c, int64_t rows, float *factors)
{
    int64_t d, g, s;
    json_t *m = h2g_hparam(c, "ssm_multipliers");
    if (h2g_need_hp_int(c, "mamba_d_ssm", &d) || h2g_need_hp_int(c, "mamba_n_groups", &g) ||
        h2g_need_hp_int(c, "mamba_d_state", &s))
        return -1;
    if (json_array_size(m) != 5)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json ssm_multipliers must be a list of 5 numbers");
    const int64_t ends[4] = {d, 2 * d, 2 * d + g * s, 2 * d + 2 * g * s};
    for (int64_t r = 0; r < rows; r++) {
        size_t k = 0;
        while (k < 4 && r >= ends[k])
            k++;
        json_t *f = json_array_get(m, k);
        if (!json_is_number(f))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json ssm_multipliers[%zu] is not a number", k);
        factors[r] = (float)json_number_value(f);
    }
    return 0;
}

/* Rwkv6Model: intermediate_size, or int((hidden_size * 3.5) // 32 * 32) when null */
json_t *h2g_rwkv_ff(conv *c)
{
    int64_t ff, h;
    json_t *v = h2g_hparam(c, "intermediate_size");
    if (v && !json_is_null(v))
        return h2g_need_int(c, v, "intermediate_size", &ff) ? NULL : json_integer(ff);
    if (h2g_need_hp_int(c, "hidden_size", &h))
        return NULL;
    return json_integer((int64_t)((double)h * 3.5 / 32.0) * 32); /* floor of a positive value */
}

/* Rwkv6Model: 64 (time mix) / 128 (time decay) for hidden_size 4096, else 32 / 64 */
static json_t *rwkv_extra(conv *c, int64_t big, int64_t small)
{
    int64_t h;
    if (h2g_need_hp_int(c, "hidden_size", &h))
        return NULL;
    return json_integer(h == 4096 ? big : small);
}

json_t *h2g_rwkv_mix_extra(conv *c)
{
    return rwkv_extra(c, 64, 32);
}

json_t *h2g_rwkv_decay_extra(conv *c)
{
    return rwkv_extra(c, 128, 64);
}

/* RWKV6Qwen2Model's wkv.head_size: hidden_size // num_attention_heads (the
 * head count itself is written as 0) */
json_t *h2g_head_size_of_heads(conv *c)
{
    return h2g_head_dim_embd(c);
}

/* RWKV6Qwen2Model: the same for hidden_size >= 4096 (QRWKV6-32B's 5120 too) */
static json_t *rwkv_extra_ge(conv *c, int64_t big, int64_t small)
{
    int64_t h;
    if (h2g_need_hp_int(c, "hidden_size", &h))
        return NULL;
    return json_integer(h >= 4096 ? big : small);
}

json_t *h2g_rwkv_mix_extra_ge(conv *c)
{
    return rwkv_extra_ge(c, 64, 32);
}

json_t *h2g_rwkv_decay_extra_ge(conv *c)
{
    return rwkv_extra_ge(c, 128, 64);
}

/* ChatGLMModel.set_gguf_parameters: int((attention_dim, else hidden_size //
 * num_attention_heads) * partial_rotary_factor), the factor 0.5 by default */
json_t *h2g_rope_dim_chatglm(conv *c)
{
    int64_t dim, h, heads;
    json_t *ad = h2g_hparam(c, "attention_dim"), *pf = h2g_hparam(c, "partial_rotary_factor");
    if (ad) {
        if (h2g_need_int(c, ad, "attention_dim", &dim))
            return NULL;
    } else {
        if (h2g_need_hp_int(c, "hidden_size", &h) || h2g_need_hp_int(c, "num_attention_heads", &heads))
            return NULL;
        if (heads <= 0)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json num_attention_heads is not positive"),
                   NULL;
        dim = h / heads;
    }
    if (pf && !json_is_number(pf))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json partial_rotary_factor is not a number"), NULL;
    return json_integer((int64_t)((double)dim * (pf ? json_number_value(pf) : 0.5)));
}

/* ChatGLMModel: rope.freq_base = 10000 * rope_ratio (10000 without it),
 * written last */
int h2g_chatglm(conv *c)
{
    json_t *ratio = h2g_hparam(c, "rope_ratio");
    if (ratio && !json_is_number(ratio))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json rope_ratio is not a number");
    json_t *base = json_real(10000.0 * (ratio ? json_number_value(ratio) : 1.0));
    int rc = base ? put_f32_of(c, "rope.freq_base", base, "rope_ratio") : mf_oom(c->st, c->dir);
    json_decref(base);
    return rc;
}

/* ------------------------------------------------------------- DeciLM */

/* DeciModel.__init__ for block_configs (Llama-3_1-Nemotron-51B), layer il:
 * attention.n_heads_in_group null -> no KV heads, num_attention_heads heads
 * when replace_with_linear is true (a linear layer) else none (a no-op);
 * otherwise num_attention_heads // n_heads_in_group KV heads. The FFN width
 * is _ffn_mult_to_intermediate_size: int(2 * ffn_mult * hidden_size / 3)
 * rounded up to a multiple of 256. */
static int deci_block(const conv *c, int64_t il, int64_t *heads, int64_t *kv, int64_t *ff)
{
    json_t *bc = h2g_hparam(c, "block_configs"), *b = json_array_get(bc, (size_t)il);
    if (!json_is_array(bc) || (int64_t)json_array_size(bc) != c->block_count)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json block_configs must list one block per layer "
                       "(%lld; DeciModel asserts it)", (long long)c->block_count);
    int64_t n_head, hidden, g;
    if (h2g_need_hp_int(c, "num_attention_heads", &n_head) || h2g_need_hp_int(c, "hidden_size", &hidden))
        return -1;
    json_t *at = json_object_get(b, "attention"), *grp = json_object_get(at, "n_heads_in_group");
    json_t *mult = json_object_get(json_object_get(b, "ffn"), "ffn_mult");
    if (!json_is_object(at) || !grp || !json_is_number(mult) || (il == 0 && !json_is_real(mult)))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json block_configs[%lld] needs attention."
                       "n_heads_in_group and a float ffn.ffn_mult", (long long)il);
    if (json_is_null(grp)) {
        *kv = 0;
        *heads = json_is_true(json_object_get(at, "replace_with_linear")) ? n_head : 0;
    } else {
        if (h2g_need_int(c, grp, "block_configs attention.n_heads_in_group", &g))
            return -1;
        if (g <= 0)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json block_configs[%lld] n_heads_in_group "
                           "must be positive", (long long)il);
        *kv = n_head / g;
        *heads = n_head;
    }
    double w = 2 * json_number_value(mult) * (double)hidden / 3;
    if (!(w >= 0 && w < 1e12))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json block_configs[%lld] ffn_mult gives no width",
                       (long long)il);
    *ff = (int64_t)w;
    if (*ff % 256)
        *ff += 256 - *ff % 256;
    return 0;
}

/* DeciModel.set_gguf_parameters (block_configs): head_count_kv, head_count,
 * feed_forward_length, one i32 per layer */
int h2g_deci_layers(conv *c)
{
    if (c->block_count <= 0 || c->block_count > (1 << 16))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "block count %lld out of range", (long long)c->block_count);
    int64_t *v = malloc(3 * (size_t)c->block_count * sizeof(int64_t));
    if (!v)
        return mf_oom(c->st, c->dir);
    int64_t n = c->block_count, *heads = v, *kv = v + n, *ff = v + 2 * n;
    int rc = 0;
    for (int64_t il = 0; rc == 0 && il < n; il++)
        rc = deci_block(c, il, &heads[il], &kv[il], &ff[il]);
    if (rc == 0)
        rc = put_i32_array(c, "attention.head_count_kv", kv, (size_t)n, "block_configs");
    if (rc == 0)
        rc = put_i32_array(c, "attention.head_count", heads, (size_t)n, "block_configs");
    if (rc == 0)
        rc = put_i32_array(c, "feed_forward_length", ff, (size_t)n, "block_configs");
    free(v);
    return rc;
}

/* DeciModel.modify_tensors' heads for block bid: num_key_value_heads_per_layer[bid]
 * (DeciLM-7B), else the block_configs' counts, else num_key_value_heads
 * (0: none, as permute() takes None). */
int h2g_layer_heads(const conv *c, int64_t bid, int64_t *n_head, int64_t *n_kv)
{
    if (h2g_head_counts(c, n_head, n_kv))
        return -1;
    if (bid < 0)
        return 0;
    json_t *per = h2g_hparam(c, "num_key_value_heads_per_layer");
    if (per) {
        if (!json_is_array(per) || (size_t)bid >= json_array_size(per))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json num_key_value_heads_per_layer has no "
                           "entry for layer %lld", (long long)bid);
        return h2g_need_int(c, json_array_get(per, (size_t)bid), "num_key_value_heads_per_layer", n_kv);
    }
    if (h2g_hparam(c, "block_configs")) {
        int64_t ff;
        return deci_block(c, bid, n_head, n_kv, &ff);
    }
    return 0;
}

/* MistralModel.set_mistral_config: params.json's yarn {factor, beta, alpha,
 * original_max_position_embeddings} as YARN scaling, beta the fast and
 * alpha the slow beta, the log multiplier 1.0 (mscale_all_dim) */
int h2g_mistral_yarn(conv *c)
{
    static const conv_hp keys[] = {
        {"rope.scaling.type", 's', "=yarn", 0, NULL, NULL},
        {"rope.scaling.factor", 'f', "yarn.factor", 0, NULL, NULL},
        {"rope.scaling.yarn_beta_fast", 'f', "yarn.beta", 0, NULL, NULL},
        {"rope.scaling.yarn_beta_slow", 'f', "yarn.alpha", 0, NULL, NULL},
        {"rope.scaling.yarn_log_multiplier", 'f', "=1.0", 0, NULL, NULL},
        {"rope.scaling.original_context_length", 'u', "yarn.original_max_position_embeddings", 0, NULL, NULL},
        {NULL, 0, NULL, 0, NULL, NULL},
    };
    json_t *y = h2g_hparam(c, "yarn");
    if (!y)
        return 0;
    if (!json_is_object(y))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "params.json yarn is not an object");
    return hyper_parameters(c, keys);
}
/* Ernie4_5Model.modify_tensors: qkv_proj split into [n_head * head_dim,
 * n_kv * head_dim, n_kv * head_dim] rows; head_dim from config.json, else
 * hidden_size // num_attention_heads */
int h2g_rows_ernie_qkv(conv *c, int64_t rows, int64_t *each)
{
    int64_t heads, kv, hd;
    (void)rows;
    if (h2g_need_hp_int(c, "num_attention_heads", &heads) || h2g_need_hp_int(c, "num_key_value_heads", &kv))
        return -1;
    json_t *h = h2g_hparam(c, "head_dim");
    if (h && !json_is_null(h)) {
        if (h2g_need_int(c, h, "head_dim", &hd))
            return -1;
    } else if (h2g_need_hp_int(c, "hidden_size", &hd)) {
        return -1;
    } else if (heads <= 0) {
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "num_attention_heads %lld", (long long)heads);
    } else {
        hd /= heads;
    }
    if (heads <= 0 || kv <= 0 || hd <= 0 || heads > INT32_MAX || kv > INT32_MAX || hd > INT32_MAX)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "heads %lld, KV heads %lld, head_dim %lld: not a qkv "
                       "split", (long long)heads, (long long)kv, (long long)hd);
    each[0] = heads * hd;
    each[1] = each[2] = kv * hd;
    return 0;
}

/* OP_VOCAB_ROWS (Gemma3Model.modify_tensors: data_torch[:len(tokens)]): the
 * token count is that of the vocabulary step (config.json's vocab_size,
 * else the tokenizer's), built once more here into a list of its own,
 * since the parameter count (general.size_label) comes before it. */
int h2g_cut_vocab_rows(conv *c)
{
    bool any = false;
    for (size_t i = 0; i < c->n_out && !any; i++)
        any = c->out[i].vocab_rows;
    if (!any)
        return 0;
    mf_kvlist kv;
    if (mf_kvlist_init(&kv))
        return mf_oom(c->st, c->dir);
    kv.overwrite = c->kv->overwrite;
    mf_hf_vocab_opts vo = {.kind = (int)c->arch->vocab, .arch = c->arch->name, .l2026 = c->l2026,
                           .pre_fallback = c->arch_file ? c->arch_file->pre_tokenizer : NULL};
    int rc = mf_hf_vocab_keys(c->dir, c->cfg, &vo, &kv, c->st);
    const mf_kv *tok = NULL;
    for (size_t i = 0; rc == 0 && i < kv.n && !tok; i++)
        if (!strcmp(kv.kv[i].key, "tokenizer.ggml.tokens"))
            tok = &kv.kv[i];
    if (rc == 0 && (!tok || tok->v.type != MF_V_ARR))
        rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "the vocabulary has no token list to cut the embedding by");
    for (size_t i = 0; rc == 0 && i < c->n_out; i++) {
        out_tensor *o = &c->out[i];
        if (!o->vocab_rows || o->ndim < 1 || (uint64_t)o->shape[0] <= tok->v.as.arr.n)
            continue;
        int64_t n = (int64_t)tok->v.as.arr.n;
        if (!o->row_map) { /* the first n source rows */
            if (!(o->row_map = malloc(sizeof(int64_t) * (size_t)(n ? n : 1)))) {
                rc = mf_oom(c->st, c->dir);
                break;
            }
            for (int64_t k = 0; k < n; k++)
                o->row_map[k] = k;
        }
        o->shape[0] = n; /* a row map's first n entries */
    }
    mf_kvlist_free(&kv);
    return rc;
}
