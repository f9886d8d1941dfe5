/* train_common.c - the shards and logical tensors the training-checkpoint
 * readers share (train.h). A logical tensor is streamed from its pieces:
 * concatenated pieces (ZeRO's flat partitions) go to the sink as the shard
 * reader streams them, each dropped from memory after use; placed blocks
 * (tensor-parallel splits, DCP chunks) are gathered into one buffer of the
 * tensor's size first. Either way about one output tensor is resident. */
#include "formats/train/train.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>

tr_state *tr_state_of(mf_model *m)
{
    if (!m->priv)
        m->priv = mf_arena_alloc(m->arena, sizeof(tr_state));
    return m->priv;
}

mf_model *tr_open_torch(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    tr_state *s = tr_state_of(m);
    if (!s)
        return mf_oom(st, path), NULL;
    const mf_reader *r = mf_reader_for(MF_FMT_PYTORCH_ZIP);
    mf_model *c = mf_model_new(MF_FMT_PYTORCH_ZIP, path);
    if (!c || !r)
        return mf_oom(st, path), NULL;
    c->reader = r;
    if (s->n_shards == s->cap_shards &&
        mf_vec_grow((void **)&s->shards, &s->cap_shards, s->n_shards + 1, sizeof(*s->shards))) {
        mf_close(c);
        return mf_oom(st, path), NULL;
    }
    s->shards[s->n_shards++] = c;
    if (r->open(c, path, flags & MF_OPEN_STRICT, st) || !mf_ok(st)) {
        if (mf_ok(st))
            mf_fail(st, MF_ERR_FORMAT, path, -1, "shard could not be read");
        return NULL;
    }
    for (size_t i = 0; i < c->n_notes; i++)
        mf_model_note(m, "%s: %s", path, c->notes[i]);
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return NULL;
    return c;
}

const pk_obj *tr_root(const mf_model *shard)
{
    const pt_model_info *i = shard->priv;
    return i ? i->root : NULL;
}

const mf_tensor *tr_find(const mf_model *shard, const char *path)
{
    for (size_t i = 0; i < shard->n_tensors; i++)
        if (strcmp(shard->tensors[i].name, path) == 0)
            return &shard->tensors[i];
    return NULL;
}

mf_tensor *tr_add(mf_model *m, const char *name, mf_dtype dt, mf_dtype src_dt, int ndim,
                  const int64_t *shape, mf_status *st)
{
    if (ndim < 0 || ndim > MF_MAX_DIMS)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\": %d dimensions", name,
                       ndim), NULL;
    mf_tensor *t = mf_model_add_tensor(m, st);
    tr_tensor *x = t ? mf_arena_alloc(m->arena, sizeof(*x)) : NULL;
    if (!t || !x)
        return t ? (mf_oom(st, m->path), NULL) : NULL;
    t->name = mf_arena_strdup(m->arena, name);
    if (!t->name)
        return mf_oom(st, m->path), NULL;
    t->dtype = dt;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof(int64_t));
    x->src_dtype = src_dt;
    t->priv = x;
    if (mf_tensor_set_nbytes(t, m->path, -1, st))
        return NULL;
    return t;
}

/* Arena-backed growth: a new array twice as large, the old one left in
 * the arena (checkpoints list few pieces per tensor). */
static void *grow(mf_model *m, void *v, size_t n, size_t elem)
{
    if (n & (n - 1) && n) /* room left until the next power of two */
        return v;
    void *nv = mf_arena_calloc(m->arena, n ? 2 * n : 1, elem);
    if (nv && n)
        memcpy(nv, v, n * elem);
    return nv;
}

int tr_add_piece(mf_model *m, mf_tensor *t, const tr_piece *p, mf_status *st)
{
    tr_tensor *x = t->priv;
    tr_piece *v = grow(m, x->pieces, x->n_pieces, sizeof(*v));
    if (!v)
        return mf_oom(st, m->path);
    x->pieces = v;
    x->pieces[x->n_pieces++] = *p;
    return 0;
}

