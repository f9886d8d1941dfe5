/* convert_mlx.c - a model as mlx_lm.convert writes it: the plan.
 *
 * What mlx_lm (mlx_lm/convert.py convert, mlx_lm/utils.py load_model,
 * quantize_model, save_model, save_config; mlx_lm/models/{llama,qwen2,
 * qwen3}.py) does, step by step, for the model types whose classes are
 * modelled here:
 *  - config: config.json, plus generation_config.json's eos_token_id when
 *    truthy (load_config);
 *  - weights: the checkpoint's tensors after the model's sanitize (rotary
 *    inv_freq dropped; lm_head.weight dropped when tie_word_embeddings,
 *    whose default is the model class's), which must be exactly the
 *    model's parameters (load_weights strict);
 *  - dtype: --dtype, else config "torch_dtype", else text_config "dtype";
 *    when float16/bfloat16/float32, every float parameter is cast;
 *  - quantize: every Linear and Embedding (the modules with to_quantized)
 *    whose last dimension the group size divides, unless the recipe's
 *    predicate says otherwise; "quantization" = {group_size, bits, mode}
 *    plus the recipe's per-module dicts, in module order; the same object
 *    as "quantization_config";
 *  - parameter order: the model classes' attribute order (tree_flatten of
 *    model.parameters()), which decides where shards are cut. */
#include "ops/convert_mlx.h"
#include "ops/gguf_rows.h"
#include "formats/formats.h"
#include "quant/mlx_affine.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------ model classes */

/* mlx_lm's model classes as data (mlx_lm/models/<model_type>.py): the
 * submodules of a decoder layer in the classes' attribute order (the order
 * of tree_flatten(model.parameters()), which decides where shards are cut;
 * a submodule whose name ends in "norm" is a norm, every other one an
 * nn.Linear or SwitchLinear, which quantize), how lm_head exists, the
 * experts sanitize stacks into SwitchLinear weights, and the model's own
 * quant_predicate. */
typedef enum mlx_lm_head {
    LM_CONFIG,     /* when not tie_word_embeddings (config, else the class's default) */
    LM_NONE,       /* never: the embedding is the head (gemma, gemma2) */
    LM_CHECKPOINT, /* when the checkpoint has lm_head.weight (gemma3_text sanitize) */
    LM_ALWAYS,     /* always, whatever the config says (qwen2_moe) */
} mlx_lm_head;

/* sanitize: for l < num_hidden_layers, when LAYER.experts.0.SRC.weight is
 * there, LAYER.experts.{0..E-1}.SRC.weight are popped and mx.stack'ed into
 * LAYER.to.DST.weight ([E, out, in]); E is config[count_key]. */
typedef struct mlx_stack {
    const char *experts, *to, *count_key;
    const char *src[3], *dst[3];
} mlx_stack;

typedef struct mlx_arch {
    const char *model_type;  /* config "model_type" */
    int tie_default;         /* ModelArgs.tie_word_embeddings: 1, 0, -1 (required) */
    bool tie_pops;           /* sanitize pops lm_head.weight when tied (else it is no parameter) */
    mlx_lm_head lm_head;
    const char *const *layer;  /* NULL-terminated */
    const mlx_stack *stack;    /* NULL: none */
    const char *gate_8bit;     /* quant_predicate: {"group_size": 64, "bits": 8} for this
                                * layer submodule (qwen3_moe's router), else True */
} mlx_arch;

/* llama.py, qwen2.py, qwen3.py (TransformerBlock: self_attn {q,k,v,o}_proj
 * [q_norm, k_norm], mlp {gate,down,up}_proj, input_layernorm,
 * post_attention_layernorm). */
static const char *const layer_llama[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "self_attn.q_norm", "self_attn.k_norm", "mlp.gate_proj",    "mlp.down_proj",
    "mlp.up_proj",      "input_layernorm",  "post_attention_layernorm", NULL,
};
/* gemma.py */
static const char *const layer_gemma[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "mlp.gate_proj",    "mlp.down_proj",    "mlp.up_proj",      "input_layernorm",
    "post_attention_layernorm", NULL,
};
/* gemma2.py */
static const char *const layer_gemma2[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "mlp.gate_proj",    "mlp.down_proj",    "mlp.up_proj",      "input_layernorm",
    "pre_feedforward_layernorm", "post_feedforward_layernorm", "post_attention_layernorm", NULL,
};
/* gemma3_text.py */
static const char *const layer_gemma3[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "self_attn.q_norm", "self_attn.k_norm", "mlp.gate_proj",    "mlp.down_proj",
    "mlp.up_proj",      "input_layernorm",  "post_attention_layernorm",
    "pre_feedforward_layernorm", "post_feedforward_layernorm", NULL,
};
/* phi3.py: the fused projections as they are */
static const char *const layer_phi3[] = {
    "self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj",
    "input_layernorm", "post_attention_layernorm", NULL,
};
/* qwen3_moe.py (Qwen3MoeDecoderLayer: self_attn, the norms, then mlp: a
 * sparse block {gate, switch_mlp {gate,up,down}_proj} or a dense MLP) */
