/* npy.c - NumPy .npy: the header (a strict reader of the Python dict literal
 * numpy writes) and the reader of a single-array file.
 * Rules from numpy/lib/format.py: magic "\x93NUMPY", versions (1,0) (2,0)
 * (3,0) only; the dict has exactly the keys 'descr', 'fortran_order' and
 * 'shape'; shape is a tuple of non-negative ints; descr a dtype string. */
#include "formats/formats.h"
#include "formats/numpy/npy.h"

#include <stdlib.h>

/* ----------------------------------------------------------- dict lexer */

typedef struct lexer {
    const uint8_t *s;
    uint64_t n, pos;
    const char *file;
    uint64_t origin; /* file offset of s[0] */
    const char *member; /* the .npz member, or NULL */
    mf_status *st;
} lexer;

/* "FILE: byte N: [member "M.npy": ]RULE" */
static int npy_failv(mf_status *st, mf_code code, const char *file, int64_t off,
                     const char *member, const char *fmt, va_list ap)
{
    char rule[768];
    vsnprintf(rule, sizeof(rule), fmt, ap);
    if (member)
        return mf_fail(st, code, file, off, "member \"%s\": %s", member, rule);
    return mf_fail(st, code, file, off, "%s", rule);
}

static int npy_fail(mf_status *st, mf_code code, const char *file, int64_t off,
                    const char *member, const char *fmt, ...) MF_PRINTF(6, 7);
static int npy_fail(mf_status *st, mf_code code, const char *file, int64_t off,
                    const char *member, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    npy_failv(st, code, file, off, member, fmt, ap);
    va_end(ap);
    return -1;
}

