/* quant_mix.c - llama-quantize's per-tensor type rules (see quant_mix.h).
 *
 * Every rule below restates one of llama.cpp's llama_tensor_get_type
 * (src/llama-quant.cpp, c392e509). Where a rule looks odd (the attn_v index
 * is a running count, ffn_down's layer is a running count unless the model
 * has experts, "ffn_down" also matches ffn_down_exps), it is odd in
 * llama.cpp too, and the reference files depend on it. */
#include "ops/quant_mix.h"

#include <limits.h>
#include <stdlib.h>
#include <strings.h>

/* ----------------------------------------------------------- mix names */

typedef struct ftype_row {
    const char *name;
    mf_ftype ftype;
    mf_dtype base;
    /* llama-quantize refuses it without an imatrix (tools/quantize/
     * quantize.cpp: IQ2_XS, IQ2_XXS, IQ2_S, Q2_K_S, IQ1_S, IQ1_M) */
    bool needs_imatrix;
} ftype_row;

/* llama-quantize's QUANT_OPTIONS order (an alias comes before its target,
 * so a number maps to the alias's name as there). */
static const ftype_row ftypes[] = {
    {"Q4_0", MF_FTYPE_Q4_0, MF_Q4_0, false},
    {"Q4_1", MF_FTYPE_Q4_1, MF_Q4_1, false},
    {"Q5_0", MF_FTYPE_Q5_0, MF_Q5_0, false},
    {"Q5_1", MF_FTYPE_Q5_1, MF_Q5_1, false},
    {"IQ2_XXS", MF_FTYPE_IQ2_XXS, MF_IQ2_XXS, true},
    {"IQ2_XS", MF_FTYPE_IQ2_XS, MF_IQ2_XS, true},
    {"IQ2_S", MF_FTYPE_IQ2_S, MF_IQ2_XS, true}, /* sic: IQ2_S's base type is IQ2_XS */
    {"IQ2_M", MF_FTYPE_IQ2_M, MF_IQ2_S, false},
    {"IQ1_S", MF_FTYPE_IQ1_S, MF_IQ1_S, true},
    {"IQ1_M", MF_FTYPE_IQ1_M, MF_IQ1_M, true},
    {"TQ1_0", MF_FTYPE_TQ1_0, MF_TQ1_0, false},
    {"TQ2_0", MF_FTYPE_TQ2_0, MF_TQ2_0, false},
    {"Q2_K", MF_FTYPE_Q2_K, MF_Q2_K, false},
    {"Q2_K_S", MF_FTYPE_Q2_K_S, MF_Q2_K, true},
    {"IQ3_XXS", MF_FTYPE_IQ3_XXS, MF_IQ3_XXS, false},
    {"IQ3_S", MF_FTYPE_IQ3_S, MF_IQ3_S, false},
    {"IQ3_M", MF_FTYPE_IQ3_M, MF_IQ3_S, false},
    {"Q3_K", MF_FTYPE_Q3_K_M, MF_Q3_K, false}, /* alias */
    {"IQ3_XS", MF_FTYPE_IQ3_XS, MF_IQ3_S, false},
    {"Q3_K_S", MF_FTYPE_Q3_K_S, MF_Q3_K, false},
    {"Q3_K_M", MF_FTYPE_Q3_K_M, MF_Q3_K, false},
    {"Q3_K_L", MF_FTYPE_Q3_K_L, MF_Q3_K, false},
    {"IQ4_NL", MF_FTYPE_IQ4_NL, MF_IQ4_NL, false},
    {"IQ4_XS", MF_FTYPE_IQ4_XS, MF_IQ4_XS, false},
    {"Q4_K", MF_FTYPE_Q4_K_M, MF_Q4_K, false}, /* alias */
    {"Q4_K_S", MF_FTYPE_Q4_K_S, MF_Q4_K, false},
    {"Q4_K_M", MF_FTYPE_Q4_K_M, MF_Q4_K, false},
    {"Q5_K", MF_FTYPE_Q5_K_M, MF_Q5_K, false}, /* alias */
    {"Q5_K_S", MF_FTYPE_Q5_K_S, MF_Q5_K, false},
    {"Q5_K_M", MF_FTYPE_Q5_K_M, MF_Q5_K, false},
    {"Q6_K", MF_FTYPE_Q6_K, MF_Q6_K, false},
    {"Q8_0", MF_FTYPE_Q8_0, MF_Q8_0, false},
    {"MXFP4_MOE", MF_FTYPE_MXFP4_MOE, MF_MXFP4, false},
    {"F16", MF_FTYPE_F16, MF_F16, false},
    {"BF16", MF_FTYPE_BF16, MF_BF16, false},
    {"F32", MF_FTYPE_ALL_F32, MF_F32, false},
};
#define N_FTYPES (sizeof(ftypes) / sizeof(ftypes[0]))

