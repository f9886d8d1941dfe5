/* hdf5_types.c - datatype and dataspace messages; attribute values as
 * metadata. Spec: "The Datatype Message", "The Dataspace Message",
 * "Global Heap" (variable-length strings). */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

static const char *const class_names[] = {
    "fixed-point", "floating-point", "time", "string", "bitfield", "opaque",
    "compound", "reference", "enum", "variable-length", "array",
};

const char *h5_class_name(int cls)
{
    return cls >= 0 && cls <= 10 ? class_names[cls] : "unknown";
}

static mf_dtype int_dtype(uint32_t size, bool is_signed)
{
    switch (size) {
    case 1: return is_signed ? MF_I8 : MF_U8;
    case 2: return is_signed ? MF_I16 : MF_U16;
    case 4: return is_signed ? MF_I32 : MF_U32;
    case 8: return is_signed ? MF_I64 : MF_U64;
    }
    return MF_DTYPE_INVALID;
}

static int parse_fixed(mf_cursor *c, h5_dtype *t)
{
    uint16_t off, prec;
    if (mf_cur_u16(c, &off, "bit offset") || mf_cur_u16(c, &prec, "bit precision"))
        return -1;
    t->big_endian = t->bits & 1;
    t->is_signed = t->bits & 8;
    if (off == 0 && (uint32_t)prec == t->size * 8)
        t->mf = int_dtype(t->size, t->is_signed);
    if (t->mf == MF_DTYPE_INVALID)
        t->why = "integer with padding bits or an unusual size";
    return 0;
}

/* IEEE layouts mfmt maps to a tensor dtype. */
static mf_dtype float_dtype(uint32_t size, uint8_t eloc, uint8_t esz, uint8_t mloc,
                            uint8_t msz, uint32_t bias, uint16_t prec)
{
    if (mloc != 0 || prec != size * 8)
        return MF_DTYPE_INVALID;
    if (size == 2 && eloc == 10 && esz == 5 && msz == 10 && bias == 15)
        return MF_F16;
    if (size == 2 && eloc == 7 && esz == 8 && msz == 7 && bias == 127)
        return MF_BF16;
    if (size == 4 && eloc == 23 && esz == 8 && msz == 23 && bias == 127)
        return MF_F32;
    if (size == 8 && eloc == 52 && esz == 11 && msz == 52 && bias == 1023)
        return MF_F64;
    return MF_DTYPE_INVALID;
}

static int parse_float(mf_cursor *c, h5_dtype *t)
{
    uint16_t off, prec;
    uint8_t eloc, esz, mloc, msz;
    uint32_t bias;
    if (mf_cur_u16(c, &off, "bit offset") || mf_cur_u16(c, &prec, "bit precision") ||
        mf_cur_u8(c, &eloc, "exponent location") || mf_cur_u8(c, &esz, "exponent size") ||
        mf_cur_u8(c, &mloc, "mantissa location") || mf_cur_u8(c, &msz, "mantissa size") ||
        mf_cur_u32(c, &bias, "exponent bias"))
        return -1;
    unsigned order = (t->bits & 1) | ((t->bits >> 5) & 2); /* bits 0 and 6 */
    if (order == 2 || order == 3) {
        t->why = "VAX-order float";
        return 0;
    }
    t->big_endian = order == 1;
    uint32_t sign_at = (t->bits >> 8) & 0xff;
    t->mf = off == 0 && sign_at == t->size * 8 - 1
                ? float_dtype(t->size, eloc, esz, mloc, msz, bias, prec)
                : MF_DTYPE_INVALID;
    if (t->mf == MF_DTYPE_INVALID)
        t->why = "float that is not IEEE half, bfloat16, single or double";
    return 0;
}

static int parse_type(h5_file *f, mf_cursor *c, h5_dtype *t, int depth);

/* Enum: base integer type, member names, values. h5py's bool is the int8
 * enum {FALSE: 0, TRUE: 1}. */
static int parse_enum(h5_file *f, mf_cursor *c, h5_dtype *t, int depth)
{
    h5_dtype base;
    if (parse_type(f, c, &base, depth + 1))
        return -1;
    t->n_members = t->bits & 0xffff;
    t->why = "enum";
    if (base.cls != H5T_FIXED || base.size != t->size)
        return mf_cur_fail(c, "enum base type must be an integer of the enum's size (%u)", t->size);
    const char *names[2] = {0};
    for (uint32_t i = 0; i < t->n_members; i++) {
        const uint8_t *p = c->base + c->pos;
        uint64_t left = mf_cur_left(c), len = 0;
        while (len < left && p[len])
            len++;
        if (len == left)
            return mf_cur_fail(c, "enum member name is not NUL-terminated");
        uint64_t used = len + 1;
        if (t->version < 3)
            used = mf_align_up(used, 8);
        if (i < 2)
            names[i] = (const char *)p;
        if (mf_cur_skip(c, used, "enum member name"))
            return -1;
    }
    const uint8_t *vals;
    uint64_t vbytes;
    if (mf_mul_ovf(t->n_members, t->size, &vbytes) || mf_cur_bytes(c, vbytes, &vals, "enum values"))
        return -1;
    if (t->n_members == 2 && t->size == 1 && base.is_signed && strcmp(names[0], "FALSE") == 0 &&
        strcmp(names[1], "TRUE") == 0 && vals[0] == 0 && vals[1] == 1) {
        t->is_bool_enum = true;
        t->mf = MF_BOOL;
        t->why = NULL;
    }
    return 0;
}

