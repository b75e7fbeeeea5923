// PagedKvCache against a reference that keeps each sequence's K/V as plain
// float vectors. Reads go through block_table + key_block/value_block and
// decode the documented layout independently of the cache's own code; F32
// must be exact, F16 within fp16 rounding, Q8_0 within half a quantization
// step. Block reference counts are recomputed from the block tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "base/error.h"
#include "kernels/fp16.h"
#include "kv/paged_kv_cache.h"

namespace skiff {
namespace {

constexpr KvShape kShape{.n_layers = 2, .n_kv_heads = 2, .head_dim = 64};
constexpr int kKvDim = kShape.n_kv_heads * kShape.head_dim;
constexpr int kQ8Group = 32;  // elements per Q8_0 scale

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// ---- reading the cache through its documented layout ----------------------

void decode_row(KvType type, const uint8_t* row, float* out) {
  const int n = kShape.head_dim;
  switch (type) {
    case KvType::kF32:
      std::memcpy(out, row, n * sizeof(float));
      return;
    case KvType::kF16:
      for (int i = 0; i < n; ++i) {
        uint16_t half;
        std::memcpy(&half, row + 2 * i, 2);
        out[i] = fp16_to_f32(half);
      }
      return;
    case KvType::kQ8_0:
      for (int group = 0; group < n / kQ8Group; ++group, row += 2 + kQ8Group) {
        uint16_t scale;
        std::memcpy(&scale, row, 2);
        for (int i = 0; i < kQ8Group; ++i)
          out[group * kQ8Group + i] = fp16_to_f32(scale) * static_cast<int8_t>(row[2 + i]);
      }
      return;
  }
}

// K (or V) of every head of one position, [kKvDim] floats.
std::vector<float> read_position(const PagedKvCache& cache, int seq, int layer, int pos,
                                 bool value) {
  const int block = cache.block_table(seq).at(pos / cache.block_size());
  const size_t row_offset = static_cast<size_t>(pos % cache.block_size()) * cache.row_bytes();
  std::vector<float> out(kKvDim);
  for (int head = 0; head < kShape.n_kv_heads; ++head) {
    const uint8_t* head_rows =
        value ? cache.value_block(block, layer, head) : cache.key_block(block, layer, head);
    decode_row(cache.type(), head_rows + row_offset, out.data() + head * kShape.head_dim);
  }
  return out;
}

// Half has 11 significant bits; below 2^-14 the spacing is fixed at 2^-24.
float fp16_rounding(float x) { return std::max(std::fabs(x) * 0x1p-11f, 0x1p-25f); }

// Largest error a stored element may carry, for each element of `stored`.
std::vector<float> tolerances(KvType type, const std::vector<float>& stored) {
  std::vector<float> tol(stored.size(), 0.0f);
  if (type == KvType::kF16) {
    for (size_t i = 0; i < stored.size(); ++i) tol[i] = fp16_rounding(stored[i]);
  } else if (type == KvType::kQ8_0) {
    // Half a step (max|x| / 127), plus the fp16 rounding of the stored step
    // times |q| <= 127 (large for small rows, whose step is an fp16 subnormal).
    for (size_t start = 0; start < stored.size(); start += kQ8Group) {
      float amax = 0;
      for (int i = 0; i < kQ8Group; ++i) amax = std::max(amax, std::fabs(stored[start + i]));
      const float step = amax / 127;
      const float bound = (0.5f * step + 127 * fp16_rounding(step)) * 1.0001f;
      std::fill_n(tol.begin() + start, kQ8Group, bound);
    }
  }
  return tol;
}

// ---- the reference model ----------------------------------------------------

struct RefSequence {
  int length = 0;
  std::vector<std::vector<float>> keys{kShape.n_layers}, values{kShape.n_layers};  // [layer][pos * kKvDim]
};

// Block tables, lengths and reference counts: everything reserve may change.
struct Snapshot {
  std::map<int, std::pair<int, std::vector<int>>> sequences;
  std::vector<int> ref_counts;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const PagedKvCache& cache, const std::map<int, RefSequence>& reference) {
  Snapshot s;
  for (const auto& [seq, ref] : reference) s.sequences[seq] = {cache.length(seq), cache.block_table(seq)};
  for (int block = 0; block < cache.pool().n_blocks(); ++block)
    s.ref_counts.push_back(cache.pool().ref_count(block));
  return s;
}

void expect_position_matches(const PagedKvCache& cache, int seq, const RefSequence& ref, int layer,
                             int pos) {
  for (bool value : {false, true}) {
    const std::vector<float>& all = value ? ref.values[layer] : ref.keys[layer];
    const std::vector<float> expected(all.begin() + pos * kKvDim, all.begin() + (pos + 1) * kKvDim);
    const std::vector<float> got = read_position(cache, seq, layer, pos, value);
    const std::vector<float> tol = tolerances(cache.type(), expected);
    for (int i = 0; i < kKvDim; ++i)
      ASSERT_LE(std::fabs(got[i] - expected[i]), tol[i])
          << (value ? "V" : "K") << " of sequence " << seq << " layer " << layer << " position "
          << pos << " element " << i << ": " << got[i] << " vs " << expected[i];
  }
}

// Every sequence reads back as the reference, and each block's reference
// count is the number of block tables that hold it.
void expect_matches_reference(const PagedKvCache& cache, const std::map<int, RefSequence>& reference) {
  std::vector<int> holders(cache.pool().n_blocks(), 0);
  for (const auto& [seq, ref] : reference) {
    ASSERT_TRUE(cache.has_sequence(seq));
    ASSERT_EQ(cache.length(seq), ref.length);
    const std::vector<int>& table = cache.block_table(seq);
    ASSERT_GE(static_cast<int>(table.size()), ceil_div(ref.length, cache.block_size()));
    ASSERT_EQ(std::set<int>(table.begin(), table.end()).size(), table.size()) << "block held twice";
    for (int block : table) ++holders.at(block);
    for (int layer = 0; layer < kShape.n_layers; ++layer)
      for (int pos = 0; pos < ref.length; ++pos) expect_position_matches(cache, seq, ref, layer, pos);
  }
  int n_used = 0;
  for (int block = 0; block < cache.pool().n_blocks(); ++block) {
    ASSERT_EQ(cache.pool().ref_count(block), holders[block]) << "block " << block;
    n_used += holders[block] > 0;
  }
  ASSERT_EQ(cache.pool().n_used(), n_used);
}

// A cache and its reference, driven by one random generator.
class CacheUnderTest {
 public:
  CacheUnderTest(KvType type, int block_size, int n_blocks, int max_seq_len, uint32_t seed = 1)
      : cache(kShape, type, block_size, n_blocks, max_seq_len), rng(seed) {}