static const char *const layer_qwen3_moe[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "self_attn.q_norm", "self_attn.k_norm", "input_layernorm", "post_attention_layernorm",
    "mlp.gate", "mlp.switch_mlp.gate_proj", "mlp.switch_mlp.up_proj",
    "mlp.switch_mlp.down_proj", "mlp.gate_proj", "mlp.down_proj", "mlp.up_proj", NULL,
};
/* qwen2_moe.py (+ shared_expert MLP and its gate) */
static const char *const layer_qwen2_moe[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "mlp.gate", "mlp.switch_mlp.gate_proj", "mlp.switch_mlp.up_proj",
    "mlp.switch_mlp.down_proj", "mlp.shared_expert.gate_proj", "mlp.shared_expert.down_proj",
    "mlp.shared_expert.up_proj", "mlp.shared_expert_gate", "input_layernorm",
    "post_attention_layernorm", NULL,
};
/* mixtral.py */
static const char *const layer_mixtral[] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "block_sparse_moe.gate", "block_sparse_moe.switch_mlp.gate_proj",
    "block_sparse_moe.switch_mlp.up_proj", "block_sparse_moe.switch_mlp.down_proj",
    "input_layernorm", "post_attention_layernorm", NULL,
};

static const mlx_stack stack_qwen_moe = {
    "mlp.experts", "mlp.switch_mlp", "num_experts",
    {"up_proj", "down_proj", "gate_proj"}, {"up_proj", "down_proj", "gate_proj"},
};
static const mlx_stack stack_mixtral = {
    "block_sparse_moe.experts", "block_sparse_moe.switch_mlp", "num_local_experts",
    {"w1", "w2", "w3"}, {"gate_proj", "down_proj", "up_proj"},
};

/* mlx_lm MODEL_REMAPPING sends mistral to llama. */
static const mlx_arch archs[] = {
    {"llama", 1, true, LM_CONFIG, layer_llama, NULL, NULL},
    {"mistral", 1, true, LM_CONFIG, layer_llama, NULL, NULL},
    {"qwen2", 1, true, LM_CONFIG, layer_llama, NULL, NULL},
    {"qwen3", -1, true, LM_CONFIG, layer_llama, NULL, NULL},
    {"gemma", 1, false, LM_NONE, layer_gemma, NULL, NULL},
    {"gemma2", 1, false, LM_NONE, layer_gemma2, NULL, NULL},
    {"gemma3_text", 1, false, LM_CHECKPOINT, layer_gemma3, NULL, NULL},
    {"phi3", 0, false, LM_CONFIG, layer_phi3, NULL, NULL},
    {"qwen3_moe", -1, true, LM_CONFIG, layer_qwen3_moe, &stack_qwen_moe, "mlp.gate"},
    {"qwen2_moe", 0, false, LM_ALWAYS, layer_qwen2_moe, &stack_qwen_moe, NULL},
    {"mixtral", 0, true, LM_CONFIG, layer_mixtral, &stack_mixtral, NULL},
};

