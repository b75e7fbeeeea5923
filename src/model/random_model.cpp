#include "model/random_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant/quant.h"
#include "model/architecture.h"
#include "model/gguf_metadata.h"
#include "model/loader.h"

namespace skiff {
namespace {

using gguf::ValueType;

constexpr float kWeightStd = 0.02f;

// splitmix64's mixer, from which normals are made: counter-based, so every
// row has its own stream (rows can be generated in parallel, in any order)
// and the weights do not depend on the standard library's choice of
// normal_distribution algorithm.
uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class RowRng {
 public:
  explicit RowRng(uint64_t key) : key_(key) {}
  uint64_t next() { return mix64(key_ ^ mix64(counter_++)); }
  // Uniform in (0, 1]: never 0, so the logarithm below is finite.
  double uniform() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1p-53; }
  // Box-Muller: two normals per pair of uniforms.
  void fill_normal(float* out, int64_t n, float stddev) {
    constexpr double kTwoPi = 6.283185307179586;
    for (int64_t i = 0; i < n; i += 2) {
      const double r = std::sqrt(-2.0 * std::log(uniform())) * stddev;
      const double a = kTwoPi * uniform();
      out[i] = static_cast<float>(r * std::cos(a));
      if (i + 1 < n) out[i + 1] = static_cast<float>(r * std::sin(a));
    }
  }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

struct TensorPlan {
  std::string name;
  DType type;
  std::vector<int64_t> ne;  // ggml order: ne[0] is a row
  bool is_norm;             // filled with 1, not random

