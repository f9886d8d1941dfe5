/* pt_tree.c - a checkpoint's object tree as tensors and metadata.
 * Tensors are named by their path of dict keys and list indices joined
 * with '.' (DESIGN.md "Tensor names across formats"); scalar values
 * (epoch, global_step, hyper-parameters) become metadata under the same
 * paths. The walk is bounded: shared containers can make a small pickle a
 * huge tree, so it visits at most a budget of nodes and a fixed depth. */
#include "formats/pickle/pytorch.h"

#include <stdlib.h>

#define MAX_DEPTH 64
#define MAX_PATH 4096
#define MAX_META 4096
#define MAX_META_ARRAY 65536

typedef struct walker {
    mf_model *m;
    const pt_tree_opts *o;
    mf_status *st;
    char path[MAX_PATH];
    uint64_t visits, max_visits;
    size_t unresolved, skipped_deep, skipped_meta, bad_tensors;
    bool stopped;
} walker;

pt_model_info *pt_info(mf_model *m)
{
    if (!m->priv)
        m->priv = mf_arena_alloc(m->arena, sizeof(pt_model_info));
    return m->priv;
}

void pt_close(mf_model *m)
{
    pt_model_info *i = m->priv;
    if (!i)
        return;
    pk_free(i->pm);
    free(i->buf);
    free(i->mappings);
    i->pm = NULL;
    i->buf = NULL;
    i->mappings = NULL;
}

void pt_on_global(void *ctx, const pk_global *g, const char *opcode, uint64_t off)
{
    pt_flagged *f = ctx;
    (void)opcode;
    (void)off;
    if (g->cls == PK_SAFE || f->n++ >= 8)
        return;
    size_t l = strlen(f->names);
    snprintf(f->names + l, sizeof(f->names) - l, "%s%s.%s", l ? ", " : "", g->module, g->name);
}

void pt_note_flagged(mf_model *m, const pt_flagged *f, const char *what)
{
    if (f->n)
        mf_model_note(m, "%s reaches names off the weights-only allowlist: %s%s (see `mfmt scan`)",
                      what, f->names, f->n > 8 ? ", ..." : "");
}

static bool is_pickle_reader(const mf_model *m)
{
    return m->reader && (m->reader->format == MF_FMT_PYTORCH_ZIP ||
                         m->reader->format == MF_FMT_PYTORCH_PICKLE ||
                         m->reader->format == MF_FMT_PICKLE);
}

/* The reader's is_mapping hook (core/hooks.c asks a directory's children). */
bool mf_pytorch_is_mapping(const mf_model *m, const char *path)
{
    if (!is_pickle_reader(m) || !m->priv)
        return false;
    const pt_model_info *i = m->priv;
    for (size_t k = 0; k < i->n_mappings; k++)
        if (strcmp(i->mappings[k], path) == 0)
            return true;
    return false;
}

static void add_mapping(walker *w)
{
    pt_model_info *i = w->o->info;
    if (!i || !w->path[0] || i->n_mappings >= 100000)
        return;
    char *p = mf_arena_strdup(w->m->arena, w->path);
    if (!p)
        return;
    if (i->n_mappings == i->cap_mappings &&
        mf_vec_grow((void **)&i->mappings, &i->cap_mappings, i->n_mappings + 1, sizeof(char *)))
        return;
    i->mappings[i->n_mappings++] = p;
}

/* ------------------------------------------------------------- tensors */

/* Checks size/stride/offset of a view and returns the byte span
 * [start, end) of the storage it reaches. */
static int view_span(walker *w, const char *name, int ndim, const int64_t *shape,
                     const int64_t *stride, int64_t offset, uint64_t esize, uint64_t *start,
                     uint64_t *end, bool *empty)
{
    if (offset < 0)
        return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, -1,
                       "tensor \"%s\": negative storage offset %lld", name, (long long)offset);
    uint64_t last = (uint64_t)offset;
    *empty = false;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || stride[d] < 0)
            return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, -1,
                           "tensor \"%s\": negative size or stride in dimension %d", name, d);
        if (shape[d] == 0)
            *empty = true;
    }
    for (int d = 0; d < ndim && !*empty; d++) {
        uint64_t reach;
        if (mf_mul_ovf((uint64_t)(shape[d] - 1), (uint64_t)stride[d], &reach) ||
            mf_add_ovf(last, reach, &last))
            return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, -1,
                           "tensor \"%s\": size x stride overflows 64 bits", name);
    }
    if (mf_mul_ovf((uint64_t)offset, esize, start) || mf_add_ovf(last, 1, &last) ||
        mf_mul_ovf(last, esize, end))
        return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, -1,
                       "tensor \"%s\": storage offset overflows 64 bits", name);
    if (*empty) /* no element is read: torch checks no bounds either */
        *start = *end = 0;
    return 0;
}