static const mlx_arch *find_arch(const char *model_type)
{
    for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
        if (!strcmp(archs[i].model_type, model_type))
            return &archs[i];
    return NULL;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* "model.layers.N." at the start of a name: N and what follows. */
static bool layer_prefix(const char *name, uint64_t *layer, const char **rest)
{
    if (strncmp(name, "model.layers.", 13) || name[13] < '0' || name[13] > '9')
        return false;
    char *end;
    unsigned long long l = strtoull(name + 13, &end, 10);
    if (*end != '.')
        return false;
    *layer = l;
    *rest = end + 1;
    return true;
}

/* A module's place in the model (Model: model {embed_tokens, layers,
 * norm}, lm_head); false for a path that is no module of the class. */
static bool module_key(const mlxc *c, const char *module, uint64_t key[3], bool *quantizable)
{
    const mlx_arch *arch = c->arch;
    key[0] = key[1] = key[2] = 0;
    *quantizable = false;
    if (!strcmp(module, "model.embed_tokens")) {
        *quantizable = true; /* nn.Embedding */
        return true;
    }
    if (!strcmp(module, "model.norm")) {
        key[0] = 2;
        return true;
    }
    if (!strcmp(module, "lm_head") && c->lm_head) {
        key[0] = 3;
        *quantizable = true; /* nn.Linear */
        return true;
    }
    const char *rest;
    if (!layer_prefix(module, &key[1], &rest))
        return false;
    for (size_t i = 0; arch->layer[i]; i++)
        if (!strcmp(rest, arch->layer[i])) {
            key[0] = 1;
            key[2] = i;
            *quantizable = !ends_with(rest, "norm");
            return true;
        }
    return false;
}

/* ----------------------------------------------------------- config */

static const char *cfg_str(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Python truthiness of a JSON value (generation_config's eos_token_id). */
static bool truthy(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0;
    case JSON_STRING: return json_string_length(v) != 0;
    case JSON_ARRAY: return json_array_size(v) != 0;
    case JSON_OBJECT: return json_object_size(v) != 0;
    case JSON_TRUE: return true;
    default: return false;
    }
}

/* load_config: eos_token_id from generation_config.json when truthy. */
static void merge_generation_config(mlxc *c, const char *dir)
{
    char *p = mf_path_join(c->a, dir, "generation_config.json");
    if (!p || !mf_path_exists(p))
        return;
    mf_status ignore; /* json.JSONDecodeError is passed over */
    mf_status_init(&ignore);
    json_t *g = mf_hf_load_json(p, &ignore);
    mf_status_clear(&ignore);
    json_t *eos = g ? json_object_get(g, "eos_token_id") : NULL;
    if (eos && truthy(eos))
        json_object_set(c->cfg, "eos_token_id", eos);
    json_decref(g);
}

/* convert(): --dtype, else torch_dtype, else text_config.dtype; a cast
 * only for the three float types. */
static mf_dtype cast_dtype(const mlxc *c)
{
    if (c->o->dtype != MF_DTYPE_INVALID)
        return c->o->dtype;
    json_t *td = json_object_get(c->cfg, "torch_dtype");
    const char *name = json_is_string(td) ? json_string_value(td) : NULL;
    if ((!td || json_is_null(td)) && json_is_object(json_object_get(c->cfg, "text_config")) &&
        json_object_size(json_object_get(c->cfg, "text_config")))
        name = cfg_str(json_object_get(c->cfg, "text_config"), "dtype");
    if (!name)
        return MF_DTYPE_INVALID;
    return !strcmp(name, "float16") ? MF_F16 : !strcmp(name, "bfloat16") ? MF_BF16
         : !strcmp(name, "float32") ? MF_F32 : MF_DTYPE_INVALID;
}

/* len(model.layers): layer_types' length when given, else
 * num_hidden_layers. */
static int64_t n_layers(const json_t *cfg)
{
    json_t *lt = json_object_get(cfg, "layer_types");
    if (json_is_array(lt))
        return (int64_t)json_array_size(lt);
    int64_t n = 0;
    mf_hf_json_int(json_object_get(cfg, "num_hidden_layers"), &n);
    return n;
}

/* ------------------------------------------------------- the recipes */

typedef struct recipe {
    const char *name;
    int low, high;
} recipe;

/* convert.py mixed_quant_predicate_builder */
static const recipe recipes[] = {
    {"mixed_2_6", 2, 6},
    {"mixed_3_4", 3, 4},
    {"mixed_3_6", 3, 6},
    {"mixed_4_6", 4, 6},
};

static const recipe *find_recipe(const char *name)
{
    for (size_t i = 0; name && i < sizeof(recipes) / sizeof(recipes[0]); i++)
        if (!strcmp(recipes[i].name, name))
            return &recipes[i];
    return NULL;
}

/* Python's a % b for b > 0. */
static int64_t py_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* mixed_quant_predicate: the bits of one module. The layer index is the
 * path's component 2 (where "model.layers.0.mlp.down_proj" has its first
 * digit), 0 for shorter paths. */
static int recipe_bits(const recipe *r, const char *path, uint64_t layer, bool in_layers,
                       int64_t n)
{
    int64_t index = in_layers ? (int64_t)layer : 0;
    bool more = index < n / 8 || index >= 7 * n / 8 || py_mod(index - n / 8, 3) == 2;
    if ((strstr(path, "v_proj") || strstr(path, "v_a_proj") || strstr(path, "v_b_proj")) && more)
        return r->high;
    if (strstr(path, "down_proj") && more)
        return r->high;
    if (strstr(path, "lm_head"))
        return r->high;
    return r->low;
}

/* --------------------------------------------------------------- plan */

static mf_dtype out_float(const mlxc *c, mf_dtype stored)
{
    bool is_float = stored == MF_F16 || stored == MF_BF16 || stored == MF_F32 || stored == MF_F64;
    return is_float && c->cast != MF_DTYPE_INVALID ? c->cast : stored;
}

static int add_param(mlxc *c, const mf_tensor *t, const char *name, mlx_part part, mf_dtype dt,
                     const uint64_t key[3], uint64_t leaf, int bits, int gs)
{
    mlx_param p = {.src = t, .name = name, .part = part, .bits = bits, .group_size = gs};
    p.out.name = name;
    p.out.dtype = dt;
    p.out.ndim = t->ndim;
    memcpy(p.out.shape, t->shape, sizeof(p.out.shape));
    int64_t last = t->ndim ? t->shape[t->ndim - 1] : 1;
    if (part == MLX_QWEIGHT)
        p.out.shape[t->ndim - 1] = last * bits / 32;
    else if (part != MLX_PLAIN)
        p.out.shape[t->ndim - 1] = last / gs;
    uint64_t n = 1;
    for (int d = 0; d < p.out.ndim; d++)
        n *= (uint64_t)p.out.shape[d];
    p.nbytes = n * (uint64_t)mf_dtype_info_of(dt)->bits / 8;
    uint64_t elems = 1;
    for (int d = 0; d < t->ndim; d++)
        elems *= (uint64_t)t->shape[d];
    p.logical = part == MLX_PLAIN || part == MLX_QWEIGHT ? elems : 0;
    memcpy(p.key, key, 3 * sizeof(uint64_t));
    p.key[3] = leaf;
    if (MF_VEC_PUSH(c->p, p))
        return mf_oom(c->st, c->in);
    return 0;
}

typedef struct qplan {
    int bits, group_size; /* the defaults (quantize_model) */
    const recipe *r;
    int64_t n_layers;
    json_t *block;        /* "quantization" */
} qplan;

/* quantize_model's wrapped_predicate for one module: 0 = keep, else the
 * bits and group size (*gs) and which "quantization" entry it records
 * (*entry: 1 a recipe's dict, 2 the model's quant_predicate's dict). */
static int module_bits(mlxc *c, qplan *q, const char *module, const mf_tensor *w,
                       const uint64_t key[3], int *gs, int *entry)
{
    *gs = q->group_size; /* a recipe's null group size is mx.quantize's default, 64 */
    *entry = 0;
    if (!w || w->ndim < 2 || w->shape[w->ndim - 1] % q->group_size)
        return 0;
    if (q->r) {
        *entry = 1;
        return recipe_bits(q->r, module, key[1], key[0] == 1, q->n_layers);
    }
    const char *gate = c->arch->gate_8bit;
    if (gate && key[0] == 1 && ends_with(module, gate)) {
        /* {"group_size": 64, "bits": 8}: to_quantized(group_size=64) */
        *gs = 64;
        *entry = 2;
        if (w->shape[w->ndim - 1] % 64)
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->in, -1,
                           "%s: mlx_lm quantizes it in groups of 64, which do not divide %lld "
                           "(mx.quantize fails)", module, (long long)w->shape[w->ndim - 1]);
        return 8;
    }
    return q->bits;
}

