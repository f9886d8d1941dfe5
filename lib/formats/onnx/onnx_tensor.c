/* onnx_tensor.c - ONNX TensorProto -> mf_tensor.
 *
 * TensorProto (onnx.proto): dims = 1, data_type = 2, segment = 3,
 * float_data = 4, int32_data = 5, string_data = 6, int64_data = 7,
 * name = 8, raw_data = 9, double_data = 10, uint64_data = 11,
 * doc_string = 12, external_data = 13, data_location = 14.
 *
 * The data is in exactly one place: raw_data (little-endian, fixed width,
 * sub-byte types packed from the least significant bits), an external file
 * (data_location EXTERNAL, external_data location/offset/length), or the
 * typed repeated field of the data type (packed or not):
 *   float_data   FLOAT, COMPLEX64 (real, imaginary)
 *   double_data  DOUBLE, COMPLEX128
 *   int64_data   INT64
 *   uint64_data  UINT32, UINT64
 *   string_data  STRING
 *   int32_data   every other type: one element per value (its bit pattern in
 *                the low bits: FLOAT16, BFLOAT16, FLOAT8*), except the 4-bit
 *                types (two elements a value) and 2-bit ones (four). */
#include "formats/onnx/onnx.h"
#include "core/emit.h"

#include <limits.h>
#include <stdlib.h>

enum {
    F_DIMS = 1, F_DATA_TYPE = 2, F_SEGMENT = 3, F_FLOAT = 4, F_INT32 = 5,
    F_STRING = 6, F_INT64 = 7, F_NAME = 8, F_RAW = 9, F_DOUBLE = 10,
    F_UINT64 = 11, F_EXTERNAL = 13, F_LOCATION = 14,
};

typedef struct onnx_type {
    const char *name;
    mf_dtype dt;
    uint8_t field; /* the typed field that may hold it */
    uint8_t width; /* canonical bytes of one value of that field */
} onnx_type;

static const onnx_type types[] = {
    [1] = {"FLOAT", MF_F32, F_FLOAT, 4},
    [2] = {"UINT8", MF_U8, F_INT32, 1},
    [3] = {"INT8", MF_I8, F_INT32, 1},
    [4] = {"UINT16", MF_U16, F_INT32, 2},
    [5] = {"INT16", MF_I16, F_INT32, 2},
    [6] = {"INT32", MF_I32, F_INT32, 4},
    [7] = {"INT64", MF_I64, F_INT64, 8},
    [8] = {"STRING", MF_STRING, F_STRING, 0},
    [9] = {"BOOL", MF_BOOL, F_INT32, 1},
    [10] = {"FLOAT16", MF_F16, F_INT32, 2},
    [11] = {"DOUBLE", MF_F64, F_DOUBLE, 8},
    [12] = {"UINT32", MF_U32, F_UINT64, 4},
    [13] = {"UINT64", MF_U64, F_UINT64, 8},
    [14] = {"COMPLEX64", MF_C64, F_FLOAT, 4},
    [15] = {"COMPLEX128", MF_C128, F_DOUBLE, 8},
    [16] = {"BFLOAT16", MF_BF16, F_INT32, 2},
    [17] = {"FLOAT8E4M3FN", MF_F8_E4M3, F_INT32, 1},
    [18] = {"FLOAT8E4M3FNUZ", MF_F8_E4M3FNUZ, F_INT32, 1},
    [19] = {"FLOAT8E5M2", MF_F8_E5M2, F_INT32, 1},
    [20] = {"FLOAT8E5M2FNUZ", MF_F8_E5M2FNUZ, F_INT32, 1},
    [21] = {"UINT4", MF_U4, F_INT32, 1},
    [22] = {"INT4", MF_I4, F_INT32, 1},
    [23] = {"FLOAT4E2M1", MF_F4, F_INT32, 1},
    [24] = {"FLOAT8E8M0", MF_F8_E8M0, F_INT32, 1},
    [25] = {"UINT2", MF_U2, F_INT32, 1},
    [26] = {"INT2", MF_I2, F_INT32, 1},
};
#define N_TYPES (sizeof(types) / sizeof(types[0]))

