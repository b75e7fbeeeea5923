// Qwen2 / Qwen2.5: Llama with biases on the Q, K and V projections. Qwen3:
// no biases, an RMSNorm over each head of q and k before RoPE, and a head
// size of its own. Both keep HF's rotate-half Q/K rows in GGUF.
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

}  // namespace skiff
