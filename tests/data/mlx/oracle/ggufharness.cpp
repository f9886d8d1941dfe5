// ggufharness.cpp - MLX's own GGUF block extraction (mlx/io/gguf_quants.cpp,
// cut out unchanged by build_ggufharness.sh) over one tensor's raw blocks.
// usage: ggufharness TYPE NVALUES IN OUT   (TYPE q4_0|q4_1|q8_0; IN: the
// tensor's ggml blocks; OUT: the uint32 weights MLX makes, then the float16
// scales, then the float16 biases)
#include "mlx_gguf_quants.inc"

#include <cstdio>
#include <string>
#include <vector>

using namespace mlx::core;

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  std::string type = argv[1];
  size_t n = std::stoull(argv[2]), blocks = n / 32;
  size_t bsize = type == "q4_0" ? 18 : type == "q4_1" ? 20 : 34;
  size_t wbytes = type == "q8_0" ? n : n / 2;
  std::vector<uint8_t> in(blocks * bsize), w(wbytes);
  std::vector<float16_t> s(blocks), b(blocks);
  FILE* f = std::fopen(argv[3], "rb");
  if (!f || std::fread(in.data(), 1, in.size(), f) != in.size()) return 1;
  std::fclose(f);
  gguf_tensor t{in.data()};
  array wa{w.data(), wbytes / 4}, sa{s.data(), blocks}, ba{b.data(), blocks};
  if (type == "q4_0") extract_q4_0_data(t, wa, sa, ba);
  else if (type == "q4_1") extract_q4_1_data(t, wa, sa, ba);
  else extract_q8_0_data(t, wa, sa, ba);
  FILE* o = std::fopen(argv[4], "wb");
  std::fwrite(w.data(), 1, w.size(), o);
  std::fwrite(s.data(), 2, s.size(), o);
  std::fwrite(b.data(), 2, b.size(), o);
  std::fclose(o);
  return 0;
}
