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
// settles where the step lasts the target, shrinking at once, growing at
// most 2x a step.
TEST(StepBudget, SettlesWhereAStepLastsTheTarget) {
  StepBudget budget(0.15);
  EXPECT_EQ(budget.prefill_tokens(2044), 2044);  // nothing measured yet: nothing runs to wait
  const double d = 0.03, p = 0.001;
  budget.observe(2044, d + p * 2044);
  int n = budget.prefill_tokens(2044);
  EXPECT_EQ(n, 147);  // 2044 x 150 / 2074 ms: under what fits, as the decodes took a part
  for (int step = 0; step < 12; ++step) {
    budget.observe(n, d + p * n);
    const int next = budget.prefill_tokens(2044);
    EXPECT_LE(next, 2 * n);
    n = next;
  }
  EXPECT_NEAR(n, 120, 2);                      // (150 - 30 ms) / 1 ms
  EXPECT_EQ(budget.prefill_tokens(100), 100);  // never more than the token budget
}

TEST(StepBudget, FollowsAPromptGettingDeeper) {
  StepBudget budget(0.1);
  budget.observe(100, 0.1);
  int n = budget.prefill_tokens(4096);
  for (double p = 0.0005; p <= 0.002; p *= 2) {  // attention grows with depth
    for (int step = 0; step < 10; ++step) {
      budget.observe(n, p * n);
      n = budget.prefill_tokens(4096);
    }
    EXPECT_NEAR(n, 0.1 / p, 2) << p;
  }
}

TEST(StepBudget, ASlowStepShrinksItAtOnceNeverBelowTheLeast) {
  StepBudget budget(0.1);
  budget.observe(400, 0.1);
  EXPECT_EQ(budget.prefill_tokens(4096), 400);
  budget.observe(400, 0.4);  // a noisy neighbour
  EXPECT_EQ(budget.prefill_tokens(4096), 100);
  budget.observe(100, 5.0);
  EXPECT_EQ(budget.prefill_tokens(4096), StepBudget::kMinPrefillTokens);
  budget.observe(StepBudget::kMinPrefillTokens, 0.001);  // and back, 2x a step
  EXPECT_EQ(budget.prefill_tokens(4096), 2 * StepBudget::kMinPrefillTokens);
}

TEST(StepBudget, ShortPromptsUnderTheTargetOnlyRaiseIt) {
  StepBudget budget(0.1);
  budget.observe(5, 0.02);  // a five-token prompt: 25 fit, but its fixed cost weighs
  EXPECT_EQ(budget.prefill_tokens(4096), StepBudget::kMinPrefillTokens);
  budget.observe(20, 0.025);  // under the target, below the budget: 80 fit
  EXPECT_EQ(budget.prefill_tokens(4096), 64);  // at most 2x
  budget.observe(5, 0.02);
  EXPECT_EQ(budget.prefill_tokens(4096), 64);  // never lowered by one
}

// Where the rest of a step takes the target already (600 ms decode steps on
// a loaded machine), the prompt still gets as many tokens as cost as much:
// smaller chunks would only slow it.
TEST(StepBudget, ThePromptKeepsWhatCostsAsMuchAsTheRest) {
  StepBudget budget(0.15);
  for (int step = 0; step < 20; ++step) budget.observe(0, 0.6);  // decodes alone
  const double rest = 0.6, p = 0.005;
  budget.observe(2048, rest + p * 2048);
  int n = budget.prefill_tokens(4096);
  for (int step = 0; step < 12; ++step) {
    budget.observe(n, rest + p * n);
    n = budget.prefill_tokens(4096);
  }
  EXPECT_NEAR(n, 120, 2);  // 600 ms / 5 ms: a step of 1.2 s, not 0.6 s + 32 tokens' 160 ms
}

// A step on a machine loaded past its cores: its wall time stretched by the
// load, its work (the engine thread's CPU time) not. The budget follows the
// work up to kMostStretch, past it the wall time over kMostStretch.
TEST(StepBudget, StepsAreMeasuredByTheirWorkUnderLoad) {
  EXPECT_DOUBLE_EQ(StepBudget::step_seconds(0.15, 0.14), 0.14);  // unloaded: the CPU time
  EXPECT_DOUBLE_EQ(StepBudget::step_seconds(0.45, 0.15), 0.15);  // 3x stretched: still the work
  EXPECT_DOUBLE_EQ(StepBudget::step_seconds(1.2, 0.15), 0.3);    // 8x: the wall time / 4
  EXPECT_DOUBLE_EQ(StepBudget::step_seconds(0.1, 0.2), 0.1);     // CPU time of helper threads: at most the wall
  // The same work, unloaded and 3x stretched, settles at the same chunk.
  const auto settle = [](double stretch) {
    StepBudget budget(0.15);
    int n = budget.prefill_tokens(2044);
    for (int step = 0; step < 12; ++step) {
      const double work = 0.03 + 0.001 * n;  // decodes beside, and 1 ms a prompt token
      budget.observe(n, StepBudget::step_seconds(work * stretch, work));
      n = budget.prefill_tokens(2044);
    }
    return n;
  };
  EXPECT_NEAR(settle(1), 120, 2);
  EXPECT_EQ(settle(3), settle(1));
}

}  // namespace
}  // namespace skiff
