// PrefetchTuner: each matrix tries both levels first, then keeps the one its
// calls ran faster with, tries the other every kExplore-th call, and follows
// a change in which is faster.
#include "kernels/prefetch_tuner.h"

#include <gtest/gtest.h>

namespace skiff {
namespace {

// Calls of `key` timed by seconds_of(level); how many of `calls` chose kL2.
template <class Seconds>
int calls_at_l2(PrefetchTuner& tuner, const void* key, int calls, Seconds seconds_of) {
  int l2 = 0;
  for (int c = 0; c < calls; ++c) {
    const PrefetchLevel level = tuner.choose(key);
    l2 += level == PrefetchLevel::kL2;
    tuner.record(key, level, seconds_of(level));
  }
  return l2;
}

TEST(PrefetchTuner, TriesBothLevelsFirst) {
  PrefetchTuner tuner;
  const int key = 0;
  EXPECT_EQ(tuner.choose(&key), PrefetchLevel::kL1);
  tuner.record(&key, PrefetchLevel::kL1, 1.0);
  EXPECT_EQ(tuner.choose(&key), PrefetchLevel::kL2);
}

TEST(PrefetchTuner, KeepsTheFasterLevelAndExploresTheOther) {
  PrefetchTuner tuner;
  const int l2_fast = 0, l1_fast = 0;
  auto l2_faster = [](PrefetchLevel l) { return l == PrefetchLevel::kL2 ? 1.0 : 1.2; };
  auto l1_faster = [](PrefetchLevel l) { return l == PrefetchLevel::kL1 ? 1.0 : 1.2; };
  constexpr int kCalls = 800;
  constexpr int kExplored = kCalls / static_cast<int>(PrefetchTuner::kExplore);
  // The first two calls try each level once; then one call in kExplore tries the slower one.
  EXPECT_NEAR(calls_at_l2(tuner, &l2_fast, kCalls, l2_faster), kCalls - kExplored, 2);
  EXPECT_NEAR(calls_at_l2(tuner, &l1_fast, kCalls, l1_faster), kExplored, 2);
}

TEST(PrefetchTuner, FollowsAChangeOfTheFasterLevel) {
  PrefetchTuner tuner;
  const int key = 0;
  calls_at_l2(tuner, &key, 200, [](PrefetchLevel l) { return l == PrefetchLevel::kL1 ? 1.0 : 1.2; });
  // Now L2 is faster: within a few explorations the tuner switches over.
  calls_at_l2(tuner, &key, 10 * PrefetchTuner::kExplore, [](PrefetchLevel l) { return l == PrefetchLevel::kL2 ? 1.0 : 1.2; });
  const int l2 = calls_at_l2(tuner, &key, 80, [](PrefetchLevel l) { return l == PrefetchLevel::kL2 ? 1.0 : 1.2; });
  EXPECT_EQ(l2, 80 - 80 / static_cast<int>(PrefetchTuner::kExplore));
}

}  // namespace
}  // namespace skiff
