/* mlx.c - MLX model directories (mlx-lm's save layout): config.json with
 * "quantization": {"group_size", "bits"[, "mode"]} and per-module overrides
 * ("model.layers.0.mlp.down_proj": {"group_size", "bits"} or false), and
 * the weights in model.safetensors, or shards named by
 * model.safetensors.index.json, or any *.safetensors beside config.json.
 * Tensors are listed as stored (packed U32 weight, scales, biases: their
 * hashes are the files'); logical shapes go to metadata, and converters
 * dequantize through mlx.h. */
#include "formats/formats.h"
#include "formats/mlx/mlx.h"
#include "core/json_build.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>

#define MAX_CONFIG (16u << 20)

extern const mf_reader mf_reader_mlx;

typedef struct mlx_priv {
    mf_mlx_quant *q;
    size_t n;
} mlx_priv;

typedef struct qparams {
    int bits, group_size;
    bool quantized;
} qparams;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The weights: the shard index if there is one, else every *.safetensors
 * file, in name order. */
static int open_weights(mf_model *m, const char *dir, unsigned flags, mf_status *st)
{
    char *index = mf_path_join(m->arena, dir, "model.safetensors.index.json");
    if (!index)
        return mf_oom(st, dir);
    if (mf_path_exists(index))
        return mf_model_open_child(m, index, flags, st) ? 0 : -1;
    DIR *d = mf_opendir(dir);
    if (!d)
        return mf_fail(st, MF_ERR_IO, dir, -1, "cannot list the directory");
    MF_VEC(char *) names = {0};
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)))
        if (e->d_name[0] != '.' && ends_with(e->d_name, ".safetensors")) {
            char *s = mf_arena_strdup(m->arena, e->d_name);
            if (!s || MF_VEC_PUSH(names, s))
                rc = mf_oom(st, dir);
        }
    closedir(d);
    if (rc == 0 && names.n == 0)
        rc = mf_fail(st, MF_ERR_FORMAT, dir, -1,
                     "MLX directory: no model.safetensors.index.json and no *.safetensors file");
    if (rc == 0)
        qsort(names.v, names.n, sizeof(char *), cmp_str);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        char *p = mf_path_join(m->arena, dir, names.v[i]);
        if (!p || !mf_model_open_child(m, p, flags, st))
            rc = -1;
    }
    MF_VEC_FREE(names);
    return rc;
}

static int json_small_int(json_t *v, int lo, int hi, int *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -1;
    *out = (int)json_integer_value(v);
    return 0;
}

/* The default parameters, from config.json "quantization". */
static int read_defaults(const char *cfg_path, json_t *q, qparams *d, const char **mode,
                         mf_status *st)
{
    d->quantized = true;
    if (json_small_int(json_object_get(q, "group_size"), 1, 1 << 20, &d->group_size) ||
        json_small_int(json_object_get(q, "bits"), 1, 8, &d->bits))
        return mf_fail(st, MF_ERR_FORMAT, cfg_path, -1,
                       "\"quantization\": group_size and bits must be integers (bits 1 to 8)");
    json_t *md = json_object_get(q, "mode");
    *mode = json_is_string(md) ? json_string_value(md) : "affine";
    return 0;
}

/* A module's parameters: its own entry in "quantization", or the defaults.
 * An entry's group_size or bits present but invalid sets *bad (before, the
 * defaults were taken silently: the codes read with the wrong width). */
static qparams params_for(json_t *q, const char *module, qparams dflt, bool *bad)
{
    json_t *o = json_object_get(q, module);
    *bad = false;
    if (json_is_false(o)) {
        dflt.quantized = false;
    } else if (json_is_object(o)) {
        json_t *g = json_object_get(o, "group_size"), *b = json_object_get(o, "bits");
        *bad = (g && json_small_int(g, 1, 1 << 20, &dflt.group_size)) ||
               (b && json_small_int(b, 1, 8, &dflt.bits));
    }
    return dflt;
}

