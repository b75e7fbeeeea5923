// BlockPool against a model that is just a vector of reference counts: after
// every operation of a long random run, the pool's counts and free list agree
// with it, and misuse (double free, unknown ids) throws without changing state.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "base/error.h"
#include "kv/block_pool.h"

namespace skiff {
namespace {

void expect_matches_model(const BlockPool& pool, const std::vector<int>& model_counts) {
  ASSERT_EQ(pool.n_blocks(), static_cast<int>(model_counts.size()));
  int model_free = 0;
  for (int block = 0; block < pool.n_blocks(); ++block) {
    ASSERT_EQ(pool.ref_count(block), model_counts[block]) << "block " << block;
    model_free += model_counts[block] == 0;
  }
  ASSERT_EQ(pool.n_free(), model_free);
  ASSERT_EQ(pool.n_free() + pool.n_used(), pool.n_blocks());
}

TEST(BlockPool, FreshPoolHandsOutEveryBlockOnceThenNothing) {
  BlockPool pool(4);
  EXPECT_EQ(pool.n_free(), 4);
  std::set<int> handed_out;
  for (int i = 0; i < 4; ++i) {
    const std::optional<int> block = pool.allocate();
    ASSERT_TRUE(block.has_value());
    EXPECT_EQ(pool.ref_count(*block), 1);
    handed_out.insert(*block);
  }
  EXPECT_EQ(handed_out, (std::set<int>{0, 1, 2, 3}));
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.n_used(), 4);
}

TEST(BlockPool, SharedBlockIsFreedByItsLastRelease) {
  BlockPool pool(2);
  const int block = *pool.allocate();
  pool.retain(block);
  pool.retain(block);
  EXPECT_EQ(pool.ref_count(block), 3);
  pool.release(block);
  pool.release(block);
  EXPECT_EQ(pool.n_free(), 1);
  pool.release(block);
  EXPECT_EQ(pool.ref_count(block), 0);
  EXPECT_EQ(pool.n_free(), 2);
}

TEST(BlockPool, MostRecentlyFreedBlockIsReusedFirst) {
  BlockPool pool(8);
  for (int i = 0; i < 5; ++i) pool.allocate();
  pool.release(3);
  pool.release(1);
  EXPECT_EQ(*pool.allocate(), 1);
  EXPECT_EQ(*pool.allocate(), 3);
}

TEST(BlockPool, MisuseThrowsAndChangesNothing) {
  BlockPool pool(3);
  const int block = *pool.allocate();
  pool.release(block);
  EXPECT_THROW(pool.release(block), Error);  // double free
  EXPECT_THROW(pool.retain(block), Error);   // retain after free
  EXPECT_THROW(pool.retain(2), Error);       // never allocated
  for (int bad : {-1, 3, 1000}) {
    EXPECT_THROW(pool.retain(bad), Error);
    EXPECT_THROW(pool.release(bad), Error);
    EXPECT_THROW(pool.ref_count(bad), Error);
  }
  expect_matches_model(pool, {0, 0, 0});
  EXPECT_THROW(BlockPool(-1), Error);
}

TEST(BlockPool, EmptyPoolAllocatesNothing) {
  BlockPool pool(0);
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.n_used(), 0);
}

TEST(BlockPool, RandomOperationsMatchAReferenceCountModel) {
  constexpr int kBlocks = 37;
  BlockPool pool(kBlocks);
  std::vector<int> model_counts(kBlocks, 0);
  std::mt19937 rng(1234);
  auto random_block = [&] { return std::uniform_int_distribution<int>(0, kBlocks - 1)(rng); };

  // Phases alternate between mostly allocating (until the pool runs dry) and
  // mostly releasing, so exhaustion and reuse both happen many times.
  std::discrete_distribution<int> filling({3, 1, 1}), draining({1, 1, 3});
  int n_exhausted = 0;
  for (int step = 0; step < 20000; ++step) {
    const int block = random_block();
    const bool fill_phase = step / 500 % 2 == 0;
    switch (fill_phase ? filling(rng) : draining(rng)) {
      case 0: {
        const bool any_free = std::count(model_counts.begin(), model_counts.end(), 0) > 0;
        const std::optional<int> got = pool.allocate();
        ASSERT_EQ(got.has_value(), any_free);
        n_exhausted += !any_free;
        if (got) {
          ASSERT_EQ(model_counts[*got], 0) << "handed out a block in use";
          model_counts[*got] = 1;
        }
        break;
      }
      case 1:
        if (model_counts[block] > 0) {
          pool.retain(block);
          ++model_counts[block];
        } else {
          ASSERT_THROW(pool.retain(block), Error);
        }
        break;
      default:
        if (model_counts[block] > 0) {
          pool.release(block);
          --model_counts[block];
        } else {
          ASSERT_THROW(pool.release(block), Error);
        }
        break;
    }
    expect_matches_model(pool, model_counts);
  }
  EXPECT_GT(n_exhausted, 0);
  for (int block = 0; block < kBlocks; ++block)
    for (; model_counts[block] > 0; --model_counts[block]) pool.release(block);
  EXPECT_EQ(pool.n_free(), kBlocks);
}

}  // namespace
}  // namespace skiff
