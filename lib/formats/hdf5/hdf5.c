/* hdf5.c - the HDF5 reader: walks the group graph from the root, lists one
 * tensor per numeric dataset (named by its absolute path, as h5py's
 * visititems sees it), reads attributes as metadata (the root's under their
 * own names, others as PATH@NAME) and notes what it skips (soft and
 * external links, non-numeric datasets). Contiguous and compact data are
 * mapped as they are; chunked or unallocated data are streamed. */
#include "formats/formats.h"
#include "formats/hdf5/hdf5_int.h"
#include "formats/hdf5/keras.h"

#include <stdlib.h>

typedef struct walker {
    mf_model *m;
    h5_file *f;
    uint32_t fi;
    unsigned flags;
    h5_addrset visited;
} walker;

static char *child_path(mf_arena *a, const char *parent, const char *name)
{
    return strcmp(parent, "/") == 0 ? mf_arena_printf(a, "/%s", name)
                                    : mf_arena_printf(a, "%s/%s", parent, name);
}

/* ------------------------------------------------------------ attributes */
static int resolve_part(h5_file *f, uint16_t type, bool shared, const uint8_t *p, uint64_t n,
                        uint64_t pos, h5_msg *body, h5_ohdr *keep)
{
    h5_msg m = {.type = type, .flags = shared ? H5_MSG_SHARED : 0, .size = n, .data = p, .pos = pos};
    return h5_msg_resolve(f, &m, body, keep);
}

static int add_attribute(walker *w, const char *path, const uint8_t *p, uint64_t n, uint64_t pos)
{
    h5_file *f = w->f;
    mf_cursor c;
    mf_cur_init(&c, p, n, f->label, f->st);
    c.origin = f->origin + pos;
    uint8_t ver, flags;
    uint16_t name_len, dt_len, ds_len;
    if (mf_cur_u8(&c, &ver, "attribute version") || mf_cur_u8(&c, &flags, "attribute flags") ||
        mf_cur_u16(&c, &name_len, "attribute name size") || mf_cur_u16(&c, &dt_len, "datatype size") ||
        mf_cur_u16(&c, &ds_len, "dataspace size"))
        return -1;
    if (ver < 1 || ver > 3)
        return mf_cur_fail(&c, "attribute message version %u is not 1 to 3", ver);
    if (ver == 3 && mf_cur_skip(&c, 1, "name encoding"))
        return -1;
    uint64_t pad = ver == 1 ? 8 : 1;
    const uint8_t *name, *dt, *ds, *data;
    uint64_t dt_pos, ds_pos;
    if (mf_cur_bytes(&c, mf_align_up(name_len, pad), &name, "attribute name"))
        return -1;
    dt_pos = pos + c.pos;
    if (mf_cur_bytes(&c, mf_align_up(dt_len, pad), &dt, "attribute datatype"))
        return -1;
    ds_pos = pos + c.pos;
    if (mf_cur_bytes(&c, mf_align_up(ds_len, pad), &ds, "attribute dataspace"))
        return -1;
    uint64_t data_pos = pos + c.pos, data_len = mf_cur_left(&c);
    data = p + c.pos;
    if (name_len == 0)
        return mf_cur_fail(&c, "attribute name is empty");
    size_t nl = strnlen((const char *)name, name_len);
    h5_msg tb, sb;
    h5_ohdr tk, sk;
    h5_dtype t;
    h5_space s;
    int rc = -1;
    if (resolve_part(f, H5M_DATATYPE, ver > 1 && (flags & 1), dt, dt_len, dt_pos, &tb, &tk))
        return -1;
    if (resolve_part(f, H5M_DATASPACE, ver > 1 && (flags & 2), ds, ds_len, ds_pos, &sb, &sk)) {
        h5_ohdr_free(&tk);
        return -1;
    }
    if (h5_dtype_parse(f, tb.data, tb.size, tb.pos, &t, 0) == 0 &&
        h5_space_parse(f, sb.data, sb.size, sb.pos, &s) == 0) {
        char *key = strcmp(path, "/") == 0
                        ? mf_arena_strndup(w->m->arena, (const char *)name, nl)
                        : mf_arena_printf(w->m->arena, "%s@%.*s", path, (int)nl, (const char *)name);
        mf_value v;
        if (!key) {
            mf_oom(f->st, f->label);
        } else if (h5_value_decode(f, w->m->arena, &t, &s, data, data_len, data_pos, &v) >= 0) {
            mf_kv *kv = mf_model_add_meta(w->m, key, f->st);
            if (kv) {
                kv->v = v;
                kv->offset = f->origin + pos;
                rc = 0;
            }
        }
    }
    h5_ohdr_free(&tk);
    h5_ohdr_free(&sk);
    return rc;
}

