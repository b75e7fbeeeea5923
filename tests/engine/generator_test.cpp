#include "engine/generator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "model/loader.h"

namespace skiff {
namespace {

const std::string kModels = SKIFF_MODELS_DIR;

std::vector<int32_t> golden_ids() {
  std::ifstream in(kModels + "/derived/golden/stories260K.greedy.json");
  return nlohmann::json::parse(in)["greedy_ids"].get<std::vector<int32_t>>();
}

TEST(Generate, GreedyFromBosMatchesGolden) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  PagedKvCache kv = model->make_kv_cache(1, 512, KvType::kF32);
  GenerateOptions options;
  options.max_tokens = 256;
  options.sampling.temperature = 0;
  std::vector<int32_t> out;
  const std::vector<int32_t> prompt = {1};
  const GenerationStats stats = generate(*model, kv, prompt, options, [&](int32_t t) {
    out.push_back(t);
    return true;
  });
  EXPECT_EQ(out, golden_ids());
  EXPECT_EQ(stats.generated_tokens, 256);
  EXPECT_EQ(stats.decode_steps, 255);
  EXPECT_EQ(kv.length(0), 256);
}

TEST(Generate, StopsAtEndTokenAndCallback) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  const std::vector<int32_t> ids = golden_ids(), prompt = {1};
  GenerateOptions options;
  options.sampling.temperature = 0;
  options.is_end_token = [&](int32_t t) { return t == ids[5]; };
  std::vector<int32_t> out;
  PagedKvCache kv = model->make_kv_cache(1, 64, KvType::kF32);
  GenerationStats stats = generate(*model, kv, prompt, options, [&](int32_t t) {
    out.push_back(t);
    return true;
  });
  EXPECT_TRUE(stats.stopped_at_end_token);
  EXPECT_EQ(out, std::vector<int32_t>(ids.begin(), ids.begin() + 5));

  PagedKvCache kv2 = model->make_kv_cache(1, 64, KvType::kF32);
  options.is_end_token = nullptr;
  out.clear();
  generate(*model, kv2, prompt, options, [&](int32_t t) {
    out.push_back(t);
    return out.size() < 3;
  });
  EXPECT_EQ(out.size(), 3u);
}

TEST(Generate, SeededSamplingIsReproducible) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  auto run = [&](uint64_t seed) {
    GenerateOptions options;
    options.max_tokens = 40;
    options.sampling.temperature = 1.0f;
    options.sampling.seed = seed;
    PagedKvCache kv = model->make_kv_cache(1, 64, KvType::kF32);
    std::vector<int32_t> out;
    const std::vector<int32_t> prompt = {1};
    generate(*model, kv, prompt, options, [&](int32_t t) {
      out.push_back(t);
      return true;
    });
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(Generate, PromptLongerThanContextIsAnError) {
  auto model = load_model(kModels + "/derived/stories260K-f32.gguf");
  PagedKvCache kv = model->make_kv_cache(1, 4, KvType::kF32);
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5};
  EXPECT_THROW(generate(*model, kv, prompt, GenerateOptions{}, [](int32_t) { return true; }), Error);
}

}  // namespace
}  // namespace skiff
