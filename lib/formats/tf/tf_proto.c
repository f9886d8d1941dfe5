/* tf_proto.c - TensorFlow's DataType, TensorShapeProto and TensorProto.
 *
 * TensorProto (tensor.proto): dtype = 1, tensor_shape = 2, tensor_content = 4
 * (raw little-endian bytes), and the typed fields: float_val = 5,
 * double_val = 6, int_val = 7 (INT32/16/8, UINT16/8, QINT*), string_val = 8,
 * scomplex_val = 9, int64_val = 10, bool_val = 11, dcomplex_val = 12,
 * half_val = 13 (HALF, BFLOAT16 bits), uint32_val = 16, uint64_val = 17,
 * float8_val = 18 (bytes). When a typed field holds fewer values than the
 * shape, the last value fills the rest, and no value at all means zeros
 * (tensor.proto's rule, as Tensor::FromProto applies it). */
#include "core/crc32c.h"
#include "core/emit.h"
#include "formats/tf/tf.h"

#include <stdlib.h>

typedef struct tf_type {
    const char *name;
    mf_dtype dt;
    uint8_t field; /* typed field */
    uint8_t width; /* canonical bytes of one stored value */
    uint8_t per;   /* values per element (2: complex) */
} tf_type;

static const tf_type types[] = {
    [1] = {"DT_FLOAT", MF_F32, 5, 4, 1},
    [2] = {"DT_DOUBLE", MF_F64, 6, 8, 1},
    [3] = {"DT_INT32", MF_I32, 7, 4, 1},
    [4] = {"DT_UINT8", MF_U8, 7, 1, 1},
    [5] = {"DT_INT16", MF_I16, 7, 2, 1},
    [6] = {"DT_INT8", MF_I8, 7, 1, 1},
    [7] = {"DT_STRING", MF_STRING, 8, 0, 1},
    [8] = {"DT_COMPLEX64", MF_C64, 9, 4, 2},
    [9] = {"DT_INT64", MF_I64, 10, 8, 1},
    [10] = {"DT_BOOL", MF_BOOL, 11, 1, 1},
    [11] = {"DT_QINT8", MF_I8, 7, 1, 1},
    [12] = {"DT_QUINT8", MF_U8, 7, 1, 1},
    [13] = {"DT_QINT32", MF_I32, 7, 4, 1},
    [14] = {"DT_BFLOAT16", MF_BF16, 13, 2, 1},
    [15] = {"DT_QINT16", MF_I16, 7, 2, 1},
    [16] = {"DT_QUINT16", MF_U16, 7, 2, 1},
    [17] = {"DT_UINT16", MF_U16, 7, 2, 1},
    [18] = {"DT_COMPLEX128", MF_C128, 12, 8, 2},
    [19] = {"DT_HALF", MF_F16, 13, 2, 1},
    [20] = {"DT_RESOURCE", MF_DTYPE_INVALID, 0, 0, 1},
    [21] = {"DT_VARIANT", MF_DTYPE_INVALID, 0, 0, 1},
    [22] = {"DT_UINT32", MF_U32, 16, 4, 1},
    [23] = {"DT_UINT64", MF_U64, 17, 8, 1},
    [24] = {"DT_FLOAT8_E5M2", MF_F8_E5M2, 18, 1, 1},
    [25] = {"DT_FLOAT8_E4M3FN", MF_F8_E4M3, 18, 1, 1},
    [26] = {"DT_FLOAT8_E4M3FNUZ", MF_F8_E4M3FNUZ, 18, 1, 1},
    [27] = {"DT_FLOAT8_E4M3B11FNUZ", MF_DTYPE_INVALID, 18, 1, 1},
    [28] = {"DT_FLOAT8_E5M2FNUZ", MF_F8_E5M2FNUZ, 18, 1, 1},
    [29] = {"DT_INT4", MF_DTYPE_INVALID, 7, 1, 1},
    [30] = {"DT_UINT4", MF_DTYPE_INVALID, 7, 1, 1},
};
#define N_TYPES (sizeof(types) / sizeof(types[0]))

/* Reference types (DT_FLOAT_REF = 101, ...) hold the same elements. */
static const tf_type *type_of(uint64_t dt)
{
    if (dt > 100 && dt < 200)
        dt -= 100;
    return dt < N_TYPES && types[dt].name ? &types[dt] : NULL;
}

mf_dtype mf_tf_dtype(uint64_t dt)
{
    return type_of(dt) ? type_of(dt)->dt : MF_DTYPE_INVALID;
}