typedef struct dense_attrs {
    walker *w;
    const char *path;
    h5_fheap heap;
} dense_attrs;

/* Attribute name index record (type 8): heap ID (8), flags, order, hash. */
static int dense_attr_record(void *ctx, const uint8_t *rec, uint32_t size, uint64_t pos)
{
    dense_attrs *d = ctx;
    const uint8_t *p;
    uint64_t n, at;
    if (size < 17)
        return h5_fail_at(d->w->f, pos, "attribute name record of %u bytes is too short", size);
    if (h5_fheap_get(d->w->f, &d->heap, rec, 8, &p, &n, &at))
        return -1;
    return add_attribute(d->w, d->path, p, n, at);
}

static int read_dense_attrs(walker *w, const char *path, const h5_msg *m)
{
    h5_file *f = w->f;
    mf_cursor c;
    mf_cur_init(&c, m->data, m->size, f->label, f->st);
    c.origin = f->origin + m->pos;
    uint8_t ver, flags;
    uint64_t heap, names;
    if (mf_cur_u8(&c, &ver, "attribute info version") || mf_cur_u8(&c, &flags, "attribute info flags"))
        return -1;
    if (ver != 0)
        return mf_cur_fail(&c, "attribute info version %u is not 0", ver);
    if ((flags & 1) && mf_cur_skip(&c, 2, "maximum creation index"))
        return -1;
    if (h5_rd_addr(f, &c, &heap, "attribute heap address") ||
        h5_rd_addr(f, &c, &names, "attribute name index address"))
        return -1;
    if (heap == H5_UNDEF || names == H5_UNDEF)
        return 0;
    dense_attrs d = {.w = w, .path = path};
    if (h5_fheap_open(f, heap, &d.heap))
        return -1;
    return h5_bt2_iterate(f, names, 8, dense_attr_record, &d);
}

