/* imatrix.c - reads llama.cpp importance matrices (legacy .dat and GGUF),
 * with the arithmetic llama-quantize applies when it loads them. */
#include "formats/formats.h"
#include "ops/imatrix.h"

#include <math.h>
#include <stdlib.h>

typedef MF_VEC(mf_imatrix_entry) entry_vec;

/* ------------------------------------------------------------ helpers */

static float f32_at(const uint8_t *p, uint64_t i)
{
    uint32_t u = mf_rd32le(p + 4 * i);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int cur_i32(mf_cursor *c, int32_t *v, const char *what)
{
    uint32_t u;
    if (mf_cur_u32(c, &u, what))
        return -1;
    *v = (int32_t)u;
    return 0;
}

/* Sorts by name, keeping file order among equal names, then keeps the last
 * of each name: llama-quantize fills a map, so a repeated name overwrites. */
typedef struct ranked {
    mf_imatrix_entry e;
    size_t order;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int c = strcmp(x->e.name, y->e.name);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int finish_entries(mf_imatrix *im, entry_vec *v, const char *path, mf_status *st)
{
    ranked *r = calloc(v->n ? v->n : 1, sizeof(*r));
    if (!r)
        return mf_oom(st, path);
    for (size_t i = 0; i < v->n; i++)
        r[i] = (ranked){v->v[i], i};
    qsort(r, v->n, sizeof(*r), ranked_cmp);
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (i + 1 < v->n && strcmp(r[i].e.name, r[i + 1].e.name) == 0)
            continue; /* a later entry of the same name wins */
        v->v[k++] = r[i].e;
    }
    free(r);
    im->entries = mf_arena_calloc(im->arena, k ? k : 1, sizeof(mf_imatrix_entry));
    if (!im->entries)
        return mf_oom(st, path);
    memcpy(im->entries, v->v, k * sizeof(mf_imatrix_entry));
    im->n_entries = k;
    return 0;
}

/* llama-quantize refuses an imatrix holding NaN or infinity. */
static int check_finite(const float *x, size_t n, const char *path, int64_t off,
                        const char *name, mf_status *st)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return mf_fail(st, MF_ERR_FORMAT, path, off,
                           "entry \"%s\": value %zu is not finite (%g); llama-quantize refuses "
                           "such an importance matrix", name, i, (double)x[i]);
    return 0;
}

/* ------------------------------------------------------------ legacy */

/* One entry: int32 len, name, int32 ncall, int32 nval, nval float32. */
static int read_legacy_entry(mf_cursor *c, mf_imatrix *im, int32_t index, mf_imatrix_entry *e)
{
    int32_t len, ncall, nval;
    const uint8_t *p;
    int64_t start = (int64_t)mf_cur_off(c);
    if (cur_i32(c, &len, "name length"))
        return -1;
    if (len < 0)
        return mf_cur_fail(c, "entry %d: negative name length %d", (int)index, (int)len);
    if (mf_cur_bytes(c, (uint64_t)len, &p, "entry name"))
        return -1;
    /* llama.cpp builds the name from a C string: it ends at a NUL byte */
    e->name = mf_arena_strndup(im->arena, (const char *)p, strnlen((const char *)p, (size_t)len));
    if (!e->name)
        return mf_oom(c->st, c->file);
    if (cur_i32(c, &ncall, "ncall") || cur_i32(c, &nval, "nval"))
        return -1;
    if (nval < 1)
        return mf_cur_fail(c, "entry %d (\"%s\"): number of values is %d, must be at least 1",
                           (int)index, e->name, (int)nval);
    if (mf_cur_bytes(c, (uint64_t)nval * 4, &p, "entry values"))
        return -1;
    float *v = mf_arena_calloc(im->arena, (size_t)nval, sizeof(float));
    if (!v)
        return mf_oom(c->st, c->file);
    for (int32_t i = 0; i < nval; i++) {
        uint32_t u = mf_rd32le(p + 4 * (size_t)i);
        memcpy(&v[i], &u, 4);
        /* stored values are sums over ncall calls; llama-quantize divides
         * in float32 (float /= int converts the int to float) */
        if (ncall > 0)
            v[i] = v[i] / (float)ncall;
    }
    e->values = v;
    e->n = (size_t)nval;
    return check_finite(v, e->n, c->file, start, e->name, c->st);
}

