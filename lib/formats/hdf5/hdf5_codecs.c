/* hdf5_codecs.c - three more chunk filters, undone on read:
 *  - szip (id 4): HDF5's H5Z_FILTER_SZIP. The chunk starts with the decoded
 *    size (4 bytes, little-endian), then the Rice/szip stream; client data
 *    are options mask, pixels per block, bits per pixel, pixels per
 *    scanline. Decoded with libaec's szip interface (szlib.h, -lsz).
 *  - scale-offset (id 6): HDF5's H5Z_FILTER_SCALEOFFSET, decoded here as
 *    the HDF5 library defines it (below).
 *  - blosc (id 32001): the filter PyTables registers; a chunk is one blosc
 *    buffer (c-blosc 1.x, libblosc), checked with blosc_cbuffer_validate
 *    before it is decoded.
 * Every decoder writes at most `cap` bytes (the chunk size) and fails,
 * naming the dataset and the rule, on anything else. */
#include "formats/hdf5/hdf5_int.h"

#include <blosc.h>
#include <math.h>
#include <szlib.h>

static int chunk_fail(h5_file *f, const h5_dset *d, const char *filter, const char *why,
                      unsigned long long a, unsigned long long b)
{
    return mf_fail(f->st, MF_ERR_FORMAT, f->label, -1, "dataset %s: %s chunk: %s (%llu, %llu)",
                   d->name, filter, why, a, b);
}

/* ----------------------------------------------------------------- blosc */
int h5_unblosc(h5_file *f, const h5_dset *d, const h5_filter *fl, const uint8_t *in,
               uint64_t n, uint8_t *out, uint64_t cap, uint64_t *got)
{
    (void)fl;
    size_t nbytes = 0;
    if (n < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in, (size_t)n, &nbytes) != 0)
        return chunk_fail(f, d, "blosc", "not a valid blosc buffer (stored bytes, header size)",
                          (unsigned long long)n, BLOSC_MIN_HEADER_LENGTH);
    if (nbytes > cap)
        return chunk_fail(f, d, "blosc", "decodes to more than the chunk size",
                          (unsigned long long)nbytes, (unsigned long long)cap);
    int k = blosc_decompress_ctx(in, out, (size_t)cap, 1);
    if (k < 0 || (size_t)k != nbytes)
        return chunk_fail(f, d, "blosc", "corrupt data (decoded, expected)",
                          (unsigned long long)(k < 0 ? 0 : k), (unsigned long long)nbytes);
    *got = nbytes;
    return 0;
}

/* ------------------------------------------------------------------ szip */
enum { SZIP_MASK = 0, SZIP_PPB = 1, SZIP_BPP = 2, SZIP_PPS = 3 };

int h5_unszip(h5_file *f, const h5_dset *d, const h5_filter *fl, const uint8_t *in, uint64_t n,
              uint8_t *out, uint64_t cap, uint64_t *got)
{
    if (fl->n_values != 4)
        return chunk_fail(f, d, "szip", "the filter needs 4 client data values", fl->n_values, 4);
    SZ_com_t p = {.options_mask = (int)(fl->values[SZIP_MASK] & 0xffff),
                  .bits_per_pixel = (int)fl->values[SZIP_BPP],
                  .pixels_per_block = (int)fl->values[SZIP_PPB],
                  .pixels_per_scanline = (int)fl->values[SZIP_PPS]};
    /* the ranges szip defines (SZ_MAX_PIXELS_PER_BLOCK, ...SCANLINE) */
    bool bpp_ok = (p.bits_per_pixel >= 1 && p.bits_per_pixel <= 32) || p.bits_per_pixel == 64;
    bool ppb_ok = p.pixels_per_block >= 2 && p.pixels_per_block <= SZ_MAX_PIXELS_PER_BLOCK &&
                  p.pixels_per_block % 2 == 0;
    bool pps_ok = p.pixels_per_scanline >= 1 && p.pixels_per_scanline <= SZ_MAX_PIXELS_PER_SCANLINE;
    if (!bpp_ok || !ppb_ok || !pps_ok)
        return chunk_fail(f, d, "szip", "parameters out of range (bits per pixel, pixels per block)",
                          (unsigned long long)fl->values[SZIP_BPP],
                          (unsigned long long)fl->values[SZIP_PPB]);
    if (n < 4)
        return chunk_fail(f, d, "szip", "shorter than its 4-byte size", (unsigned long long)n, 4);
    uint32_t want = mf_rd32le(in);
    if (want > cap)
        return chunk_fail(f, d, "szip", "declares more bytes than the chunk holds", want,
                          (unsigned long long)cap);
    size_t size_out = want;
    if (want && SZ_BufftoBuffDecompress(out, &size_out, in + 4, (size_t)(n - 4), &p) != SZ_OK)
        return chunk_fail(f, d, "szip", "corrupt stream (stored bytes, declared size)",
                          (unsigned long long)n, want);
    if (size_out != want)
        return chunk_fail(f, d, "szip", "decodes to another size than it declares",
                          (unsigned long long)size_out, want);
    *got = want;
    return 0;
}