static int read_attributes(walker *w, const h5_ohdr *oh, const char *path)
{
    for (size_t i = 0; i < oh->n; i++) {
        const h5_msg *m = &oh->msgs[i];
        int rc = 0;
        if (m->type == H5M_ATTRIBUTE) {
            h5_msg body;
            h5_ohdr keep;
            rc = h5_msg_resolve(w->f, m, &body, &keep);
            if (rc == 0)
                rc = add_attribute(w, path, body.data, body.size, body.pos);
            h5_ohdr_free(&keep);
        } else if (m->type == H5M_ATTR_INFO) {
            rc = read_dense_attrs(w, path, m);
        }
        if (rc)
            return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- datasets */
/* The body of a message that may be shared; NULL (no failure) if absent. */
static int get_msg(h5_file *f, const h5_ohdr *oh, uint16_t type, h5_msg *body, h5_ohdr *keep,
                   bool *found)
{
    memset(keep, 0, sizeof(*keep));
    const h5_msg *m = h5_ohdr_find(oh, type);
    *found = m != NULL;
    return m ? h5_msg_resolve(f, m, body, keep) : 0;
}

/* Fill value bytes (new message 0x05 or old 0x04), or NULL for zeros. */
static const uint8_t *fill_value(const h5_ohdr *oh, uint32_t esize)
{
    const h5_msg *m = h5_ohdr_find(oh, H5M_FILL);
    const uint8_t *p = NULL;
    uint64_t n = 0, size = 0;
    if (m && m->size >= 2) {
        uint8_t ver = m->data[0];
        if ((ver == 1 || ver == 2) && m->size >= 4) {
            bool defined = m->data[3] != 0;
            if ((ver == 1 || defined) && m->size >= 8) {
                size = mf_rd32le(m->data + 4);
                p = m->data + 8;
                n = m->size - 8;
            }
        } else if (ver == 3 && (m->data[1] & 0x20) && m->size >= 6) {
            size = mf_rd32le(m->data + 2);
            p = m->data + 6;
            n = m->size - 6;
        }
    } else if ((m = h5_ohdr_find(oh, H5M_FILL_OLD)) && m->size >= 4) {
        size = mf_rd32le(m->data);
        p = m->data + 4;
        n = m->size - 4;
    }
    return p && size == esize && n >= size ? p : NULL;
}

/* The filter names of a dataset's pipeline, for notes ("" when none). */
static const char *filter_list(walker *w, const h5_ohdr *oh)
{
    const h5_msg *m = h5_ohdr_find(oh, H5M_FILTERS);
    h5_pipeline pl;
    mf_status quiet;
    mf_status_init(&quiet);
    h5_file f = *w->f;
    f.st = &quiet;
    const char *out = "";
    if (m && !(m->flags & H5_MSG_SHARED) &&
        h5_pipeline_parse(&f, m->data, m->size, m->pos, w->m->arena, &pl) == 0) {
        for (int i = 0; i < pl.n && out; i++)
            out = mf_arena_printf(w->m->arena, "%s%s%s", out, *out ? ", " : "; filters: ",
                                  pl.f[i].name);
    }
    mf_status_clear(&quiet);
    return out ? out : "";
}

static int note_skipped(walker *w, const h5_ohdr *oh, const char *path, const h5_dtype *t,
                        const h5_space *s)
{
    if (s->kind == 2)
        return mf_model_note(w->m, "dataset %s: null dataspace (no elements), not a tensor", path);
    return mf_model_note(w->m, "dataset %s: %s type (%u bytes per element) is not a numeric tensor; "
                         "skipped%s", path, t->why ? t->why : h5_class_name(t->cls), t->size,
                         filter_list(w, oh));
}

static const char *unsupported_filter(walker *w, const h5_pipeline *pl)
{
    for (int i = 0; i < pl->n; i++) {
        uint16_t id = pl->f[i].id;
        /* an optional filter may have been skipped chunk by chunk */
        if (!h5_filter_known(id) && !(pl->f[i].flags & 1))
            return mf_arena_printf(w->m->arena, "filter %s (id %u) is not supported",
                                   pl->f[i].name, id);
    }
    return NULL;
}

/* Chunked layout: rank + 1 chunk dimensions, the last being the element size. */
static int check_chunks(walker *w, const char *path, const h5_layout *l, const h5_space *s,
                        uint32_t esize, uint64_t pos)
{
    if (l->chunk_ndims != s->ndims + 1 || s->ndims == 0)
        return h5_fail_at(w->f, pos, "dataset %s: %d chunk dimensions for a dataspace of rank %d",
                          path, l->chunk_ndims, s->ndims);
    if (l->chunk[s->ndims] != esize)
        return h5_fail_at(w->f, pos, "dataset %s: chunk element size %llu differs from the "
                          "datatype size %u", path, (unsigned long long)l->chunk[s->ndims], esize);
    return 0;
}

static int place_data(walker *w, mf_tensor *t, h5_dset *d, const h5_ohdr *oh, uint64_t lpos)
{
    h5_file *f = w->f;
    h5_layout *l = &d->layout;
    switch (l->cls) {
    case H5L_COMPACT:
        if (l->size < t->nbytes)
            return h5_fail_at(f, lpos, "dataset %s: compact data holds %llu bytes, the dataset "
                              "needs %llu", t->name, (unsigned long long)l->size,
                              (unsigned long long)t->nbytes);
        t->data = f->base + l->compact_pos;
        t->offset = f->origin + l->compact_pos;
        return 0;
    case H5L_CONTIGUOUS: {
        if (l->addr == H5_UNDEF)
            return 0; /* never written: fill values, streamed */
        uint64_t pos;
        if (l->version >= 3 && l->size < t->nbytes)
            return h5_fail_at(f, lpos, "dataset %s: contiguous storage of %llu bytes, the dataset "
                              "needs %llu", t->name, (unsigned long long)l->size,
                              (unsigned long long)t->nbytes);
        if (h5_locate(f, l->addr, t->nbytes, "dataset data", &pos))
            return -1;
        t->data = f->base + pos;
        t->offset = f->origin + pos;
        return 0;
    }
    case H5L_CHUNKED: {
        const h5_msg *m = h5_ohdr_find(oh, H5M_FILTERS);
        if (check_chunks(w, t->name, l, &d->space, d->esize, lpos))
            return -1;
        if (m) {
            h5_msg body;
            h5_ohdr keep;
            int rc = h5_msg_resolve(f, m, &body, &keep);
            if (rc == 0)
                rc = h5_pipeline_parse(f, body.data, body.size, body.pos, w->m->arena, &d->pipeline);
            h5_ohdr_free(&keep);
            if (rc)
                return -1;
        }
        d->unsupported = unsupported_filter(w, &d->pipeline);
        if (l->addr != H5_UNDEF)
            t->offset = f->origin + f->base_addr + l->addr;
        return 0;
    }
    default:
        d->unsupported = "virtual datasets (data mapped from other datasets) are not supported";
        return 0;
    }
}

static int add_dataset(walker *w, const h5_ohdr *oh, const char *path)
{
    h5_file *f = w->f;
    h5_msg ds, dt, lm;
    h5_ohdr k1 = {0}, k2 = {0}, k3 = {0}; /* freed at out: even those never read */
    bool has_ds, has_dt, has_l;
    int rc = -1;
    h5_dtype t;
    h5_space s;
    h5_layout l;
    if (get_msg(f, oh, H5M_DATASPACE, &ds, &k1, &has_ds) ||
        get_msg(f, oh, H5M_DATATYPE, &dt, &k2, &has_dt) || get_msg(f, oh, H5M_LAYOUT, &lm, &k3, &has_l))
        goto out;
    if (!has_ds || !has_dt) {
        h5_fail_at(f, f->base_addr + oh->addr, "dataset %s has no %s message", path,
                   has_ds ? "datatype" : "dataspace");
        goto out;
    }
    if (h5_dtype_parse(f, dt.data, dt.size, dt.pos, &t, 0) || h5_space_parse(f, ds.data, ds.size, ds.pos, &s) ||
        h5_layout_parse(f, lm.data, lm.size, lm.pos, &l))
        goto out;
    if (t.mf == MF_DTYPE_INVALID || s.kind == 2) {
        rc = note_skipped(w, oh, path, &t, &s) < 0 ? mf_oom(f->st, f->label) : 0;
        goto out;
    }
    mf_tensor *tn = mf_model_add_tensor(w->m, f->st);
    h5_dset *d = mf_arena_alloc(w->m->arena, sizeof(*d));
    if (!tn || !d) {
        mf_oom(f->st, f->label);
        goto out;
    }
    tn->name = path;
    tn->dtype = t.mf;
    tn->ndim = s.ndims;
    for (int i = 0; i < s.ndims; i++)
        tn->shape[i] = (int64_t)s.dims[i];
    tn->file = w->fi;
    tn->big_endian = t.big_endian && t.size > 1;
    if (mf_tensor_set_nbytes(tn, f->label, (int64_t)(f->origin + ds.pos), f->st))
        goto out;
    d->file = f;
    d->name = path;
    d->space = s;
    d->esize = t.size;
    d->big_endian = tn->big_endian;
    d->layout = l;
    d->fill = fill_value(oh, t.size);
    if (h5_ohdr_find(oh, H5M_EXTERNAL))
        d->unsupported = "data in external files is not supported";
    else if (place_data(w, tn, d, oh, lm.pos))
        goto out;
    tn->priv = d;
    /* validate: read the chunk index too (its records, not the data) */
    if (f->strict && l.cls == H5L_CHUNKED && !d->unsupported && l.index != H5I_IMPLICIT) {
        h5_chunks list = {0};
        int bad = h5_chunks_list(f, d, &list);
        MF_VEC_FREE(list);
        if (bad)
            goto out;
    }
    if (d->unsupported)
        mf_model_note(w->m, "dataset %s: %s; its data cannot be read", path, d->unsupported);
    rc = 0;
out:
    h5_ohdr_free(&k1);
    h5_ohdr_free(&k2);
    h5_ohdr_free(&k3);
    return rc;
}

/* ----------------------------------------------------------------- groups */
static int visit(walker *w, uint64_t addr, const char *path, int depth);

static int visit_links(walker *w, const h5_ohdr *oh, const char *path, int depth)
{
    h5_links links = {0};
    int rc = h5_group_links(w->f, oh, w->m->arena, &links);
    for (size_t i = 0; rc == 0 && i < links.n; i++) {
        const h5_link *l = &links.v[i];
        char *child = child_path(w->m->arena, path, l->name);
        if (!child) {
            rc = mf_oom(w->f->st, w->f->label);
        } else if (l->type == 0) {
            rc = visit(w, l->addr, child, depth + 1);
        } else {
            const char *kind = l->type == 1 ? "soft" : l->type == 64 ? "external" : "user-defined";
            mf_model_note(w->m, "%s link %s -> %s (not followed)", kind, child,
                          l->target ? l->target : "?");
        }
    }
    MF_VEC_FREE(links);
    return rc;
}

static int visit(walker *w, uint64_t addr, const char *path, int depth)
{
    h5_file *f = w->f;
    if (depth > H5_MAX_DEPTH)
        return h5_fail_at(f, 0, "%s: groups nested deeper than %d", path, H5_MAX_DEPTH);
    int added = h5_addrset_add(&w->visited, addr);
    if (added < 0)
        return mf_oom(f->st, f->label);
    if (added == 0)
        return 0; /* another hard link to an object already listed */
    h5_ohdr oh;
    if (h5_ohdr_read(f, addr, &oh))
        return -1;
    for (size_t i = 0; i < oh.n; i++)
        w->m->header_bytes += oh.msgs[i].size + 8;
    int rc = read_attributes(w, &oh, path);
    if (rc == 0 && h5_is_group(&oh))
        rc = visit_links(w, &oh, path, depth);
    else if (rc == 0 && h5_ohdr_find(&oh, H5M_LAYOUT))
        rc = add_dataset(w, &oh, path);
    h5_ohdr_free(&oh);
    return rc;
}

int mf_hdf5_parse_range(mf_model *m, uint32_t fi, const uint8_t *base, uint64_t size,
                        uint64_t origin, const char *label, unsigned flags, mf_status *st)
{
    h5_file *f = mf_arena_alloc(m->arena, sizeof(*f));
    const char *owned = mf_arena_strdup(m->arena, label);
    if (!f || !owned)
        return mf_oom(st, label);
    if (h5_file_open(f, base, size, origin, owned, st))
        return -1;
    f->strict = flags & MF_OPEN_STRICT;
    m->header_bytes += 96;
    walker w = {.m = m, .f = f, .fi = fi, .flags = flags};
    char *root = mf_arena_strdup(m->arena, "/");
    int rc = root ? visit(&w, f->root_addr, root, 0) : mf_oom(st, label);
    h5_addrset_free(&w.visited);
    snprintf(m->version, sizeof(m->version), "superblock v%d", f->sb_version);
    f->st = NULL; /* streams use their own status */
    return rc;
}

int mf_hdf5_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                   mf_status *st)
{
    if (t->nbytes == 0)
        return 0;
    if (t->data)
        return mf_stream_mapped(m, t, sink, ctx, st);
    const h5_dset *d = t->priv;
    if (!d)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1, "tensor \"%s\" has no data", t->name);
    if (d->plain) { /* plain bytes in memory the reader owns */
        mf_tensor view = *t;
        view.data = d->plain;
        return mf_stream_mapped(m, &view, sink, ctx, st);
    }
    return h5_dset_stream(d, sink, ctx, st);
}

