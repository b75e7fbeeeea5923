// The model over the paged KV cache: reduced-precision KV agreement with the
// golden text, split-KV decode over a long context, prefix sharing by fork
// with copy-on-write, and the pool's bookkeeping.
#include <gtest/gtest.h>
#include <omp.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "error_of.h"
#include "model/loader.h"
#include "model/random_model.h"

namespace skiff {
namespace {

const std::string kModels = SKIFF_MODELS_DIR;
const std::string kStories = kModels + "/derived/stories260K-f32.gguf";

int argmax(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::vector<int32_t> greedy_from_bos(Model& model, KvType type, int steps) {
  PagedKvCache kv = model.make_kv_cache(1, steps + 1, type);
  std::vector<int32_t> out;
  int32_t token = 1;
  for (int i = 0; i < steps; ++i) out.push_back(token = argmax(model.decode(kv, 0, token)));
  return out;
}

int agreeing_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  int n = 0;
  while (n < static_cast<int>(std::min(a.size(), b.size())) && a[n] == b[n]) ++n;
  return n;
}

// Measured on stories260K (256 greedy steps from BOS, docs/benchmarks.md):
// F16 KV follows the float64 golden text for all 256 tokens; Q8_0 KV (one
// 8-value group per row, head dim 8) for at least the first 100.
TEST(PagedModel, ReducedPrecisionKvFollowsGoldenText) {
  std::ifstream in(kModels + "/derived/golden/stories260K.greedy.json");
  const auto golden = nlohmann::json::parse(in)["greedy_ids"].get<std::vector<int32_t>>();
  auto model = load_model(kStories);
  const int steps = static_cast<int>(golden.size());
  EXPECT_EQ(greedy_from_bos(*model, KvType::kF32, steps), golden);
  EXPECT_EQ(agreeing_prefix(greedy_from_bos(*model, KvType::kF16, steps), golden), steps);
  EXPECT_GE(agreeing_prefix(greedy_from_bos(*model, KvType::kQ8_0, steps), golden), 100);
}

TEST(PagedModel, Q8KvHalvesMemoryPerTokenOfF16) {
  auto model = load_model(kStories);
  const PagedKvCache f16 = model->make_kv_cache(1, 64, KvType::kF16);
  const PagedKvCache q8 = model->make_kv_cache(1, 64, KvType::kQ8_0);
  EXPECT_EQ(f16.bytes_per_token(), 2u * 5 * 4 * 8 * 2);
  EXPECT_EQ(q8.bytes_per_token(), 2u * 5 * 4 * (2 + 8));  // one fp16 scale per 8-dim row
}

// Decoding one token over a long context splits the context across threads
// (flash decoding); it must give the logits a whole-prompt prefill gives.
TEST(PagedModel, SplitKvDecodeMatchesPrefill) {
  const std::string path = ::testing::TempDir() + "/long_context.gguf";
  RandomModelSpec spec;
  spec.n_layers = 2;
  spec.dim = 128;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 256;
  spec.vocab_path = kModels + "/gguf/llama-2-tiny-random.gguf";
  spec.file_type = DType::F32;
  spec.context_length = 2048;
  write_random_model(spec, path);
  auto model = load_model(path);
  std::vector<int32_t> tokens(1500);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7919) % 32000);
  PagedKvCache whole = model->make_kv_cache(1, 2048, KvType::kF32);
  const std::vector<float> want = model->prefill(whole, 0, tokens);
  PagedKvCache stepped = model->make_kv_cache(1, 2048, KvType::kF32);
  model->prefill(stepped, 0, std::span(tokens).first(tokens.size() - 1));
  // More threads than KV heads, so the 1500 positions are split (4 ways here).
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(4);
  const std::vector<float> got = model->decode(stepped, 0, tokens.back());
  omp_set_num_threads(saved_threads);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  std::filesystem::remove(path);
}

// A forked sequence shares its parent's blocks; each then writes its own
// continuation (copy-on-write) and gets what a fresh run of its tokens gets.
TEST(PagedModel, ForkedSequencesShareThePrefixAndDiverge) {
  auto model = load_model(kStories);
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315,
                                       421, 395, 317, 426, 338, 401, 396, 267};  // 20: mid-block
  PagedKvCache kv = model->make_kv_cache(2, 64, KvType::kF32);
  kv.free_sequence(1);
  model->prefill(kv, 0, prompt);
  const int used_by_prompt = kv.pool().n_used();
  const int child = kv.fork_sequence(0);
  EXPECT_EQ(kv.pool().n_used(), used_by_prompt);  // shared, not copied
  const std::vector<float> parent_logits = model->decode(kv, 0, 300);
  const std::vector<float> child_logits = model->decode(kv, child, 301);
  EXPECT_EQ(kv.pool().n_used(), used_by_prompt + 1);  // the partial last block was copied

  for (int32_t next : {300, 301}) {
    PagedKvCache fresh = model->make_kv_cache(1, 64, KvType::kF32);
    std::vector<int32_t> tokens = prompt;
    tokens.push_back(next);
    const std::vector<float> want = model->prefill(fresh, 0, tokens);
    const std::vector<float>& got = next == 300 ? parent_logits : child_logits;
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << next;
  }
  kv.free_sequence(0);
  kv.free_sequence(child);
  EXPECT_EQ(kv.pool().n_used(), 0);
}

TEST(PagedModel, OutOfBlocksIsAnErrorNotACrash) {
  auto model = load_model(kStories);
  PagedKvCache kv = model->make_kv_cache(2, 32, KvType::kF16);  // 4 blocks of 16
  const std::vector<int32_t> prompt(40, 300);                   // needs 3 blocks
  model->prefill(kv, 0, std::span(prompt).first(30));           // 2 blocks
  EXPECT_THROW(model->prefill(kv, 1, prompt), Error);           // 3 more: only 2 free
  EXPECT_EQ(kv.length(1), 0);
  EXPECT_EQ(kv.pool().n_used(), 2);
}

// forward() writes only what the cache's owner reserved: positions past the
// reservation, or in a block another sequence shares, are refused before
// anything is written, with a message that says to reserve them.
TEST(PagedModel, ForwardRefusesPositionsThatWereNotReserved) {
  auto model = load_model(kStories);
  PagedKvCache kv = model->make_kv_cache(2, 64, KvType::kF32);
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378};
  std::vector<float> logits(model->config().vocab_size);
  const Batch unreserved{prompt, {{0, 0, 5, 1}}};
  const std::string message = testing::error_of([&] { model->forward(unreserved, kv, logits.data()); });
  EXPECT_NE(message.find("not reserved"), std::string::npos) << message;
  EXPECT_EQ(kv.pool().n_used(), 0);

  ASSERT_TRUE(kv.reserve(0, 5));
  model->forward(unreserved, kv, logits.data());
  EXPECT_EQ(kv.length(0), 0);  // the owner sets the length, not the model
  kv.set_length(0, 5);

  kv.free_sequence(1);
  const int child = kv.fork_sequence(0);
  const Batch shared{{300}, {{child, 5, 1, 1}}};
  const std::string shared_message = testing::error_of([&] { model->forward(shared, kv, logits.data()); });
  EXPECT_NE(shared_message.find("shares"), std::string::npos) << shared_message;
  ASSERT_TRUE(kv.reserve(child, 6));  // copies the block
  model->forward(shared, kv, logits.data());
}

}  // namespace
}  // namespace skiff
