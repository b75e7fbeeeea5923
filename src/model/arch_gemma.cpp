// Gemma 2 and Gemma 3 (text): GeGLU with tanh-GELU, embeddings scaled by
// sqrt(dim), RMSNorm before and after both attention and the FFN, a tied head,
// and local sliding-window layers interleaved with global ones: every other
// layer from the first slides in Gemma 2, five of every six in Gemma 3. Gemma 2
// soft-caps attention scores and logits; Gemma 3 norms each q and k head and
// gives its local layers their own RoPE base. HF checkpoints store norm
// weights as w for a scale of 1 + w; llama.cpp's converter writes 1 + w.
#include <cmath>

#include "base/error.h"
#include "gguf/gguf.h"
#include "model/architecture.h"

namespace skiff {
namespace {

// The largest Gemma 2 / Gemma 3 (27B: 46 / 62 layers) scale scores by
// dim/heads rather than head_dim; GGUF has no key for it, llama.cpp knows it so.
void gguf_attention_scale(ModelConfig& c, int layers_of_27b) {
  if (c.attention_scale == 0 && c.n_layers == layers_of_27b) c.attention_scale = 1.0f / std::sqrt(static_cast<float>(c.dim / c.n_heads));
}

void common_facts(ModelConfig& c) {
  c.activation = Activation::kGeluTanh;
  c.embedding_scale = std::sqrt(static_cast<float>(c.dim));
  c.post_norms = true;
}

void hf_facts(const nlohmann::json& j, ModelConfig& c, int default_period) {
  common_facts(c);
  const double scalar = hf_number(j, "query_pre_attn_scalar", c.head_dim);
  if (!(scalar > 0)) fail("'query_pre_attn_scalar' must be positive, got {}", scalar);
  c.attention_scale = static_cast<float>(1.0 / std::sqrt(scalar));
  c.attn_softcap = static_cast<float>(hf_number(j, "attn_logit_softcapping", 0));
  c.logit_softcap = static_cast<float>(hf_number(j, "final_logit_softcapping", 0));
  c.sliding_window = bounded_int(hf_int(j, "sliding_window", 0), "sliding_window");
  if (c.sliding_window <= 0) return;
  // transformers >= 4.53 lists each layer's kind; older configs give a period.
  if (const auto types = j.find("layer_types"); types != j.end() && types->is_array()) {
    if (types->size() != static_cast<size_t>(c.n_layers))
      fail("'layer_types' has {} entries for {} layers", types->size(), c.n_layers);
    for (const auto& t : *types) c.sliding_layers.push_back(t == "sliding_attention");
  } else {
    c.sliding_layers =
        sliding_every(c.n_layers, bounded_int(hf_int(j, "sliding_window_pattern", default_period), "sliding_window_pattern"));
  }
}

Architecture gemma(const char* name, const char* hf_class, const char* hf_type) {
  Architecture a;
  a.gguf_name = name;
  a.hf_classes = {hf_class};
  a.hf_model_types = {hf_type};
  a.hf_norm_plus_one = true;
  a.hf_layer_names = {{"post_attention_layernorm", "post_attention_norm"},
                      {"pre_feedforward_layernorm", "ffn_norm"},
                      {"post_feedforward_layernorm", "post_ffw_norm"}};
  return a;
}

}  // namespace

const Architecture& gemma2_architecture() {
  static const Architecture arch = [] {
    Architecture a = gemma("gemma2", "Gemma2ForCausalLM", "gemma2");
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      common_facts(c);
      gguf_attention_scale(c, 46);
      c.attn_softcap = static_cast<float>(f.get_float("gemma2.attn_logit_softcapping", 50.0));
      c.logit_softcap = static_cast<float>(f.get_float("gemma2.final_logit_softcapping", 30.0));
      c.sliding_window = 4096;
      c.sliding_layers = sliding_every(c.n_layers, 2);
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) { hf_facts(j, c, 2); };
    return a;
  }();
  return arch;
}

const Architecture& gemma3_architecture() {
  static const Architecture arch = [] {
    Architecture a = gemma("gemma3", "Gemma3ForCausalLM", "gemma3_text");
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      common_facts(c);
      gguf_attention_scale(c, 62);
      c.qk_norm = true;
      c.logit_softcap = static_cast<float>(f.get_float("gemma3.final_logit_softcapping", 0.0));
      // As llama.cpp: layers slide only when the file gives a window (its
      // converter writes one); then five of every six, at a local base of 10000.
      c.sliding_layers = sliding_every(c.n_layers, 6);
      c.rope_theta_sliding = 10000.0f;
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      hf_facts(j, c, 6);
      c.qk_norm = true;
      c.rope_theta_sliding = static_cast<float>(hf_number(j, "rope_local_base_freq", 10000.0));
    };
    return a;
  }();
  return arch;
}

}  // namespace skiff
