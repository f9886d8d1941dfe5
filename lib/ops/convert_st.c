/* convert_st.c - any model to safetensors, one tensor at a time: each
 * tensor's canonical bytes (mf_tensor_stream) go straight into the writer,
 * so memory stays at a chunk whatever the model size. Checkpoints are
 * unwrapped as loaders do; sharding follows huggingface_hub's
 * split_torch_state_dict_into_shards (a new shard when the next tensor
 * would pass the limit; a tensor larger than the limit gets its own). */
#include "ops/convert_st.h"
#include "formats/formats.h"
#include "core/json_build.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ----------------------------------------------------------- selection */

/* Top-level entries of a training checkpoint that are not weights. */
static const char *const optimizer_keys[] = {
    "optimizer", "optimizer_states", "optimizer_state_dict", "optim", "opt_state",
    "lr_scheduler", "lr_schedulers", "scheduler", "scaler", "rng", "rng_state", "rng_states",
    NULL,
};

static bool first_segment_is(const char *name, const char *const *keys)
{
    const char *dot = strchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name);
    for (; *keys; keys++)
        if (strlen(*keys) == n && strncmp(name, *keys, n) == 0)
            return true;
    return false;
}

/* Under prefix: returns the rest of the name ("" for the prefix itself),
 * or NULL. */
static const char *under(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (n == 0)
        return name;
    if (strncmp(name, prefix, n) != 0)
        return NULL;
    if (name[n] == '.')
        return name + n + 1;
    return name[n] == 0 ? name + n : NULL;
}

/* sd.get("state_dict", sd), then "model", then "module": as many levels
 * as are mappings that hold tensors. */
static const char *unwrap(const mf_model *m, mf_arena *a)
{
    static const char *const wrappers[] = {"state_dict", "model", "module"};
    const char *prefix = "";
    for (int depth = 0; depth < 4; depth++) {
        bool found = false;
        for (size_t i = 0; i < 3 && !found; i++) {
            const char *p = prefix[0] ? mf_arena_printf(a, "%s.%s", prefix, wrappers[i])
                                      : wrappers[i];
            if (p && mf_model_is_mapping(m, p)) {
                prefix = p;
                found = true;
            }
        }
        if (!found)
            break;
    }
    return prefix;
}

/* The wrappers' segments a training loop adds to parameter names:
 * torch.compile's _orig_mod, FSDP's _fsdp_wrapped_module and activation
 * checkpointing's _checkpoint_wrapped_module anywhere, DDP's module at the
 * front (load_state_dict of the bare model wants none of them). */
static const char *const wrapper_segments[] = {
    "_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module", NULL};

static const char *clean_name(const char *name, mf_arena *a)
{
    while (strncmp(name, "module.", 7) == 0)
        name += 7;
    bool any = false;
    for (const char *const *w = wrapper_segments; *w && !any; w++)
        any = strstr(name, *w) != NULL;
    if (!any)
        return name;
    char *out = mf_arena_strdup(a, name);
    if (!out)
        return name;
    size_t o = 0;
    for (const char *p = name; *p;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        bool drop = false;
        for (const char *const *w = wrapper_segments; *w && !drop; w++)
            drop = strlen(*w) == n && strncmp(p, *w, n) == 0;
        if (!drop) {
            if (o)
                out[o++] = '.';
            memcpy(out + o, p, n);
            o += n;
        }
        p += n + (dot != NULL);
    }
    out[o] = 0;
    return out;
}

/* A LightningModule holding a Hugging Face model as an attribute
 * (self.model): every name starts with that attribute and what follows is
 * a causal LM's own names (lm_head., model.embed_tokens.): the attribute is
 * dropped. A bare LlamaForCausalLM with tied embeddings (every name under
 * model., the rest embed_tokens./layers.) is left alone. */
static void drop_module_attribute(mf_convert_item *v, size_t n)
{
    if (n == 0)
        return;
    const char *dot = strchr(v[0].name, '.');
    if (!dot)
        return;
    size_t k = (size_t)(dot - v[0].name) + 1;
    bool hf = false;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(v[i].name, v[0].name, k) != 0)
            return;
        hf = hf || !strncmp(v[i].name + k, "lm_head.", 8) ||
             !strncmp(v[i].name + k, "model.embed_tokens.", 19);
    }
    if (hf)
        for (size_t i = 0; i < n; i++)
            v[i].name += k;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(((const mf_convert_item *)a)->name, ((const mf_convert_item *)b)->name);
}

