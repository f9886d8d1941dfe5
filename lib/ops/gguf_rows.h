/* gguf_rows.h - which tensors of the Hugging Face directory the GGUF ->
 * HF converter (lib/ops/hfconv/gguf2hf.c) writes from a GGUF are whole rows
 * of one GGUF tensor, and in which order: what an MLX writer needs to carry
 * a GGUF's quantized blocks over without dequantizing them (doc/mlx.md,
 * "GGUF Q4_0/Q4_1/Q8_0 without loss"). */
#ifndef MF_OPS_GGUF_ROWS_H
#define MF_OPS_GGUF_ROWS_H
#include "core/core.h"

/* One such tensor: Hugging Face name, its GGUF tensor (of `m`), and
 * `heads` > 0 when its rows are LlamaModel.permute's undone with that many
 * heads (row (h*2+k)*half+j of the output is row (h*half+j)*2+k of the
 * GGUF tensor, half = rows / heads / 2), 0 when the rows are the GGUF's in
 * order. Called for tensors of two dimensions, written as they are
 * otherwise (R_PLAIN) or unpermuted (R_UNPERMUTE_Q/K); others are not
 * reported. */
typedef int (*mf_gguf_row_fn)(void *ctx, const char *hf_name, const mf_tensor *src,
                              int64_t heads, mf_status *st);

/* Plans the conversion of GGUF model `m` (opened by the caller) as
 * mf_convert_to_hf would and calls fn for each such tensor; 0, or -1 with
 * st set (fn's failures are passed on). */
int mf_gguf_hf_rows(mf_model *m, const char *path, mf_gguf_row_fn fn, void *ctx, mf_status *st);

#endif
