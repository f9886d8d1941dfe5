/* safetensors_write.c - safetensors writer: header padded with spaces to a
 * multiple of 8 (as the reference's serialize does), tensors back to back;
 * or MLX's header (sorted keys, unpadded) for mf_safetensors_write_mlx. */
#include "formats/formats.h"
#include "formats/writer_common.h"
#include "core/json_build.h"

#include <jansson.h>
#include <stdlib.h>

static json_t *tensor_entry(const mf_out_tensor *t, uint64_t off, uint64_t size, int *bad)
{
    json_t *e = json_object(), *shape = json_array(), *offs = json_array();
    mf_json_put(e, "dtype", json_string(mf_dtype_name(t->dtype)), bad);
    for (int d = 0; d < t->ndim; d++)
        mf_json_push(shape, json_integer(t->shape[d]), bad);
    mf_json_put(e, "shape", shape, bad);
    mf_json_push(offs, json_integer((json_int_t)off), bad);
    mf_json_push(offs, json_integer((json_int_t)(off + size)), bad);
    mf_json_put(e, "data_offsets", offs, bad);
    return e;
}

/* The header as JSON, or NULL when out of memory. */
static json_t *build_header(const mf_out_tensor *ts, size_t n, const uint64_t *sizes,
                            const mf_kv *meta, size_t n_meta)
{
    json_t *root = json_object();
    int bad = 0;
    if (n_meta) {
        json_t *md = json_object();
        json_incref(md); /* kept while filled, even if root refused it */
        mf_json_put(root, "__metadata__", md, &bad);
        for (size_t i = 0; i < n_meta; i++)
            if (meta[i].v.type == MF_V_STR)
                mf_json_put(md, meta[i].key, json_stringn(meta[i].v.as.s.ptr, meta[i].v.as.s.len), &bad);
        json_decref(md);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        mf_json_put(root, ts[i].name, tensor_entry(&ts[i], off, sizes[i], &bad), &bad);
        off += sizes[i];
    }
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static int write_st(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                    size_t n_meta, mf_fill_fn fill, void *ctx, bool mlx, mf_status *st)
{
    uint64_t *sizes = calloc(n ? n : 1, sizeof(uint64_t));
    if (!sizes)
        return mf_oom(st, path);
    for (size_t i = 0; i < n; i++) {
        const mf_dtype_info *di = mf_dtype_info_of(ts[i].dtype);
        if (!di || (di->is_quant && di->ggml_id >= 0) || ts[i].dtype == MF_STRING) {
            free(sizes);
            return mf_fail(st, MF_ERR_USAGE, path, -1,
                           "tensor \"%s\": dtype %s cannot be stored in safetensors",
                           ts[i].name, mf_dtype_name(ts[i].dtype));
        }
        if (mf_out_tensor_nbytes(&ts[i], path, &sizes[i], st)) {
            free(sizes);
            return -1;
        }
        uint64_t nel = 1;
        for (int d = 0; d < ts[i].ndim; d++)
            nel *= (uint64_t)ts[i].shape[d]; /* no overflow: nbytes was computed */
        if (di->bits % 8 && (nel * di->bits) % 8) {
            /* the reference reader refuses a partial last byte: do not
             * write a file it (and we) would reject */
            free(sizes);
            return mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                           "tensor \"%s\": %s elements of this shape are not a whole number of "
                           "bytes, which safetensors cannot hold",
                           ts[i].name, mf_dtype_name(ts[i].dtype));
        }
    }
    json_t *hdr = build_header(ts, n, sizes, meta, n_meta);
    char *text = hdr ? mf_json_dumps(hdr, JSON_COMPACT | (mlx ? JSON_SORT_KEYS : 0)) : NULL;
    json_decref(hdr);
    if (!text) {
        free(sizes);
        return mf_oom(st, path);
    }
    size_t tl = strlen(text), padded = mlx ? tl : (tl + 7) & ~(size_t)7;
    mf_atomic *w;
    int rc = mf_atomic_open(path, &w, st);
    if (rc == 0) {
        uint8_t len8[8];
        mf_wr64le(len8, padded);
        rc = mf_atomic_write(w, len8, 8, st);
        if (rc == 0)
            rc = mf_atomic_write(w, text, tl, st);
        for (size_t k = tl; rc == 0 && k < padded; k++)
            rc = mf_atomic_write(w, " ", 1, st);
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = mf_writer_emit(w, path, i, ts[i].name, sizes[i], sizes[i], fill, ctx, st);
        if (rc == 0)
            rc = mf_atomic_commit(w, st);
        else
            mf_atomic_abort(w);
    }
    free(text);
    free(sizes);
    return rc;
}

int mf_safetensors_write(const char *path, const mf_out_tensor *ts, size_t n,
                         const mf_kv *meta, size_t n_meta, mf_fill_fn fill, void *ctx,
                         mf_status *st)
{
    MF_ST_GUARD(st);
    return write_st(path, ts, n, meta, n_meta, fill, ctx, false, st);
}

int mf_safetensors_write_mlx(const char *path, const mf_out_tensor *ts, size_t n,
                             const mf_kv *meta, size_t n_meta, mf_fill_fn fill, void *ctx,
                             mf_status *st)
{
    return write_st(path, ts, n, meta, n_meta, fill, ctx, true, st);
}
