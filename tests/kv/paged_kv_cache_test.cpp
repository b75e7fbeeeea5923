// PagedKvCache against the reference in cache_harness.h: copy-on-write,
// sequences, errors, the storage layout, sizes, and long random runs of every
// operation (with prefix caching on and off). The prefix cache's own cases are
// in prefix_cache_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "cache_harness.h"
#include "kv/paged_kv_cache.h"

namespace skiff::kv_test {
namespace {

// ---- copy-on-write -----------------------------------------------------------

TEST(PagedKvCache, ForkSharesBlocksAndWritingTheChildLeavesTheParent) {
  CacheUnderTest t(KvType::kF32, 16, 8, 64);
  const int parent = t.create();
  ASSERT_TRUE(t.append(parent, 20));  // one full block and 4 positions of a second
  const int child = t.fork(parent);
  const std::vector<int> parent_table = t.cache.block_table(parent);
  EXPECT_EQ(t.cache.pool().ref_count(parent_table[0]), 2);
  EXPECT_EQ(t.cache.pool().ref_count(parent_table[1]), 2);
  EXPECT_THROW(t.cache.write(0, child, 19, t.random_position().data(), t.random_position().data()),
               Error);  // a shared block is never written in place

  ASSERT_TRUE(t.append(child, 25));
  const std::vector<int>& child_table = t.cache.block_table(child);
  EXPECT_EQ(child_table[0], parent_table[0]) << "the full block stays shared";
  EXPECT_NE(child_table[1], parent_table[1]) << "the block written into was copied";
  EXPECT_EQ(t.cache.pool().ref_count(parent_table[1]), 1);
  EXPECT_EQ(t.cache.block_table(parent), parent_table);

  // The parent's block is its own again: extending it copies nothing.
  ASSERT_TRUE(t.append(parent, 30));
  EXPECT_EQ(t.cache.block_table(parent)[1], parent_table[1]);
  t.expect_consistent();
}

// What a forward pass checks before it writes: reserved, and not shared.
TEST(PagedKvCache, WritableMeansReservedAndHeldAlone) {
  CacheUnderTest t(KvType::kF32, 16, 8, 64);
  const int parent = t.create();
  EXPECT_THROW(t.cache.check_writable(parent, 0, 1), Error);  // nothing reserved
  ASSERT_TRUE(t.append(parent, 20));
  t.cache.check_writable(parent, 20, 32);  // the rest of the second block is held
  EXPECT_THROW(t.cache.check_writable(parent, 20, 33), Error);
  const int child = t.fork(parent);
  EXPECT_THROW(t.cache.check_writable(child, 20, 21), Error);  // the second block is shared
  EXPECT_THROW(t.cache.check_writable(parent, 20, 21), Error);
  ASSERT_TRUE(t.cache.reserve(child, 21));  // copies it
  t.cache.check_writable(child, 20, 21);
  t.cache.check_writable(parent, 20, 21);  // the parent's is its own again
  EXPECT_THROW(t.cache.check_writable(child, 0, 1), Error);  // the first is still shared
}

TEST(PagedKvCache, ForkedReservedBlocksAreCopiedBeforeTheChildWritesThem) {
  CacheUnderTest t(KvType::kF16, 16, 8, 64);
  const int parent = t.create();
  ASSERT_TRUE(t.append(parent, 3));
  ASSERT_TRUE(t.cache.reserve(parent, 40));  // three blocks, two beyond the length
  const int child = t.fork(parent);
  ASSERT_TRUE(t.append(child, 40));
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(t.cache.block_table(child)[i], t.cache.block_table(parent)[i]);
    EXPECT_EQ(t.cache.pool().ref_count(t.cache.block_table(parent)[i]), 1);
  }
  ASSERT_TRUE(t.append(parent, 40));  // its own blocks now: written in place
  t.expect_consistent();
  EXPECT_EQ(t.cache.pool().n_used(), 6);
}

// Copies are allocated as new blocks are: each after the sequence's previous
// block, so a forked tail stays one run of the pool (decode attention reads
// it in order).
TEST(PagedKvCache, CopiesOnWriteFollowTheirPreviousBlock) {
  CacheUnderTest t(KvType::kF16, 16, 64, 256);
  const int parent = t.create();
  ASSERT_TRUE(t.append(parent, 3));
  ASSERT_TRUE(t.cache.reserve(parent, 48));  // three blocks
  // Two one-block sequences in runs of their own, freed: the most recently
  // freed blocks (what a plain allocate() hands out first) are not adjacent.
  const int a = t.create(), b = t.create();
  ASSERT_TRUE(t.append(a, 1));
  ASSERT_TRUE(t.append(b, 1));
  ASSERT_NE(t.cache.block_table(b)[0], t.cache.block_table(a)[0] + 1);
  t.free(a);
  t.free(b);
  const int child = t.fork(parent);
  ASSERT_TRUE(t.append(child, 60));  // copies of the three, then a fourth block
  const std::vector<int>& table = t.cache.block_table(child);
  ASSERT_EQ(table.size(), 4u);
  for (size_t i = 1; i < table.size(); ++i) EXPECT_EQ(table[i], table[i - 1] + 1) << "block " << i;
  t.expect_consistent();
}

TEST(PagedKvCache, TruncatingIntoASharedBlockCopiesItAtTheNextReserve) {
  CacheUnderTest t(KvType::kQ8_0, 5, 10, 64);
  const int parent = t.create();
  ASSERT_TRUE(t.append(parent, 12));  // blocks of 5, 5, 2
  const int child = t.fork(parent);
  t.truncate(child, 7);
  EXPECT_EQ(t.cache.block_table(child).size(), 2u);
  EXPECT_EQ(t.cache.pool().ref_count(t.cache.block_table(parent)[2]), 1);
  ASSERT_TRUE(t.append(child, 9));
  EXPECT_EQ(t.cache.block_table(child)[0], t.cache.block_table(parent)[0]);
  EXPECT_NE(t.cache.block_table(child)[1], t.cache.block_table(parent)[1]);
  t.expect_consistent();
}

TEST(PagedKvCache, ReserveThatCannotBeServedChangesNothing) {
  CacheUnderTest t(KvType::kF32, 4, 3, 64);
  const int parent = t.create();
  ASSERT_TRUE(t.append(parent, 6));  // two blocks, the second shared after the fork
  const int child = t.fork(parent);
  // A copy and a new block, with one block free.
  EXPECT_FALSE(t.append(child, 9));
  EXPECT_EQ(t.cache.pool().n_free(), 1);
  EXPECT_EQ(t.cache.block_table(child), t.cache.block_table(parent));
  // The copy alone fits.
  EXPECT_TRUE(t.append(child, 8));
  const int other = t.create();
  EXPECT_FALSE(t.append(other, 1));
  EXPECT_TRUE(t.cache.block_table(other).empty());
  t.expect_consistent();

  for (int seq : {parent, child, other}) t.free(seq);
  EXPECT_EQ(t.cache.pool().n_used(), 0);
}

// ---- sequences, errors, layout and sizes --------------------------------------

TEST(PagedKvCache, SequenceIdsAreReusedAfterFree) {
  PagedKvCache cache(kShape, KvType::kF16, 16, 4, 64);
  EXPECT_EQ(cache.create_sequence(), 0);
  EXPECT_EQ(cache.create_sequence(), 1);
  EXPECT_EQ(cache.create_sequence(), 2);
  cache.free_sequence(1);
  EXPECT_FALSE(cache.has_sequence(1));
  EXPECT_EQ(cache.create_sequence(), 1);
  EXPECT_EQ(cache.length(1), 0);
  EXPECT_TRUE(cache.block_table(1).empty());
}

TEST(PagedKvCache, MisuseThrows) {
  PagedKvCache cache(kShape, KvType::kF16, 4, 4, 10);
  const std::vector<float> row(kKvDim, 1.0f);
  for (int unknown : {-1, 0, 7}) {
    EXPECT_THROW(cache.length(unknown), Error);
    EXPECT_THROW(cache.reserve(unknown, 1), Error);
    EXPECT_THROW(cache.fork_sequence(unknown), Error);
    EXPECT_THROW(cache.free_sequence(unknown), Error);
    EXPECT_THROW(cache.block_table(unknown), Error);
    EXPECT_THROW(cache.write(0, unknown, 0, row.data(), row.data()), Error);
  }
  const int seq = cache.create_sequence();
  EXPECT_THROW(cache.reserve(seq, 11), Error);  // past max_seq_len
  EXPECT_THROW(cache.reserve(seq, -1), Error);
  ASSERT_TRUE(cache.reserve(seq, 5));           // two blocks: positions [0, 8) writable
  EXPECT_NO_THROW(cache.write(1, seq, 7, row.data(), row.data()));
  EXPECT_THROW(cache.write(0, seq, 8, row.data(), row.data()), Error);
  EXPECT_THROW(cache.write(0, seq, -1, row.data(), row.data()), Error);
  EXPECT_THROW(cache.write(2, seq, 0, row.data(), row.data()), Error);
  EXPECT_THROW(cache.set_length(seq, 9), Error);
  cache.set_length(seq, 3);
  EXPECT_THROW(cache.truncate(seq, 4), Error);
  EXPECT_THROW(cache.truncate(seq, -1), Error);
  EXPECT_THROW(cache.key_block(4, 0, 0), Error);
  EXPECT_THROW(cache.key_block(0, 2, 0), Error);
  EXPECT_THROW(cache.value_block(0, 0, 2), Error);
  EXPECT_THROW(cache.value_block(-1, 0, 0), Error);
  cache.free_sequence(seq);
  EXPECT_THROW(cache.free_sequence(seq), Error);
  EXPECT_EQ(cache.pool().n_used(), 0);
}

TEST(PagedKvCache, RejectsInvalidConfigurations) {
  EXPECT_THROW(PagedKvCache(kShape, KvType::kF16, 0, 4, 64), Error);
  EXPECT_THROW(PagedKvCache(kShape, KvType::kF16, 16, 0, 64), Error);
  EXPECT_THROW(PagedKvCache(kShape, KvType::kF16, 16, 4, 0), Error);
  EXPECT_THROW(PagedKvCache(KvShape{0, 2, 64}, KvType::kF16, 16, 4, 64), Error);
  EXPECT_NO_THROW(PagedKvCache(KvShape{2, 2, 48}, KvType::kF16, 16, 4, 64));
}

TEST(PagedKvCache, BlocksFollowTheDocumentedLayout) {
  // One array per (layer, K/V, head), each [block][block_size][head_dim];
  // within a block, keys are stored dimension-major ([head_dim][block_size]).
  constexpr KvShape shape{.n_layers = 2, .n_kv_heads = 3, .head_dim = 4};
  constexpr int kBlockSize = 5;
  PagedKvCache cache(shape, KvType::kF32, kBlockSize, 3, 64);
  const size_t row = 4 * sizeof(float);
  EXPECT_EQ(cache.row_bytes(), row);
  const uint8_t* base = cache.key_block(0, 0, 0);
  for (int block = 0; block < 3; ++block)
    for (int layer = 0; layer < 2; ++layer)
      for (int head = 0; head < 3; ++head) {
        const size_t key_array = (layer * 2 + 0) * 3 + head, value_array = (layer * 2 + 1) * 3 + head;
        EXPECT_EQ(cache.key_block(block, layer, head) - base, (key_array * 3 + block) * kBlockSize * row);
        EXPECT_EQ(cache.value_block(block, layer, head) - base, (value_array * 3 + block) * kBlockSize * row);
      }

  const int seq = cache.create_sequence();
  ASSERT_TRUE(cache.reserve(seq, 8));
  std::vector<float> k(12), v(12);
  for (int i = 0; i < 12; ++i) k[i] = static_cast<float>(i), v[i] = static_cast<float>(100 + i);
  cache.write(1, seq, 7, k.data(), v.data());
  const int block = cache.block_table(seq)[1];
  float stored[4];
  const uint8_t* keys = cache.key_block(block, 1, 2);
  for (int d = 0; d < 4; ++d) std::memcpy(&stored[d], keys + (d * kBlockSize + 2) * sizeof(float), sizeof(float));
  EXPECT_EQ(stored[0], 8.0f);
  EXPECT_EQ(stored[3], 11.0f);
  std::memcpy(stored, cache.value_block(block, 1, 0) + 2 * row, row);
  EXPECT_EQ(stored[0], 100.0f);
}

TEST(PagedKvCache, SizesPerTokenAndPool) {
  const size_t heads_rows = 2 * kShape.n_layers * kShape.n_kv_heads;  // K and V rows per token
  PagedKvCache f32(kShape, KvType::kF32, 16, 10, 64);
  PagedKvCache f16(kShape, KvType::kF16, 16, 10, 64);
  PagedKvCache q8(kShape, KvType::kQ8_0, 16, 10, 64);
  EXPECT_EQ(f32.bytes_per_token(), heads_rows * 64 * 4);
  EXPECT_EQ(f16.bytes_per_token(), heads_rows * 64 * 2);
  EXPECT_EQ(q8.bytes_per_token(), heads_rows * 2 * 34);  // two Q8_0 blocks of 34 bytes per row
  for (const PagedKvCache* cache : {&f32, &f16, &q8}) {
    EXPECT_EQ(cache->bytes(), 10 * 16 * cache->bytes_per_token());
    EXPECT_EQ(cache->capacity_tokens(), 160);
  }
}

TEST(PagedKvCache, WithMemoryFitsWholeBlocksInTheBudget) {
  const size_t block_bytes = 5 * PagedKvCache(kShape, KvType::kQ8_0, 5, 1, 64).bytes_per_token();
  const PagedKvCache cache =
      PagedKvCache::with_memory(kShape, KvType::kQ8_0, 5, 10 * block_bytes + block_bytes / 2, 64);
  EXPECT_EQ(cache.pool().n_blocks(), 10);
  EXPECT_LE(cache.bytes(), 10 * block_bytes + block_bytes / 2);
  EXPECT_EQ(PagedKvCache::with_memory(kShape, KvType::kQ8_0, 5, block_bytes, 64).pool().n_blocks(), 1);
  EXPECT_THROW(PagedKvCache::with_memory(kShape, KvType::kQ8_0, 5, block_bytes - 1, 64), Error);
}

TEST(PagedKvCache, KvTypeNames) {
  for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8_0})
    EXPECT_EQ(kv_type_from_name(kv_type_name(type)), type);
  EXPECT_EQ(kv_type_from_name("Q8_0"), KvType::kQ8_0);
  EXPECT_EQ(kv_type_from_name("F16"), KvType::kF16);
  EXPECT_FALSE(kv_type_from_name("bf16").has_value());
  EXPECT_FALSE(kv_type_from_name("").has_value());
}

