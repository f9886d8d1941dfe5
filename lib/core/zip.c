/* zip.c - ZIP central directory reader (APPNOTE 6.3.x), ZIP64 included. */
#include "core/zip.h"

#include <stdlib.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u

/* Finds the end-of-central-directory record: the last PK\5\6 whose comment
 * length reaches the end of the file (the comment is at most 65535 bytes). */
static int64_t find_eocd(const uint8_t *b, uint64_t size)
{
    if (size < 22)
        return -1;
    uint64_t lo = size > 22 + 65535 ? size - 22 - 65535 : 0;
    for (uint64_t p = size - 22 + 1; p-- > lo;) {
        if (mf_rd32le(b + p) == SIG_EOCD && p + 22 + mf_rd16le(b + p + 20) == size)
            return (int64_t)p;
    }
    for (uint64_t p = size - 22 + 1; p-- > lo;) /* tolerate trailing junk */
        if (mf_rd32le(b + p) == SIG_EOCD)
            return (int64_t)p;
    return -1;
}

typedef struct cd_info {
    uint64_t count, cd_size, cd_offset;
    bool zip64;
} cd_info;

static int read_eocd(mf_zip *z, uint64_t eocd, cd_info *ci, mf_status *st)
{
    const uint8_t *e = z->base + eocd;
    ci->count = mf_rd16le(e + 10);
    ci->cd_size = mf_rd32le(e + 12);
    ci->cd_offset = mf_rd32le(e + 16);
    bool need64 = ci->count == 0xffff || ci->cd_size == 0xffffffffu ||
                  ci->cd_offset == 0xffffffffu;
    if (eocd >= 20 && mf_rd32le(z->base + eocd - 20) == SIG_LOC64) {
        uint64_t off64 = mf_rd64le(z->base + eocd - 20 + 8);
        if (off64 > z->size || z->size - off64 < 56 ||
            mf_rd32le(z->base + off64) != SIG_EOCD64)
            return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)eocd - 20,
                           "zip: ZIP64 locator points to %llu, where there is no ZIP64 end record",
                           (unsigned long long)off64);
        const uint8_t *r = z->base + off64;
        ci->count = mf_rd64le(r + 32);
        ci->cd_size = mf_rd64le(r + 40);
        ci->cd_offset = mf_rd64le(r + 48);
        ci->zip64 = true;
    } else if (need64) {
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)eocd,
                       "zip: end record needs ZIP64 values but there is no ZIP64 locator");
    }
    uint64_t end;
    if (mf_add_ovf(ci->cd_offset, ci->cd_size, &end) || end > z->size)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)eocd,
                       "zip: central directory (offset %llu, %llu bytes) is outside the file",
                       (unsigned long long)ci->cd_offset, (unsigned long long)ci->cd_size);
    /* each central record is at least 46 bytes: bounds the count */
    if (ci->count > ci->cd_size / 46)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)eocd,
                       "zip: %llu entries cannot fit in a %llu-byte central directory",
                       (unsigned long long)ci->count, (unsigned long long)ci->cd_size);
    return 0;
}

/* ZIP64 extended information extra field (id 1): the 64-bit values of
 * those 32-bit fields that are 0xFFFFFFFF, in the order usize, csize, offset. */
static void apply_zip64_extra(const uint8_t *ex, uint16_t exlen, mf_zip_entry *e)
{
    uint32_t p = 0;
    while (p + 4 <= exlen) {
        uint16_t id = mf_rd16le(ex + p), len = mf_rd16le(ex + p + 2);
        if (p + 4 + len > exlen)
            break;
        if (id == 1) {
            const uint8_t *d = ex + p + 4;
            uint32_t q = 0;
            if (e->usize == 0xffffffffu && q + 8 <= len) { e->usize = mf_rd64le(d + q); q += 8; }
            if (e->csize == 0xffffffffu && q + 8 <= len) { e->csize = mf_rd64le(d + q); q += 8; }
            if (e->local_offset == 0xffffffffu && q + 8 <= len) { e->local_offset = mf_rd64le(d + q); }
        }
        p += 4 + (uint32_t)len;
    }
}

/* Local header: the loaders take the data offset from it (PyTorch's miniz
 * does), so we do too, and note where it disagrees with the central record. */
static void read_local(mf_zip *z, mf_zip_entry *e, const char *cname, uint16_t nlen)
{
    uint64_t lo = e->local_offset;
    if (lo > z->size || z->size - lo < 30 || mf_rd32le(z->base + lo) != SIG_LOCAL)
        return;
    const uint8_t *l = z->base + lo;
    uint16_t lnlen = mf_rd16le(l + 26), lexlen = mf_rd16le(l + 28);
    uint64_t data = lo + 30 + lnlen + lexlen;
    if (data > z->size)
        return;
    e->local_ok = true;
    e->data_offset = data;
    e->name_mismatch = lnlen != nlen || memcmp(l + 30, cname, nlen) != 0;
    uint16_t lmethod = mf_rd16le(l + 8);
    uint32_t lcsize = mf_rd32le(l + 18), lusize = mf_rd32le(l + 22);
    bool descriptor = mf_rd16le(l + 6) & 8;
    e->size_mismatch = lmethod != e->method ||
                       (!descriptor && lcsize != 0xffffffffu &&
                        (lcsize != (uint32_t)e->csize || lusize != (uint32_t)e->usize));
}