static int lex_fail(lexer *L, mf_code code, const char *fmt, ...) MF_PRINTF(3, 4);
static int lex_fail(lexer *L, mf_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    npy_failv(L->st, code, L->file, (int64_t)(L->origin + L->pos), L->member, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_space(lexer *L)
{
    while (L->pos < L->n && (L->s[L->pos] == ' ' || L->s[L->pos] == '\t' ||
                             L->s[L->pos] == '\n' || L->s[L->pos] == '\r'))
        L->pos++;
}

/* Skips blanks; returns the next character without taking it (-1 at end). */
static int peek(lexer *L)
{
    skip_space(L);
    return L->pos < L->n ? L->s[L->pos] : -1;
}

static int expect(lexer *L, char c, const char *where)
{
    int got = peek(L);
    if (got != c) {
        if (got < 0)
            return lex_fail(L, MF_ERR_FORMAT, "npy header: ended %s (expected '%c')", where, c);
        return lex_fail(L, MF_ERR_FORMAT, "npy header: expected '%c' %s, found '%c'", c, where,
                        got >= 0x20 && got < 0x7f ? got : '?');
    }
    L->pos++;
    return 0;
}

/* A quoted Python string without escapes (numpy never writes any). */
static int read_string(lexer *L, const uint8_t **p, size_t *len, const char *what)
{
    int q = peek(L);
    if (q != '\'' && q != '"')
        return lex_fail(L, MF_ERR_FORMAT, "npy header: %s must be a quoted string", what);
    uint64_t start = ++L->pos;
    while (L->pos < L->n && L->s[L->pos] != q) {
        if (L->s[L->pos] == '\\')
            return lex_fail(L, MF_ERR_FORMAT, "npy header: escape sequence in %s", what);
        if (L->s[L->pos] == '\n')
            break;
        L->pos++;
    }
    if (L->pos >= L->n || L->s[L->pos] != q)
        return lex_fail(L, MF_ERR_FORMAT, "npy header: unterminated string in %s", what);
    *p = L->s + start;
    *len = (size_t)(L->pos - start);
    L->pos++;
    return 0;
}

static bool is_word_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

static bool take_word(lexer *L, const char *w)
{
    size_t k = strlen(w);
    if (L->n - L->pos < k || memcmp(L->s + L->pos, w, k) != 0)
        return false;
    if (L->pos + k < L->n && is_word_char(L->s[L->pos + k]))
        return false;
    L->pos += k;
    return true;
}

static int read_bool(lexer *L, bool *v, const char *what)
{
    peek(L);
    if (take_word(L, "True"))
        *v = true;
    else if (take_word(L, "False"))
        *v = false;
    else
        return lex_fail(L, MF_ERR_FORMAT, "npy header: %s must be True or False", what);
    return 0;
}

/* A non-negative decimal integer; Python 2 longs ("3L") as numpy's own
 * header filter accepts them. */
static int read_dim(lexer *L, int64_t *v)
{
    peek(L);
    uint64_t start = L->pos, x = 0;
    if (L->pos < L->n && L->s[L->pos] == '-')
        return lex_fail(L, MF_ERR_FORMAT, "npy header: shape has a negative dimension");
    while (L->pos < L->n && L->s[L->pos] >= '0' && L->s[L->pos] <= '9') {
        if (mf_mul_ovf(x, 10, &x) || mf_add_ovf(x, (uint64_t)(L->s[L->pos] - '0'), &x) ||
            x > INT64_MAX)
            return lex_fail(L, MF_ERR_FORMAT, "npy header: shape dimension overflows 64 bits");
        L->pos++;
    }
    if (L->pos == start)
        return lex_fail(L, MF_ERR_FORMAT, "npy header: shape must be a tuple of integers");
    if (L->pos - start > 1 && L->s[start] == '0')
        return lex_fail(L, MF_ERR_FORMAT, "npy header: integer with a leading zero in shape");
    if (L->pos < L->n && (L->s[L->pos] == 'L' || L->s[L->pos] == 'l'))
        L->pos++;
    if (L->pos < L->n && (is_word_char(L->s[L->pos]) || L->s[L->pos] == '.'))
        return lex_fail(L, MF_ERR_FORMAT, "npy header: shape must be a tuple of integers");
    *v = (int64_t)x;
    return 0;
}

/* "(3, 4)", "(3,)" or "()": a Python tuple; "(3)" is an int, not a tuple. */
static int read_shape(lexer *L, mf_npy_header *h)
{
    if (peek(L) != '(')
        return lex_fail(L, MF_ERR_FORMAT, "npy header: 'shape' must be a tuple");
    L->pos++;
    h->ndim = 0;
    if (peek(L) == ')') {
        L->pos++;
        return 0;
    }
    bool comma = false;
    for (;;) {
        if (h->ndim >= MF_MAX_DIMS)
            return lex_fail(L, MF_ERR_UNSUPPORTED,
                            "npy header: shape has more than %d dimensions", MF_MAX_DIMS);
        if (read_dim(L, &h->shape[h->ndim]))
            return -1;
        h->ndim++;
        int c = peek(L);
        comma = c == ',';
        if (comma) {
            L->pos++;
            c = peek(L);
        }
        if (c == ')') {
            L->pos++;
            break;
        }
        if (!comma)
            return expect(L, ',', "between shape dimensions");
    }
    if (h->ndim == 1 && !comma)
        return lex_fail(L, MF_ERR_FORMAT,
                        "npy header: 'shape' is an integer in parentheses, not a tuple (write (n,))");
    return 0;
}

/* ---------------------------------------------------------------- descr */

typedef struct kind_size {
    char kind;
    unsigned size;
    mf_dtype dt;
} kind_size;

static const kind_size plain_kinds[] = {
    {'b', 1, MF_BOOL}, {'i', 1, MF_I8},  {'i', 2, MF_I16}, {'i', 4, MF_I32},
    {'i', 8, MF_I64},  {'u', 1, MF_U8},  {'u', 2, MF_U16}, {'u', 4, MF_U32},
    {'u', 8, MF_U64},  {'f', 2, MF_F16}, {'f', 4, MF_F32}, {'f', 8, MF_F64},
    {'c', 8, MF_C64},  {'c', 16, MF_C128},
};

/* Why a dtype numpy has is not a tensor mfmt reads, or NULL. */
static const char *unsupported_kind(char kind, unsigned size, bool sized)
{
    switch (kind) {
    case 'f': return sized && (size == 12 || size == 16) ? "long double" : NULL;
    case 'c': return sized && (size == 24 || size == 32) ? "complex long double" : NULL;
    case 'S': case 'a': return "byte strings";
    case 'U': return "unicode strings";
    case 'V': return "raw void records (ml_dtypes' bfloat16 and float8 are saved so)";
    case 'M': return "datetime64";
    case 'm': return "timedelta64";
    }
    return NULL;
}

/* 0: plain dtype; 1: object; -1 with st filled. `at` is the string's place. */
static int parse_descr(lexer *L, const uint8_t *s, size_t n, mf_npy_header *h)
{
    size_t k = n < sizeof(h->descr) - 1 ? n : sizeof(h->descr) - 1;
    memcpy(h->descr, s, k);
    h->descr[k] = 0;
    size_t i = 0;
    char order = '|';
    if (i < n && strchr("<>|=", s[i]))
        order = (char)s[i++];
    if (i >= n)
        return lex_fail(L, MF_ERR_FORMAT, "npy header: descr '%s' is not a dtype", h->descr);
    char kind = (char)s[i++];
    unsigned size = 0;
    bool sized = i < n;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || size > 100000) {
            if (kind == 'M' || kind == 'm') /* datetime units: "<M8[ns]" */
                break;
            return lex_fail(L, MF_ERR_FORMAT, "npy header: descr '%s' is not a dtype", h->descr);
        }
        size = size * 10 + (unsigned)(s[i] - '0');
    }
    if (kind == 'O' && (!sized || size == 4 || size == 8)) {
        h->is_object = true;
        return 1;
    }
    const char *why = unsupported_kind(kind, size, sized);
    if (why)
        return lex_fail(L, MF_ERR_UNSUPPORTED, "npy header: descr '%s' (%s) is not a tensor dtype mfmt reads",
                        h->descr, why);
    if (kind == '?' && !sized)
        kind = 'b', size = 1, sized = true;
    for (size_t j = 0; j < sizeof(plain_kinds) / sizeof(plain_kinds[0]); j++) {
        if (plain_kinds[j].kind == kind && sized && plain_kinds[j].size == size) {
            h->dtype = plain_kinds[j].dt;
            /* '=' is the writer's native order; numpy itself always writes
             * '<' or '>', and every host mfmt runs on is little-endian */
            h->big_endian = order == '>' && size > 1;
            return 0;
        }
    }
    return lex_fail(L, MF_ERR_FORMAT, "npy header: descr '%s' is not a dtype", h->descr);
}

