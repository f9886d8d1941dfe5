/* TRANSITIONAL (API freeze commit only): the pre-freeze public header, which the
 * library still builds against while it moves onto include/mfmt.h. */
/* mfmt.h - the one public header of libmfmt.
 *
 * libmfmt opens model-weight files (safetensors, GGUF, PyTorch, NumPy, ONNX,
 * HDF5, TFLite, ...) into one uniform, read-only view: format, metadata and a
 * tensor table whose data points into a read-only mapping of the file.
 * Opening costs O(header); no tensor data is copied.
 *
 * Conventions
 *  - Functions that can fail return 0 on success and -1 on failure, and fill
 *    an mf_status whose message names the file, the byte offset and the rule.
 *  - Nothing in the library prints, exits or aborts on input.
 *  - Structures in this header are read-only for callers unless said otherwise.
 */
#ifndef MFMT_LEGACY_H
#define MFMT_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MF_VERSION_STRING "0.1.0"
#define MF_MAX_DIMS 32

/* ------------------------------------------------------------------ status */

typedef enum mf_code {
    MF_OK = 0,
    MF_ERR_FORMAT,      /* the input breaks a rule of its format */
    MF_ERR_UNSAFE,      /* the input would run code when loaded */
    MF_ERR_UNSUPPORTED, /* valid, but mfmt cannot do this (yet) */
    MF_ERR_IO,          /* open/read/write/rename failed */
    MF_ERR_USAGE,       /* bad arguments from the caller */
    MF_ERR_NOMEM,       /* allocation failed */
} mf_code;

/* A status collects every breach a reader finds (validate lists them all);
 * `code` and `msg` are those of the first. */
typedef struct mf_status {
    mf_code code;
    char msg[1024];
    char **all;        /* every message, in the order found */
    size_t n_all, cap_all;
} mf_status;

void mf_status_init(mf_status *st);
void mf_status_clear(mf_status *st); /* frees `all`, back to MF_OK */

/* ------------------------------------------------------------------ dtypes */

/* Values below 100 are ggml's type ids (GGUF tensor types); the others are
 * element types that only non-ggml formats hold. */
typedef enum mf_dtype {
    MF_F32 = 0, MF_F16 = 1, MF_Q4_0 = 2, MF_Q4_1 = 3, MF_Q5_0 = 6,
    MF_Q5_1 = 7, MF_Q8_0 = 8, MF_Q8_1 = 9, MF_Q2_K = 10, MF_Q3_K = 11,
    MF_Q4_K = 12, MF_Q5_K = 13, MF_Q6_K = 14, MF_Q8_K = 15,
    MF_IQ2_XXS = 16, MF_IQ2_XS = 17, MF_IQ3_XXS = 18, MF_IQ1_S = 19,
    MF_IQ4_NL = 20, MF_IQ3_S = 21, MF_IQ2_S = 22, MF_IQ4_XS = 23,
    MF_I8 = 24, MF_I16 = 25, MF_I32 = 26, MF_I64 = 27, MF_F64 = 28,
    MF_IQ1_M = 29, MF_BF16 = 30, MF_TQ1_0 = 34, MF_TQ2_0 = 35,
    MF_MXFP4 = 39,
    MF_U8 = 100, MF_U16, MF_U32, MF_U64, MF_BOOL,
    MF_F8_E4M3, MF_F8_E5M2, MF_F8_E4M3FNUZ, MF_F8_E5M2FNUZ, MF_F8_E8M0,
    MF_F6_E2M3, MF_F6_E3M2, MF_F4, MF_I4, MF_U4, MF_I2, MF_U2,
    MF_C64, MF_C128, MF_STRING,
    MF_DTYPE_INVALID = -1,
} mf_dtype;

typedef struct mf_dtype_info {
    const char *name;      /* safetensors / ggml spelling: "F32", "Q4_K" */
    int ggml_id;           /* -1 when not a ggml type */
    uint32_t block_elems;  /* elements per block (1 for plain types) */
    uint32_t block_bytes;  /* bytes per block; 0 for variable (STRING) */
    uint32_t bits;         /* bits per element for packed sub-byte types */
    bool is_float, is_quant, is_signed;
} mf_dtype_info;