int mf_zip_open(mf_zip *z, const uint8_t *base, uint64_t size,
                const char *file, mf_arena *a, mf_status *st)
{
    memset(z, 0, sizeof(*z));
    z->base = base;
    z->size = size;
    z->file = file;
    int64_t eocd = find_eocd(base, size);
    if (eocd < 0)
        return mf_fail(st, MF_ERR_FORMAT, file, -1,
                       "zip: no end-of-central-directory record (truncated archive?)");
    cd_info ci = {0}; /* read_eocd sets zip64 only when it finds a ZIP64 record */
    if (read_eocd(z, (uint64_t)eocd, &ci, st))
        return -1;
    z->zip64 = ci.zip64;
    z->cd_offset = ci.cd_offset;
    z->entries = mf_arena_calloc(a, ci.count ? ci.count : 1, sizeof(mf_zip_entry));
    if (!z->entries)
        return mf_oom(st, file);
    mf_cursor c;
    mf_cur_init(&c, base + ci.cd_offset, ci.cd_size, file, st);
    c.origin = ci.cd_offset;
    for (uint64_t i = 0; i < ci.count; i++) {
        uint64_t at = mf_cur_off(&c);
        const uint8_t *h;
        if (mf_cur_bytes(&c, 46, &h, "zip central directory record"))
            return -1;
        if (mf_rd32le(h) != SIG_CENTRAL)
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)at,
                           "zip: central directory record %llu has a bad signature",
                           (unsigned long long)i);
        mf_zip_entry *e = &z->entries[z->n];
        e->flags = mf_rd16le(h + 8);
        e->method = mf_rd16le(h + 10);
        e->crc = mf_rd32le(h + 16);
        e->csize = mf_rd32le(h + 20);
        e->usize = mf_rd32le(h + 24);
        uint16_t nlen = mf_rd16le(h + 28), exlen = mf_rd16le(h + 30), cmlen = mf_rd16le(h + 32);
        e->local_offset = mf_rd32le(h + 42);
        e->cd_offset = at;
        const uint8_t *name, *extra;
        if (mf_cur_bytes(&c, nlen, &name, "zip entry name") ||
            mf_cur_bytes(&c, exlen, &extra, "zip extra field") ||
            mf_cur_skip(&c, cmlen, "zip entry comment"))
            return -1;
        e->name = mf_arena_strndup(a, (const char *)name, nlen);
        if (!e->name)
            return mf_oom(st, file);
        apply_zip64_extra(extra, exlen, e);
        read_local(z, e, (const char *)name, nlen);
        z->n++;
    }
    return 0;
}

const mf_zip_entry *mf_zip_find(const mf_zip *z, const char *name)
{
    for (size_t i = 0; i < z->n; i++)
        if (strcmp(z->entries[i].name, name) == 0)
            return &z->entries[i];
    return NULL;
}

const mf_zip_entry *mf_zip_find_suffix(const mf_zip *z, const char *suffix)
{
    size_t sl = strlen(suffix);
    for (size_t i = 0; i < z->n; i++) {
        size_t nl = strlen(z->entries[i].name);
        if (nl >= sl && strcmp(z->entries[i].name + nl - sl, suffix) == 0)
            return &z->entries[i];
    }
    return NULL;
}

static int check_span(const mf_zip *z, const mf_zip_entry *e, mf_status *st)
{
    if (!e->local_ok)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->local_offset,
                       "zip: member \"%s\": no valid local header at this offset", e->name);
    uint64_t end;
    if (mf_add_ovf(e->data_offset, e->csize, &end) || end > z->size)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                       "zip: member \"%s\": %llu bytes of data run past the end of the file",
                       e->name, (unsigned long long)e->csize);
    return 0;
}

const uint8_t *mf_zip_stored_data(const mf_zip *z, const mf_zip_entry *e,
                                  mf_status *st)
{
    if (e->method != 0) {
        mf_fail(st, MF_ERR_UNSUPPORTED, z->file, (int64_t)e->local_offset,
                "zip: member \"%s\" is compressed (method %u), not stored", e->name, e->method);
        return NULL;
    }
    if (check_span(z, e, st))
        return NULL;
    if (e->csize != e->usize) {
        mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->cd_offset,
                "zip: stored member \"%s\": compressed size %llu != size %llu", e->name,
                (unsigned long long)e->csize, (unsigned long long)e->usize);
        return NULL;
    }
    return z->base + e->data_offset;
}

