/* pytorch_tar.c - torch.save's oldest format (torch <= 0.1.x), which
 * torch.load still reads (torch/serialization.py _legacy_load's
 * legacy_load): a tar archive, read with Python's tarfile (core/tar.h),
 * whose members are
 *   storages: a pickled count; per storage a pickled (key, location,
 *             storage_type), an int64 element count and the elements;
 *             then the pickled views [(target, root, offset, numel)];
 *   tensors:  a pickled count; per tensor a pickled (key, storage_id,
 *             tensor_type), int32 ndim, 4 bytes, ndim int64 sizes, ndim
 *             int64 strides, the int64 storage offset;
 *   pickle:   the object, whose persistent ids are the keys (as text) of
 *             those tensors and storages.
 * Every member is the last of its name, links followed, as tarfile's
 * getmember/extractfile give it. Storage bytes are mapped, never copied. */
#include "core/tar.h"
#include "formats/pickle/pytorch.h"

#include <stdarg.h>
#include <stdlib.h>

typedef struct tar_storage {
    char key[32];
    mf_dtype dtype;
    uint64_t numel, data_offset; /* file offset of the first element */
    uint64_t view_of;            /* index + 1 of the root storage of a view, 0 for roots */
    uint64_t view_offset;        /* elements into the root */
} tar_storage;

typedef struct tar_tensor {
    char key[32];
    char storage[32];
    int ndim;
    int64_t shape[MF_MAX_DIMS], stride[MF_MAX_DIMS], offset;
} tar_tensor;

typedef struct tar_ctx {
    mf_model *m;
    const char *file;
    const mf_tar *t;
    MF_VEC(tar_storage) s;
    MF_VEC(tar_tensor) x;
    pk_machine *pm;
    pt_flagged flagged;
} tar_ctx;

static int member(tar_ctx *c, const char *name, const mf_tar_member **out, const uint8_t **p,
                  uint64_t *n, mf_status *st)
{
    const mf_tar_member *m = mf_tar_find(c->t, name);
    const mf_tar_member *r = m ? mf_tar_resolve(c->t, m) : NULL;
    if (!r)
        return mf_fail(st, MF_ERR_FORMAT, c->file, m ? (int64_t)m->offset : -1,
                       "legacy torch tar: %s \"%s\" (torch.load extracts it)",
                       m ? "no member to read behind the link" : "no member", name);
    if (r != m)
        mf_model_note(c->m, "tar member \"%s\" is a link to \"%s\": read through it, as "
                            "tarfile does", name, r->name);
    *out = r;
    return mf_tar_data(c->t, r, p, n, st);
}

/* A key: torch writes id(obj) as an int; any int or string is taken. */
static bool key_text(const pk_obj *o, char *out, size_t cap)
{
    int64_t v;
    if (pk_as_int(o, &v))
        return (size_t)snprintf(out, cap, "%lld", (long long)v) < cap;
    if (o->kind == PK_STR && o->u.s.n < cap) {
        memcpy(out, o->u.s.p, o->u.s.n);
        out[o->u.s.n] = 0;
        return true;
    }
    return false;
}

static int one_pickle(tar_ctx *c, const mf_tar_member *mb, const uint8_t *p, uint64_t n,
                      uint64_t *pos, pk_obj **v, mf_status *st)
{
    if (*pos >= n)
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)(mb->data_offset + n),
                       "legacy torch tar: member \"%s\" ends where a pickle should be", mb->name);
    pk_set_member(c->pm, mb->name, mb->data_offset + *pos);
    size_t used;
    if (pk_load(c->pm, p + *pos, (size_t)(n - *pos), v, &used, NULL, st))
        return -1;
    *pos += used;
    return 0;
}

static int need(tar_ctx *c, const mf_tar_member *mb, uint64_t n, uint64_t pos, uint64_t k,
                const char *what, mf_status *st)
{
    if (k > n - pos)
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)(mb->data_offset + pos),
                       "legacy torch tar: %s runs past the end of member \"%s\"", what, mb->name);
    return 0;
}

static int count_of(tar_ctx *c, const mf_tar_member *mb, const pk_obj *v, uint64_t n,
                    int64_t *count, mf_status *st)
{
    if (!pk_as_int(v, count) || *count < 0 || (uint64_t)*count > n)
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)mb->data_offset,
                       "legacy torch tar: member \"%s\" does not start with a count", mb->name);
    return 0;
}

/* A member of records (storages, tensors): a pickled count, then per
 * record a pickle and raw bytes. */