static int parse_type(h5_file *f, mf_cursor *c, h5_dtype *t, int depth)
{
    memset(t, 0, sizeof(*t));
    t->mf = MF_DTYPE_INVALID;
    if (depth > H5_MAX_DEPTH)
        return mf_cur_fail(c, "datatypes nested deeper than %d", H5_MAX_DEPTH);
    uint8_t b0;
    const uint8_t *bits;
    if (mf_cur_u8(c, &b0, "datatype class and version") || mf_cur_bytes(c, 3, &bits, "class bits") ||
        mf_cur_u32(c, &t->size, "datatype size"))
        return -1;
    t->cls = b0 & 0x0f;
    t->version = b0 >> 4;
    t->bits = (uint32_t)bits[0] | (uint32_t)bits[1] << 8 | (uint32_t)bits[2] << 16;
    if (t->version < 1 || t->version > 5)
        return mf_cur_fail(c, "datatype version %d is not 1 to 5", t->version);
    if (t->size == 0)
        return mf_cur_fail(c, "datatype size is 0");
    switch (t->cls) {
    case H5T_FIXED: return parse_fixed(c, t);
    case H5T_FLOAT: return parse_float(c, t);
    case H5T_ENUM: return parse_enum(f, c, t, depth);
    case H5T_STRING: t->why = "fixed-length string"; return 0;
    case H5T_VLEN: {
        t->vlen_string = (t->bits & 0x0f) == 1;
        t->why = t->vlen_string ? "variable-length string" : "variable-length sequence";
        h5_dtype base;
        return parse_type(f, c, &base, depth + 1);
    }
    default:
        if (t->cls > H5T_ARRAY)
            return mf_cur_fail(c, "datatype class %d is unknown", t->cls);
        t->why = h5_class_name(t->cls);
        return 0;
    }
}

int h5_dtype_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos, h5_dtype *t,
                   int depth)
{
    mf_cursor c;
    mf_cur_init(&c, p, n, f->label, f->st);
    c.origin = f->origin + pos;
    return parse_type(f, &c, t, depth);
}

/* ------------------------------------------------------------ dataspace */
int h5_space_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos, h5_space *s)
{
    memset(s, 0, sizeof(*s));
    mf_cursor c;
    mf_cur_init(&c, p, n, f->label, f->st);
    c.origin = f->origin + pos;
    uint8_t ver, nd, flags, type = 1;
    if (mf_cur_u8(&c, &ver, "dataspace version") || mf_cur_u8(&c, &nd, "dimensionality") ||
        mf_cur_u8(&c, &flags, "dataspace flags"))
        return -1;
    if (ver == 1) {
        if (mf_cur_skip(&c, 5, "reserved"))
            return -1;
        type = nd == 0 ? 0 : 1;
    } else if (ver == 2) {
        if (mf_cur_u8(&c, &type, "dataspace type"))
            return -1;
        if (type > 2)
            return mf_cur_fail(&c, "dataspace type %u is not scalar, simple or null", type);
    } else {
        return mf_cur_fail(&c, "dataspace version %u is not 1 or 2", ver);
    }
    if (nd > MF_MAX_DIMS) {
        mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, (int64_t)c.origin,
                "dataspace of %u dimensions (mfmt reads at most %d)", nd, MF_MAX_DIMS);
        return -1;
    }
    if (type != 1 && nd != 0)
        return mf_cur_fail(&c, "a %s dataspace must have no dimensions (has %u)",
                           type == 0 ? "scalar" : "null", nd);
    s->kind = type;
    s->ndims = nd;
    for (int i = 0; i < nd; i++)
        if (h5_rd_len(f, &c, &s->dims[i], "dimension size"))
            return -1;
    s->has_max = flags & 1;
    for (int i = 0; i < nd; i++) {
        s->maxdims[i] = s->dims[i];
        if (s->has_max && h5_rd_len(f, &c, &s->maxdims[i], "maximum dimension size"))
            return -1;
        if (s->has_max && f->sz_len < 8 && s->maxdims[i] == (1ull << (8 * f->sz_len)) - 1)
            s->maxdims[i] = H5_UNDEF;
        if (s->maxdims[i] < s->dims[i])
            return mf_cur_fail(&c, "dimension %d: maximum size %llu is below the size %llu", i,
                               (unsigned long long)s->maxdims[i], (unsigned long long)s->dims[i]);
        if (s->dims[i] > INT64_MAX)
            return mf_cur_fail(&c, "dimension %d size %llu is too large", i,
                               (unsigned long long)s->dims[i]);
    }
    return 0;
}