  int64_t cols() const { return ne[0]; }
  int64_t rows() const {
    int64_t rows = 1;
    for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
    return rows;
  }
};

// The family's config from a config.json of the spec's shapes: the family
// then sets its own facts (q/k norms, biases, which layers are sparse) as it
// does for a real checkpoint.
ModelConfig random_config(const RandomModelSpec& s, int64_t vocab) {
  const Architecture& arch = gguf_architecture(s.arch);
  nlohmann::json j = {{"architectures", {arch.hf_classes.front()}},
                      {"hidden_size", s.dim},
                      {"num_hidden_layers", s.n_layers},
                      {"num_attention_heads", s.n_heads},
                      {"num_key_value_heads", s.n_kv_heads},
                      {"head_dim", s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads},
                      {"intermediate_size", s.n_experts > 0 ? s.expert_ffn_dim : s.ffn_dim},
                      {"vocab_size", vocab},
                      {"max_position_embeddings", s.context_length},
                      {"rms_norm_eps", s.norm_eps},
                      {"rope_theta", s.rope_theta},
                      {"tie_word_embeddings", false}};
  // A family whose GGUF files slide without saying so (Gemma 2, gpt-oss) gets that window.
  if (arch.gguf_sliding.window > 0) j["sliding_window"] = arch.gguf_sliding.window;
  if (s.n_experts > 0) {
    // Each family's spelling; a family reads the ones it knows.
    j["num_experts"] = j["num_local_experts"] = s.n_experts;
    j["num_experts_per_tok"] = s.n_experts_used;
    j["moe_intermediate_size"] = s.expert_ffn_dim;
    j["shared_expert_intermediate_size"] = s.shared_expert_ffn_dim;
  }
  ModelConfig c = config_from_hf(j);
  c.name = s.name;
  if (s.n_experts > 0 && c.layers.front().ffn.kind != FfnKind::kExperts)
    fail("random model: architecture '{}' has no mixture of experts", s.arch);
  return c;
}

// Every tensor of the config's layers, in llama.cpp's order, with the file type's choice of matrix types.
std::vector<TensorPlan> model_tensors(const ModelConfig& c, const gguf::FileType& file_type) {
  const Architecture& arch = gguf_architecture(c.arch);
  const gguf::MixModel mix{c.n_layers, true, c.n_kv_heads < c.n_heads,
                           c.layers.front().ffn.kind == FfnKind::kExperts ? c.layers.front().ffn.experts.n_experts : 0};
  std::vector<TensorPlan> t;
  auto matrix = [&](const std::string& name, std::vector<int64_t> ne) {
    t.push_back({name, file_type.matrix_type(name, mix), std::move(ne), false});
  };
  auto vector = [&](const std::string& name, int64_t n, bool is_norm) { t.push_back({name, DType::F32, {n}, is_norm}); };
  const int64_t d = c.dim, q = c.q_dim(), kv = c.kv_dim();
  matrix("token_embd.weight", {d, c.vocab_size});
  for (int l = 0; l < c.n_layers; ++l) {
    const AttentionSpec& A = c.layers[l].attention;
    const FfnSpec& F = c.layers[l].ffn;
    const std::string p = "blk." + std::to_string(l) + ".";
    vector(p + "attn_norm.weight", d, true);
    if (arch.fused_qkv) {
      matrix(p + "attn_qkv.weight", {d, q + 2 * kv});
    } else {
      matrix(p + "attn_q.weight", {d, q});
      matrix(p + "attn_k.weight", {d, kv});
      matrix(p + "attn_v.weight", {d, kv});
    }
    if (A.qkv_bias) {
      vector(p + "attn_q.bias", q, false);
      vector(p + "attn_k.bias", kv, false);
      vector(p + "attn_v.bias", kv, false);
    }
    if (A.qk_norm) {
      vector(p + "attn_q_norm.weight", A.qk_norm_whole ? q : c.head_dim, true);
      vector(p + "attn_k_norm.weight", A.qk_norm_whole ? kv : c.head_dim, true);
    }
    matrix(p + "attn_output.weight", {q, d});
    if (A.o_bias) vector(p + "attn_output.bias", d, false);
    if (A.sinks) vector(p + "attn_sinks.weight", c.n_heads, false);
    if (A.post_norm) vector(p + "post_attention_norm.weight", d, true);
    vector(p + arch.ffn_norm_name + ".weight", d, true);
    if (F.kind == FfnKind::kExperts) {
      const ExpertsSpec& e = F.experts;
      matrix(p + "ffn_gate_inp.weight", {d, e.n_experts});
      if (e.biases) vector(p + "ffn_gate_inp.bias", e.n_experts, false);
      if (e.shared_ffn_dim > 0) {
        matrix(p + "ffn_gate_shexp.weight", {d, e.shared_ffn_dim});
        matrix(p + "ffn_up_shexp.weight", {d, e.shared_ffn_dim});
        matrix(p + "ffn_down_shexp.weight", {e.shared_ffn_dim, d});
      }
      if (e.shared_gate) vector(p + "ffn_gate_inp_shexp.weight", d, false);
      matrix(p + "ffn_gate_exps.weight", {d, e.ffn_dim, e.n_experts});
      matrix(p + "ffn_up_exps.weight", {d, e.ffn_dim, e.n_experts});
      matrix(p + "ffn_down_exps.weight", {e.ffn_dim, d, e.n_experts});
      if (e.biases) {
        t.push_back({p + "ffn_gate_exps.bias", DType::F32, {e.ffn_dim, e.n_experts}, false});
        t.push_back({p + "ffn_up_exps.bias", DType::F32, {e.ffn_dim, e.n_experts}, false});
        t.push_back({p + "ffn_down_exps.bias", DType::F32, {d, e.n_experts}, false});
      }
    } else if (arch.fused_gate_up) {
      matrix(p + "ffn_up.weight", {d, 2 * int64_t{c.ffn_dim}});
      matrix(p + "ffn_down.weight", {c.ffn_dim, d});
    } else {
      matrix(p + "ffn_gate.weight", {d, c.ffn_dim});
      matrix(p + "ffn_up.weight", {d, c.ffn_dim});
      matrix(p + "ffn_down.weight", {c.ffn_dim, d});
    }
    if (F.post_norm) vector(p + "post_ffw_norm.weight", d, true);
  }
  vector("output_norm.weight", d, true);
  matrix("output.weight", {d, c.vocab_size});
  return t;
}

void check_spec(const RandomModelSpec& s) {
  if (s.n_layers < 1 || s.dim < 1 || s.n_heads < 1 || s.n_kv_heads < 1 || s.ffn_dim < 1 || s.context_length < 1)
    fail("random model: layers, dim, heads, kv heads, ffn and context must all be positive");
  if (s.head_dim == 0 && s.dim % s.n_heads != 0) fail("random model: dim {} is not divisible by {} heads", s.dim, s.n_heads);
  if (s.n_heads % s.n_kv_heads != 0)
    fail("random model: {} heads are not a multiple of {} kv heads", s.n_heads, s.n_kv_heads);
  const int head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads;
  if (head_dim % 2 != 0) fail("random model: head size {} is odd (RoPE needs pairs)", head_dim);
  if (s.n_experts > 0 && (s.n_experts_used < 1 || s.n_experts_used > s.n_experts || s.expert_ffn_dim < 1))
    fail("random model: {} experts need 1 to {} used per token and a positive expert FFN width", s.n_experts,
         s.n_experts);
}

// Each matrix's rows must be whole blocks of its type.
void check_blocks(const std::vector<TensorPlan>& plan) {
  for (const TensorPlan& t : plan) {
    const DTypeInfo& info = dtype_info(t.type);
    if (t.cols() % static_cast<int64_t>(info.block_size) != 0)
      fail("random model: {} rows of {} elements are not whole {} blocks of {}", t.name, t.cols(), info.name,
           info.block_size);
  }
}

void set_metadata(gguf::GgufWriter& w, const ModelConfig& c, const RandomModelSpec& s, const gguf::GgufFile& vocab) {
  for (const auto& [key, value] : gguf_metadata(c)) w.set(key, value);
  w.set("general.file_type", gguf::make_uint(ValueType::UINT32, s.file_type.id()));
  if (dtype_info(s.file_type.base).block_size > 1)
    w.set("general.quantization_version", gguf::make_uint(ValueType::UINT32, 2));
  for (const auto& [key, value] : vocab.metadata())
    if (key.rfind("tokenizer.", 0) == 0) w.set(key, value);
}

std::vector<uint8_t> generate_tensor(const TensorPlan& t, uint64_t seed, uint64_t tensor_index) {
  const int64_t rows = t.rows(), cols = t.cols();
  const size_t row_size = row_bytes(t.type, cols);
  std::vector<uint8_t> bytes(row_size * static_cast<size_t>(rows));
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(cols), 1.0f);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      if (!t.is_norm) {
        RowRng rng(mix64(mix64(mix64(seed) + tensor_index) + static_cast<uint64_t>(r)));
        rng.fill_normal(row.data(), cols, kWeightStd);
      }
      quantize_row(t.type, row.data(), bytes.data() + static_cast<size_t>(r) * row_size, cols);
    }
  }
  return bytes;
}

}  // namespace

