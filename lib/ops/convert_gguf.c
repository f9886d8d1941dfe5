/* convert_gguf.c - Hugging Face directory -> GGUF, as llama.cpp's
 * convert_hf_to_gguf.py (c392e509, gguf-py 0.15.0) writes it, for the
 * architectures of the table in convert_arch.c:
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
 *  - keys: general.* (hf_general.c), the architecture's hyper-parameters,
 *    tokenizer (convert_vocab.c), in the converter's order.
 * Every output tensor is a list of source tensors read as one sequence of
 * rows, an optional row map (permutations, splits, re-orders), an optional
 * transpose and an element-wise op. It streams: tensors are produced row
 * chunk by row chunk into mf_gguf_write (atomic output) and each source's
 * mapped pages are dropped once its output tensor is written, so the
 * resident set stays near one tensor. A llama-quantize mix (Q4_K_M ...)
 * quantizes the F16 conversion's values in the same pass. */
#include "formats/formats.h"
#include "ops/convert_arch.h"
#include "ops/llama_load.h"
#include "ops/quant_mix.h"
#include "ops/tensor_f32.h"
#include "quant/quant.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* ------------------------------------------------------------ tensors */

typedef struct seg {
    const mf_model *part;
    const mf_tensor *t;
} seg;

typedef struct out_tensor {
    char *name;
    mf_dtype dtype;              /* written */
    mf_dtype plan;               /* the type of the plain conversion (before a mix) */
    int ndim;
    int64_t shape[MF_MAX_DIMS];  /* C order */
    seg *segs;                   /* sources, read as one sequence of rows */
    size_t n_segs;
    int64_t row_len;             /* elements per row */
    int64_t *row_map;            /* output row -> source row; NULL: the same */
    bool transpose;              /* a 2-d source read column by column */
    conv_op ew;                  /* OP_ADD_ONE, OP_NEG_EXP, or OP_SKIP for none */
    float *generated;            /* values of a generated tensor */
} out_tensor;

/* Parts of a stacked tensor collected per block (OP_STACK). */
typedef struct pending {
    const conv_rule *rule;
    int64_t bid;
    char **names;
    seg *segs;
    size_t n, cap;
} pending;