/* --------------------------------------------------------------- header */

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static int read_entry(lexer *L, mf_npy_header *h, unsigned *seen)
{
    uint64_t key_at = L->pos;
    const uint8_t *k;
    size_t kl;
    if (read_string(L, &k, &kl, "a key"))
        return -1;
    if (expect(L, ':', "after a key"))
        return -1;
    unsigned which = kl == 5 && memcmp(k, "descr", 5) == 0           ? KEY_DESCR
                     : kl == 13 && memcmp(k, "fortran_order", 13) == 0 ? KEY_FORTRAN
                     : kl == 5 && memcmp(k, "shape", 5) == 0           ? KEY_SHAPE
                                                                       : 0;
    if (!which) {
        L->pos = key_at;
        return lex_fail(L, MF_ERR_FORMAT,
                        "npy header: key '%.*s' is not one of 'descr', 'fortran_order', 'shape'",
                        (int)(kl > 40 ? 40 : kl), (const char *)k);
    }
    if (*seen & which) {
        L->pos = key_at;
        return lex_fail(L, MF_ERR_FORMAT, "npy header: key '%.*s' appears twice", (int)kl,
                        (const char *)k);
    }
    *seen |= which;
    if (which == KEY_FORTRAN)
        return read_bool(L, &h->fortran_order, "'fortran_order'");
    if (which == KEY_SHAPE)
        return read_shape(L, h);
    if (peek(L) == '[')
        return lex_fail(L, MF_ERR_UNSUPPORTED,
                        "npy header: descr is a list of fields (a structured array), not a tensor");
    uint64_t at = L->pos;
    const uint8_t *d;
    size_t dl;
    if (read_string(L, &d, &dl, "'descr'"))
        return -1;
    uint64_t after = L->pos;
    L->pos = at;
    int r = parse_descr(L, d, dl, h);
    L->pos = after;
    return r < 0 ? -1 : 0;
}

