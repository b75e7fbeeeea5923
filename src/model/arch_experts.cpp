// The facts of a mixture of experts as every MoE family's files keep them:
// GGUF's {arch}.expert_* keys (a layer is sparse when it has a router
// tensor), config.json's sparse layers (Qwen2/3-MoE's decoder_sparse_step and
// mlp_only_layers).
#include <algorithm>

#include "base/error.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"

namespace skiff {
namespace {

int expert_int(int64_t v, const char* what) {
  if (v < 0 || v > ModelConfig::kMaxWidth) fail("{} {} is out of range", what, v);
  return static_cast<int>(v);
}

}  // namespace

void set_experts(ModelConfig& c, const ExpertsSpec& experts, const std::vector<bool>& sparse) {
  for (int l = 0; l < c.n_layers; ++l)
    if (sparse[l]) {
      c.layers[l].ffn.kind = FfnKind::kExperts;
      c.layers[l].ffn.experts = experts;
    }
}

ExpertsSpec hf_experts(const nlohmann::json& j, const char* count_key, const char* ffn_key, bool normalize) {
  ExpertsSpec e;
  auto required = [&](const char* key) {
    const int64_t v = hf_int(j, key, -1);
    if (v < 0) fail("missing '{}'", key);
    return expert_int(v, key);
  };
  e.n_experts = required(count_key);
  e.n_used = required("num_experts_per_tok");
  e.ffn_dim = required(ffn_key);
  if (const auto norm = j.find("norm_topk_prob"); norm != j.end() && norm->is_boolean()) e.normalize = norm->get<bool>();
  else e.normalize = normalize;
  return e;
}

std::vector<bool> hf_sparse_layers(const nlohmann::json& j, int n_layers) {
  const int64_t step = hf_int(j, "decoder_sparse_step", 1);
  if (step < 1 || step > n_layers) fail("'decoder_sparse_step' {} is out of range", step);
  std::vector<bool> sparse(n_layers);
  for (int l = 0; l < n_layers; ++l) sparse[l] = (l + 1) % step == 0;
  if (const auto dense = j.find("mlp_only_layers"); dense != j.end() && !dense->is_null()) {
    if (!dense->is_array()) fail("'mlp_only_layers' must be a list of layer indices");
    for (const auto& l : *dense) {
      if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= n_layers)
        fail("'mlp_only_layers' holds {}, not a layer index", l.dump());
      sparse[l.get<int>()] = false;
    }
  }
  return sparse;
}

void gguf_experts(const gguf::GgufFile& f, ModelConfig& c, ExpertsSpec defaults) {
  const std::string p = c.arch + ".";
  if (!f.find(p + "expert_count")) return;  // a dense model of the family
  ExpertsSpec& e = defaults;
  e.n_experts = expert_int(f.get_int(p + "expert_count", 0), "expert count");
  e.n_used = expert_int(f.get_int(p + "expert_used_count", 0), "experts per token");
  e.ffn_dim = expert_int(f.get_int(p + "expert_feed_forward_length", c.ffn_dim), "expert FFN width");
  e.shared_ffn_dim = expert_int(f.get_int(p + "expert_shared_feed_forward_length", 0), "shared expert FFN width");
  if (const gguf::Value* norm = f.find(p + "expert_weights_norm")) e.normalize = norm->as_bool();
  e.shared_gate = e.shared_gate && e.shared_ffn_dim > 0;
  std::vector<bool> sparse(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l)
    sparse[l] = f.find_tensor("blk." + std::to_string(l) + ".ffn_gate_inp.weight") != nullptr;
  if (std::none_of(sparse.begin(), sparse.end(), [](bool s) { return s; }))
    fail("'{}expert_count' is {} but no layer has a router (blk.N.ffn_gate_inp.weight)", p, e.n_experts);
  set_experts(c, e, sparse);
}

void write_gguf_experts(const ModelConfig& c, GgufMetadata& m) {
  const ExpertsSpec* experts = nullptr;
  for (const LayerSpec& layer : c.layers) {
    if (layer.ffn.kind != FfnKind::kExperts) continue;
    if (experts && !(*experts == layer.ffn.experts)) fail("layers with different mixtures of experts cannot be written to GGUF");
    experts = &layer.ffn.experts;
  }
  if (!experts) return;
  const std::string p = c.arch + ".";
  auto u32 = [](int64_t v) { return gguf::make_uint(gguf::ValueType::UINT32, static_cast<uint64_t>(v)); };
  m.emplace_back(p + "expert_count", u32(experts->n_experts));
  m.emplace_back(p + "expert_used_count", u32(experts->n_used));
  m.emplace_back(p + "expert_feed_forward_length", u32(experts->ffn_dim));
  if (experts->shared_ffn_dim > 0) m.emplace_back(p + "expert_shared_feed_forward_length", u32(experts->shared_ffn_dim));
  m.emplace_back(p + "expert_weights_norm", gguf::make_bool(experts->normalize));
}

}  // namespace skiff