typedef struct records {
    const mf_tar_member *mb;
    const uint8_t *p;
    uint64_t n, pos; /* pos: where the next part starts */
    int64_t count;
} records;

static int open_records(tar_ctx *c, const char *name, records *r, mf_status *st)
{
    pk_obj *v;
    r->pos = 0;
    if (member(c, name, &r->mb, &r->p, &r->n, st) || one_pickle(c, r->mb, r->p, r->n, &r->pos, &v, st))
        return -1;
    return count_of(c, r->mb, v, r->n, &r->count, st);
}

/* The next record's pickle: *t its items when it is a 3-tuple (else NULL),
 * *at its file offset. */
static int next_record(tar_ctx *c, records *r, uint64_t *at, pk_obj *const **t, mf_status *st)
{
    pk_obj *v;
    *at = r->mb->data_offset + r->pos;
    if (one_pickle(c, r->mb, r->p, r->n, &r->pos, &v, st))
        return -1;
    *t = v->kind == PK_TUPLE && v->u.c.n == 3 ? v->u.c.v : NULL;
    return 0;
}

static int read_storages(tar_ctx *c, mf_status *st)
{
    records r;
    if (open_records(c, "storages", &r, st))
        return -1;
    for (int64_t i = 0; i < r.count; i++) {
        uint64_t at;
        pk_obj *const *t;
        if (next_record(c, &r, &at, &t, st))
            return -1;
        tar_storage s = {0};
        const mf_dtype_info *di = NULL;
        if (t && t[2]->kind == PK_GLOBAL && t[2]->u.g.id == PKN_STORAGE_CLASS)
            di = mf_dtype_info_of(t[2]->u.g.dtype);
        if (!t || !key_text(t[0], s.key, sizeof(s.key)) || !di || !di->block_bytes)
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)at,
                           "legacy torch tar: storage %lld is not (key, location, a torch "
                           "storage class)", (long long)i);
        s.dtype = t[2]->u.g.dtype;
        uint64_t bytes;
        if (need(c, r.mb, r.n, r.pos, 8, "a storage's size", st))
            return -1;
        s.numel = mf_rd64le(r.p + r.pos);
        r.pos += 8;
        if (mf_mul_ovf(s.numel, di->block_bytes, &bytes) ||
            need(c, r.mb, r.n, r.pos, bytes, "a storage's data", st))
            return -1;
        s.data_offset = r.mb->data_offset + r.pos;
        r.pos += bytes;
        if (MF_VEC_PUSH(c->s, s))
            return mf_oom(st, c->file);
    }
    /* views: (target_cdata, root_cdata, offset, numel) */
    pk_obj *v;
    if (one_pickle(c, r.mb, r.p, r.n, &r.pos, &v, st))
        return -1;
    if (v->kind != PK_LIST && v->kind != PK_TUPLE)
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)r.mb->data_offset,
                       "legacy torch tar: the storage views are not a list");
    for (size_t i = 0; i < v->u.c.n; i++) {
        const pk_obj *w = v->u.c.v[i];
        tar_storage s = {0};
        char root[32];
        int64_t off, numel;
        if (w->kind != PK_TUPLE || w->u.c.n != 4 || !key_text(w->u.c.v[0], s.key, sizeof(s.key)) ||
            !key_text(w->u.c.v[1], root, sizeof(root)) || !pk_as_int(w->u.c.v[2], &off) ||
            !pk_as_int(w->u.c.v[3], &numel) || off < 0 || numel < 0)
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)r.mb->data_offset,
                           "legacy torch tar: storage view %zu is malformed", i);
        size_t ri = 0;
        while (ri < c->s.n && strcmp(c->s.v[ri].key, root) != 0)
            ri++;
        if (ri == c->s.n || c->s.v[ri].view_of || (uint64_t)off > c->s.v[ri].numel ||
            (uint64_t)numel > c->s.v[ri].numel - (uint64_t)off)
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)r.mb->data_offset,
                           "legacy torch tar: storage view \"%s\" is outside storage \"%s\"",
                           s.key, root);
        s.dtype = c->s.v[ri].dtype;
        s.numel = (uint64_t)numel;
        s.view_of = ri + 1;
        s.view_offset = (uint64_t)off;
        s.data_offset = c->s.v[ri].data_offset +
                        (uint64_t)off * mf_dtype_info_of(s.dtype)->block_bytes;
        if (MF_VEC_PUSH(c->s, s))
            return mf_oom(st, c->file);
    }
    return 0;
}

