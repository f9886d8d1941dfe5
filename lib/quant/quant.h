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

/* Like mf_quantize_rows_mt, from stored rows of src_dt (F32, F16, BF16 or
 * any type mfmt dequantizes, row_bytes of src_dt each, any alignment): each
 * thread converts a few rows at a time to F32 and quantizes them while they
 * are in its cache. Same output as converting the whole input first. */
int mf_quantize_rows_from(mf_dtype dt, mf_dtype src_dt, const void *src, void *dst, int64_t nrows, int64_t n_per_row,
                          const float *imatrix, int nthreads);

/* The same work started on nthreads new threads, so the caller can do
 * something else (write the previous output) meanwhile; src and dst must
 * stay valid until mf_quant_task_wait, which joins the threads and returns
 * what mf_quantize_rows_from would have (0 or -1; every started task must be
 * waited for). Start returns -1 (and *out NULL) on bad arguments or OOM. */
typedef struct mf_quant_task mf_quant_task;
int mf_quant_task_start(mf_quant_task **out, mf_dtype dt, mf_dtype src_dt, const void *src, void *dst, int64_t nrows,
                        int64_t n_per_row, const float *imatrix, int nthreads);
int mf_quant_task_wait(mf_quant_task *k);

/* ggml_validate_row_data on nrows quantized rows: the first row with a NaN
 * or infinite fp16 scale (or value, for F32/F16/BF16), or -1 when all are
 * finite (or the arguments are not a whole number of blocks). */
int64_t mf_quant_first_invalid_row(mf_dtype dt, const void *q, int64_t nrows, int64_t n_per_row);

/* The vector kernels in use (chosen at run time from CPUID; none when the
 * environment has MFMT_NO_SIMD set): MF_QUANT_* bits, 0 for scalar only.
 * mf_quant_set_simd(allowed) limits the kernels to those MF_QUANT_* bits
 * from then on (0: scalar code only; MF_QUANT_ALL: whatever the CPU has),
 * for tests and benchmarks; returns the previous mask. The output bytes
 * never depend on it. Not to be called while another thread quantizes. */
enum { MF_QUANT_AVX2 = 1, MF_QUANT_F16C = 2, MF_QUANT_AVX512 = 4, MF_QUANT_ALL = 0xff };
unsigned mf_quant_simd_level(void);
unsigned mf_quant_set_simd(unsigned allowed);

#endif /* MF_QUANT_H */
