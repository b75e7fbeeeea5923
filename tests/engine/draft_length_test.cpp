// How long drafts are (engine/draft_length.h): the per-sequence rule, the
// step budget and its sharing, and in the engine that a batch of 32 decodes
// drafts nothing while one sequence drafts its full k.
#include <gtest/gtest.h>

#include <vector>

#include "engine/draft_length.h"
#include "engine/engine.h"
#include "stories_model.h"

namespace skiff {
namespace {

TEST(DraftLength, GrowsByTwoWhenAllAcceptedAndShrinksByOneOtherwise) {
  EXPECT_EQ(adapt_draft_length(4, 4, 4, 8), 6);
  EXPECT_EQ(adapt_draft_length(7, 7, 7, 8), 8);  // never above the request's k
  EXPECT_EQ(adapt_draft_length(4, 4, 2, 8), 3);
  EXPECT_EQ(adapt_draft_length(1, 1, 0, 8), 1);  // never below one
  EXPECT_EQ(adapt_draft_length(5, 0, 0, 8), 5);  // nothing drafted: nothing learned
  EXPECT_EQ(adapt_draft_length(3, 2, 2, 8), 5);  // fewer drafted than allowed, all accepted
}

TEST(DraftLength, StepBudgetFillsToTheLargerOfTheLimitAndOneFullDraft) {
  EXPECT_EQ(step_draft_budget(1, 4, kSpecStepTokens), kSpecStepTokens - 1);
  EXPECT_EQ(step_draft_budget(1, 12, kSpecStepTokens), 12);  // a lone sequence keeps its k
  EXPECT_EQ(step_draft_budget(8, 4, kSpecStepTokens), 0);
  EXPECT_EQ(step_draft_budget(32, 4, kSpecStepTokens), 0);
  EXPECT_GT(step_draft_budget(32, 4, 0), 1000);  // no limit
}

TEST(DraftLength, SharesTheBudgetEquallyWithinWhatEachWants) {
  EXPECT_EQ(share_draft_budget(std::vector<int>{4, 4, 4}, 7), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(share_draft_budget(std::vector<int>{1, 4, 0}, 7), (std::vector<int>{1, 4, 0}));
  EXPECT_EQ(share_draft_budget(std::vector<int>{2, 8}, 6), (std::vector<int>{2, 4}));
  EXPECT_EQ(share_draft_budget(std::vector<int>{4, 4}, 0), (std::vector<int>{0, 0}));
}

EngineMetrics run_batch(int n_requests, SpecMethod method, std::vector<RequestOutput>* outs = nullptr) {
  const Tokenizer& tok = testing::stories_tokenizer();
  EngineOptions o;
  o.kv_type = KvType::kF32;
  o.speculation.method = method;
  o.speculation.draft = &testing::stories_model();  // a perfect draft: every draft is accepted
  o.speculation.k = 4;
  Engine engine(testing::stories_model(), tok, o);
  SamplingParams p = testing::greedy(40);
  p.ignore_eos = true;  // all finish together: no tail of a few sequences
  for (int i = 0; i < n_requests; ++i) engine.add_request(tok.encode("Once upon a time", true, false), p);
  std::vector<RequestOutput> done = engine.run_to_completion();
  if (outs) *outs = std::move(done);
  return engine.metrics();
}

TEST(DraftLength, ABatchOfThirtyTwoDraftsNothingAndOneSequenceItsFullK) {
  std::vector<RequestOutput> spec, plain;
  EXPECT_EQ(run_batch(32, SpecMethod::kDraft, &spec).spec_drafted_tokens, 0);
  run_batch(32, SpecMethod::kNone, &plain);
  ASSERT_EQ(spec.size(), plain.size());
  for (size_t i = 0; i < spec.size(); ++i) EXPECT_EQ(spec[i].outputs[0].token_ids, plain[i].outputs[0].token_ids);
  const EngineMetrics one = run_batch(1, SpecMethod::kDraft);
  EXPECT_GT(one.spec_mean_accepted_length(), 3.0);  // k = 4, all accepted
}

}  // namespace
}  // namespace skiff