const char *mf_tf_dtype_name(uint64_t dt)
{
    return type_of(dt) ? type_of(dt)->name : NULL;
}

int mf_tf_read_shape(mf_cursor *c, const mf_pb_field *f, mf_tensor *t)
{
    mf_cursor sc;
    mf_pb_sub(c, f, &sc);
    mf_pb_field g;
    int r;
    t->ndim = 0;
    while ((r = mf_pb_next(&sc, &g)) == 1) {
        if (g.number == 3 && g.wire == 0 && g.varint)
            return mf_cur_fail(&sc, "TensorShapeProto: unknown rank");
        if (g.number != 2 || g.wire != 2)
            continue;
        if (t->ndim >= MF_MAX_DIMS)
            return mf_cur_fail(&sc, "TensorShapeProto: more than %d dims", MF_MAX_DIMS);
        mf_cursor dc;
        mf_pb_sub(&sc, &g, &dc);
        mf_pb_field d;
        int64_t size = 0;
        while ((r = mf_pb_next(&dc, &d)) == 1)
            if (d.number == 1 && d.wire == 0)
                size = (int64_t)d.varint;
        if (r < 0)
            return -1;
        if (size < 0)
            return mf_cur_fail(&sc, "TensorShapeProto: dim %d has unknown size (%lld)", t->ndim,
                               (long long)size);
        t->shape[t->ndim++] = size;
    }
    return r < 0 ? -1 : 0;
}

/* ------------------------------------------------------- TensorProto */

enum { TFP_TYPED = 1, TFP_BUNDLE_STRINGS = 2 };

/* Private to TF tensors that are not plainly mapped. */
typedef struct tf_priv {
    uint8_t kind;
    const char *file;
    /* TFP_TYPED: the TensorProto and its typed field */
    const uint8_t *msg;
    uint64_t len, origin;
    uint8_t field, width, per;
    uint64_t stored;       /* elements stored (the rest repeat the last) */
    uint8_t last[16];      /* canonical bytes of the last stored element */
    const uint8_t *last_s; /* STRING: the last stored string */
    uint64_t last_len;
    /* TFP_BUNDLE_STRINGS: varint lengths, a 4-byte checksum, the bytes */
    const uint8_t *enc;
    uint64_t enc_len, n;
} tf_priv;

static bool fixed_field(uint8_t f) { return f == 5 || f == 6 || f == 9 || f == 12; }
static uint8_t value_wire(uint8_t f) { return f == 5 || f == 9 ? 5 : f == 6 || f == 12 ? 1 : 0; }

/* What one pass over the TensorProto finds. */
typedef struct tscan {
    uint64_t dtype;
    const uint8_t *content;
    uint64_t content_len, content_off;
    bool has_content, has_shape;
    uint64_t values[19];   /* values per typed field */
    uint64_t string_bytes; /* string_val bytes */
    uint8_t last_raw[8][2];
    uint64_t last_v[2];    /* the last two values (a complex's halves) */
    const uint8_t *last_s;
    uint64_t last_len;
} tscan;

static void push_last(tscan *s, uint64_t v)
{
    s->last_v[0] = s->last_v[1];
    s->last_v[1] = v;
}

static int scan_typed(mf_cursor *c, const mf_pb_field *f, tscan *s)
{
    uint8_t n = (uint8_t)f->number;
    if (n == 8) {
        if (f->wire != 2)
            return mf_cur_fail(c, "TensorProto string_val has wire type %u", f->wire);
        s->values[8]++;
        s->last_s = f->data;
        s->last_len = f->len;
        if (mf_add_ovf(s->string_bytes, 8 + f->len, &s->string_bytes))
            return mf_cur_fail(c, "TensorProto string_val: size overflows");
        return 0;
    }
    if (n == 18) { /* float8_val: bytes, one value each */
        if (f->wire != 2)
            return mf_cur_fail(c, "TensorProto float8_val has wire type %u", f->wire);
        s->values[18] += f->len;
        for (uint64_t i = f->len > 2 ? f->len - 2 : 0; i < f->len; i++)
            push_last(s, f->data[i]);
        return 0;
    }
    if (f->wire == value_wire(n)) {
        s->values[n]++;
        push_last(s, f->varint);
        return 0;
    }
    if (f->wire != 2)
        return mf_cur_fail(c, "TensorProto field %u has wire type %u", n, f->wire);
    mf_cursor v;
    mf_pb_sub(c, f, &v);
    if (fixed_field(n)) {
        unsigned w = n == 5 || n == 9 ? 4 : 8;
        if (f->len % w)
            return mf_cur_fail(c, "TensorProto field %u: packed run of %llu bytes is not whole %u-byte values",
                               n, (unsigned long long)f->len, w);
        s->values[n] += f->len / w;
        for (uint64_t i = f->len / w > 2 ? f->len / w - 2 : 0; i < f->len / w; i++)
            push_last(s, w == 4 ? mf_rd32le(f->data + 4 * i) : mf_rd64le(f->data + 8 * i));
        return 0;
    }
    while (mf_cur_left(&v) > 0) {
        uint64_t x;
        if (mf_pb_varint(&v, &x, "TensorProto value"))
            return -1;
        s->values[n]++;
        push_last(s, x);
    }
    return 0;
}

