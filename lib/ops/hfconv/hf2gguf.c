/* hf2gguf.c - Hugging Face directory -> GGUF, as llama.cpp's
 * convert_hf_to_gguf.py (c392e509, gguf-py 0.15.0) writes it, for the
 * architectures of the table in arch_table.c:
 *  - parts: the directory's model*.safetensors files (else pytorch_model*.bin)
 *    in sorted name order; safetensors names sorted within a part, .bin
 *    names in the state dict's order; an index's weight_map must name the
 *    same tensors;
 *  - each tensor goes through its architecture's rules (modify_tensors:
 *    renames, skips, permutations, +1, -exp, transposes, fused qkv
 *    re-orders and splits, stacking) and gguf-py's name map; generated
 *    tensors (rope_freqs, rope_factors_long/short) come first;
 *  - types: 1-d tensors, *_norm.weight, routers, position/token-type
 *    embeddings, ssm_conv1d and non-.weight tensors F32, the rest the output
 *    type (q8_0 falls back to F16 for rows not a multiple of 32); values go
 *    through float32 as torch and numpy convert them;
 *  - keys: general.* (hf2gguf_general.c), the architecture's hyper-parameters,
 *    tokenizer (hf2gguf_vocab.c), in the converter's order.
 * Every output tensor is a list of source tensors read as one sequence of
 * rows, an optional row map (permutations, splits, re-orders), an optional
 * transpose and an element-wise op. It streams: tensors are produced row
 * chunk by row chunk into mf_gguf_write (atomic output) and each source's
 * mapped pages are dropped once its output tensor is written, so the
 * resident set stays near one tensor. A llama-quantize mix (Q4_K_M ...)
 * quantizes the F16 conversion's values in the same pass.
 * This file is the driver; the steps are hf2gguf_parts.c, _plan.c, _meta.c
 * and _stream.c (what they share: hf2gguf_int.h). */
#include "ops/hfconv/hf2gguf_int.h"
#include "ops/hfconv/arch_file.h"
#include "ops/hfconv/llama_load.h"
#include "ops/quant_mix.h"
#include "quant/quant.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>

/* ------------------------------------------------------------ the mix */

static int cmp_out(const void *a, const void *b)
{
    const out_tensor *x = a, *y = b;
    return mf_qmix_name_cmp(x->name, y->name);
}

static int kv_int(const mf_kvlist *kv, const char *arch, const char *suffix, int dflt)
{
    char key[128];
    snprintf(key, sizeof(key), "%s.%s", arch, suffix);
    const mf_value *v = mf_kv_get(kv, key);
    return v && v->type == MF_V_U32 ? (int)v->as.u : dflt;
}

/* Moves a key to the end (gguf_set_val on an existing key). */
static void kv_move_last(mf_kvlist *kv, const char *key, uint32_t value)
{
    for (size_t i = 0; i < kv->n; i++)
        if (!strcmp(kv->kv[i].key, key)) {
            mf_kv k = kv->kv[i];
            memmove(&kv->kv[i], &kv->kv[i + 1], (kv->n - i - 1) * sizeof(mf_kv));
            k.v.as.u = value;
            kv->kv[kv->n - 1] = k;
            return;
        }
    mf_kv_u32(kv, key, value);
}

/* The F16 conversion quantized as llama-quantize quantizes that file:
 * tensors in its order, a type per tensor from the mix's rules, then
 * general.quantization_version and general.file_type set (moved last). */
static const mf_value *kv_lookup(void *kv, const char *key)
{
    return mf_kv_get(kv, key);
}

static void first_problem(void *ctx, const char *msg)
{
    char *out = ctx;
    if (!out[0])
        snprintf(out, 512, "%s", msg);
}

