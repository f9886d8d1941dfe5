/* hdf5_layout.c - the data layout message (versions 1-4, with the chunk
 * index parameters of version 4) and the filter pipeline message. Spec:
 * "The Data Layout Message", "The Data Storage - Filter Pipeline Message". */
#include "formats/hdf5/hdf5_int.h"

static int parse_old(h5_file *f, mf_cursor *c, h5_layout *l)
{
    uint8_t nd, cls;
    if (mf_cur_u8(c, &nd, "dimensionality") || mf_cur_u8(c, &cls, "layout class") ||
        mf_cur_skip(c, 5, "reserved"))
        return -1;
    if (cls > H5L_CHUNKED)
        return mf_cur_fail(c, "layout class %u is not compact, contiguous or chunked", cls);
    if (nd == 0 || nd > MF_MAX_DIMS + 1)
        return mf_cur_fail(c, "layout dimensionality %u is not 1 to %d", nd, MF_MAX_DIMS + 1);
    l->cls = cls;
    if (cls != H5L_COMPACT && h5_rd_addr(f, c, &l->addr, "data address"))
        return -1;
    l->chunk_ndims = nd;
    for (int i = 0; i < nd; i++) {
        uint32_t d;
        if (mf_cur_u32(c, &d, "dimension size"))
            return -1;
        l->chunk[i] = d;
    }
    if (cls == H5L_COMPACT) {
        uint32_t size;
        if (mf_cur_u32(c, &size, "compact data size"))
            return -1;
        l->size = size;
        l->compact_pos = c->origin + c->pos; /* made relative by the caller */
        if (mf_cur_bytes(c, size, &l->compact, "compact data"))
            return -1;
    }
    if (cls != H5L_CHUNKED)
        l->chunk_ndims = 0;
    return 0;
}

static int parse_chunk_v3(h5_file *f, mf_cursor *c, h5_layout *l)
{
    uint8_t nd;
    if (mf_cur_u8(c, &nd, "chunk dimensionality"))
        return -1;
    if (nd < 2 || nd > MF_MAX_DIMS + 1)
        return mf_cur_fail(c, "chunk dimensionality %u is not 2 to %d", nd, MF_MAX_DIMS + 1);
    l->chunk_ndims = nd;
    if (h5_rd_addr(f, c, &l->addr, "chunk index address"))
        return -1;
    for (int i = 0; i < nd; i++) {
        uint32_t d;
        if (mf_cur_u32(c, &d, "chunk dimension"))
            return -1;
        l->chunk[i] = d;
    }
    l->index = H5I_BTREE1;
    return 0;
}

static int parse_chunk_v4(h5_file *f, mf_cursor *c, h5_layout *l)
{
    uint8_t nd, enc, idx;
    if (mf_cur_u8(c, &l->flags, "chunk flags") || mf_cur_u8(c, &nd, "chunk dimensionality") ||
        mf_cur_u8(c, &enc, "dimension size length"))
        return -1;
    if (nd < 2 || nd > MF_MAX_DIMS + 1)
        return mf_cur_fail(c, "chunk dimensionality %u is not 2 to %d", nd, MF_MAX_DIMS + 1);
    l->chunk_ndims = nd;
    for (int i = 0; i < nd; i++)
        if (h5_rd_uint(c, enc, &l->chunk[i], "chunk dimension"))
            return -1;
    if (mf_cur_u8(c, &idx, "chunk index type"))
        return -1;
    l->index = idx;
    switch (idx) {
    case H5I_SINGLE:
        if ((l->flags & 2) && (h5_rd_len(f, c, &l->single_size, "filtered chunk size") ||
                               mf_cur_u32(c, &l->single_mask, "chunk filter mask")))
            return -1;
        break;
    case H5I_IMPLICIT:
        break;
    case H5I_FARRAY:
        if (mf_cur_u8(c, &l->fa_page_bits, "page bits"))
            return -1;
        break;
    case H5I_EARRAY:
        if (mf_cur_u8(c, &l->ea_max_bits, "max bits") || mf_cur_u8(c, &l->ea_idx_elmts, "index elements") ||
            mf_cur_u8(c, &l->ea_min_ptrs, "min pointers") || mf_cur_u8(c, &l->ea_min_elmts, "min elements") ||
            mf_cur_u8(c, &l->ea_page_bits, "page bits"))
            return -1;
        break;
    case H5I_BTREE2: {
        uint8_t split, merge;
        if (mf_cur_u32(c, &l->bt2_node_size, "node size") || mf_cur_u8(c, &split, "split percent") ||
            mf_cur_u8(c, &merge, "merge percent"))
            return -1;
        break;
    }
    default:
        return mf_cur_fail(c, "chunk index type %u is unknown", idx);
    }
    return h5_rd_addr(f, c, &l->addr, "chunk index address");
}

