/* npz.c - NumPy .npz: a zip of .npy members (np.savez stores them,
 * np.savez_compressed deflates them; both write ZIP64 extra fields).
 * A tensor is named by its member name without ".npy". STORED members are
 * mapped as they are; DEFLATED ones are inflated by the stream callback,
 * skipping the member's own .npy header. */
#include "formats/formats.h"
#include "core/zip.h"
#include "formats/numpy/npy.h"

#include <stdlib.h>
#include <zlib.h>

typedef struct npz_priv {
    mf_zip zip;
} npz_priv;

/* Where a deflated member's array starts in its inflated bytes. */
typedef struct npz_member {
    const mf_zip_entry *e;
    uint64_t skip;
} npz_member;

/* ----------------------------------------------- inflating a prefix */

/* Inflates the first `want` bytes of a deflated member (fewer if it is
 * shorter) into malloc'd memory: zlib stops once the output is full, so
 * opening costs the header, not the member. */
static int member_prefix(const mf_zip *z, const mf_zip_entry *e, uint64_t want,
                         uint8_t **out, size_t *len, mf_status *st)
{
    uint64_t end;
    if (!e->local_ok || mf_add_ovf(e->data_offset, e->csize, &end) || end > z->size)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->local_offset,
                       "zip: member \"%s\": no valid local header, or its data runs past the "
                       "end of the file", e->name);
    if (want > e->usize)
        want = e->usize;
    uint8_t *buf = malloc(want ? (size_t)want : 1);
    if (!buf)
        return mf_oom(st, z->file);
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
        free(buf);
        return mf_oom(st, z->file);
    }
    zs.next_in = (Bytef *)(z->base + e->data_offset);
    zs.avail_in = e->csize > (1u << 30) ? (1u << 30) : (uInt)e->csize;
    zs.next_out = buf;
    zs.avail_out = (uInt)want;
    int zr = Z_OK;
    while (zs.avail_out > 0 && zr == Z_OK)
        zr = inflate(&zs, Z_NO_FLUSH);
    size_t got = (size_t)want - zs.avail_out;
    inflateEnd(&zs);
    if (got < want) {
        free(buf);
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                       "zip: member \"%s\": deflate data is corrupt or ends early (%llu of %llu "
                       "header bytes)", e->name, (unsigned long long)got, (unsigned long long)want);
    }
    *out = buf;
    *len = got;
    return 0;
}