static int parse_dict(lexer *L, mf_npy_header *h)
{
    if (peek(L) != '{')
        return lex_fail(L, MF_ERR_FORMAT, "npy header: must be a Python dict literal starting with '{'");
    L->pos++;
    unsigned seen = 0;
    for (;;) {
        if (peek(L) == '}') {
            L->pos++;
            break;
        }
        if (read_entry(L, h, &seen))
            return -1;
        int c = peek(L);
        if (c == ',') {
            L->pos++;
            continue;
        }
        if (expect(L, '}', "after a value"))
            return -1;
        break;
    }
    if (peek(L) >= 0)
        return lex_fail(L, MF_ERR_FORMAT, "npy header: text after the closing '}'");
    static const struct { unsigned bit; const char *name; } keys[] = {
        {KEY_DESCR, "descr"}, {KEY_FORTRAN, "fortran_order"}, {KEY_SHAPE, "shape"}};
    for (size_t i = 0; i < 3; i++)
        if (!(seen & keys[i].bit))
            return lex_fail(L, MF_ERR_FORMAT, "npy header: key '%s' is missing", keys[i].name);
    return 0;
}

static int read_preamble(const uint8_t *b, uint64_t size, const char *file, uint64_t origin,
                         const char *member, uint8_t *major, uint8_t *minor, uint64_t *start, uint64_t *hlen,
                         mf_status *st)
{
    if (size < 8 || memcmp(b, MF_NPY_MAGIC, 6) != 0) {
        if (size >= 6 && memcmp(b, MF_NPY_MAGIC, 6) != 0)
            return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)origin, member,
                           "npy: magic is not \\x93NUMPY");
        return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)origin, member,
                       "npy: %llu bytes: too short for the magic and version",
                       (unsigned long long)size);
    }
    *major = b[6];
    *minor = b[7];
    if ((*major < 1 || *major > 3) || *minor != 0)
        return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)origin + 6, member,
                       "npy: format version %u.%u is not one numpy defines (1.0, 2.0, 3.0)",
                       *major, *minor);
    *start = *major == 1 ? 10 : 12;
    if (size < *start)
        return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)origin + 8, member,
                       "npy: unexpected end of data reading the header length");
    *hlen = *major == 1 ? mf_rd16le(b + 8) : mf_rd32le(b + 8);
    if (*hlen > MF_NPY_MAX_HEADER)
        return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)origin + 8, member,
                       "npy: header length %llu exceeds mfmt's limit of %u bytes",
                       (unsigned long long)*hlen, MF_NPY_MAX_HEADER);
    return 0;
}

int mf_npy_header_need(const uint8_t *b, uint64_t size, const char *file, uint64_t origin,
                       const char *member, uint64_t *need, mf_status *st)
{
    uint8_t major, minor;
    uint64_t start, hlen;
    if (read_preamble(b, size, file, origin, member, &major, &minor, &start, &hlen, st))
        return -1;
    *need = start + hlen;
    return 0;
}

int mf_npy_parse_member_header(const uint8_t *b, uint64_t size, const char *file,
                               uint64_t origin, const char *member, mf_npy_header *h,
                               mf_status *st)
{
    memset(h, 0, sizeof(*h));
    h->dtype = MF_DTYPE_INVALID;
    uint64_t start, hlen;
    if (read_preamble(b, size, file, origin, member, &h->major, &h->minor, &start, &hlen, st))
        return -1;
    if (hlen > size - start)
        return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)(origin + 8), member,
                       "npy: header length %llu runs past the end of the data (%llu bytes after it)",
                       (unsigned long long)hlen, (unsigned long long)(size - start));
    lexer L = {.s = b + start, .n = hlen, .file = file, .origin = origin + start,
               .member = member, .st = st};
    if (parse_dict(&L, h))
        return -1;
    h->data_offset = start + hlen;
    if (h->is_object)
        return 0;
    uint64_t n = 1;
    for (int i = 0; i < h->ndim; i++)
        if (mf_mul_ovf(n, (uint64_t)h->shape[i], &n))
            return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)(origin + start), member,
                           "npy header: shape's element count overflows 64 bits");
    if (mf_dtype_nbytes(h->dtype, n, &h->nbytes))
        return npy_fail(st, MF_ERR_FORMAT, file, (int64_t)(origin + start), member,
                       "npy header: byte size of %llu '%s' elements overflows 64 bits",
                       (unsigned long long)n, h->descr);
    return 0;
}

int mf_npy_parse_header(const uint8_t *b, uint64_t size, const char *file, uint64_t origin,
                        mf_npy_header *h, mf_status *st)
{
    return mf_npy_parse_member_header(b, size, file, origin, NULL, h, st);
}