static bool c_contiguous(int ndim, const int64_t *shape, const int64_t *stride)
{
    int64_t expect = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && stride[d] != expect)
            return false;
        expect *= shape[d];
    }
    return true;
}

static mf_tensor *new_tensor(walker *w, mf_dtype dt, const pk_obj *size)
{
    mf_tensor *t = mf_model_add_tensor(w->m, w->st);
    if (!t)
        return NULL;
    t->name = mf_arena_strdup(w->m->arena, w->path);
    t->dtype = dt;
    t->ndim = (int)size->u.c.n;
    for (int d = 0; d < t->ndim; d++)
        t->shape[d] = size->u.c.v[d]->u.i;
    if (!t->name) {
        mf_oom(w->st, w->o->file);
        return NULL;
    }
    return t;
}

static int set_strides(walker *w, mf_tensor *t, const int64_t *stride)
{
    if (c_contiguous(t->ndim, t->shape, stride))
        return 0;
    int64_t *s = mf_arena_calloc(w->m->arena, (size_t)t->ndim, sizeof(int64_t));
    if (!s)
        return mf_oom(w->st, w->o->file);
    memcpy(s, stride, (size_t)t->ndim * sizeof(int64_t));
    t->strides = s;
    return 0;
}

static int add_torch_tensor(walker *w, const pk_obj *x)
{
    const pk_obj *sto = x->u.t.storage;
    if (sto->kind != PK_STORAGE || !w->o->resolve) {
        w->unresolved++;
        return 0;
    }
    const mf_dtype_info *di = mf_dtype_info_of(x->u.t.dtype);
    if (!di || di->block_elems != 1 || di->block_bytes == 0)
        return mf_fail(w->st, MF_ERR_UNSUPPORTED, w->o->file, -1,
                       "tensor \"%s\": element type of storage \"%s\" is not supported",
                       w->path, sto->u.st.key ? sto->u.st.key : "?");
    const pk_obj *size = x->u.t.size, *stride = x->u.t.stride;
    if (size->u.c.n != stride->u.c.n)
        return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, -1,
                       "tensor \"%s\": %zu sizes but %zu strides", w->path, size->u.c.n,
                       stride->u.c.n);
    int64_t sv[MF_MAX_DIMS], tv[MF_MAX_DIMS];
    int nd = (int)size->u.c.n;
    for (int d = 0; d < nd; d++) {
        sv[d] = size->u.c.v[d]->u.i;
        tv[d] = stride->u.c.v[d]->u.i;
    }
    uint64_t start = 0, end = 0;
    bool empty;
    if (view_span(w, w->path, nd, sv, tv, x->u.t.offset, di->block_bytes, &start, &end, &empty))
        return -1;
    pt_storage_ref ref;
    memset(&ref, 0, sizeof(ref));
    if (w->o->resolve(w->o->ctx, sto, &ref, w->st))
        return -1;
    if (end > ref.nbytes)
        return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, (int64_t)ref.file_offset,
                       "tensor \"%s\": its view reaches byte %llu of storage \"%s\", which "
                       "holds %llu bytes",
                       w->path, (unsigned long long)end, sto->u.st.key,
                       (unsigned long long)ref.nbytes);
    mf_tensor *t = new_tensor(w, x->u.t.dtype, size);
    if (!t || mf_tensor_set_nbytes(t, w->o->file, -1, w->st) || set_strides(w, t, tv))
        return -1;
    t->file = ref.file;
    t->big_endian = ref.big_endian;
    t->priv = ref.priv; /* a streamed (deflated) record, when not mapped */
    t->offset = ref.file_offset + start; /* start <= end <= ref.nbytes */
    if (ref.data)
        t->data = ref.data + start;
    return 0;
}

