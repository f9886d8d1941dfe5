/* convert_gguf.c - Hugging Face directory -> GGUF, as llama.cpp's
 * convert_hf_to_gguf.py writes it (the commit named in
 * ../shared/convert-ref/README.md), for the llama class (LlamaForCausalLM,
 * MistralForCausalLM), Qwen2ForCausalLM and Qwen3ForCausalLM:
 *  - parts: the directory's model*.safetensors files (else pytorch_model*.bin)
 *    in sorted name order; safetensors names sorted within a part, .bin
 *    names in the state dict's order; an index's weight_map must name the
 *    same tensors;
 *  - names mapped to GGUF's (token_embd, blk.N.attn_q, ...); llama's q/k
 *    rows permuted per head (LlamaModel.permute); llama3 rope scaling adds a
 *    generated rope_freqs tensor first;
 *  - types: 1-d tensors, *_norm.weight and non-.weight tensors F32, the rest
 *    the output type (q8_0 falls back to F16 for rows not a multiple of 32);
 *    values go through float32 as numpy/gguf-py convert them;
 *  - keys: general.* (hf_general.c), hyper-parameters, tokenizer
 *    (convert_vocab.c), in the converter's order.
 * Data streams tensor by tensor into mf_gguf_write (atomic output). */
#include "formats/formats.h"
#include "ops/hf_ops.h"
#include "ops/quant_mix.h"
#include "ops/tensor_f32.h"
#include "quant/quant.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

typedef enum arch_id { ARCH_LLAMA, ARCH_QWEN2, ARCH_QWEN3 } arch_id;

static const struct {
    const char *cls;
    arch_id arch;
} arch_classes[] = {
    {"LLaMAForCausalLM", ARCH_LLAMA}, {"LlamaForCausalLM", ARCH_LLAMA},
    {"MistralForCausalLM", ARCH_LLAMA}, {"Qwen2ForCausalLM", ARCH_QWEN2},
    {"Qwen3ForCausalLM", ARCH_QWEN3},
};

const char *const mf_convert_known_archs[] = {"LLaMAForCausalLM", "LlamaForCausalLM",
                                              "MistralForCausalLM", "Qwen2ForCausalLM",
                                              "Qwen3ForCausalLM", NULL};

static const char *const arch_names[] = {"llama", "qwen2", "qwen3"};

/* ------------------------------------------------------------ tensors */

typedef struct out_tensor {
    char *name;
    mf_dtype dtype;
    int ndim;
    int64_t shape[MF_MAX_DIMS];  /* C order */
    const mf_model *part;        /* source; NULL for a generated tensor */
    const mf_tensor *src;
    int64_t permute_heads;       /* LlamaModel.permute with n heads; 0: none */
    float *generated;            /* rope_freqs values */
} out_tensor;

typedef struct conv {
    const char *dir;
    json_t *cfg;
    arch_id arch;
    int ftype;                   /* general.file_type */
    mf_dtype qtype;              /* the output type of quantizable tensors */
    bool auto_type;
    mf_ftype mix;                /* a llama-quantize mix (Q4_K_M...), or MF_FTYPE_INVALID */
    int64_t block_count;
    mf_model **parts;
    size_t n_parts;
    bool safetensors;
    out_tensor *out;
    size_t n_out, cap_out;
    mf_convert_gguf_opts opts;
    uint64_t done, total_bytes;
    mf_status *st;
} conv;

/* ------------------------------------------------------ config values */

static json_t *hparam(const conv *c, const char *key)
{
    return json_object_get(c->cfg, key);
}

/* Model.find_hparam: the first key present decides, null or not. */
static json_t *find_hparam(const conv *c, const char *const *keys)
{
    for (; *keys; keys++) {
        json_t *v = json_object_get(c->cfg, *keys);
        if (v)
            return v;
    }
    return NULL;
}

static int need_int(const conv *c, json_t *v, const char *what, int64_t *out)
{
    if (!mf_hf_json_int(v, out))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is not an integer", what);
    return 0;
}