int mf_npy_fill_tensor(const mf_npy_header *h, mf_tensor *t, mf_arena *a, mf_status *st)
{
    t->dtype = h->dtype;
    t->ndim = h->ndim;
    memcpy(t->shape, h->shape, sizeof(h->shape[0]) * (size_t)h->ndim);
    t->big_endian = h->big_endian;
    t->nbytes = h->nbytes;
    /* Fortran order: the first index varies fastest. With no elements
     * nothing is read, and the products could overflow: no strides then. */
    if (h->fortran_order && h->ndim >= 2 && h->nbytes > 0) {
        int64_t *s = mf_arena_calloc(a, (size_t)h->ndim, sizeof(int64_t));
        if (!s)
            return mf_oom(st, NULL);
        s[0] = 1;
        for (int i = 1; i < h->ndim; i++)
            s[i] = s[i - 1] * h->shape[i - 1]; /* <= element count: no overflow */
        t->strides = s;
    }
    return 0;
}

int mf_npy_fail_object(mf_status *st, const char *file, int64_t off, const char *member)
{
    return mf_fail(st, MF_ERR_UNSUPPORTED, file, off,
                   "%s%s%sdtype object ('|O'): the array data is a pickle, which np.load runs "
                   "only with allow_pickle=True; mfmt never unpickles: `mfmt scan` lists what "
                   "it would import",
                   member ? "member \"" : "", member ? member : "", member ? "\": " : "");
}

/* ---------------------------------------------------------- .npy reader */

static int add_header_meta(mf_model *m, const mf_npy_header *h, mf_status *st)
{
    mf_kv *kv = mf_model_add_meta(m, "npy.descr", st);
    if (!kv)
        return -1;
    kv->v = mf_value_str(m->arena, h->descr, strlen(h->descr));
    kv->offset = 8;
    if (!(kv = mf_model_add_meta(m, "npy.fortran_order", st)))
        return -1;
    kv->v = mf_value_bool(h->fortran_order);
    kv->offset = 8;
    return 0;
}

static int open_npy(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    const mf_file *f = &m->files[fi];
    mf_npy_header h;
    if (mf_npy_parse_header(f->base, f->size, path, 0, &h, st))
        return -1;
    snprintf(m->version, sizeof(m->version), "%u.%u", h.major, h.minor);
    m->header_bytes = h.data_offset;
    if (h.is_object)
        return mf_npy_fail_object(st, path, (int64_t)h.data_offset, NULL);
    uint64_t avail = f->size - h.data_offset;
    if (h.nbytes > avail)
        return mf_fail(st, MF_ERR_FORMAT, path, (int64_t)h.data_offset,
                       "npy: the array needs %llu bytes ('%s', %d dimensions) but %llu follow the header",
                       (unsigned long long)h.nbytes, h.descr, h.ndim, (unsigned long long)avail);
    if (avail > h.nbytes)
        mf_model_note(m, "byte %llu: %llu bytes after the array data (np.load ignores them)",
                      (unsigned long long)(h.data_offset + h.nbytes),
                      (unsigned long long)(avail - h.nbytes));
    if (add_header_meta(m, &h, st))
        return -1;
    mf_tensor *t = mf_model_add_tensor(m, st);
    if (!t)
        return -1;
    t->name = ""; /* DESIGN.md: a single .npy is named "" */
    t->file = fi;
    t->offset = h.data_offset;
    if (mf_npy_fill_tensor(&h, t, m->arena, st))
        return -1;
    t->data = f->base + h.data_offset;
    return 0;
}

/* ------------------------------------------------------------- detection */

static int probe_npy(mf_probe *p)
{
    if (p->size >= 8 && memcmp(p->b, "\x93NUMPY", 6) == 0)
        return mf_probe_found(p, MF_FMT_NUMPY_NPY, "NumPy .npy format %u.%u", p->b[6], p->b[7]);
    return MF_PROBE_NO;
}

static const char *const npy_extensions[] = {".npy", NULL};

const mf_reader mf_reader_npy = {
    .format = MF_FMT_NUMPY_NPY,
    .name = "numpy-npy",
    .extensions = npy_extensions,
    .probe = probe_npy,
    .open = open_npy,
};
