/* hdf5_filters.c - undoing a chunk's filter pipeline: deflate (zlib),
 * shuffle, fletcher32 (checked); szip, scale-offset and blosc in
 * hdf5_codecs.c. Filters run in reverse order on read; a
 * filter whose bit is set in the chunk's filter mask was skipped on write.
 * Spec: "The Data Storage - Filter Pipeline Message"; HDF5's H5Z filters. */
#include "formats/hdf5/hdf5_int.h"

#include <zlib.h>

/* zlib stream -> out, at most `cap` bytes; the stream must end. */
static int inflate_to(h5_file *f, const h5_dset *d, const uint8_t *in, uint64_t n, uint8_t *out,
                      uint64_t cap, uint64_t *got)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit(&z) != Z_OK)
        return mf_oom(f->st, f->label);
    uint64_t done_in = 0, done_out = 0;
    int zr = Z_OK;
    while (zr == Z_OK) {
        uint64_t in_left = n - done_in, out_left = cap - done_out;
        z.next_in = (Bytef *)(in + done_in);
        z.avail_in = (uInt)(in_left > (1u << 30) ? (1u << 30) : in_left);
        z.next_out = out + done_out;
        z.avail_out = (uInt)(out_left > (1u << 30) ? (1u << 30) : out_left);
        uInt ai = z.avail_in, ao = z.avail_out;
        zr = inflate(&z, Z_NO_FLUSH);
        done_in += ai - z.avail_in;
        done_out += ao - z.avail_out;
        if (zr == Z_OK && ai == z.avail_in && ao == z.avail_out)
            zr = Z_BUF_ERROR; /* no progress */
    }
    inflateEnd(&z);
    if (zr == Z_STREAM_END) {
        *got = done_out;
        return 0;
    }
    if (done_out == cap)
        return mf_fail(f->st, MF_ERR_FORMAT, f->label, -1,
                       "dataset %s: a deflated chunk inflates to more than the chunk's %llu bytes",
                       d->name, (unsigned long long)cap);
    return mf_fail(f->st, MF_ERR_FORMAT, f->label, -1,
                   "dataset %s: deflated chunk is corrupt (%s)", d->name,
                   zr == Z_BUF_ERROR ? "truncated stream" : z.msg ? z.msg : "zlib error");
}

/* Shuffle wrote byte k of every element together; put them back. */
static void unshuffle(const uint8_t *in, uint64_t n, uint32_t esize, uint8_t *out)
{
    uint64_t count = esize ? n / esize : 0;
    if (esize <= 1 || count <= 1) {
        memcpy(out, in, (size_t)n);
        return;
    }
    for (uint32_t b = 0; b < esize; b++)
        for (uint64_t i = 0; i < count; i++)
            out[i * esize + b] = in[b * count + i];
    memcpy(out + count * esize, in + count * esize, (size_t)(n - count * esize));
}

int h5_filters_decode(h5_file *f, const h5_dset *d, const h5_chunk *c, const uint8_t *in,
                      uint64_t in_len, uint64_t chunk_bytes, uint8_t *scratch[2],
                      const uint8_t **out, uint64_t *out_len)
{
    const uint8_t *cur = in;
    uint64_t len = in_len;
    int which = 0;
    for (int i = d->pipeline.n - 1; i >= 0; i--) {
        const h5_filter *fl = &d->pipeline.f[i];
        if (i < 32 && (c->mask >> i) & 1)
            continue;
        switch (fl->id) {
        case 3: { /* fletcher32: checksum appended */
            if (len < 4)
                return mf_fail(f->st, MF_ERR_FORMAT, f->label, (int64_t)(f->origin + f->base_addr + c->addr),
                               "dataset %s: chunk too short for its Fletcher-32 checksum", d->name);
            uint32_t stored = mf_rd32le(cur + len - 4);
            uint32_t sum = h5_fletcher32(cur, (size_t)(len - 4));
            uint32_t swapped = (sum >> 24) | ((sum >> 8) & 0xff00) | ((sum << 8) & 0xff0000) | (sum << 24);
            uint64_t sum_at = c->addr + (len - 4);
            if (stored != sum && stored != swapped) /* HDF5 1.6 wrote it byte-swapped */
                return mf_fail(f->st, MF_ERR_FORMAT, f->label,
                               (int64_t)(f->origin + f->base_addr + sum_at),
                               "dataset %s: chunk %llu fails its Fletcher-32 checksum (stored %08x, "
                               "computed %08x)", d->name, (unsigned long long)c->lin, stored, sum);
            len -= 4;
            break;
        }
        case 1: { /* deflate */
            uint64_t got = 0;
            if (inflate_to(f, d, cur, len, scratch[which], chunk_bytes, &got))
                return -1;
            cur = scratch[which];
            len = got;
            which ^= 1;
            break;
        }
        case 2: { /* shuffle: client data 0 is the element size */
            uint32_t es = fl->n_values ? fl->values[0] : d->esize;
            if (len > chunk_bytes)
                return mf_fail(f->st, MF_ERR_FORMAT, f->label, -1,
                               "dataset %s: shuffled chunk of %llu bytes exceeds the chunk size",
                               d->name, (unsigned long long)len);
            unshuffle(cur, len, es, scratch[which]);
            cur = scratch[which];
            which ^= 1;
            break;
        }
        case 4:     /* szip */
        case 6:     /* scale-offset */
        case 32001: { /* blosc (PyTables) */
            uint64_t got = 0;
            int rc = fl->id == 4 ? h5_unszip(f, d, fl, cur, len, scratch[which], chunk_bytes, &got)
                     : fl->id == 6 ? h5_unscaleoffset(f, d, fl, cur, len, scratch[which], chunk_bytes, &got)
                                   : h5_unblosc(f, d, fl, cur, len, scratch[which], chunk_bytes, &got);
            if (rc)
                return -1;
            cur = scratch[which];
            len = got;
            which ^= 1;
            break;
        }
        default:
            return mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, -1,
                           "dataset %s: filter %s (id %u) is not supported", d->name, fl->name,
                           fl->id);
        }
    }
    *out = cur;
    *out_len = len;
    return 0;
}

bool h5_filter_known(uint16_t id)
{
    return id == 1 || id == 2 || id == 3 || id == 4 || id == 6 || id == 32001;
}
