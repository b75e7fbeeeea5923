// Mixtures of experts: routing against a plain reference, files whose expert
// keys disagree with their tensors (clear errors before any weight is read),
// and a router that gives NaN (no crash).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/experts.h"
#include "model/loader.h"
#include "model/random_model.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

// The reference: softmax over all logits in double, the k largest (ties to
// the lower id), renormalised when asked.
void reference_route(const ExpertsSpec& spec, const std::vector<float>& logits, std::vector<int32_t>& ids,
                     std::vector<double>& weights) {
  const int n = spec.n_experts;
  std::vector<double> p(n);
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (int e = 0; e < n; ++e) sum += p[e] = std::exp(logits[e] - max);
  for (double& v : p) v /= sum;
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  ids.assign(order.begin(), order.begin() + spec.n_used);
  weights.clear();
  double kept = 0;
  for (int32_t id : ids) kept += p[id];
  for (int32_t id : ids) weights.push_back(spec.normalize ? p[id] / kept : p[id]);
}

TEST(RouteToken, MatchesTheReference) {
  std::mt19937 rng(43);
  std::normal_distribution<float> logit(0.0f, 2.0f);
  for (bool normalize : {false, true})
    for (int n_experts : {4, 64, 128})
      for (int k : {1, 2, 8}) {
        if (k > n_experts) continue;
        const ExpertsSpec spec{.n_experts = n_experts, .n_used = k, .ffn_dim = 16, .normalize = normalize};
        for (int trial = 0; trial < 20; ++trial) {
          std::vector<float> logits(n_experts);
          for (float& v : logits) v = logit(rng);
          if (trial == 0) logits[1] = logits[0];  // a tie: the lower id first
          std::vector<int32_t> ids(k), want_ids;
          std::vector<float> weights(k);
          std::vector<double> want;
          route_token(spec, logits.data(), ids.data(), weights.data());
          reference_route(spec, logits, want_ids, want);
          ASSERT_EQ(ids, want_ids) << n_experts << " experts, k " << k;
          for (int j = 0; j < k; ++j) EXPECT_NEAR(weights[j], want[j], 1e-6) << j;
        }
      }
}

// NaN logits (a broken router) still give k distinct ids in range.
TEST(RouteToken, NanLogitsGiveDistinctIdsInRange) {
  const ExpertsSpec spec{.n_experts = 16, .n_used = 4, .ffn_dim = 16, .normalize = true};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<float> logits(16, nan);
    if (pattern == 1)
      for (int e = 0; e < 16; e += 2) logits[e] = static_cast<float>(e);
    if (pattern == 2) logits[5] = std::numeric_limits<float>::infinity();
    std::vector<int32_t> ids(4);
    std::vector<float> weights(4);
    route_token(spec, logits.data(), ids.data(), weights.data());
    const std::set<int32_t> distinct(ids.begin(), ids.end());
    EXPECT_EQ(distinct.size(), 4u) << pattern;
    for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < 16) << pattern;
  }
}

const std::string kVocab = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

// A tiny random Qwen3-MoE (8 experts of 32, 2 a token) in F32.
std::string tiny_moe(const std::string& name) {
  RandomModelSpec spec;
  spec.arch = "qwen3moe";
  spec.n_layers = 2;
  spec.dim = 64;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 128;
  spec.n_experts = 8;
  spec.n_experts_used = 2;
  spec.expert_ffn_dim = 32;
  spec.vocab_path = kVocab;
  spec.file_type = DType::F32;
  spec.context_length = 128;
  const std::string path = (fs::path(::testing::TempDir()) / (name + ".gguf")).string();
  write_random_model(spec, path);
  return path;
}

