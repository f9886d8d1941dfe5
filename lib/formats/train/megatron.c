/* megatron.c - a Megatron-LM checkpoint (the legacy `torch` format: one
 * torch.save per tensor/pipeline/expert rank) read as the merged model with
 * Hugging Face Llama / Mistral / Qwen2 / Mixtral names.
 *
 * Layout (NVIDIA/Megatron-LM d98e8a64ddf3, megatron/training/
 * checkpointing.py): CKPT/latest_checkpointed_iteration.txt names the
 * iteration ("100" -> iter_0000100, or "release"); in it
 * mp_rank_TT[_PPP][_EEE]/model_optim_rng.pt (PPP only with pipeline
 * parallelism, EEE only with expert parallelism) holds args (the
 * argparse.Namespace of the run), checkpoint_version, iteration, model (the
 * mcore GPTModel's state dict on that rank), optimizer, opt_param_scheduler
 * and rng_state.
 *
 * Split rules (tools/checkpoint/loader_base.py and saver_hf_llava.py,
 * schema_core.py names), the table `rules` below:
 *  - embedding.word_embeddings / output_layer: vocab-parallel, rows over
 *    TP ranks, padded to args.padded_vocab_size: cut to config.json's
 *    vocab_size;
 *  - self_attention.linear_qkv: per TP rank, num_query_groups/TP groups of
 *    [nh/ng query heads, 1 key head, 1 value head] x kv_channels rows;
 *  - mlp.linear_fc1 (SwiGLU): per TP rank [gate rows; up rows];
 *  - linear_proj, linear_fc2: row-parallel, columns over TP ranks;
 *  - norms and the MoE router: replicated (TP rank 0);
 *  - layers: pipeline stage p holds layers p*L/PP .. as 0..L/PP-1;
 *  - MoE experts: expert rank e holds experts e*E/EP + j as
 *    mlp.experts.local_experts.j. */
#include "formats/train/train.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAR 1024
#define MAX_SIZE ((int64_t)1 << 31) /* a dimension, layer or head count from args */

typedef struct mg_args {
    int64_t layers, hidden, ffn, heads, groups, kv, padded, tp, pp, ep, experts;
    bool swiglu, untie, qkv_bias;
} mg_args;

typedef struct mg_ctx {
    mf_model *m;
    unsigned flags;
    const char *iter_dir;
    mg_args a;
    mf_model **shards;        /* [t][p][e] */
    int64_t vocab;            /* rows kept of the vocab-parallel tensors */
    bool mixtral, qwen2;
    size_t used;              /* shard tensors mapped to an output */
} mg_ctx;

static mf_model *shard_at(const mg_ctx *c, int64_t t, int64_t p, int64_t e)
{
    return c->shards[(t * c->a.pp + p) * c->a.ep + e];
}

/* --------------------------------------------------------- the folders */

/* The iteration folder: PATH when it holds mp_rank_* folders; else the one
 * latest_checkpointed_iteration.txt names. */
static bool is_rank_dir(const char *name)
{
    return strncmp(name, "mp_rank_", 8) == 0;
}

static bool holds_ranks(const char *dir)
{
    return tr_dir_count(dir, is_rank_dir) > 0;
}

static bool is_torch_dist(const char *dir);

static bool is_iteration(const char *dir)
{
    return holds_ranks(dir) || is_torch_dist(dir);
}

static char *iteration_dir(mf_arena *a, const char *path, char *tag, size_t cap)
{
    if (is_iteration(path)) {
        snprintf(tag, cap, "%s", "");
        return mf_arena_strdup(a, path);
    }
    char *tracker = mf_path_join(a, path, "latest_checkpointed_iteration.txt");
    char buf[64];
    if (!tracker || !tr_read_marker(tracker, buf, sizeof(buf)))
        return NULL;
    char name[64];
    char *end;
    long long it = strtoll(buf, &end, 10);
    if (strcmp(buf, "release") == 0)
        snprintf(name, sizeof(name), "release");
    else if (*end || it < 0)
        return NULL;
    else
        snprintf(name, sizeof(name), "iter_%07lld", it);
    snprintf(tag, cap, "%s", name);
    char *d = mf_path_join(a, path, name);
    return d && is_iteration(d) ? d : NULL;
}

static int probe_megatron(mf_probe *p)
{
    mf_arena *a = mf_arena_new();
    char tag[64];
    char *d = a ? iteration_dir(a, p->path, tag, sizeof(tag)) : NULL;
    int rc = d ? mf_probe_found(p, MF_FMT_MEGATRON, "Megatron-LM checkpoint%s%s",
                                tag[0] ? ", " : "", tag)
               : MF_PROBE_NO;
    mf_arena_free(a);
    return rc;
}

/* "mp_rank_01_002" -> {1, 2}; the count of numbers, 0 when not such a name. */
static int rank_numbers(const char *name, long *v)
{
    if (strncmp(name, "mp_rank_", 8))
        return 0;
    const char *p = name + 8;
    int n = 0;
    while (n < 3) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || x >= MAX_PAR)
            return 0;
        v[n++] = x;
        if (!*end)
            return n;
        if (*end != '_')
            return 0;
        p = end + 1;
    }
    return 0;
}

/* ------------------------------------------------------------- args */

static bool arg_int(const pk_obj *args, const char *k, int64_t *v)
{
    return tr_int(tr_field(args, k), v);
}

static bool arg_bool(const pk_obj *args, const char *k)
{
    const pk_obj *o = tr_field(args, k);
    return o && o->kind == PK_BOOL && o->u.b;
}