static bool is_alias(const ftype_row *r)
{
    return strcmp(r->name, "Q3_K") == 0 || strcmp(r->name, "Q4_K") == 0 ||
           strcmp(r->name, "Q5_K") == 0;
}

static const ftype_row *ftype_row_of(mf_ftype f)
{
    for (size_t i = 0; i < N_FTYPES; i++)
        if (ftypes[i].ftype == f && !is_alias(&ftypes[i]))
            return &ftypes[i];
    return NULL;
}

mf_ftype mf_ftype_parse(const char *s)
{
    if (!s || !*s)
        return MF_FTYPE_INVALID;
    for (size_t i = 0; i < N_FTYPES; i++)
        if (strcasecmp(ftypes[i].name, s) == 0)
            return ftypes[i].ftype;
    /* a number, as llama-quantize also accepts ("15" = Q4_K_M) */
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 0 && v >= 0 && v <= INT_MAX && ftype_row_of((mf_ftype)v))
        return (mf_ftype)v;
    return MF_FTYPE_INVALID;
}

int mf_mix_rules_parse(const char *s)
{
    if (s && (!strcasecmp(s, "c392e50") || !strcasecmp(s, "ecbcb7ea")))
        return MF_MIX_RULES_ECBCB7EA;
    if (s && !strcasecmp(s, "b10256"))
        return MF_MIX_RULES_B10256;
    return -1;
}

const char *mf_ftype_name(mf_ftype f)
{
    const ftype_row *r = ftype_row_of(f);
    return r ? r->name : "?";
}

mf_dtype mf_ftype_base_type(mf_ftype f)
{
    const ftype_row *r = ftype_row_of(f);
    return r ? r->base : MF_DTYPE_INVALID;
}

void mf_ftype_each(void (*fn)(void *ctx, const char *name, mf_ftype f), void *ctx)
{
    for (size_t i = 0; i < N_FTYPES; i++)
        fn(ctx, ftypes[i].name, ftypes[i].ftype);
}

bool mf_ftype_needs_imatrix(mf_ftype f)
{
    const ftype_row *r = ftype_row_of(f);
    return r && r->needs_imatrix;
}

/* ------------------------------------------------------------- hparams */

/* An integer KV, or the first element of an integer array (per-layer
 * head counts are arrays in some models; llama.cpp's n_gqa() reads layer 0). */
static bool meta_int(const mf_model *m, const char *arch, const char *suffix, int *out)
{
    char key[256];
    snprintf(key, sizeof(key), "%s.%s", arch, suffix);
    const mf_value *v = mf_meta_get(m, key);
    if (v && v->type == MF_V_ARR && v->as.arr.n > 0)
        v = &v->as.arr.items[0];
    if (!v)
        return false;
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        *out = v->as.u > INT_MAX ? INT_MAX : (int)v->as.u;
        return true;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        *out = v->as.i < 0 ? 0 : v->as.i > INT_MAX ? INT_MAX : (int)v->as.i;
        return true;
    default:
        return false;
    }
}