static int read_tensors(tar_ctx *c, mf_status *st)
{
    records r;
    if (open_records(c, "tensors", &r, st))
        return -1;
    for (int64_t i = 0; i < r.count; i++) {
        uint64_t at;
        pk_obj *const *t;
        if (next_record(c, &r, &at, &t, st))
            return -1;
        tar_tensor x = {0};
        if (!t || !key_text(t[0], x.key, sizeof(x.key)) ||
            !key_text(t[1], x.storage, sizeof(x.storage)))
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)at,
                           "legacy torch tar: tensor %lld is not (key, storage id, type)",
                           (long long)i);
        if (need(c, r.mb, r.n, r.pos, 8, "a tensor's rank", st))
            return -1;
        int32_t nd = (int32_t)mf_rd32le(r.p + r.pos);
        r.pos += 8; /* ndim, then 4 bytes ("legacy encoding treated ndim as 8 bytes") */
        if (nd < 0 || nd > MF_MAX_DIMS)
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)(r.mb->data_offset + r.pos - 8),
                           "legacy torch tar: tensor %lld has %d dimensions (at most %d here)",
                           (long long)i, nd, MF_MAX_DIMS);
        x.ndim = nd;
        if (need(c, r.mb, r.n, r.pos, 16ull * (uint64_t)nd + 8, "a tensor's shape", st))
            return -1;
        for (int d = 0; d < nd; d++)
            x.shape[d] = (int64_t)mf_rd64le(r.p + r.pos + 8ull * (uint64_t)d);
        r.pos += 8ull * (uint64_t)nd;
        for (int d = 0; d < nd; d++)
            x.stride[d] = (int64_t)mf_rd64le(r.p + r.pos + 8ull * (uint64_t)d);
        r.pos += 8ull * (uint64_t)nd;
        x.offset = (int64_t)mf_rd64le(r.p + r.pos);
        r.pos += 8;
        if (MF_VEC_PUSH(c->x, x))
            return mf_oom(st, c->file);
    }
    return 0;
}

static const tar_storage *find_storage(const tar_ctx *c, const char *key)
{
    for (size_t i = c->s.n; i-- > 0;) /* deserialized_objects: the last one written wins */
        if (strcmp(c->s.v[i].key, key) == 0)
            return &c->s.v[i];
    return NULL;
}

static pk_obj *storage_obj(tar_ctx *c, pk_machine *pm, const tar_storage *s, uint64_t off,
                           mf_status *st)
{
    pk_obj *o = pk_new_obj(pm, PK_STORAGE, off);
    if (!o || !(o->u.st.key = mf_arena_strdup(pk_arena(pm), s->key)))
        return mf_oom(st, c->file), NULL;
    o->u.st.dtype = s->dtype;
    o->u.st.location = "cpu";
    o->u.st.numel = s->numel;
    return o;
}

static pk_obj *int_tuple(pk_machine *pm, const int64_t *v, int n, uint64_t off)
{
    pk_obj *t = pk_new_obj(pm, PK_TUPLE, off);
    if (!t)
        return NULL;
    t->u.c.v = mf_arena_calloc(pk_arena(pm), n ? (size_t)n : 1, sizeof(pk_obj *));
    if (!t->u.c.v)
        return NULL;
    for (int i = 0; i < n; i++) {
        pk_obj *x = pk_new_obj(pm, PK_INT, off);
        if (!x)
            return NULL;
        x->u.i = v[i];
        t->u.c.v[i] = x;
    }
    t->u.c.n = t->u.c.cap = (size_t)n;
    return t;
}

/* legacy_load's persistent_load: a tuple is a pickled module's class
 * (its first item), anything else int(saved_id) -> a tensor or storage. */