static int read_args(mg_ctx *c, const pk_obj *root, const char *file, mf_status *st)
{
    const pk_obj *args = tr_get(root, "args");
    mg_args *a = &c->a;
    if (!args || !arg_int(args, "num_layers", &a->layers) ||
        !arg_int(args, "hidden_size", &a->hidden) ||
        !arg_int(args, "num_attention_heads", &a->heads) ||
        !arg_int(args, "padded_vocab_size", &a->padded) ||
        !arg_int(args, "tensor_model_parallel_size", &a->tp) ||
        !arg_int(args, "pipeline_model_parallel_size", &a->pp))
        return mf_fail(st, MF_ERR_FORMAT, file, -1,
                       "its args lack num_layers, hidden_size, num_attention_heads, "
                       "padded_vocab_size or the parallel sizes (not a Megatron-LM checkpoint?)");
    /* every size within MAX_SIZE before any arithmetic: the products the
     * split rules form (heads x kv_channels, 4 x hidden) then fit in 64
     * bits (hidden_size 2^62 overflowed 4 x hidden) */
    if (a->hidden <= 0 || a->hidden > MAX_SIZE)
        return mf_fail(st, MF_ERR_FORMAT, file, -1, "args.hidden_size %lld is not 1..%lld",
                       (long long)a->hidden, (long long)MAX_SIZE);
    if (!arg_int(args, "ffn_hidden_size", &a->ffn))
        a->ffn = 4 * a->hidden;
    if (!arg_bool(args, "group_query_attention") || !arg_int(args, "num_query_groups", &a->groups))
        a->groups = a->heads;
    if (!arg_int(args, "kv_channels", &a->kv) && a->heads > 0)
        a->kv = a->hidden / a->heads;
    if (!arg_int(args, "expert_model_parallel_size", &a->ep))
        a->ep = 1;
    if (!arg_int(args, "num_experts", &a->experts))
        a->experts = 0;
    a->swiglu = arg_bool(args, "swiglu");
    a->untie = arg_bool(args, "untie_embeddings_and_output_weights");
    a->qkv_bias = arg_bool(args, "add_qkv_bias");
    const int64_t sizes[] = {a->layers, a->heads, a->groups, a->kv, a->padded, a->ffn};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        if (sizes[i] <= 0 || sizes[i] > MAX_SIZE)
            return mf_fail(st, MF_ERR_FORMAT, file, -1,
                           "its args hold a size that is not 1..%lld: %lld layers, %lld heads, "
                           "%lld query groups, kv_channels %lld, vocab %lld, ffn %lld",
                           (long long)MAX_SIZE, (long long)a->layers, (long long)a->heads,
                           (long long)a->groups, (long long)a->kv, (long long)a->padded,
                           (long long)a->ffn);
    if (a->experts < 0 || a->experts > MAX_SIZE)
        return mf_fail(st, MF_ERR_FORMAT, file, -1, "args.num_experts %lld is not 0..%lld",
                       (long long)a->experts, (long long)MAX_SIZE);
    bool ok = a->layers > 0 && a->hidden > 0 && a->heads > 0 && a->groups > 0 && a->kv > 0 &&
              a->tp > 0 && a->pp > 0 && a->ep > 0 && a->tp <= MAX_PAR && a->pp <= MAX_PAR &&
              a->ep <= MAX_PAR && a->heads % a->groups == 0 && a->groups % a->tp == 0 &&
              a->layers % a->pp == 0 && a->padded % a->tp == 0 && a->ffn % a->tp == 0 &&
              (!a->experts || a->experts % a->ep == 0);
    if (!ok)
        return mf_fail(st, MF_ERR_FORMAT, file, -1,
                       "its args do not split: %lld layers over PP %lld, %lld heads in %lld "
                       "query groups over TP %lld, vocab %lld, ffn %lld, %lld experts over EP %lld",
                       (long long)a->layers, (long long)a->pp, (long long)a->heads,
                       (long long)a->groups, (long long)a->tp, (long long)a->padded,
                       (long long)a->ffn, (long long)a->experts, (long long)a->ep);
    if (!a->swiglu)
        return mf_fail(st, MF_ERR_UNSUPPORTED, file, -1,
                       "a non-gated MLP (args.swiglu false) has no Llama/Mistral/Qwen2/Mixtral "
                       "names");
    return 0;
}

/* config.json: the vocabulary without padding and the architecture. */
static void read_config(mg_ctx *c, const char *path, mf_status *st)
{
    const char *cands[3] = {c->m->config, NULL, NULL};
    cands[1] = mf_path_join(c->m->arena, path, "config.json");
    cands[2] = mf_path_join(c->m->arena, c->iter_dir, "config.json");
    json_t *cfg = NULL;
    for (int i = 0; i < 3 && !cfg; i++)
        if (cands[i] && (i == 0 || mf_path_exists(cands[i]))) {
            mf_status tmp;
            mf_status_init(&tmp);
            cfg = mf_hf_load_json(cands[i], i == 0 ? st : &tmp);
            mf_status_clear(&tmp);
        }
    c->vocab = c->a.padded;
    if (!cfg) {
        mf_model_note(c->m, "no config.json (give --config): the vocabulary keeps its padding to "
                            "%lld rows", (long long)c->a.padded);
        c->mixtral = c->a.experts > 0;
        return;
    }
    json_t *v = json_object_get(cfg, "vocab_size");
    if (json_is_integer(v) && json_integer_value(v) > 0 &&
        json_integer_value(v) <= c->a.padded)
        c->vocab = json_integer_value(v);
    else
        mf_model_note(c->m, "config.json's vocab_size is missing or beyond the padded %lld",
                      (long long)c->a.padded);
    json_t *arch = json_array_get(json_object_get(cfg, "architectures"), 0);
    const char *an = json_is_string(arch) ? json_string_value(arch) : "";
    c->mixtral = strstr(an, "Mixtral") != NULL || c->a.experts > 0;
    c->qwen2 = strstr(an, "Qwen2") != NULL;
    json_decref(cfg);
}

/* ------------------------------------------------------------- tensors */

static const mf_tensor *need(mg_ctx *c, int64_t t, int64_t p, int64_t e, const char *key,
                             mf_status *st)
{
    char path[512];
    snprintf(path, sizeof(path), "model.%s", key);
    const mf_model *s = shard_at(c, t, p, e);
    const mf_tensor *x = tr_find(s, path);
    if (!x)
        return mf_fail(st, MF_ERR_FORMAT, s->path, -1, "holds no tensor \"%s\"", path), NULL;
    if (x->strides)
        return mf_fail(st, MF_ERR_UNSUPPORTED, s->path, -1, "\"%s\" is not contiguous", path),
               NULL;
    c->used++;
    return x;
}

static int expect_shape(const mf_model *s, const mf_tensor *x, int nd, int64_t d0, int64_t d1,
                        mf_status *st)
{
    if (x->ndim == nd && x->shape[0] == d0 && (nd < 2 || x->shape[1] == d1))
        return 0;
    return mf_fail(st, MF_ERR_FORMAT, s->path, -1,
                   "\"%s\" is %d-dimensional [%lld%s%lld], the args say [%lld, %lld] on this rank",
                   x->name, x->ndim, (long long)x->shape[0], x->ndim > 1 ? ", " : "",
                   x->ndim > 1 ? (long long)x->shape[1] : 0LL, (long long)d0, (long long)d1);
}

/* A block of rows [r0, r0 + n) of src (width w) placed at row `at` (and
 * column `col`) of the output. */
static int put_rows(mg_ctx *c, mf_tensor *out, const mf_model *s, const mf_tensor *src,
                    int64_t r0, int64_t n, int64_t w, int64_t at, int64_t col, mf_status *st)
{
    tr_block b = {.from = {src, s, (uint64_t)(r0 * w), (uint64_t)(n * w)}};
    b.off[0] = at;
    b.size[0] = n;
    if (out->ndim > 1) {
        b.off[1] = col;
        b.size[1] = w;
    }
    return n > 0 ? tr_add_block(c->m, out, &b, st) : 0;
}

static mf_tensor *out2(mg_ctx *c, const char *name, mf_dtype dt, int64_t d0, int64_t d1,
                       mf_status *st)
{
    int64_t shape[2] = {d0, d1};
    return tr_add(c->m, name, dt, dt, d1 ? 2 : 1, shape, st);
}

/* Vocab-parallel rows over TP ranks, cut to the vocabulary. */
static int vocab_rows(mg_ctx *c, const char *name, const char *key, int64_t p, mf_status *st)
{
    int64_t per = c->a.padded / c->a.tp, H = c->a.hidden;
    mf_tensor *o = NULL;
    for (int64_t t = 0; t < c->a.tp; t++) {
        const mf_tensor *x = need(c, t, p, 0, key, st);
        if (!x || expect_shape(shard_at(c, t, p, 0), x, 2, per, H, st))
            return -1;
        if (!o && !(o = out2(c, name, x->dtype, c->vocab, H, st)))
            return -1;
        int64_t keep = c->vocab - t * per < per ? c->vocab - t * per : per;
        if (put_rows(c, o, shard_at(c, t, p, 0), x, 0, keep, H, t * per, 0, st))
            return -1;
    }
    return tr_check_cover(c->m, o, st);
}

