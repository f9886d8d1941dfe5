#!/bin/sh
# Builds qharness from MLX's own CPU quantizer: the quantize<T, U> template
# is cut out of mlx/backend/cpu/quantized.cpp unchanged (awk), with MLX's
# headers for its types (float16_t, bfloat16_t) and helpers.
set -e
SRC=${1:-../src}
{
  echo '#include "mlx/types/half_types.h"'
  echo '#include "mlx/backend/common/quantized.h"'
  echo '#include <algorithm>'
  echo '#include <cmath>'
  echo '#include <cstdint>'
  echo '#include <limits>'
  echo 'namespace mlx::core {'
  echo 'inline bool is_power_of_2(int n) { return ((n & (n - 1)) == 0) && n != 0; }'
  awk '/^template <typename T, typename U>$/{getline l; if (l ~ /^void quantize\($/) {p=1; print; print l; next}} p{print} p && /^}$/{exit}' "$SRC/mlx/backend/cpu/quantized.cpp"
  echo '} // namespace mlx::core'
} > mlx_cpu_quantize.inc
g++ -O3 -Wno-psabi -std=gnu++20 -march=x86-64 -mtune=generic -DNDEBUG -I"$SRC" qharness.cpp -o qharness
