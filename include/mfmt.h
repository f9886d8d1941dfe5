/* mfmt.h - the public API of libmfmt.
 *
 * libmfmt opens model-weight files (safetensors, GGUF, PyTorch, NumPy, ONNX,
 * HDF5/Keras, TFLite, TensorFlow, MLX, Hugging Face directories, ...) into
 * one uniform, read-only view: format, metadata and a tensor table whose
 * data points into a read-only mapping of the file. Opening costs
 * O(header); no tensor data is copied. On top of that view it offers every
 * operation of the `mfmt` command: validate, hash (with llama-gguf-hash
 * manifests), scan, convert, quantize, dequantize, split/merge, diff,
 * estimate and plan. Including this header declares all of it (it includes
 * the headers in <mfmt/...>; include this one, not those).
 *
 * Conventions (they hold for every function unless its comment says else)
 *  - Return value: functions that can fail return 0 on success and -1 on
 *    failure; the reason goes to the mf_status the caller passes (its
 *    message names the file, the byte offset and the rule). A NULL status
 *    pointer is allowed everywhere: the failure is then only the -1.
 *  - Nothing in the library prints, exits or aborts on input.
 *  - Ownership: a pointer returned by an accessor (names, shapes, metadata,
 *    tensors) is owned by the handle it came from and stays valid until that
 *    handle is freed (mf_close, mf_..._free). Memory the caller must free is
 *    said so, with the function that frees it (mf_free for plain buffers).
 *  - Handles (mf_model, mf_tensor, mf_hasher, mf_atomic, mf_manifest, ...)
 *    are opaque; results are plain C structs owned by a handle.
 *  - Option structs begin with `struct_size`: fill them with their
 *    mf_..._opts_init() (or the MF_..._OPTS_INIT initialiser), then set
 *    fields. Later versions only append fields, so a program built against
 *    this header keeps working; a struct_size of 0 is refused (MF_ERR_USAGE).
 *    Passing NULL options means every default.
 *  - Progress: long operations take an mf_progress_fn; returning non-zero
 *    from it cancels the operation, which then fails with MF_ERR_CANCELLED
 *    and leaves no partial output behind (outputs are written atomically).
 *  - Threads: the library keeps no global mutable state (a few lookup
 *    tables are built once, under pthread_once). Functions taking
 *    a `const mf_model *` may be called from several threads at once on the
 *    same model; a function taking a non-const handle (mf_hasher, mf_atomic,
 *    mf_status ...) needs that handle to itself. mf_close must not race with
 *    other uses of the model. Callbacks run on the calling thread.
 *  - Every exported function is declared here with MF_API; the shared
 *    library exports nothing else.
 */
#ifndef MFMT_H
#define MFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- version */

/* The one place the version is written: the Makefile reads these lines
 * (SONAME libmfmt.so.MAJOR, file libmfmt.so.MAJOR.MINOR.PATCH, mfmt.pc). */
#define MF_VERSION_MAJOR 0
#define MF_VERSION_MINOR 2
#define MF_VERSION_PATCH 0
#define MF_STRINGIFY_(x) #x
#define MF_STRINGIFY(x) MF_STRINGIFY_(x)
/* "MAJOR.MINOR.PATCH", from the three numbers above */
#define MF_VERSION_STRING                                                     \
    MF_STRINGIFY(MF_VERSION_MAJOR) "." MF_STRINGIFY(MF_VERSION_MINOR) "."     \
        MF_STRINGIFY(MF_VERSION_PATCH)

#if defined(__GNUC__) && __GNUC__ >= 4
#define MF_API __attribute__((visibility("default")))
#else
#define MF_API
#endif

#define MF_MAX_DIMS 32

/* The library's version, "MAJOR.MINOR.PATCH" (may differ from
 * MF_VERSION_STRING when a program runs against a newer shared library). */
MF_API const char *mf_version(void);

/* Frees memory the library allocated for the caller (text, buffers) where a
 * function says "free with mf_free". NULL is fine. */
MF_API void mf_free(void *p);

/* ------------------------------------------------------------------ status */

typedef enum mf_code {
    MF_OK = 0,
    MF_ERR_FORMAT,      /* the input breaks a rule of its format */
    MF_ERR_UNSAFE,      /* the input would run code when loaded */
    MF_ERR_UNSUPPORTED, /* valid, but mfmt cannot do this (yet) */
    MF_ERR_IO,          /* open/read/write/rename failed */
    MF_ERR_USAGE,       /* bad arguments from the caller */
    MF_ERR_NOMEM,       /* allocation failed */
    MF_ERR_CANCELLED,   /* a progress callback returned non-zero */
} mf_code;