/* Each quantized module's own dict, in module order (the order nn.quantize
 * calls the predicate in): a recipe's {group_size (null when
 * --q-group-size was not given), bits, mode}, or the model predicate's
 * {group_size, bits} as it returns it. */
static int record_entries(mlxc *c, json_t *block)
{
    for (size_t i = 0; i < c->p.n; i++) {
        const mlx_param *p = &c->p.v[i];
        if (p->part != MLX_QWEIGHT || !p->entry)
            continue;
        size_t l = strlen(p->name) - strlen(".weight");
        char *module = mf_arena_strndup(c->a, p->name, l);
        json_t *d = json_object();
        if (!module || !d) {
            json_decref(d);
            return mf_oom(c->st, c->in);
        }
        if (p->entry == 2) {
            json_object_set_new(d, "group_size", json_integer(p->group_size));
            json_object_set_new(d, "bits", json_integer(p->bits));
        } else if (p->entry == 3) {
            json_object_set_new(d, "group_size", json_integer(p->group_size));
            json_object_set_new(d, "bits", json_integer(p->bits));
            json_object_set_new(d, "mode", json_string("affine"));
        } else {
            json_object_set_new(d, "group_size",
                                c->o->group_size ? json_integer(c->o->group_size) : json_null());
            json_object_set_new(d, "bits", json_integer(p->bits));
            json_object_set_new(d, "mode", json_string("affine"));
        }
        json_object_set_new(block, module, d);
    }
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    const mlx_param *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    return 0;
}

/* A source tensor's module and leaf ("weight" 0, "bias" 3 after the
 * quantized triple's 1 and 2). */
static bool split_name(mlxc *c, const char *name, char **module, uint64_t *leaf)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    if (!strcmp(dot, ".weight"))
        *leaf = 0;
    else if (!strcmp(dot, ".bias"))
        *leaf = 3;
    else
        return false;
    *module = mf_arena_strndup(c->a, name, (size_t)(dot - name));
    return *module != NULL;
}

static bool is_float(mf_dtype dt)
{
    return dt == MF_F16 || dt == MF_BF16 || dt == MF_F32;
}

/* The GGUF weight a lossless conversion carries over as `name`, or NULL. */
static const mlx_lossless *lossless_of(const mlxc *c, const char *name)
{
    for (size_t i = 0; c->ll && i < c->ll->n; i++)
        if (!strcmp(c->ll->v[i].hf_name, name))
            return &c->ll->v[i];
    return NULL;
}

/* The lossless weights' "quantization": {32, the bits of most of them,
 * "affine"}, and each module with the other bits its own entry (what
 * mlx_lm's load reads per module before the default). */
static int lossless_block(mlxc *c, json_t **out)
{
    size_t n4 = 0, n8 = 0;
    for (size_t i = 0; i < c->p.n; i++)
        if (c->p.v[i].ll && c->p.v[i].part == MLX_QWEIGHT)
            *(c->p.v[i].bits == 4 ? &n4 : &n8) += 1;
    *out = NULL;
    if (!n4 && !n8)
        return 0;
    int bits = n4 >= n8 ? 4 : 8;
    for (size_t i = 0; i < c->p.n; i++)
        if (c->p.v[i].ll && c->p.v[i].part == MLX_QWEIGHT && c->p.v[i].bits != bits)
            c->p.v[i].entry = 3;
    json_t *b = json_object();
    if (!b)
        return mf_oom(c->st, c->in);
    json_object_set_new(b, "group_size", json_integer(32));
    json_object_set_new(b, "bits", json_integer(bits));
    json_object_set_new(b, "mode", json_string("affine"));
    *out = b;
    return record_entries(c, b);
}

/* One source tensor (or a stack of them, `stack`): its parameters (one, or
 * the quantized triple). */
