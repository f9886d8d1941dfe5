/* hdf5_chunks.c - the chunk indexes: version 1 B-tree (type 1 nodes), and
 * the indexes of layout version 4 (Appendix C): single chunk, fixed array,
 * extensible array, version 2 B-tree (record types 10 and 11). The implicit
 * index needs no list (hdf5_stream.c computes its addresses).
 * Every index yields the same list: allocated chunks with their linear index
 * in the dataset's current chunk grid, sorted. */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

typedef struct grid {
    int r;
    uint64_t nch[MF_MAX_DIMS];    /* chunks per dimension (current size) */
    uint64_t down[MF_MAX_DIMS];   /* C-order strides of the current grid */
    uint64_t maxch[MF_MAX_DIMS];  /* chunks per dimension (maximum size) */
    uint64_t total;
} grid;

typedef struct lister {
    h5_file *f;
    const h5_dset *d;
    grid g;
    h5_chunks *out;
    bool filtered;
    h5_addrset seen;
} lister;

static int grid_init(h5_file *f, const h5_dset *d, grid *g)
{
    g->r = d->space.ndims;
    g->total = 1;
    for (int i = g->r - 1; i >= 0; i--) {
        uint64_t c = d->layout.chunk[i];
        g->nch[i] = d->space.dims[i] / c + (d->space.dims[i] % c != 0);
        uint64_t mx = d->space.maxdims[i];
        g->maxch[i] = mx == H5_UNDEF ? H5_UNDEF : mx / c + (mx % c != 0);
        g->down[i] = g->total;
        if (mf_mul_ovf(g->total, g->nch[i], &g->total))
            return h5_fail_at(f, 0, "dataset %s: chunk count overflows 64 bits", d->name);
    }
    return 0;
}

/* Adds a chunk given its scaled (chunk-unit) coordinates; chunks outside
 * the current extent (a shrunk dataset) are ignored. */
static int add_chunk(lister *l, const uint64_t *scaled, uint64_t addr, uint64_t size,
                     uint32_t mask, uint64_t pos)
{
    if (addr == H5_UNDEF)
        return 0;
    uint64_t lin = 0;
    for (int i = 0; i < l->g.r; i++) {
        if (scaled[i] >= l->g.nch[i])
            return 0;
        lin += scaled[i] * l->g.down[i];
    }
    if (l->out->n >= l->g.total)
        return h5_fail_at(l->f, pos, "dataset %s: more chunk records than chunks (%llu)",
                          l->d->name, (unsigned long long)l->g.total);
    h5_chunk c = {lin, addr, size, mask};
    if (MF_VEC_PUSH(*l->out, c))
        return mf_oom(l->f->st, l->f->label);
    return 0;
}

/* ------------------------------------------------------------ v1 B-tree */
static int btree1_node(lister *l, uint64_t addr, int want_level)
{
    h5_file *f = l->f;
    mf_cursor c;
    uint64_t pos, left, right;
    uint8_t type, level;
    uint16_t used;
    if (h5_locate(f, addr, 8, "chunk B-tree node", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, "TREE", "chunk B-tree node") ||
        h5_cursor_at(f, addr, 0, "chunk B-tree node", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &type, "node type") || mf_cur_u8(&c, &level, "node level") ||
        mf_cur_u16(&c, &used, "entries used") || h5_rd_addr(f, &c, &left, "left sibling") ||
        h5_rd_addr(f, &c, &right, "right sibling"))
        return -1;
    int added = h5_addrset_add(&l->seen, addr);
    if (added <= 0)
        return added < 0 ? mf_oom(f->st, f->label)
                         : h5_fail_at(f, pos, "chunk B-tree node reached twice (a loop)");
    if (type != 1)
        return h5_fail_at(f, pos + 4, "chunk B-tree node has type %u, not 1", type);
    if (want_level >= 0 && level != want_level)
        return h5_fail_at(f, pos + 5, "B-tree node level %u where %d is expected", level, want_level);
    int r = l->g.r;
    for (unsigned i = 0; i < used; i++) {
        uint32_t size, mask;
        uint64_t off[MF_MAX_DIMS + 1], child, kpos = pos + c.pos;
        if (mf_cur_u32(&c, &size, "chunk size") || mf_cur_u32(&c, &mask, "filter mask"))
            return -1;
        for (int k = 0; k <= r; k++)
            if (mf_cur_u64(&c, &off[k], "chunk offset"))
                return -1;
        if (h5_rd_addr(f, &c, &child, "child address"))
            return -1;
        if (level > 0) {
            if (btree1_node(l, child, level - 1))
                return -1;
            continue;
        }
        uint64_t scaled[MF_MAX_DIMS];
        for (int k = 0; k < r; k++) {
            if (off[k] % l->d->layout.chunk[k])
                return h5_fail_at(f, kpos, "chunk offset %llu in dimension %d is not a multiple "
                                  "of the chunk size %llu", (unsigned long long)off[k], k,
                                  (unsigned long long)l->d->layout.chunk[k]);
            scaled[k] = off[k] / l->d->layout.chunk[k];
        }
        if (add_chunk(l, scaled, child, size, mask, kpos))
            return -1;
    }
    return 0;
}

