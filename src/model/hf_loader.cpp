// Models from Hugging Face directories: config.json (hf_config.cpp) plus
// model.safetensors or shards listed in model.safetensors.index.json.
// HF checkpoints keep Q/K rows in rotate-half order, so the model applies
// RoPE in that style instead of permuting rows (no copy, same logits).
#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "base/error.h"
#include "base/json.h"
#include "model/architecture.h"
#include "model/loader.h"
#include "model/weights.h"
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

std::vector<fs::path> safetensors_files(const fs::path& dir) {
  if (fs::exists(dir / "model.safetensors")) return {dir / "model.safetensors"};
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index)) fail("{}: no model.safetensors or model.safetensors.index.json", dir.string());
  std::vector<std::string> shards;
  try {
    shards = safetensors::index_shards(read_json(index));
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(index.string())) throw;  // read_json named the file
    fail("{}: {}", index.string(), e.what());
  }
  std::vector<fs::path> paths;
  for (const std::string& s : shards) paths.push_back(dir / s);
  return paths;
}

// A layer's or expert's index; false when it does not fit an int (the
// tensor is then one the model does not use, as no layer has that index).
bool parse_index(const std::string& digits, int& out) {
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return error == std::errc() && end == digits.data() + digits.size();
}

// HF tensor name -> GGUF tensor name; empty for tensors the model does not use.
std::string gguf_name(const std::string& hf, const Architecture& arch) {
  static const std::pair<const char*, const char*> kLayer[] = {
      {"input_layernorm", "attn_norm"},       {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},         {"self_attn.v_proj", "attn_v"},
      {"self_attn.qkv_proj", "attn_qkv"},     {"self_attn.o_proj", "attn_output"},
      {"self_attn.q_norm", "attn_q_norm"},    {"self_attn.k_norm", "attn_k_norm"},
      {"post_attention_layernorm", "ffn_norm"}, {"mlp.gate_proj", "ffn_gate"},
      {"mlp.up_proj", "ffn_up"},              {"mlp.gate_up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"},
      // Mixtures of experts: routers, shared experts, stacked experts (Granite).
      {"mlp.gate", "ffn_gate_inp"},           {"block_sparse_moe.gate", "ffn_gate_inp"},
      {"block_sparse_moe.router.layer", "ffn_gate_inp"}, {"mlp.router", "ffn_gate_inp"},
      {"mlp.shared_expert.gate_proj", "ffn_gate_shexp"}, {"mlp.shared_expert.up_proj", "ffn_up_shexp"},
      {"mlp.shared_expert.down_proj", "ffn_down_shexp"}, {"mlp.shared_expert_gate", "ffn_gate_inp_shexp"},
      {"block_sparse_moe.input_linear", "ffn_gate_up_exps"}, {"block_sparse_moe.output_linear", "ffn_down_exps"}};
  // A tensor per expert: mlp.experts.E.gate_proj (Qwen-MoE, OLMoE), block_sparse_moe.experts.E.w1 (Mixtral).
  static const std::pair<const char*, const char*> kExpert[] = {
      {"gate_proj", "ffn_gate_exps"}, {"up_proj", "ffn_up_exps"}, {"down_proj", "ffn_down_exps"},
      {"w1", "ffn_gate_exps"},        {"w3", "ffn_up_exps"},      {"w2", "ffn_down_exps"}};
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  static const std::regex kLayerName(R"(model\.layers\.(\d+)\.(.+)\.(weight|bias))");
  // gpt-oss's tensors without a .weight/.bias suffix; its experts as the
  // checkpoint lays them out (x·W, gate and up interleaved: hf_tensors rewrites them).
  static const std::pair<const char*, const char*> kBare[] = {
      {"self_attn.sinks", "attn_sinks.weight"},
      {"mlp.experts.gate_up_proj", "ffn_gate_up_exps_xw.weight"},
      {"mlp.experts.gate_up_proj_bias", "ffn_gate_up_exps_xw.bias"},
      {"mlp.experts.down_proj", "ffn_down_exps_xw.weight"},
      {"mlp.experts.down_proj_bias", "ffn_down_exps.bias"},
      // OpenAI's releases: the same matrices as MXFP4 blocks and scales (model/hf_mxfp4.h).
      {"mlp.experts.gate_up_proj_blocks", "ffn_gate_up_exps.mxfp4_blocks"},
      {"mlp.experts.gate_up_proj_scales", "ffn_gate_up_exps.mxfp4_scales"},
      {"mlp.experts.down_proj_blocks", "ffn_down_exps.mxfp4_blocks"},
      {"mlp.experts.down_proj_scales", "ffn_down_exps.mxfp4_scales"}};
  static const std::regex kBareName(R"(model\.layers\.(\d+)\.([a-z_.]+))");
  std::smatch m;
  if (std::regex_match(hf, m, kBareName))
    for (const auto& [from, to] : kBare)
      if (m[2] == from) return "blk." + m[1].str() + "." + to;
  if (!std::regex_match(hf, m, kLayerName)) return "";
  const std::string prefix = "blk." + m[1].str() + ".", suffix = "." + m[3].str();
  for (const auto& [from, to] : arch.hf_layer_names)
    if (m[2] == from) return prefix + to + suffix;
  for (const auto& [from, to] : kLayer)
    if (m[2] == from) return prefix + to + suffix;
  static const std::regex kExpertName(R"((?:mlp|block_sparse_moe)\.experts\.(\d+)\.(\w+))");
  std::smatch e;
  const std::string part = m[2];
  int layer = 0, expert = 0;
  if (m[3] == "weight" && std::regex_match(part, e, kExpertName) && parse_index(m[1], layer) && parse_index(e[1], expert))
    for (const auto& [from, to] : kExpert)
      if (e[2] == from) return expert_name(layer, to, expert);
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
  bool mxfp4 = false;
  try {
    const json config_json = read_json(dir / "config.json");
    config = config_from_hf(config_json);
    mxfp4 = hf_quant_method(config_json) == "mxfp4";
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(dir_name)) throw;  // read_json named the file
    fail("{}: {}", (dir / "config.json").string(), e.what());
  }
  const Architecture& arch = gguf_architecture(config.arch);
  TensorMap tensors;
  PackedTensors packed;
  ModelWeights weights;
  std::vector<std::shared_ptr<const safetensors::SafetensorsFile>> files;
  for (const fs::path& path : safetensors_files(dir)) {
    auto file = std::make_shared<const safetensors::SafetensorsFile>(path.string(), options.weights);
    files.push_back(file);
    for (const auto& [name, t] : file->tensors()) {
      const std::string gname = gguf_name(name, arch);
      if (gname.empty()) continue;
      if (gname.ends_with(".mxfp4_blocks") || gname.ends_with(".mxfp4_scales")) {
        if (!mxfp4) fail("{}: tensor '{}' is MXFP4, but config.json's quantization_config does not say 'mxfp4'", path.string(), name);
        packed[gname] = {t, file.get()};  // its dtype and shape are checked against the config where it is repacked
        continue;
      }
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
  if (!packed.empty() && !arch.hf_tensors) fail("{}: {} has no MXFP4 tensors", dir_name, arch.gguf_name);
  if (arch.hf_tensors) {
    try {
      arch.hf_tensors(config, packed, tensors, weights.storage);
    } catch (const Error& e) {
      fail("{}: {}", dir_name, e.what());
    }
  }
  try {
    ModelWeights built = build_weights(config, arch, tensors, arch.hf_norm_plus_one ? 1.0f : 0.0f);
    // Read into memory, the files' copies and the buffers the loader made (gpt-oss's
    // experts, misaligned tensors) are its own to rewrite into kernel layouts, as the
    // GGUF loader rewrites its copy of a file; a mapping stays as the file is.
    if (options.weights == FileLoad::kCopy) {
      for (const auto& file : files) file->unseal();
      repack_for_kernels(built, [](const void* data) { return static_cast<uint8_t*>(const_cast<void*>(data)); });
      for (const auto& file : files) file->seal();
    }
    built.storage = std::move(weights.storage);
    return std::make_unique<Model>(std::move(config), std::move(built));
  } catch (const Error& e) {
    fail("{}: {}", dir_name, e.what());
  }
}

}  // namespace skiff