/* A status collects every breach a reader finds (validate lists them all);
 * `code` and `msg` are those of the first. Initialise with mf_status_init
 * (or MF_STATUS_INIT), release with mf_status_clear. One status belongs to
 * one thread at a time. */
typedef struct mf_status {
    mf_code code;
    char msg[1024];
    char **all;        /* every message, in the order found */
    size_t n_all, cap_all;
} mf_status;

#define MF_STATUS_INIT {MF_OK, {0}, NULL, 0, 0}

MF_API void mf_status_init(mf_status *st);
/* Frees `all` and sets the status back to MF_OK (it can be reused). */
MF_API void mf_status_clear(mf_status *st);
/* Messages recorded (at least 1 once a function failed). */
MF_API size_t mf_status_count(const mf_status *st);
/* Message i (0: the first, == msg), or NULL past the end. Owned by st. */
MF_API const char *mf_status_message(const mf_status *st, size_t i);
/* "ok", "format", "unsafe", "unsupported", "io", "usage", "nomem",
 * "cancelled"; "?" for others. Static. */
MF_API const char *mf_code_name(mf_code c);

/* For callbacks and sinks that fail: records a message (printf-style) with
 * `code` in st (NULL is fine) and returns -1. */
MF_API int mf_status_fail(mf_status *st, mf_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Progress of a long operation: `done` out of `total` units (bytes unless
 * said otherwise; total 0 when unknown). Return 0 to go on, non-zero to
 * cancel (the operation fails with MF_ERR_CANCELLED, writes nothing). */
typedef int (*mf_progress_fn)(void *user, uint64_t done, uint64_t total);

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
    MF_MXFP4 = 39, MF_NVFP4 = 40, MF_Q1_0 = 41, MF_Q2_0 = 42,
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

/* Static tables: thread-safe, nothing to free. */
MF_API const mf_dtype_info *mf_dtype_info_of(mf_dtype dt); /* NULL if unknown */
MF_API const char *mf_dtype_name(mf_dtype dt);             /* "?" if unknown */
/* Case-sensitive spelling as mf_dtype_name gives it; MF_DTYPE_INVALID. */
MF_API mf_dtype mf_dtype_from_name(const char *name);
MF_API mf_dtype mf_dtype_from_ggml(uint32_t ggml_id);      /* MF_DTYPE_INVALID */
/* Bytes of `n_elems` elements laid out contiguously (blocks rounded up for
 * packed types; n_elems must be a block multiple for ggml block types).
 * Returns -1 on overflow or a partial ggml block. */
MF_API int mf_dtype_nbytes(mf_dtype dt, uint64_t n_elems, uint64_t *out);
/* true when mf_tensor_read can give a tensor of dtype `dt` as F32: F32,
 * F16, BF16, F64, every integer type of a byte or more, BOOL, the F8
 * variants (E4M3, E5M2, their FNUZ forms, E8M0), FP4 (E2M1) and the packed
 * I4/U4/I2/U2 (first element in the low bits, as ONNX and TFLite pack
 * them), and every ggml block type (not STRING, complex, or F6). */
MF_API bool mf_dtype_to_f32_supported(mf_dtype dt);

/* ------------------------------------------------------------- utilities */

/* A size such as "5GB", "500MiB", "2G", "1024" in bytes (decimal and binary
 * suffixes, as Hugging Face's max_shard_size). -1 when malformed. */
MF_API int mf_parse_size(const char *s, uint64_t *out);
/* -1 when buf[0..n) is valid UTF-8, else the offset of the first bad byte. */
MF_API int64_t mf_utf8_check(const uint8_t *buf, size_t n);

/* ---------------------------------------------------------------- formats */

typedef enum mf_format {
    MF_FMT_UNKNOWN = 0,
    MF_FMT_SAFETENSORS, MF_FMT_GGUF, MF_FMT_PYTORCH_ZIP, MF_FMT_PYTORCH_PICKLE,
    MF_FMT_NUMPY_NPY, MF_FMT_NUMPY_NPZ, MF_FMT_HDF5, MF_FMT_ONNX,
    MF_FMT_ONNX_TENSOR, MF_FMT_TFLITE, MF_FMT_KERAS, MF_FMT_TF_SAVEDMODEL,
    MF_FMT_TF_GRAPHDEF, MF_FMT_MLX, MF_FMT_HF_DIR, MF_FMT_PICKLE,
    MF_FMT_GGML_LEGACY, MF_FMT_ZIP, /* a zip whose content is not a known format */
    MF_FMT_DEEPSPEED, MF_FMT_DCP, MF_FMT_MEGATRON, /* training checkpoints (folders) */
    MF_FMT_COUNT
} mf_format;

/* DESIGN.md's names ("pytorch-zip"); "?" when out of range. Static. */
MF_API const char *mf_format_name(mf_format f);

typedef struct mf_detection {
    mf_format format;
    char detail[256]; /* e.g. "GGUF v3 little-endian", "zip (3 members)",
                         or for unknown: the first bytes in hex */
} mf_detection;

/* Which format `path` holds, from its bytes (and, for a directory, the
 * files inside), never its name. An unknown format is not an error
 * (format MF_FMT_UNKNOWN); -1 only when the path cannot be read.
 * Thread-safe. */
MF_API int mf_detect(const char *path, mf_detection *out, mf_status *st);

/* --------------------------------------------------------------- metadata */

typedef enum mf_vtype {
    MF_V_U8, MF_V_I8, MF_V_U16, MF_V_I16, MF_V_U32, MF_V_I32, MF_V_F32,
    MF_V_BOOL, MF_V_STR, MF_V_ARR, MF_V_U64, MF_V_I64, MF_V_F64, /* = GGUF ids */
    MF_V_NULL = 100,
} mf_vtype;

/* A metadata value (read-only; owned by the model it came from). */
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

/* -------------------------------------------------------------- the model */

/* An opened model (opaque). Read-only once open: every accessor below may
 * be called from several threads at once. */
typedef struct mf_model mf_model;
/* One tensor of a model's table (opaque; owned by the model). */
typedef struct mf_tensor mf_tensor;

enum {
    /* validate: check every rule the reader knows and collect every breach
     * in the status (mf_open then fails with the first as code/msg) */
    MF_OPEN_STRICT = 1 << 0,
    /* skip the safety scan mf_open otherwise runs for formats that can carry
     * code (pickles, PyTorch, NumPy object arrays, Keras Lambda layers,
     * directories holding them); mf_model_verdict then says UNKNOWN */
    MF_OPEN_NO_SCAN = 1 << 1,
    /* refuse a model whose scan verdict is `dangerous`: mf_open fails with
     * MF_ERR_UNSAFE naming the first dangerous finding */
    MF_OPEN_REFUSE_UNSAFE = 1 << 2,
    /* list packed tensors by their logical view: an MLX quantized triple
     * (weight, scales, biases) becomes one tensor of the logical shape in
     * the scales' float type, dequantized when read or streamed */
    MF_OPEN_LOGICAL = 1 << 3,
    /* training checkpoints (doc/training.md): DeepSpeed's (and Megatron
     * torch_dist's) bf16/fp16 module states instead of the fp32 master
     * weights of the optimizer partitions (zero_to_fp32.py's default) */
    MF_OPEN_TRAIN_MODULE_STATES = 1 << 4,
    /* training checkpoints: leave frozen parameters out (zero_to_fp32.py's
     * --exclude_frozen_parameters) */
    MF_OPEN_TRAIN_EXCLUDE_FROZEN = 1 << 5,
};

typedef struct mf_open_opts {
    size_t struct_size; /* sizeof(mf_open_opts) */
    unsigned flags;     /* MF_OPEN_* */
    /* A Hugging Face config.json for a training checkpoint that carries
     * none (Megatron-LM: the architecture's tensor names and the vocabulary
     * size without padding); NULL: looked for beside the checkpoint */
    const char *config;
    /* mf_open_fd: the most bytes read into memory from a descriptor that
     * cannot be mapped (a pipe, a socket); a longer stream fails with
     * MF_ERR_USAGE saying so. 0: MF_OPEN_MAX_READ_DEFAULT */
    uint64_t max_read;
} mf_open_opts;

#define MF_OPEN_MAX_READ_DEFAULT ((uint64_t)4 << 30) /* 4 GiB */
#define MF_OPEN_OPTS_INIT {sizeof(mf_open_opts), 0, NULL, 0}
MF_API void mf_open_opts_init(mf_open_opts *o);

/* Opens a file or directory (the format detected from its bytes). opts may
 * be NULL (no flags). On success *out is the model (close with mf_close);
 * on failure *out is NULL and st says why. Thread-safe. Unless
 * MF_OPEN_NO_SCAN is set, a format that can carry code is scanned (see
 * mf_model_verdict). */
MF_API int mf_open(const char *path, const mf_open_opts *opts, mf_model **out,
                   mf_status *st);
/* Opens a model held in memory: the bytes of one file, as mf_open would
 * open them (detection, reader, scan, opts). Read in place, never copied:
 * the buffer must stay unchanged until mf_close. A format that spans several
 * files (ONNX external data, shard indexes, directories) fails with
 * MF_ERR_UNSUPPORTED: open those by path. `name` (NULL: "buffer") is how
 * messages and mf_model_path name it, as "mem:ID/name"; its extension is a
 * hint as a path's would be. That name is no path: no function that takes
 * a path resolves it to the buffer (a file named "mem:1/x" is that file),
 * and nothing beside the buffer is looked up on disk. Thread-safe. */
MF_API int mf_open_buffer(const void *buf, size_t len, const char *name,
                          const mf_open_opts *opts, mf_model **out, mf_status *st);
/* Opens the one model file an open file descriptor holds, from its current
 * position to its end (as np.load and torch.load read a file object: what
 * comes before the position is not the model's), as mf_open_buffer would
 * open those bytes (same formats, same MF_ERR_UNSUPPORTED for a model that
 * spans several files). A regular file is mapped, not read, and its
 * position is left where it was; anything else (a pipe, a socket) is read
 * to its end into memory the model owns, at most opts->max_read bytes
 * (MF_OPEN_MAX_READ_DEFAULT). The fd is not closed, and may be
 * closed once this returns. `name` (NULL: "fd") names it as for
 * mf_open_buffer. Thread-safe. */
MF_API int mf_open_fd(int fd, const char *name, const mf_open_opts *opts, mf_model **out,
                      mf_status *st);
/* Frees the model and everything it owns (tensors, names, metadata, views).
 * NULL is fine. */
MF_API void mf_close(mf_model *m);

/* validate: opens with MF_OPEN_STRICT and closes again. Returns 0 when the
 * file keeps every rule, -1 with every breach in st otherwise (mf_status_count,
 * mf_status_message). Thread-safe. */
MF_API int mf_validate(const char *path, mf_status *st);

MF_API mf_format mf_model_format(const mf_model *m);
/* Format version ("3", "1.0", "torch zip v3"; "" if none). Owned by m. */
MF_API const char *mf_model_version(const mf_model *m);
MF_API const char *mf_model_path(const mf_model *m); /* as given to mf_open */
/* Bytes read to open it (the O(header) cost). */
MF_API uint64_t mf_model_header_bytes(const mf_model *m);

MF_API size_t mf_model_meta_count(const mf_model *m);
/* Pair i in file order, NULL past the end. Owned by m. */
MF_API const mf_kv *mf_model_meta_at(const mf_model *m, size_t i);
/* The value of `key` (first match), or NULL. Owned by m. */
MF_API const mf_value *mf_meta_get(const mf_model *m, const char *key);

/* Notes: warnings that are not breaches. */
MF_API size_t mf_model_note_count(const mf_model *m);
MF_API const char *mf_model_note_at(const mf_model *m, size_t i); /* NULL past end */
/* True when note i is information, not a warning: a fact about the file that
 * real writers produce and every loader accepts (a safetensors tensor not
 * 64-byte aligned: the Rust writer aligns to 8). False past the end. */
MF_API bool mf_model_note_is_info(const mf_model *m, size_t i);

/* The files the model maps: its own and, for directories and shard sets,
 * every weights file. */
MF_API size_t mf_model_file_count(const mf_model *m);
MF_API uint64_t mf_model_file_bytes(const mf_model *m); /* their total size */

MF_API size_t mf_model_tensor_count(const mf_model *m);
/* Tensor i in table order (file order), NULL past the end. */
MF_API const mf_tensor *mf_model_tensor_at(const mf_model *m, size_t i);
/* The tensor named `name`, or NULL. */
MF_API const mf_tensor *mf_tensor_find(const mf_model *m, const char *name);

/* A tensor's description. All pointers are owned by the model. */
MF_API const char *mf_tensor_name(const mf_tensor *t);
MF_API mf_dtype mf_tensor_dtype(const mf_tensor *t);
MF_API int mf_tensor_ndim(const mf_tensor *t);
/* ndim sizes, C order (outermost first). */
MF_API const int64_t *mf_tensor_shape(const mf_tensor *t);
/* Element strides in C order as stored (a PyTorch view), or NULL when the
 * tensor is stored contiguously. Reading always gives contiguous data. */
MF_API const int64_t *mf_tensor_strides(const mf_tensor *t);
MF_API uint64_t mf_tensor_nelems(const mf_tensor *t);
/* Bytes of the tensor's canonical (contiguous) form in its dtype. */
MF_API uint64_t mf_tensor_nbytes(const mf_tensor *t);
/* Byte offset of its first element in its file, and that file's path. */
MF_API uint64_t mf_tensor_offset(const mf_tensor *t);
MF_API const char *mf_tensor_file_path(const mf_model *m, const mf_tensor *t);
/* The stored bytes in the read-only mapping when they are the canonical
 * bytes as they lie (contiguous, little-endian, uncompressed), else NULL:
 * then use mf_tensor_read or mf_tensor_stream. */
MF_API const void *mf_tensor_data(const mf_model *m, const mf_tensor *t);
/* Element 0 (index [0, ..., 0]) of the tensor in the read-only mapping when
 * its elements lie there uncompressed and little-endian (the stored bytes
 * are exactly what the dtype and shape need: not so for a sparse TFLite
 * tensor, a deflated member, chunked or typed storage), contiguous or as a
 * strided view (element strides: mf_tensor_strides; every element they
 * reach lies inside the mapping, the reader checked that), else NULL. What
 * a zero-copy strided view needs (the Python package's NumPy arrays):
 * element i sits at base + sum(i[d] * strides[d]) * element size. Equals
 * mf_tensor_data for a contiguous tensor. */
MF_API const void *mf_tensor_mapped(const mf_model *m, const mf_tensor *t);
MF_API bool mf_tensor_big_endian(const mf_tensor *t); /* stored big-endian */

/* ------------------------------------------------------- reading tensors */

/* A sink receives bytes in order; returns 0, or -1 with st filled (the
 * operation feeding it then stops and fails with that status). */
typedef int (*mf_sink_fn)(void *ctx, const void *buf, size_t n, mf_status *st);

/* Streams the tensor's canonical bytes (C order, contiguous, little-endian,
 * stored dtype) to `sink` in chunks, whatever the layout on disk
 * (compressed, chunked, strided, big-endian). Thread-safe on one model. */
MF_API int mf_tensor_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                            void *ctx, mf_status *st);