void mf_qmix_hparams_from_model(const mf_model *m, mf_qmix_hparams *h)
{
    memset(h, 0, sizeof(*h));
    const mf_value *a = mf_meta_get(m, "general.architecture");
    h->arch = a && a->type == MF_V_STR ? a->as.s.ptr : "";
    meta_int(m, h->arch, "block_count", &h->n_layer);
    meta_int(m, h->arch, "attention.head_count", &h->n_head);
    if (!meta_int(m, h->arch, "attention.head_count_kv", &h->n_head_kv))
        h->n_head_kv = h->n_head; /* optional; defaults to n_head */
    meta_int(m, h->arch, "expert_count", &h->n_expert);
}

void mf_qmix_params_init(mf_qmix_params *p, mf_ftype ftype)
{
    memset(p, 0, sizeof(*p));
    p->ftype = ftype;
    p->output_type = MF_DTYPE_INVALID;
    p->token_embd_type = MF_DTYPE_INVALID;
}

void mf_qmix_init(mf_qmix *q, const mf_qmix_params *p, const mf_qmix_hparams *h)
{
    memset(q, 0, sizeof(*q));
    q->p = *p;
    q->h = *h;
    if (!q->h.arch)
        q->h.arch = "";
}

static bool has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

void mf_qmix_count(mf_qmix *q, const char *name)
{
    if (has(name, "attn_v.weight") || has(name, "attn_qkv.weight") || has(name, "attn_kv_b.weight"))
        q->n_attention_wv++;
    else if (strcmp(name, "output.weight") == 0)
        q->has_output = true;
}

/* ------------------------------------------------------ names and shapes */

/* What sscanf(name, "blk.%d.", &layer) == 1 accepts: "blk.", optional
 * white space and sign, then digits (clamped instead of overflowing). */
static bool parse_layer(const char *name, int *out)
{
    if (strncmp(name, "blk.", 4) != 0)
        return false;
    const char *p = name + 4;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        p++;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return false;
    long long v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        if (v < INT_MAX)
            v = v * 10 + (*p - '0');
    if (v > INT_MAX)
        v = INT_MAX;
    *out = neg ? -(int)v : (int)v;
    return true;
}

int mf_qmix_layer_of(const char *name)
{
    int l;
    return parse_layer(name, &l) ? l : -1;
}

int mf_qmix_name_cmp(const char *a, const char *b)
{
    int la = mf_qmix_layer_of(a), lb = mf_qmix_layer_of(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a, b);
}

int mf_qmix_n_dims(const int64_t ne[4])
{
    for (int i = 3; i >= 1; i--)
        if (ne[i] != 1)
            return i + 1;
    return 1;
}

/* llama_model_quantize_impl's filter: which tensors are quantized at all. */
static bool wants_quantize(const mf_qmix *q, const char *name, const int64_t ne[4])
{
    static const char *const never[] = {
        "_norm.weight",          /* norms */
        "ffn_gate_inp.weight",   /* MoE router */
        "ssm_conv1d.weight",     /* Mamba */
        "shortconv.conv.weight", /* LFM2 (llama-quant.cpp after c392e50; no older name has it) */
        "time_mix_first.weight", "time_mix_w1.weight", "time_mix_w2.weight", /* RWKV */
        "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight",
        "attn_rel_b.weight",     /* T5 relative position bias */
    };
    if (!ends_with(name, "weight") || mf_qmix_n_dims(ne) < 2)
        return false;
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
        if (has(name, never[i]))
            return false;
    if (q->p.leave_output && strcmp(name, "output.weight") == 0)
        return false;
    /* BERT's position and token-type embeddings */
    return strcmp(name, "position_embd.weight") != 0 && strcmp(name, "token_types.weight") != 0;
}

