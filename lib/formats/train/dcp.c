/* dcp.c - a torch.distributed.checkpoint folder (FSDP SHARDED_STATE_DICT,
 * torchtitan, torchtune) read as the whole tensors.
 *
 * The layout (torch 1.13: torch/distributed/_shard/checkpoint/{metadata,
 * filesystem}.py; torch 2.x: torch/distributed/checkpoint/ with the same
 * classes): `.metadata` is a pickle of Metadata(state_dict_metadata,
 * planner_data, storage_data). state_dict_metadata maps each fully
 * qualified name to TensorStorageMetadata(properties: TensorProperties
 * with its dtype, size, chunks: [ChunkStorageMetadata(offsets, sizes)]) or
 * BytesStorageMetadata (a non-tensor value, torch.save'd). storage_data
 * maps MetadataIndex(fqn, offset = the chunk's offsets) to
 * _StorageInfo(relative_path, offset, length): the chunk is a torch.save'd
 * tensor occupying [offset, offset + length) of that file (__R_N.distcp,
 * R the writing rank). Replicated tensors are written once, by the
 * coordinator. The pickle is run by the restricted machine, never
 * executed. */
#include "formats/train/train.h"

#include <stdlib.h>

#define DCP_MAX_METADATA (1ull << 30)

/* ---- the dataclass instances of the metadata pickle */

static const char *class_name(const pk_obj *o)
{
    if (!o || o->kind != PK_OBJECT || !o->u.o.callable || o->u.o.callable->kind != PK_GLOBAL)
        return "";
    return o->u.o.callable->u.g.name;
}

static const char *class_module(const pk_obj *o)
{
    if (!o || o->kind != PK_OBJECT || !o->u.o.callable || o->u.o.callable->kind != PK_GLOBAL)
        return "";
    return o->u.o.callable->u.g.module;
}

/* TensorProperties' dtype: a field (1.13, 2.0-2.1) or the first item of
 * the tuple its __getstate__ returns (2.2 on). */
static mf_dtype props_dtype(const pk_obj *props)
{
    const pk_obj *d = tr_field(props, "dtype");
    if (!d && props && props->kind == PK_OBJECT && props->u.o.state &&
        props->u.o.state->kind == PK_TUPLE && props->u.o.state->u.c.n >= 1)
        d = props->u.o.state->u.c.v[0];
    return d && d->kind == PK_GLOBAL && d->u.g.id == PKN_TORCH_DTYPE ? d->u.g.dtype
                                                                      : MF_DTYPE_INVALID;
}

/* ---- storage_data, looked up by (fqn, offsets) */

typedef struct dcp_loc {
    const char *fqn;
    int ndim;
    int64_t off[MF_MAX_DIMS];
    const pk_obj *info;
} dcp_loc;

static int loc_cmp(const void *a, const void *b)
{
    const dcp_loc *x = a, *y = b;
    int c = strcmp(x->fqn, y->fqn);
    if (c)
        return c;
    for (int d = 0; d < x->ndim && d < y->ndim; d++)
        if (x->off[d] != y->off[d])
            return x->off[d] < y->off[d] ? -1 : 1;
    return x->ndim - y->ndim;
}

typedef struct dcp_ctx {
    mf_model *m;
    const char *dir, *meta_path;
    dcp_loc *locs;
    size_t n_locs;
    char **paths;     /* files mapped so far, by m->files index */
    size_t n_bytes_entries;
    char bytes_names[256];
    uint64_t max_rank;
    bool any_rank;
    bool as_blocks;   /* every chunk a placed block (Megatron torch_dist remaps them) */
    bool inner;       /* read for another reader: it writes the framework metadata */
} dcp_ctx;

