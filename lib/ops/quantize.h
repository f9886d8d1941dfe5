/* quantize.h - GGUF to GGUF quantization as llama-quantize does it: the
 * mix's type per tensor (quant_mix.h), ggml's quantizers (quant/quant.h),
 * the importance matrix (imatrix.h), metadata copied with general.file_type
 * and general.quantization_version set. Streams one tensor at a time (in
 * row chunks), writes atomically. A dry run measures the error of every
 * quantized tensor instead of writing. */
#ifndef MF_QUANTIZE_H
#define MF_QUANTIZE_H
#include "ops/quant_mix.h"

#endif /* MF_QUANTIZE_H */
