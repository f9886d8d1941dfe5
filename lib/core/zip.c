/* zip.c - ZIP central directory readers (APPNOTE 6.3.x), ZIP64 included,
 * one per loader: CPython's zipfile (Lib/zipfile.py _EndRecData,
 * _EndRecData64, _RealGetContents, ZipFile.open) and miniz as PyTorch
 * uses it (mz_zip_reader_read_central_dir, mz_zip_reader_locate_file).
 * Each rule below is the loader's, so that a hostile archive is described
 * the way the loader of its format will read it. */
#include "core/zip.h"

#include <stdlib.h>
#include <strings.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define EOCD_SIZE 22u
#define EOCD64_SIZE 56u
#define LOC64_SIZE 20u
#define CDH_SIZE 46u
#define LFH_SIZE 30u

/* ------------------------------------------------------ end records */

/* zipfile._EndRecData: the last 22 bytes when they are an end record with
 * an empty comment; otherwise the last signature (rfind) in the last
 * 64 KiB + 22 bytes, which must have 22 bytes after it. */
static int64_t python_eocd(const uint8_t *b, uint64_t size)
{
    if (size < EOCD_SIZE)
        return -1;
    if (mf_rd32le(b + size - EOCD_SIZE) == SIG_EOCD && mf_rd16le(b + size - 2) == 0)
        return (int64_t)(size - EOCD_SIZE);
    uint64_t lo = size > (1u << 16) + EOCD_SIZE ? size - (1u << 16) - EOCD_SIZE : 0;
    for (uint64_t p = size - 4 + 1; p-- > lo;)
        if (mf_rd32le(b + p) == SIG_EOCD)
            return size - p < EOCD_SIZE ? -1 : (int64_t)p;
    return -1;
}

/* mz_zip_reader_locate_header_sig: 4 KiB blocks from the end backwards
 * (overlapping by 3 bytes), the last signature with 22 bytes after it;
 * gives up after the block that reaches 65535 + 22 bytes from the end. */
static int64_t miniz_eocd(const uint8_t *b, uint64_t size)
{
    enum { BLK = 4096 };
    if (size < EOCD_SIZE)
        return -1;
    uint64_t cur = size > BLK ? size - BLK : 0;
    for (;;) {
        uint64_t n = size - cur < BLK ? size - cur : BLK;
        for (uint64_t i = n >= 4 ? n - 4 + 1 : 0; i-- > 0;)
            if (mf_rd32le(b + cur + i) == SIG_EOCD && size - (cur + i) >= EOCD_SIZE)
                return (int64_t)(cur + i);
        if (cur == 0 || size - cur >= 0xffffu + EOCD_SIZE)
            return -1;
        cur = cur > BLK - 3 ? cur - (BLK - 3) : 0;
    }
}

size_t mf_zip_eocd_candidates(const uint8_t *b, uint64_t size, uint64_t *out, size_t max)
{
    size_t k = 0;
    if (size < EOCD_SIZE)
        return 0;
    uint64_t span = (1u << 16) + EOCD_SIZE + 4096; /* both loaders' windows */
    uint64_t lo = size > span ? size - span : 0;
    for (uint64_t p = size - EOCD_SIZE + 1; p-- > lo && k < max;)
        if (mf_rd32le(b + p) == SIG_EOCD)
            out[k++] = p;
    return k;
}

/* ------------------------------------------------------------- common */

typedef struct cd_info {
    uint64_t count, cd_size, cd_offset, start;
    int64_t concat;
    bool zip64;
    uint16_t this_disk, cd_disk;
} cd_info;

static int bad(mf_zip *z, uint64_t off, const char *rule, mf_status *st)
{
    return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)off, "zip (%s): %s",
                   z->dialect == MF_ZIP_MINIZ ? "as torch's miniz reads it"
                                              : "as Python's zipfile reads it",
                   rule);
}

/* ZIP64 extended information extra field (id 1): the 64-bit values of
 * those 32-bit fields that are all ones, in the order usize, csize,
 * offset (both loaders). Returns false when the field is too short or an
 * extra field runs past its block (zipfile refuses such an archive). */