/* After the entries: int32 last_call, int32 len, dataset name (optional). */
static int read_legacy_tail(mf_cursor *c, mf_imatrix *im)
{
    if (mf_cur_left(c) == 0)
        return 0;
    int32_t last_call, len;
    const uint8_t *p;
    if (cur_i32(c, &last_call, "last_call") || cur_i32(c, &len, "dataset name length"))
        return -1;
    if (len < 0)
        return mf_cur_fail(c, "negative dataset name length %d", (int)len);
    if (mf_cur_bytes(c, (uint64_t)len, &p, "dataset name"))
        return -1;
    im->dataset = mf_arena_strndup(im->arena, (const char *)p, (size_t)len);
    if (!im->dataset)
        return mf_oom(c->st, c->file);
    im->chunks = last_call;
    if (mf_cur_left(c))
        return mf_cur_fail(c, "%llu unexpected bytes after the dataset name",
                           (unsigned long long)mf_cur_left(c));
    return 0;
}

static int load_legacy(const mf_file *f, mf_imatrix *im, mf_status *st)
{
    mf_cursor c;
    mf_cur_init(&c, f->base, f->size, f->path, st);
    int32_t n;
    if (cur_i32(&c, &n, "number of entries"))
        return -1;
    /* every entry takes at least 16 bytes (len, ncall, nval, one value) */
    if (n < 1 || (uint64_t)n > mf_cur_left(&c) / 16)
        return mf_fail(st, MF_ERR_FORMAT, f->path, 0,
                       "number of entries %d does not fit the file (%llu bytes): not an "
                       "importance matrix?", (int)n, (unsigned long long)f->size);
    entry_vec v = {0};
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        mf_imatrix_entry e;
        rc = read_legacy_entry(&c, im, i, &e);
        if (rc == 0 && MF_VEC_PUSH(v, e))
            rc = mf_oom(st, f->path);
    }
    if (rc == 0)
        rc = read_legacy_tail(&c, im);
    if (rc == 0)
        rc = finish_entries(im, &v, f->path, st);
    MF_VEC_FREE(v);
    return rc;
}

/* -------------------------------------------------------------- GGUF */

static bool strip_suffix(const char *name, const char *suf, size_t *base_len)
{
    size_t n = strlen(name), k = strlen(suf);
    if (n <= k || strcmp(name + n - k, suf) != 0)
        return false;
    *base_len = n - k;
    return true;
}

static const mf_tensor *find_counts(const mf_model *m, const char *base, size_t len)
{
    for (size_t i = 0; i < m->n_tensors; i++) {
        size_t bl;
        const char *nm = m->tensors[i].name;
        if (strip_suffix(nm, ".counts", &bl) && bl == len && memcmp(nm, base, len) == 0)
            return &m->tensors[i];
    }
    return NULL;
}

static int gguf_tensor_floats(const mf_model *m, const mf_tensor *t, const uint8_t **out,
                              mf_status *st)
{
    if (t->dtype != MF_F32 || !mf_tensor_data(m, t))
        return mf_fail(st, MF_ERR_FORMAT, m->path, (int64_t)t->offset,
                       "tensor \"%s\" must be F32 (is %s)", t->name, mf_dtype_name(t->dtype));
    *out = t->data;
    return 0;
}

/* in_sum2 / count for each of the n_mat matrices (1 where count is 0, as
 * llama-quantize does for a tensor that never saw input). */
static int gguf_entry(const mf_model *m, mf_imatrix *im, const mf_tensor *sums,
                      const mf_tensor *counts, size_t base_len, mf_imatrix_entry *e, mf_status *st)
{
    const uint8_t *s = NULL, *cnt = NULL;
    if (gguf_tensor_floats(m, sums, &s, st) || gguf_tensor_floats(m, counts, &cnt, st))
        return -1;
    uint64_t ne0 = sums->ndim ? (uint64_t)sums->shape[sums->ndim - 1] : 1;
    uint64_t n = mf_tensor_nelems(sums), n_mat = ne0 ? n / ne0 : 0;
    if (ne0 == 0 || mf_tensor_nelems(counts) != n_mat)
        return mf_fail(st, MF_ERR_FORMAT, m->path, (int64_t)counts->offset,
                       "\"%s\" holds %llu values for %llu matrices of \"%s\"", counts->name,
                       (unsigned long long)mf_tensor_nelems(counts), (unsigned long long)n_mat,
                       sums->name);
    e->name = mf_arena_strndup(im->arena, sums->name, base_len);
    float *v = mf_arena_calloc(im->arena, (size_t)n, sizeof(float));
    if (!e->name || !v)
        return mf_oom(st, m->path);
    for (uint64_t j = 0; j < n_mat; j++) {
        float c = f32_at(cnt, j);
        for (uint64_t i = 0; i < ne0; i++) {
            v[j * ne0 + i] = c > 0.0f ? f32_at(s, j * ne0 + i) / c : 1.0f;
        }
    }
    e->values = v;
    e->n = (size_t)n;
    return check_finite(v, e->n, m->path, (int64_t)sums->offset, e->name, st);
}

