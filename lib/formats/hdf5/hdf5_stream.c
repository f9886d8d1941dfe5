/* hdf5_stream.c - canonical bytes (C order, little-endian) of datasets that
 * are not plainly mapped: chunked ones (any index, any filters mfmt knows)
 * and never-written ones (fill value).
 *
 * Memory stays bounded: the output is built one "unit" at a time, a slab
 * of whole C-order rows that one chunk row covers (at most UNIT_CAP bytes;
 * when a slab would be larger, the unit narrows to fixed leading indices
 * and chunks are decoded again for each unit). Peak: one unit, one chunk
 * and two filter scratch buffers. */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

enum { UNIT_CAP = 64 << 20, FILL_BUF = 1 << 20 };
/* Fill value mfmt synthesises for never-written storage beyond the size of
 * the file itself: a 1.4 KB file may declare a 2^20 x 2^20 dataset with no
 * chunk written, and streaming its 4 TiB of fill would hang every hash,
 * diff and convert. Work stays bounded by what the file holds. */
#define FILL_ALLOWANCE (256ull << 20)
/* Filtered chunks: decoded bytes per stored byte. Deflate cannot pass
 * 1032:1, but blosc (zstd) keeps a 4 MiB chunk of zeros in 244 bytes
 * (17000:1) and scale-offset a chunk of equal values in 21: PyTables
 * writes a 1.25 GiB array of zeros into 94 KB, and that must read. A file
 * of thousands of such chunks, though, stands for terabytes: beyond
 * RATIO_FREE of output (tens of seconds of work) a dataset must keep to
 * RATIO_MAX. */
#define RATIO_MAX 4096ull
#define RATIO_FREE (16ull << 30)
/* Largest chunk mfmt decodes (HDF5 limits chunks to 4 GB). */
#define CHUNK_CAP (1ull << 32)


static void fill_pattern(uint8_t *buf, uint64_t n, const h5_dset *d)
{
    if (!d->fill) {
        memset(buf, 0, (size_t)n);
        return;
    }
    for (uint64_t i = 0; i + d->esize <= n; i += d->esize)
        memcpy(buf + i, d->fill, d->esize);
}

/* A dataset with no storage yet: every element is the fill value. */
static int stream_fill(const h5_dset *d, uint64_t nbytes, mf_sink_fn sink, void *ctx,
                       mf_status *st)
{
    uint64_t cap = FILL_BUF - FILL_BUF % d->esize;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return mf_oom(st, d->file->label);
    fill_pattern(buf, cap, d);
    if (d->big_endian)
        mf_swap_bytes(buf, cap, d->esize);
    int rc = 0;
    for (uint64_t off = 0; off < nbytes && rc == 0; off += cap)
        rc = sink(ctx, buf, (size_t)(nbytes - off < cap ? nbytes - off : cap), st);
    free(buf);
    return rc;
}

typedef struct assembler {
    h5_file *f;
    const h5_dset *d;
    int r;
    uint64_t dims[MF_MAX_DIMS], ch[MF_MAX_DIMS], nch[MF_MAX_DIMS], down[MF_MAX_DIMS];
    uint64_t cstride[MF_MAX_DIMS]; /* element strides inside a chunk */
    uint32_t es;
    uint64_t chunk_bytes;
    h5_chunks list;
    bool implicit;
    uint64_t imp_down[MF_MAX_DIMS]; /* implicit index: strides over the max grid */
    uint8_t *scratch[2], *fillchunk;
    const uint8_t *cur;     /* decoded chunk */
    uint64_t cur_lin;
    bool have_cur;
} assembler;

static const h5_chunk *find_chunk(const assembler *a, uint64_t lin)
{
    size_t lo = 0, hi = a->list.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->list.v[mid].lin < lin)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->list.n && a->list.v[lo].lin == lin ? &a->list.v[lo] : NULL;
}

static bool is_edge(const assembler *a, const uint64_t *s)
{
    for (int i = 0; i < a->r; i++)
        if ((s[i] + 1) * a->ch[i] > a->dims[i])
            return true;
    return false;
}

