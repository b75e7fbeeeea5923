// BlockPool against a model of reference counts, prefix-cache registrations
// and eviction order: after every operation of a long random run the pool
// agrees with it, and misuse (double free, unknown ids) throws without
// changing state.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "base/error.h"
#include "kv/block_pool.h"

namespace skiff {
namespace {

// What the pool should hold: reference counts, each block's registered hash,
// and the evictable blocks in release order.
struct PoolModel {
  explicit PoolModel(int n_blocks) : counts(n_blocks, 0), hashes(n_blocks) {}

  bool free_uncached(int block) const { return counts[block] == 0 && !hashes[block]; }
  std::optional<int> block_of(uint64_t hash) const {
    for (int block = 0; block < static_cast<int>(hashes.size()); ++block)
      if (hashes[block] == hash) return block;
    return std::nullopt;
  }

  std::vector<int> counts;
  std::vector<std::optional<uint64_t>> hashes;
  std::vector<int> evictable;  // released longest ago first
  int64_t n_evictions = 0;
};

void expect_matches_model(const BlockPool& pool, const PoolModel& model) {
  ASSERT_EQ(pool.n_blocks(), static_cast<int>(model.counts.size()));
  int model_free = 0, model_cached = 0;
  for (int block = 0; block < pool.n_blocks(); ++block) {
    ASSERT_EQ(pool.ref_count(block), model.counts[block]) << "block " << block;
    ASSERT_EQ(pool.cached_hash(block), model.hashes[block]) << "block " << block;
    if (model.hashes[block]) {
      ASSERT_EQ(pool.find_cached(*model.hashes[block]), block);
      ++model_cached;
    }
    model_free += model.counts[block] == 0;
  }
  ASSERT_EQ(pool.n_free(), model_free);
  ASSERT_EQ(pool.n_free() + pool.n_used(), pool.n_blocks());
  ASSERT_EQ(pool.n_cached(), model_cached);
  ASSERT_EQ(pool.n_evictable(), static_cast<int>(model.evictable.size()));
  ASSERT_EQ(pool.n_evictions(), model.n_evictions);
  // The listing: cached blocks in use by index, then the evictable newest first.
  std::vector<uint64_t> listed;
  for (int block = 0; block < pool.n_blocks(); ++block)
    if (model.counts[block] > 0 && model.hashes[block]) listed.push_back(*model.hashes[block]);
  for (auto it = model.evictable.rbegin(); it != model.evictable.rend(); ++it)
    listed.push_back(*model.hashes[*it]);
  ASSERT_EQ(pool.cached_hashes(listed.size() + 1), listed);
  const size_t cap = listed.size() / 2;
  ASSERT_EQ(pool.cached_hashes(cap), std::vector<uint64_t>(listed.begin(), listed.begin() + cap));
}

void expect_matches_model(const BlockPool& pool, const std::vector<int>& counts) {
  PoolModel model(static_cast<int>(counts.size()));
  model.counts = counts;
  expect_matches_model(pool, model);
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

// ---- prefix caching ----------------------------------------------------------

TEST(BlockPool, CachedBlocksAreEvictedOnlyWhenNoUncachedBlockIsFreeOldestReleaseFirst) {
  BlockPool pool(5);
  for (int i = 0; i < 5; ++i) pool.allocate();
  for (int block : {0, 1, 2}) EXPECT_TRUE(pool.register_block(block, 100 + block));
  for (int block : {2, 0, 3, 1, 4}) pool.release(block);
  EXPECT_EQ(pool.n_free(), 5);
  EXPECT_EQ(pool.n_used(), 0);
  EXPECT_EQ(pool.n_cached(), 3);
  EXPECT_EQ(pool.n_evictable(), 3);

  // Uncached blocks first, then cached ones in the order they were released.
  EXPECT_EQ(*pool.allocate(), 4);
  EXPECT_EQ(*pool.allocate(), 3);
  EXPECT_EQ(pool.n_evictions(), 0);
  EXPECT_EQ(*pool.allocate(), 2);
  EXPECT_EQ(pool.n_evictions(), 1);
  EXPECT_FALSE(pool.cached_hash(2).has_value());
  EXPECT_FALSE(pool.find_cached(102).has_value());
  EXPECT_EQ(pool.find_cached(100), 0);
  EXPECT_EQ(*pool.allocate(), 0);
  EXPECT_EQ(*pool.allocate(), 1);
  EXPECT_FALSE(pool.allocate().has_value());
  const BlockPool::Stats stats = pool.stats();
  EXPECT_EQ(stats.n_blocks, 5);
  EXPECT_EQ(stats.n_used, 5);
  EXPECT_EQ(stats.n_free, 0);
  EXPECT_EQ(stats.n_cached, 0);
  EXPECT_EQ(stats.n_evictable, 0);
  EXPECT_EQ(stats.n_evictions, 3);

  // An evicted block is an ordinary one: released, it is free, not evictable.
  pool.release(2);
  EXPECT_EQ(pool.n_evictable(), 0);
  EXPECT_EQ(*pool.allocate(), 2);
}

TEST(BlockPool, RetainingAnEvictableBlockTakesItOutOfTheEvictionOrder) {
  BlockPool pool(3);
  for (int block = 0; block < 3; ++block) {
    pool.allocate();
    pool.register_block(block, 10 + block);
  }
  for (int block = 0; block < 3; ++block) pool.release(block);
  ASSERT_EQ(pool.find_cached(10), 0);
  pool.retain(0);  // found again by a lookup
  EXPECT_EQ(pool.ref_count(0), 1);
  EXPECT_EQ(pool.n_evictable(), 2);
  EXPECT_EQ(pool.n_used(), 1);
  EXPECT_EQ(pool.cached_hash(0), 10u);
  // Released again, it is now the most recent release: evicted last.
  pool.release(0);
  EXPECT_EQ(*pool.allocate(), 1);
  EXPECT_EQ(*pool.allocate(), 2);
  EXPECT_EQ(*pool.allocate(), 0);
  EXPECT_EQ(pool.n_evictions(), 3);
}

TEST(BlockPool, CachedHashesListInUseThenMostRecentlyReleasedFirstUpToTheLimit) {
  BlockPool pool(4);
  for (int block = 0; block < 4; ++block) {
    ASSERT_EQ(pool.allocate(), block);
    ASSERT_TRUE(pool.register_block(block, 100 + block));
  }
  EXPECT_EQ(pool.cached_hashes(10), (std::vector<uint64_t>{100, 101, 102, 103}));  // all in use
  const uint64_t version = pool.cache_version();
  pool.release(1);
  pool.release(3);
  pool.release(0);
  EXPECT_NE(pool.cache_version(), version);
  EXPECT_EQ(pool.cached_hashes(10), (std::vector<uint64_t>{102, 100, 103, 101}));
  EXPECT_EQ(pool.cached_hashes(2), (std::vector<uint64_t>{102, 100}));
  EXPECT_EQ(pool.cached_hashes(0), std::vector<uint64_t>{});
  pool.retain(3);  // taken back: in use again
  EXPECT_EQ(pool.cached_hashes(10), (std::vector<uint64_t>{102, 103, 100, 101}));
  // Eviction takes the oldest release (block 1) off the list.
  const std::optional<int> reused = pool.allocate();
  ASSERT_EQ(reused, 1);
  EXPECT_EQ(pool.cached_hashes(10), (std::vector<uint64_t>{102, 103, 100}));
  // A block in use that is not registered is not listed; an unchanged pool keeps its version.
  const uint64_t after_eviction = pool.cache_version();
  EXPECT_EQ(pool.cached_hashes(10).size(), 3u);
  EXPECT_EQ(pool.cache_version(), after_eviction);
}

TEST(BlockPool, RegisteringATakenHashIsANoOpAndTheBlockIsFreedNormally) {
  BlockPool pool(3);
  const int first = *pool.allocate(), second = *pool.allocate();
  EXPECT_TRUE(pool.register_block(first, 42));
  EXPECT_FALSE(pool.register_block(second, 42));
  EXPECT_EQ(pool.find_cached(42), first);
  EXPECT_FALSE(pool.cached_hash(second).has_value());
  EXPECT_EQ(pool.n_cached(), 1);
  pool.release(second);
  EXPECT_EQ(pool.n_evictable(), 0);
  pool.release(first);
  EXPECT_EQ(pool.n_evictable(), 1);
  EXPECT_EQ(pool.n_free(), 3);
}

TEST(BlockPool, RegistrationMisuseThrowsAndChangesNothing) {
  BlockPool pool(3);
  const int block = *pool.allocate();
  pool.register_block(block, 5);
  EXPECT_THROW(pool.register_block(block, 6), Error);  // already cached
  EXPECT_THROW(pool.register_block(block, 5), Error);
  EXPECT_THROW(pool.register_block(1, 6), Error);      // free
  EXPECT_THROW(pool.register_block(3, 6), Error);      // outside the pool
  EXPECT_THROW(pool.cached_hash(-1), Error);
  EXPECT_THROW(pool.retain(2), Error);                 // free and not cached
  pool.release(block);
  EXPECT_THROW(pool.release(block), Error);            // evictable is not held
  EXPECT_EQ(pool.cached_hash(block), 5u);
  EXPECT_FALSE(pool.find_cached(6).has_value());
  EXPECT_EQ(pool.n_evictable(), 1);
}

// ---- random operations ----------------------------------------------------------

// Allocation, sharing and prefix-cache registration against PoolModel. Hashes
// come from a small set, so registrations often find theirs taken.
class RandomPoolRun {
 public:
  static constexpr int kBlocks = 37;

  void allocate() {
    const std::optional<int> got = pool.allocate();
    bool any_uncached = false;  // a loop: clang 14 cannot compile libstdc++ 12's views::iota
    for (int b = 0; b < kBlocks; ++b) any_uncached = any_uncached || model.free_uncached(b);
    if (!any_uncached && model.evictable.empty()) {
      ASSERT_FALSE(got.has_value());
      ++n_exhausted;
      return;
    }
    ASSERT_TRUE(got.has_value());
    if (any_uncached) {
      ASSERT_TRUE(model.free_uncached(*got)) << "a cached or used block, uncached ones free";
    } else {
      ASSERT_EQ(*got, model.evictable.front()) << "not the least recently released";
      model.evictable.erase(model.evictable.begin());
      model.hashes[*got].reset();
      ++model.n_evictions;
    }
    model.counts[*got] = 1;
  }

  void retain(int block) {
    if (model.counts[block] == 0 && !model.hashes[block]) {
      ASSERT_THROW(pool.retain(block), Error);
      return;
    }
    pool.retain(block);
    if (model.counts[block]++ == 0) std::erase(model.evictable, block);
  }

  void release(int block) {
    if (model.counts[block] == 0) {
      ASSERT_THROW(pool.release(block), Error);
      return;
    }
    pool.release(block);
    if (--model.counts[block] == 0 && model.hashes[block]) model.evictable.push_back(block);
  }

  void register_block(int block, uint64_t hash) {
    if (model.counts[block] == 0 || model.hashes[block]) {
      ASSERT_THROW(pool.register_block(block, hash), Error);
      return;
    }
    const bool taken = model.block_of(hash).has_value();
    ASSERT_EQ(pool.register_block(block, hash), !taken);
    if (!taken) model.hashes[block] = hash;
  }

  BlockPool pool{kBlocks};
  PoolModel model{kBlocks};
  int n_exhausted = 0;
};

TEST(BlockPool, RandomOperationsMatchAReferenceModel) {
  RandomPoolRun run;
  std::mt19937 rng(1234);
  auto random_block = [&] { return std::uniform_int_distribution<int>(0, run.kBlocks - 1)(rng); };
  auto random_hash = [&] { return std::uniform_int_distribution<uint64_t>(0, 24)(rng); };

  // Phases alternate between mostly allocating (until the pool runs dry) and
  // mostly releasing, so exhaustion, eviction and reuse all happen many times.
  std::discrete_distribution<int> filling({3, 1, 1, 1}), draining({1, 1, 3, 1});
  for (int step = 0; step < 20000; ++step) {
    const int block = random_block();
    switch (step / 500 % 2 == 0 ? filling(rng) : draining(rng)) {
      case 0: ASSERT_NO_FATAL_FAILURE(run.allocate()); break;
      case 1: ASSERT_NO_FATAL_FAILURE(run.retain(block)); break;
      case 2: ASSERT_NO_FATAL_FAILURE(run.release(block)); break;
      default: ASSERT_NO_FATAL_FAILURE(run.register_block(block, random_hash())); break;
    }
    ASSERT_NO_FATAL_FAILURE(expect_matches_model(run.pool, run.model)) << "step " << step;
  }
  EXPECT_GT(run.n_exhausted, 0);
  EXPECT_GT(run.model.n_evictions, 0);
  for (int block = 0; block < run.kBlocks; ++block)
    while (run.model.counts[block] > 0) run.release(block);
  EXPECT_EQ(run.pool.n_free(), run.kBlocks);
  EXPECT_EQ(run.pool.n_used(), 0);
}

}  // namespace
}  // namespace skiff

namespace skiff {
namespace {

// Sequences that grow together still get their blocks in runs: a next block
// is the one after the previous when free, and first blocks start free runs.
TEST(BlockPool, AllocateAfterKeepsEachSequenceInRuns) {
  constexpr int kRun = BlockPool::kRunBlocks;
  BlockPool pool(4 * kRun);
  std::vector<std::vector<int>> seqs(3);
  for (int step = 0; step < kRun; ++step)
    for (std::vector<int>& s : seqs) s.push_back(*pool.allocate_after(s.empty() ? -1 : s.back()));
  for (const std::vector<int>& s : seqs) {
    EXPECT_EQ(s.front() % kRun, 0);
    for (size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], s[i - 1] + 1) << "block " << i;
  }
  EXPECT_NE(seqs[0].front(), seqs[1].front());
  EXPECT_EQ(pool.n_used(), 3 * kRun);
}

// With no free run left, allocation falls back to any free block, and a
// taken neighbour is skipped; every block is handed out once.
TEST(BlockPool, AllocateAfterFallsBackWhenCrowded) {
  BlockPool pool(BlockPool::kRunBlocks + 3);
  std::vector<int> got;
  for (int i = 0; i < pool.n_blocks(); ++i) {
    const std::optional<int> b = pool.allocate_after(i % 2 ? got.back() : -1);
    ASSERT_TRUE(b.has_value());
    got.push_back(*b);
  }
  std::sort(got.begin(), got.end());
  for (int i = 0; i < pool.n_blocks(); ++i) EXPECT_EQ(got[i], i);
  EXPECT_FALSE(pool.allocate_after(0).has_value());
  pool.release(5);
  EXPECT_EQ(*pool.allocate_after(4), 5);
}

}  // namespace
}  // namespace skiff
