/* api_model.c - the public open path and the reading helpers of mfmt.h:
 * mf_open (the formats layer's open + the safety scan + the logical view),
 * mf_validate, mf_model_scan, mf_tensor_read. It sits in lib/ops because
 * the scan and the F32 conversion live here. */
#include "core/core.h"
#include "formats/formats.h"
#include "ops/scan_template.h"
#include "ops/tensor_f32.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- open */

/* Formats in which loading can mean running code (a pickle, a Keras
 * Lambda layer, a TensorFlow op, or a directory that may hold any of
 * them): every one whose reader does not say it is data only. */
static bool may_carry_code(mf_format f)
{
    const mf_reader *r = mf_reader_for(f);
    return !r || !r->data_only;
}

typedef struct verdict_acc {
    mf_verdict worst;
    char first[512]; /* the first dangerous finding, for MF_OPEN_REFUSE_UNSAFE */
} verdict_acc;

static int on_scanned(void *ctx, const mf_scan_report *r)
{
    verdict_acc *v = ctx;
    if (r->verdict > v->worst)
        v->worst = r->verdict;
    for (size_t i = 0; i < r->n_findings && !v->first[0]; i++) {
        const mf_finding *f = &r->findings[i];
        if (f->severity == MF_VERDICT_DANGEROUS)
            snprintf(v->first, sizeof(v->first), "%s%s%s%s", f->member[0] ? f->member : "",
                     f->member[0] ? ": " : "", f->global ? f->global : "",
                     f->global ? "" : f->message);
    }
    return 0;
}

/* The verdict over everything the path holds. A file that cannot be read
 * for the scan leaves the verdict `unknown`, never `safe`; running out of
 * memory fails the open (-1 in st): a verdict is never a guess. */
static int scan_at_open(mf_model *m, verdict_acc *v, mf_status *st)
{
    memset(v, 0, sizeof(*v));
    if (!may_carry_code(m->format)) {
        /* no loader of its weights runs code; its chat templates are
         * rendered by Jinja2 in Python consumers (ops/scan_template.c) */
        m->verdict = (mf_verdict)mf_model_templates_verdict(m);
        return 0;
    }
    mf_status sub;
    mf_status_init(&sub);
    if (mf_scan_path(m->path, on_scanned, v, &sub) && v->worst == MF_VERDICT_SAFE)
        v->worst = MF_VERDICT_UNKNOWN;
    int rc = sub.code == MF_ERR_NOMEM ? mf_oom(st, m->path) : 0;
    mf_status_clear(&sub);
    m->verdict = v->worst;
    return rc;
}

int mf_open(const char *path, const mf_open_opts *opts, mf_model **out, mf_status *st)
{
    MF_ST_GUARD(st);
    if (!out)
        return mf_fail(st, MF_ERR_USAGE, path, -1, "mf_open: no place for the model (out is NULL)");
    *out = NULL;
    if (!path)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "mf_open: no path");
    mf_open_opts o;
    mf_open_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_open_opts", st))
        return -1;
    mf_model *m;
    if (mf_open_model_cfg(path, o.flags & (MF_OPEN_STRICT | MF_OPEN_TRAIN_MODULE_STATES |
                                           MF_OPEN_TRAIN_EXCLUDE_FROZEN), o.config, &m, st))
        return -1;
    if (!(o.flags & MF_OPEN_NO_SCAN)) {
        verdict_acc v;
        if (scan_at_open(m, &v, st)) {
            mf_close(m);
            return -1;
        }
        if ((o.flags & MF_OPEN_REFUSE_UNSAFE) && m->verdict == MF_VERDICT_DANGEROUS) {
            mf_close(m);
            return mf_fail(st, MF_ERR_UNSAFE, path, -1,
                           "refused: loading it would run code (%s); mfmt scan lists why",
                           v.first[0] ? v.first : "dangerous");
        }
    }
    if (o.flags & MF_OPEN_LOGICAL) {
        mf_model *view;
        if (mf_model_logical_view(m, &view, st)) {
            mf_close(m);
            return -1;
        }
        view->verdict = m->verdict;
        view->view_src_owned = m;
        m = view;
    }
    *out = m;
    return 0;
}

/* mf_open on a source in memory: its name resolves to it only inside the
 * scope this sets (memfile.c); the model owns the source from here on. */
static int open_mem_source(mf_mem_source *src, const mf_open_opts *opts, mf_model **out,
                           mf_status *st)
{
    const mf_mem_source *prev = mf_mem_scope_enter(src);
    int rc = mf_open(mf_mem_path(src), opts, out, st);
    mf_mem_scope_leave(prev);
    if (rc) {
        mf_mem_unregister(src);
        return -1;
    }
    (*out)->mem = src; /* mf_close ends it (and frees bytes it owns) */
    return 0;
}