static const onnx_type *type_of(uint64_t t)
{
    return t < N_TYPES && types[t].name ? &types[t] : NULL;
}

mf_dtype mf_onnx_dtype(uint64_t t)
{
    return type_of(t) ? type_of(t)->dt : MF_DTYPE_INVALID;
}

const char *mf_onnx_type_name(uint64_t t)
{
    return type_of(t) ? type_of(t)->name : NULL;
}

static const char *field_name(uint32_t f)
{
    switch (f) {
    case F_FLOAT: return "float_data";
    case F_INT32: return "int32_data";
    case F_STRING: return "string_data";
    case F_INT64: return "int64_data";
    case F_DOUBLE: return "double_data";
    case F_UINT64: return "uint64_data";
    default: return "?";
    }
}

static bool is_typed_field(uint32_t f)
{
    return f == F_FLOAT || f == F_INT32 || f == F_STRING || f == F_INT64 ||
           f == F_DOUBLE || f == F_UINT64;
}

/* Stored width of one packed value: 4/8 for the fixed fields, 0 = varint. */
static unsigned fixed_width(uint32_t f)
{
    return f == F_FLOAT ? 4 : f == F_DOUBLE ? 8 : 0;
}

/* The wire type a single (unpacked) value of field f has. */
static uint8_t value_wire(uint32_t f)
{
    return f == F_FLOAT ? 5 : f == F_DOUBLE ? 1 : 0;
}

/* Private to each tensor whose bytes come from a typed field. */
typedef struct onnx_tpriv {
    const uint8_t *msg; /* the TensorProto's bytes in the mapping */
    uint64_t len, origin;
    const char *file;
    uint32_t field;     /* the typed field holding the values */
    uint8_t width;      /* canonical bytes per value */
    bool is_bool;       /* BOOL: any non-zero value is true (1) */
} onnx_tpriv;

/* Everything one pass over a TensorProto finds. */
typedef struct tproto {
    int ndim;
    int64_t dims[MF_MAX_DIMS];
    uint64_t data_type;
    bool has_type, external, has_raw;
    const uint8_t *name;
    uint64_t name_len;
    const uint8_t *raw;
    uint64_t raw_len, raw_off;
    uint64_t count[16];        /* values found per typed field */
    uint64_t string_bytes;     /* canonical bytes of string_data */
    uint64_t first_typed_off[16];
    const char *location, *offset_s, *length_s; /* external_data */
    uint64_t ext_off;          /* where external_data starts */
} tproto;

static int add_dim(mf_cursor *c, tproto *p, uint64_t v)
{
    if (p->ndim >= MF_MAX_DIMS)
        return mf_cur_fail(c, "TensorProto: more than %d dims (mfmt reads at most %d)",
                           MF_MAX_DIMS, MF_MAX_DIMS);
    if (v > (uint64_t)INT64_MAX)
        return mf_cur_fail(c, "TensorProto: dims[%d] is negative (%lld)", p->ndim,
                           (long long)(int64_t)v);
    p->dims[p->ndim++] = (int64_t)v;
    return 0;
}

static int read_dims(mf_cursor *c, const mf_pb_field *f, tproto *p)
{
    if (f->wire == 0)
        return add_dim(c, p, f->varint);
    if (f->wire != 2)
        return mf_cur_fail(c, "TensorProto: dims has wire type %u", f->wire);
    mf_cursor s;
    mf_pb_sub(c, f, &s);
    while (mf_cur_left(&s) > 0) {
        uint64_t v;
        if (mf_pb_varint(&s, &v, "TensorProto dims") || add_dim(&s, p, v))
            return -1;
    }
    return 0;
}

/* Counts the values of one occurrence of a typed field, checking its
 * encoding (a packed run must hold whole values). */