static int scan_proto(mf_cursor *c, mf_tensor *t, tscan *s)
{
    memset(s, 0, sizeof(*s));
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(c, &f)) == 1) {
        switch (f.number) {
        case 1:
            if (f.wire == 0)
                s->dtype = f.varint;
            break;
        case 2:
            if (f.wire == 2) {
                s->has_shape = true;
                if (mf_tf_read_shape(c, &f, t))
                    return -1;
            }
            break;
        case 4:
            if (f.wire != 2)
                return mf_cur_fail(c, "TensorProto tensor_content has wire type %u", f.wire);
            s->has_content = true;
            s->content = f.data;
            s->content_len = f.len;
            s->content_off = c->origin + (uint64_t)(f.data - c->base);
            break;
        case 14:
        case 15:
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->file, (int64_t)f.offset,
                           "TensorProto holds resource or variant values: not weights mfmt reads");
        default:
            if ((f.number >= 5 && f.number <= 13) || f.number == 16 || f.number == 17 ||
                f.number == 18)
                if (scan_typed(c, &f, s))
                    return -1;
            break;
        }
    }
    return r < 0 ? -1 : 0;
}

/* Canonical bytes of the last stored element, for the fill. */
static void last_element(const tscan *s, const tf_type *ty, tf_priv *pv)
{
    uint64_t v[2] = {s->last_v[ty->per == 2 ? 0 : 1], s->last_v[1]};
    if (ty->field == 11)
        v[0] = v[0] != 0;
    for (unsigned k = 0; k < ty->per; k++)
        mf_wr64le(pv->last + k * ty->width, v[k]);
}

int mf_tf_read_tensor_proto(mf_model *m, uint32_t fi, mf_cursor *c, const char *name,
                            mf_status *st)
{
    int64_t at = (int64_t)c->origin;
    mf_cursor whole = *c;
    mf_tensor *t = mf_model_add_tensor(m, st);
    if (!t)
        return -1;
    t->name = name;
    tscan s;
    if (scan_proto(c, t, &s))
        return -1;
    const tf_type *ty = type_of(s.dtype);
    if (!ty || ty->dt == MF_DTYPE_INVALID)
        return mf_fail(st, MF_ERR_UNSUPPORTED, c->file, at, "tensor \"%s\": dtype %s (%llu) is not one mfmt reads",
                       name, ty ? ty->name : "unknown", (unsigned long long)s.dtype);
    t->dtype = ty->dt;
    t->file = fi;
    uint64_t n = mf_tensor_nelems(t);
    if (n == UINT64_MAX)
        return mf_fail(st, MF_ERR_FORMAT, c->file, at, "tensor \"%s\": element count overflows", name);
    if (ty->dt != MF_STRING && mf_tensor_set_nbytes(t, c->file, at, st))
        return -1;
    if (s.has_content) {
        if (ty->dt == MF_STRING)
            return mf_fail(st, MF_ERR_UNSUPPORTED, c->file, (int64_t)s.content_off,
                           "tensor \"%s\": DT_STRING in tensor_content is not supported", name);
        if (s.content_len != t->nbytes)
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)s.content_off,
                           "tensor \"%s\": tensor_content holds %llu bytes, but shape x %s needs %llu",
                           name, (unsigned long long)s.content_len, ty->name,
                           (unsigned long long)t->nbytes);
        t->offset = s.content_off;
        t->data = s.content_len ? s.content : NULL;
        return 0;
    }
    for (unsigned k = 5; k < 19; k++)
        if (s.values[k] && k != ty->field)
            return mf_fail(st, MF_ERR_FORMAT, c->file, at,
                           "tensor \"%s\": values in TensorProto field %u, but %s belongs in field %u",
                           name, k, ty->name, ty->field);
    uint64_t vals = s.values[ty->field];
    if (vals % ty->per)
        return mf_fail(st, MF_ERR_FORMAT, c->file, at, "tensor \"%s\": an odd number of complex parts",
                       name);
    uint64_t stored = vals / ty->per;
    if (stored > n)
        return mf_fail(st, MF_ERR_FORMAT, c->file, at,
                       "tensor \"%s\": %llu values stored, but the shape holds %llu", name,
                       (unsigned long long)stored, (unsigned long long)n);
    tf_priv *pv = mf_arena_alloc(m->arena, sizeof(*pv));
    if (!pv)
        return mf_oom(st, c->file);
    pv->kind = TFP_TYPED;
    pv->file = c->file;
    pv->msg = whole.base;
    pv->len = whole.size;
    pv->origin = whole.origin;
    pv->field = ty->field;
    pv->width = ty->width;
    pv->per = ty->per;
    pv->stored = stored;
    last_element(&s, ty, pv);
    pv->last_s = s.last_s;
    pv->last_len = s.last_len;
    if (ty->dt == MF_STRING) {
        uint64_t fill = stored ? n - stored : 0, extra;
        if (mf_mul_ovf(fill, 8 + s.last_len, &extra) ||
            mf_add_ovf(s.string_bytes, extra, &t->nbytes) ||
            (!stored && mf_mul_ovf(n, 8, &t->nbytes)))
            return mf_fail(st, MF_ERR_FORMAT, c->file, at, "tensor \"%s\": size overflows", name);
    }
    t->offset = (uint64_t)at;
    t->priv = pv;
    if (stored < n && stored > 0)
        mf_model_note(m, "tensor \"%s\": %llu of %llu values stored; the last one fills the rest (TensorProto rule)",
                      name, (unsigned long long)stored, (unsigned long long)n);
    return 0;
}