/* Tensors by name, sorted, for lookups in O(log n): a hostile weights
 * file may hold a million "*.scales". */
typedef struct name_index {
    const mf_tensor **v;
    size_t n;
} name_index;

static int cmp_tensor_name(const void *a, const void *b)
{
    return strcmp((*(const mf_tensor *const *)a)->name, (*(const mf_tensor *const *)b)->name);
}

static int index_names(const mf_model *m, name_index *ix)
{
    ix->n = m->n_tensors;
    ix->v = malloc((ix->n ? ix->n : 1) * sizeof(*ix->v));
    if (!ix->v)
        return -1;
    for (size_t i = 0; i < ix->n; i++)
        ix->v[i] = &m->tensors[i];
    if (ix->n > 1)
        qsort(ix->v, ix->n, sizeof(*ix->v), cmp_tensor_name);
    return 0;
}

static const mf_tensor *find_suffixed(const name_index *ix, const char *base, size_t bl,
                                      const char *suffix, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*s%s", (int)bl, base, suffix);
    mf_tensor key = {.name = buf};
    const mf_tensor *kp = &key;
    const mf_tensor **hit = ix->n ? bsearch(&kp, ix->v, ix->n, sizeof(*ix->v), cmp_tensor_name)
                                  : NULL;
    return hit ? *hit : NULL;
}

static bool same_shape(const mf_tensor *a, const mf_tensor *b)
{
    return a->ndim == b->ndim &&
           memcmp(a->shape, b->shape, sizeof(a->shape[0]) * (size_t)a->ndim) == 0;
}

/* Checks one triple against MLX's shapes; fills q's logical shape. Returns
 * false (a breach recorded) when they do not fit. */
static bool check_triple(mf_model *m, mf_mlx_quant *q, const char *base, mf_status *st)
{
    const mf_tensor *w = q->weight, *s = q->scales, *b = q->biases;
    const char *file = m->path;
    if (!w || !b) {
        mf_breach(st, file, -1, "MLX: \"%s.scales\" has no \"%s.%s\" beside it%s", base, base,
                  !w ? "weight" : "biases", !w ? "" : " (affine mode)");
        return false;
    }
    if (w->dtype != MF_U32 || w->ndim < 1) {
        mf_breach(st, file, -1, "MLX: \"%s\" is %s, not the packed U32 of a quantized weight",
                  w->name, mf_dtype_name(w->dtype));
        return false;
    }
    if ((s->dtype != MF_F16 && s->dtype != MF_BF16 && s->dtype != MF_F32) || b->dtype != s->dtype ||
        !same_shape(s, b)) {
        mf_breach(st, file, -1, "MLX: \"%s\" and \"%s\" must be float arrays of one type and shape",
                  s->name, b->name);
        return false;
    }
    int nd = w->ndim;
    bool lead_ok = s->ndim == nd;
    for (int i = 0; lead_ok && i < nd - 1; i++)
        lead_ok = s->shape[i] == w->shape[i];
    uint64_t packed = (uint64_t)w->shape[nd - 1], bits_total;
    if (!lead_ok || mf_mul_ovf(packed, 32, &bits_total) || bits_total % (uint64_t)q->bits ||
        (bits_total / (uint64_t)q->bits) % (uint64_t)q->group_size ||
        (uint64_t)s->shape[nd - 1] != bits_total / (uint64_t)q->bits / (uint64_t)q->group_size) {
        mf_breach(st, file, -1,
                  "MLX: \"%s\": shapes do not fit %d-bit codes in groups of %d (weight last "
                  "dimension %lld words, scales last dimension %lld)",
                  base, q->bits, q->group_size, (long long)packed,
                  (long long)(s->ndim ? s->shape[s->ndim - 1] : -1));
        return false;
    }
    q->ndim = nd;
    memcpy(q->shape, w->shape, sizeof(q->shape[0]) * (size_t)nd);
    q->shape[nd - 1] = (int64_t)(bits_total / (uint64_t)q->bits);
    q->dtype = s->dtype;
    return true;
}