static int count_values(mf_cursor *c, const mf_pb_field *f, tproto *p)
{
    uint32_t n = f->number;
    if (p->count[n] == 0 && p->first_typed_off[n] == 0)
        p->first_typed_off[n] = f->offset;
    if (n == F_STRING) {
        if (f->wire != 2)
            return mf_cur_fail(c, "TensorProto string_data has wire type %u", f->wire);
        p->count[n]++;
        if (mf_add_ovf(p->string_bytes, 8 + f->len, &p->string_bytes))
            return mf_cur_fail(c, "TensorProto string_data: size overflows");
        return 0;
    }
    if (f->wire == value_wire(n)) {
        p->count[n]++;
        return 0;
    }
    if (f->wire != 2)
        return mf_cur_fail(c, "TensorProto %s has wire type %u", field_name(n), f->wire);
    unsigned w = fixed_width(n);
    if (w) {
        if (f->len % w)
            return mf_cur_fail(c, "TensorProto %s: packed run of %llu bytes is not a whole number of %u-byte values",
                               field_name(n), (unsigned long long)f->len, w);
        p->count[n] += f->len / w;
        return 0;
    }
    mf_cursor s;
    mf_pb_sub(c, f, &s);
    while (mf_cur_left(&s) > 0) {
        uint64_t v;
        if (mf_pb_varint(&s, &v, field_name(n)))
            return -1;
        p->count[n]++;
    }
    return 0;
}

/* external_data entry: StringStringEntryProto {key = 1, value = 2}. */
static int read_external_entry(mf_onnx_ctx *x, mf_cursor *c, const mf_pb_field *f, tproto *p)
{
    if (f->wire != 2)
        return mf_cur_fail(c, "TensorProto external_data has wire type %u", f->wire);
    mf_cursor s;
    mf_pb_sub(c, f, &s);
    mf_pb_field g;
    int r;
    const uint8_t *k = NULL, *v = NULL;
    uint64_t kl = 0, vl = 0;
    while ((r = mf_pb_next(&s, &g)) == 1) {
        if (g.wire != 2)
            continue;
        if (g.number == 1)
            k = g.data, kl = g.len;
        else if (g.number == 2)
            v = g.data, vl = g.len;
    }
    if (r < 0)
        return -1;
    if (!p->ext_off)
        p->ext_off = f->offset;
    if (!k || !v)
        return 0;
    if (memchr(v, 0, vl))
        return mf_fail(x->st, MF_ERR_FORMAT, c->file, (int64_t)f->offset,
                       "external_data value contains a NUL byte");
    char *val = mf_arena_strndup(x->m->arena, (const char *)v, vl);
    if (!val)
        return mf_oom(x->st, c->file);
    if (kl == 8 && memcmp(k, "location", 8) == 0)
        p->location = val;
    else if (kl == 6 && memcmp(k, "offset", 6) == 0)
        p->offset_s = val;
    else if (kl == 6 && memcmp(k, "length", 6) == 0)
        p->length_s = val;
    return 0;
}

static int scan_tensor(mf_onnx_ctx *x, mf_cursor *c, tproto *p)
{
    memset(p, 0, sizeof(*p));
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(c, &f)) == 1) {
        switch (f.number) {
        case F_DIMS:
            if (read_dims(c, &f, p))
                return -1;
            break;
        case F_DATA_TYPE:
            if (f.wire == 0)
                p->data_type = f.varint, p->has_type = true;
            break;
        case F_SEGMENT:
            return mf_fail(x->st, MF_ERR_UNSUPPORTED, c->file, (int64_t)f.offset,
                           "TensorProto segment (a tensor split in chunks) is not supported");
        case F_NAME:
            if (f.wire == 2)
                p->name = f.data, p->name_len = f.len;
            break;
        case F_RAW:
            if (f.wire != 2)
                return mf_cur_fail(c, "TensorProto raw_data has wire type %u", f.wire);
            p->has_raw = true;
            p->raw = f.data;
            p->raw_len = f.len;
            p->raw_off = c->origin + (uint64_t)(f.data - c->base);
            break;
        case F_EXTERNAL:
            if (read_external_entry(x, c, &f, p))
                return -1;
            break;
        case F_LOCATION:
            p->external = f.wire == 0 && f.varint == 1;
            break;
        default:
            if (is_typed_field(f.number) && count_values(c, &f, p))
                return -1;
            break;
        }
    }
    return r < 0 ? -1 : 0;
}

