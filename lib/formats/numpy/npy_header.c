/* npy_header.c - what numpy makes of a .npy header dict
 * (numpy/lib/format.py _read_array_header and descr_to_dtype): the dict
 * must have exactly the keys 'descr', 'fortran_order' and 'shape' (the
 * last of repeated keys wins), shape a tuple of ints (bools are ints),
 * fortran_order a bool; descr a dtype string, a (descr, shape) sub-array
 * or a list of fields (name, descr[, shape]) nested at will.
 *
 * For the scanner the one question is whether np.load(allow_pickle=True)
 * unpickles the data: does the dtype hold an object anywhere? Spellings
 * mfmt does not know are judged by their letters: numpy's names for the
 * object type ('O', 'object', 'object_', ...) all have an 'o'; a dtype
 * text without one cannot be an object, one with it may be
 * (h->maybe_pickle). Arrays of structured dtypes, strings, raw bytes and
 * datetimes are read as tensors: see mf_npy_header. */
#include "formats/numpy/npy.h"
#include "formats/numpy/npy_literal.h"

#include <stdlib.h>

enum { D_PLAIN, D_NOOBJ, D_MAYBE, D_OBJECT };

typedef struct dinfo {
    int cls;
    const char *why;   /* D_NOOBJ: why mfmt does not read it */
    mf_dtype dt;       /* the tensor's element type */
    unsigned esize;    /* its size in bytes */
    bool big_endian, record;
    int nsub;          /* trailing dimensions: sub-array, then characters */
    int64_t sub[MF_MAX_DIMS];
} dinfo;

typedef struct hctx {
    const char *file, *member;
    int64_t off;
    mf_status *st;
} hctx;

static int hfail(hctx *c, mf_code code, const char *fmt, ...) MF_PRINTF(3, 4);
static int hfail(hctx *c, mf_code code, const char *fmt, ...)
{
    char rule[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof(rule), fmt, ap);
    va_end(ap);
    if (c->member)
        return mf_fail(c->st, code, c->file, c->off, "member \"%s\": %s", c->member, rule);
    return mf_fail(c->st, code, c->file, c->off, "%s", rule);
}

/* ------------------------------------------------------- dtype strings */

static const struct { const char *name; mf_dtype dt; unsigned size; } named[] = {
    {"float16", MF_F16, 2}, {"float32", MF_F32, 4}, {"float64", MF_F64, 8},
    {"half", MF_F16, 2}, {"single", MF_F32, 4}, {"double", MF_F64, 8}, {"float", MF_F64, 8},
    {"int8", MF_I8, 1}, {"int16", MF_I16, 2}, {"int32", MF_I32, 4}, {"int64", MF_I64, 8},
    {"uint8", MF_U8, 1}, {"uint16", MF_U16, 2}, {"uint32", MF_U32, 4}, {"uint64", MF_U64, 8},
    {"bool", MF_BOOL, 1}, {"complex64", MF_C64, 8}, {"complex128", MF_C128, 16},
    /* one-letter type codes (numpy's char, on a 64-bit Linux) */
    {"?", MF_BOOL, 1}, {"b", MF_I8, 1}, {"B", MF_U8, 1}, {"h", MF_I16, 2}, {"H", MF_U16, 2},
    {"i", MF_I32, 4}, {"I", MF_U32, 4}, {"l", MF_I64, 8}, {"L", MF_U64, 8}, {"q", MF_I64, 8},
    {"Q", MF_U64, 8}, {"e", MF_F16, 2}, {"f", MF_F32, 4}, {"d", MF_F64, 8}, {"F", MF_C64, 8},
    {"D", MF_C128, 16},
};

static const struct { char kind; unsigned size; mf_dtype dt; } sized_kinds[] = {
    {'b', 1, MF_BOOL}, {'i', 1, MF_I8},  {'i', 2, MF_I16}, {'i', 4, MF_I32},
    {'i', 8, MF_I64},  {'u', 1, MF_U8},  {'u', 2, MF_U16}, {'u', 4, MF_U32},
    {'u', 8, MF_U64},  {'f', 2, MF_F16}, {'f', 4, MF_F32}, {'f', 8, MF_F64},
    {'c', 8, MF_C64},  {'c', 16, MF_C128},
};