// `in` with `key` set to `value` and tensors passed through `edit_tensor`
// (name, bytes), written to `out`.
void rewrite(const std::string& in, const std::string& out, const std::string& key, const gguf::Value* value,
             const std::function<void(const std::string&, std::vector<uint8_t>&)>& edit_tensor = nullptr) {
  const gguf::GgufFile f(in);
  gguf::GgufWriter w;
  for (const auto& [k, v] : f.metadata()) w.set(k, k == key && value ? *value : v);
  if (value && !f.find(key)) w.set(key, *value);
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::vector<uint8_t> bytes(t.data, t.data + t.nbytes);
    if (edit_tensor) edit_tensor(t.name, bytes);
    w.add_tensor(t.name, t.type, t.ne, std::move(bytes));
  }
  w.write(out);
}

std::string load_error(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ExpertFiles, KeysThatDisagreeWithTheTensorsAreClearErrors) {
  const std::string good = tiny_moe("experts_good");
  ASSERT_EQ(load_error(good), "");
  const std::string bad = (fs::path(::testing::TempDir()) / "experts_bad.gguf").string();
  auto u64 = [](int64_t v) { return gguf::make_uint(gguf::ValueType::UINT64, static_cast<uint64_t>(v)); };
  const struct {
    const char* key;
    int64_t value;
    const char* error;  // a part of the message
  } cases[] = {
      {"qwen3moe.expert_count", 16, "ffn_gate_inp.weight' has shape [8, 64], expected [16, 64]"},
      {"qwen3moe.expert_count", 0, "0 experts is out of range"},
      {"qwen3moe.expert_used_count", 9, "9 experts per token of 8"},
      {"qwen3moe.expert_used_count", 0, "0 experts per token"},
      {"qwen3moe.expert_feed_forward_length", 48, "ffn_gate_exps.weight' has shape [256, 64], expected [384, 64]"},
      {"qwen3moe.expert_count", int64_t{1} << 40, "expert count"},
  };
  for (const auto& c : cases) {
    const gguf::Value v = u64(c.value);
    rewrite(good, bad, c.key, &v);
    const std::string error = load_error(bad);
    EXPECT_NE(error.find(c.error), std::string::npos) << c.key << " = " << c.value << ": " << error;
    EXPECT_NE(error.find(bad), std::string::npos) << "names the file: " << error;
  }
  // No router in any layer although the file counts experts.
  {
    const gguf::GgufFile f(good);
    gguf::GgufWriter w;
    for (const auto& [k, v] : f.metadata()) w.set(k, v);
    for (const gguf::TensorInfo& t : f.tensors())
      if (t.name.find("ffn_gate_inp") == std::string::npos)
        w.add_tensor(t.name, t.type, t.ne, std::vector<uint8_t>(t.data, t.data + t.nbytes));
    w.write(bad);
  }
  EXPECT_NE(load_error(bad).find("no layer has a router"), std::string::npos) << load_error(bad);
  fs::remove(good);
  fs::remove(bad);
}

// A router whose weights are NaN: its tokens' outputs are NaN, and the model
// does not crash (the sampler refuses all-NaN logits with an error:
// tests/engine).
TEST(ExpertFiles, NanRouterDoesNotCrash) {
  const std::string good = tiny_moe("experts_nan_src");
  const std::string path = (fs::path(::testing::TempDir()) / "experts_nan.gguf").string();
  rewrite(good, path, "", nullptr, [](const std::string& name, std::vector<uint8_t>& bytes) {
    if (name != "blk.1.ffn_gate_inp.weight") return;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 0; i + sizeof(float) <= bytes.size(); i += sizeof(float)) std::memcpy(&bytes[i], &nan, sizeof nan);
  });
  auto model = load_model(path);
  PagedKvCache kv = model->make_kv_cache(1, 64);
  const std::vector<float> logits = model->prefill(kv, 0, std::vector<int32_t>{1, 300, 301});
  EXPECT_TRUE(std::any_of(logits.begin(), logits.end(), [](float v) { return std::isnan(v); }));
  fs::remove(good);
  fs::remove(path);
}

}  // namespace
}  // namespace skiff