/* A replicated tensor: TP rank 0's. */
static int replicated(mg_ctx *c, const char *name, const char *key, int64_t p, int64_t d0,
                      int64_t d1, mf_status *st)
{
    const mf_tensor *x = need(c, 0, p, 0, key, st);
    if (!x || expect_shape(shard_at(c, 0, p, 0), x, d1 ? 2 : 1, d0, d1, st))
        return -1;
    mf_tensor *o = out2(c, name, x->dtype, d0, d1, st);
    if (!o || put_rows(c, o, shard_at(c, 0, p, 0), x, 0, d0, d1 ? d1 : 1, 0, 0, st))
        return -1;
    for (int64_t t = 1; t < c->a.tp; t++) /* present on every rank (not compared) */
        if (!need(c, t, p, 0, key, st))
            return -1;
    return tr_check_cover(c->m, o, st);
}

/* A tensor of the model by index: the table grows (and moves) as tensors
 * are added, so a function adding several keeps their indices. */
#define AT(i) (&c->m->tensors[(i)])

/* Adds an output tensor; its index in *ix. */
static int out2_ix(mg_ctx *c, const char *name, mf_dtype dt, int64_t d0, int64_t d1, size_t *ix,
                   mf_status *st)
{
    if (!out2(c, name, dt, d0, d1, st))
        return -1;
    *ix = c->m->n_tensors - 1;
    return 0;
}

/* linear_qkv (weight: width hidden; bias: width 1) into q, k, v. */
static int split_qkv(mg_ctx *c, const char *hf, const char *key, const char *kind, int64_t p,
                     mf_status *st)
{
    const mg_args *a = &c->a;
    int64_t qpg = a->heads / a->groups, ngl = a->groups / a->tp, hd = a->kv;
    bool bias = strcmp(kind, "bias") == 0;
    int64_t w = bias ? 1 : a->hidden;
    size_t q = 0, k = 0, v = 0;
    char name[512];
    for (int64_t t = 0; t < a->tp; t++) {
        const mf_model *s = shard_at(c, t, p, 0);
        const mf_tensor *x = need(c, t, p, 0, key, st);
        if (!x || expect_shape(s, x, bias ? 1 : 2, ngl * (qpg + 2) * hd, w, st))
            return -1;
        if (t == 0) {
            snprintf(name, sizeof(name), "%sq_proj.%s", hf, kind);
            if (out2_ix(c, name, x->dtype, a->heads * hd, bias ? 0 : w, &q, st))
                return -1;
            snprintf(name, sizeof(name), "%sk_proj.%s", hf, kind);
            if (out2_ix(c, name, x->dtype, a->groups * hd, bias ? 0 : w, &k, st))
                return -1;
            snprintf(name, sizeof(name), "%sv_proj.%s", hf, kind);
            if (out2_ix(c, name, x->dtype, a->groups * hd, bias ? 0 : w, &v, st))
                return -1;
        }
        for (int64_t g = 0; g < ngl; g++) {
            int64_t base = g * (qpg + 2) * hd, G = t * ngl + g;
            if (put_rows(c, AT(q), s, x, base, qpg * hd, w, G * qpg * hd, 0, st) ||
                put_rows(c, AT(k), s, x, base + qpg * hd, hd, w, G * hd, 0, st) ||
                put_rows(c, AT(v), s, x, base + (qpg + 1) * hd, hd, w, G * hd, 0, st))
                return -1;
        }
    }
    return tr_check_cover(c->m, AT(q), st) || tr_check_cover(c->m, AT(k), st) ||
                   tr_check_cover(c->m, AT(v), st) ? -1 : 0;
}

/* SwiGLU fc1 into gate and up: each TP rank holds [gate rows; up rows].
 * A NULL name leaves that half for another call (Mixtral lists w1, w2, w3). */
static int split_fc1(mg_ctx *c, const char *gate, const char *up, const char *key, int64_t p,
                     int64_t e, mf_status *st)
{
    int64_t per = c->a.ffn / c->a.tp, H = c->a.hidden;
    size_t g = 0, u = 0;
    for (int64_t t = 0; t < c->a.tp; t++) {
        const mf_model *s = shard_at(c, t, p, e);
        const mf_tensor *x = need(c, t, p, e, key, st);
        if (!x || expect_shape(s, x, 2, 2 * per, H, st))
            return -1;
        if (!gate)
            c->used--; /* counted by the call that took the gate half */
        if (t == 0 && ((gate && out2_ix(c, gate, x->dtype, c->a.ffn, H, &g, st)) ||
                       (up && out2_ix(c, up, x->dtype, c->a.ffn, H, &u, st))))
            return -1;
        if ((gate && put_rows(c, AT(g), s, x, 0, per, H, t * per, 0, st)) ||
            (up && put_rows(c, AT(u), s, x, per, per, H, t * per, 0, st)))
            return -1;
    }
    return (gate && tr_check_cover(c->m, AT(g), st)) || (up && tr_check_cover(c->m, AT(u), st))
               ? -1 : 0;
}

/* Row-parallel [rows, cols/TP] per rank: columns side by side. */
static int join_cols(mg_ctx *c, const char *name, const char *key, int64_t p, int64_t e,
                     int64_t rows, int64_t cols, mf_status *st)
{
    int64_t per = cols / c->a.tp;
    mf_tensor *o = NULL;
    for (int64_t t = 0; t < c->a.tp; t++) {
        const mf_model *s = shard_at(c, t, p, e);
        const mf_tensor *x = need(c, t, p, e, key, st);
        if (!x || expect_shape(s, x, 2, rows, per, st))
            return -1;
        if (!o && !(o = out2(c, name, x->dtype, rows, cols, st)))
            return -1;
        if (put_rows(c, o, s, x, 0, rows, per, 0, t * per, st))
            return -1;
    }
    return tr_check_cover(c->m, o, st);
}

/* One of two spellings (Transformer Engine's fused norm, or local). */
static const char *norm_key(mg_ctx *c, int64_t p, char *buf, size_t cap, int64_t i,
                            const char *te, const char *local)
{
    snprintf(buf, cap, "model.decoder.layers.%lld.%s", (long long)i, te);
    if (tr_find(shard_at(c, 0, p, 0), buf))
        return buf + 6;
    snprintf(buf, cap, "model.decoder.layers.%lld.%s", (long long)i, local);
    return buf + 6;
}

