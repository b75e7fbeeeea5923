// Speculative decoding's use of the paged KV cache: a verification step writes
// the K/V of k drafted positions past the sequence, then truncates back to the
// accepted ones before the full blocks are offered to the prefix cache. Checked
// against the reference in cache_harness.h, which also confirms that every
// registered block holds exactly the prefix its hash stands for.
#include <gtest/gtest.h>

#include <vector>

#include "cache_harness.h"

namespace skiff::kv_test {
namespace {

constexpr int kBlock = 4;

CacheUnderTest make(int n_blocks = 32) {
  return CacheUnderTest(KvType::kF32, kBlock, n_blocks, 256, 11, PrefixCaching::kOn);
}

// One verification: the drafted tokens' K/V are written, only `accepted` of
// them kept; the engine's sure token then follows in the next step.
void verify(CacheUnderTest& t, int seq, int n_drafted, int accepted) {
  const int before = t.reference.at(seq).length();
  ASSERT_TRUE(t.append(seq, t.random_tokens(n_drafted)));
  t.truncate(seq, before + accepted);
  t.cache_blocks(seq);
}

TEST(SpeculativeRollback, RejectedPositionsAcrossBlocksAreDroppedAndNeverCached) {
  for (int accepted : {0, 1, 3, 5, 8}) {
    CacheUnderTest t = make();
    const int seq = t.create();
    ASSERT_TRUE(t.append(seq, t.random_tokens(6)));
    t.cache_blocks(seq);
    const std::vector<int32_t> kept_prefix = t.reference.at(seq).tokens;
    ASSERT_TRUE(t.append(seq, t.random_tokens(8)));  // drafts over three blocks
    const std::vector<int32_t> drafted = t.reference.at(seq).tokens;
    t.truncate(seq, 6 + accepted);
    EXPECT_EQ(t.cache.length(seq), 6 + accepted);
    EXPECT_EQ(static_cast<int>(t.cache.block_table(seq).size()), ceil_div(6 + accepted, kBlock));
    t.cache_blocks(seq);
    t.expect_consistent();
    // Only whole blocks of accepted tokens are found again.
    const int probe = t.create();
    EXPECT_EQ(t.attach(probe, drafted, 14), (6 + accepted) / kBlock * kBlock) << accepted;
    t.free(probe);
    // The rejected tokens' places are written again with other tokens.
    ASSERT_TRUE(t.append(seq, t.random_tokens(8 - accepted)));
    t.cache_blocks(seq);
    t.expect_consistent();
    EXPECT_EQ(t.attach(t.create(), drafted, 14), (6 + accepted) / kBlock * kBlock) << accepted;
  }
}

TEST(SpeculativeRollback, ManyStepsKeepEveryCachedBlockTrue) {
  CacheUnderTest t = make(64);
  const int seq = t.create();
  ASSERT_TRUE(t.append(seq, t.random_tokens(3)));
  for (int step = 0; step < 40; ++step) {
    const int n_drafted = 1 + step % 8;
    verify(t, seq, n_drafted, (step * 5) % (n_drafted + 1));
    ASSERT_TRUE(t.append(seq, t.random_tokens(1)));  // the sure token, decoded next step
    t.cache_blocks(seq);
    t.expect_consistent();
  }
  const std::vector<int32_t> tokens = t.reference.at(seq).tokens;
  const int n = static_cast<int>(tokens.size());
  EXPECT_EQ(t.attach(t.create(), tokens, n), n / kBlock * kBlock);
}

TEST(SpeculativeRollback, DraftsOfAForkNeverTouchTheSharedPrefix) {
  CacheUnderTest t = make();
  const int parent = t.create();
  ASSERT_TRUE(t.append(parent, t.random_tokens(6)));  // a half-full second block, shared
  const int child = t.fork(parent);
  const std::vector<int> shared = t.cache.block_table(parent);
  verify(t, child, 5, 2);
  EXPECT_EQ(t.cache.block_table(parent), shared);
  EXPECT_NE(t.cache.block_table(child)[1], shared[1]);  // copied before the drafts were written
  t.expect_consistent();
  verify(t, parent, 3, 0);
  t.expect_consistent();
  t.free(child);
  t.free(parent);
  t.expect_consistent();
}

}  // namespace
}  // namespace skiff::kv_test
