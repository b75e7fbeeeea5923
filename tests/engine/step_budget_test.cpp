// StepBudget: a step's prompt tokens sized from measured step times, so that
// a step lasts about its target whatever the model, the prompt's depth or the
// decodes beside it.
#include "engine/step_budget.h"

#include <gtest/gtest.h>

namespace skiff {
namespace {

TEST(StepBudget, UnlimitedWithoutATarget) {
  StepBudget budget(0);
  budget.observe(2048, 20.0);
  EXPECT_EQ(budget.prefill_tokens(2044), 2044);
}

// A step of d seconds of decodes plus p seconds per prompt token: the budget
// settles where the step lasts the target, growing at most 2x a step.
TEST(StepBudget, SettlesWhereAStepLastsTheTarget) {
  StepBudget budget(0.15);
  EXPECT_EQ(budget.prefill_tokens(2044), StepBudget::kMinPrefillTokens);  // nothing measured yet
  const double d = 0.03, p = 0.001;
  int n = 0;
  for (int step = 0; step < 12; ++step) {
    const int offered = budget.prefill_tokens(2044);
    if (step > 0) EXPECT_LE(offered, 2 * n);
    n = offered;
    budget.observe(n, d + p * n);
  }
  EXPECT_NEAR(n, 120, 2);  // (150 - 30 ms) / 1 ms
  EXPECT_EQ(budget.prefill_tokens(100), 100);  // never more than the token budget
}

TEST(StepBudget, FollowsAPromptGettingDeeper) {
  StepBudget budget(0.1);
  int n = budget.prefill_tokens(4096);
  for (double p = 0.0005; p <= 0.002; p *= 2) {  // attention grows with depth
    for (int step = 0; step < 10; ++step) {
      budget.observe(n, p * n);
      n = budget.prefill_tokens(4096);
    }
    EXPECT_NEAR(n, 0.1 / p, 2) << p;
  }
}

TEST(StepBudget, OneSlowStepHalvesItAtMostAndNeverBelowTheLeast) {
  StepBudget budget(0.1);
  for (int step = 0; step < 10; ++step) budget.observe(budget.prefill_tokens(4096), 0.05);
  const int settled = budget.prefill_tokens(4096);
  budget.observe(settled, 5.0);  // a noisy neighbour
  EXPECT_EQ(budget.prefill_tokens(4096), settled / 2);
  for (int step = 0; step < 20; ++step) budget.observe(budget.prefill_tokens(4096), 5.0);
  EXPECT_EQ(budget.prefill_tokens(4096), StepBudget::kMinPrefillTokens);
}

TEST(StepBudget, ShortPromptsUnderTheTargetSayNothing) {
  StepBudget budget(0.1);
  for (int step = 0; step < 10; ++step) budget.observe(budget.prefill_tokens(4096), 0.05);
  const int settled = budget.prefill_tokens(4096);
  budget.observe(5, 0.02);  // a five-token prompt: fast, but not because the budget is right
  EXPECT_EQ(budget.prefill_tokens(4096), settled);
}

}  // namespace
}  // namespace skiff
