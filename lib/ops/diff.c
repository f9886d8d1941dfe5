/* diff.c - tensor-by-tensor comparison: bytes when the dtypes agree, values
 * (as float32) when they do not or when the bytes differ. */
#include "ops/diff.h"
#include "ops/tensor_f32.h"

#include <math.h>
#include <stdlib.h>

const char *mf_diff_kind_name(mf_diff_kind k)
{
    static const char *const n[] = {"same", "same-values", "differ", "shape", "only-a",
                                    "only-b", "incomparable"};
    return (unsigned)k < 7 ? n[k] : "?";
}

static bool same_shape(const mf_tensor *a, const mf_tensor *b)
{
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* One hasher for the whole run (creating an OpenSSL context per tensor
 * costs more than hashing a small tensor); final_hex resets it. */
static int same_bytes(const mf_model *ma, const mf_tensor *a, const mf_model *mb,
                      const mf_tensor *b, mf_hasher *h, bool *same, mf_status *st)
{
    char ha[129], hb[129];
    if (mf_tensor_stream(ma, a, mf_hasher_sink, h, st))
        return -1;
    mf_hasher_final_hex(h, ha);
    if (mf_tensor_stream(mb, b, mf_hasher_sink, h, st))
        return -1;
    mf_hasher_final_hex(h, hb);
    *same = strcmp(ha, hb) == 0;
    return 0;
}

static void value_stats(const float *x, const float *y, uint64_t n, mf_diff_row *r)
{
    double sum2 = 0, dot = 0, nx = 0, ny = 0, mx = 0;
    uint64_t nd = 0;
    for (uint64_t i = 0; i < n; i++) {
        bool both_nan = isnan(x[i]) && isnan(y[i]);
        double d = both_nan ? 0 : fabs((double)x[i] - (double)y[i]);
        if (!both_nan && !(x[i] == y[i])) {
            nd++;
            if (isnan(d) || d > mx)
                mx = isnan(d) ? INFINITY : d;
        }
        if (isfinite(d))
            sum2 += d * d;
        dot += (double)x[i] * y[i];
        nx += (double)x[i] * x[i];
        ny += (double)y[i] * y[i];
    }
    r->max_abs = mx;
    r->rmse = n ? sqrt(sum2 / (double)n) : 0;
    r->cosine = nx > 0 && ny > 0 ? dot / sqrt(nx * ny) : (nx == ny ? 1 : 0);
    r->n_diff = nd;
    r->rms_a = n ? sqrt(nx / (double)n) : 0;
    r->rms_b = n ? sqrt(ny / (double)n) : 0;
}

static int compare_values(const mf_model *ma, const mf_tensor *a, const mf_model *mb,
                          const mf_tensor *b, mf_diff_row *r, mf_status *st)
{
    if (!mf_dtype_to_f32_supported(a->dtype) || !mf_dtype_to_f32_supported(b->dtype)) {
        r->kind = MF_DIFF_INCOMPARABLE;
        return 0;
    }
    float *x = NULL, *y = NULL;
    int rc = mf_tensor_read_f32(ma, a, &x, st);
    if (rc == 0)
        rc = mf_tensor_read_f32(mb, b, &y, st);
    if (rc == 0) {
        value_stats(x, y, mf_tensor_nelems(a), r);
        r->kind = r->n_diff ? MF_DIFF_VALUES : MF_DIFF_SAME_VALUES;
    }
    free(x);
    free(y);
    return rc;
}

static int compare_pair(const mf_model *ma, const mf_tensor *a, const mf_model *mb,
                        const mf_tensor *b, mf_hasher *h, mf_diff_row *r, mf_status *st)
{
    if (mf_tensor_nelems(a) != mf_tensor_nelems(b) || !same_shape(a, b)) {
        r->kind = MF_DIFF_SHAPE;
        return 0;
    }
    if (a->dtype == b->dtype) {
        bool same;
        if (same_bytes(ma, a, mb, b, h, &same, st))
            return -1;
        if (same) {
            r->kind = MF_DIFF_SAME_BYTES;
            return 0;
        }
    }
    return compare_values(ma, a, mb, b, r, st);
}

static int diff_rows(const mf_model *a, const mf_model *b, const mf_tensor_index *ia,
                     const mf_tensor_index *ib, mf_hasher *h,
                     int (*row)(void *ctx, const mf_diff_row *r), void *ctx, mf_status *st)
{
    MF_ST_GUARD(st);
    for (size_t i = 0; i < a->n_tensors; i++) {
        const mf_tensor *ta = &a->tensors[i], *tb = mf_tensor_index_find(ib, ta->name);
        mf_diff_row r = {.name = ta->name, .a = ta, .b = tb, .kind = MF_DIFF_ONLY_A};
        if (tb && compare_pair(a, ta, b, tb, h, &r, st))
            return -1;
        if (row(ctx, &r))
            return -1;
    }
    for (size_t i = 0; i < b->n_tensors; i++) {
        const mf_tensor *tb = &b->tensors[i];
        if (mf_tensor_index_find(ia, tb->name))
            continue;
        mf_diff_row r = {.name = tb->name, .b = tb, .kind = MF_DIFF_ONLY_B};
        if (row(ctx, &r))
            return -1;
    }
    return 0;
}

/* Name lookups through hash indexes: linear in the tensor counts (a
 * 200k-tensor file against itself was quadratic with mf_tensor_find). */
int mf_diff(const mf_model *a, const mf_model *b, int (*row)(void *ctx, const mf_diff_row *r),
            void *ctx, mf_status *st)
{
    mf_tensor_index ia = {0}, ib = {0};
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    int rc = !h || mf_tensor_index_build(a, &ia) || mf_tensor_index_build(b, &ib)
                 ? mf_oom(st, a->path)
                 : diff_rows(a, b, &ia, &ib, h, row, ctx, st);
    if (h)
        mf_hasher_free(h);
    mf_tensor_index_free(&ia);
    mf_tensor_index_free(&ib);
    return rc;
}

/* ------------------------------------------------------------ metadata */

const char *mf_meta_diff_kind_name(mf_meta_diff_kind k)
{
    static const char *const n[] = {"same", "changed", "type", "only-a", "only-b"};
    return (unsigned)k < 5 ? n[k] : "?";
}

/* Open addressing over the key names, the first of equal keys kept (as
 * mf_meta_get finds it). */
typedef struct meta_index {
    const mf_model *m;
    size_t *slot, cap; /* slot: index + 1, 0 = empty */
} meta_index;

static int meta_index_build(const mf_model *m, meta_index *ix)
{
    size_t cap = 64;
    while (cap < 2 * m->n_meta + 2)
        cap *= 2;
    ix->m = m;
    ix->cap = cap;
    if (!(ix->slot = calloc(cap, sizeof(*ix->slot))))
        return -1;
    for (size_t i = 0; i < m->n_meta; i++) {
        size_t k = mf_str_hash(m->meta[i].key) & (cap - 1);
        bool dup = false;
        for (; ix->slot[k] && !dup; k = (k + 1) & (cap - 1))
            dup = strcmp(m->meta[ix->slot[k] - 1].key, m->meta[i].key) == 0;
        if (!dup)
            ix->slot[k] = i + 1;
    }
    return 0;
}

static const mf_kv *meta_index_find(const meta_index *ix, const char *key)
{
    for (size_t k = mf_str_hash(key) & (ix->cap - 1); ix->slot[k]; k = (k + 1) & (ix->cap - 1))
        if (strcmp(ix->m->meta[ix->slot[k] - 1].key, key) == 0)
            return &ix->m->meta[ix->slot[k] - 1];
    return NULL;
}

static mf_meta_diff_kind meta_kind(const mf_value *a, const mf_value *b)
{
    if (a->type != b->type)
        return MF_META_TYPE;
    return mf_value_equal(a, b) ? MF_META_SAME : MF_META_CHANGED;
}

static int meta_rows(const mf_model *a, const mf_model *b, const meta_index *ia,
                     const meta_index *ib, mf_meta_diff_fn row, void *user, mf_status *st)
{
    for (size_t i = 0; i < a->n_meta; i++) {
        const mf_kv *ka = &a->meta[i];
        if (meta_index_find(ia, ka->key) != ka)
            continue; /* a repeated key: its first occurrence was compared */
        const mf_kv *kb = meta_index_find(ib, ka->key);
        mf_meta_diff_row r = {.key = ka->key, .a = &ka->v, .b = kb ? &kb->v : NULL,
                              .kind = kb ? meta_kind(&ka->v, &kb->v) : MF_META_ONLY_A};
        if (row(user, &r))
            return mf_fail(st, MF_ERR_CANCELLED, a->path, -1, "metadata diff cancelled");
    }
    for (size_t i = 0; i < b->n_meta; i++) {
        const mf_kv *kb = &b->meta[i];
        if (meta_index_find(ib, kb->key) != kb || meta_index_find(ia, kb->key))
            continue;
        mf_meta_diff_row r = {.key = kb->key, .b = &kb->v, .kind = MF_META_ONLY_B};
        if (row(user, &r))
            return mf_fail(st, MF_ERR_CANCELLED, b->path, -1, "metadata diff cancelled");
    }
    return 0;
}

int mf_diff_metadata(const mf_model *a, const mf_model *b, mf_meta_diff_fn row, void *user,
                     mf_status *st)
{
    MF_ST_GUARD(st);
    if (!a || !b || !row)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "mf_diff_metadata: a model or the callback is NULL");
    meta_index ia = {0}, ib = {0};
    int rc = meta_index_build(a, &ia) || meta_index_build(b, &ib)
                 ? mf_oom(st, a->path)
                 : meta_rows(a, b, &ia, &ib, row, user, st);
    free(ia.slot);
    free(ib.slot);
    return rc;
}