static bool apply_zip64_extra(const uint8_t *ex, uint32_t exlen, mf_zip_entry *e)
{
    uint32_t p = 0;
    while (p + 4 <= exlen) {
        uint16_t id = mf_rd16le(ex + p), len = mf_rd16le(ex + p + 2);
        if (p + 4 + len > exlen)
            return false;
        if (id == 1) {
            const uint8_t *d = ex + p + 4;
            uint32_t q = 0;
            if (e->usize == 0xffffffffu) {
                if (q + 8 > len)
                    return false;
                e->usize = mf_rd64le(d + q);
                q += 8;
            }
            if (e->csize == 0xffffffffu) {
                if (q + 8 > len)
                    return false;
                e->csize = mf_rd64le(d + q);
                q += 8;
            }
            if (e->local_offset == 0xffffffffu) {
                if (q + 8 > len)
                    return false;
                e->local_offset = mf_rd64le(d + q);
            }
        }
        p += 4 + (uint32_t)len;
    }
    return true;
}

static bool ascii(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 0x80)
            return false;
    return true;
}

/* The local header: both loaders take the data offset from it. zipfile
 * also compares the names (each decoded by its own UTF-8 flag) and
 * refuses patched, strongly encrypted and encrypted members; miniz
 * refuses the encrypted and patched ones. */
static int read_local(mf_zip *z, mf_zip_entry *e, mf_status *st)
{
    uint64_t lo = e->local_offset;
    /* a remote archive: the fixed part, then the names (0 for local files) */
    if (lo <= z->size && z->size - lo >= LFH_SIZE &&
        (mf_source_need(z->base + lo, LFH_SIZE, st) ||
         mf_source_need(z->base + lo, LFH_SIZE + (uint64_t)mf_rd16le(z->base + lo + 26) +
                                          mf_rd16le(z->base + lo + 28), st)))
        return -1;
    if (lo > z->size || z->size - lo < LFH_SIZE || mf_rd32le(z->base + lo) != SIG_LOCAL) {
        e->refused = "no local header at the recorded offset";
        return 0;
    }
    const uint8_t *l = z->base + lo;
    uint16_t lflags = mf_rd16le(l + 6), lnlen = mf_rd16le(l + 26), lexlen = mf_rd16le(l + 28);
    uint64_t data = lo + LFH_SIZE + lnlen + lexlen;
    if (data > z->size) {
        e->refused = "the local header runs past the end of the file";
        return 0;
    }
    e->local_ok = true;
    e->data_offset = data;
    bool same_bytes = lnlen == e->name_len && memcmp(l + 30, e->raw_name, lnlen) == 0;
    bool same_flag = (lflags & 0x800) == (e->flags & 0x800);
    e->name_mismatch = !same_bytes || (!same_flag && !ascii(l + 30, lnlen));
    uint16_t lmethod = mf_rd16le(l + 8);
    uint32_t lcsize = mf_rd32le(l + 18), lusize = mf_rd32le(l + 22);
    bool descriptor = lflags & 8;
    e->size_mismatch = lmethod != e->method ||
                       (!descriptor && lcsize != 0xffffffffu &&
                        (lcsize != (uint32_t)e->csize || lusize != (uint32_t)e->usize));
    if (e->flags & 0x21)
        e->refused = e->flags & 1 ? "marked encrypted" : "compressed patched data (flag bit 5)";
    else if (z->dialect == MF_ZIP_PYTHON && (e->flags & 0x40))
        e->refused = "strong encryption (flag bit 6)";
    else if (z->dialect == MF_ZIP_PYTHON && e->name_mismatch)
        e->refused = "the local header names another file (zipfile: \"File name in directory "
                     "and header differ\")";
    else if (z->dialect == MF_ZIP_MINIZ && e->method != 0 && e->method != 8)
        e->refused = "a compression method miniz does not have";
    else if (z->dialect == MF_ZIP_MINIZ && data + e->csize > z->size)
        e->refused = "its data runs past the end of the file";
    return 0;
}

static mf_zip_entry *grow(mf_zip *z, size_t *cap, mf_arena *a)
{
    if (z->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        mf_zip_entry *v = mf_arena_calloc(a, nc, sizeof(*v));
        if (!v)
            return NULL;
        if (z->n)
            memcpy(v, z->entries, z->n * sizeof(*v));
        z->entries = v;
        *cap = nc;
    }
    mf_zip_entry *e = &z->entries[z->n];
    memset(e, 0, sizeof(*e));
    return e;
}

