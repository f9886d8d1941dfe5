// driver.cpp - computes run_mlx_lm.py's plan.json with MLX's C++ core:
// each array's expression (load from safetensors, astype, quantize,
// dequantize) through mlx::core, each file saved by mlx::core::save_safetensors
// with the plan's metadata, arrays inserted in mlx_lm's dict order (as
// the Python binding fills its std::unordered_map).
// usage: driver PLAN.json OUT_DIR
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "mlx/mlx.h"

using json = nlohmann::json;
namespace mx = mlx::core;

static std::map<std::string, std::unordered_map<std::string, mx::array>> loaded;

static mx::Dtype dtype_of(const std::string& n) {
  if (n == "float16") return mx::float16;
  if (n == "bfloat16") return mx::bfloat16;
  if (n == "float32") return mx::float32;
  if (n == "uint32") return mx::uint32;
  throw std::runtime_error("dtype " + n);
}

static mx::array eval_expr(const json& e) {
  std::string op = e[0];
  if (op == "load") {
    std::string path = e[1];
    if (!loaded.count(path))
      loaded[path] = mx::load_safetensors(path, mx::Device::cpu).first;
    return loaded[path].at(e[2].get<std::string>());
  }
  if (op == "astype") return mx::astype(eval_expr(e[1]), dtype_of(e[2]), mx::Device::cpu);
  if (op == "quantize") {
    auto parts = mx::quantize(eval_expr(e[1]), e[2].get<int>(), e[3].get<int>(), "affine",
                              std::nullopt, mx::Device::cpu);
    return parts.at(e[4].get<int>());
  }
  if (op == "stack") {  // sanitize's mx.stack of the experts
    std::vector<mx::array> parts;
    for (size_t i = 1; i < e.size(); i++) parts.push_back(eval_expr(e[i]));
    return mx::stack(parts, 0, mx::Device::cpu);
  }
  if (op == "dequantize")
    return mx::dequantize(eval_expr(e[1]), eval_expr(e[2]), eval_expr(e[3]), e[4].get<int>(),
                          e[5].get<int>(), "affine", std::nullopt, std::nullopt,
                          mx::Device::cpu);
  throw std::runtime_error("op " + op);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  mx::set_default_device(mx::Device::cpu);
  std::ifstream f(argv[1]);
  json plan = json::parse(f);
  for (auto& file : plan) {
    std::unordered_map<std::string, mx::array> arrays;
    for (auto& a : file["arrays"]) {
      mx::array v = eval_expr(a["expr"]);
      arrays.insert({a["name"].get<std::string>(), v});
    }
    std::unordered_map<std::string, std::string> meta;
    for (auto& [k, v] : file["metadata"].items()) meta[k] = v.get<std::string>();
    mx::save_safetensors(std::string(argv[2]) + "/" + file["file"].get<std::string>(), arrays,
                         meta);
  }
  return 0;
}
