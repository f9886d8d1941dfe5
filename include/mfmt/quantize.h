/* mfmt/quantize.h - GGUF to GGUF quantization as llama.cpp's
 * llama-quantize does it: the mix's type per tensor (llama_tensor_get_type's
 * rules), ggml's quantizers bit for bit, an importance matrix (legacy .dat
 * or GGUF imatrix), metadata copied with general.file_type and
 * general.quantization_version set. Streams one tensor at a time, writes
 * atomically. A dry run measures the error of every quantized tensor
 * instead of writing.
 * Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_QUANTIZE_H
#define MFMT_QUANTIZE_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* llama.cpp's llama_ftype: the value written to general.file_type. */
typedef enum mf_ftype {
    MF_FTYPE_ALL_F32 = 0,
    MF_FTYPE_F16 = 1,
    MF_FTYPE_Q4_0 = 2,
    MF_FTYPE_Q4_1 = 3,
    MF_FTYPE_Q8_0 = 7,
    MF_FTYPE_Q5_0 = 8,
    MF_FTYPE_Q5_1 = 9,
    MF_FTYPE_Q2_K = 10,
    MF_FTYPE_Q3_K_S = 11,
    MF_FTYPE_Q3_K_M = 12,
    MF_FTYPE_Q3_K_L = 13,
    MF_FTYPE_Q4_K_S = 14,
    MF_FTYPE_Q4_K_M = 15,
    MF_FTYPE_Q5_K_S = 16,
    MF_FTYPE_Q5_K_M = 17,
    MF_FTYPE_Q6_K = 18,
    MF_FTYPE_IQ2_XXS = 19,
    MF_FTYPE_IQ2_XS = 20,
    MF_FTYPE_Q2_K_S = 21,
    MF_FTYPE_IQ3_XS = 22,
    MF_FTYPE_IQ3_XXS = 23,
    MF_FTYPE_IQ1_S = 24,
    MF_FTYPE_IQ4_NL = 25,
    MF_FTYPE_IQ3_S = 26,
    MF_FTYPE_IQ3_M = 27,
    MF_FTYPE_IQ2_S = 28,
    MF_FTYPE_IQ2_M = 29,
    MF_FTYPE_IQ4_XS = 30,
    MF_FTYPE_IQ1_M = 31,
    MF_FTYPE_BF16 = 32,
    MF_FTYPE_TQ1_0 = 36,
    MF_FTYPE_TQ2_0 = 37,
    MF_FTYPE_MXFP4_MOE = 38, /* llama.cpp after b4747: MoE experts MXFP4, the rest Q8_0 */
    MF_FTYPE_NVFP4 = 39,     /* file types of later llama.cpp (b10256); not mixes mfmt makes */
    MF_FTYPE_Q1_0 = 40,
    MF_FTYPE_Q2_0 = 41,
    MF_FTYPE_INVALID = -1,
} mf_ftype;

/* A mix name as llama-quantize takes it (case-insensitive; "Q4_K" is an
 * alias of Q4_K_M, "Q3_K" of Q3_K_M, "Q5_K" of Q5_K_M) or its number.
 * MF_FTYPE_INVALID when unknown. These four are static and thread-safe. */
MF_API mf_ftype mf_ftype_parse(const char *s);
MF_API const char *mf_ftype_name(mf_ftype f);   /* "Q4_K_M"; "?" if unknown */
MF_API mf_dtype mf_ftype_base_type(mf_ftype f); /* the mix's default tensor type */
/* Calls fn for each mix name llama-quantize lists (for usage text). */
MF_API void mf_ftype_each(void (*fn)(void *user, const char *name, mf_ftype f), void *user);
/* true for the mixes llama-quantize refuses without an importance matrix
 * (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, Q2_K_S). */
MF_API bool mf_ftype_needs_imatrix(mf_ftype f);

/* Which llama-quantize's choice of tensor types a mix follows. They
 * differ in one rule: b10256's src/llama-quant.cpp counts attn_qkv and
 * attn_kv_b as attn_v (category_is_attn_v: attn_v's ladder for the three);
 * c392e509's and 2026-02-27's (ecbcb7ea) give attn_qkv a rule of its own
 * and attn_kv_b none. */
typedef enum mf_mix_rules {
    MF_MIX_RULES_ECBCB7EA = 0, /* llama.cpp c392e509 and ecbcb7ea (2026-02-27): the default */
    MF_MIX_RULES_B10256 = 1,   /* llama.cpp b10256 */
} mf_mix_rules;
/* "c392e50", "ecbcb7ea" (the same rules) or "b10256"; -1 when unknown */
MF_API int mf_mix_rules_parse(const char *s);