static void fill_entry(mf_zip_entry *e, const uint8_t *h, uint64_t at)
{
    e->flags = mf_rd16le(h + 8);
    e->method = mf_rd16le(h + 10);
    e->crc = mf_rd32le(h + 16);
    e->csize = mf_rd32le(h + 20);
    e->usize = mf_rd32le(h + 24);
    e->name_len = mf_rd16le(h + 28);
    e->local_offset = mf_rd32le(h + 42);
    e->cd_offset = at;
    e->raw_name = h + CDH_SIZE;
}

/* ------------------------------------------------------------- Python */

/* _EndRecData64: a locator right before the end record, and the ZIP64
 * record right before the locator (whatever offset the locator says). */
static int python_end(mf_zip *z, uint64_t eocd, cd_info *ci, mf_status *st)
{
    const uint8_t *e = z->base + eocd;
    ci->cd_size = mf_rd32le(e + 12);
    ci->cd_offset = mf_rd32le(e + 16);
    if (eocd >= LOC64_SIZE && mf_rd32le(e - LOC64_SIZE) == SIG_LOC64) {
        const uint8_t *l = e - LOC64_SIZE;
        if (mf_rd32le(l + 4) != 0 || mf_rd32le(l + 16) > 1)
            return bad(z, eocd - LOC64_SIZE, "zipfiles that span multiple disks are not supported", st);
        if (eocd >= LOC64_SIZE + EOCD64_SIZE &&
            mf_rd32le(e - LOC64_SIZE - EOCD64_SIZE) == SIG_EOCD64) {
            const uint8_t *r = e - LOC64_SIZE - EOCD64_SIZE;
            ci->cd_size = mf_rd64le(r + 40);
            ci->cd_offset = mf_rd64le(r + 48);
            ci->zip64 = true;
        }
    }
    /* "concat" is zero, unless zip was concatenated to another file:
     * start_dir = offset_cd + concat = end record - size_cd (- ZIP64 records) */
    uint64_t before = ci->cd_size + (ci->zip64 ? EOCD64_SIZE + LOC64_SIZE : 0);
    if (ci->cd_size > eocd || before > eocd)
        return bad(z, eocd, "bad offset for central directory", st);
    uint64_t start = eocd - before;
    if (ci->cd_offset > (uint64_t)INT64_MAX)
        return bad(z, eocd, "bad offset for central directory", st);
    ci->concat = (int64_t)start - (int64_t)ci->cd_offset;
    ci->start = start;
    return 0;
}

typedef struct off_ix {
    uint64_t off;
    size_t i;
} off_ix;

/* header offset descending, then list order: Python's stable sort */
static int cmp_off_desc(const void *a, const void *b)
{
    const off_ix *x = a, *y = b;
    if (x->off != y->off)
        return x->off > y->off ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i ? 1 : 0;
}

/* Python's ZipFile._end_offset: each member ends where the next local
 * header (by offset) starts, the last one where the central directory
 * does; members sorted by header offset, the sort stable. */
static void python_end_offsets(mf_zip *z, uint64_t *end, mf_arena *a)
{
    size_t n = z->n;
    off_ix *ix = mf_arena_calloc(a, n ? n : 1, sizeof(off_ix));
    if (!ix) {
        for (size_t i = 0; i < n; i++)
            end[i] = UINT64_MAX;
        return;
    }
    for (size_t i = 0; i < n; i++)
        ix[i] = (off_ix){z->entries[i].local_offset, i};
    qsort(ix, n, sizeof(off_ix), cmp_off_desc);
    uint64_t e = z->cd_offset;
    for (size_t k = 0; k < n; k++) {
        end[ix[k].i] = e;
        e = ix[k].off;
    }
}

static bool valid_utf8(const uint8_t *p, size_t n)
{
    return mf_utf8_check(p, n) < 0;
}