/* ------------------------------------------------------------ the rules */

typedef struct rule_ctx {
    mf_qmix *q;
    const char *name;
    const int64_t *ne;
    mf_ftype ft;
    mf_dtype t; /* the type so far */
    mf_status *st;
} rule_ctx;

static bool ft_in(mf_ftype f, const mf_ftype *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == f)
            return true;
    return false;
}
#define FT_IN(f, ...) ft_in((f), (const mf_ftype[]){__VA_ARGS__}, \
                            sizeof((const mf_ftype[]){__VA_ARGS__}) / sizeof(mf_ftype))

static bool is_arch(const rule_ctx *r, const char *arch) { return strcmp(r->q->h.arch, arch) == 0; }

/* hparams.n_gqa(): n_head / n_head_kv of layer 0 (0 without kv heads) */
static int n_gqa(const mf_qmix *q)
{
    return q->h.n_head_kv > 0 ? q->h.n_head / q->h.n_head_kv : 0;
}

/* llama.cpp's model.type == LLM_TYPE_70B, for the architectures that set it
 * (llama with 80 layers and grouped-query attention, deci and qwen2 with 80). */
static bool is_70b(const mf_qmix *q)
{
    const mf_qmix_hparams *h = &q->h;
    if (h->n_layer != 80)
        return false;
    if (strcmp(h->arch, "llama") == 0)
        return h->n_expert != 8 && h->n_head != h->n_head_kv;
    return strcmp(h->arch, "deci") == 0 || strcmp(h->arch, "qwen2") == 0;
}

/* "Use more bits" for the first and last eighth of the layers and every
 * third layer in between. Integer divisions as in C. */