/* A decimal string of external_data ("offset", "length"). */
static int parse_decimal(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || mf_mul_ovf(v, 10, &v) || mf_add_ovf(v, (uint64_t)(*s - '0'), &v))
            return -1;
    }
    *out = v;
    return 0;
}

/* location must stay inside the model's directory: relative, no "..". */
static const char *location_problem(const char *loc)
{
    if (!*loc)
        return "is empty";
    if (loc[0] == '/' || loc[0] == '\\' || (loc[0] && loc[1] == ':'))
        return "is an absolute path";
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "leaves the model's directory (\"..\")";
        p += n;
        if (*p)
            p++;
    }
    return NULL;
}

/* The resolved file must lie in the model's directory (symbolic links
 * included). */
static bool inside_dir(const char *dir, const char *path)
{
    char *rd = realpath(dir, NULL), *rp = realpath(path, NULL);
    bool ok = false;
    if (rd && rp) {
        size_t n = strlen(rd);
        ok = strncmp(rd, rp, n) == 0 && (rp[n] == '/' || (n == 1 && rd[0] == '/'));
    }
    free(rd);
    free(rp);
    return ok;
}

static int map_external(mf_onnx_ctx *x, const char *loc, int64_t at, uint32_t *fi)
{
    for (size_t i = 0; i < x->n_ext; i++)
        if (strcmp(x->ext[i].location, loc) == 0) {
            *fi = x->ext[i].fi;
            return 0;
        }
    const char *model = x->m->files[x->fi].path;
    char *path = mf_path_join(x->m->arena, x->dir, loc);
    if (!path)
        return mf_oom(x->st, model);
    if (!mf_path_exists(path))
        return mf_fail(x->st, MF_ERR_FORMAT, model, at,
                       "external data file \"%s\" does not exist (looked for %s)", loc, path);
    if (!inside_dir(x->dir, path))
        return mf_fail(x->st, MF_ERR_UNSAFE, model, at,
                       "external data location \"%s\" resolves outside the model's directory",
                       loc);
    mf_status tmp;
    mf_status_init(&tmp);
    if (mf_model_add_file(x->m, path, fi, &tmp)) {
        mf_fail(x->st, tmp.code, model, at, "external data: %s", tmp.msg);
        mf_status_clear(&tmp);
        return -1;
    }
    if (x->n_ext == x->cap_ext &&
        mf_vec_grow((void **)&x->ext, &x->cap_ext, x->n_ext + 1, sizeof(*x->ext)))
        return mf_oom(x->st, model);
    x->ext[x->n_ext].location = loc;
    x->ext[x->n_ext].fi = *fi;
    x->n_ext++;
    return 0;
}

void mf_onnx_ctx_free(mf_onnx_ctx *x)
{
    free(x->ext);
    x->ext = NULL;
    x->n_ext = x->cap_ext = 0;
}

static int bind_external(mf_onnx_ctx *x, const tproto *p, mf_tensor *t, int64_t at)
{
    const char *model = x->m->files[x->fi].path;
    if (!p->location)
        return mf_fail(x->st, MF_ERR_FORMAT, model, at,
                       "tensor \"%s\": data_location is EXTERNAL but external_data has no \"location\"",
                       t->name);
    const char *why = location_problem(p->location);
    if (why)
        return mf_fail(x->st, MF_ERR_UNSAFE, model, at,
                       "tensor \"%s\": external data location \"%s\" %s: refused", t->name,
                       p->location, why);
    uint64_t off = 0, len = t->nbytes;
    if (p->offset_s && parse_decimal(p->offset_s, &off))
        return mf_fail(x->st, MF_ERR_FORMAT, model, at,
                       "tensor \"%s\": external_data offset \"%s\" is not a decimal integer",
                       t->name, p->offset_s);
    if (p->length_s && parse_decimal(p->length_s, &len))
        return mf_fail(x->st, MF_ERR_FORMAT, model, at,
                       "tensor \"%s\": external_data length \"%s\" is not a decimal integer",
                       t->name, p->length_s);
    if (len != t->nbytes)
        return mf_fail(x->st, MF_ERR_FORMAT, model, at,
                       "tensor \"%s\": external_data length %llu, but dims x data type need %llu bytes",
                       t->name, (unsigned long long)len, (unsigned long long)t->nbytes);
    uint32_t fi;
    if (map_external(x, p->location, at, &fi))
        return -1;
    const mf_file *f = &x->m->files[fi];
    uint64_t end;
    if (mf_add_ovf(off, len, &end) || end > f->size)
        return mf_fail(x->st, MF_ERR_FORMAT, model, at,
                       "tensor \"%s\": external data [%llu, +%llu) is past the end of %s (%llu bytes)",
                       t->name, (unsigned long long)off, (unsigned long long)len, p->location,
                       (unsigned long long)f->size);
    t->file = fi;
    t->offset = off;
    t->data = len ? f->base + off : NULL;
    return 0;
}