static int add_layer(mg_ctx *c, int64_t L, mf_status *st)
{
    const mg_args *a = &c->a;
    int64_t per = a->layers / a->pp, p = L / per, i = L % per, H = a->hidden;
    char hf[128], key[512], name[512], nb[512];
    snprintf(hf, sizeof(hf), "model.layers.%lld.", (long long)L);
#define KEY(fmt) (snprintf(key, sizeof(key), "decoder.layers.%lld." fmt, (long long)i), key)
#define NAME(fmt) (snprintf(name, sizeof(name), "%s" fmt, hf), name)
    if (replicated(c, NAME("input_layernorm.weight"),
                   norm_key(c, p, nb, sizeof(nb), i, "self_attention.linear_qkv.layer_norm_weight",
                            "input_layernorm.weight"), p, H, 0, st))
        return -1;
    snprintf(name, sizeof(name), "%sself_attn.", hf);
    if (split_qkv(c, name, KEY("self_attention.linear_qkv.weight"), "weight", p, st))
        return -1;
    if (a->qkv_bias && split_qkv(c, name, KEY("self_attention.linear_qkv.bias"), "bias", p, st))
        return -1;
    if (join_cols(c, NAME("self_attn.o_proj.weight"), KEY("self_attention.linear_proj.weight"),
                  p, 0, H, a->heads * a->kv, st))
        return -1;
    if (replicated(c, NAME("post_attention_layernorm.weight"),
                   norm_key(c, p, nb, sizeof(nb), i, "mlp.linear_fc1.layer_norm_weight",
                            "pre_mlp_layernorm.weight"), p, H, 0, st))
        return -1;
    if (!a->experts) {
        char up[512];
        snprintf(up, sizeof(up), "%smlp.up_proj.weight", hf);
        return split_fc1(c, NAME("mlp.gate_proj.weight"), up, KEY("mlp.linear_fc1.weight"), p,
                         0, st) ||
                       join_cols(c, NAME("mlp.down_proj.weight"), KEY("mlp.linear_fc2.weight"),
                                 p, 0, H, a->ffn, st)
                   ? -1 : 0;
    }
    if (replicated(c, NAME("block_sparse_moe.gate.weight"), KEY("mlp.router.weight"), p,
                   a->experts, H, st))
        return -1;
    int64_t local = a->experts / a->ep;
    for (int64_t E = 0; E < a->experts; E++) {
        int64_t e = E / local, j = E % local;
        char w1[512], w3[512], k1[512];
        snprintf(w1, sizeof(w1), "%sblock_sparse_moe.experts.%lld.w1.weight", hf, (long long)E);
        snprintf(w3, sizeof(w3), "%sblock_sparse_moe.experts.%lld.w3.weight", hf, (long long)E);
        snprintf(k1, sizeof(k1), "decoder.layers.%lld.mlp.experts.local_experts.%lld.linear_fc1."
                                 "weight", (long long)i, (long long)j);
        char w2[512], k2[512];
        snprintf(w2, sizeof(w2), "%sblock_sparse_moe.experts.%lld.w2.weight", hf, (long long)E);
        snprintf(k2, sizeof(k2), "decoder.layers.%lld.mlp.experts.local_experts.%lld.linear_fc2."
                                 "weight", (long long)i, (long long)j);
        if (split_fc1(c, w1, NULL, k1, p, e, st) || join_cols(c, w2, k2, p, e, H, a->ffn, st) ||
            split_fc1(c, NULL, w3, k1, p, e, st))
            return -1;
    }
    return 0;
#undef KEY
#undef NAME
}

/* ------------------------------------------------------------- open */

static int open_shards(mg_ctx *c, mf_status *st)
{
    DIR *d = mf_opendir(c->iter_dir);
    if (!d)
        return mf_fail(st, MF_ERR_IO, c->iter_dir, -1, "cannot list the iteration folder");
    char *first = NULL;
    struct dirent *e;
    long v[3];
    while ((e = readdir(d)) != NULL)
        if (rank_numbers(e->d_name, v) && (!first || strcmp(e->d_name, first) < 0))
            first = mf_arena_strdup(c->m->arena, e->d_name);
    closedir(d);
    if (!first)
        return mf_fail(st, MF_ERR_FORMAT, c->iter_dir, -1, "holds no mp_rank_* folders");
    /* the args of the first rank say how the others are named */
    char *dir0 = mf_path_join(c->m->arena, c->iter_dir, first);
    char *f0 = dir0 ? mf_path_join(c->m->arena, dir0, "model_optim_rng.pt") : NULL;
    if (!f0)
        return mf_oom(st, c->iter_dir);
    mf_model *s0 = tr_open_torch(c->m, f0, c->flags, st);
    if (!s0 || read_args(c, tr_root(s0), f0, st))
        return -1;
    const mg_args *a = &c->a;
    size_t n = (size_t)(a->tp * a->pp * a->ep);
    c->shards = mf_arena_calloc(c->m->arena, n, sizeof(*c->shards));
    if (!c->shards)
        return mf_oom(st, c->iter_dir);
    for (int64_t t = 0; t < a->tp; t++)
        for (int64_t p = 0; p < a->pp; p++)
            for (int64_t x = 0; x < a->ep; x++) {
                char name[64];
                int l = snprintf(name, sizeof(name), "mp_rank_%02lld", (long long)t);
                if (a->pp > 1)
                    l += snprintf(name + l, sizeof(name) - (size_t)l, "_%03lld", (long long)p);
                if (a->ep > 1)
                    snprintf(name + l, sizeof(name) - (size_t)l, "_%03lld", (long long)x);
                char *dn = mf_path_join(c->m->arena, c->iter_dir, name);
                char *fn = dn ? mf_path_join(c->m->arena, dn, "model_optim_rng.pt") : NULL;
                if (!fn)
                    return mf_oom(st, c->iter_dir);
                if (!mf_path_exists(fn))
                    return mf_fail(st, MF_ERR_FORMAT, fn, -1,
                                   "is missing: TP %lld x PP %lld x EP %lld (args) needs rank "
                                   "t=%lld p=%lld e=%lld", (long long)a->tp, (long long)a->pp,
                                   (long long)a->ep, (long long)t, (long long)p, (long long)x);
                mf_model *s = strcmp(fn, f0) == 0 ? s0 : tr_open_torch(c->m, fn, c->flags, st);
                if (!s)
                    return -1;
                c->shards[(t * a->pp + p) * a->ep + x] = s;
                if (!tr_get(tr_root(s), "model"))
                    return mf_fail(st, MF_ERR_FORMAT, fn, -1,
                                   "has no \"model\" state dict%s", tr_get(tr_root(s), "model0")
                                   ? " (virtual pipeline stages model0, model1, ... are not read)"
                                   : "");
            }
    return 0;
}

/* The keys both layouts give (the legacy one's shard 0 and torch_dist's
 * common.pt hold the same checkpoint_version, iteration and args). */
static void describe_common(mg_ctx *c, const pk_obj *root, const char *framework, mf_status *st)
{
    mf_model *m = c->m;
    mf_model_put_meta(m, "train.framework", mf_value_str(m->arena, framework, strlen(framework)), st);
    const pk_obj *v = tr_get(root, "checkpoint_version");
    if (v && v->kind == PK_FLOAT)
        mf_model_put_meta(m, "train.checkpoint_version", mf_value_f64(v->u.f), st);
    int64_t it;
    if (tr_int(tr_get(root, "iteration"), &it))
        mf_model_put_meta(m, "train.step", mf_value_int(it), st);
    mf_model_put_meta(m, "train.tensor_parallel", mf_value_int(c->a.tp), st);
    mf_model_put_meta(m, "train.pipeline_parallel", mf_value_int(c->a.pp), st);
    mf_model_put_meta(m, "train.padded_vocab_size", mf_value_int(c->a.padded), st);
    mf_model_put_meta(m, "train.vocab_size", mf_value_int(c->vocab), st);
}

