/* quant.h - ggml block quantization kernels (internal API of libmfmt).
 *
 * Every quantizer gives the same bytes as llama.cpp's
 * ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, imatrix), and every
 * dequantizer the same floats as ggml's type_traits[type].to_float, bit for
 * bit, on x86-64 (see doc/quant.md for the reference commit and the rules
 * that keep the bits identical: no FMA contraction, ggml's operation order,
 * ggml's rounding helpers). */
#ifndef MF_QUANT_H
#define MF_QUANT_H
#include "core/core.h"

/* true if mfmt can quantize to / dequantize from dt */
bool mf_can_quantize(mf_dtype dt);
bool mf_can_dequantize(mf_dtype dt);
/* Quantizes nrows rows of n_per_row floats (row-major) into dst (row_bytes each).
 * imatrix: NULL or n_per_row importance weights, used as ggml's quantize_chunk uses them.
 * Returns 0, or -1 if dt unsupported or n_per_row not a block multiple. Thread-safe. */
int mf_quantize_rows(mf_dtype dt, const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix);
/* Dequantizes n elements (block multiple) of dt from src into dst (also for F32/F16/BF16 and plain ints? at least F32/F16/BF16). */
int mf_dequantize_row(mf_dtype dt, const void *src, float *dst, int64_t n);
/* true when ggml refuses to quantize dt without an importance matrix (IQ2_XXS, IQ2_XS, IQ1_S) */
bool mf_quant_requires_imatrix(mf_dtype dt);

/* Like mf_quantize_rows, with the rows split across up to nthreads threads
 * (nthreads <= 1: the calling thread only; at most 64). The output does not
 * depend on nthreads: rows are quantized independently. A thread that cannot
 * be started has its rows done by the calling thread. Returns 0 or -1 as above. */
int mf_quantize_rows_mt(mf_dtype dt, const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix,
                        int nthreads);

#endif /* MF_QUANT_H */