static int index_storage(dcp_ctx *c, const pk_obj *sd, mf_status *st)
{
    if (!sd || sd->kind != PK_DICT)
        return mf_fail(st, MF_ERR_FORMAT, c->meta_path, -1,
                       "Metadata has no storage_data dict (written by a storage writer other "
                       "than FileSystemWriter?)");
    c->locs = mf_arena_calloc(c->m->arena, sd->u.c.n ? sd->u.c.n : 1, sizeof(*c->locs));
    if (!c->locs)
        return mf_oom(st, c->meta_path);
    for (size_t k = 0; k < sd->u.c.n; k++) {
        const pk_obj *ix = sd->u.c.v[2 * k], *info = sd->u.c.v[2 * k + 1];
        dcp_loc *l = &c->locs[c->n_locs];
        const pk_obj *fqn = tr_field(ix, "fqn"), *off = tr_field(ix, "offset");
        l->fqn = fqn && fqn->kind == PK_STR ? pk_cstr(c->m->arena, fqn) : NULL;
        if (!l->fqn)
            return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)ix->off,
                           "storage_data key %zu is not a MetadataIndex with a name", k);
        if (off && off->kind != PK_NONE && !tr_shape(off, &l->ndim, l->off))
            return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)ix->off,
                           "storage_data: the offset of \"%s\" is not a torch.Size", l->fqn);
        l->info = info;
        c->n_locs++;
    }
    qsort(c->locs, c->n_locs, sizeof(*c->locs), loc_cmp);
    for (size_t i = 1; i < c->n_locs; i++)
        if (loc_cmp(&c->locs[i - 1], &c->locs[i]) == 0)
            return mf_fail(st, MF_ERR_FORMAT, c->meta_path, -1,
                           "storage_data lists the chunk of \"%s\" at the same offset twice",
                           c->locs[i].fqn);
    return 0;
}

static const pk_obj *find_loc(const dcp_ctx *c, const char *fqn, int nd, const int64_t *off)
{
    dcp_loc key = {.fqn = fqn, .ndim = nd};
    memcpy(key.off, off, (size_t)nd * sizeof(int64_t));
    const dcp_loc *l = bsearch(&key, c->locs, c->n_locs, sizeof(*c->locs), loc_cmp);
    return l ? l->info : NULL;
}

/* The index of relative_path among m->files, mapping it on first use. */
static int file_of(dcp_ctx *c, const char *rel, uint32_t *fi, mf_status *st)
{
    if (!*rel || strchr(rel, '/') || strcmp(rel, "..") == 0 || strcmp(rel, ".") == 0)
        return mf_fail(st, MF_ERR_FORMAT, c->meta_path, -1,
                       "storage_data names \"%s\", not a file of the checkpoint folder", rel);
    for (uint32_t i = 0; i < c->m->n_files; i++)
        if (strcmp(c->paths[i], rel) == 0)
            return *fi = i, 0;
    char *p = mf_path_join(c->m->arena, c->dir, rel);
    if (!p)
        return mf_oom(st, c->dir);
    if (!mf_path_exists(p))
        return mf_fail(st, MF_ERR_FORMAT, p, -1,
                       "is missing: .metadata places chunks in it (written by rank %s)",
                       rel[0] == '_' && rel[1] == '_' ? rel + 2 : "?");
    if (mf_model_add_file(c->m, p, fi, st))
        return -1;
    char **np = mf_arena_calloc(c->m->arena, c->m->n_files, sizeof(char *));
    if (!np)
        return mf_oom(st, p);
    if (c->paths)
        memcpy(np, c->paths, (c->m->n_files - 1) * sizeof(char *));
    np[*fi] = mf_arena_strdup(c->m->arena, rel);
    c->paths = np;
    unsigned long long r;
    if (sscanf(rel, "__%llu_", &r) == 1) {
        c->any_rank = true;
        if (r > c->max_rank)
            c->max_rank = r;
    }
    return np[*fi] ? 0 : mf_oom(st, p);
}

/* "[4, 5]" */
static const char *shape_text(char *buf, size_t cap, int nd, const int64_t *s)
{
    size_t l = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < nd && l < cap; d++)
        l += (size_t)snprintf(buf + l, cap - l, "%s%lld", d ? ", " : "", (long long)s[d]);
    if (l < cap)
        snprintf(buf + l, cap - l, "]");
    return buf;
}

