// Phi-3: Llama with fused tensors (attn_qkv holds the Q, K and V rows,
// ffn_up the gate rows then the up rows) and LongRoPE: per-pair frequency
// divisors, a long set for contexts past the original one and a short set
// otherwise, with cos and sin scaled by an attention factor. Both sets are
// kept; Model::set_context_length picks one by the context a run asks for, as
// llama.cpp picks by -c (transformers switches by each call's sequence length).
#include <cmath>

#include "base/error.h"
#include "gguf/gguf.h"
#include "kernels/quant/quant.h"
#include "model/architecture.h"

namespace skiff {
namespace {

// sqrt(1 + ln(ctx / original) / ln(original)) when the context is extended, as
// transformers and llama.cpp's converter compute it.
float longrope_mscale(int max_ctx, int64_t original) {
  if (original <= 1 || max_ctx <= original) return 1.0f;
  const double factor = static_cast<double>(max_ctx) / original;
  return static_cast<float>(std::sqrt(1.0 + std::log(factor) / std::log(static_cast<double>(original))));
}

std::vector<float> read_factors(const gguf::GgufFile& f, const char* name, int rope_dim) {
  return f.find_tensor(name) ? gguf_vector(f, name, rope_dim / 2) : std::vector<float>{};
}

std::vector<float> hf_factors(const nlohmann::json& scaling, const char* key, int rope_dim) {
  const auto it = scaling.find(key);
  if (it == scaling.end() || !it->is_array() || it->size() != static_cast<size_t>(rope_dim / 2))
    fail("rope_scaling '{}' must list {} numbers", key, rope_dim / 2);
  std::vector<float> factors;
  for (const auto& v : *it) {
    if (!v.is_number()) fail("rope_scaling '{}' holds a non-number", key);
    factors.push_back(v.get<float>());
  }
  return factors;
}

}  // namespace

const Architecture& phi3_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "phi3";
    a.hf_classes = {"Phi3ForCausalLM"};
    a.hf_model_types = {"phi3"};
    a.fused_qkv = true;
    a.fused_gate_up = true;
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      const int64_t original = f.get_int("phi3.rope.scaling.original_context_length", c.max_ctx);
      c.rope_original_ctx = bounded_int(original, "original context length");
      if (auto long_set = read_factors(f, "rope_factors_long.weight", c.rope_dim); !long_set.empty())
        c.rope_freq_factors = std::move(long_set);
      c.rope_freq_factors_short = read_factors(f, "rope_factors_short.weight", c.rope_dim);
      if (c.rope_freq_factors.empty()) c.rope_freq_factors = c.rope_freq_factors_short;
      c.rope_mscale = static_cast<float>(f.get_float("phi3.rope.scaling.attn_factor", longrope_mscale(c.max_ctx, original)));
    };
    a.from_hf = hf_window_on_every_layer;
    a.hf_rope_scaling = [](const std::string& type, const nlohmann::json& scaling, const nlohmann::json& j,
                           ModelConfig& c) {
      if (type != "longrope" && type != "su") return false;
      const int64_t original =
          hf_int(scaling, "original_max_position_embeddings", hf_int(j, "original_max_position_embeddings", c.max_ctx));
      c.rope_original_ctx = bounded_int(original, "original_max_position_embeddings");
      c.rope_freq_factors = hf_factors(scaling, "long_factor", c.rope_dim);
      c.rope_freq_factors_short = hf_factors(scaling, "short_factor", c.rope_dim);
      c.rope_mscale = static_cast<float>(hf_number(scaling, "attention_factor", longrope_mscale(c.max_ctx, original)));
      return true;
    };
    return a;
  }();
  return arch;
}

}  // namespace skiff
