/* mfmt/analyze.h - reading a model without writing: diff of two models,
 * memory estimate, device plan, and the load report of a Hugging Face
 * directory (config.json against the weights).
 * Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_ANALYZE_H
#define MFMT_ANALYZE_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- diff */

typedef enum mf_diff_kind {
    MF_DIFF_SAME_BYTES,   /* same dtype, shape and canonical bytes */
    MF_DIFF_SAME_VALUES,  /* other dtype or layout, equal values as floats */
    MF_DIFF_VALUES,       /* values differ (stats say how much) */
    MF_DIFF_SHAPE,        /* shapes differ */
    MF_DIFF_ONLY_A, MF_DIFF_ONLY_B,
    MF_DIFF_INCOMPARABLE, /* e.g. STRING tensors of different bytes */
} mf_diff_kind;

/* "same", "same-values", "differ", "shape", "only-a", "only-b",
 * "incomparable". Static. */
MF_API const char *mf_diff_kind_name(mf_diff_kind k);

/* One tensor name's comparison (valid during the callback only). */
typedef struct mf_diff_row {
    const char *name;
    mf_diff_kind kind;
    const mf_tensor *a, *b;       /* NULL for the side that lacks it */
    double max_abs, rmse, cosine; /* MF_DIFF_VALUES / SAME_VALUES */
    uint64_t n_diff;              /* elements that differ */
    /* MF_DIFF_VALUES / SAME_VALUES: the root mean square of A's and of B's
     * values (A the reference: relative error rmse / rms_a, SNR
     * 20 log10(rms_a / rmse)); 0 for the other kinds. Appended after
     * n_diff: the library fills the struct, older callers never see it. */
    double rms_a, rms_b;
} mf_diff_row;

/* Non-zero stops the diff (MF_ERR_CANCELLED). */
typedef int (*mf_diff_row_fn)(void *user, const mf_diff_row *r);

/* Compares two models tensor by tensor, across formats: calls `row` once
 * per tensor name (A's order, then B's extra names). Values are compared
 * as float32 (mf_tensor_read). Thread-safe on the two models. */
MF_API int mf_diff(const mf_model *a, const mf_model *b, mf_diff_row_fn row, void *user,
                   mf_status *st);

/* Metadata compared key by key. Two values are equal when they have the
 * same type (GGUF's value type: a u32 1 is not an i32 1) and the same
 * contents (arrays element by element, strings byte by byte). */
typedef enum mf_meta_diff_kind {
    MF_META_SAME,    /* same type and value */
    MF_META_CHANGED, /* same type, other value */
    MF_META_TYPE,    /* another type (the value may print the same) */
    MF_META_ONLY_A, MF_META_ONLY_B,
} mf_meta_diff_kind;

/* "same", "changed", "type", "only-a", "only-b". Static. */
MF_API const char *mf_meta_diff_kind_name(mf_meta_diff_kind k);

/* One key's comparison (valid during the callback only). */
typedef struct mf_meta_diff_row {
    const char *key;
    mf_meta_diff_kind kind;
    const mf_value *a, *b; /* NULL for the side that lacks the key */
} mf_meta_diff_row;

typedef int (*mf_meta_diff_fn)(void *user, const mf_meta_diff_row *r);

/* True when a and b have the same type and contents (see above). */
MF_API bool mf_value_equal(const mf_value *a, const mf_value *b);

/* Compares two models' metadata: calls `row` once per key (A's order, then
 * B's extra keys); a non-zero return stops it (MF_ERR_CANCELLED). Keys are
 * compared by name whatever the formats; comparing a GGUF's keys with a
 * safetensors file's __metadata__ is allowed but rarely meaningful (the
 * CLI compares metadata only between models of one format). A key that
 * occurs twice in a model is compared by its first occurrence, as
 * mf_meta_get finds it. Linear in the key counts. Thread-safe. */
MF_API int mf_diff_metadata(const mf_model *a, const mf_model *b, mf_meta_diff_fn row,
                            void *user, mf_status *st);

/* --------------------------------------------- error against an original */

/* A tensor's layer: its name up to the first all-digit component
 * ("model.layers.12.mlp.up_proj.weight" -> "model.layers.12", "blk.3.attn_q"
 * -> "blk.3"); "" for tensors outside the layers. */
MF_API void mf_layer_of(const char *name, char *out, size_t cap);

/* Sums over tensors, each weighted by its element count n. */
typedef struct mf_error_acc {
    double n, sum_sq, sum_ref_sq, sum_cos; /* n; n * rmse^2, n * rms_ref^2, n * cosine */
    size_t tensors;
} mf_error_acc;

MF_API double mf_error_rmse(const mf_error_acc *a);
MF_API double mf_error_cosine(const mf_error_acc *a);
/* rmse / rms of the original (0 when the original is all zeros). */
MF_API double mf_error_rel(const mf_error_acc *a);
/* Signal to noise in dB, 10 log10(sum orig^2 / sum (orig - model)^2);
 * INFINITY when there is no error, -INFINITY for an all-zero original. */
MF_API double mf_error_snr_db(const mf_error_acc *a);

