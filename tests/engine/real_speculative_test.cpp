// Speculative decoding on the real Qwen2.5-Coder files: greedy output with
// n-gram drafting and with a draft model equals plain decoding token for
// token. The 0.5B drafts for itself (CI fetches only it; its drafts are
// computed one token at a time, their verification as a batch, so equal
// output also needs the kernels to give a token the same result in any batch),
// and for the 1.5B where that is fetched.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/loader.h"
#include "real_models.h"
#include "stories_model.h"
#include "tokenizer/tokenizer.h"

namespace skiff {
namespace {

const char* const kSmall = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
const char* const kLarge = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

// Asks for code and then for that code back with one name changed: n-gram
// lookup finds long runs to propose.
const char* const kPrompts[] = {
    "def quicksort(arr):",
    "<|im_start|>user\nRepeat this code with `n` renamed to `count`:\n"
    "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
    "<|im_end|>\n<|im_start|>assistant\n",
};

std::vector<std::vector<int32_t>> generate(Model& target, const Tokenizer& tok, SpecMethod method, Model* draft,
                                           EngineMetrics* metrics = nullptr) {
  EngineOptions o;
  // Greedy output is kept exactly when a token's logits are the same in the
  // verification pass as decoded alone: panels (AVX-512) give that in any
  // mode, weights as stored (AVX2) in batch-invariant mode only; without it a
  // near-tie flips within 32 tokens on AVX2.
  o.batch_invariant = true;
  o.speculation.method = method;
  o.speculation.draft = draft;
  o.speculation.k = 4;
  Engine engine(target, tok, o);
  std::vector<RequestId> ids;
  for (const char* prompt : kPrompts) ids.push_back(engine.add_request(tok.encode(prompt, true, true), testing::greedy(32)));
  std::vector<std::vector<int32_t>> outs(ids.size());
  for (const RequestOutput& out : engine.run_to_completion())
    outs[std::find(ids.begin(), ids.end(), out.request_id) - ids.begin()] = out.outputs[0].token_ids;
  if (metrics) *metrics = engine.metrics();
  return outs;
}

void expect_speculation_keeps_greedy_output(const std::string& target_path, const std::string& draft_path) {
  auto target = load_model(target_path);
  auto draft = load_model(draft_path);
  const auto tok = Tokenizer::from_path(target_path);
  const auto plain = generate(*target, *tok, SpecMethod::kNone, nullptr);
  EngineMetrics m;
  EXPECT_EQ(generate(*target, *tok, SpecMethod::kNgram, nullptr, &m), plain) << "n-gram";
  EXPECT_GT(m.spec_accepted_tokens, 0);
  EXPECT_EQ(generate(*target, *tok, SpecMethod::kDraft, draft.get(), &m), plain) << "draft " << draft_path;
  EXPECT_GT(m.spec_acceptance_rate(), 0.5);
}

TEST(RealSpeculative, QwenSmallDraftingForItselfKeepsTheGreedyOutput) {
  const auto small = testing::real_model(kSmall);
  if (!small) GTEST_SKIP() << kSmall << " not fetched (scripts/fetch-models.sh)";
  expect_speculation_keeps_greedy_output(*small, *small);
}

TEST(RealSpeculative, QwenSmallDraftingForLargeKeepsTheGreedyOutput) {
  const auto small = testing::real_model(kSmall), large = testing::real_model(kLarge);
  if (!small || !large) GTEST_SKIP() << "the Qwen 0.5B and 1.5B files are not both fetched";
  expect_speculation_keeps_greedy_output(*large, *small);
}

}  // namespace
}  // namespace skiff
