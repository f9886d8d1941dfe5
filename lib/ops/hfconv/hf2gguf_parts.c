/* hf2gguf_parts.c - the weight files of a Hugging Face directory as the
 * converter reads them (see hf2gguf.c): model*.safetensors, else
 * pytorch_model*.bin, in sorted order; the index must name the same tensors. */
#include "ops/hfconv/hf2gguf_int.h"

#include <dirent.h>
#include <stdlib.h>

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

int h2g_count_parts(const char *dir, const char *prefix, const char *suffix, size_t *n, mf_status *st)
{
    char **names;
    if (part_names(dir, prefix, suffix, &names, n, st))
        return -1;
    free_names(names, *n);
    return 0;
}

/* A pre-quantized checkpoint (quantization_config): the directory's logical
 * view, which streams each packed weight dequantized, is the one part; FP8
 * as ModelBase.dequant_model computes it (ecbcb7ea: float32 products; the
 * c392e509 converter has no dequantization: it would stop at the first
 * weight_scale_inv, a name it cannot map). */
static int open_logical_dir(conv *c)
{
    mf_model *view = NULL;
    if (mf_open_model(c->dir, 0, &c->stored, c->st) || mf_hf_prequant_view_llama(c->stored, &view, c->st))
        return -1;
    if (!view)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1,
                       "quantization_config: no packed weights mfmt can dequantize were found");
    c->parts = calloc(1, sizeof(mf_model *));
    if (!c->parts) {
        mf_close(view);
        return mf_oom(c->st, c->dir);
    }
    c->parts[0] = view;
    c->n_parts = 1;
    c->safetensors = true;
    return 0;
}

/* The caller's model (opts.weights) as the one part, read as a single
 * model.safetensors would be. */
static int borrow_weights(conv *c)
{
    c->parts = calloc(1, sizeof(mf_model *));
    if (!c->parts)
        return mf_oom(c->st, c->dir);
    c->parts[0] = (mf_model *)c->opts.weights; /* never closed nor changed here */
    c->n_parts = 1;
    c->borrowed = true;
    c->safetensors = true;
    return 0;
}

/* GptOssModel.dequant_model: an mxfp4 checkpoint stays as stored (its
 * blocks and scales are repacked, OP_MXFP4); any other is dequantized. */
static bool kept_packed(const conv *c)
{
    const char *m = json_string_value(json_object_get(json_object_get(c->cfg, "quantization_config"), "quant_method"));
    return (c->arch->flags & AF_MXFP4) && m && !strcmp(m, "mxfp4");
}

int h2g_open_parts(conv *c)
{
    if (c->opts.weights)
        return borrow_weights(c);
    if (json_is_object(json_object_get(c->cfg, "quantization_config")) && !kept_packed(c))
        return open_logical_dir(c);
    char **names;
    size_t n;
    /* index_tensors: Mistral's format names its files consolidated*.safetensors */
    if (part_names(c->dir, c->mistral ? "consolidated" : "model", ".safetensors", &names, &n, c->st))
        return -1;
    c->safetensors = n > 0;
    if (!n && part_names(c->dir, "pytorch_model", ".bin", &names, &n, c->st))
        return -1;
    if (!n)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, c->mistral
                       ? "no weights: no consolidated*.safetensors and no pytorch_model*.bin files"
                       : "no weights: no model*.safetensors and no pytorch_model*.bin files");
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

const mf_tensor **h2g_part_order(const conv *c, const mf_model *m, mf_status *st)
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
int h2g_check_index(conv *c)
{
    if (c->stored || c->borrowed || c->mistral) /* a pre-quantized directory: its reader checked the
                                                   stored names; the caller's model has no index; the
                                                   Mistral format reads none */
        return 0;
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
bool h2g_match_pattern(const char *pat, const char *name, size_t name_len, int64_t n_blocks,
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