/* numpy arrays inside a pickle: their bytes are in the pickle. */
static int add_ndarray(walker *w, const pk_obj *a)
{
    const pk_obj *dt = a->u.nd.dtype, *data = a->u.nd.data, *shape = a->u.nd.shape;
    if (!a->u.nd.built || !dt || !data || data->kind != PK_BYTES || !shape ||
        (shape->kind != PK_TUPLE && shape->kind != PK_LIST) || shape->u.c.n > MF_MAX_DIMS) {
        w->bad_tensors++; /* object arrays and unknown layouts are not tensors */
        return 0;
    }
    for (size_t d = 0; d < shape->u.c.n; d++)
        if (shape->u.c.v[d]->kind != PK_INT || shape->u.c.v[d]->u.i < 0) {
            w->bad_tensors++;
            return 0;
        }
    mf_dtype t_dt = pk_numpy_dtype(dt->u.nt.descr);
    if (t_dt == MF_DTYPE_INVALID) {
        w->bad_tensors++;
        return 0;
    }
    mf_tensor *t = new_tensor(w, t_dt, shape);
    if (!t || mf_tensor_set_nbytes(t, w->o->file, -1, w->st))
        return -1;
    if (t->nbytes != data->u.s.n)
        return mf_fail(w->st, MF_ERR_FORMAT, w->o->file, -1,
                       "array \"%s\": shape and dtype need %llu bytes but the pickle holds %zu",
                       w->path, (unsigned long long)t->nbytes, data->u.s.n);
    t->big_endian = dt->u.nt.order == '>';
    if (a->u.nd.fortran && t->ndim > 1) { /* column-major: strides grow left to right */
        int64_t s[MF_MAX_DIMS], acc = 1;
        for (int d = 0; d < t->ndim; d++) {
            s[d] = acc;
            acc *= t->shape[d];
        }
        if (set_strides(w, t, s))
            return -1;
    }
    const uint8_t *p = (const uint8_t *)data->u.s.p;
    t->file = w->o->file_index;
    if (w->o->pickle_base && p >= w->o->pickle_base &&
        (uint64_t)(p - w->o->pickle_base) + data->u.s.n <= w->o->pickle_size) {
        t->offset = w->o->pickle_offset + (uint64_t)(p - w->o->pickle_base);
        t->data = p;
        return 0;
    }
    pt_stream_src *src = mf_arena_alloc(w->m->arena, sizeof(*src));
    if (!src)
        return mf_oom(w->st, w->o->file);
    src->kind = PT_SRC_MEM;
    src->p = p;
    src->n = data->u.s.n;
    t->priv = src;
    return 0;
}

/* ------------------------------------------------------------ metadata */

static bool scalar_value(mf_model *m, const pk_obj *x, mf_value *v)
{
    switch (x->kind) {
    case PK_NONE: v->type = MF_V_NULL; return true;
    case PK_BOOL: *v = mf_value_bool(x->u.b); return true;
    case PK_INT: *v = mf_value_int(x->u.i); return true;
    case PK_FLOAT: *v = mf_value_f64(x->u.f); return true;
    case PK_STR: case PK_BIGINT:
        *v = mf_value_str(m->arena, x->u.s.p, x->u.s.n);
        return v->type == MF_V_STR;
    case PK_GLOBAL:
        if (x->u.g.id != PKN_TORCH_DTYPE)
            return false;
        *v = mf_value_str(m->arena, x->u.g.name, strlen(x->u.g.name));
        if (v->type != MF_V_STR)
            return false;
        {
            char *s = mf_arena_printf(m->arena, "torch.%s", x->u.g.name);
            if (!s)
                return false;
            v->as.s.ptr = s;
            v->as.s.len = strlen(s);
        }
        return true;
    default: return false;
    }
}