/* Points a->cur at the decoded bytes of chunk `s` (or the fill chunk). */
static int load_chunk(assembler *a, const uint64_t *s, uint64_t lin)
{
    if (a->have_cur && a->cur_lin == lin)
        return 0;
    h5_file *f = a->f;
    h5_chunk imp, *c = NULL;
    if (a->implicit) {
        uint64_t k = 0;
        for (int i = 0; i < a->r; i++)
            k += s[i] * a->imp_down[i];
        imp = (h5_chunk){lin, a->d->layout.addr + k * a->chunk_bytes, a->chunk_bytes, 0};
        c = a->d->layout.addr == H5_UNDEF ? NULL : &imp;
    } else {
        c = (h5_chunk *)find_chunk(a, lin);
    }
    a->cur_lin = lin;
    a->have_cur = true;
    if (!c) {
        if (!a->fillchunk) {
            if (!(a->fillchunk = malloc((size_t)a->chunk_bytes)))
                return mf_oom(f->st, f->label);
            fill_pattern(a->fillchunk, a->chunk_bytes, a->d);
        }
        a->cur = a->fillchunk;
        return 0;
    }
    bool filtered = a->d->pipeline.n > 0 &&
                    !((a->d->layout.flags & 1) && is_edge(a, s)); /* partial edge chunks raw */
    uint64_t stored = filtered ? c->size : a->chunk_bytes, pos;
    if (h5_locate(f, c->addr, stored, "chunk data", &pos)) {
        a->have_cur = false;
        return -1;
    }
    if (!filtered) {
        a->cur = f->base + pos;
        return 0;
    }
    const uint8_t *out;
    uint64_t out_len;
    if (h5_filters_decode(f, a->d, c, f->base + pos, stored, a->chunk_bytes, a->scratch, &out,
                          &out_len)) {
        a->have_cur = false;
        return -1;
    }
    if (out_len != a->chunk_bytes) {
        a->have_cur = false;
        return mf_fail(f->st, MF_ERR_FORMAT, f->label, (int64_t)(f->origin + pos),
                       "dataset %s: chunk %llu decodes to %llu bytes, not %llu", a->d->name,
                       (unsigned long long)lin, (unsigned long long)out_len,
                       (unsigned long long)a->chunk_bytes);
    }
    a->cur = out;
    return 0;
}

/* Copies the part of chunk `s` that unit (idx[0..L-1] fixed, dim L in
 * chunk s[L]) holds into the unit buffer `u` of shape ushape. */
static void copy_part(const assembler *a, int L, const uint64_t *idx, const uint64_t *s,
                      uint8_t *u, const uint64_t *ushape)
{
    int r = a->r;
    uint64_t lo[MF_MAX_DIMS], ext[MF_MAX_DIMS], dst0[MF_MAX_DIMS], ustride[MF_MAX_DIMS];
    uint64_t acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        ustride[d] = acc;
        acc *= ushape[d];
    }
    for (int d = 0; d < r; d++) {
        uint64_t start = s[d] * a->ch[d];
        if (d < L) {
            lo[d] = idx[d] - start;
            ext[d] = 1;
            dst0[d] = 0;
        } else {
            lo[d] = 0;
            ext[d] = a->dims[d] - start < a->ch[d] ? a->dims[d] - start : a->ch[d];
            dst0[d] = d == L ? 0 : start;
        }
    }
    uint64_t run = ext[r - 1] * a->es;
    uint64_t pos[MF_MAX_DIMS] = {0};
    for (;;) {
        uint64_t so = 0, dof = 0;
        for (int d = 0; d < r; d++) {
            so += (lo[d] + pos[d]) * a->cstride[d];
            dof += (dst0[d] + pos[d]) * ustride[d];
        }
        memcpy(u + dof * a->es, a->cur + so * a->es, (size_t)run);
        int d = r - 2;
        for (; d >= 0; d--) {
            if (++pos[d] < ext[d])
                break;
            pos[d] = 0;
        }
        if (d < 0)
            break;
    }
}

