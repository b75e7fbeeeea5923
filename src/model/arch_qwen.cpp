// Qwen2 / Qwen2.5: Llama with biases on the Q, K and V projections. Qwen3:
// no biases, an RMSNorm over each head of q and k before RoPE, and a head
// size of its own. Both keep HF's rotate-half Q/K rows in GGUF. Their
// mixtures of experts: Qwen1.5/2-MoE (Qwen2's attention; softmax top-k not
// renormalised, and a shared expert whose output a sigmoid gates) and
// Qwen3-MoE (Qwen3's attention; top-k renormalised, no shared expert; dense
// layers where mlp_only_layers says).
#include "model/architecture.h"

#include "base/json.h"

namespace skiff {
namespace {

void set_qkv_bias(ModelConfig& c) {
  for (LayerSpec& layer : c.layers) layer.attention.qkv_bias = true;
}

void set_qk_norm(ModelConfig& c) {
  for (LayerSpec& layer : c.layers) layer.attention.qk_norm = true;
}

// config.json's experts of Qwen2-MoE and Qwen3-MoE, on their sparse layers;
// norm_topk_prob, where absent, as llama.cpp runs the family's GGUF files.
void hf_qwen_experts(const nlohmann::json& j, ModelConfig& c, bool normalize) {
  // transformers 5 writes num_experts as num_local_experts.
  const char* count = j.contains("num_experts") ? "num_experts" : "num_local_experts";
  ExpertsSpec e = hf_experts(j, count, "moe_intermediate_size", normalize);
  e.shared_ffn_dim = bounded_int(hf_int(j, "shared_expert_intermediate_size", 0), "shared_expert_intermediate_size");
  e.shared_gate = e.shared_ffn_dim > 0;
  set_experts(c, e, hf_sparse_layers(j, c.n_layers));
}

}  // namespace

const Architecture& qwen2_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "qwen2";
    a.hf_classes = {"Qwen2ForCausalLM"};
    a.hf_model_types = {"qwen2"};
    a.from_gguf = [](const gguf::GgufFile&, ModelConfig& c) { set_qkv_bias(c); };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      set_qkv_bias(c);
      // transformers: with use_sliding_window, layers from max_window_layers on slide.
      if (bool_field(j, "use_sliding_window", false)) {
        const int64_t first = hf_int(j, "max_window_layers", c.n_layers);
        std::vector<bool> sliding(c.n_layers, false);
        for (int64_t l = first < 0 ? 0 : first; l < c.n_layers; ++l) sliding[l] = true;
        set_windows(c, sliding, bounded_int(hf_int(j, "sliding_window", 0), "sliding_window"));
      }
    };
    return a;
  }();
  return arch;
}

const Architecture& qwen3_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "qwen3";
    a.hf_classes = {"Qwen3ForCausalLM"};
    a.hf_model_types = {"qwen3"};
    a.from_gguf = [](const gguf::GgufFile&, ModelConfig& c) { set_qk_norm(c); };
    a.from_hf = [](const nlohmann::json&, ModelConfig& c) { set_qk_norm(c); };
    return a;
  }();
  return arch;
}

const Architecture& qwen2moe_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "qwen2moe";
    a.hf_classes = {"Qwen2MoeForCausalLM"};
    a.hf_model_types = {"qwen2_moe"};
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      set_qkv_bias(c);
      gguf_experts(f, c, {.normalize = false, .shared_gate = true});
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      set_qkv_bias(c);
      hf_qwen_experts(j, c, false);
    };
    a.to_gguf = write_gguf_experts;
    return a;
  }();
  return arch;
}

const Architecture& qwen3moe_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "qwen3moe";
    a.hf_classes = {"Qwen3MoeForCausalLM"};
    a.hf_model_types = {"qwen3_moe"};
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      set_qk_norm(c);
      gguf_experts(f, c, {.normalize = true});  // llama.cpp renormalises Qwen3-MoE's always
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      set_qk_norm(c);
      hf_qwen_experts(j, c, true);
    };
    a.to_gguf = write_gguf_experts;
    return a;
  }();
  return arch;
}

}  // namespace skiff