const mf_dtype_info *mf_dtype_info_of(mf_dtype dt); /* NULL if unknown */
const char *mf_dtype_name(mf_dtype dt);             /* "?" if unknown */
mf_dtype mf_dtype_from_name(const char *name);      /* MF_DTYPE_INVALID */
mf_dtype mf_dtype_from_ggml(uint32_t ggml_id);      /* MF_DTYPE_INVALID */
/* Bytes of `n_elems` elements laid out contiguously (blocks rounded up for
 * packed types; n_elems must be a block multiple for ggml block types).
 * Returns -1 on overflow or a partial ggml block. */
int mf_dtype_nbytes(mf_dtype dt, uint64_t n_elems, uint64_t *out);

/* ---------------------------------------------------------------- formats */

typedef enum mf_format {
    MF_FMT_UNKNOWN = 0,
    MF_FMT_SAFETENSORS, MF_FMT_GGUF, MF_FMT_PYTORCH_ZIP, MF_FMT_PYTORCH_PICKLE,
    MF_FMT_NUMPY_NPY, MF_FMT_NUMPY_NPZ, MF_FMT_HDF5, MF_FMT_ONNX,
    MF_FMT_ONNX_TENSOR, MF_FMT_TFLITE, MF_FMT_KERAS, MF_FMT_TF_SAVEDMODEL,
    MF_FMT_TF_GRAPHDEF, MF_FMT_MLX, MF_FMT_HF_DIR, MF_FMT_PICKLE,
    MF_FMT_GGML_LEGACY, MF_FMT_ZIP, /* a zip whose content is not a known format */
    MF_FMT_COUNT
} mf_format;

const char *mf_format_name(mf_format f); /* DESIGN.md's names: "pytorch-zip" */

typedef struct mf_detection {
    mf_format format;
    char detail[256]; /* e.g. "GGUF v3 little-endian", "zip (3 members)",
                         or for unknown: the first bytes in hex */
} mf_detection;

/* From the bytes (and, for directories, the files inside), never the name. */
int mf_detect(const char *path, mf_detection *out, mf_status *st);

/* --------------------------------------------------------------- metadata */

typedef enum mf_vtype {
    MF_V_U8, MF_V_I8, MF_V_U16, MF_V_I16, MF_V_U32, MF_V_I32, MF_V_F32,
    MF_V_BOOL, MF_V_STR, MF_V_ARR, MF_V_U64, MF_V_I64, MF_V_F64, /* = GGUF ids */
    MF_V_NULL = 100,
} mf_vtype;

typedef struct mf_value {
    mf_vtype type;
    union {
        uint64_t u;   /* U8..U64 */
        int64_t i;    /* I8..I64 */
        double f;     /* F32 (exact), F64 */
        bool b;
        struct { const char *ptr; size_t len; } s; /* NUL-terminated too */
        struct { mf_vtype elem; size_t n; struct mf_value *items; } arr;
    } as;
} mf_value;

typedef struct mf_kv {
    const char *key;
    mf_value v;
    uint64_t offset; /* where the pair starts in its file (0 if n/a) */
} mf_kv;

/* ----------------------------------------------------------------- tensors */

typedef struct mf_file {
    const char *path;
    const uint8_t *base; /* read-only mapping (NULL for an empty file) */
    uint64_t size;
} mf_file;

typedef struct mf_tensor {
    const char *name;
    mf_dtype dtype;
    int ndim;
    int64_t shape[MF_MAX_DIMS]; /* C order: outermost first */
    const int64_t *strides;     /* element strides, C order; NULL = contiguous */
    uint32_t file;              /* index into mf_model.files */
    uint64_t offset;            /* byte offset of the first element there */
    uint64_t nbytes;            /* bytes of the tensor stored contiguously */
    const uint8_t *data;        /* into the mapping; NULL when not mapped as is
                                   (compressed, chunked, ...): use mf_tensor_stream */
    bool big_endian;            /* stored big-endian (swapped when streamed) */
    void *priv;                 /* reader-private */
    const struct mf_model *owner; /* the model whose files and reader hold this
                                     tensor (a shard, a directory's weights
                                     file); NULL: the model listing it */
} mf_tensor;

typedef struct mf_arena mf_arena;
struct mf_reader;

typedef struct mf_model {
    mf_format format;
    char version[64];          /* "3", "1.0", "torch zip v3", ... */
    const char *path;
    mf_kv *meta;   size_t n_meta;
    mf_tensor *tensors; size_t n_tensors;
    mf_file *files; size_t n_files;
    char **notes;  size_t n_notes; /* warnings that are not breaches */
    uint64_t header_bytes;     /* bytes read to open (O(header) check) */
    const struct mf_reader *reader;
    mf_arena *arena;           /* owns every string and array above */
    void *priv;
} mf_model;