int mf_open_buffer(const void *buf, size_t len, const char *name, const mf_open_opts *opts,
                   mf_model **out, mf_status *st)
{
    MF_ST_GUARD(st);
    if (!out)
        return mf_fail(st, MF_ERR_USAGE, name, -1, "mf_open_buffer: no place for the model (out is NULL)");
    *out = NULL;
    if (!buf && len)
        return mf_fail(st, MF_ERR_USAGE, name, -1, "mf_open_buffer: no buffer");
    if (!name || !*name)
        name = "buffer";
    mf_mem_source *src = mf_mem_register(buf, len, name);
    if (!src)
        return mf_oom(st, name);
    return open_mem_source(src, opts, out, st);
}

int mf_open_fd(int fd, const char *name, const mf_open_opts *opts, mf_model **out,
               mf_status *st)
{
    MF_ST_GUARD(st);
    if (!name || !*name)
        name = "fd";
    if (!out)
        return mf_fail(st, MF_ERR_USAGE, name, -1, "mf_open_fd: no place for the model (out is NULL)");
    *out = NULL;
    if (fd < 0)
        return mf_fail(st, MF_ERR_USAGE, name, -1, "mf_open_fd: no file descriptor (%d)", fd);
    mf_open_opts o;
    mf_open_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_open_opts", st))
        return -1;
    uint64_t max_read = o.max_read ? o.max_read : MF_OPEN_MAX_READ_DEFAULT;
    mf_mem_source *src = mf_mem_register_fd(fd, name, max_read, st);
    if (!src)
        return -1;
    return open_mem_source(src, opts, out, st);
}

int mf_validate(const char *path, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_STRICT | MF_OPEN_NO_SCAN;
    mf_model *m;
    if (mf_open(path, &o, &m, st))
        return -1;
    mf_close(m);
    return 0;
}

int mf_model_scan(const mf_model *m, mf_scan_fn fn, void *user, mf_status *st)
{
    MF_ST_GUARD(st);
    const mf_mem_source *prev = mf_mem_scope_enter(m->mem); /* (NULL: a path on disk) */
    int rc = mf_scan_path(m->path, fn, user, st);
    mf_mem_scope_leave(prev);
    return rc;
}

/* ---------------------------------------------------------------- views */

/* A view that lists the same tensors as src (no packed tensors): tensors
 * and metadata borrowed, owners pointing at the model that streams them. */
static int identity_view(const mf_model *src, mf_model **view, mf_status *st)
{
    mf_model *v = mf_model_new(src->format, src->path);
    if (!v)
        return mf_oom(st, src->path);
    snprintf(v->version, sizeof(v->version), "%s", src->version);
    v->meta = NULL;
    for (size_t i = 0; i < src->n_meta; i++) {
        mf_kv *kv = mf_model_add_meta(v, src->meta[i].key, st);
        if (!kv) {
            mf_close(v);
            return -1;
        }
        kv->v = src->meta[i].v;
        kv->offset = src->meta[i].offset;
    }
    for (size_t i = 0; i < src->n_tensors; i++) {
        mf_tensor *t = mf_model_add_tensor(v, st);
        if (!t) {
            mf_close(v);
            return -1;
        }
        *t = src->tensors[i];
        if (!t->owner)
            t->owner = src;
    }
    v->header_bytes = src->header_bytes;
    v->verdict = src->verdict;
    *view = v;
    return 0;
}

int mf_model_logical_view(const mf_model *src, mf_model **view, mf_status *st)
{
    MF_ST_GUARD(st);
    *view = NULL;
    /* the reader's logical_view hook (MLX's packed triples); none: the
     * same tensors */
    if (mf_model_logical_view_as(src, MF_DTYPE_INVALID, view, st))
        return -1;
    if (*view) {
        (*view)->verdict = src->verdict;
        return 0;
    }
    return identity_view(src, view, st);
}

/* ---------------------------------------------------------------- graph */

int mf_model_graph_text(const mf_model *m, mf_sink_fn sink, void *ctx, mf_status *st)
{
    MF_ST_GUARD(st);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return mf_oom(st, m->path);
    int rc = mf_model_print_graph(m, f, st); /* the reader's hook */
    if (fclose(f) != 0 && rc == 0)
        rc = mf_oom(st, m->path);
    if (rc == 0 && len)
        rc = sink(ctx, text, len, st);
    free(text);
    return rc;
}