int tr_add_block(mf_model *m, mf_tensor *t, const tr_block *b, mf_status *st)
{
    tr_tensor *x = t->priv;
    tr_block *v = grow(m, x->blocks, x->n_blocks, sizeof(*v));
    if (!v)
        return mf_oom(st, m->path);
    x->blocks = v;
    x->blocks[x->n_blocks++] = *b;
    return 0;
}

static uint64_t numel_of(int ndim, const int64_t *shape)
{
    uint64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= (uint64_t)shape[d];
    return n;
}

/* A piece must lie inside its source, which must be a plain contiguous
 * tensor of the pieces' element type. */
static int check_piece(const mf_model *m, const mf_tensor *t, const tr_piece *p, mf_dtype dt,
                       mf_status *st)
{
    const char *sf = p->shard ? p->shard->path : m->path;
    if (p->src->dtype != dt)
        return mf_fail(st, MF_ERR_FORMAT, sf, -1,
                       "tensor \"%s\": its part \"%s\" is %s, the others %s", t->name,
                       p->src->name, mf_dtype_name(p->src->dtype), mf_dtype_name(dt));
    if (p->src->strides)
        return mf_fail(st, MF_ERR_UNSUPPORTED, sf, -1,
                       "tensor \"%s\": its part \"%s\" is not stored contiguously", t->name,
                       p->src->name);
    uint64_t have = numel_of(p->src->ndim, p->src->shape), end;
    if (mf_add_ovf(p->first, p->n, &end) || end > have)
        return mf_fail(st, MF_ERR_FORMAT, sf, -1,
                       "tensor \"%s\": elements %llu..%llu are taken from \"%s\", which holds %llu",
                       t->name, (unsigned long long)p->first, (unsigned long long)end,
                       p->src->name, (unsigned long long)have);
    return 0;
}

enum { MAX_BLOCKS = 4096 };

int tr_check_cover(const mf_model *m, const mf_tensor *t, mf_status *st)
{
    const tr_tensor *x = t->priv;
    uint64_t want = numel_of(t->ndim, t->shape), got = 0;
    for (size_t i = 0; i < x->n_pieces; i++) {
        if (check_piece(m, t, &x->pieces[i], x->src_dtype, st))
            return -1;
        got += x->pieces[i].n;
    }
    for (size_t i = 0; i < x->n_blocks; i++) {
        const tr_block *b = &x->blocks[i];
        if (check_piece(m, t, &b->from, x->src_dtype, st))
            return -1;
        /* off + size compared without the sum: offsets come from the file
         * (a DCP chunk at 2^63 - 2 wrapped around and was written outside
         * the tensor's buffer) */
        for (int d = 0; d < t->ndim; d++)
            if (b->off[d] < 0 || b->size[d] < 0 || b->size[d] > t->shape[d] ||
                b->off[d] > t->shape[d] - b->size[d])
                return mf_fail(st, MF_ERR_FORMAT, b->from.shard ? b->from.shard->path : m->path,
                               -1, "tensor \"%s\": the block from \"%s\" at offset %lld of "
                               "dimension %d (size %lld) reaches past its size %lld", t->name,
                               b->from.src->name, (long long)b->off[d], d,
                               (long long)b->size[d], (long long)t->shape[d]);
        if (numel_of(t->ndim, b->size) != b->from.n)
            return mf_fail(st, MF_ERR_FORMAT, m->path, -1,
                           "tensor \"%s\": a block of %llu elements takes %llu from \"%s\"",
                           t->name, (unsigned long long)numel_of(t->ndim, b->size),
                           (unsigned long long)b->from.n, b->from.src->name);
        got += b->from.n;
    }
    /* blocks inside the tensor whose sizes add up to it: an overlap would
     * leave a gap, so equal counts mean an exact cover only when no two
     * blocks overlap; checked pairwise (a tensor has few blocks: more are
     * refused, never taken unchecked -- a gap would be left unwritten). */
    if (x->n_blocks > MAX_BLOCKS)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1,
                       "tensor \"%s\": %zu blocks, more than the %d whose cover mfmt checks",
                       t->name, x->n_blocks, MAX_BLOCKS);
    for (size_t i = 0; i < x->n_blocks; i++)
        for (size_t j = i + 1; j < x->n_blocks; j++) {
            const tr_block *a = &x->blocks[i], *b = &x->blocks[j];
            bool apart = false;
            for (int d = 0; d < t->ndim && !apart; d++)
                apart = a->off[d] + a->size[d] <= b->off[d] || b->off[d] + b->size[d] <= a->off[d];
            if (!apart && numel_of(t->ndim, a->size) && numel_of(t->ndim, b->size))
                return mf_fail(st, MF_ERR_FORMAT, m->path, -1,
                               "tensor \"%s\": the blocks from \"%s\" (%s) and \"%s\" (%s) "
                               "overlap", t->name, a->from.src->name,
                               a->from.shard ? a->from.shard->path : "?", b->from.src->name,
                               b->from.shard ? b->from.shard->path : "?");
        }
    if (got != want)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1,
                       "tensor \"%s\": its parts hold %llu elements, its shape %llu (a %s)",
                       t->name, (unsigned long long)got, (unsigned long long)want,
                       got < want ? "gap: a part is missing" : "part too many");
    return 0;
}

