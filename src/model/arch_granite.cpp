// Granite 3.x MoE: Llama's layout (GGUF interleaves Q/K rows, as llama.cpp's
// converter permutes them) with four multipliers: embeddings, each block's
// output before its residual add, attention scores (in place of
// 1/sqrt(head_dim)) and logits (divided by logits_scaling); a mixture of
// experts in every layer whose router keeps the top k logits and softmaxes
// them (renormalised top-k). Checkpoints stack each layer's experts, the
// gate rows then the up rows of each (input_linear).
#include <cmath>

#include "base/error.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"

namespace skiff {
namespace {

float positive(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) fail("'{}' {} must be positive", what, v);
  return static_cast<float>(v);
}

}  // namespace

const Architecture& granitemoe_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "granitemoe";
    a.hf_classes = {"GraniteMoeForCausalLM"};
    a.hf_model_types = {"granitemoe"};
    a.gguf_rope_style = RopeStyle::kInterleaved;
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      c.embedding_scale = positive(f.get_float("granitemoe.embedding_scale", 1.0), "granitemoe.embedding_scale");
      c.residual_scale = positive(f.get_float("granitemoe.residual_scale", 1.0), "granitemoe.residual_scale");
      c.logit_scale = 1.0f / positive(f.get_float("granitemoe.logit_scale", 1.0), "granitemoe.logit_scale");
      gguf_experts(f, c, {.normalize = true});
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      c.embedding_scale = positive(hf_number(j, "embedding_multiplier", 1.0), "embedding_multiplier");
      c.residual_scale = positive(hf_number(j, "residual_multiplier", 1.0), "residual_multiplier");
      c.attention_scale = positive(hf_number(j, "attention_multiplier", c.score_scale()), "attention_multiplier");
      c.logit_scale = 1.0f / positive(hf_number(j, "logits_scaling", 1.0), "logits_scaling");
      set_experts(c, hf_experts(j, "num_local_experts", "intermediate_size", true), std::vector<bool>(c.n_layers, true));
    };
    a.to_gguf = [](const ModelConfig& c, GgufMetadata& m) {
      auto f32 = [](double v) { return gguf::make_float(gguf::ValueType::FLOAT32, v); };
      m.emplace_back("granitemoe.embedding_scale", f32(c.embedding_scale));
      m.emplace_back("granitemoe.residual_scale", f32(c.residual_scale));
      m.emplace_back("granitemoe.logit_scale", f32(1.0 / c.logit_scale));
      write_gguf_experts(c, m);
    };
    return a;
  }();
  return arch;
}

}  // namespace skiff
