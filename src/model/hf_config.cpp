// config.json -> ModelConfig: the hyperparameters every decoder family names
// alike, then the family's own facts (model/arch_*.cpp). transformers >= 5
// writes "rope_parameters" (rope_theta inside; per layer type for Gemma 3);
// older versions a top-level "rope_theta" and an optional "rope_scaling".
#include <cmath>

#include "base/error.h"
#include "base/json.h"
#include "model/architecture.h"
#include "model/loader.h"

namespace skiff {
namespace {

using nlohmann::json;

// A positive size; fallback < 0: the key is required.
int int_field(const json& j, const char* key, int fallback) {
  constexpr int64_t kAbsent = INT64_MIN;
  const int64_t v = hf_int(j, key, kAbsent);
  if (v == kAbsent) {
    if (fallback < 0) fail("missing '{}'", key);
    return fallback;
  }
  if (v <= 0 || v > (1 << 30)) fail("'{}' = {} is out of range", key, v);
  return static_cast<int>(v);
}

float float_field(const json& j, const char* key, float fallback) {
  return static_cast<float>(hf_number(j, key, fallback));
}

// The RoPE parameters of the global layers, or null: "rope_parameters" (per
// layer type when it holds "full_attention") or the older "rope_scaling".
const json* rope_parameters(const json& j) {
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_object()) continue;
    const auto full = it->find("full_attention");
    return full != it->end() && full->is_object() ? &*full : &*it;
  }
  return nullptr;
}

// YaRN as transformers' _compute_yarn_parameters reads it: a missing factor is
// the context's extension, a missing attention factor YaRN's default (or the
// ratio of two when mscale and mscale_all_dim are given), unset betas 32 and 1.
void read_yarn(const json& rs, const json& j, ModelConfig& c) {
  const int top_level = int_field(j, "original_max_position_embeddings", 0);  // older configs
  const int original = int_field(rs, "original_max_position_embeddings", top_level > 0 ? top_level : -1);
  YarnRope& y = c.rope_yarn;
  y.factor = float_field(rs, "factor", static_cast<float>(c.max_ctx) / original);
  auto unless_zero = [&](const char* key, float fallback) {  // Python's `x or fallback`
    const float v = float_field(rs, key, 0);
    return v != 0 ? v : fallback;
  };
  y.beta_fast = unless_zero("beta_fast", 32.0f);
  y.beta_slow = unless_zero("beta_slow", 1.0f);
  y.truncate = bool_field(rs, "truncate", true);
  const float mscale = float_field(rs, "mscale", 0), mscale_all_dim = float_field(rs, "mscale_all_dim", 0);
  const float fallback = mscale != 0 && mscale_all_dim != 0
                             ? yarn_mscale(y.factor, mscale) / yarn_mscale(y.factor, mscale_all_dim)
                             : yarn_mscale(y.factor);
  c.rope_mscale = float_field(rs, "attention_factor", fallback);
  c.rope_original_ctx = original;
  c.rope_freq_factors = yarn_rope_factors(c.rope_dim, c.rope_theta, y, original);
}

void read_rope(const json& j, const Architecture& arch, ModelConfig& c) {
  const json* rope = rope_parameters(j);
  c.rope_theta = float_field(j, "rope_theta", 10000.0f);
  if (!rope) return;
  const json& rs = *rope;
  c.rope_theta = float_field(rs, "rope_theta", c.rope_theta);
  const std::string kind = string_field(rs, "rope_type", string_field(rs, "type", ""));
  const float factor = float_field(rs, "factor", 1.0f);
  if (kind == "llama3") {
    c.rope_freq_factors = llama3_rope_factors(
        c.rope_dim, c.rope_theta, factor, float_field(rs, "low_freq_factor", 1.0f),
        float_field(rs, "high_freq_factor", 4.0f), int_field(rs, "original_max_position_embeddings", 8192));
  } else if (kind == "linear") {
    c.rope_freq_factors.assign(c.rope_dim / 2, factor);
  } else if (kind == "yarn") {
    read_yarn(rs, j, c);
  } else if (kind != "default" && !kind.empty() &&
             !(arch.hf_rope_scaling && arch.hf_rope_scaling(kind, rs, j, c))) {
    fail("rope_scaling type '{}' is not supported", kind);
  }
}

// Gemma 3's local layers: "rope_parameters.sliding_attention.rope_theta".
void read_sliding_rope(const json& j, ModelConfig& c) {
  const auto params = j.find("rope_parameters");
  if (params == j.end() || !params->is_object()) return;
  const auto sliding = params->find("sliding_attention");
  if (sliding == params->end() || !sliding->is_object()) return;
  if (const float theta = float_field(*sliding, "rope_theta", 0); theta != 0) set_local_rope(c, theta);
}

}  // namespace

std::string hf_quant_method(const json& j) {
  const auto q = j.find("quantization_config");
  if (q == j.end() || q->is_null()) return "";
  if (!q->is_object()) fail("'quantization_config' must be an object");
  const auto method = q->find("quant_method");
  if (method == q->end() || !method->is_string()) fail("'quantization_config' has no 'quant_method' string");
  const std::string m = method->get<std::string>();
  if (m != "mxfp4") fail("quantization_config's quant_method '{}' is not supported (skiff reads 'mxfp4')", m);
  return m;
}

ModelConfig config_from_hf(const json& j) {
  const Architecture& arch = hf_architecture(j);
  hf_quant_method(j);  // an unsupported one is refused before any weight is read
  ModelConfig c;
  c.arch = arch.gguf_name;
  c.name = string_field(j, "_name_or_path", arch.gguf_name);
  c.n_layers = int_field(j, "num_hidden_layers", -1);
  c.dim = int_field(j, "hidden_size", -1);
  c.n_heads = int_field(j, "num_attention_heads", -1);
  c.n_kv_heads = int_field(j, "num_key_value_heads", c.n_heads);
  c.head_dim = int_field(j, "head_dim", c.dim / c.n_heads);
  c.ffn_dim = int_field(j, "intermediate_size", -1);
  c.vocab_size = int_field(j, "vocab_size", -1);
  c.max_ctx = int_field(j, "max_position_embeddings", 2048);
  c.norm_eps = float_field(j, "rms_norm_eps", 1e-6f);
  const json* rope = rope_parameters(j);
  const float rotary = float_field(rope ? *rope : j, "partial_rotary_factor", float_field(j, "partial_rotary_factor", 1.0f));
  c.rope_dim = static_cast<int>(std::lround(c.head_dim * rotary));
  c.rope_style = RopeStyle::kRotateHalf;  // HF checkpoints keep each head's pairs as halves
  c.tied_output = bool_field(j, "tie_word_embeddings", false);
  read_rope(j, arch, c);
  start_layers(c);
  arch.from_hf(j, c);
  read_sliding_rope(j, c);
  c.validate();
  return c;
}

}  // namespace skiff