/* The one typed field that holds the values, after checking no other
 * typed field has any. Returns 0 and *field = 0 when there is none. */
static int pick_typed_field(mf_onnx_ctx *x, const char *file, const tproto *p,
                            const onnx_type *ty, const char *name, uint32_t *field)
{
    *field = 0;
    for (uint32_t k = 0; k < 16; k++) {
        if (!p->count[k])
            continue;
        if (k != ty->field)
            return mf_fail(x->st, MF_ERR_FORMAT, file, (int64_t)p->first_typed_off[k],
                           "tensor \"%s\": %s holds values, but data type %s belongs in %s",
                           name, field_name(k), ty->name, field_name(ty->field));
        *field = k;
    }
    return 0;
}

static int bind_typed(mf_onnx_ctx *x, const char *file, const tproto *p, const onnx_type *ty,
                      mf_tensor *t, const mf_cursor *msg, int64_t at)
{
    uint32_t field;
    if (pick_typed_field(x, file, p, ty, t->name, &field))
        return -1;
    uint64_t want = ty->dt == MF_STRING ? mf_tensor_nelems(t) : t->nbytes / ty->width;
    uint64_t have = field ? p->count[field] : 0;
    if (have != want)
        return mf_fail(x->st, MF_ERR_FORMAT, file, field ? (int64_t)p->first_typed_off[field] : at,
                       "tensor \"%s\": %s holds %llu values, but dims x data type need %llu%s",
                       t->name, field_name(ty->field), (unsigned long long)have,
                       (unsigned long long)want,
                       field || want == 0 ? "" : " (the tensor has no data)");
    if (want == 0)
        return 0;
    onnx_tpriv *pv = mf_arena_alloc(x->m->arena, sizeof(*pv));
    if (!pv)
        return mf_oom(x->st, file);
    pv->msg = msg->base;
    pv->len = msg->size;
    pv->origin = msg->origin;
    pv->file = file;
    pv->field = field;
    pv->width = ty->width;
    pv->is_bool = ty->dt == MF_BOOL;
    t->priv = pv;
    t->file = x->fi;
    t->offset = (uint64_t)p->first_typed_off[field];
    return 0;
}