static int apply_mix(conv *c)
{
    const char *arch = c->arch->name;
    char why[512] = "";
    size_t (*problems)(const char *, mf_key_lookup_fn, void *, mf_load_problem_fn, void *) =
        c->l2026 ? mf_llama_hparams_problems_2026 : mf_llama_hparams_problems;
    if (problems(arch, kv_lookup, c->kv, first_problem, why))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "llama-quantize refuses the F16 conversion (%s): "
                       "convert to f16 instead", why);
    mf_qmix_params mp;
    mf_qmix_params_init(&mp, c->mix);
    mf_qmix_hparams h = {.arch = arch, .n_layer = kv_int(c->kv, arch, "block_count", 0),
                         .n_head = kv_int(c->kv, arch, "attention.head_count", 0)};
    h.n_head_kv = kv_int(c->kv, arch, "attention.head_count_kv", h.n_head);
    h.n_expert = kv_int(c->kv, arch, "expert_count", 0);
    mf_qmix q;
    mf_qmix_init(&q, &mp, &h);
    for (size_t i = 0; i < c->n_out; i++)
        mf_qmix_count(&q, c->out[i].name);
    qsort(c->out, c->n_out, sizeof(out_tensor), cmp_out); /* names are unique */
    for (size_t i = 0; i < c->n_out; i++) {
        out_tensor *o = &c->out[i];
        int64_t ne[4] = {1, 1, 1, 1};
        for (int d = 0; d < o->ndim; d++)
            ne[d] = o->shape[o->ndim - 1 - d];
        bool fallback = false;
        mf_dtype t = mf_qmix_choose(&q, o->name, ne, o->plan, &fallback, c->st);
        if (t == MF_DTYPE_INVALID)
            return -1;
        /* llama-quantize on the F16 file: "requantizing from type mxfp4 is
         * disabled" (llama-quant.cpp) unless the mix keeps the type */
        if (o->mxfp4 && t != MF_MXFP4)
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "tensor %s is MXFP4 as the checkpoint stores it: "
                           "llama-quantize refuses to requantize it to %s (use --type MXFP4_MOE, or f16/q8_0)",
                           o->name, mf_dtype_name(t));
        if (t != o->plan && t != MF_F32 && t != MF_F16 && t != MF_BF16 && !mf_can_quantize(t))
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "tensor %s: mfmt cannot quantize to %s yet",
                           o->name, mf_dtype_name(t));
        o->dtype = t;
        /* llama-quantize writes ggml_n_dims dimensions: outer 1s dropped */
        int keep = o->ndim;
        while (keep > 1 && o->shape[o->ndim - keep] == 1)
            keep--;
        memmove(o->shape, o->shape + (o->ndim - keep), sizeof(int64_t) * (size_t)keep);
        o->ndim = keep;
    }
    kv_move_last(c->kv, "general.quantization_version", 2);
    kv_move_last(c->kv, "general.file_type", (uint32_t)c->mix);
    return 0;
}

/* ------------------------------------------------------------- driver */

static int parse_type(conv *c, const char *type)
{
    static const struct { const char *name; int ftype; mf_dtype dt; } types[] = {
        {"f32", 0, MF_F32}, {"f16", 1, MF_F16}, {"bf16", 32, MF_BF16}, {"q8_0", 7, MF_Q8_0},
    };
    if (!type)
        type = "f16";
    if (!strcasecmp(type, "auto")) {
        c->auto_type = true;
        return 0;
    }
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcasecmp(type, types[i].name)) {
            c->ftype = types[i].ftype;
            c->qtype = types[i].dt;
            return 0;
        }
    /* a llama-quantize mix: the f16 conversion, quantized in the same pass */
    mf_ftype mix = mf_ftype_parse(type);
    if (mix == MF_FTYPE_INVALID)
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1,
                       "output type \"%s\" unknown: f32, f16, bf16, q8_0, auto, or a llama-quantize "
                       "type (Q4_K_M, Q5_K_M, Q6_K, IQ4_XS, ...)", type);
    if (mf_ftype_needs_imatrix(mix))
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1,
                       "%s needs an importance matrix: convert to f16, then mfmt quantize --imatrix",
                       mf_ftype_name(mix));
    c->mix = mix;
    c->ftype = MF_FTYPE_F16;
    c->qtype = MF_F16;
    return 0;
}

/* The layout: the caller's, or the 2026 converter's for a class only it has;
 * the architecture's rules and keys for it. */
static void pick_layout(conv *c)
{
    const conv_arch *a = c->arch;
    c->l2026 = c->opts.layout == MF_CONVERT_LAYOUT_2026_02 || (a->flags & AF_ONLY_2026);
    c->rules = a->rules;
    c->hparams = a->hparams;
    for (size_t i = 0; c->l2026 && i < conv_n_archs_2026; i++)
        if (conv_archs_2026[i].bit == a->bit) {
            c->rules = conv_archs_2026[i].rules ? conv_archs_2026[i].rules : c->rules;
            c->hparams = conv_archs_2026[i].hparams ? conv_archs_2026[i].hparams : c->hparams;
        }
    c->kv->overwrite = c->l2026;
}