  int create() {
    const int seq = cache.create_sequence();
    EXPECT_FALSE(reference.contains(seq)) << "id " << seq << " handed out twice";
    reference[seq] = RefSequence{};
    return seq;
  }

  int fork(int parent) {
    const int child = cache.fork_sequence(parent);
    EXPECT_FALSE(reference.contains(child));
    EXPECT_EQ(cache.block_table(child), cache.block_table(parent));
    reference[child] = reference.at(parent);
    return child;
  }

  // Reserves, writes positions [length, n) of every layer and sets the
  // length, as a forward pass does. False (and nothing changed) when the
  // pool cannot serve the reservation.
  bool append(int seq, int n) {
    const Snapshot before = snapshot(cache, reference);
    if (!cache.reserve(seq, n)) {
      EXPECT_EQ(snapshot(cache, reference), before) << "failed reserve changed the cache";
      return false;
    }
    RefSequence& ref = reference.at(seq);
    for (int pos = ref.length; pos < n; ++pos) {
      for (int layer = 0; layer < kShape.n_layers; ++layer) {
        const std::vector<float> k = random_position(), v = random_position();
        cache.write(layer, seq, pos, k.data(), v.data());
        ref.keys[layer].insert(ref.keys[layer].end(), k.begin(), k.end());
        ref.values[layer].insert(ref.values[layer].end(), v.begin(), v.end());
      }
    }
    cache.set_length(seq, n);
    ref.length = n;
    return true;
  }

  void truncate(int seq, int n) {
    cache.truncate(seq, n);
    RefSequence& ref = reference.at(seq);
    ref.length = n;
    for (int layer = 0; layer < kShape.n_layers; ++layer) {
      ref.keys[layer].resize(static_cast<size_t>(n) * kKvDim);
      ref.values[layer].resize(static_cast<size_t>(n) * kKvDim);
    }
  }

  void free(int seq) {
    cache.free_sequence(seq);
    reference.erase(seq);
  }

  // Magnitudes from 1e-3 to 10 per head row, so F16 sees small and large
  // values and Q8_0 steps differ between rows.
  std::vector<float> random_position() {
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f), exponent(-3.0f, 1.0f);
    std::vector<float> x(kKvDim);
    for (int head = 0; head < kShape.n_kv_heads; ++head) {
      const float scale = std::pow(10.0f, exponent(rng));
      for (int i = 0; i < kShape.head_dim; ++i) x[head * kShape.head_dim + i] = scale * unit(rng);
    }
    return x;
  }

