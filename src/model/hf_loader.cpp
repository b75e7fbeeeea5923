// Llama models from Hugging Face directories: config.json plus
// model.safetensors or shards listed in model.safetensors.index.json.
// HF checkpoints keep Q/K rows in rotate-half order, so the model applies
// RoPE in that style instead of permuting rows (no copy, same logits).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "base/error.h"
#include "base/json.h"
#include "model/loader.h"
#include "safetensors/safetensors.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path.string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json j;
  try {
    j = parse_json(text);
  } catch (const Error& e) {
    fail("{}: {}", path.string(), e.what());
  }
  if (!j.is_object()) fail("{}: not a JSON object", path.string());
  return j;
}

int int_field(const json& j, const char* key, int fallback) {
  if (!j.contains(key) || j[key].is_null()) {
    if (fallback < 0) fail("missing '{}'", key);
    return fallback;
  }
  if (!j[key].is_number_integer()) fail("'{}' is not an integer", key);
  const int64_t v = j[key].get<int64_t>();
  if (v <= 0 || v > (1 << 30)) fail("'{}' = {} is out of range", key, v);
  return static_cast<int>(v);
}

float float_field(const json& j, const char* key, float fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_number()) fail("'{}' is not a number", key);
  return j[key].get<float>();
}

ModelConfig config_from_hf(const json& j) {
  const std::string type = string_field(j, "model_type", "");
  if (type != "llama" && type != "mistral")
    fail("model_type '{}' is not supported (supported: llama, mistral)", type);
  ModelConfig c;
  c.arch = "llama";
  c.name = string_field(j, "_name_or_path", type);
  c.n_layers = int_field(j, "num_hidden_layers", -1);
  c.dim = int_field(j, "hidden_size", -1);
  c.n_heads = int_field(j, "num_attention_heads", -1);
  c.n_kv_heads = int_field(j, "num_key_value_heads", c.n_heads);
  c.head_dim = int_field(j, "head_dim", c.dim / c.n_heads);
  c.ffn_dim = int_field(j, "intermediate_size", -1);
  c.vocab_size = int_field(j, "vocab_size", -1);
  c.max_ctx = int_field(j, "max_position_embeddings", 2048);
  c.norm_eps = float_field(j, "rms_norm_eps", 1e-6f);
  c.rope_dim = c.head_dim;
  c.rope_style = RopeStyle::kRotateHalf;
  c.tied_output = bool_field(j, "tie_word_embeddings", false);
  // transformers >= 5 writes "rope_parameters" with rope_theta inside; older
  // versions a top-level "rope_theta" and an optional "rope_scaling".
  const json* rope = nullptr;
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (!rope && j.contains(key) && j[key].is_object()) rope = &j[key];
  c.rope_theta = float_field(j, "rope_theta", 10000.0f);
  if (rope) c.rope_theta = float_field(*rope, "rope_theta", c.rope_theta);
  if (rope) {
    const json& rs = *rope;
    const std::string kind = string_field(rs, "rope_type", string_field(rs, "type", ""));
    const float factor = float_field(rs, "factor", 1.0f);
    if (kind == "llama3") {
      c.rope_freq_factors = llama3_rope_factors(
          c.rope_dim, c.rope_theta, factor, float_field(rs, "low_freq_factor", 1.0f),
          float_field(rs, "high_freq_factor", 4.0f),
          int_field(rs, "original_max_position_embeddings", 8192));
    } else if (kind == "linear") {
      c.rope_freq_factors.assign(c.rope_dim / 2, factor);
    } else if (kind != "default" && !kind.empty()) {
      fail("rope_scaling type '{}' is not supported", kind);
    }
  }
  c.validate();
  return c;
}

std::vector<fs::path> safetensors_files(const fs::path& dir) {
  if (fs::exists(dir / "model.safetensors")) return {dir / "model.safetensors"};
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index)) fail("{}: no model.safetensors or model.safetensors.index.json", dir.string());
  const json j = read_json(index);
  if (!j.contains("weight_map") || !j["weight_map"].is_object())
    fail("{}: no weight_map", index.string());
  std::set<std::string> shards;
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) fail("{}: weight_map['{}'] is not a file name", index.string(), name);
    const std::string shard = file.get<std::string>();
    if (shard.find('/') != std::string::npos) fail("{}: shard name '{}' leaves the directory", index.string(), shard);
    shards.insert(shard);
  }
  std::vector<fs::path> paths;
  for (const std::string& s : shards) paths.push_back(dir / s);
  return paths;
}

// HF tensor name -> GGUF tensor name; empty for tensors the model does not use.
std::string gguf_name(const std::string& hf) {
  static const std::pair<const char*, const char*> kLayer[] = {
      {"input_layernorm", "attn_norm"},       {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},         {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"},    {"post_attention_layernorm", "ffn_norm"},
      {"mlp.gate_proj", "ffn_gate"},          {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"}};
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  static const std::regex kLayerName(R"(model\.layers\.(\d+)\.(.+)\.weight)");
  std::smatch m;
  if (std::regex_match(hf, m, kLayerName))
    for (const auto& [from, to] : kLayer)
      if (m[2] == from) return "blk." + m[1].str() + "." + to + ".weight";
  return "";
}

DType dtype_of(const std::string& name, const std::string& st_dtype) {
  if (st_dtype == "F32") return DType::F32;
  if (st_dtype == "F16") return DType::F16;
  if (st_dtype == "BF16") return DType::BF16;
  fail("tensor '{}' has dtype {} (supported: F32, F16, BF16)", name, st_dtype);
}

}  // namespace

std::unique_ptr<Model> load_hf_model(const std::string& dir_name, const LoadOptions& options) {
  const fs::path dir(dir_name);
  ModelConfig config;
  try {
    config = config_from_hf(read_json(dir / "config.json"));
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(dir_name)) throw;  // read_json named the file
    fail("{}: {}", (dir / "config.json").string(), e.what());
  }
  TensorMap tensors;
  ModelWeights weights;
  for (const fs::path& path : safetensors_files(dir)) {
    auto file = std::make_shared<const safetensors::SafetensorsFile>(path.string(), options.weights);
    for (const auto& [name, t] : file->tensors()) {
      const std::string gname = gguf_name(name);
      if (gname.empty()) continue;
      const DType type = dtype_of(name, t.dtype);
      // Kernels read elements in place; a misaligned tensor is copied once.
      const void* data = t.data;
      if (reinterpret_cast<uintptr_t>(data) % safetensors::dtype_size(t.dtype) != 0) {
        auto copy = std::make_shared<std::vector<uint8_t>>(t.data, t.data + t.nbytes);
        data = copy->data();
        weights.storage.push_back(copy);
      }
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < t.shape.size(); ++d) rows *= t.shape[d];
      tensors[gname] = TensorRef{type, rows, t.shape.empty() ? 1 : t.shape.back(), data};
    }
    weights.storage.push_back(file);
  }
  if (!tensors.count("output.weight")) config.tied_output = true;
  try {
    ModelWeights built = build_weights(config, tensors);
    built.storage = std::move(weights.storage);
    return std::make_unique<Model>(std::move(config), std::move(built));
  } catch (const Error& e) {
    fail("{}: {}", dir_name, e.what());
  }
}

}  // namespace skiff