static int plan_tensor(mlxc *c, qplan *q, const mf_tensor *t, const mf_tensor *const *stack,
                       size_t n_stack)
{
    char *module;
    uint64_t leaf, key[3];
    bool quantizable;
    if (!split_name(c, t->name, &module, &leaf) || !module_key(c, module, key, &quantizable))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->in, -1,
                       "tensor \"%s\" is not a parameter of mlx_lm's %s model", t->name,
                       cfg_str(c->cfg, "model_type"));
    if (t->dtype == MF_F64)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->in, -1,
                       "tensor \"%s\" is F64, which mlx.core.load does not read", t->name);
    mf_dtype dt = out_float(c, t->dtype);
    int gs = 0, entry = 0;
    const mlx_lossless *ll = quantizable && leaf == 0 ? lossless_of(c, t->name) : NULL;
    int bits = q && quantizable && leaf == 0 && is_float(t->dtype)
                   ? module_bits(c, q, module, t, key, &gs, &entry) : 0;
    if (ll) { /* MLX's GGUF loader's triple: group 32, float16 scales and biases */
        bits = ll->bits;
        gs = 32;
        dt = MF_F16;
    }
    if (bits < 0)
        return -1;
    size_t first = c->p.n;
    if (!bits) {
        if (add_param(c, t, t->name, MLX_PLAIN, dt, key, leaf, 0, 0))
            return -1;
    } else {
        char *sn = mf_arena_printf(c->a, "%s.scales", module);
        char *bn = mf_arena_printf(c->a, "%s.biases", module);
        if (!sn || !bn)
            return mf_oom(c->st, c->in);
        if (add_param(c, t, t->name, MLX_QWEIGHT, MF_U32, key, 0, bits, gs) ||
            add_param(c, t, sn, MLX_QSCALES, dt, key, 1, bits, gs) ||
            add_param(c, t, bn, MLX_QBIASES, dt, key, 2, bits, gs))
            return -1;
        c->p.v[first].entry = entry;
    }
    for (size_t i = first; i < c->p.n; i++) {
        c->p.v[i].stack = stack;
        c->p.v[i].n_stack = n_stack;
        c->p.v[i].ll = ll;
    }
    return 0;
}

/* ---------------------------------------------------- experts stacked */

typedef struct stacker {
    mf_tensor_index ix;
    bool *used;           /* per source tensor: popped by the stacking */
} stacker;

/* LAYER.experts.0..E-1.SRC.weight as one [E, out, in] tensor named
 * LAYER.to.DST.weight (mx.stack: the experts' bytes one after another). */
static int stack_experts(mlxc *c, qplan *q, stacker *sk, uint64_t layer, int k, int64_t n_exp)
{
    const mlx_stack *s = c->arch->stack;
    const mf_tensor **v = mf_arena_alloc(c->a, (size_t)n_exp * sizeof(*v));
    if (!v)
        return mf_oom(c->st, c->in);
    for (int64_t e = 0; e < n_exp; e++) {
        char name[512];
        snprintf(name, sizeof(name), "model.layers.%llu.%s.%lld.%s.weight",
                 (unsigned long long)layer, s->experts, (long long)e, s->src[k]);
        v[e] = mf_tensor_index_find(&sk->ix, name);
        if (!v[e]) /* sanitize's weights.pop raises KeyError */
            return mf_fail(c->st, MF_ERR_FORMAT, c->in, -1,
                           "no tensor \"%s\", which mlx_lm's %s sanitize stacks (%s = %lld)",
                           name, c->arch->model_type, s->count_key, (long long)n_exp);
        if (v[e]->ndim != 2 || v[e]->dtype != v[0]->dtype ||
            memcmp(v[e]->shape, v[0]->shape, sizeof(v[0]->shape)))
            return mf_fail(c->st, MF_ERR_FORMAT, c->in, -1,
                           "\"%s\": the experts mx.stack joins differ in shape or dtype", name);
        sk->used[v[e] - c->src->tensors] = true;
    }
    mf_tensor *t = mf_arena_alloc(c->a, sizeof(*t));
    if (!t)
        return mf_oom(c->st, c->in);
    *t = *v[0];
    t->ndim = 3;
    t->shape[0] = n_exp;
    t->shape[1] = v[0]->shape[0];
    t->shape[2] = v[0]->shape[1];
    t->strides = NULL;
    t->data = NULL;
    t->name = mf_arena_printf(c->a, "model.layers.%llu.%s.%s.weight", (unsigned long long)layer,
                              s->to, s->dst[k]);
    if (!t->name)
        return mf_oom(c->st, c->in);
    return plan_tensor(c, q, t, v, (size_t)n_exp);
}

/* The class's sanitize stacking, when the checkpoint has layer 0's first
 * expert (mlx_lm's trigger); marks the tensors it pops in sk->used. */
static int plan_stacks(mlxc *c, qplan *q, stacker *sk)
{
    const mlx_stack *s = c->arch->stack;
    char name[512];
    snprintf(name, sizeof(name), "model.layers.0.%s.0.%s.weight", s->experts, s->src[0]);
    if (!mf_tensor_index_find(&sk->ix, name))
        return 0;
    int64_t n_exp = 0, n_hidden = 0;
    if (!mf_hf_json_int(json_object_get(c->cfg, s->count_key), &n_exp) || n_exp <= 0 ||
        n_exp > 1 << 20 ||
        !mf_hf_json_int(json_object_get(c->cfg, "num_hidden_layers"), &n_hidden) ||
        n_hidden < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->in, -1,
                       "config.json: %s and num_hidden_layers, which mlx_lm's %s sanitize "
                       "needs to stack the experts", s->count_key, c->arch->model_type);
    for (int64_t l = 0; l < n_hidden; l++)
        for (int k = 0; k < 3; k++) {
            snprintf(name, sizeof(name), "model.layers.%lld.%s.0.%s.weight", (long long)l,
                     s->experts, s->src[k]);
            if (mf_tensor_index_find(&sk->ix, name) &&
                stack_experts(c, q, sk, (uint64_t)l, k, n_exp))
                return -1;
        }
    return 0;
}

/* sanitize(): rotary inv_freq and (tied, when the class pops it)
 * lm_head.weight are dropped. */
static bool dropped(const mlx_arch *arch, const char *name, bool tied)
{
    return strstr(name, "self_attn.rotary_emb.inv_freq") ||
           (tied && arch->tie_pops && !strcmp(name, "lm_head.weight"));
}

