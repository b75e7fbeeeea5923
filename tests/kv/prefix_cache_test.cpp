// Automatic prefix caching in PagedKvCache, against the reference in
// cache_harness.h: each check there also confirms that every registered block
// is found under its hash and still holds the K/V of the prefix it stands for.
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "cache_harness.h"
#include "kv/prefix_hash.h"

namespace skiff::kv_test {
namespace {

constexpr int kBlock = 4;

// A cache of 4-token blocks with prefix caching on.
CacheUnderTest make(int n_blocks = 16, KvType type = KvType::kF32) {
  return CacheUnderTest(type, kBlock, n_blocks, 64, 7, PrefixCaching::kOn);
}

// A sequence that computed `tokens` and offered its full blocks to the cache.
int computed(CacheUnderTest& t, const std::vector<int32_t>& tokens) {
  const int seq = t.create();
  EXPECT_TRUE(t.append(seq, tokens));
  t.cache_blocks(seq);
  return seq;
}

// A new sequence that attaches what the cache holds of `tokens`.
int attached(CacheUnderTest& t, const std::vector<int32_t>& tokens, int max_tokens, int expected) {
  const int seq = t.create();
  EXPECT_EQ(t.attach(seq, tokens, max_tokens), expected);
  return seq;
}

TEST(PrefixHash, DependsOnParentEveryTokenAndTheirOrder) {
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  const uint64_t h = prefix_block_hash(kPrefixHashSeed, tokens);
  EXPECT_EQ(prefix_block_hash(kPrefixHashSeed, tokens), h);
  EXPECT_NE(prefix_block_hash(h, tokens), h);
  EXPECT_NE(prefix_block_hash(kPrefixHashSeed, std::vector<int32_t>{2, 1, 3, 4}), h);
  EXPECT_NE(prefix_block_hash(kPrefixHashSeed, std::vector<int32_t>{1, 2, 3}), h);
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> changed = tokens;
    changed[i] ^= 1 << 30;
    EXPECT_NE(prefix_block_hash(kPrefixHashSeed, changed), h) << "token " << i;
  }
}

TEST(PrefixCache, ASecondSequenceWithTheSamePromptSharesEveryFullBlock) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(10);  // two full blocks and 2 tokens
  const int first = computed(t, prompt);
  EXPECT_EQ(t.cache.pool().n_cached(), 2);

  const int second = attached(t, prompt, 9, 8);
  EXPECT_EQ(t.cache.length(second), 8);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(t.cache.block_table(second)[i], t.cache.block_table(first)[i]);
    EXPECT_EQ(t.cache.pool().ref_count(t.cache.block_table(first)[i]), 2);
  }
  t.expect_consistent();  // reads the second sequence's K/V through the shared blocks

  // The rest of the prompt goes into a block of its own; nothing is copied.
  ASSERT_TRUE(t.append(second, std::span(prompt).subspan(8)));
  EXPECT_EQ(t.cache.block_table(second).size(), 3u);
  EXPECT_NE(t.cache.block_table(second)[2], t.cache.block_table(first)[2]);
  EXPECT_EQ(t.cache.pool().n_used(), 4);
  t.expect_consistent();
}

TEST(PrefixCache, APromptSharingTheFirstBlocksReusesExactlyThose) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(16);
  computed(t, prompt);
  std::vector<int32_t> other = prompt;
  other[9] += 1;  // in the third block
  attached(t, other, 15, 8);
  t.expect_consistent();
}

TEST(PrefixCache, AttachesWholeBlocksWithinMaxTokens) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(8);  // exactly two blocks
  computed(t, prompt);
  attached(t, prompt, 7, 4);  // the last prompt token must be computed
  attached(t, prompt, 8, 8);
  attached(t, prompt, 100, 8);
  attached(t, prompt, 3, 0);
  attached(t, prompt, -1, 0);
  attached(t, std::vector<int32_t>(prompt.begin(), prompt.begin() + 6), 6, 4);
  t.expect_consistent();
}

