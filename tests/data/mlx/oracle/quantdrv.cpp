// quantdrv.cpp - mlx::core::quantize (libmlx, CPU device) over a raw input,
// written as qharness writes it: packed codes, then scales, then biases.
// usage: quantdrv DTYPE BITS GROUP IN OUT   (DTYPE f32|f16|bf16)
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "mlx/mlx.h"

namespace mx = mlx::core;

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  std::string dt = argv[1];
  int bits = std::stoi(argv[2]), gs = std::stoi(argv[3]);
  std::ifstream f(argv[4], std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  mx::Dtype t = dt == "f16" ? mx::float16 : dt == "bf16" ? mx::bfloat16 : mx::float32;
  int n = int(raw.size() / mx::size_of(t));
  mx::set_default_device(mx::Device::cpu);
  mx::array w = mx::view(mx::array(reinterpret_cast<const uint8_t*>(raw.data()), {int(raw.size())}, mx::uint8), t);
  w = mx::reshape(w, {1, n});  // quantize wants a matrix: one row of every value
  auto q = mx::quantize(w, gs, bits, "affine", std::nullopt, mx::Device::cpu);
  mx::eval(q);
  FILE* out = fopen(argv[5], "wb");
  for (auto& a : q) {
    mx::array c = mx::contiguous(a);
    c.eval();
    fwrite(c.data<char>(), 1, c.nbytes(), out);
  }
  fclose(out);
  return 0;
}