static int check_unique(mf_convert_item *items, size_t n, mf_status *st)
{
    if (n < 2)
        return 0;
    mf_convert_item *tmp = malloc(n * sizeof(*tmp));
    if (!tmp)
        return mf_oom(st, NULL);
    memcpy(tmp, items, n * sizeof(*tmp));
    qsort(tmp, n, sizeof(*tmp), cmp_names);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (strcmp(tmp[i].name, tmp[i - 1].name) == 0)
            rc = mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1,
                         "two tensors would be written as \"%s\" (from \"%s\" and \"%s\")",
                         tmp[i].name, tmp[i - 1].t->name, tmp[i].t->name);
    free(tmp);
    return rc;
}

/* Two names that view the same bytes the same way (tied embeddings: one
 * storage, same offset, dtype, shape and strides) are one tensor. */
static bool same_view(const mf_tensor *x, const mf_tensor *y)
{
    if (x->owner != y->owner || x->file != y->file || x->offset != y->offset ||
        x->dtype != y->dtype || x->ndim != y->ndim || x->nbytes != y->nbytes || !x->data ||
        x->data != y->data || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim))
        return false;
    if (!x->strides || !y->strides)
        return !x->strides && !y->strides;
    return !memcmp(x->strides, y->strides, sizeof(int64_t) * (size_t)x->ndim);
}

static const mf_convert_item *g_items; /* for the sort below */

static int cmp_by_data(const void *a, const void *b)
{
    const mf_convert_item *x = &g_items[*(const size_t *)a], *y = &g_items[*(const size_t *)b];
    if (x->t->data != y->t->data)
        return x->t->data < y->t->data ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : *(const size_t *)a > *(const size_t *)b;
}

/* Drops each name whose tensor is a same_view of an earlier one, keeping
 * the first in table order (model.embed_tokens.weight before
 * lm_head.weight). Sorted by data pointer, so O(n log n). */
static int drop_tied(mf_convert_item *v, size_t *n, mf_status *st, const char *path)
{
    size_t *ix = malloc(sizeof(size_t) * (*n ? *n : 1));
    bool *drop = calloc(*n ? *n : 1, 1);
    if (!ix || !drop) {
        free(ix);
        free(drop);
        return mf_oom(st, path);
    }
    for (size_t i = 0; i < *n; i++)
        ix[i] = i;
    g_items = v;
    qsort(ix, *n, sizeof(size_t), cmp_by_data);
    for (size_t i = 1; i < *n; i++) {
        /* earlier names over the same bytes sort just before, in table order */
        for (size_t j = i; j > 0 && v[ix[j - 1]].t->data == v[ix[i]].t->data; j--)
            if (!drop[ix[j - 1]] && same_view(v[ix[j - 1]].t, v[ix[i]].t)) {
                drop[ix[i]] = true;
                break;
            }
    }
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (!drop[i])
            v[k++] = v[i];
    *n = k;
    free(ix);
    free(drop);
    return 0;
}

int mf_convert_select(const mf_model *m, const mf_convert_st_opts *o, mf_arena *a,
                      mf_convert_item **items, size_t *n, mf_status *st)
{
    *items = NULL;
    *n = 0;
    const char *prefix = o->key ? o->key : unwrap(m, a);
    mf_convert_item *v = mf_arena_calloc(a, m->n_tensors ? m->n_tensors : 1, sizeof(*v));
    if (!v)
        return mf_oom(st, m->path);
    size_t k = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        if (t->dtype == MF_STRING) /* safetensors holds no strings (TF checkpoints have one) */
            continue;
        const char *rest = under(t->name, prefix);
        bool opt = first_segment_is(t->name, optimizer_keys);
        if (rest && (prefix[0] || !opt || o->include_optimizer))
            v[k++] = (mf_convert_item){t, clean_name(rest, a)};
        else if (!rest && opt && o->include_optimizer)
            v[k++] = (mf_convert_item){t, t->name}; /* beside the unwrapped weights */
    }
    if (o->key && k == 0)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1, "no tensors under --key \"%s\"", o->key);
    if (!o->include_optimizer)
        drop_module_attribute(v, k);
    if (check_unique(v, k, st))
        return -1;
    if (!o->keep_tied && drop_tied(v, &k, st, m->path))
        return -1;
    *items = v;
    *n = k;
    return 0;
}

/* ----------------------------------------------------------- the writer */

/* Tensors below this are streamed: an open per tensor costs more. */
#define COPY_MIN (64u << 10)

typedef struct fill_ctx {
    const mf_model *m;
    const mf_convert_item *items;
    const mf_convert_st_opts *o;
    uint64_t done, total;
    mf_sink_fn sink;
    void *sink_ctx;
} fill_ctx;

