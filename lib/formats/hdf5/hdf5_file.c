/* hdf5_file.c - HDF5 superblock (versions 0-3), addresses, checksums.
 * Spec: "Disk Format: Level 0A - Format Signature and Superblock". */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

static const uint8_t h5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

int h5_fail_at(h5_file *f, uint64_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_failv(f->st, MF_ERR_FORMAT, f->label, (int64_t)(f->origin + pos), fmt, ap);
    va_end(ap);
    return -1;
}

int h5_work(h5_file *f, uint64_t pos)
{
    if (++f->work <= f->work_max)
        return 0;
    return h5_fail_at(f, pos, "more than %llu metadata blocks visited: the structure loops "
                      "or is larger than the file can hold", (unsigned long long)f->work_max);
}

int h5_locate(h5_file *f, uint64_t addr, uint64_t n, const char *what, uint64_t *pos)
{
    uint64_t p, end;
    if (addr == H5_UNDEF)
        return h5_fail_at(f, 0, "%s: address is undefined", what);
    if (mf_add_ovf(addr, f->base_addr, &p) || mf_add_ovf(p, n, &end) || end > f->size)
        return h5_fail_at(f, p <= f->size ? p : 0,
                          "%s at address %llu (%llu bytes) lies past the end of the file "
                          "(%llu bytes)", what, (unsigned long long)addr,
                          (unsigned long long)n, (unsigned long long)f->size);
    *pos = p;
    return 0;
}

int h5_cursor_at(h5_file *f, uint64_t addr, uint64_t n, const char *what, mf_cursor *c)
{
    uint64_t pos;
    if (h5_locate(f, addr, n, what, &pos))
        return -1;
    if (n == 0)
        n = f->size - pos;
    mf_cur_init(c, f->base + pos, n, f->label, f->st);
    c->origin = f->origin + pos;
    return 0;
}

int h5_rd_uint(mf_cursor *c, unsigned nbytes, uint64_t *v, const char *what)
{
    const uint8_t *p;
    if (nbytes == 0 || nbytes > 8)
        return mf_cur_fail(c, "%s: field width %u is not 1 to 8 bytes", what, nbytes);
    if (mf_cur_bytes(c, nbytes, &p, what))
        return -1;
    uint64_t x = 0;
    for (unsigned i = 0; i < nbytes; i++)
        x |= (uint64_t)p[i] << (8 * i);
    *v = x;
    return 0;
}

int h5_rd_addr(h5_file *f, mf_cursor *c, uint64_t *v, const char *what)
{
    if (h5_rd_uint(c, f->sz_off, v, what))
        return -1;
    if (f->sz_off < 8 && *v == (1ull << (8 * f->sz_off)) - 1)
        *v = H5_UNDEF; /* all bits set in the file's width */
    return 0;
}

int h5_rd_len(h5_file *f, mf_cursor *c, uint64_t *v, const char *what)
{
    return h5_rd_uint(c, f->sz_len, v, what);
}

unsigned h5_bytes_for(uint64_t v)
{
    unsigned n = 1;
    while (n < 8 && (v >> (8 * n)) != 0)
        n++;
    return n;
}

/* ----------------------------------------------------------- checksums */
#define ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

/* lookup3's mix() and final() (Bob Jenkins, public domain description). */
static void l3_mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
    *a -= *c; *a ^= ROT(*c, 4);  *c += *b;
    *b -= *a; *b ^= ROT(*a, 6);  *a += *c;
    *c -= *b; *c ^= ROT(*b, 8);  *b += *a;
    *a -= *c; *a ^= ROT(*c, 16); *c += *b;
    *b -= *a; *b ^= ROT(*a, 19); *a += *c;
    *c -= *b; *c ^= ROT(*b, 4);  *b += *a;
}

static void l3_final(uint32_t *a, uint32_t *b, uint32_t *c)
{
    *c ^= *b; *c -= ROT(*b, 14);
    *a ^= *c; *a -= ROT(*c, 11);
    *b ^= *a; *b -= ROT(*a, 25);
    *c ^= *b; *c -= ROT(*b, 16);
    *a ^= *c; *a -= ROT(*c, 4);
    *b ^= *a; *b -= ROT(*a, 14);
    *c ^= *b; *c -= ROT(*b, 24);
}