static int head_counts(const conv *c, int64_t *n_head, int64_t *n_kv)
{
    if (need_int(c, hparam(c, "num_attention_heads"), "num_attention_heads", n_head))
        return -1;
    json_t *kv = hparam(c, "num_key_value_heads");
    *n_kv = 0;
    if (kv && !json_is_null(kv) && need_int(c, kv, "num_key_value_heads", n_kv))
        return -1;
    if (*n_head <= 0 || *n_kv < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json head counts must be positive");
    return 0;
}

/* ------------------------------------------------------------- parts */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Model.get_model_part_names: files starting with prefix and ending with
 * suffix, sorted. */
static int part_names(const char *dir, const char *prefix, const char *suffix, char ***out,
                      size_t *n, mf_status *st)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return mf_fail(st, MF_ERR_IO, dir, -1, "cannot list the directory");
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), pl = strlen(prefix), sl = strlen(suffix);
        if (l < pl || l < sl || strncmp(e->d_name, prefix, pl) || strcmp(e->d_name + l - sl, suffix))
            continue;
        char *copy = strdup(e->d_name);
        if (!copy || (*n == cap && mf_vec_grow((void **)out, &cap, *n + 1, sizeof(char *)))) {
            free(copy);
            rc = mf_oom(st, dir);
            break;
        }
        (*out)[(*n)++] = copy;
    }
    closedir(d);
    if (*n)
        qsort(*out, *n, sizeof(char *), cmp_str);
    return rc;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int open_parts(conv *c)
{
    char **names;
    size_t n;
    if (part_names(c->dir, "model", ".safetensors", &names, &n, c->st))
        return -1;
    c->safetensors = n > 0;
    if (!n && part_names(c->dir, "pytorch_model", ".bin", &names, &n, c->st))
        return -1;
    if (!n)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                       "no weights: no model*.safetensors and no pytorch_model*.bin files");
    c->parts = calloc(n, sizeof(mf_model *));
    int rc = c->parts ? 0 : mf_oom(c->st, c->dir);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *p = mf_path_join_new(c->dir, names[i]);
        if (!p) {
            rc = mf_oom(c->st, c->dir);
            break;
        }
        uint64_t promised;
        if (mf_hf_lfs_pointer(p, &promised, NULL))
            rc = mf_fail(c->st, MF_ERR_FORMAT, p, 0,
                         "a Git LFS pointer, not the weights: not downloaded (%llu bytes promised)",
                         (unsigned long long)promised);
        else if (mf_open_model(p, 0, &c->parts[i], c->st) == 0)
            c->n_parts++;
        else
            rc = -1;
        free(p);
    }
    free_names(names, n);
    return rc;
}

/* The order the converter reads a part's tensors: safe_open().keys() is
 * sorted; a .bin state dict keeps its order. */
static int cmp_tensor_name(const void *a, const void *b)
{
    return strcmp((*(const mf_tensor *const *)a)->name, (*(const mf_tensor *const *)b)->name);
}

static const mf_tensor **part_order(const conv *c, const mf_model *m, mf_status *st)
{
    const mf_tensor **v = calloc(m->n_tensors ? m->n_tensors : 1, sizeof(*v));
    if (!v) {
        mf_oom(st, m->path);
        return NULL;
    }
    for (size_t i = 0; i < m->n_tensors; i++)
        v[i] = &m->tensors[i];
    if (c->safetensors)
        qsort(v, m->n_tensors, sizeof(*v), cmp_tensor_name);
    return v;
}

/* An index file's weight_map must name exactly the parts' tensors. */
static int check_index(conv *c)
{
    char *p = mf_path_join_new(c->dir, c->safetensors ? "model.safetensors.index.json"
                                                       : "pytorch_model.bin.index.json");
    if (!p)
        return mf_oom(c->st, c->dir);
    if (!mf_path_exists(p)) {
        free(p);
        return 0;
    }
    json_t *j = mf_hf_load_json(p, c->st);
    json_t *wm = json_object_get(j, "weight_map");
    int rc = 0;
    if (!j) {
        rc = -1;
    } else if (!json_is_object(wm)) {
        rc = mf_fail(c->st, MF_ERR_FORMAT, p, -1, "can't load 'weight_map'");
    } else {
        mf_strset have = {0};
        size_t n_have = 0;
        for (size_t i = 0; i < c->n_parts && rc == 0; i++)
            for (size_t k = 0; k < c->parts[i]->n_tensors && rc == 0; k++) {
                int a = mf_strset_add(&have, c->parts[i]->tensors[k].name);
                n_have += a == 1;
                if (a < 0)
                    rc = mf_oom(c->st, p);
            }
        const char *k;
        json_t *v;
        json_object_foreach(wm, k, v) {
            if (rc == 0 && !mf_strset_has(&have, k))
                rc = mf_fail(c->st, MF_ERR_FORMAT, p, -1,
                             "missing or incomplete model files: weight_map names \"%s\" (in %s), "
                             "which no part holds", k, json_string_value(v) ? json_string_value(v) : "?");
        }
        if (rc == 0 && json_object_size(wm) != n_have)
            for (size_t i = 0; i < c->n_parts && rc == 0; i++)
                for (size_t t = 0; t < c->parts[i]->n_tensors && rc == 0; t++)
                    if (!json_object_get(wm, c->parts[i]->tensors[t].name))
                        rc = mf_fail(c->st, MF_ERR_FORMAT, p, -1,
                                     "mismatch between weight map and model parts: extra tensor \"%s\"",
                                     c->parts[i]->tensors[t].name);
        mf_strset_free(&have);
    }
    json_decref(j);
    free(p);
    return rc;
}

/* ------------------------------------------------------- name mapping */

/* HF (and original Meta) names of the tensors of these architectures, as
 * gguf-py's TensorNameMap maps them; "{bid}" is the block number. */
