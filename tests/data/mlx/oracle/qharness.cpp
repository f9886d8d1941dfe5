// qharness.cpp - MLX's own CPU affine quantizer (mlx/backend/cpu/quantized.cpp
// quantize<T, U>, compiled from MLX's source as it is) over raw input files.
// usage: qharness DTYPE BITS GROUP IN OUT   (DTYPE f32|f16|bf16; IN: raw LE
// values; OUT: packed codes, then scales, then biases in DTYPE)
#include "mlx_cpu_quantize.inc"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlx::core;

template <typename T>
static int run(int bits, int gs, const std::vector<char>& in, FILE* out) {
  size_t n = in.size() / sizeof(T);
  const T* w = reinterpret_cast<const T*>(in.data());
  size_t groups = n / gs;
  std::vector<T> scales(groups), biases(groups);
  size_t packed_bytes = n * bits / 8;
  std::vector<uint8_t> packed(packed_bytes + 8, 0);
  if (is_power_of_2(bits)) {
    quantize<T, uint32_t>(w, reinterpret_cast<uint32_t*>(packed.data()),
                          scales.data(), biases.data(), bits, gs, n);
  } else {
    quantize<T, uint8_t>(w, packed.data(), scales.data(), biases.data(), bits,
                         gs, n);
  }
  fwrite(packed.data(), 1, packed_bytes, out);
  fwrite(scales.data(), sizeof(T), groups, out);
  fwrite(biases.data(), sizeof(T), groups, out);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  std::string dt = argv[1];
  int bits = atoi(argv[2]), gs = atoi(argv[3]);
  FILE* f = fopen(argv[4], "rb");
  if (!f) return 2;
  std::vector<char> in;
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof(buf), f)) > 0) in.insert(in.end(), buf, buf + k);
  fclose(f);
  FILE* out = fopen(argv[5], "wb");
  if (!out) return 2;
  int rc = dt == "f32" ? run<float>(bits, gs, in, out)
         : dt == "f16" ? run<float16_t>(bits, gs, in, out)
         : dt == "bf16" ? run<bfloat16_t>(bits, gs, in, out) : 2;
  fclose(out);
  return rc;
}