static int stream_stored(const mf_zip *z, const mf_zip_entry *e, bool check_crc,
                         mf_sink_fn sink, void *ctx, mf_status *st)
{
    const uint8_t *p = mf_zip_stored_data(z, e, st);
    if (!p)
        return -1;
    uLong crc = crc32(0, NULL, 0);
    for (uint64_t off = 0; off < e->usize;) {
        uInt n = e->usize - off > (1u << 20) ? (1u << 20) : (uInt)(e->usize - off);
        if (check_crc)
            crc = crc32(crc, p + off, n);
        if (sink(ctx, p + off, n, st))
            return -1;
        off += n;
    }
    if (check_crc && crc != e->crc)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->local_offset,
                       "zip: member \"%s\": CRC-32 %08lx does not match the recorded %08x",
                       e->name, crc, e->crc);
    return 0;
}

static int stream_deflated(const mf_zip *z, const mf_zip_entry *e, bool check_crc,
                           mf_sink_fn sink, void *ctx, mf_status *st)
{
    if (check_span(z, e, st))
        return -1;
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return mf_oom(st, z->file);
    enum { OUT = 1 << 18 };
    uint8_t *out = malloc(OUT);
    if (!out) {
        inflateEnd(&zs);
        return mf_oom(st, z->file);
    }
    const uint8_t *in = z->base + e->data_offset;
    uint64_t in_left = e->csize, total = 0;
    uLong crc = crc32(0, NULL, 0);
    int rc = 0, zr = Z_OK;
    while (zr != Z_STREAM_END) {
        if (zs.avail_in == 0 && in_left) {
            uInt n = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
            zs.next_in = (Bytef *)in;
            zs.avail_in = n;
            in += n;
            in_left -= n;
        }
        zs.next_out = out;
        zs.avail_out = OUT;
        zr = inflate(&zs, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END &&
            !(zr == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0)) {
            rc = mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                         "zip: member \"%s\": deflate data is corrupt (%s)", e->name,
                         zs.msg ? zs.msg : "zlib error");
            break;
        }
        size_t got = OUT - zs.avail_out;
        total += got;
        if (total > e->usize) {
            rc = mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                         "zip: member \"%s\" inflates past its recorded size %llu", e->name,
                         (unsigned long long)e->usize);
            break;
        }
        if (check_crc)
            crc = crc32(crc, out, (uInt)got);
        if (got && sink(ctx, out, got, st)) {
            rc = -1;
            break;
        }
        if (zr == Z_BUF_ERROR || (got == 0 && zs.avail_in == 0 && in_left == 0 && zr != Z_STREAM_END)) {
            rc = mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                         "zip: member \"%s\": deflate stream is truncated", e->name);
            break;
        }
    }
    inflateEnd(&zs);
    free(out);
    if (rc == 0 && total != e->usize)
        rc = mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->data_offset,
                     "zip: member \"%s\" inflates to %llu bytes, not the recorded %llu",
                     e->name, (unsigned long long)total, (unsigned long long)e->usize);
    if (rc == 0 && check_crc && crc != e->crc)
        rc = mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->local_offset,
                     "zip: member \"%s\": CRC-32 %08lx does not match the recorded %08x",
                     e->name, crc, e->crc);
    return rc;
}

int mf_zip_stream(const mf_zip *z, const mf_zip_entry *e, bool check_crc,
                  mf_sink_fn sink, void *ctx, mf_status *st)
{
    if (e->method == 0)
        return stream_stored(z, e, check_crc, sink, ctx, st);
    if (e->method == 8)
        return stream_deflated(z, e, check_crc, sink, ctx, st);
    return mf_fail(st, MF_ERR_UNSUPPORTED, z->file, (int64_t)e->cd_offset,
                   "zip: member \"%s\": compression method %u is not supported", e->name,
                   e->method);
}

int mf_zip_extract(const mf_zip *z, const mf_zip_entry *e, size_t limit,
                   uint8_t **out, size_t *len, mf_status *st)
{
    *out = NULL;
    if (e->usize > limit)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->cd_offset,
                       "zip: member \"%s\" is %llu bytes, more than the %zu allowed here",
                       e->name, (unsigned long long)e->usize, limit);
    /* deflate expands at most ~1032:1; a size claim beyond that is a lie */
    if (e->method == 8 && e->usize / 1032 > e->csize + 1)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->cd_offset,
                       "zip: member \"%s\" claims %llu bytes from %llu compressed", e->name,
                       (unsigned long long)e->usize, (unsigned long long)e->csize);
    mf_buf_sink b = {malloc(e->usize ? (size_t)e->usize : 1), 0, e->usize,
                     "zip member larger than recorded"};
    if (!b.p)
        return mf_oom(st, z->file);
    if (mf_zip_stream(z, e, false, mf_buf_sink_fn, &b, st)) {
        free(b.p);
        return -1;
    }
    *out = b.p;
    *len = (size_t)b.n;
    return 0;
}
