// Llama (Llama 2/3, TinyLlama, SmolLM) and Mistral: the defaults of every
// fact. GGUF "llama" files interleave each head's Q/K rows (Meta's layout,
// which llama.cpp's converter restores); Mistral's config.json may set a
// sliding window over all layers. Mixtral is Mistral with a mixture of
// experts in every layer (top-k renormalised), written to GGUF as "llama"
// with expert keys, as llama.cpp does.
#include "model/architecture.h"

namespace skiff {

const Architecture& llama_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "llama";
    a.hf_classes = {"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM"};
    a.hf_model_types = {"llama", "mistral", "mixtral"};
    a.gguf_rope_style = RopeStyle::kInterleaved;
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) { gguf_experts(f, c, {.normalize = true}); };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      hf_window_on_every_layer(j, c);
      if (j.contains("num_local_experts"))
        set_experts(c, hf_experts(j, "num_local_experts", "intermediate_size", true), std::vector<bool>(c.n_layers, true));
    };
    a.to_gguf = write_gguf_experts;
    return a;
  }();
  return arch;
}

}  // namespace skiff