/* Rows of the outermost dimension: shape[0] (1 for a scalar). */
MF_API uint64_t mf_tensor_rows(const mf_tensor *t);

/* Bytes mf_tensor_read writes for `nrows` rows as `as` (see there). */
MF_API int mf_tensor_read_size(const mf_tensor *t, mf_dtype as, uint64_t nrows,
                               uint64_t *bytes, mf_status *st);

/* Reads rows [row0, row0 + nrows) of the outermost dimension (a 1-D tensor:
 * elements) into `buf` (cap bytes), contiguous, C order, little-endian:
 *  - as == MF_F32: values as float32, from any dtype for which
 *    mf_dtype_to_f32_supported holds: F16, BF16, F64, integers (also the
 *    packed 4- and 2-bit ones, rows may start inside a byte), bool, FP4,
 *    every F8 variant, every ggml block type (ggml's dequantization,
 *    bit for bit), MLX packed tensors (open with MF_OPEN_LOGICAL or read
 *    from mf_model_logical_view), strided PyTorch views;
 *  - as == the tensor's own dtype (or MF_DTYPE_INVALID): its canonical
 *    bytes; for ggml block types the row range must cover whole blocks.
 * nrows == UINT64_MAX: to the last row. Fails (MF_ERR_USAGE) when the range
 * is outside the tensor or cap is smaller than mf_tensor_read_size;
 * MF_ERR_UNSUPPORTED when the conversion is not available. Costs O(rows
 * read) for tensors mapped as they lie, O(tensor) otherwise (compressed or
 * strided storage is decoded from the start). Thread-safe on one model. */