/* --------------------------------------------------- fixed array (FAHD) */
/* Chunk coordinates of element `idx` of an array laid out over the maximum
 * grid (fixed array, implicit) with the unlimited dimension `front` moved
 * first (extensible array); front < 0: no move. */
static int scaled_of(const grid *g, int front, uint64_t idx, uint64_t *scaled)
{
    int order[MF_MAX_DIMS], n = 0;
    if (front >= 0)
        order[n++] = front;
    for (int i = 0; i < g->r; i++)
        if (i != front)
            order[n++] = i;
    for (int k = n - 1; k >= 0; k--) {
        int dim = order[k];
        if (k == 0 && front >= 0) {
            scaled[dim] = idx;
            break;
        }
        uint64_t m = g->maxch[dim];
        if (m == 0 || m == H5_UNDEF)
            return -1;
        scaled[dim] = idx % m;
        idx /= m;
    }
    return 0;
}

/* One element: address, then (filtered) size and filter mask. */
static int array_element(lister *l, const uint8_t *p, unsigned esize, uint64_t idx, int front,
                         uint64_t pos)
{
    h5_file *f = l->f;
    mf_cursor c;
    mf_cur_init(&c, p, esize, f->label, f->st);
    c.origin = f->origin + pos;
    uint64_t addr, size = 0;
    uint32_t mask = 0;
    if (h5_rd_addr(f, &c, &addr, "chunk address"))
        return -1;
    if (l->filtered) {
        if (esize < f->sz_off + 5u)
            return h5_fail_at(f, pos, "filtered chunk element of %u bytes is too short", esize);
        if (h5_rd_uint(&c, esize - f->sz_off - 4, &size, "chunk size") ||
            mf_cur_u32(&c, &mask, "filter mask"))
            return -1;
    }
    uint64_t scaled[MF_MAX_DIMS];
    if (addr == H5_UNDEF || scaled_of(&l->g, front, idx, scaled))
        return 0;
    return add_chunk(l, scaled, addr, size, mask, pos);
}