static bool castable(mf_dtype d)
{
    return d == MF_F32 || d == MF_F16 || d == MF_BF16;
}

/* opts.dtype as a type; MF_DTYPE_INVALID when NULL or not a float type. */
static mf_dtype cast_to(const mf_convert_st_opts *o)
{
    const char *v = o->dtype;
    return !v ? MF_DTYPE_INVALID : !strcasecmp(v, "f32") ? MF_F32 : !strcasecmp(v, "f16") ? MF_F16
         : !strcasecmp(v, "bf16") ? MF_BF16 : MF_DTYPE_INVALID;
}

/* The dtype a tensor is written in (opts.dtype for float tensors). */
static mf_dtype out_dtype(const mf_convert_st_opts *o, const mf_tensor *t)
{
    mf_dtype c = cast_to(o);
    return castable(c) && castable(t->dtype) ? c : t->dtype;
}

static uint64_t out_nbytes(const mf_convert_st_opts *o, const mf_tensor *t)
{
    mf_dtype d = out_dtype(o, t);
    if (d == t->dtype)
        return t->nbytes;
    return t->nbytes / mf_dtype_info_of(t->dtype)->block_bytes * mf_dtype_info_of(d)->block_bytes;
}

static int counting_sink(void *ctx, const void *buf, size_t n, mf_status *st);

/* F32/F16/BF16 to another of them, element by element (partial elements
 * carried between calls). */
typedef struct cast_sink {
    fill_ctx *f;
    mf_dtype from, to;
    uint8_t carry[4];
    size_t n_carry;
} cast_sink;

static float load_float(mf_dtype d, const uint8_t *p)
{
    if (d == MF_F32) {
        float x;
        uint32_t u = mf_rd32le(p);
        memcpy(&x, &u, 4);
        return x;
    }
    return d == MF_F16 ? mf_f16_to_f32(mf_rd16le(p)) : mf_bf16_to_f32(mf_rd16le(p));
}

static size_t store_float(mf_dtype d, float x, uint8_t *p)
{
    if (d == MF_F32) {
        uint32_t u;
        memcpy(&u, &x, 4);
        mf_wr32le(p, u);
        return 4;
    }
    mf_wr16le(p, d == MF_F16 ? mf_f32_to_f16(x) : mf_f32_to_bf16(x));
    return 2;
}

static int cast_write(void *ctx, const void *buf, size_t n, mf_status *st)
{
    cast_sink *c = ctx;
    size_t in = mf_dtype_info_of(c->from)->block_bytes, k = 0;
    uint8_t out[4096];
    const uint8_t *p = buf;
    while (n) {
        c->carry[c->n_carry++] = *p++;
        n--;
        if (c->n_carry < in)
            continue;
        c->n_carry = 0;
        k += store_float(c->to, load_float(c->from, c->carry), out + k);
        if (k + 4 > sizeof(out)) {
            if (counting_sink(c->f, out, k, st))
                return -1;
            k = 0;
        }
    }
    return k ? counting_sink(c->f, out, k, st) : 0;
}

static int counting_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    fill_ctx *f = ctx;
    if (f->sink(f->sink_ctx, buf, n, st))
        return -1;
    f->done += n;
    return mf_progress_report(f->o->progress, f->o->progress_user, f->done, f->total,
                              f->m->path, st);
}

/* Streams one tensor (mf_stream_mapped drops its pages afterwards, so
 * resident memory stays at about one tensor however large the model). */
static int fill(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    fill_ctx *f = ctx;
    f->sink = sink;
    f->sink_ctx = sink_ctx;
    const mf_tensor *t = f->items[index].t;
    mf_dtype to = out_dtype(f->o, t);
    if (to != t->dtype) {
        cast_sink c = {f, t->dtype, to, {0}, 0};
        return mf_tensor_stream(f->m, t, cast_write, &c, st);
    }
    /* stored as written (plain, contiguous) and large enough that an open
     * and a copy_file_range cost less than reading it: copied in the kernel */
    const uint8_t *plain = mf_tensor_data(f->m, t);
    const mf_file *file = plain ? mf_tensor_file(f->m, t) : NULL;
    if (file && file->base && t->nbytes >= COPY_MIN && plain >= file->base &&
        (uint64_t)(plain - file->base) + t->nbytes <= file->size) {
        if (mf_sink_copy_file(sink, sink_ctx, file->path, (uint64_t)(plain - file->base), t->nbytes, st))
            return -1;
        f->done += t->nbytes;
        return mf_progress_report(f->o->progress, f->o->progress_user, f->done, f->total, f->m->path, st);
    }
    /* runs of files laid end to end (a ZeRO partition's slices): copied in
     * the kernel too, by up to opts.threads threads */
    mf_file_run *runs;
    size_t n_runs;
    int r = mf_model_file_runs(f->m, t, &runs, &n_runs, st);
    if (r < 0)
        return -1;
    if (r == 0) {
        int rc = mf_sink_copy_runs(sink, sink_ctx, runs, n_runs, f->o->threads, st);
        free(runs);
        if (rc)
            return -1;
        f->done += t->nbytes;
        return mf_progress_report(f->o->progress, f->o->progress_user, f->done, f->total, f->m->path, st);
    }
    return mf_tensor_stream(f->m, t, counting_sink, f, st);
}