typedef struct conv {
    const char *dir;
    json_t *cfg;
    const conv_arch *arch;
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
    pending *pend;
    size_t n_pend, cap_pend;
    mf_kvlist *kv;
    mf_convert_gguf_opts opts;   /* the caller's, over the defaults */
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

/* ------------------------------------------------------- value coding */

/* numpy's half -> float for every half, built once (the conversion of
 * F16 sources is a table lookup). */
static float f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void f16_table_init(void)
{
    for (uint32_t h = 0; h < 65536; h++)
        f16_table[h] = mf_f16_to_f32_numpy((uint16_t)h);
}

/* Source elements as float32 (torch's .to(torch.float32)); halves as
 * numpy reads them (NaN payloads kept). */
static void row_to_f32(mf_dtype dt, const uint8_t *p, size_t n, float *out)
{
    size_t i;
    switch (dt) {
    case MF_F32: memcpy(out, p, n * 4); return;
    case MF_F16:
        pthread_once(&f16_once, f16_table_init);
        for (i = 0; i < n; i++)
            out[i] = f16_table[mf_rd16le(p + 2 * i)];
        return;
    default: /* the other types as tensor_f32.c reads them */
        if (mf_convert_to_f32(dt, p, out, n))
            memset(out, 0, n * sizeof(*out));
    }
}

/* TensorNameMap.get_name(name, try_suffixes=(".weight", ".bias")): the
 * name itself, else without the suffix (which is put back). */
static char *map_name(const conv *c, const char *name)
{
    static const char *const suffixes[] = {"", ".weight", ".bias"};
    size_t n = strlen(name);
    uint32_t bit = 1u << c->arch->bit;
    for (size_t s = 0; s < 3; s++) {
        size_t sl = strlen(suffixes[s]);
        if (n < sl || strcmp(name + n - sl, suffixes[s]))
            continue;
        for (size_t i = 0; i < conv_n_names; i++) {
            int64_t bid = -1;
            if (!(conv_names[i].archs & bit) ||
                !match_pattern(conv_names[i].hf, name, n - sl, c->block_count, &bid))
                continue;
            const char *g = conv_names[i].gguf, *ph = strstr(g, "{bid}");
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

/* The first all-digit part of a dotted name (prepare_tensors' bid), or -1. */
static int64_t name_bid(const char *name)
{
    for (const char *p = name; *p;) {
        const char *e = strchr(p, '.');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        bool digits = l > 0 && l < 10;
        for (size_t i = 0; digits && i < l; i++)
            digits = p[i] >= '0' && p[i] <= '9';
        if (digits)
            return strtoll(p, NULL, 10);
        p += l + (e ? 1 : 0);
        if (!e)
            break;
    }
    return -1;
}

static bool rule_matches(const conv *c, const conv_rule *r, const char *name)
{
    size_t n = strlen(name), k = strlen(r->pat);
    switch (r->m) {
    case M_SUFFIX: return ends_with(name, r->pat);
    case M_EXACT: return !strcmp(name, r->pat);
    case M_CONTAINS: return strstr(name, r->pat) != NULL;
    case M_PREFIX: return n >= k && !strncmp(name, r->pat, k);
    case M_LAYER_BEYOND:
        if (n <= k || strncmp(name, r->pat, k) || name[k] < '0' || name[k] > '9')
            return false;
        return strtoll(name + k, NULL, 10) >= c->block_count;
    }
    return false;
}

/* The rule's matched part replaced by r->with (malloc'd). */
static char *rename_by(const conv_rule *r, const char *name)
{
    size_t n = strlen(name), k = strlen(r->pat), w = strlen(r->with);
    char *out = malloc(n + w + 1);
    if (!out)
        return NULL;
    const char *at = r->m == M_PREFIX ? name : r->m == M_SUFFIX ? name + n - k : strstr(name, r->pat);
    size_t pre = (size_t)(at - name);
    memcpy(out, name, pre);
    memcpy(out + pre, r->with, w);
    strcpy(out + pre + w, at + k);
    return out;
}

/* ------------------------------------------------------- output types */

static bool is_block_tensor(const char *name, const char *kind)
{
    if (strncmp(name, "blk.", 4))
        return false;
    const char *p = name + 4;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > name + 4 && *p == '.' && !strcmp(p + 1, kind);
}

/* prepare_tensors: the types "always in float32", else the output type. */
static mf_dtype tensor_type(const conv *c, const char *new_name, int ndim, int64_t row)
{
    if (ndim <= 1 || ends_with(new_name, "_norm.weight") || !ends_with(new_name, ".weight") ||
        is_block_tensor(new_name, "ffn_gate_inp.weight") || !strcmp(new_name, "position_embd.weight") ||
        !strcmp(new_name, "token_types.weight") || is_block_tensor(new_name, "ssm_conv1d.weight"))
        return MF_F32;
    mf_dtype t = c->qtype;
    const mf_dtype_info *di = mf_dtype_info_of(t);
    if (di && di->block_elems > 1 && row % di->block_elems) /* QuantError: fall back to F16 */
        t = MF_F16;
    return t;
}

static void free_out(out_tensor *o)
{
    free(o->name);
    free(o->segs);
    free(o->row_map);
    free(o->generated);
}

static int64_t numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

/* Adds o (taking its allocations, also on failure). */
static int add_out(conv *c, out_tensor *o)
{
    for (size_t i = 0; i < c->n_out; i++)
        if (!strcmp(c->out[i].name, o->name)) {
            int rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "duplicated tensor name \"%s\"", o->name);
            free_out(o);
            return rc;
        }
    if (c->n_out == c->cap_out && mf_vec_grow((void **)&c->out, &c->cap_out, c->n_out + 1, sizeof(*o))) {
        free_out(o);
        return mf_oom(c->st, c->dir);
    }
    if (!o->row_len)
        o->row_len = o->ndim ? o->shape[o->ndim - 1] : 1;
    o->plan = o->dtype = tensor_type(c, o->name, o->ndim, o->row_len);
    c->out[c->n_out++] = *o;
    return 0;
}

static int add_generated(conv *c, const char *name, const double *v, size_t n)
{
    out_tensor o = {.ndim = 1, .shape = {(int64_t)n}, .ew = OP_SKIP};
    o.name = strdup(name);
    o.generated = malloc((n ? n : 1) * sizeof(float));
    if (!o.name || !o.generated) {
        free_out(&o);
        return mf_oom(c->st, c->dir);
    }
    for (size_t i = 0; i < n; i++)
        o.generated[i] = (float)v[i];
    return add_out(c, &o);
}

/* ------------------------------------------------------- row maps */

/* LlamaModel.permute: rows viewed as [heads][2][half] are read as
 * [heads][half][2]. Output row r takes source row permute_row(r). */
static int64_t permute_row(int64_t r, int64_t rows, int64_t heads)
{
    int64_t per_head = rows / heads, half = per_head / 2;
    int64_t h = r / per_head, k = r % per_head, i = k / 2, j = k % 2;
    return h * per_head + j * half + i;
}

static int need_hp_int(const conv *c, const char *key, int64_t *out)
{
    json_t *v = hparam(c, key);
    if (!v)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s", key);
    if (need_int(c, v, key, out))
        return -1;
    if (*out <= 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s must be positive", key);
    return 0;
}

/* The head count permute() uses for q (k: n_head_kv when it differs). */
static int permute_heads(const conv *c, bool k, int64_t *heads)
{
    int64_t n_head, n_kv;
    if (head_counts(c, &n_head, &n_kv))
        return -1;
    *heads = k && n_kv && n_kv != n_head ? n_kv : n_head;
    return 0;
}

static int64_t *alloc_map(conv *c, int64_t n)
{
    int64_t *m = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!m)
        mf_oom(c->st, c->dir);
    return m;
}

/* Applies permute() on top of an existing row map (or the identity). */
static int add_permute(conv *c, out_tensor *o, int64_t rows, int64_t heads, const char *src)
{
    if (heads <= 0 || rows % (heads * 2))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                       "tensor \"%s\": %lld rows do not split into %lld heads of row pairs", src,
                       (long long)rows, (long long)heads);
    int64_t *m = alloc_map(c, rows);
    if (!m)
        return -1;
    for (int64_t r = 0; r < rows; r++) {
        int64_t s = permute_row(r, rows, heads);
        m[r] = o->row_map ? o->row_map[s] : s;
    }
    free(o->row_map);
    o->row_map = m;
    return 0;
}

/* ------------------------------------------------------------- plan */

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

static int one_seg(conv *c, out_tensor *o, const mf_model *part, const mf_tensor *t)
{
    o->segs = malloc(sizeof(seg));
    if (!o->segs)
        return mf_oom(c->st, c->dir);
    o->segs[0] = (seg){part, t};
    o->n_segs = 1;
    return 0;
}

/* Rows of a 2-d (or 1-d: elements) tensor and their length. */
static void rows_of(const mf_tensor *t, int64_t *rows, int64_t *len)
{
    *rows = t->ndim ? t->shape[0] : 1;
    *len = t->ndim ? numel(t->shape, t->ndim) / (*rows ? *rows : 1) : 1;
}

/* One or three output tensors from a fused qkv (GPT-NeoX, Falcon, InternLM2). */
static int plan_qkv(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t,
                    const char *name, int64_t bid)
{
    int64_t n_head, n_kv = 0, hidden, rows, len;
    if (need_hp_int(c, r->op == OP_QKV_PER_HEAD && hparam(c, "n_head") ? "n_head" : "num_attention_heads", &n_head) ||
        need_hp_int(c, hparam(c, "hidden_size") ? "hidden_size" : "n_embed", &hidden))
        return -1;
    if (r->op == OP_QKV_KV_GROUPS) {
        json_t *kv = hparam(c, "num_kv_heads");
        if (!kv || json_is_null(kv))
            kv = hparam(c, "n_head_kv");
        if (kv && !json_is_null(kv) && need_int(c, kv, "num_kv_heads", &n_kv))
            return -1;
        if (n_kv == 0)
            n_kv = 1; /* "or 1" */
    } else if (r->op == OP_QKV_GROUPED && need_hp_int(c, "num_key_value_heads", &n_kv)) {
        return -1;
    }
    rows_of(t, &rows, &len);
    int64_t hd = hidden / n_head;
    bool bias = t->ndim == 1;
    if (t->ndim > 2 || hd <= 0 || (n_kv && (n_head % n_kv)) || (bias && r->op != OP_QKV_PER_HEAD))
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": cannot split a fused qkv of "
                       "shape %lld x %lld with %lld heads", name, (long long)rows, (long long)len, (long long)n_head);
    int64_t q_per = n_kv ? n_head / n_kv : 0;
    int64_t want = r->op == OP_QKV_PER_HEAD ? 3 * n_head * hd : n_kv * (q_per + 2) * hd;
    if (rows != want || (!bias && len != hidden))
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1,
                       "tensor \"%s\": %lld rows, the fused qkv of %lld heads (%lld kv) of %lld needs %lld",
                       name, (long long)rows, (long long)n_head, (long long)n_kv, (long long)hd, (long long)want);
    if (r->op != OP_QKV_GROUPED) {
        out_tensor o = {.ndim = t->ndim, .ew = OP_SKIP};
        memcpy(o.shape, t->shape, sizeof(o.shape));
        if (bias)
            o.row_len = 1;
        o.name = map_name(c, name);
        if (!o.name)
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", name);
        if (one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, rows))) {
            free_out(&o);
            return -1;
        }
        int64_t k = 0;
        if (r->op == OP_QKV_PER_HEAD) { /* [n_head][3][hd] -> [3][n_head][hd] */
            for (int64_t p = 0; p < 3; p++)
                for (int64_t h = 0; h < n_head; h++)
                    for (int64_t d = 0; d < hd; d++)
                        o.row_map[k++] = (h * 3 + p) * hd + d;
        } else { /* [kv][q_per + 2][hd] -> all q heads, then k, then v */
            for (int64_t g = 0; g < n_kv; g++)
                for (int64_t j = 0; j < q_per; j++)
                    for (int64_t d = 0; d < hd; d++)
                        o.row_map[k++] = (g * (q_per + 2) + j) * hd + d;
            for (int64_t p = q_per; p < q_per + 2; p++)
                for (int64_t g = 0; g < n_kv; g++)
                    for (int64_t d = 0; d < hd; d++)
                        o.row_map[k++] = (g * (q_per + 2) + p) * hd + d;
        }
        return add_out(c, &o);
    }
    /* InternLM2: [groups][q_per + 2][hd] rows to q, k, v; q and k permuted */
    static const char *const kinds[] = {"attn_q", "attn_k", "attn_v"};
    for (int p = 0; p < 3; p++) {
        int64_t per = p == 0 ? q_per : 1, out_rows = n_kv * per * hd;
        int64_t first = p == 0 ? 0 : q_per + p - 1; /* the group's first row block of this part */
        out_tensor o = {.ndim = 2, .shape = {out_rows, len}, .ew = OP_SKIP};
        o.name = malloc(64);
        if (!o.name || one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, out_rows))) {
            bool oom = !o.name;
            free_out(&o);
            return oom ? mf_oom(c->st, c->dir) : -1;
        }
        snprintf(o.name, 64, "blk.%lld.%s.weight", (long long)bid, kinds[p]);
        int64_t k = 0;
        for (int64_t g = 0; g < n_kv; g++)
            for (int64_t j = 0; j < per; j++)
                for (int64_t d = 0; d < hd; d++)
                    o.row_map[k++] = (g * (q_per + 2) + first + j) * hd + d;
        /* permute(q, n_head, n_head); permute(k, n_head, n_kv): n_kv heads */
        if (p < 2 && add_permute(c, &o, out_rows, p == 0 ? n_head : n_kv, name)) {
            free_out(&o);
            return -1;
        }
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* Stacks the block's collected parts when all arrived (OP_STACK). */
static int plan_stack(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t,
                      const char *name, int64_t bid)
{
    if (bid < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": no block number", name);
    int64_t count;
    if (need_hp_int(c, r->count_key, &count))
        return -1;
    pending *p = NULL;
    for (size_t i = 0; i < c->n_pend && !p; i++)
        if (c->pend[i].rule == r && c->pend[i].bid == bid)
            p = &c->pend[i];
    if (!p) {
        if (c->n_pend == c->cap_pend && mf_vec_grow((void **)&c->pend, &c->cap_pend, c->n_pend + 1, sizeof(pending)))
            return mf_oom(c->st, c->dir);
        p = &c->pend[c->n_pend++];
        *p = (pending){.rule = r, .bid = bid};
    }
    if (p->n == p->cap) {
        size_t cap = p->cap;
        if (mf_vec_grow((void **)&p->names, &cap, p->n + 1, sizeof(char *)))
            return mf_oom(c->st, c->dir);
        seg *grown = realloc(p->segs, cap * sizeof(seg));
        if (!grown)
            return mf_oom(c->st, c->dir);
        p->segs = grown;
        p->cap = cap;
    }
    if (!(p->names[p->n] = strdup(name)))
        return mf_oom(c->st, c->dir);
    p->segs[p->n++] = (seg){part, t};
    size_t n_ws = 0;
    while (r->ws[n_ws])
        n_ws++;
    if ((int64_t)p->n < count * (int64_t)n_ws)
        return 0;
    for (size_t w = 0; w < n_ws; w++) {
        out_tensor o = {.ew = OP_SKIP};
        o.segs = calloc((size_t)count, sizeof(seg));
        if (!o.segs)
            return mf_oom(c->st, c->dir);
        o.n_segs = (size_t)count;
        char want[512], merged[512];
        for (int64_t x = 0; x < count; x++) {
            char *d = want;
            for (const char *f = r->part_fmt; *f && d < want + sizeof(want) - 32; f++) {
                if (f[0] == '%' && (f[1] == 'b' || f[1] == 'x' || f[1] == 'w')) {
                    d += f[1] == 'w' ? sprintf(d, "%s", r->ws[w]) : sprintf(d, "%lld", (long long)(f[1] == 'b' ? bid : x));
                    f++;
                } else {
                    *d++ = *f;
                }
            }
            *d = 0;
            size_t k = 0;
            while (k < p->n && (!p->names[k] || strcmp(p->names[k], want)))
                k++;
            if (k == p->n) {
                free_out(&o);
                return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1,
                               "block %lld: the %lld parts to stack have no \"%s\"", (long long)bid,
                               (long long)count, want);
            }
            o.segs[x] = p->segs[k];
            free(p->names[k]);
            p->names[k] = NULL;
            const mf_tensor *s0 = o.segs[0].t, *sx = o.segs[x].t;
            if (sx->ndim != s0->ndim || memcmp(sx->shape, s0->shape, sizeof(int64_t) * (size_t)s0->ndim)) {
                free_out(&o);
                return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "\"%s\": parts to stack differ in shape", want);
            }
        }
        const mf_tensor *s0 = o.segs[0].t;
        if (s0->ndim + 1 > 4) {
            free_out(&o);
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "\"%s\": stacked, more than 4 dimensions", want);
        }
        o.ndim = s0->ndim + 1;
        o.shape[0] = count;
        memcpy(o.shape + 1, s0->shape, sizeof(int64_t) * (size_t)s0->ndim);
        char *d = merged;
        for (const char *f = r->merged_fmt; *f && d < merged + sizeof(merged) - 32; f++) {
            if (f[0] == '%' && (f[1] == 'b' || f[1] == 'w')) {
                d += f[1] == 'w' ? sprintf(d, "%s", r->ws[w]) : sprintf(d, "%lld", (long long)bid);
                f++;
            } else {
                *d++ = *f;
            }
        }
        *d = 0;
        o.name = map_name(c, merged);
        if (!o.name) {
            free_out(&o);
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", merged);
        }
        if (add_out(c, &o))
            return -1;
    }
    size_t keep = 0; /* parts beyond the stack stay pending (an error at the end) */
    for (size_t k = 0; k < p->n; k++)
        if (p->names[k]) {
            p->names[keep] = p->names[k];
            p->segs[keep++] = p->segs[k];
        }
    p->n = keep;
    return 0;
}