static int farray(lister *l, uint64_t addr)
{
    h5_file *f = l->f;
    mf_cursor c;
    uint64_t pos, n, dblk;
    uint8_t ver, client, esize, page_bits;
    if (h5_locate(f, addr, 4, "fixed array header", &pos) ||
        h5_check_sig(f, pos, "FAHD", "fixed array header") ||
        h5_cursor_at(f, addr, 0, "fixed array header", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &ver, "version") || mf_cur_u8(&c, &client, "client id") ||
        mf_cur_u8(&c, &esize, "entry size") || mf_cur_u8(&c, &page_bits, "page bits") ||
        h5_rd_len(f, &c, &n, "entries") || h5_rd_addr(f, &c, &dblk, "data block address") ||
        mf_cur_skip(&c, 4, "checksum") || h5_check_sum(f, pos, c.pos, "fixed array header"))
        return -1;
    if (ver != 0 || client != (l->filtered ? 1 : 0) || esize < f->sz_off || page_bits >= 32)
        return h5_fail_at(f, pos, "fixed array header: version %u, client %u, entry size %u, "
                          "page bits %u are not valid here", ver, client, esize, page_bits);
    if (dblk == H5_UNDEF || n == 0)
        return 0;
    uint64_t page = 1ull << page_bits, npages = n > page ? n / page + (n % page != 0) : 0;
    uint64_t bitmap = (npages + 7) / 8, bytes;
    uint64_t prefix = 6 + f->sz_off + bitmap + 4, dpos;
    if (mf_mul_ovf(n, esize, &bytes) || mf_add_ovf(bytes, prefix + 4 * npages, &bytes) ||
        h5_locate(f, dblk, bytes, "fixed array data block", &dpos) ||
        h5_check_sig(f, dpos, "FADB", "fixed array data block"))
        return -1;
    if (npages == 0) {
        if (h5_check_sum(f, dpos, 6 + f->sz_off + n * esize + 4, "fixed array data block"))
            return -1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t at = dpos + 6 + f->sz_off + i * esize;
            if (array_element(l, f->base + at, esize, i, -1, at))
                return -1;
        }
        return 0;
    }
    if (h5_check_sum(f, dpos, prefix, "fixed array data block"))
        return -1;
    const uint8_t *bits = f->base + dpos + 6 + f->sz_off;
    uint64_t at = dpos + prefix;
    for (uint64_t p = 0; p < npages; p++) {
        uint64_t cnt = p + 1 < npages ? page : n - p * page;
        if (bits[p / 8] & (0x80 >> (p % 8))) { /* page initialized */
            if (h5_check_sum(f, at, cnt * esize + 4, "fixed array page"))
                return -1;
            for (uint64_t i = 0; i < cnt; i++)
                if (array_element(l, f->base + at + i * esize, esize, p * page + i, -1,
                                  at + i * esize))
                    return -1;
        }
        at += cnt * esize + 4;
    }
    return 0;
}

/* --------------------------------------------- extensible array (EAHD) */
typedef struct earray {
    uint8_t esize, max_bits, idx_elmts, min_elmts, min_ptrs, page_bits;
    unsigned nsblks, iblock_nsblks, ndblk_addrs, nsblk_addrs, off_bytes;
    uint64_t max_index;
    int front;
} earray;

static unsigned ilog2(uint64_t v)
{
    unsigned n = 0;
    while (v >>= 1)
        n++;
    return n;
}

/* Super block u: 2^(u/2) data blocks of 2^((u+1)/2) * min elements. */
static uint64_t sb_ndblks(unsigned u) { return 1ull << (u / 2); }
static uint64_t sb_nelmts(const earray *e, unsigned u) { return (1ull << ((u + 1) / 2)) * e->min_elmts; }

static int ea_dblock(lister *l, const earray *e, uint64_t addr, uint64_t first, uint64_t nelmts,
                     const uint8_t *bitmap, uint64_t bit0)
{
    h5_file *f = l->f;
    uint64_t page = 1ull << e->page_bits, pos;
    bool paged = nelmts > page;
    uint64_t npages = paged ? nelmts / page : 0;
    uint64_t prefix = 6 + f->sz_off + e->off_bytes + 4;
    uint64_t bytes = paged ? prefix + npages * (page * e->esize + 4) : prefix + nelmts * e->esize;
    if (h5_locate(f, addr, bytes, "extensible array data block", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, "EADB", "extensible array data block"))
        return -1;
    if (!paged) {
        if (h5_check_sum(f, pos, bytes, "extensible array data block"))
            return -1;
        for (uint64_t i = 0; i < nelmts && first + i < e->max_index; i++) {
            uint64_t at = pos + prefix - 4 + i * e->esize;
            if (array_element(l, f->base + at, e->esize, first + i, e->front, at))
                return -1;
        }
        return 0;
    }
    if (h5_check_sum(f, pos, prefix, "extensible array data block"))
        return -1;
    for (uint64_t p = 0; p < npages; p++) {
        uint64_t at = pos + prefix + p * (page * e->esize + 4), b = bit0 + p;
        if (bitmap && !(bitmap[b / 8] & (0x80 >> (b % 8))))
            continue;
        if (h5_check_sum(f, at, page * e->esize + 4, "extensible array page"))
            return -1;
        for (uint64_t i = 0; i < page && first + p * page + i < e->max_index; i++)
            if (array_element(l, f->base + at + i * e->esize, e->esize, first + p * page + i,
                              e->front, at + i * e->esize))
                return -1;
    }
    return 0;
}

