#include "model/random_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant/quant.h"

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
  int64_t cols, rows;  // ggml ne[0], ne[1] (rows == 1 for vectors)
  bool is_norm;
};

std::vector<TensorPlan> llama_tensors(const RandomLlamaSpec& s, int64_t vocab) {
  const int64_t head_dim = s.dim / s.n_heads, kv_dim = head_dim * s.n_kv_heads;
  const gguf::MixModel model{s.n_layers, true, s.n_kv_heads < s.n_heads};
  std::vector<TensorPlan> t;
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows) {
    t.push_back({name, s.file_type.matrix_type(name, model), cols, rows, false});
  };
  matrix("token_embd.weight", s.dim, vocab);
  for (int l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", DType::F32, s.dim, 1, true});
    matrix(p + "attn_q.weight", s.dim, s.dim);
    matrix(p + "attn_k.weight", s.dim, kv_dim);
    matrix(p + "attn_v.weight", s.dim, kv_dim);
    matrix(p + "attn_output.weight", s.dim, s.dim);
    t.push_back({p + "ffn_norm.weight", DType::F32, s.dim, 1, true});
    matrix(p + "ffn_gate.weight", s.dim, s.ffn_dim);
    matrix(p + "ffn_up.weight", s.dim, s.ffn_dim);
    matrix(p + "ffn_down.weight", s.ffn_dim, s.dim);
  }
  t.push_back({"output_norm.weight", DType::F32, s.dim, 1, true});
  matrix("output.weight", s.dim, vocab);
  return t;
}

void check_spec(const RandomLlamaSpec& s) {
  if (s.n_layers < 1 || s.dim < 1 || s.n_heads < 1 || s.n_kv_heads < 1 || s.ffn_dim < 1 ||
      s.context_length < 1)
    fail("random model: layers, dim, heads, kv heads, ffn and context must all be positive");
  if (s.dim % s.n_heads != 0) fail("random model: dim {} is not divisible by {} heads", s.dim, s.n_heads);
  if (s.n_heads % s.n_kv_heads != 0)
    fail("random model: {} heads are not a multiple of {} kv heads", s.n_heads, s.n_kv_heads);
  if ((s.dim / s.n_heads) % 2 != 0) fail("random model: head size {} is odd (RoPE needs pairs)", s.dim / s.n_heads);
  const DTypeInfo& info = dtype_info(s.file_type.base);  // a mix's Q6_K has the same 256
  for (int cols : {s.dim, s.ffn_dim})
    if (cols % static_cast<int>(info.block_size) != 0)
      fail("random model: {} rows need a multiple of {} elements; dim {} and ffn {} are not both",
           info.name, info.block_size, s.dim, s.ffn_dim);
}

void set_llama_metadata(gguf::GgufWriter& w, const RandomLlamaSpec& s, const gguf::GgufFile& vocab) {
  auto u32 = [](int64_t v) { return gguf::make_uint(ValueType::UINT32, static_cast<uint64_t>(v)); };
  auto f32 = [](double v) { return gguf::make_float(ValueType::FLOAT32, v); };
  w.set("general.architecture", gguf::make_string("llama"));
  w.set("general.name", gguf::make_string(s.name));
  w.set("general.file_type", u32(s.file_type.id()));
  if (dtype_info(s.file_type.base).block_size > 1) w.set("general.quantization_version", u32(2));
  w.set("llama.context_length", u32(s.context_length));
  w.set("llama.embedding_length", u32(s.dim));
  w.set("llama.block_count", u32(s.n_layers));
  w.set("llama.feed_forward_length", u32(s.ffn_dim));
  w.set("llama.rope.dimension_count", u32(s.dim / s.n_heads));
  w.set("llama.attention.head_count", u32(s.n_heads));
  w.set("llama.attention.head_count_kv", u32(s.n_kv_heads));
  w.set("llama.attention.layer_norm_rms_epsilon", f32(s.norm_eps));
  w.set("llama.rope.freq_base", f32(s.rope_theta));
  for (const auto& [key, value] : vocab.metadata())
    if (key.rfind("tokenizer.", 0) == 0) w.set(key, value);
}

std::vector<uint8_t> generate_tensor(const TensorPlan& t, uint64_t seed, uint64_t tensor_index) {
  const size_t row_size = row_bytes(t.type, t.cols);
  std::vector<uint8_t> bytes(row_size * static_cast<size_t>(t.rows));
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(t.cols), 1.0f);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < t.rows; ++r) {
      if (!t.is_norm) {
        RowRng rng(mix64(mix64(mix64(seed) + tensor_index) + static_cast<uint64_t>(r)));
        rng.fill_normal(row.data(), t.cols, kWeightStd);
      }
      quantize_row(t.type, row.data(), bytes.data() + static_cast<size_t>(r) * row_size, t.cols);
    }
  }
  return bytes;
}

}  // namespace

std::string default_random_llama_vocab() {
  const char* models = std::getenv("SKIFF_MODELS");
  return std::string(models ? models : "../shared/models") + "/gguf/llama-2-tiny-random.gguf";
}

void write_random_llama(const RandomLlamaSpec& spec, const std::string& out_path) {
  check_spec(spec);
  const gguf::GgufFile vocab(spec.vocab_path);
  const auto n_vocab = static_cast<int64_t>(vocab.get_string_array("tokenizer.ggml.tokens").size());
  if (n_vocab == 0) fail("{}: no tokenizer.ggml.tokens to take the vocab from", spec.vocab_path);

  gguf::GgufWriter w;
  set_llama_metadata(w, spec, vocab);
  const std::vector<TensorPlan> plan = llama_tensors(spec, n_vocab);
  int64_t n_params = 0;
  for (const TensorPlan& t : plan) n_params += t.cols * t.rows;
  std::fprintf(stderr, "gen-model: %zu tensors, %.1f M parameters, vocab %lld, matrices %s\n",
               plan.size(), static_cast<double>(n_params) / 1e6, static_cast<long long>(n_vocab),
               spec.file_type.name().c_str());

  for (size_t i = 0; i < plan.size(); ++i) {
    std::vector<int64_t> ne = {plan[i].cols};
    if (!plan[i].is_norm) ne.push_back(plan[i].rows);
    w.add_tensor(plan[i].name, plan[i].type, std::move(ne), [&plan, &spec, i] {
      std::fprintf(stderr, "gen-model: [%zu/%zu] %s\n", i + 1, plan.size(), plan[i].name.c_str());
      return generate_tensor(plan[i], spec.seed, i);
    });
  }
  w.write(out_path);
  std::fprintf(stderr, "gen-model: wrote %s\n", out_path.c_str());
}

}  // namespace skiff