/* torch.equal of two tensors' values (Mamba's tied output check). */
static bool same_values(const conv *c, const out_tensor *a, const mf_model *part, const mf_tensor *t);

static int plan_tensor(conv *c, const mf_model *part, const mf_tensor *t)
{
    if (ends_with(t->name, ".attention.masked_bias") || ends_with(t->name, ".attention.bias") ||
        ends_with(t->name, ".rotary_emb.inv_freq"))
        return 0; /* "we don't need these" */
    if (!dtype_convertible(t->dtype))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1,
                       "tensor \"%s\": %s values cannot be converted", t->name, mf_dtype_name(t->dtype));
    if (t->ndim > 4)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1,
                       "tensor \"%s\": %d dimensions (GGUF holds at most 4)", t->name, t->ndim);
    int64_t bid = name_bid(t->name);
    char *name = strdup(t->name);
    if (!name)
        return mf_oom(c->st, c->dir);
    out_tensor o = {.ndim = t->ndim, .ew = OP_SKIP};
    memcpy(o.shape, t->shape, sizeof(o.shape));
    int permute = 0, rc = 0;
    const conv_rule *after_map = NULL;
    for (const conv_rule *r = c->arch->rules; r->pat; r++) {
        if (r->op == OP_ALSO_OUTPUT || r->op == OP_DROP_IF_EMBD) {
            after_map = r;
            continue;
        }
        if (!rule_matches(c, r, name))
            continue;
        switch (r->op) {
        case OP_RENAME: {
            char *n2 = rename_by(r, name);
            free(name);
            if (!(name = n2))
                return mf_oom(c->st, c->dir);
            continue;
        }
        case OP_SKIP: free(name); return 0;
        case OP_PERMUTE_Q: case OP_PERMUTE_K: permute = r->op; continue;
        case OP_ADD_ONE: case OP_NEG_EXP: o.ew = r->op; continue;
        case OP_TRANSPOSE: o.transpose = true; continue;
        case OP_STACK: rc = plan_stack(c, r, part, t, name, bid); free(name); return rc;
        default: rc = plan_qkv(c, r, part, t, name, bid); free(name); return rc;
        }
    }
    if (o.transpose) {
        if (t->ndim != 2) {
            rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": a transpose needs 2 dimensions", name);
            free(name);
            return rc;
        }
        o.shape[0] = t->shape[1];
        o.shape[1] = t->shape[0];
    }
    o.name = map_name(c, name);
    if (!o.name) {
        rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", name);
        free(name);
        return rc;
    }
    if (permute) {
        int64_t heads, rows, len;
        rows_of(t, &rows, &len);
        if (t->ndim == 1)
            o.row_len = 1; /* a bias: its elements are the rows permuted */
        if (t->ndim < 1) {
            rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": a scalar cannot be permuted", name);
        } else if (permute_heads(c, permute == OP_PERMUTE_K, &heads) || add_permute(c, &o, rows, heads, name)) {
            rc = -1;
        }
        if (rc) {
            free(name);
            free_out(&o);
            return -1;
        }
    }
    free(name);
    if (after_map && after_map->op == OP_DROP_IF_EMBD && !strcmp(o.name, after_map->pat)) {
        for (size_t i = 0; i < c->n_out; i++)
            if (!strcmp(c->out[i].name, "token_embd.weight") && same_values(c, &c->out[i], part, t)) {
                free_out(&o);
                return 0; /* "equivalent to token_embd.weight, omitting" */
            }
    }
    if (one_seg(c, &o, part, t)) {
        free_out(&o);
        return -1;
    }
    bool dup = after_map && after_map->op == OP_ALSO_OUTPUT && !strcmp(o.name, after_map->pat);
    out_tensor copy = o;
    if (add_out(c, &o))
        return -1;
    if (!dup)
        return 0;
    copy.name = strdup("output.weight");
    copy.segs = malloc(sizeof(seg));
    copy.row_map = NULL;
    if (!copy.name || !copy.segs) {
        free_out(&copy);
        return mf_oom(c->st, c->dir);
    }
    copy.segs[0] = (seg){part, t};
    return add_out(c, &copy);
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
    double *vals = malloc(n * sizeof(double));
    if (!vals)
        return mf_oom(c->st, c->dir);
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
        vals[i] = v;
    }
    int rc = add_generated(c, "rope_freqs.weight", vals, n);
    free(vals);
    return rc;
}