TEST(PrefixCache, ADifferentTokenInAnEarlierBlockMissesEveryLaterBlock) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(12);
  computed(t, prompt);
  for (int changed : {0, 3, 5, 7, 9}) {
    std::vector<int32_t> other = prompt;
    other[changed] += 1;
    // The blocks after the changed one hold the same tokens, but their hashes
    // chain through it.
    attached(t, other, 12, changed / kBlock * kBlock);
  }
  t.expect_consistent();
}

TEST(PrefixCache, BlocksOfAFinishedSequenceAreFoundAgainUntilEvicted) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(9);
  t.free(computed(t, prompt));
  EXPECT_EQ(t.cache.pool().n_used(), 0);
  EXPECT_EQ(t.cache.pool().n_evictable(), 2);
  EXPECT_EQ(t.cache.pool().n_free(), 16);

  const int seq = attached(t, prompt, 8, 8);
  for (int block : t.cache.block_table(seq)) EXPECT_EQ(t.cache.pool().ref_count(block), 1);
  EXPECT_EQ(t.cache.pool().n_evictable(), 0);
  EXPECT_EQ(t.cache.pool().n_used(), 2);
  EXPECT_EQ(t.cache.pool().n_free(), 14);
  t.expect_consistent();
}

TEST(PrefixCache, EvictionTakesUncachedBlocksFirstThenTheTailOfAFreedPrompt) {
  CacheUnderTest t = make(4);
  const std::vector<int32_t> prompt = t.random_tokens(12);
  const int first = computed(t, prompt);
  const std::vector<int> blocks = t.cache.block_table(first);
  t.free(first);
  EXPECT_EQ(t.cache.pool().n_evictable(), 3);

  const int other = t.create();
  ASSERT_TRUE(t.append(other, 4));  // the one uncached block
  EXPECT_EQ(t.cache.pool().n_evictions(), 0);
  ASSERT_TRUE(t.append(other, 8));
  EXPECT_EQ(t.cache.pool().n_evictions(), 1);
  EXPECT_EQ(t.cache.block_table(other)[1], blocks[2]) << "the prompt's last block goes first";
  EXPECT_FALSE(t.cache.pool().cached_hash(blocks[2]).has_value());
  attached(t, prompt, 11, 8);  // what is left of the prompt still attaches
  t.expect_consistent();
}

TEST(PrefixCache, ACachedBlockIsCopiedBeforeAWriteAfterTruncate) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(8);
  const int seq = computed(t, prompt);
  const int cached = t.cache.block_table(seq)[1];
  t.truncate(seq, 6);
  EXPECT_EQ(t.cache.block_table(seq)[1], cached);
  const std::vector<float> row(kKvDim, 1.0f);
  EXPECT_THROW(t.cache.write(0, seq, 6, row.data(), row.data()), Error);

  ASSERT_TRUE(t.append(seq, t.random_tokens(2)));
  EXPECT_NE(t.cache.block_table(seq)[1], cached);
  EXPECT_EQ(t.cache.pool().ref_count(cached), 0);
  EXPECT_EQ(t.cache.pool().n_evictable(), 1);
  t.expect_consistent();  // the cached block still holds the prompt's K/V

  // Both the prompt and the new tokens attach.
  attached(t, prompt, 8, 8);
  t.cache_blocks(seq);
  EXPECT_EQ(t.cache.pool().n_cached(), 3);
  attached(t, t.reference.at(seq).tokens, 8, 8);
  t.expect_consistent();
}

TEST(PrefixCache, ShorteningWithSetLengthAlsoRehashesTheRewrittenBlock) {
  CacheUnderTest t = make();
  const int seq = computed(t, t.random_tokens(8));
  t.cache.set_length(seq, 6);
  t.reference.at(seq).tokens.resize(6);
  ASSERT_TRUE(t.append(seq, t.random_tokens(2)));
  t.cache_blocks(seq);
  attached(t, t.reference.at(seq).tokens, 8, 8);
  t.expect_consistent();
}

