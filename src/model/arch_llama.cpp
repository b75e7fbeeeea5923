// Llama (Llama 2/3, TinyLlama, SmolLM) and Mistral: the defaults of every
// fact. GGUF "llama" files interleave each head's Q/K rows (Meta's layout,
// which llama.cpp's converter restores); Mistral's config.json may set a
// sliding window over all layers.
#include "model/architecture.h"

namespace skiff {

const Architecture& llama_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "llama";
    a.hf_classes = {"LlamaForCausalLM", "MistralForCausalLM"};
    a.hf_model_types = {"llama", "mistral"};
    a.gguf_rope_style = RopeStyle::kInterleaved;
    a.from_gguf = [](const gguf::GgufFile&, ModelConfig&) {};
    a.from_hf = hf_window_on_every_layer;
    return a;
  }();
  return arch;
}

}  // namespace skiff