/* ------------------------------------------------------------ stream */

typedef struct typed_out {
    mf_emit *e;
    const tf_priv *pv;
    uint64_t left; /* values still to emit (stored x per) */
} typed_out;

static int put_value(typed_out *o, uint64_t v)
{
    if (o->left == 0)
        return 0;
    o->left--;
    if (o->pv->field == 11) /* bool_val: any non-zero varint is true */
        v = v != 0;
    return mf_emit_u64le(o->e, v, o->pv->width);
}

static int emit_field(typed_out *o, mf_cursor *c, const mf_pb_field *f)
{
    const tf_priv *pv = o->pv;
    if (pv->field == 8) {
        if (o->left == 0)
            return 0;
        o->left--;
        return mf_emit_string(o->e, f->data, f->len);
    }
    if (pv->field == 18) {
        for (uint64_t i = 0; i < f->len; i++)
            if (put_value(o, f->data[i]))
                return -1;
        return 0;
    }
    if (f->wire != 2)
        return put_value(o, f->varint);
    if (fixed_field(pv->field)) {
        unsigned w = pv->width;
        for (uint64_t i = 0; i + w <= f->len; i += w)
            if (put_value(o, w == 4 ? mf_rd32le(f->data + i) : mf_rd64le(f->data + i)))
                return -1;
        return 0;
    }
    mf_cursor v;
    mf_pb_sub(c, f, &v);
    while (mf_cur_left(&v) > 0) {
        uint64_t x;
        if (mf_pb_varint(&v, &x, "TensorProto value") || put_value(o, x))
            return -1;
    }
    return 0;
}

static int fill_rest(mf_emit *e, const tf_priv *pv, uint64_t n)
{
    if (pv->stored >= n)
        return 0;
    uint64_t rest = n - pv->stored;
    if (pv->field == 8) {
        for (uint64_t i = 0; i < rest; i++)
            if (pv->stored ? mf_emit_string(e, pv->last_s, pv->last_len)
                           : mf_emit_string(e, NULL, 0))
                return -1;
        return 0;
    }
    size_t es = (size_t)pv->width * pv->per;
    if (pv->stored == 0)
        return mf_emit_zeros(e, rest * es);
    for (uint64_t i = 0; i < rest; i++)
        if (mf_emit_put(e, pv->last, es))
            return -1;
    return 0;
}