/* The chunk at `off` of tensor fqn: a source tensor over its bytes. */
static const mf_tensor *chunk_source(dcp_ctx *c, const char *fqn, mf_dtype dt, int nd,
                                     const int64_t *off, const int64_t *size, mf_status *st)
{
    const pk_obj *info = find_loc(c, fqn, nd, off);
    char buf[160];
    if (!info)
        return mf_fail(st, MF_ERR_FORMAT, c->meta_path, -1,
                       "\"%s\": storage_data has no entry for its chunk at offset %s: the "
                       "chunk was not written", fqn, shape_text(buf, sizeof(buf), nd, off)), NULL;
    const pk_obj *rel = tr_field(info, "relative_path"), *o = tr_field(info, "offset"),
                 *len = tr_field(info, "length"), *tf = tr_field(info, "transform_descriptors");
    int64_t at, n;
    char *relc = rel && rel->kind == PK_STR ? pk_cstr(c->m->arena, rel) : NULL;
    if (!relc || !pk_as_int(o, &at) || !pk_as_int(len, &n) || at < 0 || n < 0)
        return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)info->off,
                       "\"%s\": _StorageInfo lacks relative_path, offset or length", fqn), NULL;
    size_t ntf;
    if (tr_items(tf, &ntf) && ntf)
        return mf_fail(st, MF_ERR_UNSUPPORTED, c->meta_path, (int64_t)info->off,
                       "\"%s\": the chunk is stored through transforms (compression)", fqn), NULL;
    uint32_t fi;
    if (file_of(c, relc, &fi, st))
        return NULL;
    const mf_file *f = &c->m->files[fi];
    if ((uint64_t)at > f->size || (uint64_t)n > f->size - (uint64_t)at)
        return mf_fail(st, MF_ERR_FORMAT, f->path, (int64_t)at,
                       "the chunk of \"%s\" needs bytes %lld..%lld but the file holds %llu "
                       "(truncated?)", fqn, (long long)at, (long long)(at + n),
                       (unsigned long long)f->size), NULL;
    pt_lone_tensor lt;
    if (pt_zip_lone_tensor(f->base + at, (uint64_t)n, f->path, (uint64_t)at, &lt, st))
        return NULL;
    bool same = lt.ndim == nd && lt.dtype == dt;
    for (int d = 0; same && d < nd; d++)
        same = lt.shape[d] == size[d];
    char have[160], want[160];
    if (!same)
        return mf_fail(st, MF_ERR_FORMAT, f->path, (int64_t)at,
                       "the chunk of \"%s\" holds a %s tensor %s, .metadata says %s %s", fqn,
                       mf_dtype_name(lt.dtype), shape_text(have, sizeof(have), lt.ndim, lt.shape),
                       mf_dtype_name(dt), shape_text(want, sizeof(want), nd, size)), NULL;
    mf_tensor *t = mf_arena_alloc(c->m->arena, sizeof(*t));
    if (!t)
        return mf_oom(st, f->path), NULL;
    t->name = mf_arena_printf(c->m->arena, "%s@%s+%lld", fqn, relc, (long long)at);
    t->dtype = dt;
    t->ndim = nd;
    memcpy(t->shape, size, (size_t)nd * sizeof(int64_t));
    t->file = fi;
    t->data = lt.data;
    t->offset = (uint64_t)(lt.data - f->base);
    t->nbytes = lt.nbytes;
    t->big_endian = lt.big_endian;
    return t->name ? t : (mf_oom(st, f->path), NULL);
}

static uint64_t numel(int nd, const int64_t *s)
{
    uint64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= (uint64_t)s[d];
    return n;
}

typedef struct dcp_chunk {
    int64_t off[MF_MAX_DIMS], size[MF_MAX_DIMS];
} dcp_chunk;

static int cmp_off0(const void *a, const void *b)
{
    const dcp_chunk *x = a, *y = b;
    return x->off[0] < y->off[0] ? -1 : x->off[0] > y->off[0];
}

/* Chunks that split only the outermost dimension are streamed one after
 * the other; any other split is gathered (train_common.c). */
static bool rows_only(int nd, const int64_t *shape, const dcp_chunk *ch, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int d = 1; d < nd; d++)
            if (ch[i].off[d] != 0 || ch[i].size[d] != shape[d])
                return false;
    return nd > 0;
}