/* ------------------------------------------------------------- streaming */

/* A shard tensor's run of elements as a tensor of its own. */
static void piece_view(const tr_piece *p, mf_tensor *v)
{
    const mf_dtype_info *di = mf_dtype_info_of(p->src->dtype);
    uint64_t skip = p->first * di->block_bytes;
    *v = *p->src;
    v->ndim = 1;
    v->shape[0] = (int64_t)p->n;
    v->strides = NULL;
    v->nbytes = p->n * di->block_bytes;
    v->offset += skip;
    if (v->data)
        v->data += skip;
    if (v->priv) { /* a streamed (deflated) record: its base stays */
        v->offset = p->src->offset + skip;
    }
    v->owner = p->shard;
}

/* BF16/F16 to F32 on the way (zero_to_fp32's buffers: v.float()). */
typedef struct widen {
    mf_sink_fn sink;
    void *ctx;
    mf_dtype from;
    uint8_t carry[2];
    size_t n_carry;
} widen;

static int widen_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    widen *w = ctx;
    const uint8_t *p = buf;
    float out[1024];
    size_t k = 0;
    while (n) {
        w->carry[w->n_carry++] = *p++;
        n--;
        if (w->n_carry < 2)
            continue;
        uint16_t h = mf_rd16le(w->carry);
        w->n_carry = 0;
        out[k++] = w->from == MF_BF16 ? mf_bf16_to_f32(h) : mf_f16_to_f32(h);
        if (k == 1024) {
            if (w->sink(w->ctx, out, sizeof(out), st))
                return -1;
            k = 0;
        }
    }
    return k ? w->sink(w->ctx, out, k * sizeof(float), st) : 0;
}

static int stream_pieces(const mf_model *m, const mf_tensor *t, const tr_tensor *x,
                         mf_sink_fn sink, void *ctx, mf_status *st)
{
    widen w = {sink, ctx, x->src_dtype, {0}, 0};
    bool wide = t->dtype != x->src_dtype;
    if (wide && !(t->dtype == MF_F32 && (x->src_dtype == MF_BF16 || x->src_dtype == MF_F16)))
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1, "tensor \"%s\": %s to %s", t->name,
                       mf_dtype_name(x->src_dtype), mf_dtype_name(t->dtype));
    for (size_t i = 0; i < x->n_pieces; i++) {
        mf_tensor v;
        piece_view(&x->pieces[i], &v);
        if (mf_tensor_stream(x->pieces[i].shard, &v, wide ? widen_sink : sink, wide ? &w : ctx,
                             st))
            return -1;
        /* the whole partition's pages out of this process: the kernel maps
         * pages around each fault, beyond the piece's own range */
        mf_tensor_release(x->pieces[i].shard, x->pieces[i].src);
    }
    return 0;
}

