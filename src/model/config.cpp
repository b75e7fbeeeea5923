#include "model/config.h"

#include <cmath>
#include <numbers>

#include "base/error.h"

namespace skiff {

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
  if (n_heads % n_kv_heads != 0)
    fail("model config: {} heads is not a multiple of {} KV heads", n_heads, n_kv_heads);
  if (rope_dim <= 0 || rope_dim > head_dim || rope_dim % 2 != 0)
    fail("model config: RoPE dim {} must be even and at most the head dim {}", rope_dim, head_dim);
  if (!rope_freq_factors.empty() && rope_freq_factors.size() != static_cast<size_t>(rope_dim / 2))
    fail("model config: {} RoPE frequency factors for RoPE dim {}", rope_freq_factors.size(),
         rope_dim);
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

}  // namespace skiff