static int python_read(mf_zip *z, uint64_t eocd, mf_arena *a, mf_status *st)
{
    cd_info ci = {0};
    if (python_end(z, eocd, &ci, st))
        return -1;
    z->zip64 = ci.zip64;
    z->cd_offset = ci.start;
    z->concat = ci.concat;
    /* fp.read(size_cd): what the file holds of it */
    uint64_t avail = ci.start >= z->size ? 0 : z->size - ci.start;
    uint64_t cd_len = ci.cd_size < avail ? ci.cd_size : avail;
    const uint8_t *cd = z->base + (ci.start < z->size ? ci.start : z->size);
    if (mf_source_need(cd, cd_len, st)) /* a remote archive: the whole directory at once */
        return -1;
    size_t cap = 0;
    uint64_t total = 0, pos = 0;
    while (total < ci.cd_size) {
        uint64_t at = ci.start + pos;
        if (cd_len - pos < CDH_SIZE)
            return bad(z, at, "truncated central directory", st);
        const uint8_t *h = cd + pos;
        if (mf_rd32le(h) != SIG_CENTRAL)
            return bad(z, at, "bad magic number for central directory", st);
        if (h[6] > 63)
            return bad(z, at, "zip file version beyond 6.3", st);
        mf_zip_entry *e = grow(z, &cap, a);
        if (!e)
            return mf_oom(st, z->file);
        fill_entry(e, h, at);
        uint16_t exlen = mf_rd16le(h + 30), cmlen = mf_rd16le(h + 32);
        pos += CDH_SIZE;
        /* short reads are silent in zipfile: the name may come up short */
        uint64_t nl = e->name_len < cd_len - pos ? e->name_len : cd_len - pos;
        e->name_len = (uint16_t)nl;
        pos += nl;
        uint64_t xl = exlen < cd_len - pos ? exlen : cd_len - pos;
        const uint8_t *extra = cd + pos;
        pos += xl;
        pos += cmlen < cd_len - pos ? cmlen : cd_len - pos;
        if ((e->flags & 0x800) && !valid_utf8(e->raw_name, e->name_len))
            return bad(z, at, "a UTF-8 flagged name that is not UTF-8", st);
        e->name = mf_arena_strndup(a, (const char *)e->raw_name, e->name_len); /* ends at NUL */
        if (!e->name)
            return mf_oom(st, z->file);
        if (!apply_zip64_extra(extra, (uint32_t)xl, e))
            return bad(z, at, "corrupt extra field", st);
        int64_t lo = e->local_offset > (uint64_t)INT64_MAX / 2 ? -1
                                                               : (int64_t)e->local_offset + ci.concat;
        e->local_offset = lo < 0 ? UINT64_MAX : (uint64_t)lo;
        z->n++;
        total += CDH_SIZE + e->name_len + exlen + cmlen;
        if (nl < mf_rd16le(h + 28))
            total += mf_rd16le(h + 28) - nl;
    }
    uint64_t *end = mf_arena_calloc(a, z->n ? z->n : 1, sizeof(uint64_t));
    if (!end)
        return mf_oom(st, z->file);
    python_end_offsets(z, end, a);
    for (size_t i = 0; i < z->n; i++) {
        mf_zip_entry *e = &z->entries[i];
        if (read_local(z, e, st))
            return -1;
        if (!e->refused && e->data_offset + e->csize > end[i])
            e->refused = "overlapped entries (zipfile: \"possible zip bomb\")";
    }
    return 0;
}

/* -------------------------------------------------------------- miniz */