  PagedKvCache cache;
  std::map<int, RefSequence> reference;
  std::mt19937 rng;
};

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
  expect_matches_reference(t.cache, t.reference);
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
  expect_matches_reference(t.cache, t.reference);
  EXPECT_EQ(t.cache.pool().n_used(), 6);
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
  expect_matches_reference(t.cache, t.reference);
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
  expect_matches_reference(t.cache, t.reference);

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
  // One array per (layer, K/V, head), each [block][block_size][head_dim].
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
  std::memcpy(stored, cache.key_block(block, 1, 2) + 2 * row, row);
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
};

class PagedKvCacheRandom : public ::testing::TestWithParam<RandomCase> {};

TEST_P(PagedKvCacheRandom, MatchesReferenceAfterEveryOperation) {
  const auto [type, block_size] = GetParam();
  constexpr int kMaxSeqLen = 43;  // a multiple of neither block size
  constexpr int kMaxSequences = 5;
  // Room for about two full sequences, so reservations often fail.
  const int n_blocks = 2 * ceil_div(kMaxSeqLen, block_size) + 1;
  CacheUnderTest t(type, block_size, n_blocks, kMaxSeqLen, 42 + block_size);
  std::mt19937& rng = t.rng;
  auto random_int = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto random_sequence = [&] {
    auto it = t.reference.begin();
    std::advance(it, random_int(0, static_cast<int>(t.reference.size()) - 1));
    return it->first;
  };

  enum Op { kCreate, kFork, kAppend, kReserveAhead, kTruncate, kFree };
  std::discrete_distribution<int> pick_op({2, 2, 6, 1, 2, 2});
  int n_forks = 0, n_failed_reserves = 0, n_copies = 0;
  for (int step = 0; step < 400; ++step) {
    const Op op = t.reference.empty() ? kCreate : static_cast<Op>(pick_op(rng));
    if (op == kCreate || op == kFork) {
      if (static_cast<int>(t.reference.size()) >= kMaxSequences) continue;
      if (op == kCreate) {
        t.create();
      } else {
        t.fork(random_sequence());
        ++n_forks;
      }
    } else if (op == kAppend) {
      const int seq = random_sequence();
      const int n = std::min(kMaxSeqLen, t.cache.length(seq) + random_int(1, 2 * block_size + 1));
      const std::vector<int> table_before = t.cache.block_table(seq);
      if (!t.append(seq, n)) ++n_failed_reserves;
      for (size_t i = 0; i < table_before.size(); ++i)
        n_copies += t.cache.block_table(seq)[i] != table_before[i];
    } else if (op == kReserveAhead) {
      // Reserved but unwritten blocks get shared by a later fork; the child
      // must then copy them too before writing.
      const int seq = random_sequence();
      const int n = std::min(kMaxSeqLen, t.cache.length(seq) + random_int(1, 2 * block_size));
      const Snapshot before = snapshot(t.cache, t.reference);
      if (!t.cache.reserve(seq, n)) {
        ASSERT_EQ(snapshot(t.cache, t.reference), before);
        ++n_failed_reserves;
      }
    } else if (op == kTruncate) {
      const int seq = random_sequence();
      t.truncate(seq, random_int(0, t.cache.length(seq)));
    } else {
      t.free(random_sequence());
    }
    ASSERT_NO_FATAL_FAILURE(expect_matches_reference(t.cache, t.reference)) << "step " << step;
  }
  EXPECT_GT(n_forks, 10);
  EXPECT_GT(n_failed_reserves, 0);
  EXPECT_GT(n_copies, 0);

  while (!t.reference.empty()) t.free(t.reference.begin()->first);
  EXPECT_EQ(t.cache.pool().n_used(), 0);
  EXPECT_EQ(t.cache.pool().n_free(), n_blocks);
}

INSTANTIATE_TEST_SUITE_P(TypesAndBlockSizes, PagedKvCacheRandom,
                         ::testing::Values(RandomCase{KvType::kF32, 16}, RandomCase{KvType::kF32, 5},
                                           RandomCase{KvType::kF16, 16}, RandomCase{KvType::kF16, 5},
                                           RandomCase{KvType::kQ8_0, 16},
                                           RandomCase{KvType::kQ8_0, 5}),
                         [](const auto& info) {
                           return std::string(kv_type_name(info.param.type)) + "_block" +
                                  std::to_string(info.param.block_size);
                         });

}  // namespace
}  // namespace skiff
