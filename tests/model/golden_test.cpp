// The model against independent float64 references: greedy ids from BOS must
// match all steps exactly, and the first 8 steps' logits within 1e-4.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "each_isa.h"
#include "kernels/isa.h"
#include "model/loader.h"

namespace skiff {
namespace {

const std::string kModels = SKIFF_MODELS_DIR;

nlohmann::json read_golden(const std::string& name) {
  std::ifstream in(kModels + "/derived/golden/" + name);
  EXPECT_TRUE(in) << name;
  return nlohmann::json::parse(in);
}

int argmax(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Feeds BOS then each greedy token one decode step at a time.
void check_greedy(const std::string& model_path, const std::string& golden_name) {
  const nlohmann::json golden = read_golden(golden_name);
  const auto ids = golden["greedy_ids"].get<std::vector<int>>();
  const auto first_logits = golden["logits_first8_steps"].get<std::vector<std::vector<double>>>();
  auto model = load_model(model_path);
  PagedKvCache kv = model->make_kv_cache(1, static_cast<int>(ids.size()) + 1, KvType::kF32);
  int32_t token = golden["prompt_ids"][0].get<int>();
  for (size_t step = 0; step < ids.size(); ++step) {
    const std::vector<float> logits = model->decode(kv, 0, token);
    if (step < first_logits.size()) {
      ASSERT_EQ(logits.size(), first_logits[step].size());
      for (size_t i = 0; i < logits.size(); ++i)
        ASSERT_NEAR(logits[i], first_logits[step][i], 1e-4) << "step " << step << " logit " << i;
    }
    ASSERT_EQ(argmax(logits), ids[step]) << "step " << step;
    token = ids[step];
  }
}

TEST(Golden, Stories260KGguf) {
  check_greedy(kModels + "/derived/stories260K-f32.gguf", "stories260K.greedy.json");
}

// The same golden run on every kernel path this CPU can take (scalar, AVX2, AVX-512).
TEST(Golden, Stories260KOnEveryIsa) {
  testing::for_each_isa([](Isa isa) {
    SCOPED_TRACE(isa_name(isa));
    check_greedy(kModels + "/derived/stories260K-f32.gguf", "stories260K.greedy.json");
  });
}
TEST(Golden, Stories260KHf) {
  check_greedy(kModels + "/derived/stories260K-hf", "stories260K.greedy.json");
}
TEST(Golden, SaltyduckeggGguf) {
  check_greedy(kModels + "/derived/tinystories260K-saltyduckegg-f32.gguf",
               "tinystories260K-saltyduckegg.greedy.json");
}
TEST(Golden, SaltyduckeggHf) {
  check_greedy(kModels + "/derived/tinystories260K-saltyduckegg-hf",
               "tinystories260K-saltyduckegg.greedy.json");
}

// Prefill of a prompt as one batch must give the same logits as feeding it
// token by token, and leave the same cache for the decode that follows.
TEST(Golden, PrefillMatchesStepwiseDecode) {
  const nlohmann::json golden = read_golden("stories260K.greedy.json");
  auto ids = golden["greedy_ids"].get<std::vector<int32_t>>();
  ids.insert(ids.begin(), 1);
  ids.resize(40);
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  PagedKvCache batched = model->make_kv_cache(1, 64, KvType::kF32), stepwise = model->make_kv_cache(1, 64, KvType::kF32);
  const std::vector<float> a = model->prefill(batched, 0, ids);
  std::vector<float> b;
  for (int32_t t : ids) b = model->decode(stepwise, 0, t);
  // Prefill's GEMM tiles sum in another order than decode's rows: logits of
  // magnitude up to ~10 agree to a few float ulps of that.
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 3e-5);
  EXPECT_EQ(argmax(model->decode(batched, 0, 5)), argmax(model->decode(stepwise, 0, 5)));
}

// Two sequences in one ragged batch get the logits each gets alone.
TEST(Golden, RaggedBatchMatchesSeparateRuns) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  const std::vector<int32_t> p1 = {1, 403, 407, 261, 378}, p2 = {1, 300, 301};
  PagedKvCache kv = model->make_kv_cache(2, 32, KvType::kF32);
  Batch batch;
  batch.tokens = p1;
  batch.tokens.insert(batch.tokens.end(), p2.begin(), p2.end());
  batch.seqs = {{0, 0, 5, 2}, {1, 0, 3, 1}};
  std::vector<float> logits(3 * 512);
  model->forward_and_append(batch, kv, logits.data());
  PagedKvCache alone = model->make_kv_cache(1, 32, KvType::kF32);
  const std::vector<float> l1 = model->prefill(alone, 0, p1);
  alone.truncate(0, 0);
  const std::vector<float> l2 = model->prefill(alone, 0, p2);
  for (int i = 0; i < 512; ++i) {
    ASSERT_NEAR(logits[512 + i], l1[i], 1e-5);
    ASSERT_NEAR(logits[1024 + i], l2[i], 1e-5);
  }
}

TEST(Golden, RejectsBadBatches) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  PagedKvCache kv = model->make_kv_cache(1, 4, KvType::kF32);
  std::vector<float> logits(512);
  ASSERT_TRUE(kv.reserve(0, 4));  // so that only the batches are wrong
  Batch too_long{{1, 2, 3, 4, 5}, {{0, 0, 5, 1}}};
  EXPECT_THROW(model->forward(too_long, kv, logits.data()), Error);
  Batch bad_token{{1, 9999}, {{0, 0, 2, 1}}};
  EXPECT_THROW(model->forward(bad_token, kv, logits.data()), Error);
  Batch wrong_pos{{1}, {{0, 3, 1, 1}}};
  EXPECT_THROW(model->forward(wrong_pos, kv, logits.data()), Error);
}

// The per-token matrix work the benchmarks count: the seven layer matrices,
// from the config's shapes (stories260K is tied: the head is not a layer's).
TEST(Loader, LayerParamsCountTheSevenLayerMatrices) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  const ModelConfig& c = model->config();
  const double per_layer = 2.0 * c.dim * c.q_dim() + 2.0 * c.dim * c.kv_dim() + 3.0 * c.dim * c.ffn_dim;
  EXPECT_EQ(model->weights().layer_params(c), c.n_layers * per_layer);
}

TEST(Loader, MissingModelIsAClearError) {
  try {
    load_model("/nonexistent/model.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos);
  }
}

}  // namespace
}  // namespace skiff