static const struct {
    const char *hf, *gguf;
    int archs; /* bit per arch_id */
} name_map[] = {
#define ALL 7
#define Q3 (1 << ARCH_QWEN3)
    {"model.embed_tokens", "token_embd", ALL}, {"tok_embeddings", "token_embd", ALL},
    {"lm_head", "output", ALL}, {"output", "output", ALL},
    {"model.norm", "output_norm", ALL}, {"norm", "output_norm", ALL},
    {"rope.freqs", "rope_freqs", ALL},
    {"model.layers.{bid}.input_layernorm", "blk.{bid}.attn_norm", ALL},
    {"layers.{bid}.attention_norm", "blk.{bid}.attn_norm", ALL},
    {"model.layers.{bid}.self_attn.q_proj", "blk.{bid}.attn_q", ALL},
    {"layers.{bid}.attention.wq", "blk.{bid}.attn_q", ALL},
    {"model.layers.{bid}.self_attn.k_proj", "blk.{bid}.attn_k", ALL},
    {"layers.{bid}.attention.wk", "blk.{bid}.attn_k", ALL},
    {"model.layers.{bid}.self_attn.v_proj", "blk.{bid}.attn_v", ALL},
    {"layers.{bid}.attention.wv", "blk.{bid}.attn_v", ALL},
    {"model.layers.{bid}.self_attn.o_proj", "blk.{bid}.attn_output", ALL},
    {"layers.{bid}.attention.wo", "blk.{bid}.attn_output", ALL},
    {"model.layers.{bid}.self_attn.q_norm", "blk.{bid}.attn_q_norm", Q3},
    {"model.layers.{bid}.self_attn.k_norm", "blk.{bid}.attn_k_norm", Q3},
    {"model.layers.{bid}.post_attention_layernorm", "blk.{bid}.ffn_norm", ALL},
    {"layers.{bid}.ffn_norm", "blk.{bid}.ffn_norm", ALL},
    {"model.layers.{bid}.mlp.gate_proj", "blk.{bid}.ffn_gate", ALL},
    {"layers.{bid}.feed_forward.w1", "blk.{bid}.ffn_gate", ALL},
    {"model.layers.{bid}.mlp.up_proj", "blk.{bid}.ffn_up", ALL},
    {"layers.{bid}.feed_forward.w3", "blk.{bid}.ffn_up", ALL},
    {"model.layers.{bid}.mlp.down_proj", "blk.{bid}.ffn_down", ALL},
    {"layers.{bid}.feed_forward.w2", "blk.{bid}.ffn_down", ALL},
#undef ALL
#undef Q3
};

/* Matches name against a pattern with one "{bid}"; fills the block number
 * (canonical decimal, below n_blocks). */
static bool match_pattern(const char *pat, const char *name, size_t name_len, int64_t n_blocks,
                          int64_t *bid)
{
    const char *ph = strstr(pat, "{bid}");
    if (!ph)
        return strlen(pat) == name_len && !strncmp(pat, name, name_len);
    size_t pre = (size_t)(ph - pat), post = strlen(ph + 5);
    if (name_len < pre + post + 1 || strncmp(name, pat, pre) ||
        strncmp(name + name_len - post, ph + 5, post))
        return false;
    const char *d = name + pre;
    size_t dl = name_len - pre - post;
    if (dl > 9 || (dl > 1 && d[0] == '0'))
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < dl; i++) {
        if (d[i] < '0' || d[i] > '9')
            return false;
        v = v * 10 + (d[i] - '0');
    }
    if (v >= n_blocks)
        return false;
    *bid = v;
    return true;
}

/* TensorNameMap.get_name(name, try_suffixes=(".weight", ".bias")) */
static char *map_name(const conv *c, const char *name)
{
    static const char *const suffixes[] = {"", ".weight", ".bias"};
    size_t n = strlen(name);
    for (size_t s = 0; s < 3; s++) {
        size_t sl = strlen(suffixes[s]);
        if (n < sl || strcmp(name + n - sl, suffixes[s]))
            continue;
        for (size_t i = 0; i < sizeof(name_map) / sizeof(name_map[0]); i++) {
            int64_t bid = -1;
            if (!(name_map[i].archs & (1 << c->arch)) ||
                !match_pattern(name_map[i].hf, name, n - sl, c->block_count, &bid))
                continue;
            const char *g = name_map[i].gguf, *ph = strstr(g, "{bid}");
            char *out = malloc(strlen(g) + sl + 24);
            if (!out)
                return NULL;
            if (ph)
                sprintf(out, "%.*s%lld%s%s", (int)(ph - g), g, (long long)bid, ph + 5, suffixes[s]);
            else
                sprintf(out, "%s%s", g, suffixes[s]);
            return out;
        }
    }
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* ------------------------------------------------------- output types */

static mf_dtype tensor_type(const conv *c, const char *new_name, int ndim, int64_t row)
{
    /* "Most of the codebase that takes in 1D tensors or norms only handles F32" */
    if (ndim <= 1 || ends_with(new_name, "_norm.weight") || !ends_with(new_name, ".weight"))
        return MF_F32;
    mf_dtype t = c->qtype;
    const mf_dtype_info *di = mf_dtype_info_of(t);
    if (di && di->block_elems > 1 && row % di->block_elems) /* QuantError: fall back to F16 */
        t = MF_F16;
    return t;
}

static int add_out(conv *c, out_tensor *o)
{
    if (c->n_out == c->cap_out && mf_vec_grow((void **)&c->out, &c->cap_out, c->n_out + 1, sizeof(*o)))
        return mf_oom(c->st, c->dir);
    for (size_t i = 0; i < c->n_out; i++)
        if (!strcmp(c->out[i].name, o->name))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "duplicated tensor name \"%s\"", o->name);
    c->out[c->n_out++] = *o;
    return 0;
}

