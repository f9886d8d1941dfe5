/* dequantize.h - a model's tensors written as plain floats to safetensors:
 * every float or ggml block tensor becomes F32, F16 or BF16 (values as
 * ggml's to_float gives them), integer and bool tensors are copied; metadata is
 * kept as safetensors' string map where it fits. Quantization loss is not
 * undone: the values are the quantized ones, stored wider. */
#ifndef MF_DEQUANTIZE_H
#define MF_DEQUANTIZE_H
#include "core/core.h"

typedef struct mf_dequantize_result {
    size_t n_tensors, n_converted, n_copied;
    size_t meta_kept, meta_skipped; /* skipped: long arrays, nested arrays, invalid UTF-8 */
    uint64_t out_bytes;
} mf_dequantize_result;

/* Arrays with at most this many items are kept (as JSON text). */
#define MF_DEQUANT_MAX_META_ARRAY 64

/* dtype: MF_F32, MF_F16 or MF_BF16. progress: input bytes processed. */
int mf_dequantize_file(const char *in_path, const char *out_path, mf_dtype dtype,
                       void (*progress)(void *ctx, uint64_t bytes), void *progress_ctx,
                       mf_dequantize_result *res, mf_status *st);

/* The text a metadata value is kept as; false when it is not kept.
 * *out is malloc'd. */
bool mf_meta_value_text(const mf_value *v, char **out, size_t *len);

#endif /* MF_DEQUANTIZE_H */