static bool use_more_bits(int i_layer, int n_layers)
{
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

/* The layer of an ffn tensor: the running count, except with experts where
 * the count is meaningless and the layer comes from the name. */
static int layer_info(rule_ctx *r, int counter, int n_layer, int *i_layer)
{
    *i_layer = counter;
    if (r->q->h.n_expert > 1) {
        if (!parse_layer(r->name, i_layer))
            return mf_fail(r->st, MF_ERR_FORMAT, NULL, -1,
                           "failed to determine the layer of tensor %s", r->name);
        if (*i_layer < 0 || *i_layer >= n_layer)
            return mf_fail(r->st, MF_ERR_FORMAT, NULL, -1,
                           "bad layer %d for tensor %s: must be in [0, %d)", *i_layer, r->name,
                           n_layer);
    }
    return 0;
}

/* output.weight, and token_embd.weight when it doubles as the output. */
static void rule_output(rule_ctx *r)
{
    if (r->q->p.output_type != MF_DTYPE_INVALID) {
        r->t = r->q->p.output_type;
        return;
    }
    const mf_dtype_info *di = mf_dtype_info_of(r->t);
    if (r->ft == MF_FTYPE_MXFP4_MOE)
        r->t = MF_Q8_0;
    else if (is_arch(r, "falcon") || r->ne[0] % di->block_elems != 0)
        r->t = MF_Q8_0;
    else if (FT_IN(r->ft, MF_FTYPE_IQ2_XXS, MF_FTYPE_IQ2_XS, MF_FTYPE_IQ3_XXS, MF_FTYPE_IQ1_S,
                   MF_FTYPE_IQ2_S, MF_FTYPE_IQ2_M, MF_FTYPE_IQ1_M))
        r->t = MF_Q5_K;
    else if (r->t != MF_Q8_0)
        r->t = MF_Q6_K;
}

static void rule_token_embd(rule_ctx *r)
{
    if (r->q->p.token_embd_type != MF_DTYPE_INVALID)
        r->t = r->q->p.token_embd_type;
    else if (FT_IN(r->ft, MF_FTYPE_IQ2_XXS, MF_FTYPE_IQ2_XS, MF_FTYPE_IQ1_S, MF_FTYPE_IQ1_M))
        r->t = MF_Q2_K;
    else if (FT_IN(r->ft, MF_FTYPE_IQ2_S, MF_FTYPE_IQ2_M, MF_FTYPE_IQ3_XXS))
        r->t = MF_IQ3_S;
    else if (FT_IN(r->ft, MF_FTYPE_TQ1_0, MF_FTYPE_TQ2_0))
        r->t = MF_Q4_K;
}

/* The very low-bit mixes have rules of their own for every tensor kind. */
/* llama.cpp b10256's src/llama-quant.cpp puts attn_qkv and attn_kv_b in
 * attn_v's category (category_is_attn_v: one ladder, one i_attention_wv
 * counter over the three); c392e509's and ecbcb7ea's (2026-02-27) give
 * attn_qkv a rule of its own and attn_kv_b none (checked: ecbcb7ea's
 * llama-quantize on Qwen3-Next / Qwen3.5 F16 files gives the default's
 * bytes, tests/data/hf_new/llama_quantize_ecbcb7ea.json). */
static bool b10256_category(const rule_ctx *r)
{
    return r->q->p.rules == MF_MIX_RULES_B10256;
}

/* The tensors attn_v's rules cover. */
static bool attn_v_like(const rule_ctx *r)
{
    return has(r->name, "attn_v.weight") ||
           (b10256_category(r) && (has(r->name, "attn_qkv.weight") || has(r->name, "attn_kv_b.weight")));
}

static void rule_low_bit(rule_ctx *r)
{
    mf_qmix *q = r->q;
    bool iq2s = FT_IN(r->ft, MF_FTYPE_IQ2_S, MF_FTYPE_IQ2_M);
    if (attn_v_like(r)) {
        if (n_gqa(q) >= 4 || q->h.n_expert >= 4)
            r->t = MF_Q4_K;
        else
            r->t = iq2s ? MF_IQ3_S : MF_Q2_K;
        q->i_attention_wv++;
    } else if (q->h.n_expert == 8 && has(r->name, "attn_k.weight")) {
        r->t = MF_Q4_K;
    } else if (has(r->name, "ffn_down")) {
        if (q->i_ffn_down < q->h.n_layer / 8)
            r->t = iq2s ? MF_IQ3_S : MF_Q2_K;
        q->i_ffn_down++;
    } else if (has(r->name, "attn_output.weight")) {
        if (q->h.n_expert == 8)
            r->t = MF_Q5_K;
        else if (FT_IN(r->ft, MF_FTYPE_IQ1_S, MF_FTYPE_IQ1_M))
            r->t = MF_IQ2_XXS;
        else if (iq2s)
            r->t = MF_IQ3_S;
    }
}

static void rule_attn_v(rule_ctx *r)
{
    mf_qmix *q = r->q;
    mf_ftype f = r->ft;
    int gqa = n_gqa(q);
    if (f == MF_FTYPE_Q2_K)
        r->t = gqa >= 4 ? MF_Q4_K : MF_Q3_K;
    else if (f == MF_FTYPE_Q2_K_S && gqa >= 4)
        r->t = MF_Q4_K;
    else if (f == MF_FTYPE_IQ3_XXS)
        r->t = gqa >= 4 ? MF_Q4_K : !q->p.has_imatrix ? MF_IQ3_S : MF_IQ3_XXS;
    else if (FT_IN(f, MF_FTYPE_IQ3_XS, MF_FTYPE_IQ3_S) && gqa >= 4)
        r->t = MF_Q4_K;
    else if (f == MF_FTYPE_IQ3_M)
        r->t = MF_Q4_K;
    else if (f == MF_FTYPE_Q3_K_M)
        r->t = q->i_attention_wv < 2 ? MF_Q5_K : MF_Q4_K;
    else if (f == MF_FTYPE_Q3_K_L)
        r->t = MF_Q5_K;
    else if (FT_IN(f, MF_FTYPE_IQ4_NL, MF_FTYPE_IQ4_XS) && gqa >= 4)
        r->t = MF_Q5_K;
    else if (FT_IN(f, MF_FTYPE_Q4_K_M, MF_FTYPE_Q5_K_M) &&
             use_more_bits(q->i_attention_wv, q->n_attention_wv))
        r->t = MF_Q6_K;
    else if (f == MF_FTYPE_Q4_K_S && q->i_attention_wv < 4)
        r->t = MF_Q5_K;
    /* 70B models share attn_v across 8 heads: the tensor is small, so more
     * bits cost little. */
    if (is_70b(q) && (r->t == MF_Q3_K || r->t == MF_Q4_K))
        r->t = MF_Q5_K;
    if (q->h.n_expert == 8)
        r->t = MF_Q8_0;
    q->i_attention_wv++;
}

static void rule_attn_k(rule_ctx *r)
{
    if (r->q->h.n_expert == 8)
        r->t = MF_Q8_0;
    else if (r->ft == MF_FTYPE_IQ3_XS)
        r->t = MF_IQ3_XXS;
    else if (r->ft == MF_FTYPE_IQ3_XXS)
        r->t = MF_IQ2_S;
}

static void rule_attn_q(rule_ctx *r)
{
    if (r->ft == MF_FTYPE_IQ3_XS)
        r->t = MF_IQ3_XXS;
    else if (r->ft == MF_FTYPE_IQ3_XXS)
        r->t = MF_IQ2_S;
}

static int rule_ffn_down(rule_ctx *r)
{
    mf_qmix *q = r->q;
    mf_ftype f = r->ft;
    int i, n = q->h.n_layer;
    if (layer_info(r, q->i_ffn_down, n, &i))
        return -1;
    bool falcon = is_arch(r, "falcon");
    if (f == MF_FTYPE_Q2_K)
        r->t = MF_Q3_K;
    else if (f == MF_FTYPE_Q2_K_S) {
        if (i < n / 8)
            r->t = MF_Q4_K;
    } else if (f == MF_FTYPE_IQ3_XXS && !q->p.has_imatrix)
        r->t = i < n / 8 ? MF_Q4_K : MF_Q3_K;
    else if (f == MF_FTYPE_Q3_K_M)
        r->t = i < n / 16 ? MF_Q5_K : !falcon || use_more_bits(i, n) ? MF_Q4_K : MF_Q3_K;
    else if (f == MF_FTYPE_IQ3_M && (i < n / 8 || (q->h.n_expert == 8 && use_more_bits(i, n))))
        r->t = MF_Q4_K;
    else if (f == MF_FTYPE_Q3_K_L)
        r->t = falcon ? MF_Q4_K : MF_Q5_K;
    else if (f == MF_FTYPE_Q4_K_M) {
        if (falcon)
            r->t = i < n / 16 ? MF_Q6_K : use_more_bits(i, n) ? MF_Q5_K : MF_Q4_K;
        else if (use_more_bits(i, n))
            r->t = MF_Q6_K;
    } else if (i < n / 8 && FT_IN(f, MF_FTYPE_IQ4_NL, MF_FTYPE_IQ4_XS) && !q->p.has_imatrix)
        r->t = MF_Q5_K;
    else if (f == MF_FTYPE_Q5_K_M && use_more_bits(i, n))
        r->t = MF_Q6_K;
    else if (f == MF_FTYPE_Q4_K_S && !falcon && i < n / 8)
        r->t = MF_Q5_K;
    else if (FT_IN(f, MF_FTYPE_Q4_0, MF_FTYPE_Q5_0) && q->p.has_imatrix && i < n / 8)
        /* guards the first ffn_down layers, only with an imatrix so that the
         * plain mix stays what it always was */
        r->t = f == MF_FTYPE_Q4_0 ? MF_Q4_1 : MF_Q5_1;
    q->i_ffn_down++;
    return 0;
}

static void rule_attn_output(rule_ctx *r)
{
    mf_ftype f = r->ft;
    if (is_arch(r, "falcon")) {
        if (f == MF_FTYPE_Q3_K_L)
            r->t = MF_Q4_K;
    } else if (r->q->h.n_expert == 8) {
        if (FT_IN(f, MF_FTYPE_Q2_K, MF_FTYPE_IQ3_XS, MF_FTYPE_IQ3_XXS, MF_FTYPE_Q3_K_S,
                  MF_FTYPE_Q3_K_M, MF_FTYPE_IQ4_NL, MF_FTYPE_Q4_K_S, MF_FTYPE_Q4_K_M,
                  MF_FTYPE_IQ3_S, MF_FTYPE_IQ3_M, MF_FTYPE_IQ4_XS))
            r->t = MF_Q5_K;
    } else if (f == MF_FTYPE_Q2_K)
        r->t = MF_Q3_K;
    else if (f == MF_FTYPE_IQ3_XXS)
        r->t = MF_IQ3_S;
    else if (f == MF_FTYPE_Q3_K_M)
        r->t = MF_Q4_K;
    else if (f == MF_FTYPE_Q3_K_L)
        r->t = MF_Q5_K;
    else if (f == MF_FTYPE_IQ3_M)
        r->t = MF_Q4_K;
}

static void rule_attn_qkv(rule_ctx *r)
{
    mf_ftype f = r->ft;
    if (FT_IN(f, MF_FTYPE_Q3_K_M, MF_FTYPE_Q3_K_L, MF_FTYPE_IQ3_M))
        r->t = MF_Q4_K;
    else if (f == MF_FTYPE_Q4_K_M)
        r->t = MF_Q5_K;
    else if (f == MF_FTYPE_Q5_K_M)
        r->t = MF_Q6_K;
}

/* ffn_gate and ffn_up: IQ3_XS keeps its middle layers at IQ3_XXS. */
static int rule_ffn_gate_up(rule_ctx *r, int *counter)
{
    int i, n = r->q->h.n_layer;
    if (layer_info(r, *counter, n, &i))
        return -1;
    if (r->ft == MF_FTYPE_IQ3_XS && i >= n / 8 && i < 7 * n / 8)
        r->t = MF_IQ3_XXS;
    (*counter)++;
    return 0;
}

/* llama_tensor_get_type's choice before the row-length check. */
static int rule_pick(rule_ctx *r)
{
    mf_qmix *q = r->q;
    const char *nm = r->name;
    if (strcmp(nm, "output.weight") == 0 || (!q->has_output && strcmp(nm, "token_embd.weight") == 0))
        rule_output(r);
    else if (r->ft == MF_FTYPE_MXFP4_MOE)
        /* llama.cpp b10256 (src/llama-quant.cpp): expert tensors (ne[2] > 1)
         * MXFP4, every other quantized tensor Q8_0, token_embd included */
        r->t = r->ne[2] > 1 ? MF_MXFP4 : MF_Q8_0;
    else if (strcmp(nm, "token_embd.weight") == 0)
        rule_token_embd(r);
    else if (FT_IN(r->ft, MF_FTYPE_IQ2_XXS, MF_FTYPE_IQ2_XS, MF_FTYPE_IQ1_S, MF_FTYPE_IQ2_S,
                   MF_FTYPE_IQ2_M, MF_FTYPE_IQ1_M))
        rule_low_bit(r);
    else if (attn_v_like(r))
        rule_attn_v(r);
    else if (has(nm, "attn_k.weight"))
        rule_attn_k(r);
    else if (has(nm, "attn_q.weight"))
        rule_attn_q(r);
    else if (has(nm, "ffn_down"))
        return rule_ffn_down(r);
    else if (has(nm, "attn_output.weight"))
        rule_attn_output(r);
    else if (has(nm, "attn_qkv.weight"))
        rule_attn_qkv(r);
    else if (has(nm, "ffn_gate"))
        return rule_ffn_gate_up(r, &q->i_ffn_gate);
    else if (has(nm, "ffn_up"))
        return rule_ffn_gate_up(r, &q->i_ffn_up);
    return 0;
}

static bool row_fits(mf_dtype t, int64_t ne0)
{
    const mf_dtype_info *di = mf_dtype_info_of(t);
    return di && ne0 % di->block_elems == 0;
}

/* llama.cpp's convert_incompatible_tensor: a type with 32-element blocks
 * (or F16) for rows that 256-element blocks do not divide. */
static int fallback_type(mf_dtype t, int64_t ne0, const char *name, mf_dtype *out, mf_status *st)
{
    switch (t) {
    case MF_TQ1_0: case MF_TQ2_0: *out = MF_Q4_0; break;
    case MF_IQ2_XXS: case MF_IQ2_XS: case MF_IQ2_S: case MF_IQ3_XXS: case MF_IQ3_S:
    case MF_IQ1_S: case MF_IQ1_M: case MF_Q2_K: case MF_Q3_K: case MF_IQ4_XS:
        *out = MF_IQ4_NL;
        break;
    case MF_Q4_K: *out = MF_Q5_0; break;
    case MF_Q5_K: *out = MF_Q5_1; break;
    case MF_Q6_K: *out = MF_Q8_0; break;
    default:
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1,
                       "tensor %s: rows of %lld values are not a multiple of %s's %u-value "
                       "blocks, and %s has no fallback type", name, (long long)ne0,
                       mf_dtype_name(t), mf_dtype_info_of(t)->block_elems, mf_dtype_name(t));
    }
    if (!row_fits(*out, ne0))
        *out = MF_F16;
    return 0;
}