static int check_quant_args(mlxc *c, qplan *q)
{
    const mf_convert_mlx_opts *o = c->o;
    q->bits = o->bits ? o->bits : 4;           /* defaults_for_mode("affine") */
    q->group_size = o->group_size ? o->group_size : 64;
    if (!mf_mlx_affine_params_ok(q->bits, q->group_size))
        return mf_fail(c->st, MF_ERR_USAGE, c->in, -1,
                       "MLX quantizes with 2, 3, 4, 5, 6 or 8 bits in groups of 32, 64 or 128 "
                       "(not %d bits, group %d)", q->bits, q->group_size);
    if (o->quant_predicate && !(q->r = find_recipe(o->quant_predicate)))
        return mf_fail(c->st, MF_ERR_USAGE, c->in, -1,
                       "--quant-predicate takes mixed_2_6, mixed_3_4, mixed_3_6 or mixed_4_6, "
                       "not \"%s\"", o->quant_predicate);
    return 0;
}

static int start_quant_block(mlxc *c, qplan *q)
{
    q->n_layers = n_layers(c->cfg);
    if (q->r && q->n_layers <= 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->in, -1,
                       "config.json: no num_hidden_layers, which the mixed recipes need");
    q->block = json_object();
    json_object_set_new(q->block, "group_size", json_integer(q->group_size));
    json_object_set_new(q->block, "bits", json_integer(q->bits));
    json_object_set_new(q->block, "mode", json_string("affine"));
    return q->block ? 0 : mf_oom(c->st, c->in);
}

/* Python's sorted() of str keys: code point order, which is UTF-8's byte
 * order. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* save_config: _name_or_path and vision_config dropped, quantization_config
 * = quantization, the top-level keys sorted. */
static json_t *saved_config(json_t *cfg)
{
    json_object_del(cfg, "_name_or_path");
    json_object_del(cfg, "vision_config");
    json_t *q = json_object_get(cfg, "quantization");
    if (q)
        json_object_set(cfg, "quantization_config", q);
    size_t n = json_object_size(cfg), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof(*keys));
    json_t *out = json_object();
    if (!keys || !out) {
        free(keys);
        json_decref(out);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach(cfg, k, v)
        keys[i++] = k;
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (i = 0; i < n; i++)
        json_object_set(out, keys[i], json_object_get(cfg, keys[i]));
    free(keys);
    return out;
}

/* The config's checks: a model class modelled here, and no other
 * quantization than MLX's own. */
static const char *class_list(void)
{
    return "llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, phi3, qwen3_moe, "
           "qwen2_moe and mixtral";
}

static int check_config(mlxc *c, bool *tied)
{
    const char *mt = cfg_str(c->cfg, "model_type");
    c->arch = mt ? find_arch(mt) : NULL;
    if (!c->arch)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->in, -1,
                       "config.json model_type \"%s\": mfmt writes MLX models of the mlx_lm "
                       "classes %s", mt ? mt : "(none)", class_list());
    json_t *tie = json_object_get(c->cfg, "tie_word_embeddings");
    if (!json_is_boolean(tie) && c->arch->tie_default < 0 && c->arch->lm_head == LM_CONFIG)
        return mf_fail(c->st, MF_ERR_FORMAT, c->in, -1,
                       "config.json: no tie_word_embeddings, which mlx_lm's %s model requires", mt);
    *tied = json_is_boolean(tie) ? json_is_true(tie) : c->arch->tie_default == 1;
    json_t *qc = json_object_get(c->cfg, "quantization_config");
    if (qc && !json_object_get(c->cfg, "quantization")) {
        /* A pre-quantized checkpoint (GPTQ, AWQ, FP8, bitsandbytes, ...,
         * doc/prequant.md): read through its logical view, every packed
         * weight dequantized as its producer computes it, so the result is
         * that of converting its float twin (mf_convert_to_hf), whose
         * config.json is this one without quantization_config. */
        if (!c->view)
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->in, -1,
                           "config.json has a quantization_config (method \"%s\") whose "
                           "weights mfmt cannot dequantize",
                           cfg_str(qc, "quant_method") ? cfg_str(qc, "quant_method") : "?");
        json_object_del(c->cfg, "quantization_config");
    }
    if (json_object_get(c->cfg, "quantization") && c->o->quantize && !c->o->dequantize)
        return mf_fail(c->st, MF_ERR_USAGE, c->in, -1,
                       "is already an MLX quantized model: convert it with --dequantize first");
    return 0;
}

/* Whether the model has an lm_head parameter (mlx_arch.lm_head). */
static bool has_lm_head(const mlxc *c, const mf_tensor_index *ix, bool tied)
{
    switch (c->arch->lm_head) {
    case LM_CONFIG: return !tied;
    case LM_CHECKPOINT: return mf_tensor_index_find(ix, "lm_head.weight") != NULL;
    case LM_ALWAYS: return true;
    default: return false;
    }
}

/* The parameters: the sanitized checkpoint's tensors, stacked experts
 * first, then every other one; sorted into the class's order. */
