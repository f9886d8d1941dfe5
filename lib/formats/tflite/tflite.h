/* tflite.h - what the TFLite reader offers beyond the uniform view. */
#ifndef MF_TFLITE_H
#define MF_TFLITE_H
#include "core/core.h"

/* A tensor's QuantizationParameters (schema.fbs): real = scale * (q -
 * zero_point), per tensor (one scale) or per channel along
 * quantized_dimension. Arrays point into the file's mapping. */
typedef struct mf_tflite_quant {
    uint32_t n_scale, n_zero_point;
    const uint8_t *scale;      /* n_scale little-endian float32 */
    const uint8_t *zero_point; /* n_zero_point little-endian int64 */
    int32_t quantized_dimension;
} mf_tflite_quant;

/* 1 and *out filled when tensor t of model m is a quantized TFLite tensor,
 * 0 when it is not quantized or not from a TFLite file. */
int mf_tflite_quantization(const mf_model *m, const mf_tensor *t, mf_tflite_quant *out);
float mf_tflite_quant_scale(const mf_tflite_quant *q, uint32_t i);
int64_t mf_tflite_quant_zero_point(const mf_tflite_quant *q, uint32_t i);
#endif