/* ----------------------------------------------------------- scale-offset
 * H5Zscaleoffset (HDF5 1.8+; User's Guide, "Using the Scale-offset Filter").
 * Client data (20 values): scale type (0 float D-scale, 1 float E-scale,
 * 2 integer), scale factor, elements per chunk, class (0 integer, 1 float),
 * element size, sign (0 unsigned, 1 two's complement), byte order (0 LE,
 * 1 BE), fill value defined (0/1), the fill value's bytes from value 8 on
 * (four per value, least significant first).
 * A chunk: minbits (4 bytes LE), the size of minval (1 byte), minval (LE,
 * 8 bytes kept), padding to 21 bytes, then every element as a minbits-bit
 * unsigned offset, most significant bit first, the bits running on across
 * bytes and elements. minbits == size*8 stores the elements as they are
 * (in the writer's memory order: little-endian here); minbits == 0 means
 * every offset is 0. Reconstruction:
 *  integer: offset == 2^minbits - 1 with a fill value defined -> the fill
 *           value; else offset + minval, wrapped to the element size.
 *  float (D-scale, factor D): minval's low bytes hold the minimum as a
 *           float or double; the offset, read as a signed integer of the
 *           element size, gives offset / 10^D + min in that precision
 *           (powf for float, pow for double, as HDF5 computes it); the
 *           all-ones offset is the fill value when one is defined.
 * The output is then put in the dataset's byte order. */
enum { SO_TYPE, SO_FACTOR, SO_NELMTS, SO_CLASS, SO_SIZE, SO_SIGN, SO_ORDER, SO_FILAVAIL, SO_FILVAL };
enum { SO_HEADER = 21, SO_NPARMS = 20 };

typedef struct so_parms {
    unsigned size, cls, order;
    bool filavail;
    int factor;
    uint64_t nelmts;
    uint8_t fill[8];
    uint32_t minbits;
    uint64_t minval;
} so_parms;

static uint64_t so_offset(const uint8_t *bits, uint64_t *pos, uint32_t width)
{
    uint64_t v = 0, p = *pos;
    while (width) {
        unsigned avail = 8 - (unsigned)(p & 7), take = width < avail ? width : avail;
        unsigned byte = bits[p >> 3];
        v = (v << take) | ((byte >> (avail - take)) & ((1u << take) - 1));
        p += take;
        width -= take;
    }
    *pos = p;
    return v;
}

