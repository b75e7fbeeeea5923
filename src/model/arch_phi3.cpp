// Phi-3: Llama with fused tensors (attn_qkv holds the Q, K and V rows,
// ffn_up the gate rows then the up rows) and LongRoPE: per-pair frequency
// divisors, a long set for contexts past the original one and a short set
// otherwise, with cos and sin scaled by an attention factor. skiff picks the
// set once, at load, by the model's trained context length: a 128k model uses
// the long factors even for short runs, where llama.cpp picks by the context
// a run asks for (-c) and transformers by each call's sequence length.
#include <cmath>

#include "base/error.h"
#include "gguf/gguf.h"
#include "kernels/quant.h"
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

void read_factors(const gguf::GgufFile& f, const char* name, ModelConfig& c) {
  if (f.find_tensor(name)) c.rope_freq_factors = gguf_vector(f, name, c.rope_dim / 2);
}

}  // namespace

const Architecture& phi3_architecture() {
  static const Architecture arch = [] {
    Architecture a;
    a.gguf_name = "phi3";
    a.hf_model_types = {"phi3"};
    a.fused_qkv = true;
    a.fused_gate_up = true;
    a.from_gguf = [](const gguf::GgufFile& f, ModelConfig& c) {
      const int64_t original = f.get_int("phi3.rope.scaling.original_context_length", c.max_ctx);
      read_factors(f, c.max_ctx > original ? "rope_factors_long.weight" : "rope_factors_short.weight", c);
      c.rope_mscale = static_cast<float>(f.get_float("phi3.rope.scaling.attn_factor", longrope_mscale(c.max_ctx, original)));
    };
    a.from_hf = [](const nlohmann::json& j, ModelConfig& c) {
      c.sliding_window = bounded_int(hf_int(j, "sliding_window", 0), "sliding_window");
      if (c.sliding_window > 0) c.sliding_layers.assign(c.n_layers, true);
    };
    a.hf_rope_scaling = [](const std::string& type, const nlohmann::json& scaling, const nlohmann::json& j,
                           ModelConfig& c) {
      if (type != "longrope" && type != "su") return false;
      const int64_t original =
          hf_int(scaling, "original_max_position_embeddings", hf_int(j, "original_max_position_embeddings", c.max_ctx));
      const char* key = c.max_ctx > original ? "long_factor" : "short_factor";
      const auto it = scaling.find(key);
      if (it == scaling.end() || !it->is_array() || it->size() != static_cast<size_t>(c.rope_dim / 2))
        fail("rope_scaling '{}' must list {} numbers", key, c.rope_dim / 2);
      c.rope_freq_factors.clear();
      for (const auto& v : *it) {
        if (!v.is_number()) fail("rope_scaling '{}' holds a non-number", key);
        c.rope_freq_factors.push_back(v.get<float>());
      }
      c.rope_mscale = static_cast<float>(hf_number(scaling, "attention_factor", longrope_mscale(c.max_ctx, original)));
      return true;
    };
    return a;
  }();
  return arch;
}

}  // namespace skiff