static void describe(mg_ctx *c, mf_status *st)
{
    mf_model *m = c->m;
    const pk_obj *root = tr_root(c->shards[0]);
    describe_common(c, root, "megatron-lm", st);
    mf_model_put_meta(m, "train.expert_parallel", mf_value_int(c->a.ep), st);
    const pk_obj *o = tr_get(root, "optimizer");
    mf_model_put_meta(m, "train.optimizer_state", mf_value_bool(o && o->kind != PK_NONE), st);
    mf_model_put_meta(m, "train.rng_state", mf_value_bool(tr_get(root, "rng_state") != NULL), st);
    /* shard tensors of the model no rule took (left out; listed for validate) */
    size_t total = 0;
    const char *example = NULL;
    for (size_t s = 0; s < (size_t)(c->a.tp * c->a.pp * c->a.ep); s++)
        for (size_t i = 0; i < c->shards[s]->n_tensors; i++)
            if (!strncmp(c->shards[s]->tensors[i].name, "model.", 6)) {
                total++;
                example = c->shards[s]->tensors[i].name;
            }
    if (total > c->used)
        mf_model_note(m, "%zu tensors of the model shards are not mapped to Hugging Face names "
                         "(e.g. \"%s\")", total - c->used, example ? example : "?");
}

/* ------------------------------------------- torch_dist (Megatron-Core)
 * megatron/core/dist_checkpointing: the iteration folder holds
 * metadata.json {"sharded_backend": "torch_dist"}, common.pt (args,
 * iteration) and a torch.distributed.checkpoint (.metadata, __R_N.distcp)
 * of the model's ShardedTensors by key, each saved as its global tensor:
 * TP splits and pipeline stages are already placed (tensor_parallel's
 * make_tp_sharded_tensor_for_checkpoint, transformer_block.py's layer
 * axis), so a Hugging Face tensor is a box of one of them: homogeneous
 * layers share `decoder.layers.NAME` with a leading layer axis (else
 * `decoder.layers.L.NAME`); fc1 is [W of every TP rank; V of every TP
 * rank] (mlp.py apply_swiglu_sharded_factory); linear_qkv keeps its
 * per-query-group interleaving; the vocabulary keeps its padding. */

static bool is_torch_dist(const char *dir)
{
    mf_arena *a = mf_arena_new();
    char *p = a ? mf_path_join(a, dir, "metadata.json") : NULL;
    bool yes = false;
    if (p && mf_path_exists(p) && !mf_is_dir(p)) {
        mf_status st;
        mf_status_init(&st);
        json_t *j = mf_hf_load_json(p, &st);
        json_t *b = json_object_get(j, "sharded_backend");
        yes = json_is_string(b) && strcmp(json_string_value(b), "torch_dist") == 0;
        json_decref(j);
        mf_status_clear(&st);
    }
    mf_arena_free(a);
    return yes;
}

typedef struct mg_dist {
    mg_ctx *c;
    mf_tensor *v;  /* the checkpoint's tensors by Megatron key (a copy of the table) */
    bool *used;
    size_t n;
    const char *meta; /* .metadata: errors name it */
} mg_dist;

static const mf_tensor *dist_key(mg_dist *d, const char *key)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->v[i].name, key) == 0) {
            d->used[i] = true;
            return &d->v[i];
        }
    return NULL;
}

/* Layer L's `rest`: the shared key with its layer axis (*lead 1), or the
 * layer's own key (*lead 0); an error when neither is there. */
static const mf_tensor *dist_layer(mg_dist *d, int64_t L, const char *rest, int *lead,
                                   bool optional, mf_status *st)
{
    char key[512];
    snprintf(key, sizeof(key), "decoder.layers.%s", rest);
    const mf_tensor *x = dist_key(d, key);
    *lead = x != NULL;
    if (x && (x->ndim < 2 || x->shape[0] != d->c->a.layers))
        return mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "\"%s\": its layer axis is %lld, the "
                       "args say %lld layers", key, (long long)x->shape[0],
                       (long long)d->c->a.layers), NULL;
    if (!x) {
        snprintf(key, sizeof(key), "decoder.layers.%lld.%s", (long long)L, rest);
        x = dist_key(d, key);
    }
    if (!x && !optional)
        mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "holds no \"decoder.layers.%s\" (nor a key of "
                "layer %lld)", rest, (long long)L);
    return x;
}

/* The row axis of src's slab (after the layer axis) must hold `rows`. */
static int dist_rows(mg_dist *d, const mf_tensor *src, int lead, int64_t rows, int64_t width,
                     mf_status *st)
{
    int nd = src->ndim - lead;
    if (nd >= 1 && nd <= 2 && src->shape[lead] == rows && (nd == 1 || src->shape[lead + 1] == width))
        return 0;
    return mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "\"%s\" is %d-dimensional, rows %lld; the "
                   "args say %lld x %lld", src->name, src->ndim,
                   (long long)(src->ndim > lead ? src->shape[lead] : -1), (long long)rows,
                   (long long)width);
}

/* Rows [r0, r0 + nr) of src's slab at the leading indices fix[0..lead)
 * (the layer, then the expert) placed at row `at` of out: one block per
 * chunk they cross (with the leading indices fixed, a chunk's rows are one
 * run of its C-order elements, whatever it spans of the other axes). */
static int take_rows(mg_ctx *c, mf_tensor *out, const mf_tensor *src, int lead, const int64_t *fix,
                     int64_t r0, int64_t nr, int64_t at, mf_status *st)
{
    const tr_tensor *x = src->priv;
    for (size_t i = 0; i < x->n_blocks; i++) {
        const tr_block *b = &x->blocks[i];
        bool inside = true;
        for (int d = 0; d < lead; d++)
            inside = inside && fix[d] >= b->off[d] && fix[d] < b->off[d] + b->size[d];
        if (!inside)
            continue;
        int64_t lo = b->off[lead] > r0 ? b->off[lead] : r0;
        int64_t hi = b->off[lead] + b->size[lead] < r0 + nr ? b->off[lead] + b->size[lead] : r0 + nr;
        if (lo >= hi)
            continue;
        uint64_t row = 1;
        for (int d = lead + 1; d < src->ndim; d++)
            row *= (uint64_t)b->size[d];
        uint64_t lead_ix = 0; /* the fixed indices' position in the chunk, in slabs */
        for (int d = 0; d < lead; d++)
            lead_ix = lead_ix * (uint64_t)b->size[d] + (uint64_t)(fix[d] - b->off[d]);
        uint64_t first = b->from.first + (lead_ix * (uint64_t)b->size[lead] +
                                          (uint64_t)(lo - b->off[lead])) * row;
        tr_block nb = {.from = {b->from.src, b->from.shard, first, (uint64_t)(hi - lo) * row}};
        nb.off[0] = at + lo - r0;
        nb.size[0] = hi - lo;
        for (int d = lead + 1; d < src->ndim; d++) {
            nb.off[d - lead] = b->off[d];
            nb.size[d - lead] = b->size[d];
        }
        if (tr_add_block(c->m, out, &nb, st))
            return -1;
    }
    return 0;
}

/* An output tensor: rows of src's slab (width: its second axis, if any). */
static mf_tensor *dist_out(mg_ctx *c, const char *name, const mf_tensor *src, int lead,
                           int64_t rows, mf_status *st)
{
    return out2(c, name, src->dtype, rows, src->ndim - lead > 1 ? src->shape[lead + 1] : 0, st);
}

/* A whole slab (norms, linear_proj, fc2) or rows [r0, r0 + nr) of it, at
 * the leading indices fix[0..lead). */