static int add_tensor(dcp_ctx *c, const char *fqn, const pk_obj *md, mf_status *st)
{
    mf_dtype dt = props_dtype(tr_field(md, "properties"));
    int nd;
    int64_t shape[MF_MAX_DIMS];
    size_t n;
    pk_obj *const *chunks = tr_items(tr_field(md, "chunks"), &n);
    if (dt == MF_DTYPE_INVALID || !tr_shape(tr_field(md, "size"), &nd, shape) || !chunks)
        return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)md->off,
                       "\"%s\": TensorStorageMetadata lacks a dtype, size or chunks", fqn);
    dcp_chunk *ch = mf_arena_calloc(c->m->arena, n ? n : 1, sizeof(*ch));
    if (!ch)
        return mf_oom(st, c->meta_path);
    for (size_t i = 0; i < n; i++) {
        int a, b;
        if (!tr_shape(tr_field(chunks[i], "offsets"), &a, ch[i].off) ||
            !tr_shape(tr_field(chunks[i], "sizes"), &b, ch[i].size) || a != nd || b != nd)
            return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)chunks[i]->off,
                           "\"%s\": chunk %zu has no offsets/sizes of %d dimensions", fqn, i, nd);
        /* inside the tensor, compared without sums (the numbers are the
         * file's: a sum may overflow) */
        for (int d = 0; d < nd; d++)
            if (ch[i].off[d] < 0 || ch[i].size[d] < 0 || ch[i].size[d] > shape[d] ||
                ch[i].off[d] > shape[d] - ch[i].size[d])
                return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)chunks[i]->off,
                               "\"%s\": chunk %zu (offset %lld, size %lld in dimension %d) "
                               "reaches outside the tensor's %lld", fqn, i,
                               (long long)ch[i].off[d], (long long)ch[i].size[d], d,
                               (long long)shape[d]);
    }
    mf_tensor *t = tr_add(c->m, fqn, dt, dt, nd, shape, st);
    if (!t)
        return -1;
    bool stream = !c->as_blocks && rows_only(nd, shape, ch, n);
    if (stream)
        qsort(ch, n, sizeof(*ch), cmp_off0);
    for (size_t i = 0; i < n; i++) {
        const mf_tensor *src = chunk_source(c, fqn, dt, nd, ch[i].off, ch[i].size, st);
        if (!src)
            return -1;
        tr_piece p = {src, c->m, 0, numel(nd, ch[i].size)};
        int64_t row = i ? ch[i - 1].off[0] + ch[i - 1].size[0] : 0; /* where it must start */
        if (stream && ch[i].off[0] != row)
            return mf_fail(st, MF_ERR_FORMAT, c->meta_path, -1,
                           "\"%s\": its chunks leave a%s at row %lld", fqn,
                           ch[i].off[0] < row ? "n overlap" : " gap",
                           (long long)(ch[i].off[0] < row ? ch[i].off[0] : row));
        if (stream) {
            if (tr_add_piece(c->m, t, &p, st))
                return -1;
            continue;
        }
        tr_block b = {.from = p};
        memcpy(b.off, ch[i].off, sizeof(b.off));
        memcpy(b.size, ch[i].size, sizeof(b.size));
        if (tr_add_block(c->m, t, &b, st))
            return -1;
    }
    return tr_check_cover(c->m, t, st);
}

static void note_bytes(dcp_ctx *c, const char *fqn)
{
    size_t l = strlen(c->bytes_names);
    if (c->n_bytes_entries++ < 6)
        snprintf(c->bytes_names + l, sizeof(c->bytes_names) - l, "%s%s", l ? ", " : "", fqn);
}

