/* split.c - GGUF split/merge and safetensors merge over the uniform view. */
#include "ops/split.h"

#include <unistd.h>

#include <stdlib.h>

int mf_model_fill_fn(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const mf_model_fill *f = ctx;
    size_t k = f->map ? f->map[index] : index;
    if (mf_tensor_stream(f->m, &f->m->tensors[k], sink, sink_ctx, st))
        return -1;
    if (!f->done)
        return 0;
    *f->done += f->m->tensors[k].nbytes;
    return mf_progress_report(f->progress, f->progress_user, *f->done, f->total, f->m->path, st);
}

void mf_out_from_tensor(const mf_tensor *t, mf_out_tensor *o)
{
    memset(o, 0, sizeof(*o));
    o->name = t->name;
    o->dtype = t->dtype;
    o->ndim = t->ndim;
    memcpy(o->shape, t->shape, sizeof(o->shape));
}

/* gguf_add_tensor writes ggml_n_dims(t) dimensions: trailing ne of 1 (the
 * leading ones of our row-major shape) are dropped, down to one. Tools that
 * rewrite a GGUF through ggml (llama-gguf-split) do so. */
static void ggml_n_dims_shape(mf_out_tensor *o)
{
    int lead = 0;
    while (o->ndim - lead > 1 && o->shape[lead] == 1)
        lead++;
    if (!lead)
        return;
    memmove(o->shape, o->shape + lead, (size_t)(o->ndim - lead) * sizeof(o->shape[0]));
    o->ndim -= lead;
}

static bool is_split_key(const char *k)
{
    return strncmp(k, "split.", 6) == 0;
}

static mf_kv kv_of(const char *key, mf_value v)
{
    mf_kv kv = {.key = key, .v = v};
    return kv;
}

static mf_value typed(mf_vtype t, uint64_t u)
{
    mf_value v = {.type = t};
    v.as.u = u;
    return v;
}

/* llama-gguf-split counts each tensor padded to GGUF's default alignment
 * (GGML_PAD(ggml_nbytes(t), GGUF_DEFAULT_ALIGNMENT)). */
static uint64_t padded_bytes(const mf_tensor *t)
{
    return mf_align_up(t->nbytes, 32);
}

/* Files needed and where each starts (starts[nf] = n_tensors), decided as
 * llama-gguf-split's should_split does: by size when a size is given (a new
 * file when the current one would pass it, even an empty one), else a new
 * file at every multiple of max_tensors; with no_tensor_first_split the
 * first file holds no tensor. */
static size_t plan_splits(const mf_model *m, const mf_split_opts *o, size_t *starts)
{
    size_t nf = 0;
    uint64_t bytes = 0;
    starts[nf++] = 0;
    if (o->no_tensor_first_split)
        starts[nf++] = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        uint64_t b = padded_bytes(&m->tensors[i]);
        bool split = o->max_bytes ? bytes + b > o->max_bytes
                     : o->max_tensors ? i > 0 && i % o->max_tensors == 0
                                      : false;
        if (split) {
            starts[nf++] = i;
            bytes = b;
        } else {
            bytes += b;
        }
    }
    starts[nf] = m->n_tensors;
    return nf;
}

static int write_one_split(const mf_model *m, const char *path, size_t first, size_t count,
                           size_t no, size_t nf, mf_model_fill *fill, mf_status *st)
{
    size_t n_meta = no == 0 ? m->n_meta + 3 : 3, k = 0;
    mf_kv *meta = calloc(n_meta, sizeof(mf_kv));
    mf_out_tensor *outs = calloc(count ? count : 1, sizeof(mf_out_tensor));
    size_t *map = calloc(count ? count : 1, sizeof(size_t));
    if (!meta || !outs || !map) {
        free(meta); free(outs); free(map);
        return mf_oom(st, path);
    }
    if (no == 0)
        for (size_t i = 0; i < m->n_meta; i++)
            if (!is_split_key(m->meta[i].key))
                meta[k++] = m->meta[i];
    /* llama-gguf-split's order: it sets split.count last (gguf_set_val of a
     * key already there removes it and appends it again) */
    meta[k++] = kv_of("split.no", typed(MF_V_U16, no));
    meta[k++] = kv_of("split.tensors.count", typed(MF_V_I32, m->n_tensors));
    meta[k++] = kv_of("split.count", typed(MF_V_U16, nf));
    for (size_t i = 0; i < count; i++) {
        mf_out_from_tensor(&m->tensors[first + i], &outs[i]);
        ggml_n_dims_shape(&outs[i]);
        map[i] = first + i;
    }
    fill->map = map;
    int rc = mf_gguf_write(path, outs, count, meta, k, mf_model_fill_fn, fill, st);
    free(meta);
    free(outs);
    free(map);
    return rc;
}