typedef struct mf_error_layer {
    char name[128];          /* mf_layer_of; "(outside the layers)" */
    mf_error_acc acc;
} mf_error_layer;

/* One tensor both sides hold, of the same shape. */
typedef struct mf_error_tensor {
    char *name;
    mf_dtype original, model;
    double n, rmse, max_abs, cosine, rms_ref; /* rms_ref: the original's root mean square */
} mf_error_tensor;

#define MF_ERROR_WORST 5

/* A model's error against its original. Owned by the caller, free with
 * mf_error_report_free. */
typedef struct mf_error_report {
    char *original;          /* the original's path (mf_error_against) */
    bool mapped;             /* an HF directory and a GGUF: the GGUF read through
                                the converter's tables (mf_open_gguf_as_hf) */
    mf_error_acc all;        /* every tensor compared */
    mf_error_layer *layers;  /* in order of first appearance */
    size_t n_layers;
    mf_error_tensor *tensors; /* in the original's order (keep_tensors) */
    size_t n_tensors;
    struct {
        char name[256];
        double rmse, cosine;
    } worst[MF_ERROR_WORST]; /* by rmse, largest first */
    size_t n_worst;
    size_t only_original, only_model, shape_mismatch, incomparable; /* rows not summed */
    bool keep_tensors;       /* private from here on */
    size_t cap_layers, cap_tensors;
} mf_error_report;

/* An empty report, to be filled row by row (NULL when out of memory). */
MF_API mf_error_report *mf_error_report_new(bool keep_tensors);
/* A row of mf_diff(ORIGINAL, MODEL) into the sums: rows of the same bytes,
 * same values or differing values are summed (equal ones as rmse 0,
 * cosine 1); the others counted. rms_same: A's root mean square for a row
 * of equal bytes (mf_diff reads no values then; 0 if unknown). 0, or -1
 * when out of memory. */
MF_API int mf_error_report_add(mf_error_report *r, const mf_diff_row *row, double rms_same);
MF_API void mf_error_report_free(mf_error_report *r); /* NULL is fine */

typedef struct mf_error_opts {
    size_t struct_size;      /* sizeof(mf_error_opts) */
    unsigned open_flags;     /* mf_open flags for both models (MF_OPEN_NO_SCAN always) */
    const char *arch_file;   /* an HF directory and a GGUF: the GGUF's names mapped through
                                this architecture file (mf_convert_hf_opts.arch_file), not
                                the converter's tables; NULL: the tables */
} mf_error_opts;

MF_API void mf_error_opts_init(mf_error_opts *o);

/* `mfmt report MODEL --against ORIGINAL`: mf_diff(ORIGINAL, MODEL) summed per
 * tensor, per layer and for the model (the SNR of equal tensors from the
 * original's values). An HF directory against a GGUF (either way) compares
 * the GGUF read through the converter's tables as it streams
 * (mf_open_gguf_as_hf, F32; nothing written; opts->arch_file: through an
 * architecture file). Fails (MF_ERR_FORMAT) when no
 * tensor has a counterpart of its shape. opts NULL: defaults. Thread-safe. */
MF_API int mf_error_against(const char *model, const char *original, const mf_error_opts *opts,
                            mf_error_report **out, mf_status *st);


/* ------------------------------------------------------------ estimate */

typedef struct mf_estimate_opts {
    size_t struct_size;      /* sizeof(mf_estimate_opts) */
    int64_t ctx;             /* 0: the model's training context (4096 if unknown) */
    int64_t batch;           /* 0: 1 */
    const char *kv_type;     /* NULL: f16; a ggml type: f32, f16, bf16, q8_0, q4_0, ... */
    const char *weight_type; /* NULL: as stored; a ggml type or a mix (Q4_K_M, ...) */
} mf_estimate_opts;

MF_API void mf_estimate_opts_init(mf_estimate_opts *o);

/* Memory to run a model: weights + KV cache. Owned by the caller, free
 * with mf_estimate_free. */
typedef struct mf_estimate {
    char source[32];         /* "weights", "config.json" or "gguf" */
    char arch[64];
    int64_t n_layers, n_heads, n_kv_heads, hidden, head_dim_k, head_dim_v;
    int64_t ctx, ctx_train, batch;
    uint64_t n_params;
    bool params_from_config; /* computed from config.json (no weights read) */
    uint64_t weight_bytes;
    double weight_bpw;
    char weight_type[64];
    char kv_type[16];
    double kv_bytes_per_elem;
    uint64_t kv_bytes;       /* layers x ctx x batch x (K + V bytes per token) */
    uint64_t total_bytes;
    char weight_note[256];   /* how weight_bytes was counted, when not plainly (a
                              * pre-quantized checkpoint: what its quantizer keeps) */
} mf_estimate;

/* PATH: a Hugging Face directory (config.json; weights when present) or a
 * GGUF file. opts NULL: defaults. Thread-safe. */
MF_API int mf_estimate_path(const char *path, const mf_estimate_opts *opts,
                            mf_estimate **out, mf_status *st);