static int miniz_end(mf_zip *z, uint64_t eocd, cd_info *ci, mf_status *st)
{
    const uint8_t *e = z->base + eocd;
    uint32_t on_disk = mf_rd16le(e + 8);
    ci->count = mf_rd16le(e + 10);
    ci->this_disk = mf_rd16le(e + 4);
    ci->cd_disk = mf_rd16le(e + 6);
    ci->cd_size = mf_rd32le(e + 12);
    ci->cd_offset = mf_rd32le(e + 16);
    uint64_t on_disk64 = on_disk;
    if (eocd >= LOC64_SIZE + EOCD64_SIZE && mf_rd32le(e - LOC64_SIZE) == SIG_LOC64) {
        const uint8_t *l = e - LOC64_SIZE;
        uint64_t off = mf_rd64le(l + 8);
        if (off > z->size - EOCD64_SIZE)
            return bad(z, eocd - LOC64_SIZE, "the ZIP64 locator points past the end", st);
        const uint8_t *r = z->base + off;
        if (mf_source_need(r, EOCD64_SIZE, st))
            return -1;
        if (mf_rd32le(r) == SIG_EOCD64) {
            if (mf_rd64le(r + 4) < EOCD64_SIZE - 12)
                return bad(z, off, "ZIP64 end record too small", st);
            if (mf_rd32le(l + 16) != 1)
                return bad(z, eocd - LOC64_SIZE, "multi-disk archive", st);
            ci->count = mf_rd64le(r + 32);
            on_disk64 = mf_rd64le(r + 24);
            if (ci->count > UINT32_MAX || on_disk64 > UINT32_MAX || mf_rd64le(r + 40) > UINT32_MAX)
                return bad(z, off, "beyond miniz's limits", st);
            ci->cd_size = mf_rd64le(r + 40);
            ci->this_disk = (uint16_t)(mf_rd32le(r + 16) ? 2 : 0); /* only 0/1 matter */
            if (mf_rd32le(r + 16) == 1)
                ci->this_disk = 1;
            ci->cd_disk = (uint16_t)(mf_rd32le(r + 20) > 1 ? 2 : mf_rd32le(r + 20));
            ci->cd_offset = mf_rd64le(r + 48);
            ci->zip64 = true;
        }
    }
    if (ci->count != on_disk64)
        return bad(z, eocd, "entry counts differ (multi-disk archive)", st);
    if ((ci->this_disk | ci->cd_disk) != 0 && (ci->this_disk != 1 || ci->cd_disk != 1))
        return bad(z, eocd, "multi-disk archive", st);
    if (ci->cd_size < ci->count * CDH_SIZE)
        return bad(z, eocd, "central directory too small for its entry count", st);
    if (ci->cd_offset > z->size || z->size - ci->cd_offset < ci->cd_size)
        return bad(z, eocd, "central directory is outside the file", st);
    ci->start = ci->cd_offset;
    return 0;
}

/* mz_zip_reader_filename_less / mz_zip_filename_compare: ASCII case folded. */
static int miniz_tolower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int miniz_cmp(const uint8_t *l, size_t ll, const uint8_t *r, size_t rl)
{
    size_t n = ll < rl ? ll : rl;
    for (size_t i = 0; i < n; i++) {
        int a = miniz_tolower(l[i]), b = miniz_tolower(r[i]);
        if (a != b)
            return a - b;
    }
    return (int)ll - (int)rl;
}

static bool miniz_less(const mf_zip *z, uint32_t a, uint32_t b)
{
    const mf_zip_entry *x = &z->entries[a], *y = &z->entries[b];
    return miniz_cmp(x->raw_name, x->name_len, y->raw_name, y->name_len) < 0;
}

static void sift(const mf_zip *z, uint32_t *ix, uint64_t root, uint64_t size)
{
    for (;;) {
        uint64_t child = root * 2 + 1;
        if (child >= size)
            break;
        if (child + 1 < size && miniz_less(z, ix[child], ix[child + 1]))
            child++;
        if (!miniz_less(z, ix[root], ix[child]))
            break;
        uint32_t t = ix[root];
        ix[root] = ix[child];
        ix[child] = t;
        root = child;
    }
}

/* mz_zip_reader_sort_central_dir_offsets_by_filename: the same heap sort,
 * so that equal names (ignoring case) end up where miniz puts them. */
static void miniz_sort(const mf_zip *z, uint32_t *ix)
{
    uint64_t size = z->n;
    for (uint64_t i = 0; i < size; i++)
        ix[i] = (uint32_t)i;
    if (size <= 1)
        return;
    for (uint64_t start = (size - 2) >> 1;; start--) {
        sift(z, ix, start, size);
        if (!start)
            break;
    }
    for (uint64_t end = size - 1; end > 0; end--) {
        uint32_t t = ix[end];
        ix[end] = ix[0];
        ix[0] = t;
        sift(z, ix, 0, end);
    }
}