static int plan_params(mlxc *c, qplan *q, bool tied)
{
    stacker sk = {0};
    if (mf_tensor_index_build(c->src, &sk.ix) ||
        !(sk.used = calloc(c->src->n_tensors ? c->src->n_tensors : 1, 1))) {
        mf_tensor_index_free(&sk.ix);
        return mf_oom(c->st, c->in);
    }
    c->lm_head = has_lm_head(c, &sk.ix, tied);
    int rc = c->arch->stack ? plan_stacks(c, q, &sk) : 0;
    for (size_t i = 0; rc == 0 && i < c->src->n_tensors; i++) {
        const mf_tensor *t = &c->src->tensors[i];
        if (!sk.used[i] && !dropped(c->arch, t->name, tied))
            rc = plan_tensor(c, q, t, NULL, 0);
    }
    free(sk.used);
    mf_tensor_index_free(&sk.ix);
    if (rc == 0 && c->p.n > 1)
        qsort(c->p.v, c->p.n, sizeof(mlx_param), cmp_key);
    return rc;
}

int mlx_plan(mlxc *c)
{
    const char *dir = c->in;
    if (!c->cfg && !(c->cfg = mf_hf_load_config(dir, true, c->st))) /* source_view may have */
        return -1;
    merge_generation_config(c, dir);
    bool tied = false;
    if (check_config(c, &tied))
        return -1;
    c->cast = cast_dtype(c);
    qplan q = {0};
    bool quantize = (c->o->quantize || c->o->quant_predicate) && !c->o->dequantize;
    if (quantize && (check_quant_args(c, &q) || start_quant_block(c, &q)))
        return -1;
    int rc = plan_params(c, quantize ? &q : NULL, tied);
    if (rc == 0 && quantize)
        rc = record_entries(c, q.block);
    if (rc == 0 && c->ll && !quantize && (rc = lossless_block(c, &q.block)) == 0 && q.block)
        quantize = true;
    if (rc == 0 && quantize) {
        json_object_set(c->cfg, "quantization", q.block);
        json_object_set(c->cfg, "quantization_config", q.block);
    }
    json_decref(q.block);
    if (rc)
        return rc;
    if (c->o->dequantize) { /* convert(): the quantization keys popped */
        json_object_del(c->cfg, "quantization");
        json_object_del(c->cfg, "quantization_config");
    }
    json_t *saved = saved_config(c->cfg);
    if (!saved)
        return mf_oom(c->st, c->in);
    json_decref(c->cfg);
    c->cfg = saved;
    return 0;
}