static int read_metadata(dcp_ctx *c, const pk_obj *root, mf_status *st)
{
    const pk_obj *sdm = tr_field(root, "state_dict_metadata");
    if (strcmp(class_name(root), "Metadata") || !sdm || sdm->kind != PK_DICT)
        return mf_fail(st, MF_ERR_FORMAT, c->meta_path, 0,
                       "is not a torch.distributed.checkpoint Metadata (state_dict_metadata "
                       "missing)");
    if (index_storage(c, tr_field(root, "storage_data"), st))
        return -1;
    size_t optim = 0;
    for (size_t k = 0; k < sdm->u.c.n; k++) {
        const pk_obj *key = sdm->u.c.v[2 * k], *md = sdm->u.c.v[2 * k + 1];
        char *fqn = key->kind == PK_STR ? pk_cstr(c->m->arena, key) : NULL;
        if (!fqn)
            return mf_fail(st, MF_ERR_FORMAT, c->meta_path, (int64_t)key->off,
                           "state_dict_metadata key %zu is not a string", k);
        const char *cls = class_name(md);
        if (strcmp(cls, "BytesStorageMetadata") == 0) {
            note_bytes(c, fqn);
            continue;
        }
        if (strcmp(cls, "TensorStorageMetadata"))
            return mf_fail(st, MF_ERR_UNSUPPORTED, c->meta_path, (int64_t)md->off,
                           "\"%s\": %s entries are not read", fqn, *cls ? cls : "unknown");
        /* the optimizer's moments: not weights; Megatron's distributed
         * optimizer's fp32 master weights go to its reader (megatron.c) */
        bool fp32_master = c->inner && !strncmp(fqn, "optimizer.state.fp32_param.", 27);
        if ((!strncmp(fqn, "optimizer.", 10) || !strncmp(fqn, "optim.", 6)) && !fp32_master) {
            optim++;
            continue;
        }
        if (add_tensor(c, fqn, md, st))
            return -1;
    }
    mf_model *m = c->m;
    const char *mod = class_module(root);
    const char *layout = strstr(mod, "_shard") ? "torch 1.13 (torch.distributed._shard.checkpoint)"
                                               : "torch 2.x (torch.distributed.checkpoint)";
    if (!c->inner)
        mf_model_put_meta(m, "train.framework",
                          mf_value_str(m->arena, "torch.distributed.checkpoint", 28), st);
    mf_model_put_meta(m, "train.layout", mf_value_str(m->arena, layout, strlen(layout)), st);
    if (c->any_rank)
        mf_model_put_meta(m, "train.world_size", mf_value_int((int64_t)c->max_rank + 1), st);
    mf_model_put_meta(m, "train.optimizer_state", mf_value_bool(optim > 0), st);
    if (optim)
        mf_model_note(m, "%zu optimizer tensors (optimizer.*) left out", optim);
    if (c->n_bytes_entries)
        mf_model_note(m, "%zu non-tensor entries (torch.save'd objects) left out: %s%s",
                      c->n_bytes_entries, c->bytes_names, c->n_bytes_entries > 6 ? ", ..." : "");
    if (!c->inner)
        snprintf(m->version, sizeof(m->version), "%s", strstr(mod, "_shard") ? "torch 1.13 layout"
                                                                             : "torch 2.x layout");
    return 0;
}

int tr_dcp_load(mf_model *m, const char *path, bool inner, mf_status *st)
{
    dcp_ctx c = {.m = m, .dir = path, .as_blocks = inner, .inner = inner};
    c.meta_path = mf_path_join(m->arena, path, ".metadata");
    uint32_t fi;
    if (!c.meta_path)
        return mf_oom(st, path);
    if (mf_model_add_file(m, c.meta_path, &fi, st))
        return -1;
    /* by m->files index; files another reader added first (Megatron's
     * common.pt) get "" (no chunk names them) */
    c.paths = mf_arena_calloc(m->arena, m->n_files, sizeof(char *));
    tr_state *s = tr_state_of(m);
    if (!c.paths || !s)
        return mf_oom(st, path);
    for (uint32_t i = 0; i < m->n_files; i++)
        c.paths[i] = "";
    c.paths[fi] = ".metadata";
    const mf_file *f = &m->files[fi];
    if (f->size > DCP_MAX_METADATA)
        return mf_fail(st, MF_ERR_FORMAT, c.meta_path, 0, "is larger than 1 GiB");
    pt_flagged flagged = {0};
    pk_opts po = {.file = c.meta_path, .on_global = pt_on_global, .ctx = &flagged};
    pk_machine *pm = pk_new(&po);
    if (!pm)
        return mf_oom(st, path);
    s->reader = pm; /* values the tensors' names may point into: freed at close */
    pk_obj *root = NULL;
    size_t used;
    if (pk_load(pm, f->base, (size_t)f->size, &root, &used, NULL, st))
        return -1;
    m->header_bytes += used;
    if (read_metadata(&c, root, st))
        return -1;
    return mf_ok(st) ? 0 : -1;
}

