/* npy_pickle.c - the pickles that NumPy object arrays carry, for the
 * scanner: np.save writes an object array as a pickle right after the .npy
 * header (numpy/lib/format.py write_array), to the end of the file or member. */
#include "formats/numpy/npy.h"

#include <stdlib.h>

/* An inflated member's pickle is held in memory to be scanned; beyond
 * this it is refused rather than inflated. */
#define MAX_INFLATED_PICKLE (256u << 20)

static int npy_pickle(const mf_file *f, mf_npy_pickle_fn fn, void *ctx, mf_status *st)
{
    mf_npy_header h;
    if (mf_npy_parse_header(f->base, f->size, f->path, 0, &h, st)) {
        if (!h.maybe_pickle || !h.data_offset || h.data_offset > f->size)
            return -1;
        mf_status_clear(st); /* numpy may unpickle it: the caller scans it */
        mf_status_init(st);
        h.is_object = true;
    }
    if (!h.is_object)
        return 0;
    if (fn(ctx, "", f->base + h.data_offset, (size_t)(f->size - h.data_offset), h.data_offset,
           st))
        return -1;
    return 1;
}

static int member_pickle(const mf_zip *z, const mf_zip_entry *e, const mf_npy_header *h,
                         mf_npy_pickle_fn fn, void *ctx, mf_status *st)
{
    if (e->method == 0) {
        const uint8_t *p = mf_zip_stored_data(z, e, st);
        if (!p)
            return -1;
        return fn(ctx, e->name, p + h->data_offset, (size_t)(e->usize - h->data_offset),
                  e->data_offset + h->data_offset, st);
    }
    uint8_t *buf;
    size_t n;
    if (mf_zip_extract(z, e, MAX_INFLATED_PICKLE, &buf, &n, st))
        return -1;
    int rc = n < h->data_offset
                 ? mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                           "npz: member \"%s\" is shorter than its header", e->name)
                 : fn(ctx, e->name, buf + h->data_offset, n - (size_t)h->data_offset,
                      e->data_offset, st);
    free(buf);
    return rc;
}

static int npz_pickles(const mf_file *f, mf_npy_pickle_fn fn, void *ctx, mf_status *st)
{
    mf_arena *a = mf_arena_new();
    if (!a)
        return mf_oom(st, f->path);
    mf_zip z;
    int found = 0;
    if (mf_zip_open(&z, f->base, f->size, f->path, a, st))
        found = -1;
    for (size_t i = 0; found >= 0 && i < z.n; i++) {
        const mf_zip_entry *e = &z.entries[i];
        size_t l = strlen(e->name);
        if (l < 4 || strcmp(e->name + l - 4, ".npy") != 0)
            continue;
        mf_npy_header h;
        mf_status tmp;
        mf_status_init(&tmp);
        /* a member whose header is broken or not an array type cannot hold
         * a pickle np.load would run: the reader reports those */
        int rc = mf_npz_member_header(&z, e, &h, &tmp);
        mf_status_clear(&tmp);
        if (rc ? !h.maybe_pickle || !h.data_offset : !h.is_object)
            continue; /* np.load would not unpickle it */
        if (member_pickle(&z, e, &h, fn, ctx, st))
            found = -1;
        else
            found++;
    }
    mf_arena_free(a);
    return found;
}

int mf_numpy_each_pickle(const char *path, mf_npy_pickle_fn fn, void *ctx, mf_status *st)
{
    mf_file f;
    if (mf_map_file(path, &f, st))
        return -1;
    int rc;
    if (f.size >= 6 && memcmp(f.base, MF_NPY_MAGIC, 6) == 0)
        rc = npy_pickle(&f, fn, ctx, st);
    else if (mf_zip_starts(f.base, f.size)) /* np.load's test */
        rc = npz_pickles(&f, fn, ctx, st);
    else
        rc = mf_fail(st, MF_ERR_FORMAT, path, 0, "neither a .npy nor an .npz file");
    mf_unmap_file(&f);
    return rc;
}