/* A list/tuple of scalars of one kind (ints and floats mix as floats). */
static bool array_value(mf_model *m, const pk_obj *x, mf_value *v)
{
    size_t n = x->u.c.n;
    if (n > MAX_META_ARRAY)
        return false;
    mf_vtype elem = MF_V_NULL;
    for (size_t i = 0; i < n; i++) {
        const pk_obj *e = x->u.c.v[i];
        mf_vtype t = e->kind == PK_INT ? MF_V_I64 : e->kind == PK_FLOAT ? MF_V_F64
                     : e->kind == PK_BOOL ? MF_V_BOOL : e->kind == PK_STR ? MF_V_STR : MF_V_NULL;
        if (t == MF_V_NULL)
            return false;
        if (elem == MF_V_NULL || elem == t)
            elem = t;
        else if ((elem == MF_V_I64 && t == MF_V_F64) || (elem == MF_V_F64 && t == MF_V_I64))
            elem = MF_V_F64;
        else
            return false;
    }
    mf_value *items = mf_arena_calloc(m->arena, n ? n : 1, sizeof(mf_value));
    if (!items)
        return false;
    for (size_t i = 0; i < n; i++) {
        const pk_obj *e = x->u.c.v[i];
        if (elem == MF_V_F64)
            items[i] = mf_value_f64(e->kind == PK_FLOAT ? e->u.f : (double)e->u.i);
        else if (!scalar_value(m, e, &items[i]))
            return false;
    }
    v->type = MF_V_ARR;
    v->as.arr.elem = elem == MF_V_NULL ? MF_V_I64 : elem;
    v->as.arr.n = n;
    v->as.arr.items = items;
    return true;
}

static int add_meta(walker *w, const mf_value *v)
{
    if (w->m->n_meta >= MAX_META) {
        w->skipped_meta++;
        return 0;
    }
    mf_kv *kv = mf_model_add_meta(w->m, w->path[0] ? w->path : "value", w->st);
    if (!kv)
        return -1;
    kv->v = *v;
    return 0;
}

/* ---------------------------------------------------------------- walk */

static int walk(walker *w, const pk_obj *x, int depth);

/* Appends ".seg" (or "seg" at the root); -1 when the path gets too long. */
static int push_seg(walker *w, const char *seg)
{
    size_t l = strlen(w->path), sl = strlen(seg);
    if (l + sl + 2 > sizeof(w->path))
        return -1;
    if (l)
        w->path[l++] = '.';
    memcpy(w->path + l, seg, sl + 1);
    return 0;
}

static int walk_child(walker *w, const char *seg, const pk_obj *x, int depth)
{
    size_t old = strlen(w->path);
    if (push_seg(w, seg) < 0) {
        w->skipped_deep++;
        return 0;
    }
    int rc = walk(w, x, depth + 1);
    w->path[old] = 0;
    return rc;
}

static int walk_dict(walker *w, const pk_obj *d, int depth)
{
    size_t before = w->m->n_tensors;
    for (size_t k = 0; k < d->u.c.n && !w->stopped; k++) {
        char *key = pk_key_text(w->m->arena, d->u.c.v[2 * k]);
        char fallback[32];
        if (!key) {
            snprintf(fallback, sizeof(fallback), "#%zu", k);
            key = fallback;
        }
        if (walk_child(w, key, d->u.c.v[2 * k + 1], depth))
            return -1;
    }
    if (w->m->n_tensors > before)
        add_mapping(w);
    return 0;
}

static int walk_seq(walker *w, const pk_obj *s, int depth)
{
    for (size_t i = 0; i < s->u.c.n && !w->stopped; i++) {
        char idx[24];
        snprintf(idx, sizeof(idx), "%zu", i);
        if (walk_child(w, idx, s->u.c.v[i], depth))
            return -1;
    }
    return 0;
}

/* An opaque object: what its state and items hold (a pickled nn.Module
 * keeps its parameters there). */
static int walk_object(walker *w, const pk_obj *o, int depth)
{
    const pk_obj *s = o->u.o.state;
    if (s && s->kind == PK_DICT && walk_dict(w, s, depth))
        return -1;
    if (s && s->kind == PK_TUPLE && s->u.c.n == 2) /* (dict state, slot state) */
        for (size_t i = 0; i < 2; i++)
            if (s->u.c.v[i]->kind == PK_DICT && walk_dict(w, s->u.c.v[i], depth))
                return -1;
    if (o->u.o.dict && walk_dict(w, o->u.o.dict, depth))
        return -1;
    if (o->u.o.list && walk_seq(w, o->u.o.list, depth))
        return -1;
    return 0;
}