/* LlamaModel.generate_extra_tensors: rope_freqs for "llama3" rope scaling,
 * computed in float32 as the converter's torch code does (x / y on a
 * scalar left operand is reciprocal(y) * x there). */
static int llama3_rope_freqs(conv *c)
{
    json_t *rs = hparam(c, "rope_scaling");
    const char *rt = json_string_value(json_object_get(rs, "rope_type"));
    if (!json_is_object(rs) || !rt || strcasecmp(rt, "llama3"))
        return 0;
    double base = 10000.0;
    json_t *th = hparam(c, "rope_theta");
    if (th)
        base = json_number_value(th);
    int64_t dim, hidden, heads;
    if (hparam(c, "head_dim")) {
        if (need_int(c, hparam(c, "head_dim"), "head_dim", &dim))
            return -1;
    } else {
        if (need_int(c, hparam(c, "hidden_size"), "hidden_size", &hidden) ||
            need_int(c, hparam(c, "num_attention_heads"), "num_attention_heads", &heads))
            return -1;
        if (heads <= 0)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "num_attention_heads must be positive");
        dim = hidden / heads; /* Python // on positive values */
    }
    if (dim <= 0 || dim > (1 << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "head dimension %lld is out of range", (long long)dim);
    json_t *f = json_object_get(rs, "factor"), *lf = json_object_get(rs, "low_freq_factor"),
           *hf = json_object_get(rs, "high_freq_factor");
    double factor = f ? json_number_value(f) : 8.0, low = lf ? json_number_value(lf) : 1.0,
           high = hf ? json_number_value(hf) : 4.0;
    json_t *oc = hparam(c, "original_max_position_embeddings");
    double old_ctx = oc ? json_number_value(oc) : 8192.0;
    double low_wavelen = old_ctx / low, high_wavelen = old_ctx / high;
    if (low_wavelen == high_wavelen)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_scaling: low and high frequency factors are equal");
    size_t n = (size_t)(dim + 1) / 2;
    out_tensor o = {.ndim = 1, .shape = {(int64_t)n}, .dtype = MF_F32};
    o.name = strdup("rope_freqs.weight");
    o.generated = malloc(n * sizeof(float));
    if (!o.name || !o.generated) {
        free(o.name);
        free(o.generated);
        return mf_oom(c->st, c->dir);
    }
    const float two_pi = (float)(2 * M_PI), hf32 = (float)high_wavelen, lf32 = (float)low_wavelen;
    for (size_t i = 0; i < n; i++) {
        float x = (float)(2 * i) / (float)dim;
        float freq = (1.0f / powf((float)base, x)) * 1.0f;
        float wavelen = (1.0f / freq) * two_pi;
        float v;
        if (wavelen < hf32) {
            v = 1.0f;
        } else if (wavelen > lf32) {
            v = (float)factor;
        } else {
            float smooth = ((1.0f / wavelen) * (float)old_ctx - (float)low) / (float)(high - low);
            float d = (1.0f - smooth) / (float)factor + smooth;
            v = (1.0f / d) * 1.0f;
        }
        o.generated[i] = v;
    }
    if (add_out(c, &o)) {
        free(o.name);
        free(o.generated);
        return -1;
    }
    return 0;
}

static bool dtype_convertible(mf_dtype d)
{
    switch (d) {
    case MF_F64: case MF_F32: case MF_F16: case MF_BF16: case MF_I8: case MF_I16:
    case MF_I32: case MF_I64: case MF_U8: case MF_U16: case MF_U32: case MF_U64: case MF_BOOL:
        return true;
    default:
        return false;
    }
}