MF_API int mf_tensor_read(const mf_model *m, const mf_tensor *t, mf_dtype as,
                          uint64_t row0, uint64_t nrows, void *buf, size_t cap,
                          mf_status *st);
/* The same for the whole tensor into a buffer the library allocates:
 * *out (free with mf_free), *bytes its size. */
MF_API int mf_tensor_read_alloc(const mf_model *m, const mf_tensor *t, mf_dtype as,
                                void **out, uint64_t *bytes, mf_status *st);

/* A model whose tensor table is the logical one (MF_OPEN_LOGICAL's view)
 * over an open model: packed MLX triples become one float tensor each, the
 * other tensors are listed as they are. `src` must stay open until the view
 * is closed (mf_close). For a model without packed tensors the view lists
 * the same tensors. */
MF_API int mf_model_logical_view(const mf_model *src, mf_model **view, mf_status *st);

/* A text description of the model's graph where the format has one (ONNX:
 * inputs, outputs, nodes; what `mfmt inspect --graph` prints), written to
 * sink. MF_ERR_USAGE for formats without a graph. */
MF_API int mf_model_graph_text(const mf_model *m, mf_sink_fn sink, void *ctx,
                               mf_status *st);

/* ----------------------------------------------------------------- editing */

/* Changes a GGUF's metadata (or a safetensors file's __metadata__) and
 * tensor names without decoding any tensor: a new header is written and the
 * data section copied as bytes (copy_file_range: in the kernel, shared
 * extents where the filesystem allows). */