static int dist_copy(mg_dist *d, const char *name, const mf_tensor *src, int lead,
                     const int64_t *fix, int64_t r0, int64_t nr, mf_status *st)
{
    mf_tensor *o = dist_out(d->c, name, src, lead, nr, st);
    if (!o || take_rows(d->c, o, src, lead, fix, r0, nr, 0, st))
        return -1;
    return tr_check_cover(d->c->m, o, st);
}

/* linear_qkv (weight or bias) into q, k, v: per query group, its
 * heads/groups query heads, its key head, its value head. */
static int dist_qkv(mg_dist *d, int64_t L, const char *kind, mf_status *st)
{
    const mg_args *a = &d->c->a;
    int64_t qpg = a->heads / a->groups, kv = a->kv, per = (qpg + 2) * kv;
    char rest[64], name[256];
    snprintf(rest, sizeof(rest), "self_attention.linear_qkv.%s", kind);
    int lead;
    bool bias = strcmp(kind, "bias") == 0;
    const mf_tensor *src = dist_layer(d, L, rest, &lead, bias, st);
    if (!src)
        return mf_ok(st) ? 0 : -1;
    if (dist_rows(d, src, lead, a->groups * per, bias ? 0 : a->hidden, st))
        return -1;
    static const char *const part[3] = {"q", "k", "v"};
    for (int j = 0; j < 3; j++) {
        int64_t n = j ? kv : qpg * kv, skip = j == 0 ? 0 : j == 1 ? qpg * kv : (qpg + 1) * kv;
        snprintf(name, sizeof(name), "model.layers.%lld.self_attn.%s_proj.%s", (long long)L,
                 part[j], kind);
        mf_tensor *o = dist_out(d->c, name, src, lead, a->groups * n, st);
        for (int64_t g = 0; o && g < a->groups; g++)
            if (take_rows(d->c, o, src, lead, &L, g * per + skip, n, g * n, st))
                return -1;
        if (!o || tr_check_cover(d->c->m, o, st))
            return -1;
    }
    return 0;
}

/* The experts' key: the layer axis (when shared) and the expert axis of
 * num_experts (experts.py SequentialMLP.sharded_state_dict: the global
 * expert index), then the rows of one expert's weight. */
static const mf_tensor *dist_experts(mg_dist *d, int64_t L, const char *rest, int *lead,
                                     int64_t rows, int64_t width, mf_status *st)
{
    const mf_tensor *x = dist_layer(d, L, rest, lead, false, st);
    if (!x)
        return NULL;
    if (x->ndim != *lead + 3 || x->shape[*lead] != d->c->a.experts) {
        mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "\"%s\": %d-dimensional, expert axis %lld; "
                "the args say %lld experts (an axis after the layer axis)", x->name, x->ndim,
                (long long)(x->ndim > *lead ? x->shape[*lead] : -1), (long long)d->c->a.experts);
        return NULL;
    }
    *lead += 1;
    return dist_rows(d, x, *lead, rows, width, st) ? NULL : x;
}

/* A MoE layer's MLP (Mixtral's names): the router, then per expert w1
 * (fc1's gate half), w2 (fc2), w3 (fc1's up half). */
static int dist_moe(mg_dist *d, int64_t L, mf_status *st)
{
    const mg_args *a = &d->c->a;
    int64_t H = a->hidden, F = a->ffn;
    char name[256];
    int lead, l1, l2;
    const mf_tensor *x = dist_layer(d, L, "mlp.router.weight", &lead, false, st);
    snprintf(name, sizeof(name), "model.layers.%lld.block_sparse_moe.gate.weight", (long long)L);
    if (!x || dist_rows(d, x, lead, a->experts, H, st) ||
        dist_copy(d, name, x, lead, &L, 0, a->experts, st))
        return -1;
    const mf_tensor *f1 = dist_experts(d, L, "mlp.experts.experts.linear_fc1.weight", &l1, 2 * F,
                                       H, st);
    const mf_tensor *f2 = f1 ? dist_experts(d, L, "mlp.experts.experts.linear_fc2.weight", &l2,
                                            H, F, st) : NULL;
    if (!f2)
        return -1;
    for (int64_t E = 0; E < a->experts; E++) {
        int64_t fix1[2] = {l1 == 2 ? L : E, E}, fix2[2] = {l2 == 2 ? L : E, E};
        const int64_t *p1 = l1 == 2 ? fix1 : fix1 + 1, *p2 = l2 == 2 ? fix2 : fix2 + 1;
#define EX(w) (snprintf(name, sizeof(name), "model.layers.%lld.block_sparse_moe.experts.%lld." w \
                        ".weight", (long long)L, (long long)E), name)
        if (dist_copy(d, EX("w1"), f1, l1, p1, 0, F, st) ||
            dist_copy(d, EX("w2"), f2, l2, p2, 0, H, st) ||
            dist_copy(d, EX("w3"), f1, l1, p1, F, F, st))
            return -1;
#undef EX
    }
    return 0;
}

static int dist_layer_all(mg_dist *d, int64_t L, mf_status *st)
{
    const mg_args *a = &d->c->a;
    int64_t H = a->hidden, F = a->ffn;
    char name[256];
    int lead;
    const mf_tensor *x;
#define HF(fmt) (snprintf(name, sizeof(name), "model.layers.%lld." fmt, (long long)L), name)
    /* the norms: fused into the next linear (Transformer Engine) or their own */
    x = dist_layer(d, L, "self_attention.linear_qkv.layer_norm_weight", &lead, true, st);
    if (!x && mf_ok(st))
        x = dist_layer(d, L, "input_layernorm.weight", &lead, false, st);
    if (!x || dist_rows(d, x, lead, H, 0, st) ||
        dist_copy(d, HF("input_layernorm.weight"), x, lead, &L, 0, H, st))
        return -1;
    if (dist_qkv(d, L, "weight", st) || dist_qkv(d, L, "bias", st))
        return -1;
    x = dist_layer(d, L, "self_attention.linear_proj.weight", &lead, false, st);
    if (!x || dist_rows(d, x, lead, H, a->heads * a->kv, st) ||
        dist_copy(d, HF("self_attn.o_proj.weight"), x, lead, &L, 0, H, st))
        return -1;
    x = dist_layer(d, L, "mlp.linear_fc1.layer_norm_weight", &lead, true, st);
    if (!x && mf_ok(st))
        x = dist_layer(d, L, "pre_mlp_layernorm.weight", &lead, false, st);
    if (!x || dist_rows(d, x, lead, H, 0, st) ||
        dist_copy(d, HF("post_attention_layernorm.weight"), x, lead, &L, 0, H, st))
        return -1;
    if (a->experts)
        return dist_moe(d, L, st);
    x = dist_layer(d, L, "mlp.linear_fc1.weight", &lead, false, st);
    if (!x || dist_rows(d, x, lead, 2 * F, H, st) ||
        dist_copy(d, HF("mlp.gate_proj.weight"), x, lead, &L, 0, F, st) ||
        dist_copy(d, HF("mlp.up_proj.weight"), x, lead, &L, F, F, st))
        return -1;
    x = dist_layer(d, L, "mlp.linear_fc2.weight", &lead, false, st);
    if (!x || dist_rows(d, x, lead, H, F, st) ||
        dist_copy(d, HF("mlp.down_proj.weight"), x, lead, &L, 0, H, st))
        return -1;
#undef HF
    return 0;
}