/* c->arch chosen: its layout, then a multimodal config's text part lifted */
static int arch_chosen(conv *c)
{
    pick_layout(c);
    /* ModelBase.__init__ (2026): a multimodal config's text_config
     * lifted to the top ({**hparams, **text_config}), before the
     * block count is read */
    json_t *tc = c->l2026 ? json_object_get(c->cfg, "text_config") : NULL;
    if (json_is_object(tc) && json_object_update(c->cfg, tc))
        return mf_oom(c->st, c->dir);
    return 0;
}

/* --arch-file: the file's row, for one of its classes only */
static int pick_arch_file(conv *c, const char *cls)
{
    if (!(c->arch_file = conv_arch_file_load(c->opts.arch_file, c->st)))
        return -1;
    const conv_arch *a = &c->arch_file->fwd;
    for (const char *const *k = a->classes; cls && *k; k++)
        if (!strcmp(cls, *k)) {
            c->arch = a;
            c->names = c->arch_file->names;
            c->n_names = c->arch_file->n_names;
            c->name_arch = -1;
            return arch_chosen(c);
        }
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "architecture %s is not one of the classes of %s (%s: %s%s)",
                   cls ? cls : "(none: config.json has no \"architectures\")", c->opts.arch_file, a->name,
                   a->classes[0], a->classes[1] ? ", ..." : "");
}

static int pick_arch(conv *c)
{
    json_t *archs = h2g_hparam(c, "architectures");
    const char *cls = json_string_value(json_array_get(archs, 0));
    if (c->opts.arch_file)
        return pick_arch_file(c, cls);
    c->names = conv_names;
    c->n_names = conv_n_names;
    for (size_t i = 0; cls && i < conv_n_archs; i++)
        for (const char *const *k = conv_archs[i].classes; *k; k++)
            if (!strcmp(cls, *k) && (!(conv_archs[i].flags & AF_BLOCK_CONFIGS) || h2g_hparam(c, "block_configs"))) {
                c->arch = &conv_archs[i];
                c->name_arch = conv_archs[i].bit;
                return arch_chosen(c);
            }
    char known[2048] = "";
    for (size_t i = 0; i < conv_n_archs; i++)
        for (const char *const *k = conv_archs[i].classes; *k; k++)
            snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", known[0] ? ", " : "", *k);
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1,
                   "architecture %s is not supported by mfmt convert; it converts %s",
                   cls ? cls : "(none: config.json has no \"architectures\")", known);
}

/* Config changes the class makes before reading it (Granite pops head_dim;
 * Command-R takes max_position_embeddings from model_max_length). */
static void adjust_config(conv *c)
{
    /* Llama4Model.__init__: intermediate_size is the experts' width */
    json_t *mlp = (c->arch->flags & AF_LLAMA4) ? json_object_get(c->cfg, "intermediate_size_mlp") : NULL;
    if (mlp) {
        json_t *moe = json_object_get(c->cfg, "intermediate_size");
        json_object_set(c->cfg, "intermediate_size_moe", moe ? moe : json_null());
        json_object_set(c->cfg, "intermediate_size", mlp);
    }
    if (c->arch->flags & AF_NO_HEAD_DIM)
        json_object_del(c->cfg, "head_dim");
    if (c->arch->flags & AF_CTX_MODEL_MAX) {
        json_t *m = json_object_get(c->cfg, "model_max_length");
        if (m)
            json_object_set(c->cfg, "max_position_embeddings", m);
    }
}

/* Mistral3Model.__init__: other than model_type ministral3 (Mistral Small
 * 3.1's text model...), arch llama "for compatibility": the table's llama
 * row for the same class. */
static int mistral3_as_llama(conv *c)
{
    const char *cls = json_string_value(json_array_get(h2g_hparam(c, "architectures"), 0));
    for (size_t i = 0; cls && i < conv_n_archs; i++)
        for (const char *const *k = conv_archs[i].classes; *k; k++)
            if (!strcmp(*k, cls) && !strcmp(conv_archs[i].name, "llama")) {
                c->arch = &conv_archs[i];
                c->name_arch = conv_archs[i].bit;
                pick_layout(c);
                return 0;
            }
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "%s other than model_type ministral3 (arch llama for "
                   "the converter) is not converted by mfmt yet", cls ? cls : "Mistral 3");
}

