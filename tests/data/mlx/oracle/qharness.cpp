// qharness.cpp - MLX's own CPU affine quantizer (mlx/backend/cpu/quantized.cpp
// quantize<T, U>, compiled from MLX's source as it is) over raw input files.
// usage: qharness DTYPE BITS GROUP IN OUT   (DTYPE f32|f16|bf16; IN: raw LE
// values; OUT: packed codes, then scales, then biases in DTYPE)
//        qharness cast FROM TO IN OUT         (astype through MLX's float16_t /
//                                             bfloat16_t conversions)
//        qharness dequant DTYPE BITS GROUP W S B OUT   (codes as T, * scale,
//                                             + bias, in MLX's T arithmetic)
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

static std::vector<char> slurp(const char* path) {
  std::vector<char> in;
  FILE* f = fopen(path, "rb");
  if (!f) return in;
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof(buf), f)) > 0) in.insert(in.end(), buf, buf + k);
  fclose(f);
  return in;
}

template <typename F, typename T>
static void cast_to(const std::vector<char>& in, FILE* out) {
  size_t n = in.size() / sizeof(F);
  const F* x = reinterpret_cast<const F*>(in.data());
  for (size_t i = 0; i < n; i++) {
    T y = static_cast<T>(static_cast<float>(x[i]));
    fwrite(&y, sizeof(T), 1, out);
  }
}

template <typename F>
static void cast_from(const std::string& to, const std::vector<char>& in, FILE* out) {
  if (to == "f32") cast_to<F, float>(in, out);
  else if (to == "f16") cast_to<F, float16_t>(in, out);
  else cast_to<F, bfloat16_t>(in, out);
}

template <typename T>
static void dequant(int bits, int gs, const std::vector<char>& w, const std::vector<char>& s,
                    const std::vector<char>& b, FILE* out) {
  const uint8_t* codes = reinterpret_cast<const uint8_t*>(w.data());
  const T* sc = reinterpret_cast<const T*>(s.data());
  const T* bi = reinterpret_cast<const T*>(b.data());
  size_t n = w.size() * 8 / bits;
  for (size_t j = 0; j < n; j++) {
    size_t bit = j * bits;
    unsigned v = codes[bit / 8] | (bit / 8 + 1 < w.size() ? codes[bit / 8 + 1] << 8 : 0);
    uint32_t q = (v >> (bit % 8)) & ((1u << bits) - 1);
    T qt = static_cast<T>(q);
    T t = qt * sc[j / gs];
    T o = t + bi[j / gs];
    fwrite(&o, sizeof(T), 1, out);
  }
}

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "cast") {
    std::string from = argv[2], to = argv[3];
    std::vector<char> in = slurp(argv[4]);
    FILE* out = fopen(argv[5], "wb");
    if (!out) return 2;
    if (from == "f32") cast_from<float>(to, in, out);
    else if (from == "f16") cast_from<float16_t>(to, in, out);
    else cast_from<bfloat16_t>(to, in, out);
    fclose(out);
    return 0;
  }
  if (argc == 9 && std::string(argv[1]) == "dequant") {
    std::string dt = argv[2];
    int bits = atoi(argv[3]), gs = atoi(argv[4]);
    std::vector<char> w = slurp(argv[5]), s = slurp(argv[6]), b = slurp(argv[7]);
    FILE* out = fopen(argv[8], "wb");
    if (!out) return 2;
    if (dt == "f32") dequant<float>(bits, gs, w, s, b, out);
    else if (dt == "f16") dequant<float16_t>(bits, gs, w, s, b, out);
    else dequant<bfloat16_t>(bits, gs, w, s, b, out);
    fclose(out);
    return 0;
  }
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