static int ea_super(lister *l, const earray *e, uint64_t addr, unsigned u, uint64_t first)
{
    h5_file *f = l->f;
    uint64_t nd = sb_ndblks(u), ne = sb_nelmts(e, u), page = 1ull << e->page_bits;
    uint64_t npages = ne > page ? ne / page : 0;
    /* the library allocates ceil(npages / 8) bytes per data block but sets
     * the bits contiguously (data block k, page p: bit k * npages + p) */
    uint64_t bitmap = nd * ((npages + 7) / 8);
    uint64_t bytes = 6 + f->sz_off + e->off_bytes + bitmap + nd * f->sz_off + 4, pos;
    if (h5_locate(f, addr, bytes, "extensible array super block", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, "EASB", "extensible array super block") ||
        h5_check_sum(f, pos, bytes, "extensible array super block"))
        return -1;
    const uint8_t *bits = npages ? f->base + pos + 6 + f->sz_off + e->off_bytes : NULL;
    mf_cursor c;
    mf_cur_init(&c, f->base + pos, bytes, f->label, f->st);
    c.origin = f->origin + pos;
    c.pos = 6 + f->sz_off + e->off_bytes + bitmap;
    for (uint64_t k = 0; k < nd && first + k * ne < e->max_index; k++) {
        uint64_t daddr;
        if (h5_rd_addr(f, &c, &daddr, "data block address"))
            return -1;
        if (daddr != H5_UNDEF && ea_dblock(l, e, daddr, first + k * ne, ne, bits, k * npages))
            return -1;
    }
    return 0;
}