/* Phi3MiniModel.generate_extra_tensors: LongRoPE factors and the attention
 * factor (written before the other keys, as the converter does). */
static int longrope_tensors(conv *c)
{
    json_t *rs = hparam(c, "rope_scaling");
    if (!rs || json_is_null(rs))
        return 0;
    static const char *const emb[] = {"hidden_size", "n_embd", NULL}, *const heads[] = {"num_attention_heads", "n_head", NULL},
                             *const maxp[] = {"n_positions", "max_position_embeddings", NULL};
    int64_t n_embd, n_head, max_pos, orig;
    json_t *o = hparam(c, "original_max_position_embeddings");
    if (need_int(c, find_hparam(c, emb), "hidden_size", &n_embd) || need_int(c, find_hparam(c, heads), "num_attention_heads", &n_head) ||
        need_int(c, find_hparam(c, maxp), "max_position_embeddings", &max_pos) ||
        need_int(c, o, "original_max_position_embeddings", &orig))
        return -1;
    if (n_head <= 0 || orig <= 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json head count and original context must be positive");
    const char *type = json_string_value(json_object_get(rs, "type"));
    if (!type || !*type)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json: missing the required key rope_scaling.type");
    double scale = (double)max_pos / (double)orig, attn;
    if (!strcasecmp(type, "su") || !strcasecmp(type, "longrope"))
        attn = scale > 1.0 ? sqrt(1 + log(scale) / log((double)orig)) : 1.0;
    else if (!strcasecmp(type, "yarn"))
        attn = scale > 1.0 ? 0.1 * log(scale) + 1.0 : 1.0;
    else
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "rope scaling type %s is not supported", type);
    char key[128];
    snprintf(key, sizeof(key), "%s.rope.scaling.attn_factor", c->arch->name);
    mf_kv_f32(c->kv, key, (float)attn);
    json_t *lf = json_object_get(rs, "long_factor"), *sf = json_object_get(rs, "short_factor");
    if (!json_is_array(lf) || !json_is_array(sf))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                       "config.json: missing the required key rope_scaling.long_factor or short_factor");
    int64_t rope_dims = n_embd / n_head;
    if (json_array_size(lf) != json_array_size(sf) || (double)json_array_size(lf) != (double)rope_dims / 2)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "the length of rope long and short factors must be %g",
                       (double)rope_dims / 2);
    size_t n = json_array_size(lf);
    double *v = malloc((n ? n : 1) * sizeof(double));
    if (!v)
        return mf_oom(c->st, c->dir);
    int rc = 0;
    for (int which = 0; rc == 0 && which < 2; which++) {
        json_t *a = which ? sf : lf;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (!json_is_number(json_array_get(a, i)))
                rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json rope_scaling factors must be numbers");
            v[i] = json_number_value(json_array_get(a, i));
        }
        if (rc == 0)
            rc = add_generated(c, which ? "rope_factors_short.weight" : "rope_factors_long.weight", v, n);
    }
    free(v);
    return rc;
}

