// OLMoE: Llama's layout with an RMSNorm over the whole q and k projections
// (all heads at once) before RoPE, and a mixture of experts in every layer
// (softmax top-k, not renormalised unless norm_topk_prob says so).
#include "model/architecture.h"

namespace skiff {
namespace {

void set_whole_qk_norm(ModelConfig& c) {
  for (LayerSpec& layer : c.layers) layer.attention.qk_norm = layer.attention.qk_norm_whole = true;
}

}  // namespace

const Architecture& olmoe_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "olmoe";
    a.hf_classes = {"OlmoeForCausalLM"};
    a.hf_model_types = {"olmoe"};
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      set_whole_qk_norm(c);
      gguf_experts(f, c, {.normalize = false});
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      set_whole_qk_norm(c);
      set_experts(c, hf_experts(j, "num_experts", "intermediate_size", false), std::vector<bool>(c.n_layers, true));
    };
    a.to_gguf = write_gguf_experts;
    return a;
  }();
  return arch;
}

}  // namespace skiff