static int stream_typed(const mf_tensor *t, const tf_priv *pv, mf_emit *e)
{
    mf_cursor c;
    mf_cur_init(&c, pv->msg, pv->len, pv->file, e->st);
    c.origin = pv->origin;
    typed_out o = {e, pv, pv->stored * pv->per};
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&c, &f)) == 1)
        if (f.number == pv->field && emit_field(&o, &c, &f))
            return -1;
    if (r < 0)
        return -1;
    return fill_rest(e, pv, mf_tensor_nelems(t));
}

/* TensorBundle strings: n varint64 lengths, a masked CRC32C of them, then
 * the bytes (tensor_bundle.cc); checked when the bundle was opened. */
static int stream_bundle_strings(const tf_priv *pv, mf_emit *e)
{
    mf_cursor c;
    mf_cur_init(&c, pv->enc, pv->enc_len, pv->file, e->st);
    mf_cursor lens = c;
    for (uint64_t i = 0; i < pv->n; i++) { /* to where the bytes start */
        uint64_t l;
        if (mf_pb_varint(&c, &l, "string length"))
            return -1;
    }
    uint64_t pos_bytes = c.pos + 4;
    for (uint64_t i = 0; i < pv->n; i++) {
        uint64_t l;
        if (mf_pb_varint(&lens, &l, "string length"))
            return -1;
        if (l > pv->enc_len - pos_bytes)
            return mf_fail(e->st, MF_ERR_FORMAT, pv->file, -1, "string tensor runs past its data");
        if (mf_emit_string(e, pv->enc + pos_bytes, l))
            return -1;
        pos_bytes += l;
    }
    return 0;
}

int mf_tf_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                 mf_status *st)
{
    const tf_priv *pv = t->priv;
    if (!pv)
        return mf_stream_mapped(m, t, sink, ctx, st);
    mf_emit *e = mf_emit_new(sink, ctx, st);
    if (!e)
        return -1;
    int rc = pv->kind == TFP_TYPED ? stream_typed(t, pv, e) : stream_bundle_strings(pv, e);
    if (rc == 0 && e->total != t->nbytes)
        rc = mf_fail(st, MF_ERR_FORMAT, pv->file, (int64_t)t->offset,
                     "tensor \"%s\": %llu bytes decoded, %llu expected", t->name,
                     (unsigned long long)e->total, (unsigned long long)t->nbytes);
    return mf_emit_finish(e, rc);
}

int mf_tf_bundle_strings(mf_model *m, mf_tensor *t, const uint8_t *enc, uint64_t len,
                         const char *file, mf_status *st, uint32_t *crc)
{
    uint64_t n = mf_tensor_nelems(t), total = 0;
    uint32_t c32 = 0;
    mf_cursor c;
    mf_cur_init(&c, enc, len, file, st);
    c.origin = t->offset;
    if (n > len)
        return mf_cur_fail(&c, "tensor \"%s\": %llu strings cannot fit in %llu bytes", t->name,
                           (unsigned long long)n, (unsigned long long)len);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t l;
        if (mf_pb_varint(&c, &l, "string length"))
            return -1;
        if (mf_add_ovf(total, l, &total) || total > len)
            return mf_cur_fail(&c, "tensor \"%s\": string lengths exceed the %llu bytes stored",
                               t->name, (unsigned long long)len);
        uint8_t b[8]; /* tensor_bundle.cc checksums each length as uint32 (uint64 if larger) */
        mf_wr64le(b, l);
        c32 = mf_crc32c_extend(c32, b, l > UINT32_MAX ? 8 : 4);
    }
    const uint8_t *ck;
    if (mf_cur_bytes(&c, 4, &ck, "string lengths checksum"))
        return -1;
    if (mf_crc32c_unmask(mf_rd32le(ck)) != c32)
        return mf_cur_fail(&c, "tensor \"%s\": string lengths checksum mismatch", t->name);
    c32 = mf_crc32c_extend(c32, ck, 4);
    c32 = mf_crc32c_extend(c32, c.base + c.pos, (size_t)mf_cur_left(&c));
    *crc = c32;
    if (mf_cur_left(&c) != total)
        return mf_cur_fail(&c, "tensor \"%s\": %llu string bytes stored, lengths say %llu",
                           t->name, (unsigned long long)mf_cur_left(&c), (unsigned long long)total);
    tf_priv *pv = mf_arena_alloc(m->arena, sizeof(*pv));
    if (!pv)
        return mf_oom(st, file);
    pv->kind = TFP_BUNDLE_STRINGS;
    pv->file = file;
    pv->enc = enc;
    pv->enc_len = len;
    pv->n = n;
    t->priv = pv;
    t->nbytes = 8 * n + total;
    return 0;
}