static int earray_read(lister *l, uint64_t addr)
{
    h5_file *f = l->f;
    mf_cursor c;
    earray e = {0};
    uint64_t pos, skip, nelmts, iaddr;
    uint8_t ver, client;
    if (h5_locate(f, addr, 4, "extensible array header", &pos) ||
        h5_check_sig(f, pos, "EAHD", "extensible array header") ||
        h5_cursor_at(f, addr, 0, "extensible array header", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &ver, "version") || mf_cur_u8(&c, &client, "client id") ||
        mf_cur_u8(&c, &e.esize, "element size") || mf_cur_u8(&c, &e.max_bits, "max bits") ||
        mf_cur_u8(&c, &e.idx_elmts, "index block elements") ||
        mf_cur_u8(&c, &e.min_elmts, "data block min elements") ||
        mf_cur_u8(&c, &e.min_ptrs, "super block min pointers") ||
        mf_cur_u8(&c, &e.page_bits, "page bits"))
        return -1;
    for (int i = 0; i < 4; i++)
        if (h5_rd_len(f, &c, &skip, "extensible array statistics"))
            return -1;
    if (h5_rd_len(f, &c, &e.max_index, "max index set") || h5_rd_len(f, &c, &nelmts, "elements") ||
        h5_rd_addr(f, &c, &iaddr, "index block address") || mf_cur_skip(&c, 4, "checksum") ||
        h5_check_sum(f, pos, c.pos, "extensible array header"))
        return -1;
    bool p2 = e.min_elmts && !(e.min_elmts & (e.min_elmts - 1)) && e.min_ptrs >= 2 &&
              !(e.min_ptrs & (e.min_ptrs - 1));
    if (ver != 0 || client != (l->filtered ? 1 : 0) || e.esize < f->sz_off || !p2 ||
        e.max_bits > 64 || e.max_bits <= ilog2(e.min_elmts) || e.page_bits >= 32)
        return h5_fail_at(f, pos, "extensible array header parameters are not valid");
    if (iaddr == H5_UNDEF)
        return 0;
    e.nsblks = 1 + e.max_bits - ilog2(e.min_elmts);
    e.iblock_nsblks = 2 * ilog2(e.min_ptrs);
    e.ndblk_addrs = 2 * (e.min_ptrs - 1u);
    e.nsblk_addrs = e.nsblks > e.iblock_nsblks ? e.nsblks - e.iblock_nsblks : 0;
    e.off_bytes = (e.max_bits + 7u) / 8;
    e.front = -1;
    for (int i = 0; i < l->g.r; i++)
        if (l->d->space.maxdims[i] == H5_UNDEF)
            e.front = i;
    if (e.front < 0)
        return h5_fail_at(f, pos, "extensible array index on a dataset with no unlimited dimension");
    /* index block: elements, data block addresses, super block addresses */
    uint64_t ipos, ibytes = 6 + f->sz_off + (uint64_t)e.idx_elmts * e.esize +
                            ((uint64_t)e.ndblk_addrs + e.nsblk_addrs) * f->sz_off + 4;
    if (h5_locate(f, iaddr, ibytes, "extensible array index block", &ipos) ||
        h5_check_sig(f, ipos, "EAIB", "extensible array index block") ||
        h5_check_sum(f, ipos, ibytes, "extensible array index block"))
        return -1;
    uint64_t at = ipos + 6 + f->sz_off;
    for (uint64_t i = 0; i < e.idx_elmts && i < e.max_index; i++)
        if (array_element(l, f->base + at + i * e.esize, e.esize, i, e.front, at + i * e.esize))
            return -1;
    mf_cursor ac;
    mf_cur_init(&ac, f->base + ipos, ibytes, f->label, f->st);
    ac.origin = f->origin + ipos;
    ac.pos = 6 + f->sz_off + (uint64_t)e.idx_elmts * e.esize;
    uint64_t first = e.idx_elmts, dblk_seen = 0;
    /* u < 56 keeps the element counts below 2^64 (no file gets near) */
    for (unsigned u = 0; u < e.nsblks && u < 56 && first < e.max_index; u++) {
        uint64_t nd = sb_ndblks(u), ne = sb_nelmts(&e, u);
        if (u < e.iblock_nsblks) {
            for (uint64_t k = 0; k < nd; k++, dblk_seen++) {
                uint64_t daddr;
                if (dblk_seen >= e.ndblk_addrs || h5_rd_addr(f, &ac, &daddr, "data block address"))
                    return dblk_seen >= e.ndblk_addrs
                               ? h5_fail_at(f, ipos, "extensible array geometry is inconsistent")
                               : -1;
                if (daddr != H5_UNDEF && ea_dblock(l, &e, daddr, first + k * ne, ne, NULL, 0))
                    return -1;
            }
        } else {
            uint64_t saddr;
            ac.pos = 6 + f->sz_off + (uint64_t)e.idx_elmts * e.esize +
                     ((uint64_t)e.ndblk_addrs + (u - e.iblock_nsblks)) * f->sz_off;
            if (h5_rd_addr(f, &ac, &saddr, "super block address"))
                return -1;
            if (saddr != H5_UNDEF && ea_super(l, &e, saddr, u, first))
                return -1;
        }
        first += nd * ne;
    }
    return 0;
}

/* ------------------------------------------------- v2 B-tree (10, 11) */
static int bt2_chunk(void *ctx, const uint8_t *rec, uint32_t size, uint64_t pos)
{
    lister *l = ctx;
    h5_file *f = l->f;
    int r = l->g.r;
    uint64_t fixed = f->sz_off + 8ull * r + (l->filtered ? 4 : 0);
    if (size < fixed + (l->filtered ? 1 : 0))
        return h5_fail_at(f, pos, "chunk record of %u bytes is too short", size);
    mf_cursor c;
    mf_cur_init(&c, rec, size, f->label, f->st);
    c.origin = f->origin + pos;
    uint64_t addr, csize = 0, scaled[MF_MAX_DIMS];
    uint32_t mask = 0;
    if (h5_rd_addr(f, &c, &addr, "chunk address"))
        return -1;
    if (l->filtered && (h5_rd_uint(&c, (unsigned)(size - fixed), &csize, "chunk size") ||
                        mf_cur_u32(&c, &mask, "filter mask")))
        return -1;
    for (int k = 0; k < r; k++)
        if (mf_cur_u64(&c, &scaled[k], "scaled offset"))
            return -1;
    return add_chunk(l, scaled, addr, csize, mask, pos);
}

