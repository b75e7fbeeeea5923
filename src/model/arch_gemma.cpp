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
#include "gguf/gguf_writer.h"
#include "model/architecture.h"

namespace skiff {
namespace {

// The largest Gemma 2 / Gemma 3 (27B: 46 / 62 layers) scale scores by
// dim/heads rather than head_dim; GGUF has no key for it, llama.cpp knows it so.
void gguf_attention_scale(ModelConfig& c, int layers_of_27b) {
  if (c.attention_scale == 0 && c.n_layers == layers_of_27b) c.attention_scale = 1.0f / std::sqrt(static_cast<float>(c.dim / c.n_heads));
}

void common_facts(ModelConfig& c, bool qk_norm) {
  c.embedding_scale = std::sqrt(static_cast<float>(c.dim));
  for (LayerSpec& layer : c.layers) {
    layer.attention.post_norm = layer.ffn.post_norm = true;
    layer.attention.qk_norm = qk_norm;
    layer.ffn.activation = Activation::kGeluTanh;
  }
}

void set_attention_softcap(ModelConfig& c, double cap) {
  for (LayerSpec& layer : c.layers) layer.attention.softcap = static_cast<float>(cap);
}

void hf_facts(const nlohmann::json& j, ModelConfig& c, int default_period, bool qk_norm) {
  common_facts(c, qk_norm);
  const double scalar = hf_number(j, "query_pre_attn_scalar", c.head_dim);
  if (!(scalar > 0)) fail("'query_pre_attn_scalar' must be positive, got {}", scalar);
  c.attention_scale = static_cast<float>(1.0 / std::sqrt(scalar));
  set_attention_softcap(c, hf_number(j, "attn_logit_softcapping", 0));
  c.logit_softcap = static_cast<float>(hf_number(j, "final_logit_softcapping", 0));
  hf_sliding_windows(j, c, default_period);
}

// GGUF holds one attention soft-cap for all layers.
float layers_softcap(const ModelConfig& c) {
  for (const LayerSpec& layer : c.layers)
    if (layer.attention.softcap != c.layers.front().attention.softcap)
      fail("layers with different attention soft-caps cannot be written to GGUF");
  return c.layers.front().attention.softcap;
}

void write_logit_softcap(const ModelConfig& c, GgufMetadata& m) {
  m.emplace_back(c.arch + ".final_logit_softcapping", gguf::make_float(gguf::ValueType::FLOAT32, c.logit_softcap));
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
    a.gguf_sliding = {.window = 4096, .period = 2};
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      common_facts(c, false);
      gguf_attention_scale(c, 46);
      set_attention_softcap(c, f.get_float("gemma2.attn_logit_softcapping", 50.0));
      c.logit_softcap = static_cast<float>(f.get_float("gemma2.final_logit_softcapping", 30.0));
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) { hf_facts(j, c, 2, false); };
    // Its readers take absent soft-caps and window as on: 0 says off.
    a.to_gguf = [](const ModelConfig& c, GgufMetadata& m) {
      m.emplace_back("gemma2.attn_logit_softcapping", gguf::make_float(gguf::ValueType::FLOAT32, layers_softcap(c)));
      write_logit_softcap(c, m);
      if (common_window(c) == 0) m.emplace_back("gemma2.attention.sliding_window", gguf::make_uint(gguf::ValueType::UINT32, 0));
    };
    return a;
  }();
  return arch;
}

const Architecture& gemma3_architecture() {
  static const Architecture arch = [] {
    Architecture a = gemma("gemma3", "Gemma3ForCausalLM", "gemma3_text");
    // As llama.cpp: layers slide only when the file gives a window (its
    // converter writes one); then five of every six, at a local base of 10000.
    a.gguf_sliding = {.window = 0, .period = 6, .rope_theta = 10000.0f};
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      common_facts(c, true);
      gguf_attention_scale(c, 62);
      c.logit_softcap = static_cast<float>(f.get_float("gemma3.final_logit_softcapping", 0.0));
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      hf_facts(j, c, 6, true);
      set_local_rope(c, static_cast<float>(hf_number(j, "rope_local_base_freq", 10000.0)));
    };
    a.to_gguf = [](const ModelConfig& c, GgufMetadata& m) {
      if (c.logit_softcap > 0) write_logit_softcap(c, m);
    };
    return a;
  }();
  return arch;
}

}  // namespace skiff
