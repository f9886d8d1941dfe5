/* tensor_f32.h - a tensor's values as float32, whatever its dtype: the one
 * conversion that diff, dequantize and convert share. */
#ifndef MF_TENSOR_F32_H
#define MF_TENSOR_F32_H
#include "core/core.h"

/* Converts n elements of dt (canonical little-endian bytes) to floats;
 * n must be a whole number of blocks for ggml block types. */
int mf_convert_to_f32(mf_dtype dt, const uint8_t *src, float *dst, uint64_t n);
/* Reads the whole tensor as floats into a malloc'd array (one tensor in
 * memory; sizes checked first). */
int mf_tensor_read_f32(const mf_model *m, const mf_tensor *t, float **out, mf_status *st);
#endif
