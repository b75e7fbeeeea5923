#include "model/architecture.h"

#include <fmt/ranges.h>

#include "base/error.h"
#include "base/json.h"
#include "gguf/gguf.h"
#include "kernels/quant.h"

namespace skiff {
namespace {

std::vector<const Architecture*> all_architectures() {
  return {&llama_architecture(),  &qwen2_architecture(),  &qwen3_architecture(),
          &gemma2_architecture(), &gemma3_architecture(), &phi3_architecture()};
}

}  // namespace

const Architecture& gguf_architecture(const std::string& name) {
  std::vector<std::string> names;
  for (const Architecture* a : all_architectures()) {
    if (a->gguf_name == name) return *a;
    names.push_back(a->gguf_name);
  }
  fail("architecture '{}' is not supported (supported: {})", name, fmt::join(names, ", "));
}

const Architecture& hf_architecture(const std::string& model_type) {
  std::vector<std::string> types;
  for (const Architecture* a : all_architectures())
    for (const std::string& t : a->hf_model_types) {
      if (t == model_type) return *a;
      types.push_back(t);
    }
  fail("model_type '{}' is not supported (supported: {})", model_type, fmt::join(types, ", "));
}

std::vector<bool> sliding_every(int n_layers, int period) {
  if (period < 1) fail("a sliding-window pattern of period {} is not positive", period);
  std::vector<bool> sliding(n_layers);
  for (int l = 0; l < n_layers; ++l) sliding[l] = l % period != period - 1;
  return sliding;
}

std::vector<float> gguf_vector(const gguf::GgufFile& f, const std::string& name, int64_t n) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  if (!t) fail("missing tensor '{}'", name);
  if (!t->readable) fail("tensor '{}' has type {}, which skiff cannot read", name, t->ggml_type);
  if (t->n_elements() != n) fail("tensor '{}' has {} elements, expected {}", name, t->n_elements(), n);
  std::vector<float> v(n);
  dequantize_row(t->type, t->data, v.data(), n);
  return v;
}

int bounded_int(int64_t v, const char* what) {
  if (v < 0 || v > (int64_t{1} << 30)) fail("{} {} is out of range", what, v);
  return static_cast<int>(v);
}

int64_t hf_int(const nlohmann::json& j, const char* key, int64_t fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) fail("'{}' must be an integer, got {}", key, json_excerpt(*it));
  return it->get<int64_t>();
}

double hf_number(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number()) fail("'{}' must be a number, got {}", key, json_excerpt(*it));
  return it->get<double>();
}

}  // namespace skiff