static int plan_tensor(conv *c, const mf_model *part, const mf_tensor *t)
{
    const char *name = t->name;
    if (ends_with(name, ".attention.masked_bias") || ends_with(name, ".attention.bias") ||
        ends_with(name, ".rotary_emb.inv_freq"))
        return 0; /* "we don't need these" */
    if (strstr(name, "block_sparse_moe.experts") || strstr(name, "mlp.experts."))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1,
                       "tensor \"%s\": mixture-of-experts weights are not converted by mfmt", name);
    if (!dtype_convertible(t->dtype))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1,
                       "tensor \"%s\": %s values cannot be converted", name, mf_dtype_name(t->dtype));
    if (t->ndim > 4)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1,
                       "tensor \"%s\": %d dimensions (GGUF holds at most 4)", name, t->ndim);
    out_tensor o = {.part = part, .src = t, .ndim = t->ndim};
    memcpy(o.shape, t->shape, sizeof(o.shape));
    if (c->arch == ARCH_LLAMA) {
        int64_t n_head, n_kv;
        bool q = ends_with(name, "q_proj.weight") || ends_with(name, "q_proj.bias");
        bool k = ends_with(name, "k_proj.weight") || ends_with(name, "k_proj.bias");
        if ((q || k) && head_counts(c, &n_head, &n_kv))
            return -1;
        int64_t heads = q ? n_head : (k && n_kv && n_kv != n_head) ? n_kv : n_head;
        if (q || k) {
            int64_t rows = t->ndim ? t->shape[0] : 1;
            if (t->ndim < 1 || rows % (heads * 2))
                return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1,
                               "tensor \"%s\": %lld rows do not split into %lld heads of row pairs",
                               name, (long long)rows, (long long)heads);
            o.permute_heads = heads;
        }
    }
    o.name = map_name(c, name);
    if (!o.name)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", name);
    o.dtype = tensor_type(c, o.name, o.ndim, o.ndim ? o.shape[o.ndim - 1] : 1);
    if (add_out(c, &o)) {
        free(o.name);
        return -1;
    }
    return 0;
}

static int plan_tensors(conv *c)
{
    if (c->arch == ARCH_LLAMA && llama3_rope_freqs(c))
        return -1;
    for (size_t p = 0; p < c->n_parts; p++) {
        const mf_tensor **order = part_order(c, c->parts[p], c->st);
        if (!order)
            return -1;
        int rc = 0;
        for (size_t i = 0; i < c->parts[p]->n_tensors && rc == 0; i++)
            rc = plan_tensor(c, c->parts[p], order[i]);
        free(order);
        if (rc)
            return -1;
    }
    return check_index(c);
}

/* ------------------------------------------------------------ metadata */

static int put_u32_hparam(conv *c, mf_kvlist *kv, const char *key, json_t *v, const char *what)
{
    if (!v || json_is_null(v))
        return 0;
    int64_t x;
    if (need_int(c, v, what, &x))
        return -1;
    if (x < 0 || x > UINT32_MAX)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s = %lld does not fit a u32",
                       what, (long long)x);
    mf_kv_u32(kv, key, (uint32_t)x);
    return 0;
}

static int put_f32_hparam(conv *c, mf_kvlist *kv, const char *key, json_t *v, const char *what)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is not a number", what);
    mf_kv_f32(kv, key, (float)json_number_value(v));
    return 0;
}

