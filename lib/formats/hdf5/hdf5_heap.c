/* hdf5_heap.c - local heaps, fractal heaps and version 2 B-trees (the
 * storage of dense links and attributes, and a chunk index). Spec: "Level
 * 1D - Local Heaps", "Level 1G - Fractal Heap", "Level 1A2 - Version 2
 * B-trees". */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

/* ----------------------------------------------------------- local heap */
int h5_local_heap(h5_file *f, uint64_t addr, const uint8_t **data, uint64_t *size,
                  uint64_t *pos)
{
    mf_cursor c;
    uint64_t hpos, dsize, free_head, daddr;
    uint8_t ver;
    if (h5_locate(f, addr, 8, "local heap", &hpos) || h5_check_sig(f, hpos, "HEAP", "local heap") ||
        h5_cursor_at(f, addr, 0, "local heap", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &ver, "local heap version") || mf_cur_skip(&c, 3, "reserved") ||
        h5_rd_len(f, &c, &dsize, "data segment size") || h5_rd_len(f, &c, &free_head, "free list") ||
        h5_rd_addr(f, &c, &daddr, "data segment address"))
        return -1;
    if (ver != 0)
        return h5_fail_at(f, hpos + 4, "local heap version %u is not 0", ver);
    if (h5_locate(f, daddr, dsize, "local heap data segment", pos))
        return -1;
    *data = f->base + *pos;
    *size = dsize;
    return 0;
}

/* ---------------------------------------------------------- fractal heap */
static bool pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

static unsigned log2u(uint64_t v)
{
    unsigned n = 0;
    while (v >>= 1)
        n++;
    return n;
}

int h5_fheap_open(h5_file *f, uint64_t addr, h5_fheap *h)
{
    memset(h, 0, sizeof(*h));
    h->addr = addr;
    mf_cursor c;
    uint64_t pos, skip;
    uint8_t ver;
    if (h5_locate(f, addr, 4, "fractal heap header", &pos) ||
        h5_check_sig(f, pos, "FRHP", "fractal heap header") ||
        h5_cursor_at(f, addr, 0, "fractal heap header", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &ver, "fractal heap version") || mf_cur_u16(&c, &h->id_len, "heap ID length") ||
        mf_cur_u16(&c, &h->filter_len, "I/O filter length") || mf_cur_u8(&c, &h->flags, "flags") ||
        mf_cur_u32(&c, &h->max_managed, "maximum managed object size"))
        return -1;
    if (ver != 0)
        return h5_fail_at(f, pos + 4, "fractal heap version %u is not 0", ver);
    /* next huge ID, huge B-tree, free space, free-space manager, managed
     * space, allocated space, iterator, #managed, huge size, #huge, tiny
     * size, #tiny: skipped */
    for (int i = 0; i < 12; i++) {
        bool is_addr = i == 1 || i == 3;
        if ((is_addr ? h5_rd_addr(f, &c, &skip, "fractal heap field")
                     : h5_rd_len(f, &c, &skip, "fractal heap field")))
            return -1;
        if (i == 1)
            h->huge_btree = skip;
    }
    uint16_t start_rows;
    if (mf_cur_u16(&c, &h->width, "table width") || h5_rd_len(f, &c, &h->start_block, "starting block size") ||
        h5_rd_len(f, &c, &h->max_direct, "maximum direct block size") ||
        mf_cur_u16(&c, &h->max_heap_bits, "maximum heap size") ||
        mf_cur_u16(&c, &start_rows, "starting rows") || h5_rd_addr(f, &c, &h->root_addr, "root block address") ||
        mf_cur_u16(&c, &h->root_rows, "root rows"))
        return -1;
    if (h->filter_len) {
        uint64_t fsize;
        uint32_t mask;
        if (h5_rd_len(f, &c, &fsize, "filtered root size") || mf_cur_u32(&c, &mask, "filter mask") ||
            mf_cur_skip(&c, h->filter_len, "filter information"))
            return -1;
    }
    if (mf_cur_skip(&c, 4, "checksum") || h5_check_sum(f, pos, c.pos, "fractal heap header"))
        return -1;
    if (!pow2(h->width) || !pow2(h->start_block) || !pow2(h->max_direct) ||
        h->start_block > h->max_direct || h->max_heap_bits == 0 || h->max_heap_bits > 64 ||
        log2u(h->max_direct) >= h->max_heap_bits + 1u || h->width > 4096)
        return h5_fail_at(f, pos, "fractal heap doubling table is invalid (width %u, start %llu, "
                          "max direct %llu, heap bits %u)", h->width,
                          (unsigned long long)h->start_block, (unsigned long long)h->max_direct,
                          h->max_heap_bits);
    h->max_dblock_rows = log2u(h->max_direct) - log2u(h->start_block) + 2;
    h->off_bytes = (h->max_heap_bits + 7u) / 8;
    unsigned dir_bytes = (log2u(h->max_direct) + 7u) / 8;
    unsigned man_bytes = h5_bytes_for(h->max_managed);
    h->len_bytes = dir_bytes < man_bytes ? dir_bytes : man_bytes;
    if (h->len_bytes == 0)
        h->len_bytes = 1;
    return 0;
}