/* ------------------------------------------------------------ driver */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* Removes a directory this run made, with everything in it. */
static void remove_made_dir(const char *dir)
{
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* OUT must be absent (made here) or an empty directory (mlx_lm refuses any
 * existing path; an empty directory is let through as the other directory
 * writers do). The files are staged as one set inside it and appear
 * together at the commit (mf_atomic_set). */
static int open_out_dir(mlxc *c)
{
    size_t n = strlen(c->out);
    while (n > 1 && c->out[n - 1] == '/')
        n--;
    if (!(c->final_dir = mf_arena_strndup(c->a, c->out, n)))
        return mf_oom(c->st, c->out);
    DIR *d = opendir(c->final_dir);
    bool empty = true;
    for (struct dirent *e; d && (e = readdir(d));)
        empty &= !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    if (!d && errno != ENOENT)
        return mf_fail(c->st, MF_ERR_USAGE, c->out, -1, "exists and is not a directory");
    if (!empty)
        return mf_fail(c->st, MF_ERR_USAGE, c->out, -1,
                       "exists and is not an empty directory: refusing to write into it");
    if (mf_output_check_path(c->in, c->final_dir, c->st))
        return -1;
    if (!d) {
        if (mkdir(c->final_dir, 0755) != 0)
            return mf_fail(c->st, MF_ERR_IO, c->out, -1, "cannot make the directory: %s",
                           strerror(errno));
        c->made_dir = true;
    }
    char *prefix = mf_path_join(c->a, c->final_dir, "model");
    return prefix ? mf_atomic_set_begin(prefix, &c->set, c->st) : mf_oom(c->st, c->out);
}

static void close_out_dir(mlxc *c, bool ok)
{
    if (c->set && !ok)
        mf_atomic_set_abort(c->set);
    c->set = NULL;
    if (!ok && c->made_dir)
        rmdir(c->final_dir);
}

static int convert_dir(const char *in, const char *out, const mf_convert_mlx_opts *o,
                       const mlx_lossless_set *ll, mf_status *st);

/* mf_gguf_hf_rows' callback: the Q4_0, Q4_1 and Q8_0 weights MLX's GGUF
 * loader reads without loss (their last dimension a multiple of 32). */
static int collect_lossless(void *ctx, const char *hf_name, const mf_tensor *src, int64_t heads,
                            mf_status *st)
{
    mlx_lossless_set *ls = ctx;
    int bits = src->dtype == MF_Q4_0 || src->dtype == MF_Q4_1 ? 4 : src->dtype == MF_Q8_0 ? 8 : 0;
    if (!bits || src->shape[1] % 32 || !src->data)
        return 0;
    mlx_lossless *v = realloc(ls->v, (ls->n + 1) * sizeof(*v));
    char *name = strdup(hf_name);
    if (!v || !name) {
        free(name);
        if (v)
            ls->v = v;
        return mf_oom(st, hf_name);
    }
    ls->v = v;
    v[ls->n++] = (mlx_lossless){.hf_name = name, .src = src, .heads = heads, .bits = bits};
    return 0;
}

static void free_lossless(mlx_lossless_set *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        free((char *)ls->v[i].hf_name);
    free(ls->v);
}

/* A GGUF: its Hugging Face directory first (dequantized, mf_convert_to_hf),
 * in a temporary directory beside OUT, then that; with o->lossless, the
 * GGUF stays open and its Q4_0/Q4_1/Q8_0 weights are carried over. */
static int convert_gguf(const char *in, const char *out, const mf_convert_mlx_opts *o,
                        mf_status *st)
{
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        n--;
    char *tmp = malloc(n + 32), *hf = malloc(n + 40);
    mlx_lossless_set ls = {0};
    mf_model *g = NULL;
    int rc = tmp && hf ? 0 : mf_oom(st, out);
    if (rc == 0 && o->lossless && (rc = mf_open_model(in, 0, &g, st)) == 0) {
        ls.gguf = g;
        rc = mf_gguf_hf_rows(g, in, collect_lossless, &ls, st);
    }
    if (rc == 0) {
        snprintf(tmp, n + 32, "%.*s.hf.XXXXXX", (int)n, out);
        rc = mkdtemp(tmp) ? 0 : mf_fail(st, MF_ERR_IO, out, -1,
                                       "cannot make a directory beside it: %s", strerror(errno));
    }
    if (rc == 0) {
        snprintf(hf, n + 40, "%s/hf", tmp);
        mf_convert_hf_opts ho;
        mf_convert_hf_opts_init(&ho);
        rc = mf_convert_to_hf(in, hf, &ho, st);
        if (rc == 0)
            rc = convert_dir(hf, out, o, o->lossless ? &ls : NULL, st);
        remove_made_dir(tmp);
    }
    free_lossless(&ls);
    mf_close(g);
    free(hf);
    free(tmp);
    return rc;
}

/* Packed triples (an MLX input) are read as their dequantized weights.
 * convert() casts every float parameter, scales and biases included, to
 * its dtype before dequantize_model, so they are dequantized in that type
 * (mf_mlx_cast_dequantized_view), not dequantized and then cast. */
static int source_view(mlxc *c)
{
    if (c->m->format != MF_FMT_MLX)
        return mf_model_logical_view_as(c->m, MF_DTYPE_INVALID, &c->view, c->st);
    if (!(c->cfg = mf_hf_load_config(c->in, true, c->st)))
        return -1;
    return mf_mlx_cast_dequantized_view(c->m, cast_dtype(c), &c->view, c->st);
}

static int convert_dir(const char *in, const char *out, const mf_convert_mlx_opts *o,
                       const mlx_lossless_set *ll, mf_status *st)
{
    mlxc c = {.o = o, .st = st, .in = in, .out = out, .ll = ll};
    if (!(c.a = mf_arena_new()))
        return mf_oom(st, in);
    int rc = mf_open_model(in, 0, &c.m, st);
    if (rc == 0 && c.m->format == MF_FMT_GGUF) {
        mf_close(c.m);
        mf_arena_free(c.a);
        return convert_gguf(in, out, o, st);
    }
    if (rc == 0 && c.m->format != MF_FMT_HF_DIR && c.m->format != MF_FMT_MLX)
        rc = mf_fail(st, MF_ERR_USAGE, in, -1,
                     "is %s: MLX models are made from a Hugging Face directory, an MLX "
                     "directory or a GGUF", mf_format_name(c.m->format));
    if (rc == 0 && o->lossless && !ll)
        rc = mf_fail(st, MF_ERR_USAGE, in, -1,
                     "--lossless carries a GGUF's Q4_0/Q4_1/Q8_0 blocks over: the input must be "
                     "a GGUF");
    if (rc == 0)
        rc = source_view(&c);
    c.src = c.view ? c.view : c.m;
    if (rc == 0)
        rc = mlx_plan(&c);
    if (rc == 0)
        rc = open_out_dir(&c);
    if (rc == 0)
        rc = mlx_write_weights(&c);
    if (rc == 0)
        rc = mlx_copy_side_files(&c);
    if (rc == 0)
        rc = mlx_write_model_card(&c);
    if (rc == 0 && c.set) {
        rc = mf_atomic_set_commit(c.set, st);
        c.set = NULL;
    }
    close_out_dir(&c, rc == 0);
    json_decref(c.cfg);
    MF_VEC_FREE(c.p);
    free(c.keep);
    mf_close(c.view);
    mf_close(c.m);
    mf_arena_free(c.a);
    return rc;
}

void mf_convert_mlx_opts_init(mf_convert_mlx_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->dtype = MF_DTYPE_INVALID;
}

int mf_convert_to_mlx(const char *in, const char *out, const mf_convert_mlx_opts *opts,
                      mf_status *st)
{
    MF_ST_GUARD(st);
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_convert_mlx_opts", st))
        return -1;
    if (o.dtype != MF_DTYPE_INVALID && o.dtype != MF_F16 && o.dtype != MF_BF16 &&
        o.dtype != MF_F32)
        return mf_fail(st, MF_ERR_USAGE, out, -1, "--dtype takes f16, bf16 or f32");
    if (o.kernel != MF_MLX_KERNEL_CPU && o.kernel != MF_MLX_KERNEL_METAL)
        return mf_fail(st, MF_ERR_USAGE, out, -1, "--mlx-kernel takes cpu or metal");
    if (o.quantize && o.dequantize)
        return mf_fail(st, MF_ERR_USAGE, out, -1,
                       "choose either quantize or dequantize, not both (as mlx_lm.convert)");
    if (o.lossless && (o.quantize || o.quant_predicate || o.dequantize))
        return mf_fail(st, MF_ERR_USAGE, out, -1,
                       "--lossless keeps a GGUF's own blocks: not with --quantize or --dequantize");
    return convert_dir(in, out, &o, NULL, st);
}
