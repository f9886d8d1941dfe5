/* npy.c - NumPy .npy: the header's preamble and the reader of a
 * single-array file. Rules from numpy/lib/format.py: magic "\x93NUMPY",
 * versions (1,0) (2,0) (3,0) only, then the header length and the dict
 * (read as numpy reads it by npy_header.c and npy_literal.c). */
#include "formats/formats.h"
#include "formats/numpy/npy.h"

#include <stdlib.h>

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
    if (*hlen > MF_NPY_MAX_HEADER && (member || size < *start + *hlen))
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
    h->data_offset = start + hlen;
    if (hlen > MF_NPY_MAX_HEADER) {
        /* np.load(allow_pickle=True) reads a header of any size */
        h->maybe_pickle = true;
        return npy_fail(st, MF_ERR_UNSUPPORTED, file, (int64_t)origin + 8, member,
                        "npy: header length %llu exceeds mfmt's limit of %u bytes",
                        (unsigned long long)hlen, MF_NPY_MAX_HEADER);
    }
    if (mf_npy_parse_dict(b + start, (size_t)hlen, h->major, file, origin + start, member, h, st))
        return -1;
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
                   "%s%s%sa dtype that holds Python objects ('|O', or a field of it): the array "
                   "data is a pickle, which np.load runs only with allow_pickle=True; mfmt "
                   "never unpickles: `mfmt scan` lists what it would import",
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
    if (p->size >= 8 && memcmp(p->b, MF_NPY_MAGIC, 6) == 0)
        return mf_probe_found(p, MF_FMT_NUMPY_NPY, "NumPy .npy format %u.%u", p->b[6], p->b[7]);
    return MF_PROBE_NO;
}

/* The scan hook (numpy/lib/format.py): np.load takes any bytes starting
 * with the 6-byte magic for a .npy. An array whose dtype holds an object
 * anywhere (a structured dtype's field, a sub-array, nested fields) is
 * stored as a pickle of it, which np.load(allow_pickle=True) runs. A
 * header mfmt cannot read exactly as numpy does, or a dtype it does not
 * know that may hold objects, counts as such an array (h.maybe_pickle). A
 * header numpy certainly refuses runs nothing; its data is still scanned
 * for pickles, quietly, in case another reader takes it as one. */
static int npy_pickle_payload(const uint8_t *b, uint64_t n, const char *file, mf_payload *out)
{
    if (n < 6 || memcmp(b, MF_NPY_MAGIC, 6) != 0)
        return 0;
    mf_npy_header h;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_npy_parse_header(b, n, file, 0, &h, &st);
    if (rc && st.code == MF_ERR_NOMEM) {
        mf_status_clear(&st);
        return -1;
    }
    bool has_data = h.data_offset > 0 && h.data_offset <= n;
    if (rc && h.maybe_pickle) {
        out->severity = MF_CODE_UNKNOWN;
        snprintf(out->message, sizeof(out->message),
                 "np.load(allow_pickle=True) may unpickle this array's data: %.900s", st.msg);
        out->run = has_data ? MF_PAYLOAD_PICKLE : MF_PAYLOAD_NONE;
    } else if (rc) {
        out->severity = MF_CODE_NOTE;
        snprintf(out->message, sizeof(out->message),
                 "a .npy header np.load refuses (%.900s): holds no pickle it would run", st.msg);
        out->run = has_data && h.data_offset < n ? MF_PAYLOAD_POLYGLOT : MF_PAYLOAD_NONE;
    } else if (h.is_object && h.data_offset <= n) {
        out->severity = MF_CODE_UNKNOWN;
        snprintf(out->message, sizeof(out->message),
                 "object array (descr %.900s): its data is a pickle, which "
                 "np.load(allow_pickle=True) runs", h.descr);
        out->run = MF_PAYLOAD_PICKLE;
    }
    out->at = h.data_offset;
    mf_status_clear(&st);
    return 1;
}

static const char *const npy_extensions[] = {".npy", NULL};

const mf_reader mf_reader_npy = {
    .format = MF_FMT_NUMPY_NPY,
    .name = "numpy-npy",
    .extensions = npy_extensions,
    .probe = probe_npy,
    .open = open_npy,
    .scan = &(const mf_scan_hooks){
        .pickle_payload = npy_pickle_payload,
    },
};