/* v << s, saturating at UINT64_MAX. */
static uint64_t shl_sat(uint64_t v, unsigned s)
{
    if (s >= 64 || (s && v >> (64 - s)))
        return UINT64_MAX;
    return v << s;
}

/* Block size of a row of the doubling table. */
static uint64_t row_size(const h5_fheap *h, unsigned r)
{
    return r == 0 ? h->start_block : shl_sat(h->start_block, r - 1);
}

/* Heap offset where a row starts, inside its indirect block. */
static uint64_t row_offset(const h5_fheap *h, unsigned r)
{
    return r == 0 ? 0 : shl_sat((uint64_t)h->width * h->start_block, r - 1);
}

/* Finds the direct block holding heap offset `off`. */
static int find_dblock(h5_file *f, const h5_fheap *h, uint64_t off, uint64_t *daddr,
                       uint64_t *dstart, uint64_t *dsize)
{
    if (h->root_addr == H5_UNDEF)
        return h5_fail_at(f, f->base_addr + h->addr, "fractal heap is empty");
    if (h->root_rows == 0) {
        *daddr = h->root_addr;
        *dstart = 0;
        *dsize = h->start_block;
        return 0;
    }
    uint64_t iaddr = h->root_addr, ioff = 0;
    unsigned nrows = h->root_rows;
    for (int depth = 0; depth < 64; depth++) {
        if (nrows > h->max_heap_bits + 2u)
            return h5_fail_at(f, f->base_addr + iaddr, "fractal heap indirect block has %u rows", nrows);
        uint64_t rel = off - ioff;
        unsigned r = 0;
        while (r + 1 < nrows && rel >= row_offset(h, r + 1))
            r++;
        uint64_t col = (rel - row_offset(h, r)) / row_size(h, r);
        if (col >= h->width)
            return h5_fail_at(f, f->base_addr + iaddr, "heap offset %llu lies beyond the indirect "
                              "block's %u rows", (unsigned long long)off, nrows);
        unsigned k_rows = nrows < h->max_dblock_rows ? nrows : h->max_dblock_rows;
        uint64_t entry_size = f->sz_off + (h->filter_len ? f->sz_len + 4u : 0);
        uint64_t entry, at;
        bool direct = r < h->max_dblock_rows;
        if (direct) {
            entry = (uint64_t)r * h->width + col;
            at = 5 + f->sz_off + h->off_bytes + entry * entry_size;
        } else {
            entry = (uint64_t)(r - h->max_dblock_rows) * h->width + col;
            at = 5 + f->sz_off + h->off_bytes + (uint64_t)k_rows * h->width * entry_size +
                 entry * f->sz_off;
        }
        mf_cursor c;
        uint64_t ipos, child;
        if (h5_locate(f, iaddr, 4, "fractal heap indirect block", &ipos) || h5_work(f, ipos) ||
            h5_check_sig(f, ipos, "FHIB", "fractal heap indirect block") ||
            h5_cursor_at(f, iaddr, 0, "fractal heap indirect block", &c) ||
            mf_cur_seek(&c, at, "indirect block entry") || h5_rd_addr(f, &c, &child, "child block address"))
            return -1;
        uint64_t cstart = ioff + row_offset(h, r) + col * row_size(h, r);
        if (child == H5_UNDEF)
            return h5_fail_at(f, ipos + at, "heap offset %llu lies in an unallocated block",
                              (unsigned long long)off);
        if (direct) {
            *daddr = child;
            *dstart = cstart;
            *dsize = row_size(h, r);
            return 0;
        }
        unsigned child_rows = log2u(row_size(h, r)) - log2u(h->start_block * h->width) + 1;
        if (child_rows >= nrows)
            return h5_fail_at(f, ipos, "fractal heap child indirect block does not shrink");
        iaddr = child;
        ioff = cstart;
        nrows = child_rows;
    }
    return h5_fail_at(f, f->base_addr + h->addr, "fractal heap deeper than 64 levels");
}

