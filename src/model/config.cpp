#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/error.h"
#include "kernels/attention/attention.h"

namespace skiff {

namespace {

void validate_experts(const ExpertsSpec& e) {
  if (e.n_experts < 1 || e.n_experts > ModelConfig::kMaxExperts)
    fail("model config: {} experts is out of range (1 to {})", e.n_experts, ModelConfig::kMaxExperts);
  if (e.n_used < 1 || e.n_used > e.n_experts)
    fail("model config: {} experts per token of {} is out of range", e.n_used, e.n_experts);
  if (e.ffn_dim < 1 || e.ffn_dim > ModelConfig::kMaxWidth)
    fail("model config: expert FFN width {} is out of range", e.ffn_dim);
  if (e.shared_ffn_dim < 0 || e.shared_ffn_dim > ModelConfig::kMaxWidth)
    fail("model config: shared expert FFN width {} is out of range", e.shared_ffn_dim);
  if (e.shared_gate && e.shared_ffn_dim == 0) fail("model config: a shared expert's gate without a shared expert");
}

}  // namespace

int ModelConfig::widest_dense_ffn() const {
  int widest = 0;
  for (const LayerSpec& layer : layers)
    widest = std::max(widest, layer.ffn.kind == FfnKind::kDense ? ffn_dim : layer.ffn.experts.shared_ffn_dim);
  return widest;
}

ExpertsSpec ModelConfig::widest_experts() const {
  ExpertsSpec widest;
  for (const LayerSpec& layer : layers) {
    if (layer.ffn.kind != FfnKind::kExperts) continue;
    const ExpertsSpec& e = layer.ffn.experts;
    widest.n_experts = std::max(widest.n_experts, e.n_experts);
    widest.n_used = std::max(widest.n_used, e.n_used);
    widest.ffn_dim = std::max(widest.ffn_dim, e.ffn_dim);
  }
  return widest;
}

void ModelConfig::validate() const {
  auto positive = [](int v, const char* what) {
    if (v <= 0) fail("model config: {} must be positive, got {}", what, v);
  };
  positive(n_layers, "layer count");
  positive(dim, "embedding width");
  positive(n_heads, "head count");
  positive(n_kv_heads, "KV head count");
  positive(head_dim, "head dim");
  positive(ffn_dim, "FFN width");
  positive(vocab_size, "vocab size");
  positive(max_ctx, "context length");
  // Widths multiply token counts in int arithmetic all through the forward pass:
  // each is computed here in 64 bits and bounded, so no product from a file wraps.
  auto bounded = [](int64_t v, int64_t limit, const char* what) {
    if (v > limit) fail("model config: {} {} is too large (at most {})", what, v, limit);
  };
  bounded(dim, kMaxWidth, "embedding width");
  bounded(ffn_dim, kMaxWidth, "FFN width");
  bounded(int64_t{n_heads} * head_dim, kMaxWidth, "query width (heads x head dim)");
  bounded(int64_t{n_kv_heads} * head_dim, kMaxWidth, "KV width (KV heads x head dim)");
  bounded(vocab_size, kMaxVocab, "vocab size");
  bounded(n_layers, kMaxLayers, "layer count");
  if (!(std::isfinite(norm_eps) && norm_eps >= 0))
    fail("model config: norm epsilon {} must be finite and >= 0", norm_eps);
  if (!(std::isfinite(rope_theta) && rope_theta > 0))
    fail("model config: RoPE base {} must be finite and positive", rope_theta);
  for (float f : rope_freq_factors)
    if (!(std::isfinite(f) && f > 0)) fail("model config: RoPE frequency factor {} is not finite and positive", f);
  if (layers.size() != static_cast<size_t>(n_layers))
    fail("model config: {} layer descriptions for {} layers", layers.size(), n_layers);
  for (float v : {rope_mscale, embedding_scale, attention_scale, logit_softcap, residual_scale, logit_scale})
    if (!(std::isfinite(v) && v >= 0)) fail("model config: a scale or soft-cap of {} is not finite and >= 0", v);
  for (const LayerSpec& layer : layers) {
    const AttentionSpec& a = layer.attention;
    if (a.window < 0 || a.window > (1 << 30)) fail("model config: sliding window {} is out of range", a.window);
    if (!(std::isfinite(a.softcap) && a.softcap >= 0))
      fail("model config: an attention soft-cap of {} is not finite and >= 0", a.softcap);
    if (!(std::isfinite(a.rope.theta) && a.rope.theta > 0))
      fail("model config: RoPE base {} must be finite and positive", a.rope.theta);
    if (layer.ffn.kind == FfnKind::kExperts) validate_experts(layer.ffn.experts);
  }
  if (n_heads % n_kv_heads != 0)
    fail("model config: {} heads is not a multiple of {} KV heads", n_heads, n_kv_heads);
  // The attention kernel's register tile: larger heads or groups cannot run.
  if (head_dim > kAttentionMaxHeadDim)
    fail("model config: head dim {} exceeds the {} the attention kernel takes", head_dim, kAttentionMaxHeadDim);
  if (n_heads / n_kv_heads > kAttentionMaxRows)
    fail("model config: {} query heads per KV head exceed the {} the attention kernel takes", n_heads / n_kv_heads,
         kAttentionMaxRows);
  if (rope_dim <= 0 || rope_dim > head_dim || rope_dim % 2 != 0)
    fail("model config: RoPE dim {} must be even and at most the head dim {}", rope_dim, head_dim);
  if (!rope_freq_factors_short.empty() && rope_freq_factors_short.size() != static_cast<size_t>(rope_dim / 2))
    fail("model config: {} short RoPE factors for RoPE dim {}", rope_freq_factors_short.size(), rope_dim);
  for (float f : rope_freq_factors_short)
    if (!(std::isfinite(f) && f > 0)) fail("model config: RoPE frequency factor {} is not finite and positive", f);
  if (!rope_freq_factors.empty() && rope_freq_factors.size() != static_cast<size_t>(rope_dim / 2))
    fail("model config: {} RoPE frequency factors for RoPE dim {}", rope_freq_factors.size(),
         rope_dim);
}

float ModelConfig::score_scale() const {
  return attention_scale > 0 ? attention_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

std::vector<float> llama3_rope_factors(int rope_dim, float theta, float factor,
                                       float low_freq_factor, float high_freq_factor,
                                       int original_ctx) {
  // Wavelengths longer than original_ctx/low_freq_factor are slowed by `factor`,
  // shorter than original_ctx/high_freq_factor kept, and the band between blended.
  const double low_wavelen = original_ctx / low_freq_factor;
  const double high_wavelen = original_ctx / high_freq_factor;
  std::vector<float> factors(rope_dim / 2);
  for (int i = 0; i < rope_dim / 2; ++i) {
    const double freq = std::pow(static_cast<double>(theta), -2.0 * i / rope_dim);
    const double wavelen = 2 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelen > low_wavelen) {
      f = factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (original_ctx / wavelen - low_freq_factor) /
                            (high_freq_factor - low_freq_factor);
      f = 1.0 / ((1 - smooth) / factor + smooth);
    }
    factors[i] = static_cast<float>(f);
  }
  return factors;
}

std::vector<float> yarn_rope_factors(int rope_dim, float theta, const YarnRope& yarn, int original_ctx) {
  if (!(std::isfinite(yarn.factor) && yarn.factor > 0))
    fail("model config: YaRN factor {} must be finite and positive", yarn.factor);
  if (!(std::isfinite(yarn.beta_fast) && yarn.beta_fast > 0 && std::isfinite(yarn.beta_slow) && yarn.beta_slow > 0))
    fail("model config: YaRN's beta_fast {} and beta_slow {} must be finite and positive", yarn.beta_fast,
         yarn.beta_slow);
  if (original_ctx <= 0) fail("model config: YaRN's original context {} must be positive", original_ctx);
  // The pair index at which a frequency makes `rotations` turns over original_ctx.
  auto pair_of = [&](double rotations) {
    return rope_dim * std::log(original_ctx / (rotations * 2 * std::numbers::pi)) / (2 * std::log(double{theta}));
  };
  double low = pair_of(yarn.beta_fast), high = pair_of(yarn.beta_slow);
  if (yarn.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, rope_dim - 1.0);
  if (low == high) high += 0.001;  // as transformers, against a division by zero
  std::vector<float> factors(rope_dim / 2);
  for (int i = 0; i < rope_dim / 2; ++i) {
    const double interpolated = std::clamp((i - low) / (high - low), 0.0, 1.0);  // its share at 1/factor
    factors[i] = static_cast<float>(1.0 / (interpolated / yarn.factor + (1 - interpolated)));
  }
  return factors;
}

float yarn_mscale(float factor, float mscale) {
  return factor <= 1 ? 1.0f : static_cast<float>(0.1 * mscale * std::log(double{factor}) + 1.0);
}

}  // namespace skiff