/* Emits one unit: every chunk that intersects it, copied in place. */
static int emit_unit(assembler *a, int L, const uint64_t *idx, uint64_t cL, uint8_t *u,
                     mf_sink_fn sink, void *ctx)
{
    int r = a->r;
    uint64_t ushape[MF_MAX_DIMS], s[MF_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        if (d < L) {
            ushape[d] = 1;
            s[d] = idx[d] / a->ch[d];
        } else if (d == L) {
            uint64_t start = cL * a->ch[d];
            ushape[d] = a->dims[d] - start < a->ch[d] ? a->dims[d] - start : a->ch[d];
            s[d] = cL;
        } else {
            ushape[d] = a->dims[d];
            s[d] = 0;
        }
    }
    for (;;) {
        uint64_t lin = 0;
        for (int d = 0; d < r; d++)
            lin += s[d] * a->down[d];
        if (load_chunk(a, s, lin))
            return -1;
        copy_part(a, L, idx, s, u, ushape);
        int d = r - 1;
        for (; d > L; d--) {
            if (++s[d] < a->nch[d])
                break;
            s[d] = 0;
        }
        if (d <= L)
            break;
    }
    uint64_t n = a->es;
    for (int d = 0; d < r; d++)
        n *= ushape[d];
    if (a->d->big_endian)
        mf_swap_bytes(u, n, a->es);
    return sink(ctx, u, (size_t)n, a->f->st);
}

static int setup(assembler *a)
{
    const h5_dset *d = a->d;
    h5_file *f = a->f;
    a->r = d->space.ndims;
    a->es = d->esize;
    uint64_t cb = a->es, cs = 1;
    for (int i = a->r - 1; i >= 0; i--) {
        a->dims[i] = d->space.dims[i];
        a->ch[i] = d->layout.chunk[i];
        a->nch[i] = a->dims[i] / a->ch[i] + (a->dims[i] % a->ch[i] != 0);
        a->cstride[i] = cs;
        if (mf_mul_ovf(cs, a->ch[i], &cs) || mf_mul_ovf(cb, a->ch[i], &cb) || cb > CHUNK_CAP)
            return mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, -1,
                           "dataset %s: chunks of more than 4 GB are not supported", d->name);
    }
    a->chunk_bytes = cb;
    /* compressed chunks cannot expand beyond zlib's ratio: refuse chunks a
     * file this small cannot hold */
    uint64_t limit;
    if (mf_mul_ovf(f->size, 1100, &limit))
        limit = UINT64_MAX;
    if (cb > limit && cb > (64u << 20))
        return mf_fail(f->st, MF_ERR_FORMAT, f->label, -1,
                       "dataset %s: chunks of %llu bytes cannot come from a %llu-byte file",
                       d->name, (unsigned long long)cb, (unsigned long long)f->size);
    uint64_t down = 1;
    for (int i = a->r - 1; i >= 0; i--) {
        a->down[i] = down;
        down *= a->nch[i] ? a->nch[i] : 1;
    }
    a->implicit = d->layout.index == H5I_IMPLICIT;
    if (a->implicit) {
        uint64_t k = 1, total;
        for (int i = a->r - 1; i >= 0; i--) {
            uint64_t mx = d->space.maxdims[i];
            uint64_t m = mx == H5_UNDEF ? a->nch[i] : mx / a->ch[i] + (mx % a->ch[i] != 0);
            a->imp_down[i] = k;
            if (mf_mul_ovf(k, m, &k))
                return mf_fail(f->st, MF_ERR_FORMAT, f->label, -1, "dataset %s: chunk grid overflows",
                               d->name);
        }
        uint64_t pos;
        if (d->layout.addr != H5_UNDEF &&
            (mf_mul_ovf(k, cb, &total) || h5_locate(f, d->layout.addr, total, "implicit chunk array", &pos)))
            return -1;
    } else if (h5_chunks_list(f, d, &a->list)) {
        return -1;
    }
    if (d->pipeline.n > 0) {
        a->scratch[0] = malloc((size_t)cb);
        a->scratch[1] = malloc((size_t)cb);
        if (!a->scratch[0] || !a->scratch[1])
            return mf_oom(f->st, f->label);
    }
    return 0;
}