static int gguf_meta(const mf_model *m, mf_imatrix *im, mf_status *st)
{
    const mf_value *ds = mf_meta_get(m, "imatrix.datasets");
    const mf_value *cc = mf_meta_get(m, "imatrix.chunk_count");
    const mf_value *cs = mf_meta_get(m, "imatrix.chunk_size");
    if (!ds || !cc || !cs)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1,
                       "missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, "
                       "imatrix.chunk_size are required)");
    if (ds->type == MF_V_ARR && ds->as.arr.n > 0 && ds->as.arr.items[0].type == MF_V_STR)
        im->dataset = ds->as.arr.items[0].as.s.ptr;
    else if (ds->type == MF_V_STR)
        im->dataset = ds->as.s.ptr;
    if (cc->type == MF_V_U32 || cc->type == MF_V_I32 || cc->type == MF_V_U64)
        im->chunks = cc->as.u > INT32_MAX ? INT32_MAX : (int)cc->as.u;
    if (im->dataset && !(im->dataset = mf_arena_strdup(im->arena, im->dataset)))
        return mf_oom(st, m->path);
    return 0;
}

static int load_gguf(const char *path, mf_imatrix *im, mf_status *st)
{
    mf_model *m;
    if (mf_open_model(path, 0, &m, st))
        return -1;
    int rc = gguf_meta(m, im, st);
    entry_vec v = {0};
    for (size_t i = 0; rc == 0 && i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        size_t bl;
        if (!strip_suffix(t->name, ".in_sum2", &bl))
            continue; /* counts are found from their sums; others ignored */
        const mf_tensor *cnt = find_counts(m, t->name, bl);
        if (!cnt) {
            rc = mf_fail(st, MF_ERR_FORMAT, path, (int64_t)t->offset,
                         "\"%s\" has no matching .counts tensor", t->name);
            break;
        }
        mf_imatrix_entry e;
        rc = gguf_entry(m, im, t, cnt, bl, &e, st);
        if (rc == 0 && MF_VEC_PUSH(v, e))
            rc = mf_oom(st, path);
    }
    for (size_t i = 0; rc == 0 && i < m->n_tensors; i++) {
        size_t bl;
        const char *nm = m->tensors[i].name;
        char sums[1024];
        if (strip_suffix(nm, ".counts", &bl) &&
            (bl + 9 > sizeof(sums) ||
             (snprintf(sums, sizeof(sums), "%.*s.in_sum2", (int)bl, nm), !mf_tensor_find(m, sums))))
            rc = mf_fail(st, MF_ERR_FORMAT, path, (int64_t)m->tensors[i].offset,
                         "\"%s\" has no matching .in_sum2 tensor", nm);
    }
    if (rc == 0 && v.n == 0)
        rc = mf_fail(st, MF_ERR_FORMAT, path, -1, "no importance data (no .in_sum2 tensors)");
    if (rc == 0)
        rc = finish_entries(im, &v, path, st);
    MF_VEC_FREE(v);
    mf_close(m);
    return rc;
}

/* ------------------------------------------------------------ public */

int mf_imatrix_load(const char *path, mf_imatrix **out, mf_status *st)
{
    *out = NULL;
    mf_imatrix *im = calloc(1, sizeof(*im));
    if (!im || !(im->arena = mf_arena_new())) {
        free(im);
        return mf_oom(st, path);
    }
    mf_file f;
    int rc = mf_map_file(path, &f, st);
    if (rc == 0) {
        /* llama-quantize tries GGUF first and falls back to the old layout */
        im->is_gguf = f.size >= 4 && memcmp(f.base, "GGUF", 4) == 0;
        if (!im->is_gguf)
            rc = f.size == 0 ? mf_fail(st, MF_ERR_FORMAT, path, 0, "empty file")
                             : load_legacy(&f, im, st);
        mf_unmap_file(&f);
        if (im->is_gguf)
            rc = load_gguf(path, im, st);
    }
    if (rc) {
        mf_imatrix_free(im);
        return -1;
    }
    *out = im;
    return 0;
}

static int entry_cmp(const void *key, const void *e)
{
    return strcmp(key, ((const mf_imatrix_entry *)e)->name);
}

const mf_imatrix_entry *mf_imatrix_find(const mf_imatrix *im, const char *name)
{
    if (!im || !im->n_entries)
        return NULL;
    return bsearch(name, im->entries, im->n_entries, sizeof(mf_imatrix_entry), entry_cmp);
}

void mf_imatrix_free(mf_imatrix *im)
{
    if (!im)
        return;
    mf_arena_free(im->arena);
    free(im);
}