static int open_hdf5(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    const mf_file *file = &m->files[fi];
    if (mf_hdf5_parse_range(m, fi, file->base, file->size, 0, path, flags, st))
        return -1;
    return mf_keras_note_lambdas(m) ? mf_oom(st, path) : 0;
}

/* ------------------------------------------------------------- detection */

/* HDF5 superblock: at 0, 512, 1024, 2048, ... (a user block may precede it). */
static int probe_hdf5(mf_probe *p)
{
    for (uint64_t off = 0; off + 8 <= p->size; off = off ? off * 2 : 512) {
        if (mf_probe_has(p, off, 8) && memcmp(p->b + off, "\x89HDF\r\n\x1a\n", 8) == 0)
            return mf_probe_found(p, MF_FMT_HDF5, "HDF5, superblock at byte %llu",
                                  (unsigned long long)off);
        if (off > (1ull << 40))
            break;
    }
    return MF_PROBE_NO;
}

static const char *const hdf5_extensions[] = {".h5", ".hdf5", NULL};

const mf_reader mf_reader_hdf5 = {
    .format = MF_FMT_HDF5,
    .name = "hdf5",
    .extensions = hdf5_extensions,
    .probe = probe_hdf5,
    .open = open_hdf5,
    .stream = mf_hdf5_stream,
    .scan = &(const mf_scan_hooks){
        .never_unpickles = true,
        .find_code = mf_keras_find_code,
        .may_hold_code = mf_hdf5_may_hold_keras_code,
    },
};
