// StepBudget: a step's prompt tokens sized from measured step times, so that
// a step lasts about its target whatever the model or the prompt's depth.
#include "engine/step_budget.h"

#include <gtest/gtest.h>

namespace skiff {
namespace {

TEST(StepBudget, UnlimitedWithoutATarget) {
  StepBudget budget(0);
  budget.observe(1, 2048, 20.0);
  EXPECT_EQ(budget.prefill_tokens(4, 2044), 2044);
}

TEST(StepBudget, StartsSmallThenSizesStepsToTheTarget) {
  StepBudget budget(0.15);
  EXPECT_EQ(budget.prefill_tokens(4, 2044), StepBudget::kMinPrefillTokens);  // nothing measured yet
  EXPECT_EQ(budget.prefill_tokens(0, 10), 10);                              // never more than the tokens' budget
  budget.observe(4, 0, 0.04);  // 10 ms a decoding sequence
  budget.observe(4, 32, 0.04 + 0.032);  // 1 ms a prompt token
  EXPECT_NEAR(budget.seconds_per_prefill_token(), 0.001, 1e-9);
  EXPECT_EQ(budget.prefill_tokens(4, 2044), 110);  // (150 - 4 x 10 ms) / 1 ms
  EXPECT_EQ(budget.prefill_tokens(0, 2044), 150);
  EXPECT_EQ(budget.prefill_tokens(0, 100), 100);
  // Decodes that fill the target leave prompts the least, never nothing.
  EXPECT_EQ(budget.prefill_tokens(64, 2044), StepBudget::kMinPrefillTokens);
}

TEST(StepBudget, FollowsAPromptGettingDeeper) {
  StepBudget budget(1.0);
  budget.observe(0, 1000, 1.0);  // 1 ms a token
  int last = budget.prefill_tokens(0, 4096);
  EXPECT_EQ(last, 1000);
  for (double per_token = 0.002; per_token <= 0.008; per_token *= 2) {  // attention grows with depth
    for (int i = 0; i < 4; ++i) budget.observe(0, last, last * per_token);
    last = budget.prefill_tokens(0, 4096);
    EXPECT_NEAR(last, 1.0 / per_token, 1.0 / per_token * 0.1) << per_token;
  }
}

TEST(StepBudget, AFewPromptTokensBarelyMoveTheEstimate) {
  StepBudget budget(0.1);
  budget.observe(0, 100, 0.1);
  budget.observe(0, 2, 0.02);  // a step's fixed cost over a two-token prompt: 10 ms a token
  EXPECT_LT(budget.seconds_per_prefill_token(), 0.0015);
}

}  // namespace
}  // namespace skiff
