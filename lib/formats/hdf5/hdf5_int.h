/* hdf5.h - internal pieces of the HDF5 reader (HDF5 File Format
 * Specification 3.0). Not public.
 *
 * The reader works on a byte range (a mapped file, or a member of a zip held
 * in the mapping or inflated in memory): every file address is relative to
 * the superblock's base address inside that range, and every reported byte
 * offset is the range's `origin` plus the position, so errors name bytes of
 * the outer file. */
#ifndef MF_HDF5_H
#define MF_HDF5_H

#include "core/core.h"

#define H5_UNDEF UINT64_MAX   /* the "undefined address" (all bits set) */
#define H5_MAX_DEPTH 64       /* group nesting / shared-message chains */

/* ------------------------------------------------------------- the file */
typedef struct h5_file {
    const uint8_t *base;  /* first byte of the range */
    uint64_t size;        /* bytes in the range */
    uint64_t origin;      /* offset of `base` in the outer file (messages) */
    const char *label;    /* name in messages */
    mf_status *st;
    uint64_t base_addr;   /* position of address 0 inside the range */
    uint8_t sz_off, sz_len;
    int sb_version;
    uint64_t root_addr;   /* root group object header */
    uint64_t eof_addr;
    uint64_t work;        /* nodes/blocks visited: bounded by `work_max` */
    uint64_t work_max;
    bool strict;
} h5_file;

/* Reads the superblock at the start of [base, base+size) or at 512, 1024..
 * Fills f; fails with a message naming the rule. */
int h5_file_open(h5_file *f, const uint8_t *base, uint64_t size,
                 uint64_t origin, const char *label, mf_status *st);

/* Position inside the range of `n` bytes at address `addr`; fails (with
 * `what` in the message) when they do not lie inside it. */
int h5_locate(h5_file *f, uint64_t addr, uint64_t n, const char *what,
              uint64_t *pos);
/* Cursor over [addr, addr+n) (n == 0: to the end of the range). */
int h5_cursor_at(h5_file *f, uint64_t addr, uint64_t n, const char *what,
                 mf_cursor *c);
/* Reads an unsigned little-endian integer of `nbytes` (1..8). */
int h5_rd_uint(mf_cursor *c, unsigned nbytes, uint64_t *v, const char *what);
int h5_rd_addr(h5_file *f, mf_cursor *c, uint64_t *v, const char *what);
int h5_rd_len(h5_file *f, mf_cursor *c, uint64_t *v, const char *what);
/* Fails at an absolute position of the range. */
int h5_fail_at(h5_file *f, uint64_t pos, const char *fmt, ...) MF_PRINTF(3, 4);
/* Counts one unit of work; fails when a hostile structure loops. */
int h5_work(h5_file *f, uint64_t pos);
/* Checks a signature and an optional lookup3 checksum over [pos, pos+n-4). */
int h5_check_sig(h5_file *f, uint64_t pos, const char sig[4], const char *what);
int h5_check_sum(h5_file *f, uint64_t pos, uint64_t n, const char *what);

/* Bob Jenkins' lookup3 hashlittle(), HDF5's metadata checksum. */
uint32_t h5_lookup3(const uint8_t *p, size_t n, uint32_t init);
/* HDF5's Fletcher-32 (16-bit big-endian words). */
uint32_t h5_fletcher32(const uint8_t *p, size_t n);
/* Bytes needed to encode v (at least 1). */
unsigned h5_bytes_for(uint64_t v);

/* A set of addresses (cycle and revisit detection). */
typedef struct h5_addrset {
    uint64_t *slot;
    size_t n, cap;
} h5_addrset;
/* 1: added, 0: already there, -1: out of memory. */
int h5_addrset_add(h5_addrset *s, uint64_t a);
void h5_addrset_free(h5_addrset *s);

/* ------------------------------------------------------- object headers */
enum {
    H5M_NIL = 0x00, H5M_DATASPACE = 0x01, H5M_LINK_INFO = 0x02,
    H5M_DATATYPE = 0x03, H5M_FILL_OLD = 0x04, H5M_FILL = 0x05,
    H5M_LINK = 0x06, H5M_EXTERNAL = 0x07, H5M_LAYOUT = 0x08,
    H5M_GROUP_INFO = 0x0a, H5M_FILTERS = 0x0b, H5M_ATTRIBUTE = 0x0c,
    H5M_CONTINUATION = 0x10, H5M_SYMBOL_TABLE = 0x11, H5M_ATTR_INFO = 0x15,
};
#define H5_MSG_SHARED 0x02 /* message flag bit 1: the body is a shared message */

typedef struct h5_msg {
    uint16_t type;
    uint8_t flags;
    uint64_t size;
    const uint8_t *data;
    uint64_t pos; /* position of the body in the range */
} h5_msg;

typedef struct h5_ohdr {
    uint64_t addr;
    int version;
    h5_msg *msgs;
    size_t n, cap;
} h5_ohdr;