static uint64_t le_bytes(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n && i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Huge objects too big for their heap ID: found in the heap's v2 B-tree of
 * type 1 records (address, length, object ID). */
typedef struct huge_find {
    h5_file *f;
    uint64_t id, addr, len;
    bool found;
} huge_find;

static int huge_record(void *ctx, const uint8_t *rec, uint32_t size, uint64_t pos)
{
    huge_find *h = ctx;
    h5_file *f = h->f;
    mf_cursor c;
    mf_cur_init(&c, rec, size, f->label, f->st);
    c.origin = f->origin + pos;
    uint64_t addr, len, id;
    if (h5_rd_addr(f, &c, &addr, "huge object address") || h5_rd_len(f, &c, &len, "huge object length") ||
        h5_rd_len(f, &c, &id, "huge object ID"))
        return -1;
    if (id == h->id && !h->found) {
        h->found = true;
        h->addr = addr;
        h->len = len;
    }
    return 0;
}

static int huge_lookup(h5_file *f, const h5_fheap *h, uint64_t id, uint64_t id_pos,
                       const uint8_t **p, uint64_t *n, uint64_t *pos)
{
    huge_find hf = {.f = f, .id = id};
    if (h->huge_btree == H5_UNDEF)
        return h5_fail_at(f, id_pos, "huge heap object %llu, but the heap has no huge objects",
                          (unsigned long long)id);
    if (h5_bt2_iterate(f, h->huge_btree, 1, huge_record, &hf))
        return -1;
    if (!hf.found)
        return h5_fail_at(f, id_pos, "huge heap object %llu is not in the heap's B-tree",
                          (unsigned long long)id);
    if (h5_locate(f, hf.addr, hf.len, "huge heap object", pos))
        return -1;
    *p = f->base + *pos;
    *n = hf.len;
    return 0;
}

int h5_fheap_get(h5_file *f, const h5_fheap *h, const uint8_t *id, size_t id_len,
                 const uint8_t **p, uint64_t *n, uint64_t *pos)
{
    uint64_t id_pos = (uint64_t)(id - f->base);
    if (id_len < 1)
        return h5_fail_at(f, id_pos, "empty fractal heap ID");
    unsigned ver = id[0] >> 6, type = (id[0] >> 4) & 3;
    if (ver != 0)
        return h5_fail_at(f, id_pos, "fractal heap ID version %u is not 0", ver);
    if (type == 2) { /* tiny: the object is inside the ID */
        bool ext = h->id_len > 18;
        uint64_t len = ext ? ((uint64_t)(id[0] & 0x0f) << 8 | (id_len > 1 ? id[1] : 0)) + 1
                           : (uint64_t)(id[0] & 0x0f) + 1;
        uint64_t hdr = ext ? 2 : 1;
        if (hdr + len > id_len)
            return h5_fail_at(f, id_pos, "tiny heap object of %llu bytes does not fit its %zu-byte ID",
                              (unsigned long long)len, id_len);
        *p = id + hdr;
        *n = len;
        *pos = id_pos + hdr;
        return 0;
    }
    if (type == 1) {
        if (h->filter_len == 0 && id_len >= 1u + f->sz_off + f->sz_len) {
            mf_cursor c;
            mf_cur_init(&c, id + 1, id_len - 1, f->label, f->st);
            c.origin = f->origin + id_pos + 1;
            uint64_t addr, len;
            if (h5_rd_addr(f, &c, &addr, "huge object address") ||
                h5_rd_len(f, &c, &len, "huge object length") ||
                h5_locate(f, addr, len, "huge heap object", pos))
                return -1;
            *p = f->base + *pos;
            *n = len;
            return 0;
        }
        if (h->filter_len) {
            mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, (int64_t)(f->origin + id_pos),
                    "filtered huge fractal heap objects are not supported");
            return -1;
        }
        return huge_lookup(f, h, le_bytes(id + 1, (unsigned)(id_len - 1)), id_pos, p, n, pos);
    }
    if (type != 0)
        return h5_fail_at(f, id_pos, "fractal heap ID type %u is unknown", type);
    if (1 + h->off_bytes + h->len_bytes > id_len)
        return h5_fail_at(f, id_pos, "managed heap ID of %zu bytes is too short", id_len);
    uint64_t off = le_bytes(id + 1, h->off_bytes);
    uint64_t len = le_bytes(id + 1 + h->off_bytes, h->len_bytes);
    if (h->filter_len) {
        mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, (int64_t)(f->origin + id_pos),
                "filtered fractal heap blocks are not supported");
        return -1;
    }
    uint64_t daddr = 0, dstart = 0, dsize = 0, dpos;
    if (find_dblock(f, h, off, &daddr, &dstart, &dsize))
        return -1;
    uint64_t prefix = 5 + f->sz_off + h->off_bytes + ((h->flags & 2) ? 4 : 0);
    if (h5_locate(f, daddr, dsize, "fractal heap direct block", &dpos) ||
        h5_check_sig(f, dpos, "FHDB", "fractal heap direct block"))
        return -1;
    uint64_t rel = off - dstart;
    if (rel < prefix || rel > dsize || len > dsize - rel)
        return h5_fail_at(f, dpos, "heap object at offset %llu (%llu bytes) does not lie inside "
                          "its direct block", (unsigned long long)off, (unsigned long long)len);
    *pos = dpos + rel;
    *p = f->base + *pos;
    *n = len;
    return 0;
}