/* The index-th item of a shard: fill sees shard-local indices. */
typedef struct shard_fill {
    fill_ctx *f;
    size_t first;
} shard_fill;

static int fill_shard(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    shard_fill *s = ctx;
    return fill(s->f, s->first + index, sink, sink_ctx, st);
}

static int write_one(const mf_model *m, const char *path, const mf_convert_item *items,
                     size_t n, fill_ctx *f, size_t first, const mf_kv *meta, size_t n_meta,
                     mf_status *st)
{
    if (mf_output_check(m, path, st))
        return -1;
    mf_out_tensor *ts = calloc(n ? n : 1, sizeof(*ts));
    if (!ts)
        return mf_oom(st, path);
    for (size_t i = 0; i < n; i++) {
        const mf_tensor *t = items[first + i].t;
        ts[i].name = items[first + i].name;
        ts[i].dtype = out_dtype(f->o, t);
        ts[i].ndim = t->ndim;
        memcpy(ts[i].shape, t->shape, sizeof(ts[i].shape));
    }
    shard_fill sf = {f, first};
    int rc = mf_safetensors_write(path, ts, n, meta, n_meta, fill_shard, &sf, st);
    free(ts);
    return rc;
}

/* __metadata__: {"format": "pt"}, plus a safetensors input's own strings. */
static mf_kv *output_meta(const mf_model *m, mf_arena *a, size_t *n)
{
    mf_kv *kv = mf_arena_calloc(a, m->n_meta + 1, sizeof(*kv));
    if (!kv)
        return NULL;
    kv[0].key = "format";
    kv[0].v = mf_value_str(a, "pt", 2);
    *n = 1;
    if (m->format != MF_FMT_SAFETENSORS)
        return kv;
    for (size_t i = 0; i < m->n_meta; i++)
        if (m->meta[i].v.type == MF_V_STR && strcmp(m->meta[i].key, "format") != 0)
            kv[(*n)++] = m->meta[i];
    return kv;
}

/* Shard boundaries: first index of each shard, and the count. */
static size_t plan_shards(const mf_convert_st_opts *o, const mf_convert_item *items, size_t n,
                          uint64_t max, size_t *starts)
{
    size_t ns = 0;
    uint64_t cur = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t sz = out_nbytes(o, items[i].t);
        if (ns == 0 || (cur > 0 && cur + sz > max)) {
            starts[ns++] = i;
            cur = 0;
        }
        cur += sz;
    }
    if (ns == 0)
        starts[ns++] = 0;
    return ns;
}

static int write_index(const char *path, const char *const *shard_names, const size_t *starts,
                       size_t ns, const mf_convert_item *items, size_t n, uint64_t total,
                       mf_status *st)
{
    json_t *root = json_object(), *md = json_object(), *wm = json_object();
    json_object_set_new(md, "total_size", json_integer((json_int_t)total));
    json_object_set_new(root, "metadata", md);
    for (size_t s = 0; s < ns; s++) {
        size_t end = s + 1 < ns ? starts[s + 1] : n;
        for (size_t i = starts[s]; i < end; i++)
            json_object_set_new(wm, items[i].name, json_string(shard_names[s]));
    }
    json_object_set_new(root, "weight_map", wm);
    char *text = mf_json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(root);
    if (!text)
        return mf_oom(st, path);
    mf_atomic *w;
    int rc = mf_atomic_open(path, &w, st);
    if (rc == 0) {
        rc = mf_atomic_write(w, text, strlen(text), st);
        if (rc == 0)
            rc = mf_atomic_write(w, "\n", 1, st);
        rc = rc == 0 ? mf_atomic_commit(w, st) : (mf_atomic_abort(w), -1);
    }
    free(text);
    return rc;
}

