/* dequantize.h - a model's tensors written as plain floats to safetensors:
 * every float or ggml block tensor becomes F32, F16 or BF16 (values as
 * ggml's to_float gives them), integer and bool tensors are copied; metadata is
 * kept as safetensors' string map where it fits. Quantization loss is not
 * undone: the values are the quantized ones, stored wider. */
#ifndef MF_DEQUANTIZE_H
#define MF_DEQUANTIZE_H
#include "core/core.h"

/* Arrays with at most this many items are kept (as JSON text). */
#define MF_DEQUANT_MAX_META_ARRAY 64

/* The text a metadata value is kept as; false when it is not kept.
 * *out is malloc'd. */
bool mf_meta_value_text(const mf_value *v, char **out, size_t *len);

#endif /* MF_DEQUANTIZE_H */
