// PrefetchTuner: each matrix tries every level first, then keeps the one its
// calls ran fastest with, tries the others in turn every kExplore-th call, and
// follows a change in which is fastest.
#include "kernels/matmul/prefetch_tuner.h"

#include <gtest/gtest.h>

#include <array>

namespace skiff {
namespace {

// Seconds of a call at each level.
using Costs = std::array<double, kPrefetchLevels>;

// `calls` calls of `key` costing `costs`; how many chose each level.
std::array<int, kPrefetchLevels> run_calls(PrefetchTuner& tuner, const void* key, int calls, const Costs& costs) {
  std::array<int, kPrefetchLevels> chosen{};
  for (int c = 0; c < calls; ++c) {
    const PrefetchLevel level = tuner.choose(key);
    ++chosen[static_cast<int>(level)];
    tuner.record(key, level, costs[static_cast<int>(level)]);
  }
  return chosen;
}

TEST(PrefetchTuner, TriesEveryLevelFirst) {
  PrefetchTuner tuner;
  const int key = 0;
  for (int l = 0; l < kPrefetchLevels; ++l) {
    const PrefetchLevel level = tuner.choose(&key);
    EXPECT_EQ(level, static_cast<PrefetchLevel>(l));
    tuner.record(&key, level, 1.0);
  }
}

TEST(PrefetchTuner, KeepsTheFastestLevelAndExploresTheOthers) {
  constexpr int kCalls = 1600;
  constexpr int kExplored = kCalls / static_cast<int>(PrefetchTuner::kExplore);
  for (int fastest = 0; fastest < kPrefetchLevels; ++fastest) {
    PrefetchTuner tuner;
    const int key = 0;
    Costs costs{1.3, 1.2, 1.1};
    costs[fastest] = 1.0;
    const auto chosen = run_calls(tuner, &key, kCalls, costs);
    EXPECT_NEAR(chosen[fastest], kCalls - kExplored, 3) << "fastest level " << fastest;
    for (int l = 0; l < kPrefetchLevels; ++l) {  // the explorations share the others evenly
      if (l != fastest) {
        EXPECT_NEAR(chosen[l], kExplored / (kPrefetchLevels - 1), 3) << "level " << l;
      }
    }
  }
}

TEST(PrefetchTuner, FollowsAChangeOfTheFastestLevel) {
  PrefetchTuner tuner;
  const int key = 0;
  run_calls(tuner, &key, 200, Costs{1.0, 1.2, 1.2});
  // Now L2 only is the fastest: a few explorations later the tuner keeps it.
  const Costs l2_fastest{1.2, 1.0, 1.2};
  run_calls(tuner, &key, 4 * PrefetchTuner::kExplore * (kPrefetchLevels - 1), l2_fastest);
  const auto chosen = run_calls(tuner, &key, 80, l2_fastest);
  EXPECT_EQ(chosen[static_cast<int>(PrefetchLevel::kL2)], 80 - 80 / static_cast<int>(PrefetchTuner::kExplore));
}

// Keys are separate: one matrix's times do not move another's level.
TEST(PrefetchTuner, KeepsEachMatrixApart) {
  PrefetchTuner tuner;
  const int a = 0, b = 0;
  run_calls(tuner, &a, 100, Costs{1.0, 2.0, 2.0});
  run_calls(tuner, &b, 100, Costs{2.0, 2.0, 1.0});
  EXPECT_EQ(tuner.choose(&a), PrefetchLevel::kL1);
  EXPECT_EQ(tuner.choose(&b), PrefetchLevel::kNone);
}

}  // namespace
}  // namespace skiff