/* What a class asserts of its config before writing (the converter's
 * assert or its other branch, refused here). */
/* GraniteHybridModel.get_attn_layers: layer_types when it is a non-empty
 * list, else attn_layer_indices, else every layer i with i %
 * attn_layer_period == attn_layer_offset; the last two written into
 * config.json as layer_types ("attention" / "mamba"), the form the
 * per-layer rule reads. 0, or -1 with the converter's assertion. */
static int granite_attn_layers(conv *c)
{
    json_t *kinds = h2g_hparam(c, "layer_types"), *idx = h2g_hparam(c, "attn_layer_indices");
    if (json_is_array(kinds) && json_array_size(kinds))
        return 0;
    int64_t period = 0, offset = 0;
    bool by_index = json_is_array(idx) && json_array_size(idx);
    if (!by_index) {
        json_t *p = h2g_hparam(c, "attn_layer_period"), *o = h2g_hparam(c, "attn_layer_offset");
        if (!p || json_is_null(p) || h2g_need_int(c, p, "attn_layer_period", &period) || period == 0)
            return c->st->code ? -1 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                                              "GraniteMoeHybrid: config.json has no layer_types, attn_layer_indices "
                                              "or attn_layer_period (\"Didn't find attn_layer_indices or attn_layer_period\")");
        if (!o || json_is_null(o))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "GraniteMoeHybrid: attn_layer_period without "
                                                             "attn_layer_offset");
        if (h2g_need_int(c, o, "attn_layer_offset", &offset))
            return -1;
    }
    json_t *out = json_array();
    for (int64_t i = 0; out && i < c->block_count; i++) {
        bool attn = false;
        size_t k;
        json_t *e;
        if (by_index) {
            json_array_foreach(idx, k, e) attn |= json_is_integer(e) && json_integer_value(e) == i;
        } else { /* Python's %: the sign of the divisor */
            int64_t r = i % period;
            attn = (r != 0 && (r < 0) != (period < 0) ? r + period : r) == offset;
        }
        json_array_append_new(out, json_string(attn ? "attention" : "mamba"));
    }
    if (!out || json_object_set_new(c->cfg, "layer_types", out))
        return mf_oom(c->st, c->dir);
    return 0;
}

/* What a class asserts of its config before writing (the converter's
 * assert or its other branch, refused here). GraniteHybridModel: at least
 * one Mamba layer (all-attention configs the converter writes as granite /
 * granitemoe, not converted here); without experts (num_local_experts 0 or
 * absent) the shared MLP is the dense FFN. */
static int granite_hybrid_checks(conv *c)
{
    if (granite_attn_layers(c))
        return -1;
    json_t *kinds = h2g_hparam(c, "layer_types"), *e, *ne = h2g_hparam(c, "num_local_experts");
    size_t i;
    bool mamba = false;
    json_array_foreach(kinds, i, e) mamba |= !json_is_string(e) || strcmp(json_string_value(e), "attention");
    if (!mamba)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "GraniteMoeHybrid with attention layers only: "
                       "llama.cpp's converter writes it as granite / granitemoe, which mfmt does not do from this class");
    if (!json_is_integer(ne) || json_integer_value(ne) == 0)
        c->rules = conv_granite_hybrid_dense_rules;
    return 0;
}

static int class_checks(conv *c)
{
    json_t *softcap = h2g_hparam(c, "attn_logit_softcapping");
    if ((c->arch->flags & AF_GEMMA3) && softcap && !json_is_null(softcap)) /* "removed in Gemma3" */
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "Gemma 3 with attn_logit_softcapping: the converter asserts none");
    if (c->arch->flags & AF_MINISTRAL3) { /* Mistral3Model: ministral3 with yarn rope_parameters */
        const char *mt = json_string_value(h2g_hparam(c, "model_type"));
        json_t *rp = h2g_rope_params(c);
        const char *rt = json_string_value(json_object_get(rp, "rope_type"));
        if (!mt || strcmp(mt, "ministral3"))
            return mistral3_as_llama(c);
        if (!rt || strcmp(rt, "yarn"))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "ministral3 rope_parameters.rope_type must be 'yarn'");
    }
    if (c->arch->bit == AB_GRANITE_HYBRID)
        return granite_hybrid_checks(c);
    return 0;
}