/* -------------------------------------------------------------- reading */

/* The element range rows [row0, row0 + nrows) covers. */
typedef struct read_range {
    uint64_t e0, e1;       /* elements */
    uint64_t nrows;
} read_range;

static int range_of(const mf_model *m, const mf_tensor *t, uint64_t row0, uint64_t nrows,
                    read_range *r, mf_status *st)
{
    uint64_t rows = mf_tensor_rows(t), n = mf_tensor_nelems(t);
    if (n == UINT64_MAX)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\" is too large", t->name);
    if (row0 > rows)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1, "tensor \"%s\": row %llu of %llu rows",
                       t->name, (unsigned long long)row0, (unsigned long long)rows);
    if (nrows == UINT64_MAX)
        nrows = rows - row0;
    if (nrows > rows - row0)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "tensor \"%s\": rows %llu..%llu past its %llu rows", t->name,
                       (unsigned long long)row0, (unsigned long long)(row0 + nrows),
                       (unsigned long long)rows);
    uint64_t per_row = rows ? n / rows : 0;
    r->e0 = row0 * per_row;
    r->e1 = (row0 + nrows) * per_row;
    r->nrows = nrows;
    return 0;
}

static bool native_of(const mf_tensor *t, mf_dtype as)
{
    return as == MF_DTYPE_INVALID || as == t->dtype;
}

static int check_as(const mf_model *m, const mf_tensor *t, mf_dtype as, mf_status *st)
{
    if (native_of(t, as))
        return 0;
    if (as != MF_F32)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m ? m->path : NULL, -1,
                       "tensor \"%s\": read as F32 or as its own dtype (%s), not %s", t->name,
                       mf_dtype_name(t->dtype), mf_dtype_name(as));
    if (!mf_dtype_to_f32_supported(t->dtype))
        return mf_fail(st, MF_ERR_UNSUPPORTED, m ? m->path : NULL, -1,
                       "tensor \"%s\": %s values cannot be read as F32", t->name,
                       mf_dtype_name(t->dtype));
    return 0;
}

/* Bytes of elements [0, e) of the stored dtype, exact (-1: e does not end
 * on a byte or block boundary, or overflow). */
static int elem_bytes(mf_dtype dt, uint64_t e, uint64_t *out)
{
    const mf_dtype_info *di = mf_dtype_info_of(dt);
    if (!di || !di->block_bytes)
        return -1;
    if (di->block_elems > 1 && e % di->block_elems)
        return -1;
    if (di->bits && di->bits < 8 && (e * di->bits) % 8)
        return -1;
    return mf_dtype_nbytes(dt, e, out);
}

int mf_tensor_read_size(const mf_tensor *t, mf_dtype as, uint64_t nrows, uint64_t *bytes,
                        mf_status *st)
{
    MF_ST_GUARD(st);
    if (check_as(NULL, t, as, st))
        return -1;
    uint64_t rows = mf_tensor_rows(t), n = mf_tensor_nelems(t);
    if (nrows == UINT64_MAX || nrows > rows)
        nrows = rows;
    uint64_t e = rows ? n / rows * nrows : 0;
    if (native_of(t, as)) {
        if (elem_bytes(t->dtype, e, bytes))
            return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                           "tensor \"%s\": %llu rows of %s do not end on a block", t->name,
                           (unsigned long long)nrows, mf_dtype_name(t->dtype));
        return 0;
    }
    if (mf_mul_ovf(e, 4, bytes))
        return mf_fail(st, MF_ERR_FORMAT, NULL, -1, "tensor \"%s\" is too large", t->name);
    return 0;
}

/* Collects bytes [b0, b1) of a tensor's canonical stream, then stops it. */
typedef struct range_sink {
    uint8_t *dst;
    uint64_t pos, b0, b1;
    bool done;
} range_sink;

static int range_sink_fn(void *ctx, const void *buf, size_t n, mf_status *st)
{
    range_sink *r = ctx;
    const uint8_t *p = buf;
    uint64_t lo = r->pos, hi = r->pos + n;
    r->pos = hi;
    if (hi > r->b0 && lo < r->b1) {
        uint64_t s = lo > r->b0 ? lo : r->b0, e = hi < r->b1 ? hi : r->b1;
        memcpy(r->dst + (s - r->b0), p + (s - lo), (size_t)(e - s));
    }
    if (hi >= r->b1) {
        r->done = true;
        return -1; /* stop the stream: everything asked for is here */
    }
    (void)st;
    return 0;
}