static int stream_chunked(assembler *a, mf_sink_fn sink, void *ctx)
{
    int r = a->r, L = r - 1;
    for (int l = 0; l < r; l++) { /* the widest unit that fits the cap */
        uint64_t n = a->es * (a->ch[l] < a->dims[l] ? a->ch[l] : a->dims[l]);
        bool ok = true;
        for (int d = l + 1; d < r && ok; d++)
            ok = !mf_mul_ovf(n, a->dims[d], &n);
        if (ok && n <= UNIT_CAP) {
            L = l;
            break;
        }
    }
    uint64_t ubytes = a->es * (a->ch[L] < a->dims[L] ? a->ch[L] : a->dims[L]);
    for (int d = L + 1; d < r; d++)
        ubytes *= a->dims[d];
    uint8_t *u = malloc((size_t)ubytes);
    if (!u)
        return mf_oom(a->f->st, a->f->label);
    uint64_t idx[MF_MAX_DIMS] = {0}, cL = 0;
    int rc = 0;
    for (;;) {
        if ((rc = emit_unit(a, L, idx, cL, u, sink, ctx)))
            break;
        if (++cL < a->nch[L])
            continue;
        cL = 0;
        int d = L - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < a->dims[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
    free(u);
    return rc;
}

/* Refuses a dataset whose unwritten part (bytes that would be fill value)
 * exceeds the allowance and the file's own size. */
static int check_fill_bound(h5_file *f, const h5_dset *d, uint64_t nbytes, uint64_t fill_bytes)
{
    uint64_t limit = f->size > FILL_ALLOWANCE ? f->size : FILL_ALLOWANCE;
    if (fill_bytes <= limit)
        return 0;
    return mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, -1,
                   "dataset %s: %llu of its %llu bytes were never written (fill value); mfmt "
                   "synthesises at most %llu bytes of fill value from a %llu-byte file: refused",
                   d->name, (unsigned long long)fill_bytes, (unsigned long long)nbytes,
                   (unsigned long long)limit, (unsigned long long)f->size);
}

/* Bytes of the chunk grid that no stored chunk covers (an upper bound:
 * edge chunks count whole). */
static uint64_t unwritten_bytes(const assembler *a, uint64_t nbytes)
{
    uint64_t total = 1, missing, bytes;
    for (int i = 0; i < a->r; i++)
        if (mf_mul_ovf(total, a->nch[i], &total))
            return nbytes;
    if (a->implicit)
        missing = a->d->layout.addr == H5_UNDEF ? total : 0;
    else
        missing = total - (a->list.n < total ? a->list.n : total);
    if (mf_mul_ovf(missing, a->chunk_bytes, &bytes))
        return nbytes;
    return bytes < nbytes ? bytes : nbytes;
}

/* Refuses filtered chunks that together decode to far more than they store. */
static int check_ratio(const assembler *a)
{
    if (a->d->pipeline.n == 0 || a->implicit || a->list.n == 0)
        return 0;
    uint64_t stored = 0, decoded, limit;
    for (size_t i = 0; i < a->list.n; i++)
        stored += a->list.v[i].size; /* each inside the file: no overflow */
    if (mf_mul_ovf(a->list.n, a->chunk_bytes, &decoded))
        decoded = UINT64_MAX;
    if (mf_mul_ovf(stored, RATIO_MAX, &limit))
        limit = UINT64_MAX;
    if (limit < RATIO_FREE)
        limit = RATIO_FREE;
    if (decoded <= limit)
        return 0;
    return mf_fail(a->f->st, MF_ERR_UNSUPPORTED, a->f->label, -1,
                   "dataset %s: %zu chunks store %llu bytes but decode to %llu, more than "
                   "%llu:1 beyond %llu bytes: refused", a->d->name, a->list.n,
                   (unsigned long long)stored, (unsigned long long)decoded,
                   (unsigned long long)RATIO_MAX, (unsigned long long)RATIO_FREE);
}

int h5_dset_stream(const h5_dset *d, mf_sink_fn sink, void *ctx, mf_status *st)
{
    h5_file f = *d->file; /* a copy: this call's status, its own budget */
    f.st = st;
    f.work = 0;
    if (d->unsupported)
        return mf_fail(st, MF_ERR_UNSUPPORTED, f.label, -1, "dataset %s: %s", d->name,
                       d->unsupported);
    uint64_t n = 1, nbytes;
    for (int i = 0; i < d->space.ndims; i++)
        n *= d->space.dims[i];
    nbytes = n * d->esize; /* checked when the tensor was listed */
    if (nbytes == 0)
        return 0;
    if (d->layout.cls != H5L_CHUNKED)
        return check_fill_bound(&f, d, nbytes, nbytes) ? -1 : stream_fill(d, nbytes, sink, ctx, st);
    assembler a = {.f = &f, .d = d};
    int rc = setup(&a);
    if (rc == 0)
        rc = check_fill_bound(&f, d, nbytes, unwritten_bytes(&a, nbytes));
    if (rc == 0)
        rc = check_ratio(&a);
    if (rc == 0)
        rc = stream_chunked(&a, sink, ctx);
    MF_VEC_FREE(a.list);
    free(a.scratch[0]);
    free(a.scratch[1]);
    free(a.fillchunk);
    return rc;
}