/* --mistral-format, or (auto) params.json and consolidated*.safetensors
 * without the Hugging Face weight files */
static int is_mistral_format(conv *c)
{
    if (c->opts.mistral_format == MF_MISTRAL_ON || c->opts.mistral_format == MF_MISTRAL_OFF || c->opts.weights) {
        c->mistral = c->opts.mistral_format == MF_MISTRAL_ON;
        return 0;
    }
    char *p = mf_path_join_new(c->dir, "params.json");
    if (!p)
        return mf_oom(c->st, c->dir);
    bool params = mf_path_exists(p);
    free(p);
    size_t cons = 0, st_parts = 0, bin_parts = 0;
    if (params && (h2g_count_parts(c->dir, "consolidated", ".safetensors", &cons, c->st) ||
                   h2g_count_parts(c->dir, "model", ".safetensors", &st_parts, c->st) ||
                   h2g_count_parts(c->dir, "pytorch_model", ".bin", &bin_parts, c->st)))
        return -1;
    c->mistral = params && cons && !st_parts && !bin_parts;
    return 0;
}

/* ModelBase.load_hparams(is_mistral_format): params.json as written; what
 * MistralModel does not convert here refused by name */
static int load_mistral_params(conv *c)
{
    char *p = mf_path_join_new(c->dir, "params.json");
    if (!p)
        return mf_oom(c->st, c->dir);
    c->cfg = mf_hf_load_json(p, c->st);
    int rc = !c->cfg ? -1 : !json_is_object(c->cfg) ? mf_fail(c->st, MF_ERR_FORMAT, p, -1, "params.json must hold a "
                                                                "JSON object") : 0;
    if (rc == 0 && c->opts.mmproj)
        rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, p, -1, "--mmproj of a Mistral-format directory (PixtralModel) "
                     "is not converted by mfmt yet");
    else if (rc == 0 && json_object_get(c->cfg, "moe"))
        rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, p, -1, "a Mistral-format mixture of experts (\"moe\": "
                     "MistralMoeModel, written as deepseek2) is not converted by mfmt yet");
    else if (rc == 0 && json_object_get(c->cfg, "quantization"))
        rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, p, -1, "an FP8 Mistral-format checkpoint (\"quantization\", "
                     "qscale_weight) is not converted by mfmt yet");
    free(p);
    return rc;
}

/* MistralModel.__init__: arch llama "for compatibility" unless params.json
 * has llama_4_scaling (Ministral 3, Mistral Large 3: mistral3); the name
 * rows are Llama's (llama-pth names), the rules and keys the format's own */
static int pick_mistral_arch(conv *c)
{
    c->arch = json_object_get(c->cfg, "llama_4_scaling") ? &conv_mistral_mistral3 : &conv_mistral_llama;
    c->names = conv_names;
    c->n_names = conv_n_names;
    c->name_arch = c->arch->bit;
    if (arch_chosen(c))
        return -1;
    c->rules = c->arch->rules; /* not the 2026 Llama row's (its Q/K permutation) */
    c->hparams = c->arch->hparams;
    static const char *const ctx_keys[] = {"max_position_embeddings", "n_ctx", "n_positions", "max_length",
                                           "max_sequence_length", "model_max_length", NULL};
    if (!h2g_find_hparam(c, ctx_keys) && c->opts.note) /* Mistral 7B's params.json: written all the same */
        c->opts.note(c->opts.note_user, "params.json has no max_position_embeddings: the GGUF gets no "
                     "context_length, as the converter writes it, and llama.cpp cannot load it without one");
    return 0;
}

static int load_config(conv *c)
{
    if (is_mistral_format(c))
        return -1;
    if (c->mistral)
        return load_mistral_params(c);
    c->cfg = mf_hf_load_config(c->dir, true, c->st);
    if (!c->cfg)
        return -1;
    if (!json_is_object(c->cfg))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json must hold a JSON object");
    return 0;
}

/* ModelBase.__init__ (2026): a multimodal config's text_config lifted to
 * the top ({**hparams, **text_config}), before the block count is read
 * (Qwen3.5 has num_hidden_layers only there). */
static int lift_text_config(conv *c)
{
    json_t *tc = c->l2026 ? json_object_get(c->cfg, "text_config") : NULL;
    if (json_is_object(tc) && json_object_update(c->cfg, tc))
        return mf_oom(c->st, c->dir);
    return 0;
}

