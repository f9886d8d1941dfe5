/* stream.c - canonical tensor bytes: C order, contiguous, little-endian. */
#include "core/core.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { CHUNK = 1 << 20 };

void mf_swap_bytes(uint8_t *p, uint64_t n, uint32_t esize)
{
    if (esize <= 1)
        return;
    for (uint64_t i = 0; i + esize <= n; i += esize)
        for (uint32_t a = 0, b = esize - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* Byte width to swap for a big-endian tensor: complex types swap halves. */
static size_t swap_width(const mf_tensor *t)
{
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (!di || di->block_elems != 1)
        return 1;
    if (t->dtype == MF_C64)
        return 4;
    if (t->dtype == MF_C128)
        return 8;
    return di->block_bytes;
}

static int stream_contiguous(const mf_tensor *t, mf_sink_fn sink, void *ctx,
                             mf_status *st)
{
    if (!t->big_endian || swap_width(t) <= 1) {
        for (uint64_t off = 0; off < t->nbytes; off += CHUNK) {
            uint64_t n = t->nbytes - off < CHUNK ? t->nbytes - off : CHUNK;
            if (sink(ctx, t->data + off, (size_t)n, st))
                return -1;
        }
        return 0;
    }
    uint8_t *buf = malloc(CHUNK);
    if (!buf)
        return mf_oom(st, NULL);
    size_t w = swap_width(t);
    int rc = 0;
    for (uint64_t off = 0; off < t->nbytes && rc == 0; off += CHUNK) {
        uint64_t n = t->nbytes - off < CHUNK ? t->nbytes - off : CHUNK;
        memcpy(buf, t->data + off, (size_t)n);
        mf_swap_bytes(buf, (size_t)n, w);
        rc = sink(ctx, buf, (size_t)n, st);
    }
    free(buf);
    return rc;
}

/* Gathers a strided view element by element (readers check beforehand that
 * every element it reaches lies inside the mapping). */
static int stream_strided(const mf_tensor *t, mf_sink_fn sink, void *ctx,
                          mf_status *st)
{
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (!di || di->block_elems != 1)
        return mf_fail(st, MF_ERR_UNSUPPORTED, NULL, -1,
                       "tensor \"%s\": strides on a packed type", t->name);
    size_t es = di->block_bytes;
    uint64_t total = mf_tensor_nelems(t);
    if (total == 0)
        return 0;
    uint8_t *buf = malloc(CHUNK);
    if (!buf)
        return mf_oom(st, NULL);
    int64_t idx[MF_MAX_DIMS] = {0};
    size_t fill = 0;
    int rc = 0;
    for (uint64_t k = 0; k < total && rc == 0; k++) {
        int64_t eoff = 0;
        for (int d = 0; d < t->ndim; d++)
            eoff += idx[d] * t->strides[d];
        memcpy(buf + fill, t->data + (uint64_t)eoff * es, es);
        if (t->big_endian)
            mf_swap_bytes(buf + fill, es, swap_width(t));
        fill += es;
        if (fill + es > CHUNK) {
            rc = sink(ctx, buf, fill, st);
            fill = 0;
        }
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d])
                break;
            idx[d] = 0;
        }
    }
    if (rc == 0 && fill)
        rc = sink(ctx, buf, fill, st);
    free(buf);
    return rc;
}

static bool strides_are_contiguous(const mf_tensor *t)
{
    if (!t->strides)
        return true;
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != expect)
            return false;
        expect *= t->shape[d];
    }
    return true;
}

/* The page-aligned span of a file mapping that a tensor's elements reach;
 * false when t->data is not inside one of the model's file mappings (a
 * reader's own buffer must never be advised away). */
bool mf_tensor_mapped_span(const mf_model *m, const mf_tensor *t, uint8_t **lo, size_t *len)
{
    const mf_file *f = m ? mf_tensor_file(m, t) : NULL;
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (!t->data || !f || !f->base || !di || t->nbytes == 0)
        return false;
    if (mf_source_is_remote(f->base))
        return false; /* fetched pages of a remote file must never be dropped */
    if (f->borrowed)
        return false; /* the caller's memory (mf_open_buffer): MADV_DONTNEED would zero it */
    uintptr_t base = (uintptr_t)f->base, end = base + (uintptr_t)f->size;
    if ((uintptr_t)t->data < base || (uintptr_t)t->data >= end)
        return false;
    uint64_t reach = t->nbytes;
    if (t->strides && di->block_elems == 1) {
        uint64_t last = 0;
        for (int d = 0; d < t->ndim; d++)
            last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
        reach = (last + 1) * di->block_bytes;
    }
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)t->data & ~(page - 1);
    uintptr_t b = (uintptr_t)t->data + reach < end ? (uintptr_t)t->data + reach : end;
    if (a < base || b <= a)
        return false;
    *lo = (uint8_t *)a;
    *len = b - a;
    return true;
}

/* A mapped tensor's pages are read ahead sequentially and dropped from this
 * process afterwards (the page cache keeps them), so hashing, converting or
 * quantizing a model keeps about one tensor resident, whatever its size.
 * The mappings are private and read-only: dropping a page only means the
 * next access reads it again. */
int mf_stream_mapped(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                     void *ctx, mf_status *st)
{
    if (t->nbytes == 0)
        return 0;
    if (!t->data)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m ? m->path : NULL, -1,
                       "tensor \"%s\" has no mapped data", t->name);
    if (mf_tensor_need(t, st)) /* a remote file: fetch the tensor (budget permitting) */
        return -1;
    uint8_t *lo;
    size_t len;
    bool mapped = mf_tensor_mapped_span(m, t, &lo, &len);
    if (mapped)
        madvise(lo, len, MADV_SEQUENTIAL);
    int rc = strides_are_contiguous(t) ? stream_contiguous(t, sink, ctx, st)
                                       : stream_strided(t, sink, ctx, st);
    if (mapped)
        madvise(lo, len, MADV_DONTNEED);
    return rc;
}

/* Drops a mapped tensor's pages from this process (the page cache keeps
 * them): for readers that touch t->data directly, so that reading a model
 * tensor by tensor keeps about one tensor resident. */
void mf_tensor_release(const mf_model *m, const mf_tensor *t)
{
    uint8_t *lo;
    size_t len;
    if (t->owner)
        m = t->owner;
    if (mf_tensor_mapped_span(m, t, &lo, &len))
        madvise(lo, len, MADV_DONTNEED);
}

int mf_tensor_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                     void *ctx, mf_status *st)
{
    MF_ST_GUARD(st);
    if (t->owner)
        m = t->owner;
    if (m->reader && m->reader->stream)
        return m->reader->stream(m, t, sink, ctx, st);
    return mf_stream_mapped(m, t, sink, ctx, st);
}

int mf_buf_sink_fn(void *ctx, const void *buf, size_t n, mf_status *st)
{
    mf_buf_sink *b = ctx;
    if (n > b->cap - b->n)
        return mf_fail(st, MF_ERR_FORMAT, NULL, -1, "%s",
                       b->too_long ? b->too_long : "more bytes than expected");
    memcpy(b->p + b->n, buf, n);
    b->n += n;
    return 0;
}
