/* quantize.h - GGUF to GGUF quantization as llama-quantize does it: the
 * mix's type per tensor (quant_mix.h), ggml's quantizers (quant/quant.h),
 * the importance matrix (imatrix.h), metadata copied with general.file_type
 * and general.quantization_version set. Streams one tensor at a time (in
 * row chunks), writes atomically. A dry run measures the error of every
 * quantized tensor instead of writing. */
#ifndef MF_QUANTIZE_H
#define MF_QUANTIZE_H
#include "ops/quant_mix.h"

typedef struct mf_quantize_opts {
    mf_ftype ftype;
    int nthreads;              /* <= 1: the calling thread only */
    const char *imatrix_path;  /* NULL: none */
    bool allow_requantize;     /* dequantize already-quantized tensors first */
    bool pure, leave_output;
    mf_dtype output_type;      /* MF_DTYPE_INVALID: the mix decides */
    mf_dtype token_embd_type;  /* likewise */
    bool dry_run;              /* nothing written; error statistics instead */
    /* progress: called with the input bytes just processed */
    void (*progress)(void *ctx, uint64_t bytes);
    void *progress_ctx;
} mf_quantize_opts;

void mf_quantize_opts_init(mf_quantize_opts *o, mf_ftype ftype);

/* One tensor, reported in output order once it is done. */
typedef struct mf_quant_tensor_report {
    const char *name;
    mf_dtype src, dst;
    int64_t ne[4];             /* ggml order */
    uint64_t nelems, src_bytes, dst_bytes;
    bool converted;            /* false: copied as it is */
    bool fallback;             /* rows did not fit the mix's type */
    bool imatrix;              /* quantized with importance weights */
    /* dry run, converted tensors: dequantize(quantize(x)) against x */
    double rmse, max_abs, cosine;
    bool nonfinite;            /* NaN/inf in the output: a real run refuses it */
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

typedef void (*mf_quant_report_fn)(void *ctx, const mf_quant_tensor_report *r);

int mf_quantize_file(const char *in_path, const char *out_path, const mf_quantize_opts *o,
                     mf_quant_report_fn on_tensor, void *ctx, mf_quantize_result *res,
                     mf_status *st);

#endif /* MF_QUANTIZE_H */