/* Model.set_gguf_parameters and the architecture's additions. */
static int hyper_parameters(conv *c, mf_kvlist *kv)
{
    const char *a = arch_names[c->arch];
    char k[128];
#define KEY(s) (snprintf(k, sizeof(k), "%s." s, a), k)
    static const char *const ctx_keys[] = {"max_position_embeddings", "n_ctx", NULL};
    static const char *const embd_keys[] = {"hidden_size", "n_embd", NULL};
    static const char *const ff_keys[] = {"intermediate_size", "n_inner", NULL};
    static const char *const head_keys[] = {"num_attention_heads", "n_head", NULL};
    static const char *const ln_keys[] = {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon", NULL};
    mf_kv_u32(kv, KEY("block_count"), (uint32_t)c->block_count);
    if (put_u32_hparam(c, kv, KEY("context_length"), find_hparam(c, ctx_keys), "context length") ||
        put_u32_hparam(c, kv, KEY("embedding_length"), find_hparam(c, embd_keys), "hidden_size") ||
        put_u32_hparam(c, kv, KEY("feed_forward_length"), find_hparam(c, ff_keys), "intermediate_size") ||
        put_u32_hparam(c, kv, KEY("attention.head_count"), find_hparam(c, head_keys), "num_attention_heads") ||
        put_u32_hparam(c, kv, KEY("attention.head_count_kv"), hparam(c, "num_key_value_heads"), "num_key_value_heads") ||
        put_f32_hparam(c, kv, KEY("rope.freq_base"), hparam(c, "rope_theta"), "rope_theta") ||
        put_f32_hparam(c, kv, KEY("attention.layer_norm_rms_epsilon"), hparam(c, "rms_norm_eps"), "rms_norm_eps") ||
        put_f32_hparam(c, kv, KEY("attention.layer_norm_epsilon"), find_hparam(c, ln_keys), "layer_norm_eps") ||
        put_u32_hparam(c, kv, KEY("expert_count"), hparam(c, "num_local_experts"), "num_local_experts") ||
        put_u32_hparam(c, kv, KEY("expert_used_count"), hparam(c, "num_experts_per_tok"), "num_experts_per_tok") ||
        put_u32_hparam(c, kv, KEY("attention.key_length"), hparam(c, "head_dim"), "head_dim") ||
        put_u32_hparam(c, kv, KEY("attention.value_length"), hparam(c, "head_dim"), "head_dim"))
        return -1;
    mf_kv_u32(kv, "general.file_type", (uint32_t)c->ftype);
    json_t *rs = hparam(c, "rope_scaling");
    const char *rs_type = json_string_value(json_object_get(rs, "type"));
    json_t *factor = json_object_get(rs, "factor");
    if (c->arch == ARCH_LLAMA) {
        json_t *vs = hparam(c, "vocab_size");
        if (!vs)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no vocab_size");
        if (put_u32_hparam(c, kv, KEY("vocab_size"), vs, "vocab_size"))
            return -1;
        int64_t rope_dim, hidden, heads;
        if (hparam(c, "head_dim")) {
            if (need_int(c, hparam(c, "head_dim"), "head_dim", &rope_dim))
                return -1;
        } else {
            if (need_int(c, hparam(c, "hidden_size"), "hidden_size", &hidden) ||
                need_int(c, hparam(c, "num_attention_heads"), "num_attention_heads", &heads))
                return -1;
            if (heads <= 0 || hidden < 0)
                return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json head count must be positive");
            rope_dim = hidden / heads;
        }
        if (rope_dim < 0 || rope_dim > UINT32_MAX)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope dimension out of range");
        mf_kv_u32(kv, KEY("rope.dimension_count"), (uint32_t)rope_dim);
        if (json_is_object(rs) && factor && rs_type && !strcmp(rs_type, "linear")) {
            mf_kv_str(kv, KEY("rope.scaling.type"), "linear", 6);
            if (put_f32_hparam(c, kv, KEY("rope.scaling.factor"), factor, "rope_scaling.factor"))
                return -1;
        }
    } else if (json_is_object(rs) && factor && rs_type && !strcmp(rs_type, "yarn")) {
        mf_kv_str(kv, KEY("rope.scaling.type"), "yarn", 4);
        json_t *orig = json_object_get(rs, "original_max_position_embeddings");
        if (!orig)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                           "rope_scaling (yarn) has no original_max_position_embeddings");
        if (put_f32_hparam(c, kv, KEY("rope.scaling.factor"), factor, "rope_scaling.factor") ||
            put_u32_hparam(c, kv, KEY("rope.scaling.original_context_length"), orig,
                           "rope_scaling.original_max_position_embeddings"))
            return -1;
    }
#undef KEY
    return 0;
}

static int64_t total_params(const conv *c)
{
    int64_t total = 0;
    for (size_t i = 0; i < c->n_out; i++) {
        int64_t n = 1;
        for (int d = 0; d < c->out[i].ndim; d++)
            n *= c->out[i].shape[d];
        total += n;
    }
    return total;
}

static int build_metadata(conv *c, mf_kvlist *kv)
{
    const char *a = arch_names[c->arch];
    mf_kv_str(kv, "general.architecture", a, strlen(a));
    mf_kv_str(kv, "general.type", "model", 5);
    if (mf_hf_general_meta(c->dir, c->cfg, total_params(c), kv, c->st) ||
        hyper_parameters(c, kv) ||
        mf_hf_vocab_keys(c->dir, c->cfg, c->arch == ARCH_LLAMA, kv, c->st))
        return -1;
    mf_kv_u32(kv, "general.quantization_version", 2);
    if (kv->failed)
        return kv->dup[0] ? mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "duplicated key name \"%s\"", kv->dup)
                          : mf_oom(c->st, c->dir);
    return 0;
}

/* ------------------------------------------------------- value coding */

/* Source elements as float32 (torch's .to(torch.float32)); halves as
 * numpy reads them (NaN payloads kept). */
static void row_to_f32(mf_dtype dt, const uint8_t *p, size_t n, float *out)
{
    if (dt == MF_F16) {
        for (size_t i = 0; i < n; i++)
            out[i] = mf_f16_to_f32_numpy(mf_rd16le(p + 2 * i));
    } else if (mf_convert_to_f32(dt, p, out, n)) {
        memset(out, 0, n * sizeof(*out));
    }
}

/* ---------------------------------------------------------- streaming */

/* The source row that lands at output row r (LlamaModel.permute: rows
 * viewed as [heads][2][half] are read as [heads][half][2]). */