static int miniz_read(mf_zip *z, uint64_t eocd, mf_arena *a, mf_status *st)
{
    cd_info ci = {0};
    if (miniz_end(z, eocd, &ci, st))
        return -1;
    z->zip64 = ci.zip64;
    z->cd_offset = ci.start;
    size_t cap = 0;
    const uint8_t *p = z->base + ci.start;
    uint64_t left = ci.cd_size;
    if (ci.start < z->size &&
        mf_source_need(p, left < z->size - ci.start ? left : z->size - ci.start, st))
        return -1; /* a remote archive: the whole directory at once */
    for (uint64_t i = 0; i < ci.count; i++) {
        uint64_t at = (uint64_t)(p - z->base);
        if (left < CDH_SIZE || mf_rd32le(p) != SIG_CENTRAL)
            return bad(z, at, "bad central directory record", st);
        mf_zip_entry *e = grow(z, &cap, a);
        if (!e)
            return mf_oom(st, z->file);
        fill_entry(e, p, at);
        uint16_t exlen = mf_rd16le(p + 30), cmlen = mf_rd16le(p + 32);
        uint64_t rec = CDH_SIZE + (uint64_t)e->name_len + exlen + cmlen;
        if (rec > left)
            return bad(z, at, "central directory record runs past the directory", st);
        if (e->csize != 0xffffffffu && e->usize != 0xffffffffu &&
            ((e->method == 0 && e->usize != e->csize) || (e->usize && !e->csize)))
            return bad(z, at, "sizes that contradict the method", st);
        uint16_t disk = mf_rd16le(p + 34);
        if (disk == 0xffff || (disk != ci.this_disk && disk != 1))
            return bad(z, at, "multi-disk archive", st);
        if (e->csize != 0xffffffffu && e->local_offset + LFH_SIZE + e->csize > z->size)
            return bad(z, at, "member data past the end of the file", st);
        if (e->flags & 0x2000)
            return bad(z, at, "masked local headers (encrypted central directory)", st);
        e->name = mf_arena_strndup(a, (const char *)e->raw_name, e->name_len);
        if (!e->name)
            return mf_oom(st, z->file);
        if (e->csize == 0xffffffffu || e->usize == 0xffffffffu || e->local_offset == 0xffffffffu)
            (void)apply_zip64_extra(p + CDH_SIZE + e->name_len, exlen, e);
        if (read_local(z, e, st))
            return -1;
        z->n++;
        p += rec;
        left -= rec;
    }
    z->sorted = mf_arena_calloc(a, z->n ? z->n : 1, sizeof(uint32_t));
    if (!z->sorted)
        return mf_oom(st, z->file);
    miniz_sort(z, z->sorted);
    return 0;
}

/* ------------------------------------------------------------ the API */

/* A remote archive: the end record, the ZIP64 records before it and the
 * 64 KiB comment both loaders search, fetched at once. */
static int need_tail(const uint8_t *base, uint64_t size, mf_status *st)
{
    uint64_t tail = (1u << 16) + EOCD_SIZE + LOC64_SIZE + EOCD64_SIZE;
    if (!base || size == 0)
        return 0; /* an empty file maps to NULL: nothing to fetch */
    if (tail > size)
        tail = size;
    return mf_source_need(base + size - tail, tail, st);
}

int mf_zip_open_at(mf_zip *z, mf_zip_dialect d, const uint8_t *base, uint64_t size,
                   uint64_t eocd, const char *file, mf_arena *a, mf_status *st)
{
    if (need_tail(base, size, st))
        return -1;
    memset(z, 0, sizeof(*z));
    z->base = base;
    z->size = size;
    z->file = file;
    z->dialect = d;
    z->eocd_offset = eocd;
    if (eocd > size || size - eocd < EOCD_SIZE || mf_rd32le(base + eocd) != SIG_EOCD)
        return bad(z, eocd, "no end-of-central-directory record here", st);
    return d == MF_ZIP_MINIZ ? miniz_read(z, eocd, a, st) : python_read(z, eocd, a, st);
}

int mf_zip_open_as(mf_zip *z, mf_zip_dialect d, const uint8_t *base, uint64_t size,
                   const char *file, mf_arena *a, mf_status *st)
{
    if (need_tail(base, size, st))
        return -1;
    int64_t eocd = d == MF_ZIP_MINIZ ? miniz_eocd(base, size) : python_eocd(base, size);
    if (eocd < 0) {
        memset(z, 0, sizeof(*z));
        z->file = file;
        z->dialect = d;
        return bad(z, size, "no end-of-central-directory record (not a zip file, or truncated)",
                   st);
    }
    return mf_zip_open_at(z, d, base, size, (uint64_t)eocd, file, a, st);
}