static int walk(walker *w, const pk_obj *x, int depth)
{
    if (w->stopped)
        return 0;
    if (++w->visits > w->max_visits) {
        w->stopped = true;
        mf_model_note(w->m, "the object tree has more than %llu nodes (shared containers?); "
                            "the rest is not listed", (unsigned long long)w->max_visits);
        return 0;
    }
    if (depth > MAX_DEPTH) {
        w->skipped_deep++;
        return 0;
    }
    mf_value v;
    switch (x->kind) {
    case PK_TENSOR: return add_torch_tensor(w, x);
    case PK_NDARRAY: return add_ndarray(w, x);
    case PK_DICT: return walk_dict(w, x, depth);
    case PK_LIST:
    case PK_TUPLE:
        if (array_value(w->m, x, &v))
            return add_meta(w, &v);
        return walk_seq(w, x, depth);
    case PK_OBJECT: return walk_object(w, x, depth);
    default:
        if (scalar_value(w->m, x, &v))
            return add_meta(w, &v);
        return 0;
    }
}

int pt_tree_collect(mf_model *m, const pk_obj *root, const pt_tree_opts *o, mf_status *st)
{
    walker *w = calloc(1, sizeof(*w));
    if (!w)
        return mf_oom(st, o->file);
    w->m = m;
    w->o = o;
    w->st = st;
    w->max_visits = 4 * o->objects + 100000;
    int rc = walk(w, root, 0);
    if (rc == 0 && w->unresolved)
        mf_model_note(m, "%zu tensors refer to storages that are not in this file; not listed",
                      w->unresolved);
    if (rc == 0 && w->bad_tensors)
        mf_model_note(m, "%zu numpy arrays hold objects or an unknown dtype; not listed",
                      w->bad_tensors);
    if (rc == 0 && w->skipped_deep)
        mf_model_note(m, "%zu values nested deeper than %d levels (or with paths over %d bytes) "
                         "are not listed", w->skipped_deep, MAX_DEPTH, MAX_PATH);
    if (rc == 0 && w->skipped_meta)
        mf_model_note(m, "%zu more scalar values are not listed as metadata", w->skipped_meta);
    free(w);
    return rc;
}

/* Deflated records: contiguous tensors pass through a window of the
 * inflated stream; views inflate the record into a buffer first. */
typedef struct window {
    uint64_t pos, start, end;
    mf_sink_fn sink;
    void *ctx;
} window;

static int window_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    window *w = ctx;
    uint64_t lo = w->pos, hi = w->pos + n;
    w->pos = hi;
    if (hi <= w->start || lo >= w->end)
        return 0;
    uint64_t a = lo < w->start ? w->start - lo : 0, b = hi > w->end ? w->end - lo : n;
    return w->sink(w->ctx, (const uint8_t *)buf + a, (size_t)(b - a), st);
}

static int stream_zip(const mf_model *m, const mf_tensor *t, const pt_stream_src *src,
                      mf_sink_fn sink, void *ctx, mf_status *st)
{
    const pt_model_info *info = m->priv;
    uint64_t start = t->offset - src->base;
    if (!t->strides) {
        window w = {0, start, start + t->nbytes, sink, ctx};
        return mf_zip_stream(&info->zip, src->e, false, window_sink, &w, st);
    }
    uint8_t *buf;
    size_t n;
    if (mf_zip_extract(&info->zip, src->e, (size_t)src->e->usize, &buf, &n, st))
        return -1;
    mf_tensor tmp = *t;
    tmp.data = buf + start;
    int rc = mf_stream_mapped(m, &tmp, sink, ctx, st);
    free(buf);
    return rc;
}

int pt_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
              mf_status *st)
{
    const pt_stream_src *src = t->priv;
    if (t->data || !src || t->nbytes == 0)
        return mf_stream_mapped(m, t, sink, ctx, st);
    if (src->kind == PT_SRC_ZIP)
        return stream_zip(m, t, src, sink, ctx, st);
    mf_tensor tmp = *t;
    tmp.data = src->p + (t->offset - src->base);
    return mf_stream_mapped(m, &tmp, sink, ctx, st);
}