static int64_t source_row(const out_tensor *o, int64_t r)
{
    if (!o->permute_heads)
        return r;
    int64_t per_head = o->shape[0] / o->permute_heads, half = per_head / 2;
    int64_t h = r / per_head, k = r % per_head, i = k / 2, j = k % 2;
    return h * per_head + j * half + i;
}

static int fill_tensor(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    conv *c = ctx;
    const out_tensor *o = &c->out[index];
    int64_t row = o->ndim ? o->shape[o->ndim - 1] : 1, nrows = 1;
    for (int d = 0; d + 1 < o->ndim; d++)
        nrows *= o->shape[d];
    if (o->permute_heads && o->ndim == 1) { /* a bias: its elements are the rows permuted */
        nrows = o->shape[0];
        row = 1;
    }
    if (row == 0 || nrows == 0)
        return 0;
    const uint8_t *data = NULL;
    mf_buf_sink col = {.too_long = "tensor stream longer than its size"};
    mf_dtype sdt = o->src ? o->src->dtype : MF_F32;
    size_t ses = o->src ? mf_dtype_info_of(sdt)->block_bytes : 4;
    if (o->generated) {
        data = (const uint8_t *)o->generated;
    } else if (o->src->data && !o->src->strides && !o->src->big_endian) {
        data = o->src->data;
    } else {
        col.cap = o->src->nbytes;
        col.p = malloc(col.cap ? col.cap : 1);
        if (!col.p)
            return mf_oom(st, c->dir);
        if (mf_tensor_stream(o->part, o->src, mf_buf_sink_fn, &col, st) || col.n != col.cap) {
            free(col.p);
            return st->code ? -1 : mf_fail(st, MF_ERR_FORMAT, o->part->path, -1,
                                           "tensor \"%s\": short stream", o->src->name);
        }
        data = col.p;
    }
    bool raw = sdt == o->dtype && (sdt == MF_F16 || sdt == MF_F32); /* astype() of the same type */
    const mf_dtype_info *odi = mf_dtype_info_of(o->dtype);
    uint64_t orow_bytes;
    mf_dtype_nbytes(o->dtype, (uint64_t)row, &orow_bytes);
    int64_t chunk = (int64_t)((4u << 20) / ((uint64_t)row * 4 + orow_bytes));
    if (chunk < 1)
        chunk = 1;
    if (chunk > nrows)
        chunk = nrows;
    float *f32 = malloc((size_t)(chunk * row) * sizeof(float));
    uint8_t *obuf = malloc((size_t)(chunk * (int64_t)orow_bytes));
    int rc = f32 && obuf ? 0 : mf_oom(st, c->dir);
    for (int64_t r0 = 0; rc == 0 && r0 < nrows; r0 += chunk) {
        int64_t nr = nrows - r0 < chunk ? nrows - r0 : chunk;
        for (int64_t r = 0; r < nr; r++) {
            const uint8_t *srow = data + (uint64_t)source_row(o, r0 + r) * (uint64_t)row * ses;
            if (raw)
                memcpy(obuf + (uint64_t)r * orow_bytes, srow, (size_t)orow_bytes);
            else
                row_to_f32(sdt, srow, (size_t)row, f32 + r * row);
        }
        if (!raw) {
            size_t n = (size_t)(nr * row);
            if (o->dtype == MF_F32) {
                memcpy(obuf, f32, n * 4);
            } else if (o->dtype == MF_F16) {
                for (size_t i = 0; i < n; i++)
                    mf_wr16le(obuf + 2 * i, mf_f32_to_f16_numpy(f32[i]));
            } else if (o->dtype == MF_BF16) {
                for (size_t i = 0; i < n; i++)
                    mf_wr16le(obuf + 2 * i, mf_f32_to_bf16(f32[i]));
            } else if (odi && mf_quantize_rows_mt(o->dtype, f32, obuf, nr, row, NULL,
                                                  c->opts.threads)) {
                rc = mf_fail(st, MF_ERR_UNSUPPORTED, c->dir, -1, "cannot quantize to %s",
                             mf_dtype_name(o->dtype));
                break;
            }
        }
        rc = sink(sink_ctx, obuf, (size_t)(nr * (int64_t)orow_bytes), st);
    }
    free(f32);
    free(obuf);
    free(col.p);
    c->done += (uint64_t)nrows * orow_bytes;
    if (rc == 0)
        rc = mf_progress_report(c->opts.progress, c->opts.progress_user, c->done,
                                c->total_bytes, c->dir, st);
    return rc;
}

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
}

/* The f32 conversion quantized as llama-quantize quantizes an f32 GGUF:
 * tensors in its order, a type per tensor from the mix's rules, then
 * general.quantization_version and general.file_type set (moved last). */