int mf_npz_member_header(const mf_zip *z, const mf_zip_entry *e, mf_npy_header *h,
                         mf_status *st)
{
    if (e->method == 0) {
        const uint8_t *p = mf_zip_stored_data(z, e, st);
        if (!p)
            return -1;
        return mf_npy_parse_member_header(p, e->usize, z->file, e->data_offset, e->name, h, st);
    }
    if (e->method != 8)
        return mf_fail(st, MF_ERR_UNSUPPORTED, z->file, (int64_t)e->local_offset,
                       "npz: member \"%s\": compression method %u (np.load reads stored and "
                       "deflated members only)", e->name, e->method);
    /* deflate expands at most ~1032:1; a larger size claim is a lie */
    if (e->usize / 1032 > e->csize + 1)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->cd_offset,
                       "npz: member \"%s\" claims %llu bytes from %llu compressed", e->name,
                       (unsigned long long)e->usize, (unsigned long long)e->csize);
    uint8_t *buf = NULL;
    size_t n = 0;
    uint64_t need = 12;
    /* offsets in messages: the member's data offset (bytes are inflated) */
    for (int pass = 0; pass < 2; pass++) {
        if (member_prefix(z, e, need, &buf, &n, st))
            return -1;
        int rc = pass == 0 ? mf_npy_header_need(buf, n, z->file, e->data_offset, e->name, &need, st)
                           : mf_npy_parse_member_header(buf, n, z->file, e->data_offset, e->name,
                                                        h, st);
        free(buf);
        if (rc)
            return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- reader */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int check_member_crc(const mf_zip *z, const mf_zip_entry *e, mf_status *st);

static int add_member(mf_model *m, npz_priv *p, uint32_t fi, const mf_zip_entry *e,
                      unsigned flags, mf_status *st)
{
    const mf_zip *z = &p->zip;
    if (e->flags & 1)
        return mf_fail(st, MF_ERR_UNSUPPORTED, z->file, (int64_t)e->cd_offset,
                       "npz: member \"%s\" is encrypted", e->name);
    mf_npy_header h;
    if (mf_npz_member_header(z, e, &h, st))
        return -1;
    if (h.is_object)
        return mf_npy_fail_object(st, z->file, (int64_t)e->data_offset, e->name);
    uint64_t avail = e->usize - h.data_offset;
    if (h.nbytes > avail)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                       "npz: member \"%s\": the array needs %llu bytes ('%s') but %llu follow its header",
                       e->name, (unsigned long long)h.nbytes, h.descr, (unsigned long long)avail);
    if (avail > h.nbytes)
        mf_model_note(m, "member \"%s\": %llu bytes after the array data (np.load ignores them)",
                      e->name, (unsigned long long)(avail - h.nbytes));
    /* validate: the CRC (and for deflated members, the whole stream) */
    if ((flags & MF_OPEN_STRICT) && check_member_crc(z, e, st))
        return -1;
    mf_tensor *t = mf_model_add_tensor(m, st);
    if (!t)
        return -1;
    t->name = mf_arena_strndup(m->arena, e->name, strlen(e->name) - 4);
    if (!t->name)
        return mf_oom(st, z->file);
    if (mf_npy_fill_tensor(&h, t, m->arena, st))
        return -1;
    t->file = fi;
    if (e->method == 0) {
        t->offset = e->data_offset + h.data_offset;
        t->data = z->base + t->offset;
        return 0;
    }
    /* deflated: no byte offset in the file holds the array; report the
     * member's compressed data */
    t->offset = e->data_offset;
    npz_member *mb = mf_arena_alloc(m->arena, sizeof(*mb));
    if (!mb)
        return mf_oom(st, z->file);
    mb->e = e;
    mb->skip = h.data_offset;
    t->priv = mb;
    return 0;
}

static int discard(void *ctx, const void *buf, size_t n, mf_status *st)
{
    return 0;
}

static int check_member_crc(const mf_zip *z, const mf_zip_entry *e, mf_status *st)
{
    return mf_zip_stream(z, e, true, discard, NULL, st);
}

static int open_npz(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    npz_priv *p = mf_arena_alloc(m->arena, sizeof(*p));
    if (!p)
        return mf_oom(st, path);
    m->priv = p;
    const mf_file *f = &m->files[fi];
    if (mf_zip_open(&p->zip, f->base, f->size, path, m->arena, st))
        return -1;
    snprintf(m->version, sizeof(m->version), "%s", p->zip.zip64 ? "zip64" : "zip");
    m->header_bytes = f->size - p->zip.cd_offset;
    for (size_t i = 0; i < p->zip.n; i++) {
        const mf_zip_entry *e = &p->zip.entries[i];
        if (ends_with(e->name, "/"))
            continue; /* a directory record */
        if (!ends_with(e->name, ".npy")) {
            mf_model_note(m, "member \"%s\" is not a .npy array (np.load gives its raw bytes); "
                          "not listed", e->name);
            continue;
        }
        /* np.load's NpzFile opens a name through zipfile's NameToInfo: the
         * last member of that name, and it refuses what zipfile.open refuses */
        if (mf_zip_find(&p->zip, e->name) != e) {
            mf_breach(st, path, (int64_t)e->cd_offset,
                      "npz: two members named \"%s\" (np.load reads only the last, at byte %llu)",
                      e->name, (unsigned long long)mf_zip_find(&p->zip, e->name)->local_offset);
            continue;
        }
        if (e->refused && !(e->flags & 1)) {
            mf_model_note(m, "member \"%s\": np.load cannot read it (zipfile: %s); not listed",
                          e->name, e->refused);
            if (flags & MF_OPEN_STRICT)
                mf_breach(st, path, (int64_t)e->local_offset, "npz: member \"%s\": %s", e->name,
                          e->refused);
            continue;
        }
        if (add_member(m, p, fi, e, flags, st))
            return -1;
    }
    return mf_ok(st) ? 0 : -1;
}