int mf_onnx_read_tensor(mf_onnx_ctx *x, mf_cursor *c, mf_tensor **out)
{
    const char *file = c->file;
    int64_t at = (int64_t)c->origin;
    mf_cursor whole = *c;
    tproto p;
    if (scan_tensor(x, c, &p))
        return -1;
    mf_tensor *t = mf_model_add_tensor(x->m, x->st);
    if (!t)
        return -1;
    *out = t;
    t->name = mf_arena_strndup(x->m->arena, p.name ? (const char *)p.name : "", p.name_len);
    if (!t->name)
        return mf_oom(x->st, file);
    if (p.name && memchr(p.name, 0, p.name_len))
        mf_model_note(x->m, "byte %lld: tensor name contains a NUL byte; shown up to it",
                      (long long)at);
    const onnx_type *ty = type_of(p.data_type);
    if (!ty)
        return mf_fail(x->st, p.has_type ? MF_ERR_UNSUPPORTED : MF_ERR_FORMAT, file, at,
                       "tensor \"%s\": data_type %llu is %s", t->name,
                       (unsigned long long)p.data_type,
                       p.has_type && p.data_type ? "not an ONNX element type mfmt knows"
                                                 : "missing (UNDEFINED)");
    t->dtype = ty->dt;
    t->ndim = p.ndim;
    memcpy(t->shape, p.dims, sizeof(t->shape));
    if (ty->dt == MF_STRING) {
        if (mf_tensor_nelems(t) == UINT64_MAX)
            return mf_fail(x->st, MF_ERR_FORMAT, file, at, "tensor \"%s\": element count overflows",
                           t->name);
        t->nbytes = p.string_bytes;
    } else if (mf_tensor_set_nbytes(t, file, at, x->st)) {
        return -1;
    }
    if (p.external) {
        if (ty->dt == MF_STRING)
            return mf_fail(x->st, MF_ERR_FORMAT, file, at,
                           "tensor \"%s\": STRING tensors cannot have external data", t->name);
        return bind_external(x, &p, t, p.ext_off ? (int64_t)p.ext_off : at);
    }
    if (p.has_raw) {
        if (ty->dt == MF_STRING)
            return mf_fail(x->st, MF_ERR_FORMAT, file, (int64_t)p.raw_off,
                           "tensor \"%s\": STRING tensors must use string_data, not raw_data",
                           t->name);
        if (p.raw_len != t->nbytes)
            return mf_fail(x->st, MF_ERR_FORMAT, file, (int64_t)p.raw_off,
                           "tensor \"%s\": raw_data holds %llu bytes, but dims x %s need %llu",
                           t->name, (unsigned long long)p.raw_len, ty->name,
                           (unsigned long long)t->nbytes);
        for (uint32_t k = 0; k < 16; k++)
            if (p.count[k])
                mf_model_note(x->m, "tensor \"%s\": raw_data is used and %s is ignored",
                              t->name, field_name(k));
        t->file = x->fi;
        t->offset = p.raw_off;
        t->data = p.raw_len ? p.raw : NULL;
        return 0;
    }
    return bind_typed(x, file, &p, ty, t, &whole, at);
}

/* ------------------------------------------------------------ streaming */

static int emit_run(mf_emit *e, mf_cursor *c, const mf_pb_field *f, const onnx_tpriv *pv)
{
    if (pv->field == F_STRING)
        return mf_emit_string(e, f->data, f->len);
    if (f->wire != 2)
        return mf_emit_u64le(e, pv->is_bool ? f->varint != 0 : f->varint, pv->width);
    unsigned w = fixed_width(pv->field);
    if (w) /* packed fixed-width values are already canonical */
        return mf_emit_put(e, f->data, (size_t)f->len);
    mf_cursor s;
    mf_pb_sub(c, f, &s);
    while (mf_cur_left(&s) > 0) {
        uint64_t v;
        if (mf_pb_varint(&s, &v, field_name(pv->field)) ||
            mf_emit_u64le(e, pv->is_bool ? v != 0 : v, pv->width))
            return -1;
    }
    return 0;
}

int mf_onnx_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                   mf_status *st)
{
    const onnx_tpriv *pv = t->priv;
    if (!pv)
        return mf_stream_mapped(m, t, sink, ctx, st);
    mf_emit *e = mf_emit_new(sink, ctx, st);
    if (!e)
        return -1;
    mf_cursor c;
    mf_cur_init(&c, pv->msg, pv->len, pv->file, st);
    c.origin = pv->origin;
    mf_pb_field f;
    int r, rc = 0;
    while (rc == 0 && (r = mf_pb_next(&c, &f)) == 1)
        if (f.number == pv->field)
            rc = emit_run(e, &c, &f, pv);
    if (rc == 0 && r < 0)
        rc = -1;
    if (rc == 0 && e->total != t->nbytes)
        rc = mf_fail(st, MF_ERR_FORMAT, pv->file, (int64_t)t->offset,
                     "tensor \"%s\": %s gave %llu bytes, %llu expected", t->name,
                     field_name(pv->field), (unsigned long long)e->total,
                     (unsigned long long)t->nbytes);
    return mf_emit_finish(e, rc);
}