static int plan_tensors(conv *c)
{
    if ((c->arch->flags & AF_LLAMA3_ROPE) && llama3_rope_freqs(c))
        return -1;
    if ((c->arch->flags & AF_LONGROPE) && longrope_tensors(c))
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
    for (size_t i = 0; i < c->n_pend; i++)
        for (size_t k = 0; k < c->pend[i].n; k++)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "unprocessed tensor \"%s\": its block's parts "
                           "to stack are incomplete", c->pend[i].names[k]);
    return check_index(c);
}

/* ------------------------------------------------------------ metadata */

/* A value computed by the converter ("@NAME"); a new reference, NULL with
 * st unset when there is none. */
static json_t *computed(conv *c, const char *name)
{
    int64_t a, b, d;
    json_t *v;
    if (!strcmp(name, "block_count"))
        return json_integer(c->block_count);
    if (!strcmp(name, "file_type"))
        return json_integer(c->ftype);
    if (!strcmp(name, "rope_dim_llama")) { /* head_dim, else hidden_size // num_attention_heads */
        if ((v = hparam(c, "head_dim")))
            return json_incref(v);
        if (need_hp_int(c, "hidden_size", &a) || need_hp_int(c, "num_attention_heads", &b))
            return NULL;
        return json_integer(a / b);
    }
    if (!strcmp(name, "head_dim_embd")) { /* n_embd // n_head */
        if (need_hp_int(c, hparam(c, "hidden_size") ? "hidden_size" : "n_embd", &a) ||
            need_hp_int(c, hparam(c, "num_attention_heads") ? "num_attention_heads" : "n_head", &b))
            return NULL;
        return json_integer(a / b);
    }
    if (!strcmp(name, "rope_dim_phi2") || !strcmp(name, "rope_dim_partial") || !strcmp(name, "rope_dim_neox")) {
        /* phi2: int(pct * n_embd) // n_head; others: int(pct * (n_embd // n_head)) */
        bool phi2 = !strcmp(name, "rope_dim_phi2");
        const char *pk = phi2 ? "partial_rotary_factor" : !strcmp(name, "rope_dim_neox") ? "rotary_pct"
                       : hparam(c, "partial_rotary_factor") ? "partial_rotary_factor" : "rope_pct";
        json_t *pct = hparam(c, pk);
        if (!json_is_number(pct)) {
            mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no numeric %s", pk);
            return NULL;
        }
        if (need_hp_int(c, hparam(c, "hidden_size") ? "hidden_size" : "n_embd", &a) ||
            need_hp_int(c, hparam(c, "num_attention_heads") ? "num_attention_heads" : "n_head", &b))
            return NULL;
        double p = json_number_value(pct);
        return json_integer(phi2 ? (int64_t)(p * (double)a) / b : (int64_t)(p * (double)(a / b)));
    }
    if (!strcmp(name, "qk_head_dim")) {
        if (need_int(c, hparam(c, "qk_nope_head_dim"), "qk_nope_head_dim", &a) ||
            need_int(c, hparam(c, "qk_rope_head_dim"), "qk_rope_head_dim", &b))
            return NULL;
        return json_integer(a + b);
    }
    if (!strcmp(name, "gating_func")) { /* ExpertGatingFuncType: SOFTMAX 1, SIGMOID 2 */
        const char *f = json_string_value(hparam(c, "scoring_func"));
        if (f && !strcmp(f, "softmax"))
            return json_integer(1);
        if (f && !strcmp(f, "sigmoid"))
            return json_integer(2);
        mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "unsupported scoring_func value: %s", f ? f : "(none)");
        return NULL;
    }
    if (!strcmp(name, "mamba_d_inner") || !strcmp(name, "mamba_dt_rank")) {
        static const char *const dm[] = {"hidden_size", "d_model", NULL}, *const di[] = {"intermediate_size", "d_inner", NULL},
                                 *const dr[] = {"time_step_rank", "dt_rank", NULL};
        if (need_int(c, find_hparam(c, dm), "hidden_size", &a))
            return NULL;
        bool inner = !strcmp(name, "mamba_d_inner");
        v = find_hparam(c, inner ? di : dr);
        d = 0;
        if (v && !json_is_null(v) && need_int(c, v, inner ? "intermediate_size" : "time_step_rank", &d))
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
    if (!strcmp(name, "falcon_mamba")) {
        const char *mt = json_string_value(hparam(c, "model_type"));
        return json_boolean(mt && !strcmp(mt, "falcon_mamba"));
    }
    mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "internal: no computed value @%s", name);
    return NULL;
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

/* The value of a key list ("a|b", "4*a", "a||=V", "a|=V"): a new reference or NULL. */
static json_t *lookup(conv *c, const char *src)
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
        json_t *x = hparam(c, k);
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