static bool has_o(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == 'o' || s[i] == 'O')
            return true;
    return false;
}

static void unknown_text(dinfo *d, const char *s, size_t n)
{
    d->cls = has_o(s, n) ? D_MAYBE : D_NOOBJ;
    d->why = "a dtype mfmt does not read";
}

/* numpy's own spellings of a datetime unit: "[ns]", "[10ms]", "[D]" ... */
static bool datetime_unit(const char *s, size_t n)
{
    if (n == 0)
        return true;
    if (n < 3 || s[0] != '[' || s[n - 1] != ']')
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

static void analyze_str(const char *s, size_t n, dinfo *d)
{
    memset(d, 0, sizeof(*d));
    d->dt = MF_DTYPE_INVALID;
    size_t i = 0;
    char order = '=';
    if (n > 1 && strchr("<>|=", s[0]) && s[0])
        order = s[i++];
    const char *t = s + i;
    size_t tn = n - i;
    /* the object type */
    if ((tn == 1 && t[0] == 'O') || (tn == 2 && t[0] == 'O' && (t[1] == '8' || t[1] == '4')) ||
        (i == 0 && ((n == 6 && memcmp(s, "object", 6) == 0) ||
                    (n == 7 && memcmp(s, "object_", 7) == 0)))) {
        d->cls = D_OBJECT;
        return;
    }
    for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
        if (strlen(named[k].name) == tn && memcmp(named[k].name, t, tn) == 0 &&
            (i == 0 || tn == 1)) {
            d->dt = named[k].dt;
            d->esize = named[k].size;
            d->big_endian = order == '>' && d->esize > 1;
            d->cls = D_PLAIN;
            return;
        }
    if (tn < 1) {
        unknown_text(d, s, n);
        return;
    }
    char kind = t[0];
    unsigned size = 0;
    size_t j = 1;
    for (; j < tn && t[j] >= '0' && t[j] <= '9' && size < 100000000u; j++)
        size = size * 10 + (unsigned)(t[j] - '0');
    bool sized = j > 1;
    if ((kind == 'M' || kind == 'm') && sized && size == 8 && datetime_unit(t + j, tn - j)) {
        d->cls = D_PLAIN;
        d->dt = MF_I64; /* datetime64 / timedelta64: int64 counts of the unit */
        d->esize = 8;
        d->big_endian = order == '>';
        return;
    }
    if (j != tn) {
        unknown_text(d, s, n);
        return;
    }
    if (kind == 'S' || kind == 'a' || kind == 'V' || kind == 'U') {
        d->cls = D_PLAIN;
        if (kind == 'U') { /* UCS-4 code points */
            d->dt = MF_U32;
            d->esize = 4;
            d->big_endian = order == '>';
        } else {
            d->dt = MF_U8;
            d->esize = 1;
        }
        d->sub[d->nsub++] = size; /* characters (or bytes) per element */
        return;
    }
    for (size_t k = 0; sized && k < sizeof(sized_kinds) / sizeof(sized_kinds[0]); k++)
        if (sized_kinds[k].kind == kind && sized_kinds[k].size == size) {
            d->cls = D_PLAIN;
            d->dt = sized_kinds[k].dt;
            d->esize = size;
            d->big_endian = order == '>' && size > 1;
            return;
        }
    unknown_text(d, s, n);
    if ((kind == 'f' && (size == 12 || size == 16)) || (kind == 'c' && (size == 24 || size == 32)))
        d->why = "long double";
}

/* ------------------------------------------------------- descr_to_dtype */

static void analyze(const lit *v, dinfo *d, int depth);

static uint64_t elems_of(const dinfo *d)
{
    uint64_t n = 1;
    for (int i = 0; i < d->nsub; i++)
        if (mf_mul_ovf(n, (uint64_t)d->sub[i], &n))
            return UINT64_MAX;
    return n;
}

/* The size in bytes of one element of d, or UINT64_MAX. */
static uint64_t item_bytes(const dinfo *d)
{
    uint64_t n = elems_of(d), b;
    return n == UINT64_MAX || mf_mul_ovf(n, d->esize, &b) ? UINT64_MAX : b;
}

/* Not understood: judged by its letters. */
static void fallback(const lit *v, dinfo *d)
{
    memset(d, 0, sizeof(*d));
    d->cls = lit_any_str_has(v, "oO", 0) ? D_MAYBE : D_NOOBJ;
    d->why = "a dtype description mfmt does not read";
}

/* np.dtype((dt, shape)): shape an int or a tuple of ints. */
static void with_shape(const lit *shape, dinfo *d)
{
    if (d->cls != D_PLAIN)
        return;
    int64_t dims[MF_MAX_DIMS];
    int nd = 0;
    const lit *const *items = shape->kind == LIT_INT ? &shape : (const lit *const *)shape->v;
    size_t cnt = shape->kind == LIT_INT ? 1 : shape->kind == LIT_TUPLE ? shape->nv : 0;
    if (shape->kind != LIT_INT && shape->kind != LIT_TUPLE) {
        fallback(shape, d);
        return;
    }
    for (size_t i = 0; i < cnt; i++) {
        const lit *x = items[i];
        if (x->kind != LIT_INT || x->neg || x->big || x->u > INT64_MAX ||
            nd + d->nsub >= MF_MAX_DIMS) {
            d->cls = D_NOOBJ;
            d->why = "a sub-array shape mfmt does not read";
            return;
        }
        dims[nd++] = (int64_t)x->u;
    }
    memmove(d->sub + nd, d->sub, sizeof(int64_t) * (size_t)d->nsub);
    memcpy(d->sub, dims, sizeof(int64_t) * (size_t)nd);
    d->nsub += nd;
}

static int worst(int a, int b)
{
    /* object > maybe > not read > plain */
    return a > b ? a : b;
}

static void analyze_fields(const lit *v, dinfo *d, int depth)
{
    memset(d, 0, sizeof(*d));
    d->cls = D_PLAIN;
    d->dt = MF_U8;
    d->esize = 1;
    d->record = true;
    uint64_t total = 0;
    int cls = D_PLAIN;
    const char *why = NULL;
    for (size_t i = 0; i < v->nv; i++) {
        const lit *f = v->v[i];
        dinfo fd;
        bool shaped = (f->kind == LIT_TUPLE || f->kind == LIT_LIST) && (f->nv == 2 || f->nv == 3);
        const lit *name = shaped ? f->v[0] : NULL;
        bool named_ok = name && (name->kind == LIT_STR ||
                                 (name->kind == LIT_TUPLE && name->nv == 2 &&
                                  name->v[1]->kind == LIT_STR));
        if (!shaped || !named_ok) {
            fallback(f, &fd);
        } else {
            analyze(f->v[1], &fd, depth + 1);
            if (f->nv == 3)
                with_shape(f->v[2], &fd);
        }
        if (fd.cls > cls)
            why = fd.why;
        cls = worst(cls, fd.cls);
        if (fd.cls == D_PLAIN) {
            uint64_t b = item_bytes(&fd);
            if (b == UINT64_MAX || mf_add_ovf(total, b, &total)) {
                cls = worst(cls, D_NOOBJ);
                why = "a record size that overflows";
            }
        }
    }
    d->cls = cls;
    d->why = why;
    if (cls == D_PLAIN) {
        d->nsub = 1;
        d->sub[0] = (int64_t)(total > INT64_MAX ? INT64_MAX : total);
    }
}

static void analyze(const lit *v, dinfo *d, int depth)
{
    if (depth > 32) {
        fallback(v, d);
        return;
    }
    if (v->kind == LIT_STR) {
        analyze_str(v->s, v->n, d);
        return;
    }
    if (v->kind == LIT_TUPLE && v->nv >= 2) { /* (descr, shape): extra items are ignored */
        analyze(v->v[0], d, depth + 1);
        if (d->cls == D_PLAIN)
            with_shape(v->v[1], d);
        else if (d->cls == D_NOOBJ && lit_any_str_has(v->v[1], "oO", 0))
            d->cls = D_MAYBE;
        return;
    }
    if (v->kind == LIT_LIST) {
        analyze_fields(v, d, depth);
        return;
    }
    fallback(v, d);
}

/* ------------------------------------------------------------- the dict */

/* A short text of v for messages and npy.descr: strings quoted, Python-like. */
static void repr(const lit *v, char *b, size_t cap, size_t *k, int depth)
{
    if (*k + 8 >= cap || depth > 16) {
        return;
    }
    size_t left = cap - *k;
    switch (v->kind) {
    case LIT_STR:
        *k += (size_t)snprintf(b + *k, left, "'%.*s'", (int)(v->n < left ? v->n : left), v->s);
        break;
    case LIT_INT: case LIT_FLOAT: case LIT_COMPLEX:
        *k += (size_t)snprintf(b + *k, left, "%s%.*s", v->neg ? "-" : "", (int)v->n, v->s);
        break;
    case LIT_TUPLE: case LIT_LIST: {
        b[(*k)++] = v->kind == LIT_TUPLE ? '(' : '[';
        for (size_t i = 0; i < v->nv && *k + 8 < cap; i++) {
            if (i) {
                b[(*k)++] = ',';
                b[(*k)++] = ' ';
            }
            repr(v->v[i], b, cap, k, depth + 1);
        }
        if (v->kind == LIT_TUPLE && v->nv == 1 && *k + 2 < cap)
            b[(*k)++] = ',';
        if (*k + 2 < cap)
            b[(*k)++] = v->kind == LIT_TUPLE ? ')' : ']';
        break;
    }
    default:
        *k += (size_t)snprintf(b + *k, left, "%s", v->kind == LIT_BOOL ? (v->u ? "True" : "False")
                                                 : v->kind == LIT_NONE ? "None" : "...");
    }
    if (*k >= cap)
        *k = cap - 1;
    b[*k] = 0;
}

static void set_descr_text(mf_npy_header *h, const lit *descr)
{
    size_t k = 0;
    h->descr[0] = 0;
    if (descr->kind == LIT_STR) {
        size_t n = descr->n < sizeof(h->descr) - 1 ? descr->n : sizeof(h->descr) - 1;
        memcpy(h->descr, descr->s, n);
        h->descr[n] = 0;
        return;
    }
    repr(descr, h->descr, sizeof(h->descr), &k, 0);
}

static bool valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                     : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (!len || i + len > n || (len == 2 && c < 0xc2))
            return false;
        for (size_t j = 1; j < len; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

/* The tensor numpy's array is: shape, then the dtype's trailing dims. */
static int plain_tensor(hctx *c, mf_npy_header *h, const dinfo *d, const lit *shape)
{
    h->ndim = 0;
    for (size_t i = 0; i < shape->nv; i++) {
        const lit *x = shape->v[i];
        if (x->neg && !(x->kind == LIT_INT && x->u == 0))
            return hfail(c, MF_ERR_FORMAT, "npy header: shape has a negative dimension");
        if (x->big || x->u > INT64_MAX)
            return hfail(c, MF_ERR_FORMAT, "npy header: shape dimension overflows 64 bits");
        if (h->ndim >= MF_MAX_DIMS)
            return hfail(c, MF_ERR_UNSUPPORTED, "npy header: shape has more than %d dimensions",
                         MF_MAX_DIMS);
        h->shape[h->ndim++] = (int64_t)x->u;
    }
    if (h->ndim + d->nsub > MF_MAX_DIMS)
        return hfail(c, MF_ERR_UNSUPPORTED, "npy header: shape and dtype have more than %d dimensions",
                     MF_MAX_DIMS);
    if (d->nsub && h->fortran_order && h->ndim >= 2)
        return hfail(c, MF_ERR_UNSUPPORTED,
                     "npy header: fortran_order with a dtype that has dimensions of its own");
    memcpy(h->shape + h->ndim, d->sub, sizeof(int64_t) * (size_t)d->nsub);
    h->ndim += d->nsub;
    h->extra_dims = d->nsub;
    h->dtype = d->dt;
    h->big_endian = d->big_endian;
    h->record = d->record;
    return 0;
}

int mf_npy_parse_dict(const uint8_t *s, size_t n, uint8_t major, const char *file,
                      uint64_t origin, const char *member, mf_npy_header *h, mf_status *st)
{
    hctx c = {file, member, (int64_t)origin, st};
    if (major >= 3 && !valid_utf8(s, n))
        return hfail(&c, MF_ERR_FORMAT, "npy header: not UTF-8 (version 3.0 headers are)");
    mf_arena *a = mf_arena_new();
    if (!a)
        return mf_oom(st, file);
    lit *d = NULL;
    lit_error e;
    int rc = 0;
    if (lit_parse(s, n, major <= 2, a, &d, &e)) {
        if (e.kind == LIT_NOMEM) {
            rc = mf_oom(st, file);
            goto out;
        }
        c.off = (int64_t)(origin + e.pos);
        h->maybe_pickle = e.kind == LIT_UNSURE;
        rc = hfail(&c, MF_ERR_FORMAT, "npy header: %s%s", e.kind == LIT_UNSURE
                   ? "a Python literal mfmt cannot read exactly as numpy does: " : "not a Python literal: ", e.why);
        goto out;
    }
    if (d->kind != LIT_DICT) {
        rc = hfail(&c, MF_ERR_FORMAT, "npy header: must be a Python dict literal starting with '{'");
        goto out;
    }
    const lit *descr = NULL, *fortran = NULL, *shape = NULL;
    for (size_t i = 0; i < d->nv; i++) {
        const lit *k = d->v[2 * i], *v = d->v[2 * i + 1];
        if (lit_is_str(k, "descr"))
            descr = v;
        else if (lit_is_str(k, "fortran_order"))
            fortran = v;
        else if (lit_is_str(k, "shape"))
            shape = v;
        else {
            rc = hfail(&c, MF_ERR_FORMAT,
                       "npy header: a key that is not one of 'descr', 'fortran_order', 'shape'");
            goto out;
        }
    }
    static const char *const names[] = {"descr", "fortran_order", "shape"};
    const lit *vals[] = {descr, fortran, shape};
    for (int i = 0; i < 3; i++)
        if (!vals[i]) {
            rc = hfail(&c, MF_ERR_FORMAT, "npy header: key '%s' is missing", names[i]);
            goto out;
        }
    if (shape->kind != LIT_TUPLE) {
        rc = hfail(&c, MF_ERR_FORMAT, "npy header: 'shape' must be a tuple of integers");
        goto out;
    }
    bool shape_big = false;
    for (size_t i = 0; i < shape->nv; i++) {
        if (shape->v[i]->kind != LIT_INT && shape->v[i]->kind != LIT_BOOL) {
            rc = hfail(&c, MF_ERR_FORMAT, "npy header: 'shape' must be a tuple of integers");
            goto out;
        }
        shape_big |= shape->v[i]->big || shape->v[i]->u > (uint64_t)INT64_MAX + shape->v[i]->neg;
    }
    if (fortran->kind != LIT_BOOL) {
        rc = hfail(&c, MF_ERR_FORMAT, "npy header: 'fortran_order' must be True or False");
        goto out;
    }
    h->fortran_order = fortran->u != 0;
    set_descr_text(h, descr);
    dinfo di;
    analyze(descr, &di, 0);
    if (di.cls == D_OBJECT) {
        /* np.load unpickles the data, whatever the shape says (a shape
         * beyond int64 may stop it first: mfmt does not bet on that) */
        h->is_object = true;
        h->dtype = MF_DTYPE_INVALID;
        goto out;
    }
    if (di.cls == D_MAYBE) {
        h->maybe_pickle = true;
        rc = hfail(&c, MF_ERR_UNSUPPORTED,
                   "npy header: descr %s is a dtype mfmt does not know, which may hold Python "
                   "objects (then np.load unpickles the data)", h->descr);
        goto out;
    }
    if (di.cls == D_NOOBJ) {
        rc = hfail(&c, MF_ERR_UNSUPPORTED, "npy header: descr %s (%s) is not a tensor dtype mfmt reads",
                   h->descr, di.why ? di.why : "unknown");
        goto out;
    }
    if (shape_big) {
        rc = hfail(&c, MF_ERR_FORMAT, "npy header: shape dimension overflows 64 bits");
        goto out;
    }
    rc = plain_tensor(&c, h, &di, shape);
out:
    mf_arena_free(a);
    return rc;
}