/* Scatters a block's bytes (C order over its size) into the tensor's buffer. */
typedef struct scatter {
    uint8_t *dst;
    const mf_tensor *t;
    const tr_block *b;
    uint64_t esize, row_bytes, pos;
} scatter;

static int scatter_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    scatter *s = ctx;
    const uint8_t *p = buf;
    int nd = s->t->ndim;
    (void)st;
    while (n) {
        uint64_t row = s->pos / s->row_bytes, within = s->pos % s->row_bytes;
        uint64_t take = s->row_bytes - within < n ? s->row_bytes - within : n;
        uint64_t lin = 0, r = row, stride = nd ? (uint64_t)s->t->shape[nd - 1] : 1;
        lin = nd ? (uint64_t)s->b->off[nd - 1] : 0;
        for (int d = nd - 2; d >= 0; d--) {
            uint64_t i = r % (uint64_t)s->b->size[d];
            r /= (uint64_t)s->b->size[d];
            lin += (i + (uint64_t)s->b->off[d]) * stride;
            stride *= (uint64_t)s->t->shape[d];
        }
        memcpy(s->dst + lin * s->esize + within, p, take);
        p += take;
        n -= take;
        s->pos += take;
    }
    return 0;
}

static int stream_blocks(const mf_model *m, const mf_tensor *t, const tr_tensor *x,
                         mf_sink_fn sink, void *ctx, mf_status *st)
{
    if (t->dtype != x->src_dtype)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1, "tensor \"%s\": %s to %s", t->name,
                       mf_dtype_name(x->src_dtype), mf_dtype_name(t->dtype));
    if (t->nbytes > SIZE_MAX)
        return mf_oom(st, m->path);
    uint8_t *buf = calloc(t->nbytes ? (size_t)t->nbytes : 1, 1); /* no stale bytes, ever */
    if (!buf)
        return mf_oom(st, m->path);
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    int rc = 0;
    for (size_t i = 0; i < x->n_blocks && rc == 0; i++) {
        const tr_block *b = &x->blocks[i];
        if (b->from.n == 0)
            continue;
        scatter s = {buf, t, b, di->block_bytes,
                     (uint64_t)(t->ndim ? b->size[t->ndim - 1] : 1) * di->block_bytes, 0};
        mf_tensor v;
        piece_view(&b->from, &v);
        rc = mf_tensor_stream(b->from.shard, &v, scatter_sink, &s, st);
        mf_tensor_release(b->from.shard, b->from.src);
    }
    for (uint64_t at = 0; rc == 0 && at < t->nbytes; at += 1u << 20) {
        uint64_t n = t->nbytes - at < (1u << 20) ? t->nbytes - at : 1u << 20;
        rc = sink(ctx, buf + at, (size_t)n, st);
    }
    free(buf);
    return rc;
}

int tr_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
              mf_status *st)
{
    const tr_tensor *x = t->priv;
    if (!x)
        return mf_stream_mapped(m, t, sink, ctx, st);
    return x->n_blocks ? stream_blocks(m, t, x, sink, ctx, st)
                       : stream_pieces(m, t, x, sink, ctx, st);
}

/* A piece as a run of its shard's file: a stored (not deflated), plain,
 * little-endian tensor mapped from a local file. */
static bool piece_run(const tr_piece *p, mf_file_run *out)
{
    const mf_tensor *s = p->src;
    const mf_file *f = s->data && !s->priv && !s->strides && !s->big_endian
                     ? mf_tensor_file(p->shard, s) : NULL;
    if (!f || !f->base || f->borrowed || mf_source_is_remote(f->base) || s->data < f->base)
        return false;
    uint64_t esize = mf_dtype_info_of(s->dtype)->block_bytes;
    uint64_t at = (uint64_t)(s->data - f->base) + p->first * esize, len = p->n * esize;
    if (at > f->size || len > f->size - at)
        return false;
    *out = (mf_file_run){f->path, at, len, f->dev, f->ino};
    return true;
}

