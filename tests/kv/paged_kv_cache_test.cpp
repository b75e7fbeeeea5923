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