TEST(PrefixCache, ABlockComputedTwiceIsCachedOnceAndTheChainGoesOn) {
  CacheUnderTest t = make();
  const std::vector<int32_t> prompt = t.random_tokens(8);
  // Side by side, before either offers its blocks to the cache.
  const int first = t.create(), second = t.create();
  ASSERT_TRUE(t.append(first, std::span(prompt).first(4)));
  ASSERT_TRUE(t.append(second, prompt));
  t.cache_blocks(first);
  t.cache_blocks(second);  // its first block duplicates the first's
  EXPECT_EQ(t.n_duplicates, 1);
  EXPECT_EQ(t.cache.pool().n_cached(), 2);
  const int duplicate = t.cache.block_table(second)[0];
  EXPECT_FALSE(t.cache.pool().cached_hash(duplicate).has_value());

  // The first sequence's block 0, then the second's block 1.
  const int third = attached(t, prompt, 8, 8);
  EXPECT_EQ(t.cache.block_table(third)[0], t.cache.block_table(first)[0]);
  EXPECT_EQ(t.cache.block_table(third)[1], t.cache.block_table(second)[1]);

  t.free(second);
  EXPECT_EQ(t.cache.pool().ref_count(duplicate), 0);
  EXPECT_EQ(t.cache.pool().n_evictable(), 0) << "the duplicate is freed, not kept";
  t.expect_consistent();
}

TEST(PrefixCache, AForkContinuesItsParentsHashChain) {
  CacheUnderTest t = make();
  const int parent = computed(t, t.random_tokens(6));
  const int child = t.fork(parent);
  ASSERT_TRUE(t.append(child, 8));  // copies the shared partial block
  t.cache_blocks(child);
  EXPECT_EQ(t.cache.pool().n_cached(), 2);
  attached(t, t.reference.at(child).tokens, 8, 8);
  t.expect_consistent();
}

TEST(PrefixCache, OffMeansNoRegistrationAndNoHits) {
  CacheUnderTest t(KvType::kF16, kBlock, 8, 64, 7, PrefixCaching::kOff);
  const std::vector<int32_t> prompt = t.random_tokens(9);
  const int seq = computed(t, prompt);
  EXPECT_FALSE(t.cache.prefix_caching());
  EXPECT_EQ(t.cache.pool().n_cached(), 0);
  attached(t, prompt, 8, 0);
  t.free(seq);
  EXPECT_EQ(t.cache.pool().n_evictable(), 0);
  attached(t, prompt, 8, 0);
  t.expect_consistent();
}

TEST(PrefixCache, WithMemoryPassesTheSwitchOn) {
  const size_t bytes = 4 * PagedKvCache(kShape, KvType::kF16, kBlock, 1, 64).bytes();
  EXPECT_TRUE(PagedKvCache::with_memory(kShape, KvType::kF16, kBlock, bytes, 64, PrefixCaching::kOn)
                  .prefix_caching());
  EXPECT_FALSE(PagedKvCache::with_memory(kShape, KvType::kF16, kBlock, bytes, 64).prefix_caching());
}

TEST(PrefixCache, MisuseThrows) {
  CacheUnderTest t = make();
  const std::vector<int32_t> tokens = t.random_tokens(8);
  const int seq = t.create();
  ASSERT_TRUE(t.append(seq, std::span(tokens).first(4)));
  EXPECT_THROW(t.cache.attach_cached_prefix(seq, tokens, 7), Error);  // not empty
  const int reserved = t.create();
  ASSERT_TRUE(t.cache.reserve(reserved, 1));
  EXPECT_THROW(t.cache.attach_cached_prefix(reserved, tokens, 7), Error);  // holds a block
  EXPECT_THROW(t.cache.cache_full_blocks(seq, std::span(tokens).first(3)), Error);

  // A fork made before its parent cached a block, caching it under other tokens.
  const int child = t.fork(seq);
  t.cache_blocks(seq);
  EXPECT_THROW(t.cache.cache_full_blocks(child, t.random_tokens(4)), Error);
}

}  // namespace
}  // namespace skiff::kv_test