MF_API void mf_estimate_free(mf_estimate *e);
/* Bits per weight of a ggml type ("q8_0": 8.5) or of a llama.cpp mix
 * ("Q4_K_M": its measured average); canon (cl bytes) gets the type's
 * spelling. -1 when unknown (no status). */
MF_API int mf_type_bpw(const char *name, double *bpw, char *canon, size_t cl);

/* ---------------------------------------------------------------- plan */

#define MF_PLAN_UNLIMITED UINT64_MAX

typedef struct mf_plan_device {
    char name[64];           /* "cuda:0", "0", "mps", "cpu", "disk" */
    uint64_t capacity;       /* bytes; MF_PLAN_UNLIMITED for disk */
} mf_plan_device;

/* A tensor to place, in the model's declaration order. */
typedef struct mf_plan_tensor {
    const char *name;
    uint64_t bytes;
} mf_plan_tensor;

typedef struct mf_plan_entry {
    char *module;            /* "" for the whole model */
    size_t device;           /* index into devices */
} mf_plan_entry;

/* A device map. Owned by the caller, free with mf_plan_free. */
typedef struct mf_plan {
    mf_plan_device *devices; /* as given, GPUs before cpu before disk; disk added */
    size_t n_devices;
    uint64_t *used;          /* bytes placed per device */
    mf_plan_entry *map;      /* module -> device, cleaned as Accelerate cleans it */
    size_t n_map;
    uint64_t total;
    uint64_t reserved;       /* largest no-split layer, kept free on the main devices */
} mf_plan;

typedef struct mf_plan_opts {
    size_t struct_size;      /* sizeof(mf_plan_opts) */
    /* NULL: as stored (or config.json's torch_dtype); "f16", "bf16", "f32":
     * the dtype floating-point weights are loaded in */
    const char *dtype;
} mf_plan_opts;

MF_API void mf_plan_opts_init(mf_plan_opts *o);

/* Accelerate's infer_auto_device_map over the module tree of the tensor
 * names (decoder layers "*.layers.N", "*.h.N", "*.blocks.N", "blk.N" are
 * never split); tied: the parameter tied to the embedding (lm_head.weight)
 * or NULL, with its embedding's name. Thread-safe. */
MF_API int mf_plan_tensors(const mf_plan_tensor *t, size_t n, const char *tied,
                           const char *tied_to, const mf_plan_device *devs, size_t n_devs,
                           mf_plan **out, mf_status *st);
/* PATH: a Hugging Face directory (weights or, without them, config.json)
 * or any weights file. opts NULL: defaults. */
MF_API int mf_plan_path(const char *path, const mf_plan_device *devs, size_t n_devs,
                        const mf_plan_opts *opts, mf_plan **out, mf_status *st);
MF_API void mf_plan_free(mf_plan *p); /* NULL is fine */

/* ------------------------------------------------ llama.cpp's loader */

/* Receives one reason (a sentence; valid during the call only). */
typedef void (*mf_problem_fn)(void *user, const char *msg);

/* Would llama.cpp's loader (commit c392e509) take this GGUF model? Calls fn
 * (NULL: count only) for each reason it would refuse it (unknown
 * architecture, missing hyper-parameters, missing or misshapen tensors)
 * and returns how many there are (0: it loads). Thread-safe. */
MF_API size_t mf_llama_load_problems(const mf_model *m, mf_problem_fn fn, void *user);

/* ------------------------------------------------ HF load report */

/* What transformers would say loading a Hugging Face directory: the
 * tensors config.json implies against those present. Owned by the caller,
 * free with mf_load_report_free. */
typedef struct mf_load_report {
    const char *arch;         /* model_type it was checked as, NULL: not checked */
    char why_not[256];        /* when not checked: why */
    size_t n_expected, n_found;
    char **missing;    size_t n_missing;    /* expected, absent */
    char **unexpected; size_t n_unexpected; /* present, not expected */
    char **mismatched; size_t n_mismatched; /* "name: shape [a, b], config implies [c, d]" */
    bool tied;                /* tie_word_embeddings */
    /* a pre-quantized checkpoint (config.json quantization_config): the
     * tensors are compared by their logical view (the original weights) */
    char quant_method[32];    /* "" when not quantized */
    const char *quantizer;    /* the HfQuantizer transformers picks, static */
    const char *requires;     /* what it needs to load (static text) */
    char **not_converted; size_t n_not_converted; /* modules kept unquantized */
} mf_load_report;

/* For an hf-dir model (mf_model_format == MF_FMT_HF_DIR; others:
 * MF_ERR_USAGE): compares the tensors it holds with the names and shapes
 * its config.json implies for llama, mistral, qwen2, qwen3, gemma, gemma2,
 * phi3 and gpt2 (as transformers' modeling code declares them). A config
 * it cannot check is not an error: arch NULL, why_not says why. A
 * pre-quantized directory is compared by its logical tensors, and the
 * report names the quantizer, what it needs and what it keeps unquantized. */
MF_API int mf_hf_load_report(const mf_model *m, mf_load_report **out, mf_status *st);
MF_API void mf_load_report_free(mf_load_report *r); /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif /* MFMT_ANALYZE_H */