static pk_obj *persistent_load(void *ctx, pk_machine *pm, pk_obj *pid, uint64_t off,
                               mf_status *st)
{
    tar_ctx *c = ctx;
    if (pid->kind == PK_TUPLE) {
        pk_obj *o = pk_new_obj(pm, PK_OBJECT, off);
        if (!o)
            return mf_oom(st, NULL), NULL;
        o->u.o.args = pid;
        o->u.o.persistent = true;
        return o;
    }
    char key[32];
    if (!key_text(pid, key, sizeof(key)))
        return pk_fail(pm, off, st, "persistent id is not a tensor or storage key"), NULL;
    for (size_t i = c->x.n; i-- > 0;) {
        const tar_tensor *x = &c->x.v[i];
        if (strcmp(x->key, key) != 0)
            continue;
        const tar_storage *s = find_storage(c, x->storage);
        if (!s)
            return pk_fail(pm, off, st, "tensor's storage is not in the 'storages' member"), NULL;
        pk_obj *t = pk_new_obj(pm, PK_TENSOR, off);
        if (!t || !(t->u.t.storage = storage_obj(c, pm, s, off, st)) ||
            !(t->u.t.size = int_tuple(pm, x->shape, x->ndim, off)) ||
            !(t->u.t.stride = int_tuple(pm, x->stride, x->ndim, off)))
            return mf_oom(st, NULL), NULL;
        t->u.t.offset = x->offset;
        t->u.t.dtype = s->dtype;
        return t;
    }
    const tar_storage *s = find_storage(c, key);
    if (s)
        return storage_obj(c, pm, s, off, st);
    return pk_fail(pm, off, st, "persistent id names no tensor or storage of the archive"), NULL;
}

static int resolve(void *ctx, const pk_obj *sto, pt_storage_ref *out, mf_status *st)
{
    tar_ctx *c = ctx;
    const tar_storage *s = find_storage(c, sto->u.st.key);
    if (!s)
        return mf_fail(st, MF_ERR_FORMAT, c->file, -1, "storage \"%s\" is not in the archive",
                       sto->u.st.key);
    const mf_file *f = &c->m->files[0];
    out->data = f->base + s->data_offset;
    out->file_offset = s->data_offset;
    out->nbytes = s->numel * mf_dtype_info_of(s->dtype)->block_bytes;
    out->big_endian = false;
    out->file = 0;
    return 0;
}

int pt_tar_read(mf_model *m, unsigned flags, mf_status *st);

int pt_tar_read(mf_model *m, unsigned flags, mf_status *st)
{
    (void)flags;
    const mf_file *f = &m->files[0];
    pt_model_info *info = pt_info(m);
    tar_ctx *c = info ? mf_arena_alloc(m->arena, sizeof(*c)) : NULL;
    mf_tar *t = c ? mf_arena_alloc(m->arena, sizeof(*t)) : NULL;
    if (!t)
        return mf_oom(st, f->path);
    memset(c, 0, sizeof(*c));
    c->m = m;
    c->file = f->path;
    c->t = t;
    int rc = -1;
    if (mf_tar_open(t, f->base, f->size, f->path, m->arena, st))
        return -1;
    pk_opts po = {.file = f->path, .on_global = pt_on_global, .ctx = &c->flagged,
                  .persistent_load = persistent_load};
    pk_free(info->pm);
    info->pm = c->pm = pk_new(&po);
    if (!c->pm)
        return mf_oom(st, f->path);
    pk_set_persistent(c->pm, persistent_load, c);
    const mf_tar_member *pm_member;
    const uint8_t *p;
    uint64_t n, pos = 0;
    pk_obj *root;
    if (read_storages(c, st) || read_tensors(c, st) ||
        member(c, "pickle", &pm_member, &p, &n, st) ||
        one_pickle(c, pm_member, p, n, &pos, &root, st))
        goto out;
    m->format = MF_FMT_PYTORCH_PICKLE;
    snprintf(m->version, sizeof(m->version), "torch legacy tar (%zu storages, %zu tensors)",
             c->s.n, c->x.n);
    m->header_bytes += pos;
    pt_tree_opts to = {.file = f->path, .resolve = resolve, .ctx = c, .pickle_base = p,
                       .pickle_size = n, .pickle_offset = pm_member->data_offset,
                       .objects = pk_objects(c->pm), .info = info};
    if (pt_tree_collect(m, root, &to, st))
        goto out;
    pt_note_flagged(m, &c->flagged, "the tar members' pickles");
    rc = mf_ok(st) ? 0 : -1;
out:
    MF_VEC_FREE(c->s);
    MF_VEC_FREE(c->x);
    return rc;
}

/* ------------------------------------------------------------ scanning */

/* The members torch.load opens by name (torch/serialization.py
 * legacy_load); scan reports links among them. */
const char *const mf_pt_tar_members[] = {"storages", "tensors", "pickle", NULL};

typedef struct tar_walk {
    const mf_pickle_walk *w;
    const uint8_t *b;
    uint64_t n, pos;
} tar_walk;

static void walk_finding(tar_walk *tw, int severity, uint64_t at, const char *fmt, ...)
    MF_PRINTF(4, 5);