static int open_dcp(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    (void)flags;
    return tr_dcp_load(m, path, false, st);
}

void tr_dcp_close(mf_model *m)
{
    tr_state *s = m->priv;
    if (s && s->reader) {
        pk_free(s->reader);
        s->reader = NULL;
    }
    tr_close(m);
}

/* ---- the slices torch.load reads (scan's slices_named hook) */

/* Each _StorageInfo of storage_data as (file, offset, length): torch's
 * FileSystemReader reads that slice of Path(folder) / relative_path and
 * torch.load's it (tensors; BytesStorageMetadata values with
 * weights_only=False). -1 when one cannot be read as a plain slice. */
static int each_slice(const char *dir, const pk_obj *root, mf_slice_fn fn, void *ctx)
{
    const pk_obj *sd = tr_field(root, "storage_data");
    if (!sd || sd->kind != PK_DICT)
        return -1;
    char file[4096];
    for (size_t k = 0; k < sd->u.c.n; k++) {
        const pk_obj *info = sd->u.c.v[2 * k + 1];
        const pk_obj *rel = tr_field(info, "relative_path");
        int64_t at, n;
        size_t ntf;
        if (!rel || rel->kind != PK_STR || !pk_as_int(tr_field(info, "offset"), &at) ||
            !pk_as_int(tr_field(info, "length"), &n) || at < 0 || n < 0 ||
            (tr_items(tr_field(info, "transform_descriptors"), &ntf) && ntf))
            return -1; /* a slice mfmt cannot place, or one torch transforms first */
        int w = rel->u.s.n && rel->u.s.p[0] == '/'
                    ? snprintf(file, sizeof(file), "%.*s", (int)rel->u.s.n, rel->u.s.p)
                    : snprintf(file, sizeof(file), "%s/%.*s", dir, (int)rel->u.s.n, rel->u.s.p);
        if (w < 0 || (size_t)w >= sizeof(file) || memchr(rel->u.s.p, 0, rel->u.s.n))
            continue; /* a path no file system opens: torch's read fails there */
        fn(ctx, file, (uint64_t)at, (uint64_t)n);
    }
    return 0;
}

static int dcp_slices(const char *path, const uint8_t *b, uint64_t n, mf_slice_fn fn, void *ctx)
{
    const char *slash = strrchr(path, '/');
    if (strcmp(slash ? slash + 1 : path, ".metadata") != 0 || !b)
        return 0;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    pk_opts po = {.file = path};
    pk_machine *pm = pk_new(&po);
    if (!pm)
        return -1;
    mf_status st;
    mf_status_init(&st);
    pk_obj *root = NULL;
    size_t used;
    int rc = 0;
    /* a pickle the machine cannot run is judged by the file's own scan */
    if (pk_load(pm, b, (size_t)n, &root, &used, NULL, &st) == 0 &&
        strcmp(class_name(root), "Metadata") == 0)
        rc = each_slice(dir, root, fn, ctx);
    mf_status_clear(&st);
    pk_free(pm);
    return rc;
}

static bool is_distcp(const char *name)
{
    size_t l = strlen(name);
    return l > 7 && strcmp(name + l - 7, ".distcp") == 0;
}

static int probe_dcp(mf_probe *p)
{
    /* Megatron-Core's torch_dist folder (metadata.json, common.pt beside
     * the DCP files) is the Megatron reader's: it maps the keys */
    if (mf_probe_dir_has(p, "metadata.json") && mf_probe_dir_has(p, "common.pt"))
        return MF_PROBE_NO;
    size_t n = mf_probe_dir_has(p, ".metadata") ? tr_dir_count(p->path, is_distcp) : 0;
    return n ? mf_probe_found(p, MF_FMT_DCP, "torch.distributed checkpoint (%zu .distcp files)", n)
             : MF_PROBE_NO;
}

const mf_reader mf_reader_dcp = {
    .format = MF_FMT_DCP,
    .name = "dcp",
    .probe_dir = probe_dcp,
    .open = open_dcp,
    .stream = tr_stream,
    .file_runs = tr_file_runs,
    .close = tr_dcp_close,
    .scan = &(const mf_scan_hooks){.slices_named = dcp_slices},
};