/* llama_tensor_get_type: the mix's choice plus the fallback. */
static int tensor_get_type(rule_ctx *r, bool *fallback)
{
    if (rule_pick(r))
        return -1;
    if (row_fits(r->t, r->ne[0])) {
        r->q->n_k_quantized++;
        return 0;
    }
    *fallback = true;
    r->q->n_fallback++;
    return fallback_type(r->t, r->ne[0], r->name, &r->t, r->st);
}

mf_dtype mf_qmix_choose(mf_qmix *q, const char *name, const int64_t ne[4], mf_dtype src,
                        bool *fallback, mf_status *st)
{
    *fallback = false;
    if (!wants_quantize(q, name, ne))
        return src;
    mf_dtype base = mf_ftype_base_type(q->p.ftype);
    if (base == MF_DTYPE_INVALID) {
        mf_fail(st, MF_ERR_USAGE, NULL, -1, "invalid file type %d", (int)q->p.ftype);
        return MF_DTYPE_INVALID;
    }
    rule_ctx r = {q, name, ne, q->p.ftype, base, st};
    const mf_dtype_info *bi = mf_dtype_info_of(base);
    if (!q->p.pure && bi->is_quant && tensor_get_type(&r, fallback))
        return MF_DTYPE_INVALID;
    /* the explicit overrides win over everything, as in llama-quantize */
    if (q->p.token_embd_type != MF_DTYPE_INVALID && strcmp(name, "token_embd.weight") == 0)
        r.t = q->p.token_embd_type;
    if (q->p.output_type != MF_DTYPE_INVALID && strcmp(name, "output.weight") == 0)
        r.t = q->p.output_type;
    /* llama-quantize would abort here (ggml asserts on a partial block);
     * mfmt takes the fallback it uses for mixes. */
    if (!row_fits(r.t, ne[0])) {
        *fallback = true;
        q->n_fallback++;
        if (fallback_type(r.t, ne[0], name, &r.t, st))
            return MF_DTYPE_INVALID;
    }
    return r.t;
}