int mf_zip_open(mf_zip *z, const uint8_t *base, uint64_t size,
                const char *file, mf_arena *a, mf_status *st)
{
    return mf_zip_open_as(z, MF_ZIP_PYTHON, base, size, file, a, st);
}

bool mf_zip_starts(const uint8_t *b, uint64_t n)
{
    return n >= 4 && (memcmp(b, "PK\3\4", 4) == 0 || memcmp(b, "PK\5\6", 4) == 0);
}

bool mf_zip_same(const mf_zip *x, const mf_zip *y)
{
    if (x->n != y->n)
        return false;
    for (size_t i = 0; i < x->n; i++) {
        const mf_zip_entry *a = &x->entries[i], *b = &y->entries[i];
        if (strcmp(a->name, b->name) != 0 || a->local_offset != b->local_offset ||
            a->csize != b->csize || a->usize != b->usize || a->method != b->method ||
            a->data_offset != b->data_offset)
            return false;
    }
    return true;
}

static const mf_zip_entry *miniz_find(const mf_zip *z, const char *name)
{
    size_t nl = strlen(name);
    if (!z->sorted || nl > 0xffff)
        return NULL;
    int64_t lo = 0, hi = (int64_t)z->n - 1;
    while (lo <= hi) {
        int64_t mid = lo + ((hi - lo) >> 1);
        const mf_zip_entry *e = &z->entries[z->sorted[mid]];
        int c = miniz_cmp(e->raw_name, e->name_len, (const uint8_t *)name, nl);
        if (c == 0)
            return e;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

const mf_zip_entry *mf_zip_find(const mf_zip *z, const char *name)
{
    if (z->dialect == MF_ZIP_MINIZ)
        return miniz_find(z, name);
    for (size_t i = z->n; i-- > 0;) /* NameToInfo: the last one of a name wins */
        if (strcmp(z->entries[i].name, name) == 0)
            return &z->entries[i];
    return NULL;
}

size_t mf_zip_find_all(const mf_zip *z, const char *name, const mf_zip_entry **out, size_t max)
{
    size_t k = 0, nl = strlen(name);
    for (size_t i = 0; i < z->n && k < max; i++) {
        const mf_zip_entry *e = &z->entries[i];
        if (miniz_cmp(e->raw_name, e->name_len, (const uint8_t *)name, nl) == 0 ||
            strcasecmp(e->name, name) == 0)
            out[k++] = e;
    }
    return k;
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

static bool dup_name(const mf_zip *z, size_t i, size_t j)
{
    const mf_zip_entry *a = &z->entries[i], *b = &z->entries[j];
    if (z->dialect == MF_ZIP_MINIZ)
        return miniz_cmp(a->raw_name, a->name_len, b->raw_name, b->name_len) == 0;
    return strcmp(a->name, b->name) == 0;
}

typedef struct span {
    uint64_t lo, hi;
    size_t i;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

int mf_zip_ambiguities(const mf_zip *z, mf_zip_ambiguity *out)
{
    memset(out, 0, sizeof(*out));
    bool oom = false;
    if (z->n == 0)
        return 0;
    /* duplicate names: sort by the dialect's comparison, compare neighbours */
    uint32_t *ix = malloc(z->n * sizeof(uint32_t));
    span *sp = malloc(z->n * sizeof(span));
    if (!ix || !sp) {
        free(ix);
        free(sp);
        out->dup_names = z->n; /* cannot tell: say so */
        return -1;
    }
    if (z->sorted) {
        memcpy(ix, z->sorted, z->n * sizeof(uint32_t));
    } else {
        for (size_t i = 0; i < z->n; i++)
            ix[i] = (uint32_t)i;
    }
    if (z->dialect == MF_ZIP_MINIZ) {
        for (size_t k = 1; k < z->n; k++)
            if (dup_name(z, ix[k - 1], ix[k])) {
                out->dup_names++;
                out->dup_example = z->entries[ix[k]].name;
            }
    } else {
        mf_strset seen = {0};
        for (size_t i = 0; i < z->n; i++) {
            int r = mf_strset_add(&seen, z->entries[i].name);
            if (r < 0)
                oom = true;
            if (r == 0 || r < 0) {
                out->dup_names++;
                out->dup_example = z->entries[i].name;
            }
        }
        mf_strset_free(&seen);
    }
    /* overlapping members: [local header, end of data) spans */
    size_t k = 0;
    uint64_t first = UINT64_MAX;
    for (size_t i = 0; i < z->n; i++) {
        const mf_zip_entry *e = &z->entries[i];
        if (e->local_offset < first)
            first = e->local_offset;
        if (!e->local_ok)
            continue;
        uint64_t hi = e->data_offset + e->csize;
        sp[k++] = (span){e->local_offset, hi < e->data_offset ? UINT64_MAX : hi, i};
    }
    qsort(sp, k, sizeof(span), cmp_span);
    uint64_t reach = 0;
    for (size_t i = 0; i < k; i++) {
        if (i > 0 && sp[i].lo < reach) {
            out->overlaps++;
            out->overlap_example = z->entries[sp[i].i].name;
        }
        if (sp[i].hi > reach)
            reach = sp[i].hi;
    }
    out->lead_bytes = first == UINT64_MAX ? 0 : first;
    if (z->dialect == MF_ZIP_PYTHON && z->concat > 0)
        out->lead_bytes = first >= (uint64_t)z->concat ? first - (uint64_t)z->concat : 0;
    free(ix);
    free(sp);
    return oom ? -1 : 0;
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

const uint8_t *mf_zip_stored_span(const mf_zip *z, const mf_zip_entry *e,
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

const uint8_t *mf_zip_stored_data(const mf_zip *z, const mf_zip_entry *e,
                                  mf_status *st)
{
    const uint8_t *p = mf_zip_stored_span(z, e, st);
    return p && mf_source_need(p, e->usize, st) == 0 ? p : NULL;
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
    if (mf_source_need(z->base + e->data_offset, e->csize, st))
        return -1; /* a remote archive: the member's compressed bytes */
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
    /* a stored member's bytes must be in the file before its size is
     * allocated (a 1 KB archive may claim 4 GiB) */
    if (e->method == 0 && !mf_zip_stored_data(z, e, st))
        return -1;
    /* deflate expands at most ~1032:1, and its input is in the file: a size
     * claim beyond that is a lie */
    if (e->method == 8 && e->csize > z->size)
        return mf_fail(st, MF_ERR_FORMAT, z->file, (int64_t)e->cd_offset,
                       "zip: member \"%s\" claims %llu compressed bytes in a %llu-byte file",
                       e->name, (unsigned long long)e->csize, (unsigned long long)z->size);
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

typedef struct prefix_sink {
    uint8_t *p;
    size_t n, want;
} prefix_sink;

static int to_prefix(void *ctx, const void *buf, size_t n, mf_status *st)
{
    prefix_sink *b = ctx;
    size_t k = n < b->want - b->n ? n : b->want - b->n;
    memcpy(b->p + b->n, buf, k);
    b->n += k;
    if (b->n == b->want)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "prefix complete"); /* stops the inflater */
    return 0;
}

int mf_zip_extract_prefix(const mf_zip *z, const mf_zip_entry *e, size_t want,
                          uint8_t **out, size_t *len, mf_status *st)
{
    *out = NULL;
    *len = 0;
    if (e->usize < want)
        want = (size_t)e->usize;
    prefix_sink b = {malloc(want ? want : 1), 0, want};
    if (!b.p)
        return mf_oom(st, z->file);
    mf_status tmp;
    mf_status_init(&tmp);
    int rc = want ? mf_zip_stream(z, e, false, to_prefix, &b, &tmp) : 0;
    if (rc && !(tmp.code == MF_ERR_USAGE && b.n == want)) {
        mf_status_merge(st, &tmp);
        mf_status_clear(&tmp);
        free(b.p);
        return -1;
    }
    mf_status_clear(&tmp);
    *out = b.p;
    *len = b.n;
    return 0;
}