uint32_t h5_lookup3(const uint8_t *k, size_t n, uint32_t init)
{
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)n + init;
    while (n > 12) {
        a += mf_rd32le(k);
        b += mf_rd32le(k + 4);
        c += mf_rd32le(k + 8);
        l3_mix(&a, &b, &c);
        n -= 12;
        k += 12;
    }
    if (n == 0)
        return c;
    /* the last 1..12 bytes, each added at its little-endian place */
    uint32_t *word[3] = {&a, &b, &c};
    for (size_t i = 0; i < n; i++)
        *word[i / 4] += (uint32_t)k[i] << (8 * (i % 4));
    l3_final(&a, &b, &c);
    return c;
}

uint32_t h5_fletcher32(const uint8_t *p, size_t n)
{
    uint32_t s1 = 0, s2 = 0;
    size_t words = n / 2;
    while (words) {
        size_t run = words > 360 ? 360 : words; /* keeps the sums in 32 bits */
        words -= run;
        while (run--) {
            s1 += (uint32_t)p[0] << 8 | p[1];
            s2 += s1;
            p += 2;
        }
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if (n % 2) {
        s1 += (uint32_t)p[0] << 8;
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return s2 << 16 | s1;
}

int h5_check_sig(h5_file *f, uint64_t pos, const char sig[4], const char *what)
{
    if (pos + 4 > f->size || memcmp(f->base + pos, sig, 4) != 0)
        return h5_fail_at(f, pos, "%s: signature \"%.4s\" missing", what, sig);
    return 0;
}

int h5_check_sum(h5_file *f, uint64_t pos, uint64_t n, const char *what)
{
    if (n < 4 || pos + n > f->size)
        return h5_fail_at(f, pos, "%s: %llu bytes do not fit in the file", what,
                          (unsigned long long)n);
    uint32_t want = mf_rd32le(f->base + pos + n - 4);
    uint32_t got = h5_lookup3(f->base + pos, (size_t)(n - 4), 0);
    if (want != got)
        return h5_fail_at(f, pos + n - 4, "%s: checksum %08x does not match the "
                          "computed %08x", what, want, got);
    return 0;
}

/* --------------------------------------------------------- address set */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

int h5_addrset_add(h5_addrset *s, uint64_t a)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        uint64_t *slot = malloc(cap * sizeof(*slot));
        if (!slot)
            return -1;
        memset(slot, 0xff, cap * sizeof(*slot));
        for (size_t i = 0; i < s->cap; i++) {
            if (s->slot[i] == UINT64_MAX)
                continue;
            size_t j = mix64(s->slot[i]) & (cap - 1);
            while (slot[j] != UINT64_MAX)
                j = (j + 1) & (cap - 1);
            slot[j] = s->slot[i];
        }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t j = mix64(a) & (s->cap - 1);
    while (s->slot[j] != UINT64_MAX) {
        if (s->slot[j] == a)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->slot[j] = a;
    s->n++;
    return 1;
}

void h5_addrset_free(h5_addrset *s)
{
    free(s->slot);
    memset(s, 0, sizeof(*s));
}

/* ----------------------------------------------------------- superblock */
static int valid_width(uint8_t w)
{
    return w == 2 || w == 4 || w == 8;
}

static int read_sizes(h5_file *f, mf_cursor *c)
{
    uint8_t so, sl;
    if (mf_cur_u8(c, &so, "size of offsets") || mf_cur_u8(c, &sl, "size of lengths"))
        return -1;
    if (!valid_width(so) || !valid_width(sl))
        return mf_cur_fail(c, "size of offsets %u / lengths %u: each must be 2, 4 or 8", so, sl);
    f->sz_off = so;
    f->sz_len = sl;
    return 0;
}

/* Versions 0 and 1: root group given as a symbol table entry. */
static int read_super_v01(h5_file *f, mf_cursor *c, uint64_t sb_pos)
{
    uint8_t v[4];
    for (int i = 0; i < 4; i++) /* free-space, root group, reserved, shared header */
        if (mf_cur_u8(c, &v[i], "superblock version fields"))
            return -1;
    if (read_sizes(f, c) || mf_cur_skip(c, 1, "reserved byte"))
        return -1;
    uint16_t leaf_k, node_k;
    uint32_t flags;
    if (mf_cur_u16(c, &leaf_k, "group leaf node K") || mf_cur_u16(c, &node_k, "group internal node K") ||
        mf_cur_u32(c, &flags, "file consistency flags"))
        return -1;
    if (leaf_k == 0 || node_k == 0)
        return mf_cur_fail(c, "group B-tree K values must be positive (leaf %u, internal %u)",
                           leaf_k, node_k);
    if (f->sb_version == 1 && mf_cur_skip(c, 4, "indexed storage K and reserved"))
        return -1;
    uint64_t base, fs, eof, drv, name_off, ohdr;
    if (h5_rd_addr(f, c, &base, "base address") || h5_rd_addr(f, c, &fs, "free-space address") ||
        h5_rd_addr(f, c, &eof, "end-of-file address") || h5_rd_addr(f, c, &drv, "driver info address") ||
        h5_rd_len(f, c, &name_off, "root link name offset") ||
        h5_rd_addr(f, c, &ohdr, "root object header address") || mf_cur_skip(c, 24, "root entry cache"))
        return -1;
    (void)base;
    f->base_addr = sb_pos; /* the library uses the superblock's own position */
    f->eof_addr = eof;
    f->root_addr = ohdr;
    return 0;
}

/* Versions 2 and 3: root group object header address, checksummed. */
static int read_super_v23(h5_file *f, mf_cursor *c, uint64_t sb_pos)
{
    uint8_t flags;
    if (read_sizes(f, c) || mf_cur_u8(c, &flags, "file consistency flags"))
        return -1;
    uint64_t base, ext, eof, root;
    if (h5_rd_addr(f, c, &base, "base address") || h5_rd_addr(f, c, &ext, "superblock extension address") ||
        h5_rd_addr(f, c, &eof, "end-of-file address") ||
        h5_rd_addr(f, c, &root, "root object header address") || mf_cur_skip(c, 4, "superblock checksum"))
        return -1;
    if (h5_check_sum(f, sb_pos, c->pos, "superblock"))
        return -1;
    (void)base;
    f->base_addr = sb_pos;
    f->eof_addr = eof;
    f->root_addr = root;
    return 0;
}

/* The signature sits at 0, 512, 1024, 2048, ... (a user block may precede). */
static int find_signature(const uint8_t *b, uint64_t size, uint64_t *at)
{
    for (uint64_t off = 0; off + 8 <= size; off = off ? off * 2 : 512) {
        if (memcmp(b + off, h5_signature, 8) == 0) {
            *at = off;
            return 0;
        }
    }
    return -1;
}

int h5_file_open(h5_file *f, const uint8_t *base, uint64_t size, uint64_t origin,
                 const char *label, mf_status *st)
{
    memset(f, 0, sizeof(*f));
    f->base = base;
    f->size = size;
    f->origin = origin;
    f->label = label;
    f->st = st;
    /* every metadata block takes at least 16 bytes of the file */
    f->work_max = size / 16 + 1024;
    uint64_t sb;
    if (!base || find_signature(base, size, &sb))
        return mf_fail(st, MF_ERR_FORMAT, label, (int64_t)origin,
                       "HDF5 signature \\211HDF\\r\\n\\032\\n not found at byte 0, 512, 1024, ...");
    mf_cursor c;
    mf_cur_init(&c, base + sb, size - sb, label, st);
    c.origin = origin + sb;
    uint8_t ver;
    if (mf_cur_skip(&c, 8, "signature") || mf_cur_u8(&c, &ver, "superblock version"))
        return -1;
    f->sb_version = ver;
    int rc;
    if (ver <= 1)
        rc = read_super_v01(f, &c, sb);
    else if (ver <= 3)
        rc = read_super_v23(f, &c, sb);
    else
        return h5_fail_at(f, sb + 8, "superblock version %u is not 0 to 3", ver);
    if (rc)
        return -1;
    /* The library compares the stored end-of-file address with the size of
     * the whole file (user block included): shorter means truncated. */
    if (f->eof_addr != H5_UNDEF && f->eof_addr > size)
        return h5_fail_at(f, sb, "end-of-file address %llu is past the end of the file "
                          "(%llu bytes): the file is truncated",
                          (unsigned long long)f->eof_addr, (unsigned long long)size);
    if (f->root_addr == H5_UNDEF)
        return h5_fail_at(f, sb, "root group object header address is undefined");
    return 0;
}