static void walk_finding(tar_walk *tw, int severity, uint64_t at, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tw->w->finding(tw->w->ctx, severity, at, msg);
}

/* One pickle of the stream, on the scanner's machine. */
static const pk_obj *walk_pickle(tar_walk *tw, const char *what)
{
    const pk_obj *v = NULL;
    const char *why = "the member ends";
    uint64_t end = tw->pos;
    int rc = tw->pos < tw->n ? tw->w->run(tw->w->ctx, tw->pos, &v, &end, &why) : -1;
    if (rc)
        walk_finding(tw, MF_CODE_UNKNOWN, end,
                     "legacy torch tar: the %s pickle stops with an error (%s): what torch "
                     "reads after it cannot be vouched for", what, why);
    tw->pos = end;
    return rc ? NULL : v;
}

static bool walk_skip(tar_walk *tw, uint64_t bytes, const char *what)
{
    if (bytes > tw->n - tw->pos) {
        walk_finding(tw, MF_CODE_UNKNOWN, tw->pos,
                     "legacy torch tar: %s runs past the end of the member", what);
        return false;
    }
    tw->pos += bytes;
    return true;
}

/* One storage record: its pickled (key, location, storage_type), then an
 * int64 element count and the elements, which are skipped. */
static bool walk_storage(tar_walk *tw, pk_obj *const *t, int64_t i)
{
    const mf_dtype_info *di = t && t[2]->kind == PK_GLOBAL ? mf_dtype_info_of(t[2]->u.g.dtype)
                                                           : NULL;
    uint64_t bytes;
    if (!di || !di->block_bytes || tw->n - tw->pos < 8) {
        walk_finding(tw, MF_CODE_UNKNOWN, tw->pos,
                     "legacy torch tar: storage %lld is not (key, location, storage type) with "
                     "a known type: its size cannot be told", (long long)i);
        return false;
    }
    uint64_t cnt = mf_rd64le(tw->b + tw->pos);
    return !mf_mul_ovf(cnt, di->block_bytes, &bytes) && walk_skip(tw, 8, "a storage's size") &&
           walk_skip(tw, bytes, "a storage's data");
}

/* One tensor record after its pickle: an int32 ndim, 4 bytes, ndim sizes,
 * ndim strides, the storage offset. */
static bool walk_tensor(tar_walk *tw, pk_obj *const *t, int64_t i)
{
    if (!t || tw->n - tw->pos < 8) {
        walk_finding(tw, MF_CODE_UNKNOWN, tw->pos,
                     "legacy torch tar: tensor %lld is not (key, storage, type)", (long long)i);
        return false;
    }
    int32_t ndim = (int32_t)mf_rd32le(tw->b + tw->pos);
    return ndim >= 0 && walk_skip(tw, 8, "a tensor's rank") &&
           walk_skip(tw, 16ull * (uint64_t)ndim + 8, "a tensor's shape");
}

/* The walk_tar_member hook: 'storages' is a count, then per storage a
 * record, then the pickled views; 'tensors' is a count, then per tensor a
 * record. Every pickle is run; the raw parts are skipped as torch skips
 * them; what follows is scanned quietly (torch reads no further). */
int mf_pt_tar_walk_member(const char *name, const uint8_t *b, uint64_t n,
                          const mf_pickle_walk *w)
{
    bool storages = strcmp(name, "storages") == 0;
    if (!storages && strcmp(name, "tensors") != 0)
        return 0;
    tar_walk tw = {w, b, n, 0};
    const pk_obj *v = walk_pickle(&tw, "count");
    int64_t count;
    if (!v)
        return 1;
    if (!pk_as_int(v, &count) || count < 0 || (uint64_t)count > n) {
        walk_finding(&tw, MF_CODE_UNKNOWN, 0,
                     "legacy torch tar: the first pickle is not a count torch can use");
        return 1;
    }
    for (int64_t i = 0; i < count; i++) {
        v = walk_pickle(&tw, storages ? "storage header" : "tensor header");
        if (!v)
            return 1;
        pk_obj *const *t = v->kind == PK_TUPLE && v->u.c.n == 3 ? v->u.c.v : NULL;
        if (!(storages ? walk_storage(&tw, t, i) : walk_tensor(&tw, t, i)))
            return 1;
    }
    if (storages)
        (void)walk_pickle(&tw, "storage views"); /* what follows is scanned either way */
    if (tw.pos < n)
        w->rest(w->ctx, tw.pos);
    return 1;
}