// ---- random operation sequences --------------------------------------------

struct RandomCase {
  KvType type;
  int block_size;
  PrefixCaching prefix_caching;
};

constexpr int kMaxSeqLen = 43;  // a multiple of neither block size
constexpr int kMaxSequences = 5;

// One random run: each sequence follows a script of tokens, one of a few
// shared prompts up to a random point and its own tokens after it, so that
// prefixes repeat: blocks are found in the prefix cache, computed twice by
// sequences that ran side by side, and evicted under pressure.
class RandomRun {
 public:
  explicit RandomRun(const RandomCase& c)
      // Room for about two full sequences, so reservations often fail.
      : t(c.type, c.block_size, 2 * ceil_div(kMaxSeqLen, c.block_size) + 1, kMaxSeqLen,
          42 + c.block_size, c.prefix_caching) {
    for (int i = 0; i < 3; ++i) prompts.push_back(t.random_tokens(kMaxSeqLen));
  }

  int random_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(t.rng); }

  int random_sequence() {
    auto it = t.reference.begin();
    std::advance(it, random_int(0, static_cast<int>(t.reference.size()) - 1));
    return it->first;
  }

  // A longer length for seq: by up to two blocks, within the maximum.
  int grown(int seq) {
    const int block_size = t.cache.block_size();
    return std::min(kMaxSeqLen, t.cache.length(seq) + random_int(1, 2 * block_size));
  }

  // `kept`, then a random prompt's continuation if kept is a prefix of it,
  // up to a random point, then random tokens.
  std::vector<int32_t> make_script(const std::vector<int32_t>& kept) {
    const int which = random_int(0, static_cast<int>(prompts.size()) - 1);
    const std::vector<int32_t>& prompt = prompts[which];
    std::vector<int32_t> script = kept;
    if (std::equal(kept.begin(), kept.end(), prompt.begin())) {
      const int diverge = random_int(static_cast<int>(kept.size()), kMaxSeqLen);
      script.insert(script.end(), prompt.begin() + kept.size(), prompt.begin() + diverge);
    }
    const std::vector<int32_t> own = t.random_tokens(kMaxSeqLen - static_cast<int>(script.size()));
    script.insert(script.end(), own.begin(), own.end());
    return script;
  }

  // A new sequence attaches what the cache holds of a prompt, as the engine
  // does, then computes the rest of it if the pool has room.
  void create() {
    const int seq = t.create();
    scripts[seq] = make_script({});
    const int prompt_length = random_int(0, kMaxSeqLen);
    const std::span<const int32_t> prompt(scripts[seq].data(), prompt_length);
    n_hit_tokens += t.attach(seq, prompt, prompt_length - random_int(0, 1));
    append(seq, prompt_length);
  }

  void fork() {
    const int parent = random_sequence();
    const int child = t.fork(parent);
    scripts[child] = random_int(0, 1) ? scripts[parent] : make_script(t.reference[child].tokens);
    ++n_forks;
  }

  void append(int seq, int n) {
    const std::vector<int32_t>& script = scripts.at(seq);
    const std::vector<int> table_before = t.cache.block_table(seq);
    if (!t.append(seq, std::span(script).subspan(t.cache.length(seq), n - t.cache.length(seq))))
      ++n_failed_reserves;
    for (size_t i = 0; i < table_before.size(); ++i)
      n_copies += t.cache.block_table(seq)[i] != table_before[i];
  }

  // Reserved but unwritten blocks get shared by a later fork; the child must
  // then copy them too before writing.
  void reserve_ahead(int seq, int n) {
    const Snapshot before = t.snapshot();
    if (!t.cache.reserve(seq, n)) {
      ASSERT_EQ(t.snapshot(), before);
      ++n_failed_reserves;
    }
  }

  // Half the time the sequence then goes on as before, recomputing blocks
  // that may still be cached.
  void truncate(int seq) {
    t.truncate(seq, random_int(0, t.cache.length(seq)));
    if (random_int(0, 1)) scripts[seq] = make_script(t.reference[seq].tokens);
  }

  void free(int seq) {
    t.free(seq);
    scripts.erase(seq);
  }

  CacheUnderTest t;
  std::vector<std::vector<int32_t>> prompts;
  std::map<int, std::vector<int32_t>> scripts;
  int n_forks = 0, n_failed_reserves = 0, n_copies = 0, n_hit_tokens = 0;
};

