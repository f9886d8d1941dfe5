#!/bin/sh
# Builds ggufharness from MLX's own GGUF loader: unpack_32_4 and
# extract_q4_0_data / extract_q4_1_data / extract_q8_0_data are cut out of
# mlx/io/gguf_quants.cpp unchanged (awk: from "void unpack_32_4" to the line
# before "void gguf_load_quantized"), with MLX's float16_t (mlx/types) and
# two small stand-ins for what they touch: gguf_tensor's weights_data and
# array's data<T>() / size().
#   sh build_ggufharness.sh MLX_SRC   (writes ./ggufharness)
set -e
SRC=${1:-../src}
{
  echo '#include "mlx/types/half_types.h"'
  echo '#include <algorithm>'
  echo '#include <cstdint>'
  echo '#include <cstring>'
  echo 'namespace mlx::core {'
  echo 'struct gguf_tensor { void* weights_data; };'
  echo 'struct array { void* p; size_t n; template <typename T> T* data() { return static_cast<T*>(p); } size_t size() const { return n; } };'
  awk '/^void unpack_32_4\(/{p=1} /^void gguf_load_quantized\(/{exit} p{print}' "$SRC/mlx/io/gguf_quants.cpp"
  echo '} // namespace mlx::core'
} > mlx_gguf_quants.inc
g++ -O2 -std=gnu++20 -I"$SRC" "$(dirname "$0")/ggufharness.cpp" -I. -o ggufharness