std::string default_random_llama_vocab() {
  const char* models = std::getenv("SKIFF_MODELS");
  return std::string(models ? models : "../shared/models") + "/gguf/llama-2-tiny-random.gguf";
}

void write_random_model(const RandomModelSpec& spec, const std::string& out_path) {
  check_spec(spec);
  const gguf::GgufFile vocab(spec.vocab_path);
  const auto n_vocab = static_cast<int64_t>(vocab.get_string_array("tokenizer.ggml.tokens").size());
  if (n_vocab == 0) fail("{}: no tokenizer.ggml.tokens to take the vocab from", spec.vocab_path);
  ModelConfig config;
  try {
    config = random_config(spec, n_vocab);
  } catch (const Error& e) {
    fail("random model: {}", e.what());
  }
  const std::vector<TensorPlan> plan = model_tensors(config, spec.file_type);
  check_blocks(plan);

  gguf::GgufWriter w;
  set_metadata(w, config, spec, vocab);
  int64_t n_params = 0;
  for (const TensorPlan& t : plan) n_params += t.cols() * t.rows();
  std::fprintf(stderr, "gen-model: %s, %zu tensors, %.1f M parameters, vocab %lld, matrices %s\n", spec.arch.c_str(),
               plan.size(), static_cast<double>(n_params) / 1e6, static_cast<long long>(n_vocab),
               spec.file_type.name().c_str());

  for (size_t i = 0; i < plan.size(); ++i) {
    w.add_tensor(plan[i].name, plan[i].type, plan[i].ne, [&plan, &spec, i] {
      std::fprintf(stderr, "gen-model: [%zu/%zu] %s\n", i + 1, plan.size(), plan[i].name.c_str());
      return generate_tensor(plan[i], spec.seed, i);
    });
  }
  w.write(out_path);
  std::fprintf(stderr, "gen-model: wrote %s\n", out_path.c_str());
}

}  // namespace skiff