void mf_split_opts_init(mf_split_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

static void split_path(char *path, size_t cap, const char *prefix, size_t i, size_t nf)
{
    snprintf(path, cap, "%s-%05zu-of-%05zu.gguf", prefix, i + 1, nf);
}

static uint64_t tensor_bytes(const mf_model *m)
{
    uint64_t total = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        total += m->tensors[i].nbytes;
    return total;
}

int mf_gguf_split(const mf_model *m, const char *prefix, const mf_split_opts *opts,
                  size_t *n_files, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_split_opts o;
    mf_split_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_split_opts", st))
        return -1;
    if (n_files)
        *n_files = 0;
    size_t *starts = calloc(m->n_tensors + 3, sizeof(size_t));
    if (!starts)
        return mf_oom(st, prefix);
    size_t nf = plan_splits(m, &o, starts);
    int rc = 0;
    if (nf > 99999)
        rc = mf_fail(st, MF_ERR_USAGE, prefix, -1, "%zu files: more than a split set can number", nf);
    for (size_t i = 0; i < nf && rc == 0 && o.on_shard; i++) {
        uint64_t b = 0;
        for (size_t t = starts[i]; t < starts[i + 1]; t++)
            b += padded_bytes(&m->tensors[t]);
        o.on_shard(o.on_shard_user, i, nf, starts[i], starts[i + 1] - starts[i], b);
    }
    if (o.dry_run) {
        free(starts);
        if (n_files && rc == 0)
            *n_files = nf;
        return rc;
    }
    uint64_t done = 0;
    mf_model_fill fill = {m, NULL, o.progress, o.progress_user, &done, tensor_bytes(m)};
    char path[4096];
    for (size_t i = 0; i < nf && rc == 0; i++) { /* no shard may be an input */
        split_path(path, sizeof(path), prefix, i, nf);
        rc = mf_output_check(m, path, st);
    }
    /* all shards appear together or none (mf_atomic_set, core/atomic.c) */
    mf_atomic_set *set = NULL;
    if (rc == 0)
        rc = mf_atomic_set_begin(prefix, &set, st);
    for (size_t i = 0; i < nf && rc == 0; i++) {
        split_path(path, sizeof(path), prefix, i, nf);
        const char *staged = mf_atomic_set_add(set, path, st);
        rc = staged ? write_one_split(m, staged, starts[i], starts[i + 1] - starts[i], i, nf, &fill, st)
                    : -1;
    }
    if (set)
        rc = rc == 0 ? mf_atomic_set_commit(set, st) : (mf_atomic_set_abort(set), -1);
    free(starts);
    if (n_files && rc == 0)
        *n_files = nf;
    return rc;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

void mf_merge_opts_init(mf_merge_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

int mf_merge(const mf_model *m, const char *out, const mf_merge_opts *opts, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_merge_opts o;
    mf_merge_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_merge_opts", st))
        return -1;
    bool gguf = ends_with(out, ".gguf");
    if (!gguf && !ends_with(out, ".safetensors"))
        return mf_fail(st, MF_ERR_USAGE, out, -1, "output must end in .gguf or .safetensors");
    if (mf_output_check(m, out, st)) /* any shard of the set, not only the first */
        return -1;
    mf_out_tensor *outs = calloc(m->n_tensors ? m->n_tensors : 1, sizeof(mf_out_tensor));
    mf_kv *meta = calloc(m->n_meta ? m->n_meta : 1, sizeof(mf_kv));
    if (!outs || !meta) {
        free(outs);
        free(meta);
        return mf_oom(st, out);
    }
    size_t k = 0;
    for (size_t i = 0; i < m->n_meta; i++) {
        if (is_split_key(m->meta[i].key) || (!gguf && m->meta[i].v.type != MF_V_STR))
            continue; /* safetensors metadata holds strings only */
        meta[k++] = m->meta[i];
    }
    for (size_t i = 0; i < m->n_tensors; i++) {
        mf_out_from_tensor(&m->tensors[i], &outs[i]);
        if (gguf) /* llama-gguf-split --merge writes through gguf_add_tensor */
            ggml_n_dims_shape(&outs[i]);
    }
    uint64_t done = 0;
    mf_model_fill fill = {m, NULL, o.progress, o.progress_user, &done, tensor_bytes(m)};
    int rc = gguf ? mf_gguf_write(out, outs, m->n_tensors, meta, k, mf_model_fill_fn, &fill, st)
                  : mf_safetensors_write(out, outs, m->n_tensors, meta, k, mf_model_fill_fn,
                                         &fill, st);
    free(outs);
    free(meta);
    return rc;
}