class PagedKvCacheRandom : public ::testing::TestWithParam<RandomCase> {};

TEST_P(PagedKvCacheRandom, MatchesReferenceAfterEveryOperation) {
  const RandomCase c = GetParam();
  RandomRun run(c);
  CacheUnderTest& t = run.t;
  enum Op { kCreate, kFork, kAppend, kReserveAhead, kTruncate, kFree, kCache };
  std::discrete_distribution<int> pick_op({2, 2, 6, 1, 2, 2, 3});
  for (int step = 0; step < 500; ++step) {
    const Op op = t.reference.empty() ? kCreate : static_cast<Op>(pick_op(t.rng));
    const bool room = static_cast<int>(t.reference.size()) < kMaxSequences;
    const int seq = t.reference.empty() ? -1 : run.random_sequence();
    const int grown = seq < 0 ? 0 : run.grown(seq);
    if (op == kCreate && room) run.create();
    if (op == kFork && room) run.fork();
    if (op == kAppend) run.append(seq, grown);
    if (op == kReserveAhead) {
      ASSERT_NO_FATAL_FAILURE(run.reserve_ahead(seq, grown));
    }
    if (op == kTruncate) run.truncate(seq);
    if (op == kFree) run.free(seq);
    if (op == kCache) t.cache_blocks(seq);
    ASSERT_NO_FATAL_FAILURE(t.expect_consistent()) << "step " << step;
  }
  EXPECT_GT(run.n_forks, 10);
  EXPECT_GT(run.n_failed_reserves, 0);
  EXPECT_GT(run.n_copies, 0);
  if (c.prefix_caching == PrefixCaching::kOn) {
    EXPECT_GT(run.n_hit_tokens, 0);
    EXPECT_GT(t.n_duplicates, 0);
    EXPECT_GT(t.cache.pool().n_evictions(), 0);
  } else {
    EXPECT_EQ(run.n_hit_tokens, 0);
  }

  while (!t.reference.empty()) t.free(t.reference.begin()->first);
  EXPECT_EQ(t.cache.pool().n_used(), 0);
  EXPECT_EQ(t.cache.pool().n_free(), t.cache.pool().n_blocks());
}

INSTANTIATE_TEST_SUITE_P(
    TypesAndBlockSizes, PagedKvCacheRandom,
    ::testing::Values(RandomCase{KvType::kF32, 16, PrefixCaching::kOff},
                      RandomCase{KvType::kF32, 5, PrefixCaching::kOff},
                      RandomCase{KvType::kF16, 16, PrefixCaching::kOff},
                      RandomCase{KvType::kF16, 5, PrefixCaching::kOff},
                      RandomCase{KvType::kQ8_0, 16, PrefixCaching::kOff},
                      RandomCase{KvType::kQ8_0, 5, PrefixCaching::kOff},
                      RandomCase{KvType::kF32, 16, PrefixCaching::kOn},
                      RandomCase{KvType::kF32, 5, PrefixCaching::kOn},
                      RandomCase{KvType::kF16, 4, PrefixCaching::kOn},
                      RandomCase{KvType::kQ8_0, 5, PrefixCaching::kOn}),
    [](const auto& info) {
      return std::string(kv_type_name(info.param.type)) + "_block" +
             std::to_string(info.param.block_size) +
             (info.param.prefix_caching == PrefixCaching::kOn ? "_prefix_caching" : "");
    });

}  // namespace
}  // namespace skiff::kv_test
