#include "model/architecture.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "base/error.h"
#include "base/json.h"
#include "gguf/gguf.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

std::vector<const Architecture*> all_architectures() {
  return {&llama_architecture(),    &qwen2_architecture(),    &qwen3_architecture(), &gemma2_architecture(),
          &gemma3_architecture(),   &phi3_architecture(),     &qwen2moe_architecture(), &qwen3moe_architecture(),
          &olmoe_architecture(),    &granitemoe_architecture(), &gpt_oss_architecture()};
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

const Architecture& hf_architecture(const nlohmann::json& config) {
  const std::vector<std::string> classes = string_array_field(config, "architectures");
  const std::string model_type = string_field(config, "model_type", "");
  std::vector<std::string> known_classes, known_types;
  for (const std::string& c : classes)
    for (const Architecture* a : all_architectures())
      if (std::find(a->hf_classes.begin(), a->hf_classes.end(), c) != a->hf_classes.end()) return *a;
  for (const Architecture* a : all_architectures()) {
    if (std::find(a->hf_model_types.begin(), a->hf_model_types.end(), model_type) != a->hf_model_types.end()) return *a;
    known_classes.insert(known_classes.end(), a->hf_classes.begin(), a->hf_classes.end());
    known_types.insert(known_types.end(), a->hf_model_types.begin(), a->hf_model_types.end());
  }
  if (classes.empty() && model_type.empty())
    fail("names no 'architectures' or 'model_type' (supported: {}; or model_type {})", fmt::join(known_classes, ", "),
         fmt::join(known_types, ", "));
  fail("architectures [{}] with model_type '{}' are not supported (supported: {}; or model_type {})",
       fmt::join(classes, ", "), model_type, fmt::join(known_classes, ", "), fmt::join(known_types, ", "));
}

void start_layers(ModelConfig& c) {
  // Bounded before the descriptions are allocated; validate() checks the rest once they are filled.
  if (c.n_layers <= 0 || c.n_layers > ModelConfig::kMaxLayers)
    fail("model config: layer count must be in 1..{}, got {}", ModelConfig::kMaxLayers, c.n_layers);
  LayerSpec layer;
  layer.attention.rope.theta = c.rope_theta;
  c.layers.assign(c.n_layers, layer);
}

std::vector<bool> sliding_every(int n_layers, int period) {
  if (period < 1) fail("a sliding-window pattern of period {} is not positive", period);
  std::vector<bool> sliding(n_layers);
  for (int l = 0; l < n_layers; ++l) sliding[l] = l % period != period - 1;
  return sliding;
}

void set_windows(ModelConfig& c, const std::vector<bool>& sliding, int window) {
  if (sliding.size() != c.layers.size()) fail("{} sliding-window flags for {} layers", sliding.size(), c.layers.size());
  for (size_t l = 0; l < sliding.size(); ++l) c.layers[l].attention.window = sliding[l] ? window : 0;
}

void hf_sliding_windows(const nlohmann::json& j, ModelConfig& c, int default_period) {
  const int window = bounded_int(hf_int(j, "sliding_window", 0), "sliding_window");
  if (window <= 0) return;
  // transformers >= 4.53 lists each layer's kind; older configs give a period.
  std::vector<bool> sliding;
  if (const auto types = j.find("layer_types"); types != j.end() && types->is_array()) {
    if (types->size() != static_cast<size_t>(c.n_layers))
      fail("'layer_types' has {} entries for {} layers", types->size(), c.n_layers);
    for (const auto& t : *types) sliding.push_back(t == "sliding_attention");
  } else {
    sliding = sliding_every(c.n_layers,
                            bounded_int(hf_int(j, "sliding_window_pattern", default_period), "sliding_window_pattern"));
  }
  set_windows(c, sliding, window);
}

void hf_window_on_every_layer(const nlohmann::json& j, ModelConfig& c) {
  const int window = bounded_int(hf_int(j, "sliding_window", 0), "sliding_window");
  set_windows(c, std::vector<bool>(c.n_layers, true), window);
}

int common_window(const ModelConfig& c) {
  int window = 0;
  for (const LayerSpec& layer : c.layers) {
    const int w = layer.attention.window;
    if (w > 0 && window > 0 && w != window) fail("layers with windows of {} and {} cannot be written to GGUF", window, w);
    if (w > 0) window = w;
  }
  return window;
}

void set_local_rope(ModelConfig& c, float theta) {
  for (LayerSpec& layer : c.layers)
    if (layer.attention.window > 0) layer.attention.rope = {theta, false};
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