int h5_layout_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos, h5_layout *l)
{
    memset(l, 0, sizeof(*l));
    l->addr = H5_UNDEF;
    mf_cursor c;
    mf_cur_init(&c, p, n, f->label, f->st);
    c.origin = f->origin + pos;
    uint8_t ver;
    if (mf_cur_u8(&c, &ver, "layout version"))
        return -1;
    l->version = ver;
    if (ver < 1 || ver > 4)
        return mf_cur_fail(&c, "layout message version %u is not 1 to 4", ver);
    int rc;
    if (ver < 3) {
        rc = parse_old(f, &c, l);
        if (rc == 0 && l->cls == H5L_CHUNKED)
            l->index = H5I_BTREE1;
    } else {
        uint8_t cls;
        if (mf_cur_u8(&c, &cls, "layout class"))
            return -1;
        l->cls = cls;
        switch (cls) {
        case H5L_COMPACT: {
            uint16_t size;
            if (mf_cur_u16(&c, &size, "compact data size"))
                return -1;
            l->size = size;
            l->compact_pos = c.origin + c.pos;
            rc = mf_cur_bytes(&c, size, &l->compact, "compact data");
            break;
        }
        case H5L_CONTIGUOUS:
            rc = h5_rd_addr(f, &c, &l->addr, "data address") || h5_rd_len(f, &c, &l->size, "data size");
            break;
        case H5L_CHUNKED:
            rc = ver == 3 ? parse_chunk_v3(f, &c, l) : parse_chunk_v4(f, &c, l);
            break;
        case H5L_VIRTUAL:
            if (ver < 4)
                return mf_cur_fail(&c, "virtual layout needs layout version 4");
            rc = 0;
            break;
        default:
            return mf_cur_fail(&c, "layout class %u is unknown", cls);
        }
    }
    if (rc)
        return -1;
    if (l->compact)
        l->compact_pos -= f->origin;
    if (l->cls == H5L_CHUNKED)
        for (int i = 0; i < l->chunk_ndims; i++)
            if (l->chunk[i] == 0)
                return h5_fail_at(f, pos, "chunk dimension %d is 0", i);
    return 0;
}

/* ------------------------------------------------------ filter pipeline */
const char *h5_filter_name(uint16_t id)
{
    switch (id) {
    case 1: return "deflate";
    case 2: return "shuffle";
    case 3: return "fletcher32";
    case 4: return "szip";
    case 5: return "nbit";
    case 6: return "scaleoffset";
    case 305: return "lzo";
    case 307: return "bzip2";
    case 32000: return "lzf";
    case 32001: return "blosc";
    case 32004: return "lz4";
    case 32008: return "bitshuffle";
    case 32015: return "zstd";
    case 32026: return "blosc2";
    }
    return "unknown";
}

int h5_pipeline_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos, mf_arena *a,
                      h5_pipeline *pl)
{
    memset(pl, 0, sizeof(*pl));
    mf_cursor c;
    mf_cur_init(&c, p, n, f->label, f->st);
    c.origin = f->origin + pos;
    uint8_t ver, nf;
    if (mf_cur_u8(&c, &ver, "filter pipeline version") || mf_cur_u8(&c, &nf, "number of filters"))
        return -1;
    if (ver != 1 && ver != 2)
        return mf_cur_fail(&c, "filter pipeline version %u is not 1 or 2", ver);
    if (nf > 32)
        return mf_cur_fail(&c, "%u filters (at most 32)", nf);
    if (ver == 1 && mf_cur_skip(&c, 6, "reserved"))
        return -1;
    for (int i = 0; i < nf; i++) {
        h5_filter *fl = &pl->f[i];
        uint16_t name_len = 0, nvals;
        if (mf_cur_u16(&c, &fl->id, "filter id"))
            return -1;
        if ((ver == 1 || fl->id >= 256) && mf_cur_u16(&c, &name_len, "filter name length"))
            return -1;
        if (mf_cur_u16(&c, &fl->flags, "filter flags") || mf_cur_u16(&c, &nvals, "client data count"))
            return -1;
        fl->n_values = nvals;
        const uint8_t *name;
        uint64_t stored = ver == 1 ? mf_align_up(name_len, 8) : name_len;
        if (mf_cur_bytes(&c, stored, &name, "filter name"))
            return -1;
        fl->name = name_len ? mf_arena_strndup(a, (const char *)name, strnlen((const char *)name, name_len))
                            : h5_filter_name(fl->id);
        if (!fl->name)
            return mf_oom(f->st, f->label);
        for (unsigned k = 0; k < nvals; k++) {
            uint32_t v;
            if (mf_cur_u32(&c, &v, "client data"))
                return -1;
            if (k < sizeof(fl->values) / sizeof(fl->values[0]))
                fl->values[k] = v;
        }
        if (ver == 1 && (nvals & 1) && mf_cur_skip(&c, 4, "client data padding"))
            return -1;
    }
    pl->n = nf;
    return 0;
}