/* ----------------------------------------------------------- v2 B-tree */
typedef struct bt2 {
    h5_file *f;
    uint8_t type;
    uint32_t node_size;
    uint16_t rec_size;
    uint16_t depth;
    uint64_t max_nrec[33];       /* per level (0 = leaves) */
    uint64_t cum_max[33];
    unsigned nrec_bytes;         /* "number of records" fields (leaf max) */
    unsigned cum_bytes[33];      /* "total records" fields, per level */
    h5_bt2_fn fn;
    void *ctx;
} bt2;

/* Node capacities, as the library derives them from the node size. */
static int bt2_geometry(bt2 *t, uint64_t pos)
{
    const uint64_t prefix = 10; /* signature, version, type, checksum */
    if (t->node_size <= prefix || t->rec_size == 0)
        return h5_fail_at(t->f, pos, "v2 B-tree node size %u / record size %u invalid",
                          t->node_size, t->rec_size);
    t->max_nrec[0] = (t->node_size - prefix) / t->rec_size;
    t->cum_max[0] = t->max_nrec[0];
    if (t->max_nrec[0] == 0)
        return h5_fail_at(t->f, pos, "v2 B-tree nodes of %u bytes hold no record", t->node_size);
    t->nrec_bytes = h5_bytes_for(t->max_nrec[0]);
    t->cum_bytes[0] = 0;
    for (unsigned d = 1; d <= t->depth; d++) {
        uint64_t ptr = t->f->sz_off + t->nrec_bytes + (d > 1 ? t->cum_bytes[d - 1] : 0);
        if (t->node_size < prefix + ptr)
            return h5_fail_at(t->f, pos, "v2 B-tree node too small for its pointers");
        t->max_nrec[d] = (t->node_size - prefix - ptr) / (t->rec_size + ptr);
        if (t->max_nrec[d] == 0)
            return h5_fail_at(t->f, pos, "v2 B-tree internal nodes hold no record");
        uint64_t cum;
        if (mf_mul_ovf(t->max_nrec[d] + 1, t->cum_max[d - 1], &cum) ||
            mf_add_ovf(cum, t->max_nrec[d], &cum))
            cum = UINT64_MAX;
        t->cum_max[d] = cum;
        t->cum_bytes[d] = h5_bytes_for(cum);
    }
    return 0;
}