int h5_ohdr_read(h5_file *f, uint64_t addr, h5_ohdr *oh);
void h5_ohdr_free(h5_ohdr *oh);
const h5_msg *h5_ohdr_find(const h5_ohdr *oh, uint16_t type);
/* A message whose body may be shared (in another object header): fills
 * *body with the real body (following at most H5_MAX_DEPTH references).
 * `keep` holds the header read for it; free it with h5_ohdr_free. */
int h5_msg_resolve(h5_file *f, const h5_msg *m, h5_msg *body, h5_ohdr *keep);

/* ---------------------------------------------- datatypes and dataspaces */
enum { H5T_FIXED = 0, H5T_FLOAT = 1, H5T_TIME = 2, H5T_STRING = 3,
       H5T_BITFIELD = 4, H5T_OPAQUE = 5, H5T_COMPOUND = 6, H5T_REFERENCE = 7,
       H5T_ENUM = 8, H5T_VLEN = 9, H5T_ARRAY = 10 };

typedef struct h5_dtype {
    int cls;
    int version;
    uint32_t size;
    uint32_t bits;        /* the 24 class bit-field bits */
    bool big_endian, is_signed;
    bool vlen_string;     /* class VLEN, type string */
    mf_dtype mf;          /* plain tensor dtype, or MF_DTYPE_INVALID */
    const char *why;      /* when mf is invalid: why it is not numeric */
    /* enum: base integer type and member list (for h5py's bool) */
    uint32_t n_members;
    bool is_bool_enum;
} h5_dtype;

/* Parses a datatype message body. `depth` bounds nesting. */
int h5_dtype_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos,
                   h5_dtype *t, int depth);
const char *h5_class_name(int cls);

typedef struct h5_space {
    int kind;   /* 0 scalar, 1 simple, 2 null */
    int ndims;
    uint64_t dims[MF_MAX_DIMS];
    uint64_t maxdims[MF_MAX_DIMS]; /* H5_UNDEF = unlimited */
    bool has_max;
} h5_space;

int h5_space_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos,
                   h5_space *s);
/* Element count (fails on overflow). */
int h5_space_nelems(h5_file *f, const h5_space *s, uint64_t pos, uint64_t *n);

/* Decodes an attribute's value into a metadata value (strings, numbers,
 * booleans, arrays of them). Returns 1 with *v set, 0 when the type has no
 * metadata form (v gets a short text), -1 on a fatal error. */
int h5_value_decode(h5_file *f, mf_arena *a, const h5_dtype *t,
                    const h5_space *s, const uint8_t *data, uint64_t n,
                    uint64_t pos, mf_value *v);

/* ---------------------------------------------------------------- heaps */
/* Local heap: the data segment. */
int h5_local_heap(h5_file *f, uint64_t addr, const uint8_t **data,
                  uint64_t *size, uint64_t *pos);

/* Fractal heap header, read once; objects found by heap ID. */
typedef struct h5_fheap {
    uint64_t addr;
    uint16_t id_len, filter_len;
    uint8_t flags;
    uint32_t max_managed;
    uint16_t width;
    uint64_t start_block, max_direct;
    uint16_t max_heap_bits;
    uint64_t root_addr;
    uint64_t huge_btree;   /* v2 B-tree of huge objects */
    uint16_t root_rows;
    unsigned max_dblock_rows;
    unsigned off_bytes, len_bytes;
} h5_fheap;

int h5_fheap_open(h5_file *f, uint64_t addr, h5_fheap *h);
/* Finds the object of a heap ID: *p points at its bytes in the range. */
int h5_fheap_get(h5_file *f, const h5_fheap *h, const uint8_t *id, size_t id_len,
                 const uint8_t **p, uint64_t *n, uint64_t *pos);

/* v2 B-tree: calls `rec` for every record, in key order. */
typedef int (*h5_bt2_fn)(void *ctx, const uint8_t *rec, uint32_t size,
                         uint64_t pos);
int h5_bt2_iterate(h5_file *f, uint64_t addr, uint8_t want_type,
                   h5_bt2_fn rec, void *ctx);

/* --------------------------------------------------------------- groups */
typedef struct h5_link {
    const char *name;      /* in the arena */
    int type;              /* 0 hard, 1 soft, 64 external */
    uint64_t addr;         /* hard */
    const char *target;    /* soft / external: text */
} h5_link;

typedef MF_VEC(h5_link) h5_links;
/* Every link of the group whose header is `oh` (symbol table, compact links
 * or dense storage), sorted by name. */
int h5_group_links(h5_file *f, const h5_ohdr *oh, mf_arena *a, h5_links *out);
bool h5_is_group(const h5_ohdr *oh);

/* --------------------------------------------------- datasets and chunks */
typedef struct h5_filter {
    uint16_t id;
    uint16_t flags;        /* bit 0: optional */
    const char *name;
    uint32_t n_values;
    uint32_t values[20];   /* the first client data values (scale-offset has 20) */
} h5_filter;