/* Embedding / output layer: the padded rows cut to the vocabulary. */
static int dist_vocab(mg_dist *d, const char *name, const char *key, bool need_it, mf_status *st)
{
    const mf_tensor *x = dist_key(d, key);
    if (!x)
        return need_it ? mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "holds no \"%s\"", key) : 0;
    if (dist_rows(d, x, 0, d->c->a.padded, d->c->a.hidden, st))
        return -1;
    return dist_copy(d, name, x, 0, NULL, 0, d->c->vocab, st);
}

static int dist_map(mg_dist *d, mf_status *st)
{
    const mg_args *a = &d->c->a;
    if (dist_vocab(d, "model.embed_tokens.weight", "embedding.word_embeddings.weight", true, st))
        return -1;
    for (int64_t L = 0; L < a->layers; L++)
        if (dist_layer_all(d, L, st))
            return -1;
    const mf_tensor *x = dist_key(d, "decoder.final_layernorm.weight");
    if (!x)
        return mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "holds no \"decoder.final_layernorm.weight\"");
    if (dist_rows(d, x, 0, a->hidden, 0, st) ||
        dist_copy(d, "model.norm.weight", x, 0, NULL, 0, a->hidden, st))
        return -1;
    return dist_vocab(d, "lm_head.weight", "output_layer.weight", a->untie, st);
}

/* ---------------------------------- the distributed optimizer's fp32 state */

/* Megatron-Core's distributed optimizer (NVIDIA/Megatron-LM 5ab481cb45^,
 * the last commit with flattened ranges: optimizer/distrib_optimizer.py
 * sharded_param_state_fs_model_space) saves `optimizer.state.fp32_param.KEY`
 * as the model's ShardedTensor KEY with a `flattened_range`: the slice of
 * the rank's local chunk (flattened) that its data-parallel shard of the
 * grad buffer holds. strategies/torch.py (type 2) and resharding.py
 * nd_flattened_tensor_reformulated_global_shape put it in DCP as a tensor
 * of [the chunk grid of KEY..., the chunk's element count], each piece a
 * chunk at (chunk index..., start) of (1, ..., 1, stop - start). */
#define FP32_PARAM "optimizer.state.fp32_param."

/* Appends the flat run [s, s + n) of a chunk of shape ls at origin o (its
 * elements from `from`) to u as boxes: at each step the outermost axis
 * whose whole slabs start here and fit, as many of them as fit. */
static int flat_run_boxes(mf_model *m, mf_tensor *u, int nd, const int64_t *ls, const int64_t *o,
                          uint64_t s, uint64_t n, tr_piece from, mf_status *st)
{
    uint64_t stride[MF_MAX_DIMS];
    stride[nd - 1] = 1;
    for (int a = nd - 1; a > 0; a--)
        stride[a - 1] = stride[a] * (uint64_t)ls[a];
    for (uint64_t pos = s, e = s + n; pos < e;) {
        int d = 0;
        while (d < nd - 1 && (pos % stride[d] != 0 || e - pos < stride[d]))
            d++;
        tr_block b = {.from = from};
        uint64_t rest = pos;
        for (int a = 0; a < nd; a++) {
            b.off[a] = o[a] + (int64_t)(rest / stride[a]);
            rest %= stride[a];
            b.size[a] = a < d ? 1 : ls[a];
        }
        int64_t at = b.off[d] - o[d], k = (int64_t)((e - pos) / stride[d]);
        b.size[d] = k < ls[d] - at ? k : ls[d] - at;
        b.from.first = from.first + (pos - s);
        b.from.n = (uint64_t)b.size[d] * stride[d];
        if (tr_add_block(m, u, &b, st))
            return -1;
        pos += b.from.n;
    }
    return 0;
}

/* The flattened entry f (FP32_PARAM + key) as a tensor of the model entry
 * k's shape, appended to the model. Rule: f is k's chunk grid plus one
 * axis of the chunk's element count. */
static int unflatten(mg_dist *d, size_t fi, size_t ki, mf_status *st)
{
    mf_model *m = d->c->m;
    const mf_tensor f = m->tensors[fi], k = m->tensors[ki];
    int nd = k.ndim;
    int64_t ls[MF_MAX_DIMS];
    uint64_t numel = 1;
    bool fits = f.ndim == nd + 1 && nd >= 1;
    for (int a = 0; fits && a < nd; a++) {
        fits = f.shape[a] > 0 && k.shape[a] % f.shape[a] == 0;
        ls[a] = fits ? k.shape[a] / f.shape[a] : 0;
        numel *= (uint64_t)ls[a];
    }
    if (!fits || numel != (uint64_t)f.shape[nd])
        return mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "\"%s\" (%d dimensions, last %lld) is "
                       "not a flattened state of \"%s\" (%d dimensions): the distributed "
                       "optimizer saves the parameter's chunk grid plus one axis of a chunk's "
                       "element count", f.name, f.ndim, (long long)f.shape[f.ndim - 1], k.name,
                       k.ndim);
    mf_tensor *u = tr_add(m, k.name, f.dtype, f.dtype, nd, k.shape, st);
    if (!u)
        return -1;
    const tr_tensor *x = f.priv;
    for (size_t i = 0; i < x->n_blocks; i++) {
        const tr_block *b = &x->blocks[i];
        int64_t o[MF_MAX_DIMS];
        for (int a = 0; a < nd; a++) {
            if (b->size[a] != 1)
                return mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "\"%s\": a chunk spans %lld "
                               "chunks of \"%s\" on dimension %d (a flattened piece lies in "
                               "one chunk)", f.name, (long long)b->size[a], k.name, a);
            o[a] = b->off[a] * ls[a];
        }
        if (b->off[nd] < 0 || b->size[nd] < 0 || b->off[nd] + b->size[nd] > f.shape[nd])
            return mf_fail(st, MF_ERR_FORMAT, d->meta, -1, "\"%s\": a slice [%lld, +%lld) "
                           "reaches past the chunk's %lld elements", f.name,
                           (long long)b->off[nd], (long long)b->size[nd], (long long)f.shape[nd]);
        if (flat_run_boxes(m, u, nd, ls, o, (uint64_t)b->off[nd], (uint64_t)b->size[nd],
                           b->from, st))
            return -1;
    }
    return tr_check_cover(m, u, st);
}

/* The fp32 master weights in place of the module's (unless
 * MF_OPEN_TRAIN_MODULE_STATES): for every KEY with an FP32_PARAM entry,
 * d->v's KEY becomes the unflattened entry. Returns how many. */