typedef struct mf_quantize_opts {
    size_t struct_size;        /* sizeof(mf_quantize_opts) */
    mf_ftype ftype;
    int nthreads;              /* <= 1: the calling thread only */
    const char *imatrix_path;  /* NULL: none (.dat or GGUF imatrix) */
    bool allow_requantize;     /* dequantize already-quantized tensors first */
    bool pure, leave_output;   /* --pure, --leave-output-tensor */
    mf_dtype output_type;      /* MF_DTYPE_INVALID: the mix decides */
    mf_dtype token_embd_type;  /* likewise */
    bool dry_run;              /* nothing written; error statistics instead */
    mf_progress_fn progress;   /* input tensor bytes processed; may cancel */
    void *progress_user;
    /* llama-quantize's --include-weights / --exclude-weights: keep only the
     * imatrix entries whose name contains one of these (include), or drop
     * those that do (exclude); not both */
    const char *const *include_weights;
    size_t n_include_weights;
    const char *const *exclude_weights;
    size_t n_exclude_weights;
    /* llama-quantize's --override-kv: "KEY=int:N", "KEY=float:X",
     * "KEY=bool:true|false", "KEY=str:TEXT" (at most 127 bytes), set in
     * the output (i32, f32, bool, string) in order, after the copied keys */
    const char *const *kv_overrides;
    size_t n_kv_overrides;
    /* llama-quantize's COPY type: every tensor copied as it is (ftype is
     * ignored), general.file_type set to the input's (its general.file_type,
     * else the type most tensors have, plus 1024: llama.cpp's "guessed") */
    bool only_copy;
    /* llama-quantize's --keep-split: an input split set (NAME-00001-of-0000N.gguf)
     * gives one output file per input file, out_path (less a ".gguf" ending)
     * being the prefix: PREFIX-00001-of-0000N.gguf, ..., each with the split.*
     * keys; the tensors in input order. A single-file input gives
     * PREFIX-00001-of-00001.gguf. Without it a split input gives one file. */
    bool keep_split;
    mf_mix_rules mix_rules;    /* whose type choices (default: c392e509's and ecbcb7ea's) */
} mf_quantize_opts;

/* Defaults: the given ftype, one thread, no imatrix, no overrides. */
MF_API void mf_quantize_opts_init(mf_quantize_opts *o, mf_ftype ftype);

/* One tensor, reported in output order once it is done. */
typedef struct mf_quant_tensor_report {
    const char *name;
    mf_dtype src, dst;
    int64_t ne[4];             /* ggml order (ne[0] fastest) */
    uint64_t nelems, src_bytes, dst_bytes;
    bool converted;            /* false: copied as it is */
    bool fallback;             /* rows did not fit the mix's type */
    bool imatrix;              /* quantized with importance weights */
    /* dry run, converted tensors: dequantize(quantize(x)) against x */
    double rmse, max_abs, cosine;
    bool nonfinite;            /* NaN/inf in the output: a real run refuses it */
    int n_dims;                /* ggml_n_dims of ne (trailing 1s do not count) */
} mf_quant_tensor_report;

typedef struct mf_quantize_result {
    size_t n_tensors, n_converted, n_fallback, n_k_quantized;
    uint64_t n_params;
    uint64_t in_tensor_bytes, out_tensor_bytes;
    uint64_t out_file_bytes;   /* exact, also for a dry run */
    double bpw;                /* 8 * out_tensor_bytes / n_params */
    size_t imatrix_entries;    /* entries loaded (0: no imatrix) */
    size_t imatrix_used;       /* tensors quantized with one */
} mf_quantize_result;

/* Receives each tensor's report (pointers valid during the call only);
 * non-zero cancels (MF_ERR_CANCELLED). */
typedef int (*mf_quant_report_fn)(void *user, const mf_quant_tensor_report *r);

/* Quantizes in_path (GGUF) to out_path (ignored, may be NULL, for a dry
 * run). on_tensor and res may be NULL. opts must not be NULL (it carries
 * the ftype). Thread-safe (uses opts->nthreads worker threads). */
MF_API int mf_quantize_file(const char *in_path, const char *out_path,
                            const mf_quantize_opts *opts, mf_quant_report_fn on_tensor,
                            void *user, mf_quantize_result *res, mf_status *st);

#ifdef __cplusplus
}
#endif
#endif /* MFMT_QUANTIZE_H */
