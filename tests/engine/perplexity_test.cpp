// perplexity() as llama-perplexity defines it, on stories260K: chunks of n_ctx
// tokens from an empty context, BOS first, the second half of each scored;
// batches smaller than a chunk give the same figure. (Against transformers:
// tests/model/real_model_test.cpp.)
#include "engine/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "model/loader.h"

namespace skiff {
namespace {

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";
const std::string kText =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. One day, "
    "she saw a big red ball in the park. She ran to the ball and kicked it very hard. The ball flew over "
    "the trees and landed in a pond. Lily was sad, but her friend Ben came to help her get it back.";

// The definition, written plainly: each chunk in one forward pass with logits for every row.
double expected_ppl(Model& model, const std::vector<int32_t>& tokens, int n_ctx, int chunks, int bos) {
  const int vocab = model.config().vocab_size;
  double nll = 0;
  int count = 0;
  for (int c = 0; c < chunks; ++c) {
    std::vector<int32_t> ids(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
    ids[0] = bos;
    PagedKvCache kv = model.make_kv_cache(1, n_ctx, KvType::kF32);
    std::vector<float> logits(static_cast<size_t>(n_ctx) * vocab);
    model.forward_and_append(Batch{ids, {{0, 0, n_ctx, n_ctx}}}, kv, logits.data());
    for (int j = n_ctx / 2; j < n_ctx - 1; ++j) {
      const float* row = &logits[static_cast<size_t>(j) * vocab];
      double sum = 0;
      for (int i = 0; i < vocab; ++i) sum += std::exp(double(row[i]));
      nll += std::log(sum) - row[ids[j + 1]];
      ++count;
    }
  }
  return std::exp(nll / count);
}

TEST(Perplexity, ChunksBosAndSecondHalfAsLlamaPerplexity) {
  auto model = load_model(kModel);
  auto tokenizer = Tokenizer::from_path(kModel);
  const std::vector<int32_t> tokens = tokenizer->encode(kText, true, false);
  ASSERT_EQ(tokens[0], tokenizer->bos_id());
  const int n_ctx = 16, chunks = static_cast<int>(tokens.size()) / n_ctx;
  ASSERT_GE(chunks, 3);
  const double want = expected_ppl(*model, tokens, n_ctx, chunks, tokenizer->bos_id());
  for (int n_batch : {16, 5, 1}) {
    PerplexityOptions options;
    options.n_ctx = n_ctx;
    options.n_batch = n_batch;
    options.kv_type = KvType::kF32;
    std::vector<double> running;
    const PerplexityResult r = perplexity(*model, *tokenizer, kText, options,
                                          [&](int chunk, double ppl) {
                                            EXPECT_EQ(chunk, static_cast<int>(running.size()) + 1);
                                            running.push_back(ppl);
                                          });
    EXPECT_EQ(r.n_tokens, static_cast<int>(tokens.size()));
    EXPECT_EQ(r.n_chunks, chunks);
    EXPECT_EQ(r.n_scored, chunks * (n_ctx - 1 - n_ctx / 2));
    EXPECT_NEAR(r.ppl, want, 1e-4 * want) << "batch " << n_batch;
    ASSERT_EQ(running.size(), static_cast<size_t>(chunks));
    EXPECT_DOUBLE_EQ(running.back(), r.ppl);
    EXPECT_GT(r.ppl_error, 0);
    EXPECT_LT(r.ppl_error, r.ppl);
  }
  PerplexityOptions two;
  two.n_ctx = n_ctx;
  two.max_chunks = 2;
  two.kv_type = KvType::kF32;
  const PerplexityResult r = perplexity(*model, *tokenizer, kText, two);
  EXPECT_EQ(r.n_chunks, 2);
  EXPECT_NEAR(r.ppl, expected_ppl(*model, tokens, n_ctx, 2, tokenizer->bos_id()), 1e-4 * r.ppl);
}

TEST(Perplexity, TooShortATextOrBadOptionsAreClearErrors) {
  auto model = load_model(kModel);
  auto tokenizer = Tokenizer::from_path(kModel);
  PerplexityOptions options;
  options.n_ctx = 512;
  try {
    perplexity(*model, *tokenizer, "Once upon a time", options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than one chunk"), std::string::npos) << e.what();
  }
  options.n_ctx = 4096;  // past the model's 512
  EXPECT_THROW(perplexity(*model, *tokenizer, kText, options), Error);
  options.n_ctx = 2;
  EXPECT_THROW(perplexity(*model, *tokenizer, kText, options), Error);
}

}  // namespace
}  // namespace skiff