/* After pick_arch, so an unsupported class is named as such before any key
 * it may lack (OpenELM has no num_hidden_layers) is asked for. */
static int read_block_count(conv *c)
{
    static const char *const block_keys[] = {"n_layers", "num_hidden_layers", "n_layer", "num_layers", NULL};
    static const char *const openelm_keys[] = {"num_transformer_layers", NULL};
    /* OpenELMModel.find_hparam answers "n_layers" with num_transformer_layers */
    json_t *bc = h2g_find_hparam(c, (c->arch->flags & AF_LAYERS_KEY) ? openelm_keys : block_keys);
    if (!bc)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no num_hidden_layers");
    if (h2g_need_int(c, bc, "num_hidden_layers", &c->block_count))
        return -1;
    json_t *nextn = (c->arch->flags & AF_NEXTN) ? h2g_hparam(c, "num_nextn_predict_layers") : NULL;
    int64_t extra = 0;
    if (nextn && !json_is_null(nextn) && h2g_need_int(c, nextn, "num_nextn_predict_layers", &extra))
        return -1;
    if (extra < 0 || extra > 64)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json num_nextn_predict_layers is out of range");
    c->block_count += extra; /* Glm4MoeModel: the NextN layers are blocks too */
    if (c->block_count < 0 || c->block_count > (1 << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json num_hidden_layers is out of range");
    return 0;
}

/* "auto": f16 when the first tensor read is F16, else bf16. */
static void resolve_auto(conv *c)
{
    if (!c->auto_type)
        return;
    const mf_tensor **order = c->n_parts ? h2g_part_order(c, c->parts[0], c->st) : NULL;
    bool f16 = order && c->parts[0]->n_tensors && order[0]->dtype == MF_F16;
    free(order);
    c->ftype = f16 ? 1 : 32;
    c->qtype = f16 ? MF_F16 : MF_BF16;
}

/* --mmproj with what an MmprojModel does not do */
static int mmproj_usage(conv *c)
{
    if (c->mix != MF_FTYPE_INVALID)
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "--mmproj writes f32, f16, bf16 or q8_0 (llama-quantize's "
                       "mixes are for text models)");
    if (c->opts.vocab_only)
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "--mmproj has no vocabulary (MmprojModel does not support "
                       "vocab writing)");
    if (c->opts.arch_file)
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "--mmproj takes the built-in vision projector rules, "
                       "not --arch-file");
    return 0;
}

static void free_conv(conv *c)
{
    for (size_t i = 0; i < c->n_out; i++)
        h2g_free_out(&c->out[i]);
    free(c->out);
    for (size_t i = 0; i < c->n_pend; i++) {
        for (size_t k = 0; k < c->pend[i].n; k++)
            free(c->pend[i].names[k]);
        free(c->pend[i].names);
        free(c->pend[i].segs);
    }
    free(c->pend);
    for (size_t i = 0; i < c->n_parts && !c->borrowed; i++)
        mf_close(c->parts[i]);
    free(c->parts);
    mf_close(c->stored);
    json_decref(c->cfg);
    json_decref(c->global);
    json_decref(c->pre);
    json_decref(c->audio);
    h2g_free_bn(c);
    json_decref(c->rope);
    conv_arch_file_free(c->arch_file);
}

const char *mf_convert_arch_class(size_t i, size_t k)
{
    if (i >= conv_n_archs)
        return NULL;
    size_t n = 0;
    while (conv_archs[i].classes[n])
        n++;
    return k < n ? conv_archs[i].classes[k] : NULL;
}

const char *mf_convert_arch_name(size_t i)
{
    return i < conv_n_archs ? conv_archs[i].name : NULL;
}

void mf_convert_gguf_opts_init(mf_convert_gguf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->threads = 1;
}

/* gguf.fill_templated_filename: str.format with {} / {ftype} / {outtype}
 * (the type in lower case) and {FTYPE} / {OUTTYPE} (upper case); "{{" and
 * "}}" are braces. Another field is an error, as Python's KeyError. */