typedef enum mf_edit_kind {
    MF_EDIT_SET,            /* key = text (below) */
    MF_EDIT_DELETE,         /* key */
    MF_EDIT_RENAME_TENSOR,  /* key = old tensor name, text = new name */
    MF_EDIT_CHAT_TEMPLATE_FROM, /* text = a tokenizer_config.json: its chat
                               template(s) as gguf-py writes them */
} mf_edit_kind;

/* MF_EDIT_SET's text is VALUE or TYPE:VALUE.  TYPE is one of
 *   int, float, bool, str            (int/float keep the key's existing
 *                                     integer/float type; new keys: i32 or
 *                                     i64 as the value needs, f32)
 *   u8 i8 u16 i16 u32 i32 u64 i64 f32 f64   (exactly that GGUF type)
 *   file                             (a string: the contents of file VALUE)
 *   json                             (the JSON in file VALUE: an array of
 *                                     strings, numbers or booleans, or one)
 * Without a known TYPE the value takes the key's existing type (an array
 * key: VALUE is JSON text), a new key is a string. */
typedef struct mf_edit_op {
    mf_edit_kind kind;
    const char *key;
    const char *text;
} mf_edit_op;

enum {
    MF_EDIT_FORCE = 1 << 0,   /* allow edits that make the file one llama.cpp
                                 (or the format) refuses */
    MF_EDIT_DRY_RUN = 1 << 1, /* check and measure, write nothing */
};