static void put_le(uint8_t *p, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* One element from its offset, little-endian, into out. */
static void so_element(const so_parms *s, uint64_t off, float pf, double pd, uint8_t *out)
{
    uint64_t all_ones = s->minbits >= 64 ? UINT64_MAX : (1ull << s->minbits) - 1;
    if (s->filavail && off == all_ones) {
        memcpy(out, s->fill, s->size);
        return;
    }
    if (s->cls == 0) {
        put_le(out, off + s->minval, s->size);
    } else if (s->size == 4) {
        float min, x;
        uint32_t mb = (uint32_t)s->minval, xb;
        memcpy(&min, &mb, 4);
        x = (float)(int32_t)(uint32_t)off / pf + min;
        memcpy(&xb, &x, 4);
        put_le(out, xb, 4);
    } else {
        double min, x;
        uint64_t xb;
        memcpy(&min, &s->minval, 8);
        x = (double)(int64_t)off / pd + min;
        memcpy(&xb, &x, 8);
        put_le(out, xb, 8);
    }
}

static void swap_each(uint8_t *p, uint64_t n, unsigned size)
{
    for (uint64_t i = 0; i + size <= n; i += size)
        for (unsigned a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

static int so_parms_read(h5_file *f, const h5_dset *d, const h5_filter *fl, so_parms *s)
{
    if (fl->n_values != SO_NPARMS)
        return chunk_fail(f, d, "scale-offset", "the filter needs 20 client data values",
                          fl->n_values, SO_NPARMS);
    const uint32_t *v = fl->values;
    s->size = v[SO_SIZE];
    s->cls = v[SO_CLASS];
    s->order = v[SO_ORDER];
    s->filavail = v[SO_FILAVAIL] == 1;
    s->factor = (int)v[SO_FACTOR];
    s->nelmts = v[SO_NELMTS];
    for (unsigned i = 0; i < 8; i++)
        s->fill[i] = (uint8_t)(v[SO_FILVAL + i / 4] >> (8 * (i % 4)));
    bool int_ok = s->cls == 0 && v[SO_TYPE] == 2 &&
                  (s->size == 1 || s->size == 2 || s->size == 4 || s->size == 8);
    bool float_ok = s->cls == 1 && v[SO_TYPE] == 0 && (s->size == 4 || s->size == 8);
    if (s->cls == 1 && v[SO_TYPE] == 1)
        return mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, -1, "dataset %s: scale-offset "
                       "E-scale is not supported (HDF5 does not implement it either)", d->name);
    if ((!int_ok && !float_ok) || s->size != d->esize || s->order > 1)
        return chunk_fail(f, d, "scale-offset", "parameters do not fit the datatype (class, size)",
                          s->cls, s->size);
    if (s->cls == 0 && s->factor < 0)
        s->factor = 0; /* HDF5: a negative minimum bit count means "compute it" */
    return 0;
}

int h5_unscaleoffset(h5_file *f, const h5_dset *d, const h5_filter *fl, const uint8_t *in,
                     uint64_t n, uint8_t *out, uint64_t cap, uint64_t *got)
{
    so_parms s;
    if (so_parms_read(f, d, fl, &s))
        return -1;
    uint64_t bytes = s.nelmts * s.size; /* nelmts < 2^32, size <= 8 */
    if (bytes > cap)
        return chunk_fail(f, d, "scale-offset", "more elements than the chunk holds",
                          (unsigned long long)s.nelmts, (unsigned long long)(cap / s.size));
    if (s.cls == 0 && (unsigned)s.factor > s.size * 8)
        return chunk_fail(f, d, "scale-offset", "minimum bits exceed the element size",
                          (unsigned)s.factor, s.size * 8);
    if (s.cls == 0 && (unsigned)s.factor == s.size * 8) { /* the filter stored them as is */
        if (n > cap)
            return chunk_fail(f, d, "scale-offset", "raw chunk larger than the chunk size",
                              (unsigned long long)n, (unsigned long long)cap);
        memcpy(out, in, (size_t)n);
        *got = n;
        return 0;
    }
    if (n < SO_HEADER)
        return chunk_fail(f, d, "scale-offset", "shorter than its 21-byte header",
                          (unsigned long long)n, SO_HEADER);
    s.minbits = mf_rd32le(in);
    unsigned mvsize = in[4] < 8 ? in[4] : 8;
    s.minval = 0;
    for (unsigned i = 0; i < mvsize; i++)
        s.minval |= (uint64_t)in[5 + i] << (8 * i);
    if (s.minbits > s.size * 8)
        return chunk_fail(f, d, "scale-offset", "minimum bits exceed the element size", s.minbits,
                          s.size * 8);
    uint64_t need = s.minbits == s.size * 8 ? bytes : (s.nelmts * s.minbits + 7) / 8;
    if (n - SO_HEADER < need)
        return chunk_fail(f, d, "scale-offset", "packed data shorter than its elements need",
                          (unsigned long long)(n - SO_HEADER), (unsigned long long)need);
    const uint8_t *packed = in + SO_HEADER;
    if (s.minbits == s.size * 8) {
        memcpy(out, packed, (size_t)bytes);
    } else {
        float pf = powf(10.0f, (float)s.factor);
        double pd = pow(10.0, (double)s.factor);
        uint64_t pos = 0;
        for (uint64_t i = 0; i < s.nelmts; i++) {
            uint64_t off = s.minbits ? so_offset(packed, &pos, s.minbits) : 0;
            so_element(&s, off, pf, pd, out + i * s.size);
        }
    }
    if (s.order == 1)
        swap_each(out, bytes, s.size);
    *got = bytes;
    return 0;
}