static int use_fp32_params(mg_dist *d, size_t n0, mf_status *st)
{
    mf_model *m = d->c->m;
    size_t *pair = malloc(2 * (n0 ? n0 : 1) * sizeof(size_t)), np = 0;
    if (!pair)
        return mf_oom(st, m->path);
    size_t plen = strlen(FP32_PARAM);
    for (size_t i = 0; i < n0; i++) {
        if (strncmp(m->tensors[i].name, FP32_PARAM, plen) != 0)
            continue;
        for (size_t j = 0; j < n0; j++)
            if (strcmp(m->tensors[j].name, m->tensors[i].name + plen) == 0) {
                if (unflatten(d, i, j, st)) {
                    free(pair);
                    return -1;
                }
                pair[2 * np] = i;
                pair[2 * np++ + 1] = j;
                break;
            }
    }
    int rc = 0;
    d->n = m->n_tensors;
    d->v = malloc((d->n ? d->n : 1) * sizeof(*d->v));
    d->used = calloc(d->n ? d->n : 1, 1);
    if (!d->v || !d->used)
        rc = mf_oom(st, m->path);
    else {
        memcpy(d->v, m->tensors, d->n * sizeof(*d->v));
        for (size_t p = 0; p < np; p++) { /* KEY's slot takes the unflattened tensor */
            size_t u = n0 + p;
            d->v[pair[2 * p + 1]] = d->v[u];
            d->used[u] = d->used[pair[2 * p]] = true;
        }
    }
    free(pair);
    return rc ? rc : (int)np;
}

/* Megatron-Core's singleton_local_shards layout (the content_metadata
 * flag in common.pt, training.py _build_sharded_state_dict_metadata): a
 * SwiGLU fc1 is saved as two keys, KEY_w and KEY_v, each over the TP
 * shards alone (mlp.py apply_swiglu_sharded_factory), and experts one key
 * each, "experts.E." without an expert axis (experts.py, TEGroupedMLP /
 * SequentialMLP sharded_state_dict). The maps below read the one-key
 * layouts only, so the other is refused by name rather than half read. */
static int refuse_singleton_local_shards(mg_ctx *c, const pk_obj *root, const char *common,
                                         const char *meta, mf_status *st)
{
    const pk_obj *cm = tr_get(root, "content_metadata");
    const pk_obj *flag = cm && cm->kind == PK_DICT ? tr_get(cm, "singleton_local_shards") : NULL;
    if (flag && flag->kind == PK_BOOL && flag->u.b)
        return mf_fail(st, MF_ERR_UNSUPPORTED, common, -1,
                       "content_metadata.singleton_local_shards is True: Megatron-Core's per-expert "
                       "keys and split SwiGLU keys (KEY_w, KEY_v) are not read; save with "
                       "singleton_local_shards off or convert with Megatron-LM's own tools");
    for (size_t i = 0; i < c->m->n_tensors; i++) {
        const char *k = c->m->tensors[i].name;
        size_t n = strlen(k);
        bool wv = n > 2 && k[n - 2] == '_' && (k[n - 1] == 'w' || k[n - 1] == 'v') &&
                  strstr(k, "linear_fc1.");
        bool per_expert = false; /* "experts.E." anywhere ("experts.experts.E." too) */
        for (const char *e = strstr(k, "experts."); e && !per_expert; e = strstr(e + 1, "experts."))
            per_expert = e[8] >= '0' && e[8] <= '9';
        if (wv || per_expert)
            return mf_fail(st, MF_ERR_UNSUPPORTED, meta ? meta : common, -1,
                           "key \"%s\" is Megatron-Core's singleton_local_shards layout (%s), "
                           "which is not read", k,
                           wv ? "a SwiGLU half saved alone" : "an expert saved alone");
    }
    return 0;
}

static int open_torch_dist(mg_ctx *c, const char *path, const char *tag, mf_status *st)
{
    mf_model *m = c->m;
    snprintf(m->version, sizeof(m->version), "Megatron-Core torch_dist%s%.30s", *tag ? " " : "", tag);
    const char *common = mf_path_join(m->arena, c->iter_dir, "common.pt");
    mf_model *s = common ? tr_open_torch(m, common, c->flags, st) : NULL;
    if (!s)
        return common ? -1 : mf_oom(st, path);
    if (read_args(c, tr_root(s), common, st))
        return -1;
    read_config(c, path, st);
    if (!mf_ok(st) || tr_dcp_load(m, c->iter_dir, true, st))
        return -1;
    mg_dist d = {.c = c};
    d.meta = mf_path_join(m->arena, c->iter_dir, ".metadata");
    if (refuse_singleton_local_shards(c, tr_root(s), common, d.meta, st))
        return -1;
    size_t n0 = m->n_tensors;
    int fp32 = !d.meta ? mf_oom(st, path)
               : use_fp32_params(&d, (c->flags & MF_OPEN_TRAIN_MODULE_STATES) ? 0 : n0, st);
    int rc = fp32 < 0 ? -1 : 0;
    if (rc == 0) {
        m->n_tensors = 0; /* the Megatron keys give way to the Hugging Face names */
        rc = dist_map(&d, st);
    }
    size_t left = 0;
    const char *example = NULL;
    for (size_t i = 0; rc == 0 && i < d.n; i++)
        if (!d.used[i])
            left++, example = d.v[i].name;
    if (left)
        mf_model_note(m, "%zu tensors of the checkpoint are not mapped to Hugging Face names "
                         "(e.g. \"%s\")", left, example);
    free(d.v);
    free(d.used);
    if (rc)
        return -1;
    describe_common(c, tr_root(s), "megatron-core torch_dist", st);
    size_t from_module = 0;
    for (size_t i = 0; fp32 > 0 && i < m->n_tensors; i++)
        from_module += m->tensors[i].dtype != MF_F32;
    if (from_module)
        mf_model_note(m, "%zu tensors have no fp32 master weights: taken from the module states",
                      from_module);
    const char *src = fp32 > 0 ? "fp32 master weights (distributed optimizer)" : "module states";
    mf_model_put_meta(m, "train.source", mf_value_str(m->arena, src, strlen(src)), st);
    return mf_ok(st) ? 0 : -1;
}

static int open_megatron(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    mg_ctx c = {.m = m, .flags = flags};
    char tag[64];
    c.iter_dir = iteration_dir(m->arena, path, tag, sizeof(tag));
    if (!c.iter_dir)
        return mf_fail(st, MF_ERR_FORMAT, path, -1,
                       "no mp_rank_* folders (nor a torch_dist metadata.json) here nor in the "
                       "iteration latest_checkpointed_iteration.txt names");
    if (!tr_state_of(m))
        return mf_oom(st, path);
    if (is_torch_dist(c.iter_dir))
        return open_torch_dist(&c, path, tag, st);
    snprintf(m->version, sizeof(m->version), "Megatron-LM %.40s", tag);
    if (open_shards(&c, st))
        return -1;
    read_config(&c, path, st);
    if (!mf_ok(st))
        return -1;
    const mg_args *a = &c.a;
    if (vocab_rows(&c, "model.embed_tokens.weight", "embedding.word_embeddings.weight", 0, st))
        return -1;
    for (int64_t L = 0; L < a->layers; L++)
        if (add_layer(&c, L, st))
            return -1;
    if (replicated(&c, "model.norm.weight", "decoder.final_layernorm.weight", a->pp - 1,
                   a->hidden, 0, st))
        return -1;
    if (a->untie &&
        vocab_rows(&c, "lm_head.weight", "output_layer.weight", a->pp - 1, st))
        return -1;
    describe(&c, st);
    return mf_ok(st) ? 0 : -1;
}

const mf_reader mf_reader_megatron = {
    .format = MF_FMT_MEGATRON,
    .name = "megatron",
    .probe_dir = probe_megatron,
    .open = open_megatron,
    .stream = tr_stream,
    .file_runs = tr_file_runs,
    .close = tr_dcp_close, /* the torch_dist .metadata's machine too */
};