int h5_space_nelems(h5_file *f, const h5_space *s, uint64_t pos, uint64_t *n)
{
    uint64_t k = s->kind == 2 ? 0 : 1;
    for (int i = 0; i < s->ndims; i++)
        if (mf_mul_ovf(k, s->dims[i], &k))
            return h5_fail_at(f, pos, "dataspace element count overflows 64 bits");
    *n = k;
    return 0;
}

/* --------------------------------------------------------- global heap */
/* One collection's objects, parsed once for many look-ups. */
typedef struct gcol {
    uint64_t addr;
    struct gobj { uint32_t index; uint64_t pos, size; } *obj;
    size_t n;
} gcol;

static int gcol_load(h5_file *f, gcol *g, uint64_t addr)
{
    free(g->obj);
    memset(g, 0, sizeof(*g));
    mf_cursor c;
    uint64_t pos, csize;
    if (h5_locate(f, addr, 8, "global heap collection", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, "GCOL", "global heap collection") ||
        h5_cursor_at(f, addr, 0, "global heap collection", &c) || mf_cur_skip(&c, 8, "header") ||
        h5_rd_len(f, &c, &csize, "collection size"))
        return -1;
    if (csize < c.pos || csize > c.size)
        return h5_fail_at(f, pos, "global heap collection size %llu does not fit in the file",
                          (unsigned long long)csize);
    c.size = csize;
    size_t cap = 0;
    while (mf_cur_left(&c) >= 8 + (uint64_t)f->sz_len) {
        uint16_t index, refs;
        uint64_t size;
        if (mf_cur_u16(&c, &index, "object index") || mf_cur_u16(&c, &refs, "reference count") ||
            mf_cur_skip(&c, 4, "reserved") || h5_rd_len(f, &c, &size, "object size"))
            return -1;
        if (index == 0)
            break; /* free space: the rest of the collection */
        uint64_t at = c.pos;
        if (mf_cur_skip(&c, size, "global heap object"))
            return -1;
        uint64_t pad = mf_align_up(size, 8) - size; /* objects are 8-byte aligned */
        c.pos += pad < mf_cur_left(&c) ? pad : mf_cur_left(&c);
        if (g->n == cap && mf_vec_grow((void **)&g->obj, &cap, g->n + 1, sizeof(*g->obj)))
            return mf_oom(f->st, f->label);
        g->obj[g->n++] = (struct gobj){index, pos + at, size};
    }
    g->addr = addr;
    return 0;
}

static int gcol_get(h5_file *f, gcol *g, uint64_t addr, uint32_t index, const uint8_t **p,
                    uint64_t *n)
{
    if (g->addr != addr || !g->obj) {
        if (gcol_load(f, g, addr))
            return -1;
    }
    size_t i = index - 1 < g->n && g->obj[index - 1].index == index ? index - 1 : g->n;
    for (size_t k = 0; i == g->n && k < g->n; k++)
        if (g->obj[k].index == index)
            i = k;
    if (i == g->n)
        return h5_fail_at(f, f->base_addr + addr, "global heap collection has no object %u", index);
    *p = f->base + g->obj[i].pos;
    *n = g->obj[i].size;
    return 0;
}

/* ------------------------------------------------------- value decoding */
static mf_value fixed_string(mf_arena *a, const h5_dtype *t, const uint8_t *p)
{
    size_t len = 0;
    unsigned pad = t->bits & 0x0f;
    while (len < t->size && p[len])
        len++;
    if (pad == 2) /* space padded */
        while (len > 0 && p[len - 1] == ' ')
            len--;
    return mf_value_str(a, (const char *)p, len);
}

static uint64_t load_uint(const uint8_t *p, uint32_t size, bool be)
{
    uint64_t x = 0;
    for (uint32_t i = 0; i < size; i++)
        x |= (uint64_t)p[be ? size - 1 - i : i] << (8 * i);
    return x;
}