/* ------------------------------------------------------------ streaming */

typedef struct skip_sink {
    uint64_t skip, left; /* bytes to drop first, then bytes to pass on */
    mf_sink_fn sink;
    void *ctx;
    uint8_t *buf; /* non-NULL: gather into buf instead of passing on */
    uint64_t filled;
} skip_sink;

static int skip_then_pass(void *vctx, const void *vbuf, size_t n, mf_status *st)
{
    skip_sink *s = vctx;
    const uint8_t *b = vbuf;
    if (s->skip) {
        size_t k = n < s->skip ? n : (size_t)s->skip;
        s->skip -= k;
        b += k;
        n -= k;
    }
    size_t k = n < s->left ? n : (size_t)s->left;
    if (k == 0)
        return 0; /* trailing bytes are inflated for the CRC, not passed on */
    s->left -= k;
    if (s->buf) {
        memcpy(s->buf + s->filled, b, k);
        s->filled += k;
        return 0;
    }
    return s->sink(s->ctx, b, k, st);
}

static int stream_npz(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                      mf_status *st)
{
    if (t->data || t->nbytes == 0)
        return mf_stream_mapped(m, t, sink, ctx, st);
    const npz_priv *p = m->priv;
    const npz_member *mb = t->priv;
    if (!p || !mb)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1, "tensor \"%s\" has no data", t->name);
    skip_sink s = {.skip = mb->skip, .left = t->nbytes, .sink = sink, .ctx = ctx};
    bool reorder = t->big_endian || t->strides;
    if (reorder) {
        /* byte swaps and Fortran order need the whole array at hand: about
         * one tensor of memory, as DESIGN.md allows */
        if (t->nbytes > SIZE_MAX || !(s.buf = malloc((size_t)t->nbytes)))
            return mf_oom(st, m->path);
    }
    int rc = mf_zip_stream(&p->zip, mb->e, true, skip_then_pass, &s, st);
    if (rc == 0 && s.left != 0)
        rc = mf_fail(st, MF_ERR_FORMAT, m->path, (int64_t)mb->e->data_offset,
                     "npz: member \"%s\" ended %llu bytes short of its array", mb->e->name,
                     (unsigned long long)s.left);
    if (rc == 0 && reorder) {
        mf_tensor view = *t;
        view.data = s.buf;
        rc = mf_stream_mapped(m, &view, sink, ctx, st);
    }
    free(s.buf);
    return rc;
}

/* ------------------------------------------------------------- detection */

/* An archive of .npy members (all of them: np.savez; some: still read). */
static int probe_npz(mf_probe *p)
{
    if (!p->zip)
        return MF_PROBE_NO;
    size_t npy = 0, n = p->zip->n;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(p->zip->entries[i].name);
        npy += l >= 4 && strcmp(p->zip->entries[i].name + l - 4, ".npy") == 0;
    }
    if (npy > 0 && npy == n)
        return mf_probe_found(p, MF_FMT_NUMPY_NPZ, "NumPy .npz archive (%zu arrays)", n);
    if (npy > 0)
        return mf_probe_found(p, MF_FMT_NUMPY_NPZ,
                              "NumPy .npz-like archive (%zu of %zu members are .npy)", npy, n);
    return MF_PROBE_NO;
}

static const char *const npz_extensions[] = {".npz", NULL};

const mf_reader mf_reader_npz = {
    .format = MF_FMT_NUMPY_NPZ,
    .name = "numpy-npz",
    .extensions = npz_extensions,
    .probe_zip = probe_npz,
    .open = open_npz,
    .stream = stream_npz,
};