static int fill_template(const char *name, const char *type, char *out, size_t cap, mf_status *st)
{
    size_t n = 0;
    for (const char *p = name; *p; p++) {
        const char *put = NULL;
        char one[2] = {*p, 0};
        bool upper = false;
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            put = one;
            p++;
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            size_t k = e ? (size_t)(e - p - 1) : 0;
            if (e && (k == 0 || (k == 5 && (!strncmp(p + 1, "ftype", 5) || !strncmp(p + 1, "FTYPE", 5))) ||
                      (k == 7 && (!strncmp(p + 1, "outtype", 7) || !strncmp(p + 1, "OUTTYPE", 7))))) {
                upper = k && isupper((unsigned char)p[1]);
                put = type;
                p = e;
            } else {
                return mf_fail(st, MF_ERR_USAGE, name, (int64_t)(p - name),
                               "output name template: only {}, {ftype}, {outtype}, {FTYPE} and "
                               "{OUTTYPE} are filled in");
            }
        } else if (*p == '}') {
            return mf_fail(st, MF_ERR_USAGE, name, (int64_t)(p - name),
                           "output name template: a single '}' (write '}}')");
        } else {
            put = one;
        }
        for (const char *q = put; *q && n + 1 < cap; q++)
            out[n++] = (char)(upper ? toupper((unsigned char)*q) : put == type ? tolower((unsigned char)*q) : *q);
    }
    out[n] = 0;
    return 0;
}

/* Where the converter writes: fname_out a directory (the model directory
 * when no --outfile) -> DIR/{default name}; else the name's template filled. */
static int output_path(const char *dir, const char *out, const char *default_name, const char *type,
                       char **path, mf_status *st)
{
    const char *d = out ? out : dir;
    if (mf_is_dir(d)) {
        *path = mf_path_join_new(d, default_name);
        return *path ? 0 : mf_oom(st, d);
    }
    const char *slash = strrchr(out, '/');
    size_t head = slash ? (size_t)(slash - out + 1) : 0, cap = strlen(out) * 4 + strlen(type) * 8 + 64;
    char *p = malloc(cap);
    if (!p)
        return mf_oom(st, out);
    memcpy(p, out, head);
    if (fill_template(out + head, type, p + head, cap - head, st)) {
        free(p);
        return -1;
    }
    *path = p;
    return 0;
}

/* mf_convert_gguf_archs: every HF class of every architecture, once,
 * NULL-terminated (built on first use, under pthread_once). */
enum { MAX_ARCH_CLASSES = 256 };
static const char *arch_classes[MAX_ARCH_CLASSES + 1];
static pthread_once_t arch_classes_once = PTHREAD_ONCE_INIT;

static void build_arch_classes(void)
{
    size_t n = 0;
    for (size_t i = 0; mf_convert_arch_name(i); i++)
        for (size_t k = 0; mf_convert_arch_class(i, k) && n < MAX_ARCH_CLASSES; k++) {
            bool seen = false; /* a class in two rows (Mistral 3: by model_type) */
            for (size_t j = 0; j < n && !seen; j++)
                seen = !strcmp(arch_classes[j], mf_convert_arch_class(i, k));
            if (!seen)
                arch_classes[n++] = mf_convert_arch_class(i, k);
        }
    arch_classes[n] = NULL;
}

const char *const *mf_convert_gguf_archs(void)
{
    pthread_once(&arch_classes_once, build_arch_classes);
    return arch_classes;
}

