/* npy.h - the NumPy .npy header, shared by the .npy and .npz readers and by
 * the scanner (object arrays hold a pickle).
 *
 * Format (numpy/lib/format.py, NEP 1): "\x93NUMPY", major, minor, header
 * length (uint16 LE for 1.0, uint32 LE for 2.0 and 3.0), then a Python dict
 * literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
 * spaces and ended by '\n'; the array data follows. */
#ifndef MF_NPY_H
#define MF_NPY_H
#include "core/core.h"
#include "core/zip.h"

#define MF_NPY_MAGIC "\x93NUMPY"
/* numpy's np.load refuses headers over 10000 bytes unless told it may trust
 * the file (max_header_size); we allow more but not without bound. */
#define MF_NPY_MAX_HEADER (1u << 20)

/* Arrays of dtypes that are not one number are tensors too (npy_header.c):
 *  - 'U<n>' (UCS-4 text): U32, with a last dimension of n code points;
 *  - 'S<n>', 'a<n>', 'V<n>': U8, with a last dimension of n bytes;
 *  - 'M8[unit]', 'm8[unit]' (datetime64, timedelta64): I64 counts of the unit;
 *  - a sub-array dtype (descr, shape): its shape follows the array's;
 *  - a structured dtype (a list of fields) without objects: one record per
 *    element, U8 with a last dimension of the record size (fields packed in
 *    order, as descr_to_dtype lays them out); npy.descr says what they are.
 * extra_dims counts those trailing dimensions. */
typedef struct mf_npy_header {
    uint8_t major, minor;
    char descr[256];       /* the descr as text (a string as written; truncated) */
    mf_dtype dtype;        /* MF_DTYPE_INVALID for object arrays */
    bool big_endian;       /* multi-byte elements stored big-endian */
    bool fortran_order;
    bool is_object;        /* an object dtype anywhere: the data is a pickle */
    bool record;           /* a structured dtype read as bytes per record */
    /* after a failure: np.load(allow_pickle=True) may still unpickle the
     * data at data_offset (a header mfmt cannot read exactly as numpy does,
     * or a dtype it does not know that may hold objects); the scanner then
     * scans it. data_offset is set whenever the header length was read. */
    bool maybe_pickle;
    int extra_dims;
    int ndim;
    int64_t shape[MF_MAX_DIMS];
    uint64_t data_offset;  /* first data byte, from the start of the .npy */
    uint64_t nbytes;       /* bytes of the data (0 for object arrays) */
} mf_npy_header;

/* Bytes needed to know the whole header: the prefix length a caller with
 * only part of the array (an inflating .npz member) must supply. Returns 0
 * and sets *need, or -1 (st filled) when the first bytes are not a header. */
int mf_npy_header_need(const uint8_t *b, uint64_t size, const char *file,
                       uint64_t origin, const char *member, uint64_t *need,
                       mf_status *st);

/* Parses the header at b (size bytes available; `origin` is where b sits in
 * `file`, for messages). Checks magic, version, the dict literal and the
 * dtype; computes data_offset and nbytes (overflow-checked). Does not check
 * that the data is present: the caller knows how many bytes the array has. */
int mf_npy_parse_header(const uint8_t *b, uint64_t size, const char *file,
                        uint64_t origin, mf_npy_header *h, mf_status *st);
/* The same for a member of an .npz: messages name the member. */
int mf_npy_parse_member_header(const uint8_t *b, uint64_t size, const char *file,
                               uint64_t origin, const char *member,
                               mf_npy_header *h, mf_status *st);

/* The header dict text s[0..n) as numpy reads it (npy_header.c): fills
 * h's descr, dtype, shape, fortran_order, is_object, maybe_pickle. */
int mf_npy_parse_dict(const uint8_t *s, size_t n, uint8_t major, const char *file,
                      uint64_t origin, const char *member, mf_npy_header *h, mf_status *st);

/* Fills a tensor's name-independent fields from a parsed header: dtype,
 * shape, byte order, nbytes, and Fortran order as element strides
 * (allocated in `a`). */
int mf_npy_fill_tensor(const mf_npy_header *h, mf_tensor *t, mf_arena *a,
                       mf_status *st);

/* The message for an object array (the reader refuses it, the scanner
 * looks inside). */
int mf_npy_fail_object(mf_status *st, const char *file, int64_t off,
                       const char *member);

/* The .npy header of an .npz member: parsed in the mapping when stored,
 * from its first inflated bytes when deflated (npz.c). */
int mf_npz_member_header(const mf_zip *z, const mf_zip_entry *e,
                         mf_npy_header *h, mf_status *st);

/* For the scanner: calls fn for every object array of a .npy or .npz file
 * with its member name ("" for a .npy), its pickle bytes (valid during the
 * call; inflated for a deflated member) and where they start in the file
 * (for a deflated member: the member's data offset). Non-object arrays are
 * skipped. Returns the number of pickles found, or -1 with st filled. */
typedef int (*mf_npy_pickle_fn)(void *ctx, const char *member,
                                const uint8_t *pickle, size_t n,
                                uint64_t file_offset, mf_status *st);
int mf_numpy_each_pickle(const char *path, mf_npy_pickle_fn fn, void *ctx,
                         mf_status *st);

#endif