static int add_logical_meta(mf_model *m, const mf_mlx_quant *q, mf_status *st)
{
    char key[600], val[400];
    int k = snprintf(val, sizeof(val), "[");
    for (int i = 0; i < q->ndim && k > 0 && (size_t)k < sizeof(val); i++)
        k += snprintf(val + k, sizeof(val) - (size_t)k, "%s%lld", i ? ", " : "",
                      (long long)q->shape[i]);
    if (k > 0 && (size_t)k < sizeof(val))
        snprintf(val + k, sizeof(val) - (size_t)k, "] %s, %d-bit, group %d",
                 mf_dtype_name(q->dtype), q->bits, q->group_size);
    snprintf(key, sizeof(key), "mlx.logical.%s", q->weight->name);
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    kv->v = mf_value_str(m->arena, val, strlen(val));
    return 0;
}

typedef MF_VEC(mf_mlx_quant) quant_vec;

/* Every "<module>.scales" with its weight and biases. */
static int find_triples(mf_model *m, json_t *qcfg, qparams dflt, quant_vec *out, mf_status *st)
{
    size_t cap = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        size_t l = strlen(m->tensors[i].name);
        if (l + 16 > cap)
            cap = l + 16;
    }
    char *buf = malloc(cap ? cap : 1), *module = malloc(cap ? cap : 1);
    name_index ix = {0};
    if (!buf || !module || index_names(m, &ix)) {
        free(buf);
        free(module);
        free(ix.v);
        return mf_oom(st, m->path);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->n_tensors; i++) {
        const char *name = m->tensors[i].name;
        if (!ends_with(name, ".scales"))
            continue;
        size_t bl = strlen(name) - 7;
        snprintf(module, cap, "%.*s", (int)bl, name);
        bool bad;
        qparams p = params_for(qcfg, module, dflt, &bad);
        if (bad) { /* its triple stays as stored */
            mf_breach(st, m->path, -1, "config.json: \"quantization\".\"%s\": group_size and bits "
                      "must be integers (bits 1 to 8, group_size 1 to 2^20)", module);
            continue;
        }
        mf_mlx_quant q = {
            .scales = &m->tensors[i],
            .weight = find_suffixed(&ix, name, bl, ".weight", buf, cap),
            .biases = find_suffixed(&ix, name, bl, ".biases", buf, cap),
            .bits = p.bits,
            .group_size = p.group_size,
        };
        if (!p.quantized)
            mf_model_note(m, "\"%s\" has scales but config.json says the module is not quantized",
                          module);
        if (!check_triple(m, &q, module, st))
            continue;
        if (MF_VEC_PUSH(*out, q) || add_logical_meta(m, &q, st))
            rc = mf_oom(st, m->path);
    }
    free(buf);
    free(module);
    free(ix.v);
    return rc;
}

static int add_quant_meta(mf_model *m, qparams d, const char *mode, mf_status *st)
{
    mf_kv *kv;
    if (!(kv = mf_model_add_meta(m, "mlx.quantization.bits", st)))
        return -1;
    kv->v = mf_value_int(d.bits);
    if (!(kv = mf_model_add_meta(m, "mlx.quantization.group_size", st)))
        return -1;
    kv->v = mf_value_int(d.group_size);
    if (!(kv = mf_model_add_meta(m, "mlx.quantization.mode", st)))
        return -1;
    kv->v = mf_value_str(m->arena, mode, strlen(mode));
    return 0;
}

/* Moves the triples found into the arena, where the model keeps them. */
static int keep_quants(mf_model *m, mlx_priv *p, const quant_vec *qs, mf_status *st)
{
    p->q = mf_arena_calloc(m->arena, qs->n ? qs->n : 1, sizeof(mf_mlx_quant));
    if (!p->q)
        return mf_oom(st, m->path);
    if (qs->n)
        memcpy(p->q, qs->v, qs->n * sizeof(mf_mlx_quant));
    p->n = qs->n;
    return 0;
}