typedef struct h5_pipeline {
    int n;
    h5_filter f[32];
} h5_pipeline;

int h5_pipeline_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos,
                      mf_arena *a, h5_pipeline *pl);
const char *h5_filter_name(uint16_t id);

enum { H5L_COMPACT = 0, H5L_CONTIGUOUS = 1, H5L_CHUNKED = 2, H5L_VIRTUAL = 3 };
enum { H5I_BTREE1 = 0, H5I_SINGLE = 1, H5I_IMPLICIT = 2, H5I_FARRAY = 3,
       H5I_EARRAY = 4, H5I_BTREE2 = 5 };

typedef struct h5_layout {
    int version, cls;
    uint64_t addr;          /* contiguous data / chunk index */
    uint64_t size;          /* contiguous: bytes allocated; compact: bytes */
    const uint8_t *compact; /* compact data (in the mapping) */
    uint64_t compact_pos;
    int chunk_ndims;        /* rank + 1 (the last is the element size) */
    uint64_t chunk[MF_MAX_DIMS + 1];
    uint8_t flags;          /* v4 chunked flags */
    int index;              /* H5I_* */
    /* index parameters */
    uint64_t single_size;   /* single chunk, filtered */
    uint32_t single_mask;
    uint8_t fa_page_bits;
    uint8_t ea_max_bits, ea_idx_elmts, ea_min_ptrs, ea_min_elmts, ea_page_bits;
    uint32_t bt2_node_size;
} h5_layout;

int h5_layout_parse(h5_file *f, const uint8_t *p, uint64_t n, uint64_t pos,
                    h5_layout *l);

/* Everything the streamer needs about a chunked or unallocated dataset;
 * lives in the model's arena, pointed to by mf_tensor.priv. */
typedef struct h5_dset {
    h5_file *file;
    const char *name;
    h5_space space;
    uint32_t esize;
    bool big_endian;
    h5_layout layout;
    h5_pipeline pipeline;
    const uint8_t *fill;    /* fill value bytes (esize) or NULL (zeros) */
    const char *unsupported; /* set: the data cannot be read, and why */
    const uint8_t *plain;   /* contiguous/compact bytes held outside the
                               model's files (an inflated zip member) */
} h5_dset;

/* One allocated chunk. */
typedef struct h5_chunk {
    uint64_t lin;   /* linear index in the current chunk grid (C order) */
    uint64_t addr;
    uint64_t size;  /* bytes stored */
    uint32_t mask;  /* filters skipped */
} h5_chunk;
typedef MF_VEC(h5_chunk) h5_chunks;

/* Lists the allocated chunks of a chunked dataset, sorted by `lin`.
 * `f` is a per-call copy of the dataset's file (its own status). */
int h5_chunks_list(h5_file *f, const h5_dset *d, h5_chunks *out);
/* Undoes the filter pipeline of one chunk: *out points into one of the two
 * scratch buffers (each chunk_bytes long) or into `in`. */
int h5_filters_decode(h5_file *f, const h5_dset *d, const h5_chunk *c, const uint8_t *in,
                      uint64_t in_len, uint64_t chunk_bytes, uint8_t *scratch[2],
                      const uint8_t **out, uint64_t *out_len);
/* The codecs of hdf5_codecs.c: one filter undone from `in` (n bytes) into
 * `out` (cap bytes, the chunk size); *got is the decoded length. */
int h5_unblosc(h5_file *f, const h5_dset *d, const h5_filter *fl, const uint8_t *in,
               uint64_t n, uint8_t *out, uint64_t cap, uint64_t *got);
int h5_unszip(h5_file *f, const h5_dset *d, const h5_filter *fl, const uint8_t *in,
              uint64_t n, uint8_t *out, uint64_t cap, uint64_t *got);
int h5_unscaleoffset(h5_file *f, const h5_dset *d, const h5_filter *fl, const uint8_t *in,
                     uint64_t n, uint8_t *out, uint64_t cap, uint64_t *got);
/* Whether mfmt decodes filter `id`. */
bool h5_filter_known(uint16_t id);

/* The canonical bytes of a dataset that is not plainly mapped. */
int h5_dset_stream(const h5_dset *d, mf_sink_fn sink, void *ctx, mf_status *st);

/* -------------------------------------------------------------- readers */
/* Parses the HDF5 range into m: one tensor per numeric dataset (named by
 * its absolute path), root attributes as metadata (others as PATH@NAME),
 * notes for what is skipped. Tensors' file index is `fi`. */
int mf_hdf5_parse_range(mf_model *m, uint32_t fi, const uint8_t *base,
                        uint64_t size, uint64_t origin, const char *label,
                        unsigned flags, mf_status *st);
/* The reader's stream callback (keras.c reuses it). */
int mf_hdf5_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                   void *ctx, mf_status *st);

#endif