enum {
    MF_OPEN_STRICT = 1 << 0, /* validate: check every rule, collect them all */
};

typedef struct mf_open_opts {
    unsigned flags;
} mf_open_opts;

int mf_open(const char *path, const mf_open_opts *opts, mf_model **out,
            mf_status *st);
void mf_close(mf_model *m);

const mf_value *mf_meta_get(const mf_model *m, const char *key);
/* Bytes of every file the model maps (its own and its weights files'). */
uint64_t mf_model_file_bytes(const mf_model *m);
/* How many files that is. */
size_t mf_model_file_count(const mf_model *m);
/* The file a tensor lives in (follows t->owner). */
const mf_file *mf_tensor_file(const mf_model *m, const mf_tensor *t);
const mf_tensor *mf_tensor_find(const mf_model *m, const char *name);
uint64_t mf_tensor_nelems(const mf_tensor *t);

/* A sink receives bytes in order; returns 0, or -1 with st filled. */
typedef int (*mf_sink_fn)(void *ctx, const void *buf, size_t n, mf_status *st);

/* Streams the tensor's canonical bytes (C order, contiguous, little-endian,
 * stored dtype) to `sink` in chunks, whatever the layout on disk. */
int mf_tensor_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                     void *ctx, mf_status *st);

/* ----------------------------------------------------------------- hashing */

typedef enum mf_hash_algo { MF_SHA256, MF_SHA1, MF_XXH64, MF_XXH3 } mf_hash_algo;
typedef struct mf_hasher mf_hasher;

int mf_hash_algo_from_name(const char *name, mf_hash_algo *out);
const char *mf_hash_algo_name(mf_hash_algo a);
mf_hasher *mf_hasher_new(mf_hash_algo a);
void mf_hasher_update(mf_hasher *h, const void *buf, size_t n);
void mf_hasher_final_hex(mf_hasher *h, char hex[129]); /* then reusable */
void mf_hasher_free(mf_hasher *h);
int mf_hasher_sink(void *hasher, const void *buf, size_t n, mf_status *st);

int mf_hash_file(const char *path, mf_hash_algo a, char hex[129], mf_status *st);
int mf_hash_tensor(const mf_model *m, const mf_tensor *t, mf_hash_algo a,
                   char hex[129], mf_status *st);
/* Hash of all tensors' canonical bytes, in table order (metadata excluded). */
int mf_hash_tensor_content(const mf_model *m, mf_hash_algo a, char hex[129],
                           mf_status *st);

/* ----------------------------------------------------------------- writing */

/* Atomic file writer: a temporary file beside `path`, fsync, rename. */
typedef struct mf_atomic mf_atomic;
int mf_atomic_open(const char *path, mf_atomic **out, mf_status *st);
int mf_atomic_write(mf_atomic *w, const void *buf, size_t n, mf_status *st);
int mf_atomic_sink(void *w, const void *buf, size_t n, mf_status *st);
uint64_t mf_atomic_tell(const mf_atomic *w);
int mf_atomic_commit(mf_atomic *w, mf_status *st); /* frees w */
void mf_atomic_abort(mf_atomic *w);                 /* frees w, removes temp */

/* What a writer needs to know of one output tensor before any data. */
typedef struct mf_out_tensor {
    const char *name;
    mf_dtype dtype;
    int ndim;
    int64_t shape[MF_MAX_DIMS]; /* C order */
} mf_out_tensor;

/* Called once per tensor, in order: write exactly the tensor's bytes
 * (canonical layout) to sink(sink_ctx, ...). */
typedef int (*mf_fill_fn)(void *ctx, size_t index, mf_sink_fn sink,
                          void *sink_ctx, mf_status *st);

/* safetensors: `meta` holds string values only (the __metadata__ map). */
int mf_safetensors_write(const char *path, const mf_out_tensor *tensors,
                         size_t n, const mf_kv *meta, size_t n_meta,
                         mf_fill_fn fill, void *ctx, mf_status *st);

/* GGUF v3, little-endian. Metadata written in the order given; alignment
 * from general.alignment when present in meta, else 32. */
int mf_gguf_write(const char *path, const mf_out_tensor *tensors, size_t n,
                  const mf_kv *meta, size_t n_meta, mf_fill_fn fill,
                  void *ctx, mf_status *st);

#ifdef __cplusplus
}
#endif
#endif /* MFMT_H */