typedef struct mf_edit_opts {
    size_t struct_size; /* sizeof(mf_edit_opts): lets the struct grow */
    unsigned flags;     /* MF_EDIT_* */
} mf_edit_opts;

/* One line of what changed, in the order applied. */
typedef struct mf_edit_change {
    mf_edit_kind kind;
    const char *key;      /* the key, or the old tensor name */
    const char *before;   /* short text of the old value; NULL: key was new */
    const char *after;    /* short text of the new value; NULL: deleted */
} mf_edit_change;

typedef struct mf_edit_report {
    uint64_t old_header_bytes, new_header_bytes; /* up to the data section */
    uint64_t data_bytes;                         /* copied unchanged */
    mf_edit_change *changes;
    size_t n_changes;
    void *priv;
} mf_edit_report;

/* Edits `in` into `out` (NULL or the same file: `in` is replaced
 * atomically, by a temporary file and a rename). Every op is checked before
 * anything is written; on any failure nothing at `out` (or `in`) changes.
 * Returns 0, or -1 with st (NULL allowed) naming the file and the rule.
 * `report` (NULL allowed) is filled on success and must be released with
 * mf_edit_report_free. Thread-safe for distinct files. */
MF_API int mf_edit(const char *in, const char *out, const mf_edit_op *ops, size_t n_ops,
                   const mf_edit_opts *opts, mf_edit_report *report, mf_status *st);
MF_API void mf_edit_report_free(mf_edit_report *report);

#ifdef __cplusplus
}
#endif

#include "mfmt/hash.h"
#include "mfmt/write.h"
#include "mfmt/scan.h"
#include "mfmt/convert.h"
#include "mfmt/quantize.h"
#include "mfmt/analyze.h"
#include "mfmt/hub.h"

#endif /* MFMT_H */