static int put_value(conv *c, const conv_hp *h, json_t *v)
{
    char key[160];
    arch_key(c, h->key, key, sizeof(key));
    const char *what = h->src[0] == '@' || h->src[0] == '=' ? h->key : h->src;
    switch (h->type) {
    case 'u': case 'i': {
        int64_t x;
        if (json_is_boolean(v))
            x = json_is_true(v);
        else if (need_int(c, v, what, &x))
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

static int pooling_type(conv *c)
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
    json_t *rs = hparam(c, "rope_scaling");
    const char *t = json_string_value(json_object_get(rs, "type"));
    if (!json_is_object(rs) || !json_object_get(rs, "factor") || !t || strcmp(t, type))
        return NULL;
    return rs;
}

static int put_f32_of(conv *c, const char *key, json_t *v, const char *what)
{
    conv_hp h = {key, 'f', what, 0};
    if (!v)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s", what);
    return put_value(c, &h, v);
}

/* Keys the converter writes in a block ("@@NAME"). */
static int written(conv *c, const char *name)
{
    char key[160];
    if (!strcmp(name, "rope_linear")) {
        json_t *rs = rope_scaling_of(c, "linear");
        if (!rs)
            return 0;
        arch_key(c, "rope.scaling.type", key, sizeof(key));
        mf_kv_str(c->kv, key, "linear", 6);
        return put_f32_of(c, "rope.scaling.factor", json_object_get(rs, "factor"), "rope_scaling.factor");
    }
    if (!strcmp(name, "rope_yarn") || !strcmp(name, "rope_yarn_deepseek")) {
        json_t *rs = rope_scaling_of(c, "yarn");
        if (!rs)
            return 0;
        arch_key(c, "rope.scaling.type", key, sizeof(key));
        mf_kv_str(c->kv, key, "yarn", 4);
        conv_hp orig = {"rope.scaling.original_context_length", 'u', "rope_scaling.original_max_position_embeddings", 0};
        json_t *o = json_object_get(rs, "original_max_position_embeddings");
        if (put_f32_of(c, "rope.scaling.factor", json_object_get(rs, "factor"), "rope_scaling.factor"))
            return -1;
        if (!o)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_scaling (yarn) has no original_max_position_embeddings");
        if (put_value(c, &orig, o))
            return -1;
        if (!strcmp(name, "rope_yarn"))
            return 0;
        json_t *m = json_object_get(rs, "mscale_all_dim");
        if (!json_is_number(m))
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_scaling has no numeric mscale_all_dim");
        json_t *lm = json_real(0.1 * json_number_value(m));
        int rc = put_f32_of(c, "rope.scaling.yarn_log_multiplier", lm, "rope_scaling.mscale_all_dim");
        json_decref(lm);
        return rc;
    }
    if (!strcmp(name, "pooling_type")) /* BertModel: modules.json + the Pooling module's config */
        return pooling_type(c);
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "internal: no key writer @@%s", name);
}

static int hyper_parameters(conv *c, const conv_hp *list)
{
    for (const conv_hp *h = list; h->key; h++) {
        if (!strcmp(h->key, "@base")) {
            if (hyper_parameters(c, conv_base_hparams))
                return -1;
            continue;
        }
        if (!strncmp(h->key, "@@", 2)) {
            if (written(c, h->key + 2))
                return -1;
            continue;
        }
        json_t *v = h->src[0] == '@' ? computed(c, h->src + 1) : lookup(c, h->src);
        if (!v && c->st->code)
            return -1;
        bool skip = (!v || json_is_null(v)) || ((h->flags & HP_TRUTHY) && falsy(v));
        if (skip && !(h->flags & HP_OPT)) {
            json_decref(v);
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s (for %s.%s)", h->src,
                           c->arch->name, h->key);
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
        int64_t n = numel(o->shape, o->ndim);
        if (strstr(o->name, "_exps.") && o->ndim >= 3) {
            int64_t e = o->shape[o->ndim - 3];
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

static int build_metadata(conv *c)
{
    mf_kv_str(c->kv, "general.type", "model", 5);
    mf_hf_params pc;
    param_counts(c, &pc);
    mf_hf_vocab_opts vo = {.kind = (int)c->arch->vocab, .arch = c->arch->name,
                           .note = c->opts.note, .note_user = c->opts.note_user};
    if (mf_hf_general_meta(c->dir, c->cfg, &pc, c->kv, c->st) || hyper_parameters(c, c->arch->hparams) ||
        mf_hf_vocab_keys(c->dir, c->cfg, &vo, c->kv, c->st))
        return -1;
    mf_kv_u32(c->kv, "general.quantization_version", 2);
    if (c->kv->failed)
        return c->kv->dup[0] ? mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "duplicated key name \"%s\"", c->kv->dup)
                             : mf_oom(c->st, c->dir);
    return 0;
}


/* ---------------------------------------------------------- streaming */

/* A source's bytes: mapped in place, or read whole into *owned. */
static const uint8_t *seg_data(const seg *s, uint8_t **owned, mf_status *st)
{
    *owned = NULL;
    const uint8_t *plain = mf_tensor_data(NULL, s->t);
    if (plain)
        return plain;
    mf_buf_sink col = {.cap = s->t->nbytes, .too_long = "tensor stream longer than its size"};
    col.p = malloc(col.cap ? col.cap : 1);
    if (!col.p) {
        mf_oom(st, s->part->path);
        return NULL;
    }
    if (mf_tensor_stream(s->part, s->t, mf_buf_sink_fn, &col, st) || col.n != col.cap) {
        free(col.p);
        if (!st->code)
            mf_fail(st, MF_ERR_FORMAT, s->part->path, -1, "tensor \"%s\": short stream", s->t->name);
        return NULL;
    }
    *owned = col.p;
    return col.p;
}

/* The sources of one output tensor, ready to read. */
typedef struct reader {
    const out_tensor *o;
    const uint8_t **data;
    uint8_t **owned;
    int64_t *first_row; /* row index where each source starts */
    int64_t rows;
} reader;

static void reader_close(reader *r)
{
    for (size_t i = 0; r->owned && i < r->o->n_segs; i++) {
        free(r->owned[i]);
        if (!r->owned[i] && r->data && r->data[i])
            mf_tensor_release(r->o->segs[i].part, r->o->segs[i].t);
    }
    free(r->data);
    free(r->owned);
    free(r->first_row);
}

static int reader_open(reader *r, const out_tensor *o, mf_status *st)
{
    memset(r, 0, sizeof(*r));
    r->o = o;
    size_t n = o->n_segs ? o->n_segs : 1;
    r->data = calloc(n, sizeof(*r->data));
    r->owned = calloc(n, sizeof(*r->owned));
    r->first_row = calloc(n + 1, sizeof(int64_t));
    if (!r->data || !r->owned || !r->first_row)
        return mf_oom(st, NULL);
    for (size_t i = 0; i < o->n_segs; i++) {
        const mf_tensor *t = o->segs[i].t;
        int64_t ne = numel(t->shape, t->ndim);
        if (o->transpose ? 0 : ne % o->row_len)
            return mf_fail(st, MF_ERR_FORMAT, o->segs[i].part->path, -1,
                           "tensor \"%s\": %lld values are not rows of %lld", t->name, (long long)ne,
                           (long long)o->row_len);
        r->first_row[i + 1] = r->first_row[i] + (o->transpose ? 0 : ne / o->row_len);
        if (!(r->data[i] = seg_data(&o->segs[i], &r->owned[i], st)))
            return -1;
    }
    r->rows = r->first_row[o->n_segs];
    return 0;
}

/* Source row `row` (of the sources read as one) as float32, or raw bytes
 * when raw. */
static void read_row(const reader *r, int64_t row, float *f32, uint8_t *raw)
{
    const out_tensor *o = r->o;
    size_t s = 0;
    while (s + 1 < o->n_segs && row >= r->first_row[s + 1])
        s++;
    mf_dtype dt = o->segs[s].t->dtype;
    size_t es = mf_dtype_info_of(dt)->block_bytes;
    const uint8_t *p = r->data[s] + (uint64_t)(row - r->first_row[s]) * (uint64_t)o->row_len * es;
    if (raw)
        memcpy(raw, p, (size_t)o->row_len * es);
    else
        row_to_f32(dt, p, (size_t)o->row_len, f32);
}

/* torch.exp on float32 CPU tensors: SLEEF's expf (1.0 ULP, "u10") as
 * torch's vectorised kernels run it, with fused multiply-adds. Mamba's
 * -exp(A_log) matches the converter's bytes only with this exact rounding. */
static float pow2i(int q)
{
    uint32_t u = (uint32_t)(q + 0x7f) << 23;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float torch_expf(float d)
{
    int q = (int)rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf((float)q, -0.693145751953125f, d);
    s = fmaf((float)q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = fmaf(s * s, u, s) + 1.0f;
    u = u * pow2i(q >> 1) * pow2i(q - (q >> 1));
    if (d < -104)
        u = 0;
    if (d > 104)
        u = INFINITY;
    if (isnan(d))
        u = d;
    return u;
}

/* Output row r (a column of the source when transposed) as float32 after
 * the element-wise op, in the source's precision as torch computes it. */
static void output_row(const reader *r, int64_t row, float *f32)
{
    const out_tensor *o = r->o;
    if (o->transpose) {
        const mf_tensor *t = o->segs[0].t;
        mf_dtype dt = t->dtype;
        size_t es = mf_dtype_info_of(dt)->block_bytes;
        int64_t rows = t->shape[0], cols = t->shape[1];
        for (int64_t i = 0; i < rows; i++)
            row_to_f32(dt, r->data[0] + ((uint64_t)i * (uint64_t)cols + (uint64_t)row) * es, 1, f32 + i);
    } else {
        read_row(r, o->row_map ? o->row_map[row] : row, f32, NULL);
    }
    if (o->ew == OP_SKIP)
        return;
    bool half = o->segs[0].t->dtype == MF_F16; /* torch keeps F16 tensors F16 */
    for (int64_t i = 0; i < o->row_len; i++) {
        float v = o->ew == OP_ADD_ONE ? f32[i] + 1.0f : -torch_expf(f32[i]);
        f32[i] = half ? mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(v)) : v;
    }
}

static bool same_values(const conv *c, const out_tensor *a, const mf_model *part, const mf_tensor *t)
{
    if (a->n_segs != 1 || a->row_map || a->transpose || a->ew != OP_SKIP || a->segs[0].t->ndim != t->ndim ||
        memcmp(a->segs[0].t->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim))
        return false;
    out_tensor b = *a;
    seg s = {part, t};
    b.segs = &s;
    reader ra, rb;
    mf_status tmp;
    mf_status_init(&tmp);
    bool same = reader_open(&ra, a, &tmp) == 0 && reader_open(&rb, &b, &tmp) == 0;
    float *x = malloc((size_t)a->row_len * 2 * sizeof(float));
    same = same && x;
    for (int64_t row = 0; same && row < ra.rows; row++) {
        read_row(&ra, row, x, NULL);
        read_row(&rb, row, x + a->row_len, NULL);
        for (int64_t i = 0; same && i < a->row_len; i++)
            same = x[i] == x[a->row_len + i];
    }
    free(x);
    reader_close(&ra);
    reader_close(&rb);
    mf_status_clear(&tmp);
    (void)c;
    return same;
}

/* float32 values in the type `dt` stores, encoded. */
static int encode_rows(const conv *c, mf_dtype dt, float *f32, uint8_t *out, int64_t nr, int64_t row,
                       mf_status *st)
{
    size_t n = (size_t)(nr * row);
    if (dt == MF_F32) {
        memcpy(out, f32, n * 4);
    } else if (dt == MF_F16) {
        for (size_t i = 0; i < n; i++)
            mf_wr16le(out + 2 * i, mf_f32_to_f16_numpy(f32[i]));
    } else if (dt == MF_BF16) {
        for (size_t i = 0; i < n; i++)
            mf_wr16le(out + 2 * i, mf_f32_to_bf16(f32[i]));
    } else if (mf_quantize_rows_mt(dt, f32, out, nr, row, NULL, c->opts.threads)) {
        return mf_fail(st, MF_ERR_UNSUPPORTED, c->dir, -1, "cannot quantize to %s", mf_dtype_name(dt));
    }
    return 0;
}

/* Rounds values through the plain conversion's type (a mix quantizes the
 * F16 file's values, as llama-quantize does on it). */
static void round_through(mf_dtype plan, float *f32, size_t n)
{
    if (plan == MF_F16)
        for (size_t i = 0; i < n; i++)
            f32[i] = mf_f16_to_f32_numpy(mf_f32_to_f16_numpy(f32[i]));
    else if (plan == MF_BF16)
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)mf_f32_to_bf16(f32[i]) << 16;
            memcpy(&f32[i], &u, 4);
        }
}

static int fill_tensor(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    conv *c = ctx;
    const out_tensor *o = &c->out[index];
    int64_t row = o->row_len, nrows = row ? numel(o->shape, o->ndim) / row : 0;
    if (row == 0 || nrows == 0)
        return 0;
    reader rd;
    int rc = o->generated ? (memset(&rd, 0, sizeof(rd)), 0) : reader_open(&rd, o, st);
    if (rc == 0 && !o->generated && !o->transpose && rd.rows != (o->row_map ? rd.rows : nrows))
        rc = mf_fail(st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": sources hold %lld rows, not %lld", o->name,
                     (long long)rd.rows, (long long)nrows);
    mf_dtype sdt = o->generated ? MF_F32 : o->segs[0].t->dtype;
    bool raw = !o->generated && !o->transpose && o->ew == OP_SKIP && sdt == o->dtype &&
               (sdt == MF_F16 || sdt == MF_F32);
    for (size_t i = 0; raw && i < o->n_segs; i++)
        raw = o->segs[i].t->dtype == sdt;
    /* F16 values without an op are F16 already: no rounding through F16 */
    bool exact_in_plan = !o->generated && o->ew == OP_SKIP && o->plan == MF_F16;
    for (size_t i = 0; exact_in_plan && i < o->n_segs; i++)
        exact_in_plan = o->segs[i].t->dtype == MF_F16;
    uint64_t orow_bytes;
    mf_dtype_nbytes(o->dtype, (uint64_t)row, &orow_bytes);
    /* chunks of 4 MiB of float32; 32 MiB when quantizing (fewer thread starts) */
    uint64_t budget = o->dtype == o->plan || o->dtype == MF_F32 || o->dtype == MF_F16 || o->dtype == MF_BF16
                          ? 4u << 20 : 32u << 20;
    int64_t chunk = (int64_t)(budget / ((uint64_t)row * 4 + orow_bytes));
    if (chunk < 1)
        chunk = 1;
    if (chunk > nrows)
        chunk = nrows;
    float *f32 = raw ? NULL : malloc((size_t)(chunk * row) * sizeof(float));
    uint8_t *obuf = malloc((size_t)(chunk * (int64_t)orow_bytes));
    if (rc == 0 && ((!raw && !f32) || !obuf))
        rc = mf_oom(st, c->dir);
    if (rc == 0 && raw && !o->row_map && o->n_segs == 1) { /* the mapped bytes as they are */
        const uint8_t *p = rd.data[0];
        uint64_t left = (uint64_t)nrows * orow_bytes;
        for (uint64_t step = 4u << 20; rc == 0 && left; left -= step < left ? step : left) {
            size_t k = (size_t)(step < left ? step : left);
            rc = sink(sink_ctx, p, k, st);
            p += k;
        }
        nrows = 0; /* done */
    }
    for (int64_t r0 = 0; rc == 0 && r0 < nrows; r0 += chunk) {
        int64_t nr = nrows - r0 < chunk ? nrows - r0 : chunk;
        for (int64_t r = 0; r < nr; r++) {
            if (raw)
                read_row(&rd, o->row_map ? o->row_map[r0 + r] : r0 + r, NULL, obuf + (uint64_t)r * orow_bytes);
            else if (o->generated)
                memcpy(f32 + r * row, o->generated + (r0 + r) * row, (size_t)row * sizeof(float));
            else
                output_row(&rd, r0 + r, f32 + r * row);
        }
        if (!raw) {
            if (o->dtype != o->plan && !exact_in_plan)
                round_through(o->plan, f32, (size_t)(nr * row));
            rc = encode_rows(c, o->dtype, f32, obuf, nr, row, st);
        }
        if (rc == 0)
            rc = sink(sink_ctx, obuf, (size_t)(nr * (int64_t)orow_bytes), st);
    }
    free(f32);
    free(obuf);
    if (!o->generated)
        reader_close(&rd);
    c->done += (uint64_t)(row ? numel(o->shape, o->ndim) / row : 0) * orow_bytes;
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
    if (mf_llama_hparams_problems(arch, kv_lookup, c->kv, first_problem, why))
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

static int pick_arch(conv *c)
{
    json_t *archs = hparam(c, "architectures");
    const char *cls = json_string_value(json_array_get(archs, 0));
    for (size_t i = 0; cls && i < conv_n_archs; i++)
        for (const char *const *k = conv_archs[i].classes; *k; k++)
            if (!strcmp(cls, *k)) {
                c->arch = &conv_archs[i];
                return 0;
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
    if (c->arch->flags & AF_NO_HEAD_DIM)
        json_object_del(c->cfg, "head_dim");
    if (c->arch->flags & AF_CTX_MODEL_MAX) {
        json_t *m = json_object_get(c->cfg, "model_max_length");
        if (m)
            json_object_set(c->cfg, "max_position_embeddings", m);
    }
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
    for (size_t i = 0; i < c->n_out; i++)
        free_out(&c->out[i]);
    free(c->out);
    for (size_t i = 0; i < c->n_pend; i++) {
        for (size_t k = 0; k < c->pend[i].n; k++)
            free(c->pend[i].names[k]);
        free(c->pend[i].names);
        free(c->pend[i].segs);
    }
    free(c->pend);
    for (size_t i = 0; i < c->n_parts; i++)
        mf_close(c->parts[i]);
    free(c->parts);
    json_decref(c->cfg);
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

/* mf_convert_gguf_archs: every HF class of every architecture, once,
 * NULL-terminated (built on first use, under pthread_once). */
enum { MAX_ARCH_CLASSES = 256 };
static const char *arch_classes[MAX_ARCH_CLASSES + 1];
static pthread_once_t arch_classes_once = PTHREAD_ONCE_INIT;

static void build_arch_classes(void)
{
    size_t n = 0;
    for (size_t i = 0; mf_convert_arch_name(i); i++)
        for (size_t k = 0; mf_convert_arch_class(i, k) && n < MAX_ARCH_CLASSES; k++)
            arch_classes[n++] = mf_convert_arch_class(i, k);
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
    if (rc == 0 && !mf_is_dir(dir))
        rc = mf_fail(st, MF_ERR_USAGE, dir, -1, "not a directory (a Hugging Face model directory is needed)");
    if (rc == 0)
        rc = load_config(&c);
    if (rc == 0)
        rc = pick_arch(&c);
    if (rc == 0) {
        adjust_config(&c);
        /* GGUFWriter(arch=...) writes general.architecture first; keys set
         * while tensors are generated follow it */
        mf_kv_str(&kv, "general.architecture", c.arch->name, strlen(c.arch->name));
        rc = open_parts(&c);
    }
    if (rc == 0) {
        resolve_auto(&c);
        rc = plan_tensors(&c);
    }
    if (rc == 0)
        rc = build_metadata(&c);
    if (rc == 0 && c.mix != MF_FTYPE_INVALID)
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
        mf_dtype_nbytes(ot[i].dtype, (uint64_t)numel(ot[i].shape, ot[i].ndim), &nb);
        c.total_bytes += nb;
    }
    for (size_t i = 0; rc == 0 && i < c.n_parts; i++)
        rc = mf_output_check(c.parts[i], out, st);
    if (rc == 0)
        rc = mf_output_check_path(dir, out, st);
    if (rc == 0 && c.mix != MF_FTYPE_INVALID) /* llama-quantize's file: the last tensor padded too */
        rc = mf_gguf_write_all_padded(out, ot, c.n_out, kv.kv, kv.n, fill_tensor, &c, st);
    else if (rc == 0)
        rc = mf_gguf_write(out, ot, c.n_out, kv.kv, kv.n, fill_tensor, &c, st);
    free(ot);
    mf_kvlist_free(&kv);
    free_conv(&c);
    return rc;
}
