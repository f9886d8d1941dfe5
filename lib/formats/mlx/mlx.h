/* mlx.h - MLX quantized models (mlx-lm's directories): the packed triples
 * the reader finds, and their dequantization for converters.
 *
 * MLX affine quantization (mlx.core.quantize): along the last axis, each
 * group of `group_size` values shares a scale s and a bias b; a value is
 * stored as an unsigned `bits`-bit code q and means s * q + b. The codes of
 * a row form a little-endian bit stream (code j at bits j*bits...), held in
 * uint32 words: `weight` is U32 [..., in * bits / 32], `scales` and
 * `biases` are [..., in / group_size] in the weights' float type. */
#ifndef MF_MLX_H
#define MF_MLX_H
#include "core/core.h"

typedef struct mf_mlx_quant {
    const mf_tensor *weight, *scales, *biases; /* in the model's table */
    int bits, group_size;
    int ndim;
    int64_t shape[MF_MAX_DIMS]; /* logical shape (C order) */
    mf_dtype dtype;             /* the scales' type: what MLX dequantizes to */
} mf_mlx_quant;

/* The quantized triples of an MLX model (0 for any other model). */
size_t mf_mlx_quants(const mf_model *m, const mf_mlx_quant **out);
/* The triple a tensor belongs to (as weight, scales or biases), or NULL. */
const mf_mlx_quant *mf_mlx_quant_of(const mf_model *m, const mf_tensor *t);

/* Streams the dequantized weight in C order, little-endian, as `out`
 * (F32, F16 or BF16; MF_DTYPE_INVALID = q->dtype).
 * Exactness: each value is computed as MLX's dequantize defines it, in the
 * scales' type with every operation rounded to nearest-even in that type
 * and never fused: t = round(s * q), w = round(t + b). (f16/bf16 operands:
 * the product is exact in float before its rounding, and the sum is exact
 * or too lopsided to meet a tie, so float arithmetic gives the IEEE
 * result.) Then w is converted to `out`: exactly for F32 or the same type,
 * round-to-nearest-even otherwise. */
int mf_mlx_dequantize(const mf_model *m, const mf_mlx_quant *q, mf_dtype out,
                      mf_sink_fn sink, void *ctx, mf_status *st);

/* For converters over the uniform view: a model whose tensor table is the
 * logical one. Every triple becomes one tensor named like its weight, of
 * the logical shape, in `out` (MF_DTYPE_INVALID: each triple's scales'
 * type), streamed through mf_mlx_dequantize; other tensors are listed as
 * they are. Metadata is shared with `src`, which must stay open until the
 * view is closed (mf_close). */
int mf_mlx_dequantized_view(const mf_model *src, mf_dtype out, mf_model **view,
                            mf_status *st);
/* The reader's logical_view hook (mf_model_logical_view_as): the view above
 * when the model has packed triples, else *view = NULL. */
int mf_mlx_logical_view(const mf_model *m, mf_dtype out, mf_model **view, mf_status *st);
#endif