int tr_file_runs(const mf_model *m, const mf_tensor *t, mf_file_run **runs, size_t *n,
                 mf_status *st)
{
    const tr_tensor *x = t->priv;
    if (!x || x->n_blocks || !x->n_pieces || t->dtype != x->src_dtype)
        return 1;
    mf_file_run *r = calloc(x->n_pieces, sizeof(*r));
    if (!r)
        return mf_oom(st, m->path);
    for (size_t i = 0; i < x->n_pieces; i++)
        if (!piece_run(&x->pieces[i], &r[i])) {
            free(r);
            return 1;
        }
    *runs = r;
    *n = x->n_pieces;
    return 0;
}

void tr_close(mf_model *m)
{
    tr_state *s = m->priv;
    if (!s)
        return;
    for (size_t i = 0; i < s->n_shards; i++)
        mf_close(s->shards[i]);
    free(s->shards);
    s->shards = NULL;
    s->n_shards = 0;
}

/* ------------------------------------------------------------- values */

const pk_obj *tr_get(const pk_obj *d, const char *key)
{
    return pk_dict_get(d, key);
}

const pk_obj *tr_field(const pk_obj *o, const char *key)
{
    if (!o || o->kind != PK_OBJECT || !o->u.o.state)
        return NULL;
    const pk_obj *s = o->u.o.state;
    if (s->kind == PK_DICT)
        return pk_dict_get(s, key);
    if (s->kind == PK_TUPLE && s->u.c.n == 2) {
        const pk_obj *v = pk_dict_get(s->u.c.v[0], key);
        return v ? v : pk_dict_get(s->u.c.v[1], key);
    }
    return NULL;
}

bool tr_int(const pk_obj *o, int64_t *v)
{
    if (!o)
        return false;
    if (pk_as_int(o, v))
        return true;
    /* an IntEnum member pickles as a call of its class with the value */
    if (o->kind == PK_OBJECT && o->u.o.args && o->u.o.args->kind == PK_TUPLE &&
        o->u.o.args->u.c.n == 1)
        return pk_as_int(o->u.o.args->u.c.v[0], v);
    return false;
}

pk_obj *const *tr_items(const pk_obj *o, size_t *n)
{
    if (o && (o->kind == PK_LIST || o->kind == PK_TUPLE)) {
        *n = o->u.c.n;
        return o->u.c.v;
    }
    *n = 0;
    return NULL;
}

bool tr_shape(const pk_obj *o, int *ndim, int64_t *shape)
{
    size_t n;
    pk_obj *const *v = tr_items(o, &n);
    if (!v && !(o && (o->kind == PK_TUPLE || o->kind == PK_LIST)))
        return false;
    if (n > MF_MAX_DIMS)
        return false;
    for (size_t d = 0; d < n; d++)
        if (!pk_as_int(v[d], &shape[d]) || shape[d] < 0)
            return false;
    *ndim = (int)n;
    return true;
}

size_t tr_dir_count(const char *dir, bool (*match)(const char *name))
{
    DIR *d = mf_opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)) != NULL)
        n += match(e->d_name);
    closedir(d);
    return n;
}

bool tr_read_marker(const char *path, char *buf, size_t cap)
{
    mf_status st;
    mf_status_init(&st);
    char *s = NULL;
    size_t n = 0;
    bool ok = mf_path_exists(path) && !mf_is_dir(path) &&
              mf_read_small_file(path, 4096, &s, &n, &st) == 0;
    mf_status_clear(&st);
    if (!ok)
        return false;
    size_t a = 0, b = n;
    while (a < b && isspace((unsigned char)s[a]))
        a++;
    while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
    ok = b > a && b - a < cap && !memchr(s + a, '/', b - a) && !memchr(s + a, 0, b - a);
    if (ok) {
        memcpy(buf, s + a, b - a);
        buf[b - a] = 0;
    }
    free(s);
    return ok;
}