static int apply_mix(conv *c, mf_kvlist *kv)
{
    const char *arch = arch_names[c->arch];
    mf_qmix_params mp;
    mf_qmix_params_init(&mp, c->mix);
    mf_qmix_hparams h = {.arch = arch, .n_layer = kv_int(kv, arch, "block_count", 0),
                         .n_head = kv_int(kv, arch, "attention.head_count", 0)};
    h.n_head_kv = kv_int(kv, arch, "attention.head_count_kv", h.n_head);
    h.n_expert = kv_int(kv, arch, "expert_count", 0);
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
        mf_dtype t = mf_qmix_choose(&q, o->name, ne, MF_F32, &fallback, c->st);
        if (t == MF_DTYPE_INVALID)
            return -1;
        if (t != MF_F32 && !mf_can_quantize(t))
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "tensor %s: mfmt cannot quantize to %s yet",
                           o->name, mf_dtype_name(t));
        o->dtype = t;
    }
    kv_move_last(kv, "general.quantization_version", 2);
    kv_move_last(kv, "general.file_type", (uint32_t)c->mix);
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
    /* a llama-quantize mix: converted as f32, then quantized in the same pass */
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
    c->ftype = MF_FTYPE_ALL_F32;
    c->qtype = MF_F32;
    return 0;
}

static int pick_arch(conv *c)
{
    json_t *archs = hparam(c, "architectures");
    const char *cls = json_string_value(json_array_get(archs, 0));
    for (size_t i = 0; cls && i < sizeof(arch_classes) / sizeof(arch_classes[0]); i++)
        if (!strcmp(cls, arch_classes[i].cls)) {
            c->arch = arch_classes[i].arch;
            return 0;
        }
    char known[512] = "";
    for (size_t i = 0; mf_convert_known_archs[i]; i++)
        snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", i ? ", " : "",
                 mf_convert_known_archs[i]);
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1,
                   "architecture %s is not supported by mfmt convert; it converts %s",
                   cls ? cls : "(none: config.json has no \"architectures\")", known);
}

static int load_config(conv *c)
{
    c->cfg = mf_hf_load_config(c->dir, true, c->st);
    if (!c->cfg)
        return -1;
    if (!json_is_object(c->cfg))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json must hold a JSON object");
    static const char *const block_keys[] = {"n_layers", "num_hidden_layers", "n_layer", "num_layers", NULL};
    json_t *bc = find_hparam(c, block_keys);
    if (!bc)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no num_hidden_layers");
    if (need_int(c, bc, "num_hidden_layers", &c->block_count))
        return -1;
    if (c->block_count < 0 || c->block_count > (1 << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json num_hidden_layers is out of range");
    return 0;
}

/* "auto": f16 when the first tensor read is F16, else bf16. */
static void resolve_auto(conv *c)
{
    if (!c->auto_type)
        return;
    const mf_tensor **order = c->n_parts ? part_order(c, c->parts[0], c->st) : NULL;
    bool f16 = order && c->parts[0]->n_tensors && order[0]->dtype == MF_F16;
    free(order);
    c->ftype = f16 ? 1 : 32;
    c->qtype = f16 ? MF_F16 : MF_BF16;
}

static void free_conv(conv *c)
{
    for (size_t i = 0; i < c->n_out; i++) {
        free(c->out[i].name);
        free(c->out[i].generated);
    }
    free(c->out);
    for (size_t i = 0; i < c->n_parts; i++)
        mf_close(c->parts[i]);
    free(c->parts);
    json_decref(c->cfg);
}

void mf_convert_gguf_opts_init(mf_convert_gguf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->threads = 1;
}

const char *const *mf_convert_gguf_archs(void)
{
    return mf_convert_known_archs;
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
    mf_out_tensor *ot = NULL;
    int rc = parse_type(&c, c.opts.type);
    if (rc == 0 && !mf_is_dir(dir))
        rc = mf_fail(st, MF_ERR_USAGE, dir, -1, "not a directory (a Hugging Face model directory is needed)");
    if (rc == 0)
        rc = load_config(&c);
    if (rc == 0)
        rc = pick_arch(&c);
    if (rc == 0)
        rc = open_parts(&c);
    if (rc == 0) {
        resolve_auto(&c);
        rc = plan_tensors(&c);
    }
    if (rc == 0)
        rc = build_metadata(&c, &kv);
    if (rc == 0 && c.mix != MF_FTYPE_INVALID)
        rc = apply_mix(&c, &kv);
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
        uint64_t ne = 1;
        for (int d = 0; d < ot[i].ndim; d++)
            ne *= (uint64_t)ot[i].shape[d];
        mf_dtype_nbytes(ot[i].dtype, ne, &nb);
        c.total_bytes += nb;
    }
    for (size_t i = 0; rc == 0 && i < c.n_parts; i++)
        rc = mf_output_check(c.parts[i], out, st);
    if (rc == 0)
        rc = mf_output_check_path(dir, out, st);
    if (rc == 0)
        rc = mf_gguf_write(out, ot, c.n_out, kv.kv, kv.n, fill_tensor, &c, st);
    free(ot);
    mf_kvlist_free(&kv);
    free_conv(&c);
    return rc;
}