static int read_mlx(mf_model *m, const char *path, const char *cfg_path, json_t *cfg,
                    unsigned flags, mf_status *st)
{
    json_t *qcfg = json_object_get(cfg, "quantization");
    if (!json_is_object(qcfg))
        return mf_fail(st, MF_ERR_FORMAT, cfg_path, -1,
                       "no \"quantization\" object: not an MLX quantized model");
    qparams dflt = {0};
    const char *mode = "affine";
    if (read_defaults(cfg_path, qcfg, &dflt, &mode, st) || add_quant_meta(m, dflt, mode, st))
        return -1;
    snprintf(m->version, sizeof(m->version), "%.20s %d-bit, group %d", mode, dflt.bits,
             dflt.group_size);
    if (open_weights(m, path, flags, st))
        return -1;
    mlx_priv *p = mf_arena_alloc(m->arena, sizeof(*p));
    if (!p)
        return mf_oom(st, path);
    m->priv = p;
    if (strcmp(mode, "affine") != 0) {
        mf_model_note(m, "quantization mode \"%s\": tensors listed as stored; mfmt dequantizes "
                      "only MLX's affine mode", mode);
        return 0;
    }
    quant_vec qs = {0};
    int rc = find_triples(m, qcfg, dflt, &qs, st);
    if (rc == 0)
        rc = keep_quants(m, p, &qs, st);
    MF_VEC_FREE(qs);
    if (rc == 0)
        mf_model_note(m, "%zu MLX-quantized weights are listed as stored (packed U32 + scales + "
                      "biases); their logical shapes are in mlx.logical.*, and conversion "
                      "dequantizes them", p->n);
    return rc;
}

static int open_mlx(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    char *cfg_path = mf_path_join(m->arena, path, "config.json"), *text = NULL;
    size_t len;
    if (!cfg_path)
        return mf_oom(st, path);
    if (mf_read_small_file(cfg_path, MAX_CONFIG, &text, &len, st))
        return -1;
    json_error_t jerr;
    json_t *cfg = mf_json_loadb(text, len, 0, &jerr);
    free(text);
    if (!cfg)
        return mf_fail(st, MF_ERR_FORMAT, cfg_path, jerr.position, "not valid JSON: %s", jerr.text);
    int rc = read_mlx(m, path, cfg_path, cfg, flags, st);
    json_decref(cfg);
    return rc == 0 && mf_ok(st) ? 0 : -1;
}

size_t mf_mlx_quants(const mf_model *m, const mf_mlx_quant **out)
{
    *out = NULL;
    if (!m || m->reader != &mf_reader_mlx || !m->priv)
        return 0;
    const mlx_priv *p = m->priv;
    *out = p->q;
    return p->n;
}

const mf_mlx_quant *mf_mlx_quant_of(const mf_model *m, const mf_tensor *t)
{
    const mf_mlx_quant *q;
    size_t n = mf_mlx_quants(m, &q);
    for (size_t i = 0; i < n; i++)
        if (q[i].weight == t || q[i].scales == t || q[i].biases == t)
            return &q[i];
    return NULL;
}

/* ------------------------------------------------------------- detection */

/* An MLX directory is an HF-style directory whose config.json carries
 * mlx's "quantization": {"group_size", "bits"}. */
static int probe_mlx_dir(mf_probe *p)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/config.json", p->path);
    json_t *j = mf_json_load_file(path, 0, NULL);
    if (!j)
        return MF_PROBE_NO;
    json_t *q = json_object_get(j, "quantization");
    bool mlx = json_is_object(q) && json_object_get(q, "group_size") &&
               json_object_get(q, "bits");
    json_decref(j);
    return mlx ? mf_probe_found(p, MF_FMT_MLX, "MLX model directory (quantized)") : MF_PROBE_NO;
}

const mf_reader mf_reader_mlx = {
    .format = MF_FMT_MLX,
    .name = "mlx",
    .probe_dir = probe_mlx_dir,
    .open = open_mlx,
    .logical_view = mf_mlx_logical_view,
};