/* ---------------------------------------------------------------- list */
static int cmp_chunk(const void *a, const void *b)
{
    const h5_chunk *x = a, *y = b;
    return x->lin < y->lin ? -1 : x->lin > y->lin;
}

static int cmp_chunk_addr(const void *a, const void *b)
{
    const h5_chunk *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* HDF5 never stores two chunks in the same bytes. Records that share or
 * overlap storage would let a small file stand for any number of decoded
 * chunks (a chunk bomb): refused, naming both. */
static int check_no_overlap(h5_file *f, const h5_dset *d, const h5_chunks *list)
{
    if (list->n < 2)
        return 0;
    uint64_t raw = d->esize;
    for (int i = 0; i < d->space.ndims; i++)
        if (mf_mul_ovf(raw, d->layout.chunk[i], &raw))
            return h5_fail_at(f, 0, "dataset %s: chunk size overflows", d->name);
    h5_chunk *v = malloc(list->n * sizeof(h5_chunk));
    if (!v)
        return mf_oom(f->st, f->label);
    memcpy(v, list->v, list->n * sizeof(h5_chunk));
    qsort(v, list->n, sizeof(h5_chunk), cmp_chunk_addr);
    int rc = 0;
    for (size_t i = 1; i < list->n && rc == 0; i++) {
        uint64_t len = d->pipeline.n > 0 ? v[i - 1].size : raw, end;
        if (mf_add_ovf(v[i - 1].addr, len, &end) || end > v[i].addr)
            rc = h5_fail_at(f, f->base_addr + v[i].addr,
                            "dataset %s: chunks %llu and %llu share stored bytes (at %llu)",
                            d->name, (unsigned long long)v[i - 1].lin,
                            (unsigned long long)v[i].lin, (unsigned long long)v[i].addr);
    }
    free(v);
    return rc;
}

int h5_chunks_list(h5_file *f, const h5_dset *d, h5_chunks *out)
{
    lister l = {.f = f, .d = d, .out = out, .filtered = d->pipeline.n > 0};
    if (grid_init(f, d, &l.g))
        return -1;
    const h5_layout *lay = &d->layout;
    int rc = 0;
    if (lay->addr == H5_UNDEF || l.g.total == 0)
        return 0;
    switch (lay->index) {
    case H5I_BTREE1: rc = btree1_node(&l, lay->addr, -1); break;
    case H5I_SINGLE: {
        uint64_t zero[MF_MAX_DIMS] = {0};
        rc = add_chunk(&l, zero, lay->addr, lay->single_size,
                       lay->flags & 2 ? lay->single_mask : 0, 0);
        break;
    }
    case H5I_FARRAY: rc = farray(&l, lay->addr); break;
    case H5I_EARRAY: rc = earray_read(&l, lay->addr); break;
    case H5I_BTREE2: rc = h5_bt2_iterate(f, lay->addr, l.filtered ? 11 : 10, bt2_chunk, &l); break;
    default:
        rc = h5_fail_at(f, 0, "dataset %s: chunk index %d has no list", d->name, lay->index);
    }
    h5_addrset_free(&l.seen);
    if (rc)
        return -1;
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(h5_chunk), cmp_chunk);
    for (size_t i = 1; i < out->n; i++)
        if (out->v[i].lin == out->v[i - 1].lin)
            return h5_fail_at(f, f->base_addr + lay->addr, "dataset %s: two records for chunk %llu",
                              d->name, (unsigned long long)out->v[i].lin);
    return check_no_overlap(f, d, out);
}