static mf_value number(const h5_dtype *t, const uint8_t *p)
{
    uint64_t x = load_uint(p, t->size, t->big_endian);
    switch (t->mf) {
    case MF_BOOL: return mf_value_bool(x != 0);
    case MF_F16: return mf_value_f64(mf_f16_to_f32((uint16_t)x));
    case MF_BF16: return mf_value_f64(mf_bf16_to_f32((uint16_t)x));
    case MF_F32: {
        float v;
        uint32_t u = (uint32_t)x;
        memcpy(&v, &u, 4);
        return mf_value_f64(v);
    }
    case MF_F64: {
        double v;
        memcpy(&v, &x, 8);
        return mf_value_f64(v);
    }
    default:
        break;
    }
    if (t->is_signed && t->size < 8 && (x >> (t->size * 8 - 1)) & 1)
        x |= ~0ull << (t->size * 8); /* sign-extend */
    return t->is_signed ? mf_value_int((int64_t)x) : mf_value_uint(x);
}

static int vlen_string(h5_file *f, mf_arena *a, gcol *g, const uint8_t *p, uint64_t pos,
                       mf_value *v)
{
    mf_cursor c;
    mf_cur_init(&c, p, 4 + f->sz_off + 4, f->label, f->st);
    c.origin = f->origin + pos;
    uint32_t len, index;
    uint64_t coll;
    if (mf_cur_u32(&c, &len, "string length") || h5_rd_addr(f, &c, &coll, "heap collection") ||
        mf_cur_u32(&c, &index, "heap object index"))
        return -1;
    if (len == 0 || coll == H5_UNDEF || coll == 0) {
        *v = mf_value_str(a, "", 0);
        return 0;
    }
    const uint8_t *s = NULL;
    uint64_t n = 0;
    if (gcol_get(f, g, coll, index, &s, &n))
        return -1;
    if (len > n)
        return h5_fail_at(f, pos, "variable-length string of %u bytes, its heap object holds %llu",
                          len, (unsigned long long)n);
    *v = mf_value_str(a, (const char *)s, len);
    return 0;
}

static bool is_plain(const h5_dtype *t)
{
    return t->mf != MF_DTYPE_INVALID || t->cls == H5T_STRING || t->vlen_string;
}

static int one_value(h5_file *f, mf_arena *a, gcol *g, const h5_dtype *t, const uint8_t *p,
                     uint64_t pos, mf_value *v)
{
    if (t->mf != MF_DTYPE_INVALID) {
        *v = number(t, p);
        return 0;
    }
    if (t->cls == H5T_STRING) {
        *v = fixed_string(a, t, p);
        return 0;
    }
    return vlen_string(f, a, g, p, pos, v);
}

static mf_vtype elem_vtype(const h5_dtype *t)
{
    if (t->mf == MF_BOOL)
        return MF_V_BOOL;
    if (t->mf == MF_DTYPE_INVALID)
        return MF_V_STR;
    const mf_dtype_info *di = mf_dtype_info_of(t->mf);
    return di->is_float ? MF_V_F64 : t->is_signed ? MF_V_I64 : MF_V_U64;
}

enum { MAX_ATTR_ELEMS = 1u << 20 };

int h5_value_decode(h5_file *f, mf_arena *a, const h5_dtype *t, const h5_space *s,
                    const uint8_t *data, uint64_t n, uint64_t pos, mf_value *v)
{
    memset(v, 0, sizeof(*v));
    v->type = MF_V_NULL;
    if (s->kind == 2)
        return 1;
    uint64_t count = 0, bytes; /* set by h5_space_nelems; 0 keeps gcc -O2 quiet */
    if (h5_space_nelems(f, s, pos, &count))
        return -1;
    if (!is_plain(t)) {
        char text[96];
        snprintf(text, sizeof(text), "<%s, %u bytes per element, %llu elements>", t->why,
                 t->size, (unsigned long long)count);
        *v = mf_value_str(a, text, strlen(text));
        return 0;
    }
    if (mf_mul_ovf(count, t->size, &bytes) || bytes > n)
        return h5_fail_at(f, pos, "attribute data: %llu elements of %u bytes need more than "
                          "the %llu bytes stored", (unsigned long long)count, t->size,
                          (unsigned long long)n);
    if (count > MAX_ATTR_ELEMS) {
        char text[96];
        snprintf(text, sizeof(text), "<array of %llu elements>", (unsigned long long)count);
        *v = mf_value_str(a, text, strlen(text));
        return 0;
    }
    gcol g = {0};
    int rc = 0;
    if (s->kind == 0) {
        rc = one_value(f, a, &g, t, data, pos, v);
    } else {
        mf_value *items = mf_arena_calloc(a, count ? count : 1, sizeof(mf_value));
        if (!items) {
            free(g.obj);
            return mf_oom(f->st, f->label);
        }
        for (uint64_t i = 0; i < count && rc == 0; i++)
            rc = one_value(f, a, &g, t, data + i * t->size, pos + i * t->size, &items[i]);
        v->type = MF_V_ARR;
        v->as.arr.elem = elem_vtype(t);
        v->as.arr.n = (size_t)count;
        v->as.arr.items = items;
    }
    free(g.obj);
    return rc ? -1 : 1;
}
