#include "bench/runner.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

#include "base/error.h"
#include "base/timer.h"
#include "kernels/isa.h"

namespace skiff::bench {
namespace {

constexpr uint32_t kTokenSeed = 1234;

uint64_t matrix_params(const Matrix& m) { return static_cast<uint64_t>(m.rows * m.cols); }
uint64_t matrix_bytes(const Matrix& m) { return m.rows * row_bytes(m.type, m.cols); }

// Every distinct weight matrix of the model, the tied head once.
std::vector<const Matrix*> all_matrices(const ModelWeights& w) {
  std::vector<const Matrix*> out = w.matrices();
  if (w.output.data == w.token_embedding.data) out.pop_back();
  return out;
}

std::string params_label(uint64_t n) {
  if (n < 1'000'000) return fmt::format("{:.0f}K", n / 1e3);
  if (n < 1'000'000'000) return fmt::format("{:.0f}M", n / 1e6);
  return fmt::format("{:.1f}B", n / 1e9);
}

std::vector<int32_t> random_tokens(int n, int vocab) {
  std::mt19937 rng(kTokenSeed);
  std::uniform_int_distribution<int32_t> pick(0, vocab - 1);
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = pick(rng);
  return tokens;
}

// logits: vocab_size floats, reused by every step (a fresh megabyte per token
// cost Gemma's decode 2% in memset, page faults and malloc).
void run_once(Model& model, PagedKvCache& kv, const TestSpec& test, const std::vector<int32_t>& tokens,
              float* logits) {
  kv.truncate(0, test.n_depth);
  const TestKind kind = test.kind;
  if (kind == TestKind::kPrompt) {
    model.prefill(kv, 0, tokens, logits);
  } else {
    for (int32_t t : tokens) model.decode(kv, 0, t, logits);
  }
}

// Positions [0, depth) of sequence 0 hold random K/V.
void fill_random_kv(PagedKvCache& kv, int depth) {
  if (depth == 0) return;
  if (!kv.reserve(0, depth)) fail("KV cache too small for depth {}", depth);
  const KvShape shape = kv.shape();
  std::mt19937 rng(kTokenSeed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k(shape.n_kv_heads * shape.head_dim), v(k.size());
  for (int pos = 0; pos < depth; ++pos) {
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    for (int l = 0; l < shape.n_layers; ++l) kv.write(l, 0, pos, k.data(), v.data());
  }
  kv.set_length(0, depth);
}

void summarize(TestResult& r, int n_tokens) {
  const double n = static_cast<double>(r.samples_ns.size());
  for (double ns : r.samples_ns) r.samples_ts.push_back(n_tokens * 1e9 / ns);
  auto mean_sd = [n](const std::vector<double>& xs, double& mean, double& sd) {
    mean = 0;
    for (double x : xs) mean += x / n;
    double ss = 0;
    for (double x : xs) ss += (x - mean) * (x - mean);
    sd = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  };
  mean_sd(r.samples_ns, r.avg_ns, r.stddev_ns);
  mean_sd(r.samples_ts, r.avg_ts, r.stddev_ts);
}

}  // namespace

ModelFacts describe_model(const std::string& filename, const Model& model) {
  const ModelWeights& w = model.weights();
  ModelFacts f;
  f.filename = filename;
  std::map<std::string, uint64_t> params_by_type;
  for (const Matrix* m : all_matrices(w)) {
    f.size_bytes += matrix_bytes(*m);
    f.n_params += matrix_params(*m);
    params_by_type[std::string(dtype_info(m->type).name)] += matrix_params(*m);
  }
  uint64_t norm_params = w.output_norm.size();
  for (const LayerWeights& L : w.layers) norm_params += L.attention.norm.size() + L.ffn.norm.size();
  f.size_bytes += norm_params * sizeof(float);
  f.n_params += norm_params;
  for (const auto& [type, n] : params_by_type)
    if (f.type_name.empty() || n > params_by_type[f.type_name]) f.type_name = type;
  if (!model.config().file_type.empty()) f.type_name = model.config().file_type;  // names a mix: Q4_K_M
  f.description = fmt::format("{} {} {}", model.config().arch, params_label(f.n_params), f.type_name);
  f.decode_bytes_per_token = w.decode_bytes_per_token(model.config());
  uint64_t matrix_params = 0, float_params = 0;
  for (const auto& [type, n] : params_by_type) matrix_params += n;
  for (DType t : {DType::F32, DType::F16, DType::BF16}) float_params += params_by_type[std::string(dtype_info(t).name)];
  // The scalar kernels multiply quantized weights in floats.
  f.int8_products = active_isa() != Isa::kScalar && 2 * float_params < matrix_params;
  return f;
}

std::string TestSpec::name() const {
  const std::string base = fmt::format("{}{}", kind == TestKind::kPrompt ? "pp" : "tg", n_tokens);
  return n_depth > 0 ? fmt::format("{} @ d{}", base, n_depth) : base;
}

TestResult run_test(Model& model, const TestSpec& test, const std::function<void(int)>& on_rep) {
  const ModelConfig& c = model.config();
  const int context = test.n_depth + test.n_tokens;
  if (test.n_tokens < 1 || test.n_depth < 0 || context > c.max_ctx)
    fail("test {} needs a context of {} tokens; the model's is {}", test.name(), context, c.max_ctx);
  if (test.reps < 1) fail("repetitions must be at least 1, not {}", test.reps);
  PagedKvCache kv = model.make_kv_cache(1, context, test.kv_type);
  fill_random_kv(kv, test.n_depth);
  const std::vector<int32_t> tokens = random_tokens(test.n_tokens, c.vocab_size);
  std::vector<float> logits(c.vocab_size);
  TestResult result;
  for (int rep = 0; rep <= test.reps; ++rep) {
    on_rep(rep);
    Timer timer;
    run_once(model, kv, test, tokens, logits.data());
    if (rep > 0) result.samples_ns.push_back(timer.seconds() * 1e9);
  }
  summarize(result, test.n_tokens);
  result.kv_bytes_per_step = (test.n_depth + test.n_tokens / 2.0) * kv.bytes_per_token();
  return result;
}

double prefill_flops(const Model& model, int n_prompt, int n_depth) {
  const ModelConfig& c = model.config();
  const double p = n_prompt;
  return 2.0 * p * model.weights().layer_params(c) + 2.0 * c.vocab_size * c.dim +
         4.0 * c.n_layers * c.q_dim() * p * (n_depth + (p + 1) / 2);
}

}  // namespace skiff::bench