static int bt2_node(bt2 *t, uint64_t addr, unsigned depth, uint64_t nrec)
{
    h5_file *f = t->f;
    const char *sig = depth ? "BTIN" : "BTLF";
    uint64_t pos;
    if (nrec > t->max_nrec[depth])
        return h5_fail_at(f, f->base_addr + addr, "v2 B-tree node claims %llu records (at most %llu)",
                          (unsigned long long)nrec, (unsigned long long)t->max_nrec[depth]);
    uint64_t ptr = depth ? f->sz_off + t->nrec_bytes + (depth > 1 ? t->cum_bytes[depth - 1] : 0) : 0;
    uint64_t used = 6 + nrec * t->rec_size + (depth ? (nrec + 1) * ptr : 0) + 4;
    if (h5_locate(f, addr, used, "v2 B-tree node", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, sig, "v2 B-tree node") || h5_check_sum(f, pos, used, "v2 B-tree node"))
        return -1;
    const uint8_t *b = f->base + pos;
    if (b[4] != 0 || b[5] != t->type)
        return h5_fail_at(f, pos + 4, "v2 B-tree node version %u / type %u (want 0 / %u)", b[4],
                          b[5], t->type);
    const uint64_t recs = pos + 6;
    if (depth == 0) {
        for (uint64_t i = 0; i < nrec; i++)
            if (t->fn(t->ctx, f->base + recs + i * t->rec_size, t->rec_size,
                      recs + i * t->rec_size))
                return -1;
        return 0;
    }
    mf_cursor c;
    mf_cur_init(&c, f->base + recs + nrec * t->rec_size, (nrec + 1) * ptr, f->label, f->st);
    c.origin = f->origin + recs + nrec * t->rec_size;
    for (uint64_t i = 0; i <= nrec; i++) {
        uint64_t child, cn, total;
        if (h5_rd_addr(f, &c, &child, "child node address") ||
            h5_rd_uint(&c, t->nrec_bytes, &cn, "child record count") ||
            (depth > 1 && h5_rd_uint(&c, t->cum_bytes[depth - 1], &total, "child total records")))
            return -1;
        if (bt2_node(t, child, depth - 1, cn))
            return -1;
        if (i < nrec && t->fn(t->ctx, f->base + recs + i * t->rec_size, t->rec_size,
                              recs + i * t->rec_size))
            return -1;
    }
    return 0;
}

int h5_bt2_iterate(h5_file *f, uint64_t addr, uint8_t want_type, h5_bt2_fn fn, void *ctx)
{
    bt2 t = {.f = f, .fn = fn, .ctx = ctx};
    mf_cursor c;
    uint64_t pos, root, total;
    uint8_t ver, split, merge;
    uint16_t root_n;
    if (h5_locate(f, addr, 4, "v2 B-tree header", &pos) ||
        h5_check_sig(f, pos, "BTHD", "v2 B-tree header") ||
        h5_cursor_at(f, addr, 0, "v2 B-tree header", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &ver, "version") || mf_cur_u8(&c, &t.type, "type") ||
        mf_cur_u32(&c, &t.node_size, "node size") || mf_cur_u16(&c, &t.rec_size, "record size") ||
        mf_cur_u16(&c, &t.depth, "depth") || mf_cur_u8(&c, &split, "split percent") ||
        mf_cur_u8(&c, &merge, "merge percent") || h5_rd_addr(f, &c, &root, "root node address") ||
        mf_cur_u16(&c, &root_n, "root records") || h5_rd_len(f, &c, &total, "total records") ||
        mf_cur_skip(&c, 4, "checksum") || h5_check_sum(f, pos, c.pos, "v2 B-tree header"))
        return -1;
    if (ver != 0)
        return h5_fail_at(f, pos + 4, "v2 B-tree version %u is not 0", ver);
    if (t.type != want_type)
        return h5_fail_at(f, pos + 5, "v2 B-tree of type %u where type %u is expected", t.type,
                          want_type);
    if (t.depth > 32)
        return h5_fail_at(f, pos, "v2 B-tree depth %u is more than 32", t.depth);
    if (root == H5_UNDEF || total == 0)
        return 0;
    if (bt2_geometry(&t, pos))
        return -1;
    return bt2_node(&t, root, t.depth, root_n);
}