/* The canonical bytes [b0, b1) of t into dst. */
static int read_bytes(const mf_model *m, const mf_tensor *t, uint64_t b0, uint64_t b1,
                      uint8_t *dst, mf_status *st)
{
    if (b1 == b0)
        return 0;
    const uint8_t *mapped = mf_tensor_data(m, t);
    if (mapped && b1 <= t->nbytes) {
        memcpy(dst, mapped + b0, (size_t)(b1 - b0));
        return 0;
    }
    range_sink r = {dst, 0, b0, b1, false};
    mf_status sub;
    mf_status_init(&sub);
    int rc = mf_tensor_stream(m, t, range_sink_fn, &r, &sub);
    if (r.done)
        rc = 0;
    else if (rc)
        mf_status_merge(st, &sub);
    else
        rc = mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\": %llu of %llu bytes",
                     t->name, (unsigned long long)r.pos, (unsigned long long)b1);
    mf_status_clear(&sub);
    return rc;
}

/* Elements [e0, e1) as F32 into out: the enclosing whole blocks are read
 * and decoded, then the range is copied out of them. */
static int read_f32(const mf_model *m, const mf_tensor *t, uint64_t e0, uint64_t e1, float *out,
                    mf_status *st)
{
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    uint64_t be = di->block_elems > 1 ? di->block_elems : 1;
    uint64_t a0 = e0 / be * be, a1 = (e1 + be - 1) / be * be, b0, b1;
    uint64_t total = mf_tensor_nelems(t);
    if (a1 > total && di->bits && di->bits < 8 && di->ggml_id < 0)
        a1 = total; /* packed sub-byte types: the last byte is padded */
    if (a1 > total || elem_bytes(t->dtype, a0, &b0) ||
        (a1 == total ? mf_dtype_nbytes(t->dtype, a1, &b1) : elem_bytes(t->dtype, a1, &b1)))
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1,
                       "tensor \"%s\": %llu elements are not whole %s blocks", t->name,
                       (unsigned long long)total, mf_dtype_name(t->dtype));
    if (b1 - b0 > SIZE_MAX / 2)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\" is too large", t->name);
    uint8_t *raw = malloc(b1 > b0 ? (size_t)(b1 - b0) : 1);
    bool aligned = a0 == e0 && a1 == e1;
    float *f = aligned ? out : malloc((size_t)(a1 - a0) * sizeof(float));
    int rc = !raw || !f ? mf_oom(st, m->path) : read_bytes(m, t, b0, b1, raw, st);
    if (rc == 0 && mf_convert_to_f32(t->dtype, raw, f, a1 - a0))
        rc = mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1, "tensor \"%s\": cannot convert %s",
                     t->name, mf_dtype_name(t->dtype));
    if (rc == 0 && !aligned)
        memcpy(out, f + (e0 - a0), (size_t)(e1 - e0) * sizeof(float));
    if (!aligned)
        free(f);
    free(raw);
    return rc;
}

int mf_tensor_read(const mf_model *m, const mf_tensor *t, mf_dtype as, uint64_t row0,
                   uint64_t nrows, void *buf, size_t cap, mf_status *st)
{
    MF_ST_GUARD(st);
    read_range r = {0, 0, 0};
    uint64_t need;
    if (check_as(m, t, as, st) || range_of(m, t, row0, nrows, &r, st) ||
        mf_tensor_read_size(t, as, r.nrows, &need, st))
        return -1;
    if (need > cap)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "tensor \"%s\": the buffer holds %zu bytes, %llu are needed", t->name,
                       cap, (unsigned long long)need);
    if (!native_of(t, as))
        return read_f32(m, t, r.e0, r.e1, buf, st);
    uint64_t b0, b1;
    if (elem_bytes(t->dtype, r.e0, &b0) || elem_bytes(t->dtype, r.e1, &b1))
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "tensor \"%s\": the rows do not begin and end on %s blocks", t->name,
                       mf_dtype_name(t->dtype));
    return read_bytes(m, t, b0, b1, buf, st);
}

int mf_tensor_read_alloc(const mf_model *m, const mf_tensor *t, mf_dtype as, void **out,
                         uint64_t *bytes, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    uint64_t need;
    if (check_as(m, t, as, st) || mf_tensor_read_size(t, as, UINT64_MAX, &need, st))
        return -1;
    if (need > SIZE_MAX / 2)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\" is too large", t->name);
    void *b = malloc(need ? (size_t)need : 1);
    if (!b)
        return mf_oom(st, m->path);
    if (mf_tensor_read(m, t, as, 0, UINT64_MAX, b, (size_t)need, st)) {
        free(b);
        return -1;
    }
    *out = b;
    if (bytes)
        *bytes = need;
    return 0;
}