static int write_sharded(const mf_model *m, const char *out, const mf_convert_item *items,
                         size_t n, fill_ctx *f, const mf_kv *meta, size_t n_meta, mf_arena *a,
                         size_t *n_files, mf_status *st)
{
    size_t *starts = mf_arena_calloc(a, n + 1, sizeof(size_t));
    if (!starts)
        return mf_oom(st, out);
    size_t ns = plan_shards(f->o, items, n, f->o->max_shard_size, starts);
    *n_files = ns;
    if (ns == 1)
        return write_one(m, out, items, n, f, 0, meta, n_meta, st);
    size_t ol = strlen(out), sl = strlen(".safetensors");
    char *prefix = ol > sl && strcmp(out + ol - sl, ".safetensors") == 0
                       ? mf_arena_strndup(a, out, ol - sl) : mf_arena_strdup(a, out);
    const char *slash = prefix ? strrchr(prefix, '/') : NULL;
    const char **paths = mf_arena_calloc(a, ns, sizeof(char *));
    const char **names = mf_arena_calloc(a, ns, sizeof(char *));
    char *index = mf_arena_printf(a, "%s.index.json", out);
    if (!prefix || !paths || !names || !index)
        return mf_oom(st, out);
    if (mf_output_check(m, index, st))
        return -1;
    for (size_t s = 0; s < ns; s++) {
        paths[s] = mf_arena_printf(a, "%s-%05zu-of-%05zu.safetensors", prefix, s + 1, ns);
        names[s] = paths[s] ? (slash ? paths[s] + (slash - prefix) + 1 : paths[s]) : NULL;
        if (!paths[s])
            return mf_oom(st, out);
        if (mf_output_check(m, paths[s], st))
            return -1;
    }
    /* the shards and the index appear together or not at all */
    mf_atomic_set *set;
    if (mf_atomic_set_begin(prefix, &set, st))
        return -1;
    int rc = 0;
    for (size_t s = 0; s < ns && rc == 0; s++) {
        const char *staged = mf_atomic_set_add(set, paths[s], st);
        size_t end = s + 1 < ns ? starts[s + 1] : n;
        rc = staged ? write_one(m, staged, items, end - starts[s], f, starts[s], meta, n_meta, st)
                    : -1;
    }
    const char *staged_index = rc == 0 ? mf_atomic_set_add(set, index, st) : NULL;
    if (rc == 0)
        rc = staged_index ? write_index(staged_index, names, starts, ns, items, n, f->total, st)
                          : -1;
    return rc == 0 ? mf_atomic_set_commit(set, st) : (mf_atomic_set_abort(set), -1);
}

void mf_convert_st_opts_init(mf_convert_st_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

int mf_convert_to_safetensors(const mf_model *m, const char *out,
                              const mf_convert_st_opts *opts, mf_convert_st_result *res,
                              mf_status *st)
{
    MF_ST_GUARD(st);
    if (res)
        memset(res, 0, sizeof(*res));
    mf_convert_st_opts oc;
    mf_convert_st_opts_init(&oc);
    if (mf_opts_copy(&oc, sizeof(oc), opts, "mf_convert_st_opts", st))
        return -1;
    const mf_convert_st_opts *o = &oc;
    if (o->dtype && cast_to(o) == MF_DTYPE_INVALID)
        return mf_fail(st, MF_ERR_USAGE, out, -1, "dtype \"%s\": f32, f16 or bf16", o->dtype);
    /* packed tensors (MLX's triples) are written as their logical,
     * dequantized tensors (the reader's logical_view hook) */
    mf_model *view;
    if (mf_model_logical_view_as(m, MF_DTYPE_INVALID, &view, st))
        return -1;
    if (view) {
        int rc = mf_convert_to_safetensors(view, out, o, res, st);
        mf_close(view);
        return rc;
    }
    mf_arena *a = mf_arena_new();
    if (!a)
        return mf_oom(st, out);
    mf_convert_item *items;
    size_t n, n_meta = 0;
    int rc = mf_convert_select(m, o, a, &items, &n, st);
    mf_kv *meta = rc == 0 ? output_meta(m, a, &n_meta) : NULL;
    if (rc == 0 && !meta)
        rc = mf_oom(st, out);
    if (rc == 0) {
        fill_ctx f = {.m = m, .items = items, .o = o};
        for (size_t i = 0; i < n; i++)
            f.total += out_nbytes(o, items[i].t);
        size_t files = 1;
        if (o->max_shard_size)
            rc = write_sharded(m, out, items, n, &f, meta, n_meta, a, &files, st);
        else
            rc = write_one(m, out, items, n, &f, 0, meta, n_meta, st);
        if (rc == 0 && res)
            *res = (mf_convert_st_result){.n_tensors = n, .tensor_bytes = f.total, .n_files = files};
    }
    mf_arena_free(a);
    return rc;
}