int mf_convert_to_gguf(const char *dir, const char *out, const mf_convert_gguf_opts *opts,
                       mf_status *st)
{
    MF_ST_GUARD(st);
    conv c = {.dir = dir, .st = st, .mix = MF_FTYPE_INVALID};
    mf_convert_gguf_opts_init(&c.opts);
    if (mf_opts_copy(&c.opts, sizeof(c.opts), opts, "mf_convert_gguf_opts", st))
        return -1;
    mf_kvlist kv;
    if (mf_kvlist_init(&kv))
        return mf_oom(st, dir);
    c.kv = &kv;
    mf_out_tensor *ot = NULL;
    int rc = parse_type(&c, c.opts.type);
    if (rc == 0 && c.opts.layout != MF_CONVERT_LAYOUT_C392E50 && c.opts.layout != MF_CONVERT_LAYOUT_2026_02)
        rc = mf_fail(st, MF_ERR_USAGE, dir, -1, "layout %d unknown: MF_CONVERT_LAYOUT_C392E50 or _2026_02",
                     c.opts.layout);
    if (rc == 0 && !mf_is_dir(dir))
        rc = mf_fail(st, MF_ERR_USAGE, dir, -1, "not a directory (a Hugging Face model directory is needed)");
    if (rc == 0 && c.opts.mmproj)
        rc = mmproj_usage(&c);
    if (rc == 0)
        rc = load_config(&c);
    if (rc == 0 && c.opts.mmproj) { /* MmprojModel: the vision encoder's row, config and names */
        rc = h2g_mmproj_setup(&c);
    } else if (rc == 0) {
        rc = c.mistral ? pick_mistral_arch(&c) : pick_arch(&c);
        if (rc == 0)
            rc = lift_text_config(&c);
        if (rc == 0)
            rc = read_block_count(&c);
        if (rc == 0) {
            adjust_config(&c);
            rc = class_checks(&c);
        }
        if (rc == 0)
            rc = h2g_per_layer_config(&c);
    }
    if (rc == 0) {
        /* GGUFWriter(arch=...) writes general.architecture first; keys set
         * while tensors are generated follow it */
        mf_kv_str(&kv, "general.architecture", c.arch->name, strlen(c.arch->name));
        rc = h2g_open_parts(&c);
    }
    if (rc == 0) {
        resolve_auto(&c);
        rc = h2g_plan_tensors(&c);
    }
    if (rc == 0 && c.opts.vocab_only) { /* write_vocab: no tensors are prepared */
        for (size_t i = 0; i < c.n_out; i++)
            h2g_free_out(&c.out[i]);
        c.n_out = 0;
    }
    /* the file name's type: LlamaFileType's name after "MOSTLY_"/"ALL_" */
    const char *type_name = mf_ftype_name(c.mix != MF_FTYPE_INVALID ? c.mix : (mf_ftype)c.ftype);
    char default_name[1024];
    mf_hf_meta_in mi = {.model_name = c.opts.model_name, .override_path = c.opts.metadata_override,
                        .output_type = type_name, .vocab_only = c.opts.vocab_only,
                        .file_name = default_name, .file_name_cap = sizeof(default_name)};
    if (rc == 0 && !c.opts.vocab_only)
        rc = h2g_cut_vocab_rows(&c);
    if (rc == 0)
        rc = h2g_build_metadata(&c, &mi);
    char *path = NULL;
    if (rc == 0)
        rc = output_path(dir, out, default_name, type_name, &path, st);
    if (rc == 0 && c.opts.out_path && c.opts.out_path_cap)
        snprintf(c.opts.out_path, c.opts.out_path_cap, "%s", path);
    out = path;
    if (rc == 0 && c.mix != MF_FTYPE_INVALID && !c.opts.vocab_only)
        rc = apply_mix(&c);
    if (rc == 0) {
        ot = calloc(c.n_out ? c.n_out : 1, sizeof(*ot));
        rc = ot ? 0 : mf_oom(st, dir);
    }
    for (size_t i = 0; rc == 0 && i < c.n_out; i++) {
        ot[i].name = c.out[i].name;
        ot[i].dtype = c.out[i].dtype;
        ot[i].ndim = c.out[i].ndim;
        memcpy(ot[i].shape, c.out[i].shape, sizeof(ot[i].shape));
        uint64_t nb = 0;
        mf_dtype_nbytes(ot[i].dtype, (uint64_t)h2g_numel(ot[i].shape, ot[i].ndim), &nb);
        c.total_bytes += nb;
    }
    for (size_t i = 0; rc == 0 && i < c.n_parts; i++)
        rc = mf_output_check(c.parts[i], out, st);
    if (rc == 0)
        rc = mf_output_check_path(dir, out, st);
    /* llama-quantize's file, and gguf-py's too: GGUFWriter.write_tensors_to_file
     * pads after every tensor, the last included (seen when its size is not a
     * multiple of 32: DBRX's and the T5 encoder's Q8_0 token_embd) */
    if (rc == 0 && !c.opts.vocab_only)
        rc = mf_gguf_write_all_padded(out, ot, c.n_out, kv.kv, kv.n, h2g_fill_tensor, &c, st);
    else if (rc == 0)
        rc = mf_gguf_write(out, ot, c.n_out, kv.kv, kv.n, h2g_fill_tensor, &c, st);
    free(path);
    free(ot);
    mf_kvlist_free(&kv);
    free_conv(&c);
    return rc;
}

