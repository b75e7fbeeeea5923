#include "model/gguf_metadata.h"

#include <algorithm>

#include "base/error.h"
#include "gguf/gguf_writer.h"

namespace skiff {
namespace {

using gguf::ValueType;

gguf::Value u32(int64_t v) { return gguf::make_uint(ValueType::UINT32, static_cast<uint64_t>(v)); }
gguf::Value f32(double v) { return gguf::make_float(ValueType::FLOAT32, v); }

// The period p with sliding_every(n, p) == layers, or 0 when there is none.
int sliding_period(const std::vector<bool>& layers) {
  for (int p = 1; p <= static_cast<int>(layers.size()) + 1; ++p)
    if (sliding_every(static_cast<int>(layers.size()), p) == layers) return p;
  return 0;
}

// Which layers slide, and their base when they rotate at their own, unscaled
// (GGUF's rope.freq_base_swa).
void add_sliding_window(const ModelConfig& c, const std::string& p, GgufMetadata& m) {
  const int window = common_window(c);
  if (window == 0) return;
  m.emplace_back(p + "attention.sliding_window", u32(window));
  std::vector<bool> sliding;
  for (const LayerSpec& layer : c.layers) sliding.push_back(layer.attention.window > 0);
  if (const int period = sliding_period(sliding)) {
    m.emplace_back(p + "attention.sliding_window_pattern", u32(period));
  } else {
    std::vector<gguf::Value> flags;
    for (bool f : sliding) flags.push_back(gguf::make_bool(f));
    m.emplace_back(p + "attention.sliding_window_pattern", gguf::make_array(ValueType::BOOL, std::move(flags)));
  }
  // GGUF has a base for the global layers, and one for the sliding layers at
  // which they rotate without the RoPE scaling.
  const RopeSpec global{c.rope_theta, true};
  const RopeSpec local =
      std::find_if(c.layers.begin(), c.layers.end(), [](const LayerSpec& l) { return l.attention.window > 0; })
          ->attention.rope;
  const bool own_base = local != global;
  for (const LayerSpec& layer : c.layers)
    if (layer.attention.rope != (layer.attention.window > 0 ? local : global) || (own_base && local.scaled))
      fail("layers with these RoPE bases and scalings cannot be written to GGUF");
  if (own_base) m.emplace_back(p + "rope.freq_base_swa", f32(local.theta));
}

}  // namespace

bool linear_rope_scaling(const ModelConfig& c) {
  const std::vector<float>& f = c.rope_freq_factors;
  return !f.empty() && c.rope_freq_factors_short.empty() && c.rope_yarn.factor == 0 &&
         std::all_of(f.begin(), f.end(), [&](float x) { return x == f.front(); });
}

GgufMetadata gguf_metadata(const ModelConfig& c) {
  GgufMetadata m;
  const std::string p = c.arch + ".";
  m.emplace_back("general.architecture", gguf::make_string(c.arch));
  m.emplace_back("general.name", gguf::make_string(c.name));
  m.emplace_back(p + "vocab_size", u32(c.vocab_size));
  m.emplace_back(p + "context_length", u32(c.max_ctx));
  m.emplace_back(p + "embedding_length", u32(c.dim));
  m.emplace_back(p + "block_count", u32(c.n_layers));
  m.emplace_back(p + "feed_forward_length", u32(c.ffn_dim));
  m.emplace_back(p + "rope.dimension_count", u32(c.rope_dim));
  m.emplace_back(p + "attention.head_count", u32(c.n_heads));
  m.emplace_back(p + "attention.head_count_kv", u32(c.n_kv_heads));
  if (c.head_dim != c.dim / c.n_heads) {
    m.emplace_back(p + "attention.key_length", u32(c.head_dim));
    m.emplace_back(p + "attention.value_length", u32(c.head_dim));
  }
  m.emplace_back(p + "attention.layer_norm_rms_epsilon", f32(c.norm_eps));
  m.emplace_back(p + "rope.freq_base", f32(c.rope_theta));
  if (linear_rope_scaling(c)) {
    m.emplace_back(p + "rope.scaling.type", gguf::make_string("linear"));
    m.emplace_back(p + "rope.scaling.factor", f32(c.rope_freq_factors.front()));
  }
  if (!c.rope_freq_factors_short.empty()) {  // LongRoPE, as llama.cpp's converter writes it
    m.emplace_back(p + "rope.scaling.original_context_length", u32(c.rope_original_ctx));
    m.emplace_back(p + "rope.scaling.attn_factor", f32(c.rope_mscale));
  }
  if (const YarnRope& y = c.rope_yarn; y.factor != 0) {  // the keys config_from_gguf reads YaRN from
    m.emplace_back(p + "rope.scaling.type", gguf::make_string("yarn"));
    m.emplace_back(p + "rope.scaling.factor", f32(y.factor));
    m.emplace_back(p + "rope.scaling.original_context_length", u32(c.rope_original_ctx));
    m.emplace_back(p + "rope.scaling.yarn_beta_fast", f32(y.beta_fast));
    m.emplace_back(p + "rope.scaling.yarn_beta_slow", f32(y.beta_slow));
    if (!y.truncate) m.emplace_back(p + "rope.scaling.yarn_truncate", gguf::make_bool(false));
    // As llama.cpp reads it: a multiple of YaRN's default.
    if (c.rope_mscale != yarn_mscale(y.factor))
      m.emplace_back(p + "rope.scaling.attn_factor", f32(c.rope_mscale / yarn_mscale(y.factor)));
  }
  if (c.attention_scale > 0) m.emplace_back(p + "attention.scale", f32(c.attention_scale));
  add_sliding_window(c, p, m);
  const Architecture& arch = gguf_architecture(c.arch);
  if (arch.to_gguf) arch.to_gguf(c, m);
  return m;
}

}  // namespace skiff
