#include "cache_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "kernels/fp16.h"
#include "kv/prefix_hash.h"

namespace skiff::kv_test {
namespace {

constexpr int kQ8Group = 32;  // elements per Q8_0 scale
constexpr int32_t kVocab = 1 << 20;

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

// Key `slot` of a block, stored dimension-major (kernels/attention/kv_row.h), gathered
// back into the bytes of a row.
void gather_key_row(KvType type, const uint8_t* block, int block_size, int slot, uint8_t* row) {
  const size_t b = block_size;
  const int n = kShape.head_dim;
  if (type != KvType::kQ8_0) {
    const size_t e = type == KvType::kF32 ? 4 : 2;
    for (int d = 0; d < n; ++d) std::memcpy(row + d * e, block + (d * b + slot) * e, e);
    return;
  }
  for (int group = 0; group < n / kQ8Group; ++group, row += 2 + kQ8Group) {
    const uint8_t* region = block + group * b * (2 + kQ8Group);
    std::memcpy(row, region + 2 * slot, 2);
    for (int i = 0; i < kQ8Group; ++i) row[2 + i] = region[2 * b + i * b + slot];
  }
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

// ---- K/V as a function of the token prefix ---------------------------------

// FNV-1a over the tokens [0, p] for each p: the test's own hash, unrelated to
// the cache's. A collision would only make two prefixes expect equal K/V.
std::vector<uint64_t> running_hashes(std::span<const int32_t> tokens) {
  std::vector<uint64_t> hashes;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int32_t token : tokens) {
    for (int byte = 0; byte < 4; ++byte)
      h = (h ^ ((static_cast<uint32_t>(token) >> (8 * byte)) & 0xff)) * 0x100000001b3ULL;
    hashes.push_back(h);
  }
  return hashes;
}

// splitmix64 as a standard random generator: seeding it is free, unlike
// mt19937, and the reference seeds one per position it checks.
struct SplitMix64 {
  using result_type = uint64_t;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }
  uint64_t operator()() {
    uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  uint64_t state;
};

// Magnitudes from 1e-3 to 10 per head row, so F16 sees small and large values
// and Q8_0 steps differ between rows.
std::vector<float> random_kv(SplitMix64 rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), exponent(-3.0f, 1.0f);
  std::vector<float> x(kKvDim);
  for (int head = 0; head < kShape.n_kv_heads; ++head) {
    const float scale = std::pow(10.0f, exponent(rng));
    for (int i = 0; i < kShape.head_dim; ++i) x[head * kShape.head_dim + i] = scale * unit(rng);
  }
  return x;
}

std::vector<float> expected_kv(uint64_t prefix_hash, int layer, bool value) {
  return random_kv(SplitMix64{prefix_hash ^ (0x5851f42d4c957f2dULL * (2 * layer + value + 1))});
}

// Rows [first, last) of one block hold the K/V of `tokens` at positions
// offset + row.
void expect_rows_match(const PagedKvCache& cache, int block, int first, int last, int offset,
                       std::span<const int32_t> tokens, const char* what) {
  const std::vector<uint64_t> hashes = running_hashes(tokens.first(offset + last));
  for (int row = first; row < last; ++row)
    for (int layer = 0; layer < kShape.n_layers; ++layer)
      for (bool value : {false, true}) {
        const std::vector<float> expected = expected_kv(hashes[offset + row], layer, value);
        const std::vector<float> got = read_row(cache, block, row, layer, value);
        const std::vector<float> tol = tolerances(cache.type(), expected);
        for (int i = 0; i < kKvDim; ++i)
          ASSERT_LE(std::fabs(got[i] - expected[i]), tol[i])
              << what << ": " << (value ? "V" : "K") << " of block " << block << " layer " << layer
              << " position " << offset + row << " element " << i << ": " << got[i] << " vs "
              << expected[i];
      }
}

}  // namespace

std::vector<float> read_row(const PagedKvCache& cache, int block, int row, int layer, bool value) {
  const size_t row_offset = static_cast<size_t>(row) * cache.row_bytes();
  std::vector<float> out(kKvDim);
  std::vector<uint8_t> key_row(cache.row_bytes());
  for (int head = 0; head < kShape.n_kv_heads; ++head) {
    if (value) {
      decode_row(cache.type(), cache.value_block(block, layer, head) + row_offset, out.data() + head * kShape.head_dim);
    } else {
      gather_key_row(cache.type(), cache.key_block(block, layer, head), cache.block_size(), row, key_row.data());
      decode_row(cache.type(), key_row.data(), out.data() + head * kShape.head_dim);
    }
  }
  return out;
}

CacheUnderTest::CacheUnderTest(KvType type, int block_size, int n_blocks, int max_seq_len,
                               uint32_t seed, PrefixCaching prefix_caching)
    : cache(kShape, type, block_size, n_blocks, max_seq_len, prefix_caching), rng(seed) {}

int CacheUnderTest::create() {
  const int seq = cache.create_sequence();
  EXPECT_FALSE(reference.contains(seq)) << "id " << seq << " handed out twice";
  reference[seq] = RefSequence{};
  return seq;
}

int CacheUnderTest::fork(int parent) {
  const int child = cache.fork_sequence(parent);
  EXPECT_FALSE(reference.contains(child));
  EXPECT_EQ(cache.block_table(child), cache.block_table(parent));
  reference[child] = reference.at(parent);
  return child;
}

bool CacheUnderTest::append(int seq, std::span<const int32_t> tokens) {
  RefSequence& ref = reference.at(seq);
  const int n = ref.length() + static_cast<int>(tokens.size());
  const Snapshot before = snapshot();
  if (!cache.reserve(seq, n)) {
    EXPECT_EQ(snapshot(), before) << "failed reserve changed the cache";
    return false;
  }
  ref.tokens.insert(ref.tokens.end(), tokens.begin(), tokens.end());
  const std::vector<uint64_t> hashes = running_hashes(ref.tokens);
  for (int pos = n - static_cast<int>(tokens.size()); pos < n; ++pos)
    for (int layer = 0; layer < kShape.n_layers; ++layer)
      cache.write(layer, seq, pos, expected_kv(hashes[pos], layer, false).data(),
                  expected_kv(hashes[pos], layer, true).data());
  cache.set_length(seq, n);
  return true;
}

void CacheUnderTest::truncate(int seq, int n) {
  cache.truncate(seq, n);
  reference.at(seq).tokens.resize(n);
}

void CacheUnderTest::free(int seq) {
  cache.free_sequence(seq);
  reference.erase(seq);
}

int CacheUnderTest::attach(int seq, std::span<const int32_t> tokens, int max_tokens) {
  const int expected = expected_hit(tokens, max_tokens);
  const int n_free = cache.pool().n_free();
  const int attached = cache.attach_cached_prefix(seq, tokens, max_tokens);
  EXPECT_EQ(attached, expected);
  EXPECT_EQ(cache.pool().n_free() + cache.pool().n_used(), cache.pool().n_blocks());
  EXPECT_LE(cache.pool().n_free(), n_free) << "attach allocated";
  reference.at(seq).tokens.assign(tokens.begin(), tokens.begin() + attached);
  return attached;
}

void CacheUnderTest::cache_blocks(int seq) {
  const std::vector<int32_t>& tokens = reference.at(seq).tokens;
  cache.cache_full_blocks(seq, tokens);
  if (!cache.prefix_caching()) return;
  const int block_size = cache.block_size();
  uint64_t parent = kPrefixHashSeed;
  for (int i = 0; i < static_cast<int>(tokens.size()) / block_size; ++i) {
    const std::span<const int32_t> prefix(tokens.data(), (i + 1) * block_size);
    parent = prefix_block_hash(parent, prefix.last(block_size));
    const auto [it, inserted] = prefix_of_hash.try_emplace(parent, prefix.begin(), prefix.end());
    ASSERT_TRUE(std::ranges::equal(it->second, prefix)) << "64-bit prefix hash collision";
    const int block = cache.block_table(seq)[i];
    n_duplicates += !cache.pool().cached_hash(block) && cache.pool().find_cached(parent);
  }
}

void CacheUnderTest::expect_consistent() const {
  std::vector<int> holders(cache.pool().n_blocks(), 0);
  for (const auto& [seq, ref] : reference) {
    ASSERT_TRUE(cache.has_sequence(seq));
    ASSERT_EQ(cache.length(seq), ref.length());
    const std::vector<int>& table = cache.block_table(seq);
    const int block_size = cache.block_size();
    ASSERT_GE(static_cast<int>(table.size()), ceil_div(ref.length(), block_size));
    ASSERT_EQ(std::set<int>(table.begin(), table.end()).size(), table.size()) << "block held twice";
    for (int block : table) ++holders.at(block);
    for (int start = 0; start < ref.length(); start += block_size)
      ASSERT_NO_FATAL_FAILURE(expect_rows_match(cache, table[start / block_size], 0,
                                                std::min(block_size, ref.length() - start), start,
                                                ref.tokens, "sequence"));
  }
  int n_used = 0;
  for (int block = 0; block < cache.pool().n_blocks(); ++block) {
    ASSERT_EQ(cache.pool().ref_count(block), holders[block]) << "block " << block;
    n_used += holders[block] > 0;
  }
  ASSERT_EQ(cache.pool().n_used(), n_used);
  ASSERT_EQ(cache.pool().n_free() + cache.pool().n_used(), cache.pool().n_blocks());
  ASSERT_NO_FATAL_FAILURE(expect_cached_blocks_hold_their_prefix());
}

Snapshot CacheUnderTest::snapshot() const {
  Snapshot s;
  for (const auto& [seq, ref] : reference)
    s.sequences[seq] = {cache.length(seq), cache.block_table(seq)};
  for (int block = 0; block < cache.pool().n_blocks(); ++block)
    s.ref_counts.push_back(cache.pool().ref_count(block));
  return s;
}

std::vector<int32_t> CacheUnderTest::random_tokens(int n) {
  std::uniform_int_distribution<int32_t> token(0, kVocab - 1);
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = token(rng);
  return tokens;
}

std::vector<float> CacheUnderTest::random_position() {
  return random_kv(SplitMix64{rng()});
}

// What a lookup must find: the longest run of full blocks of tokens whose
// hashes are registered, within max_tokens and the maximum length.
int CacheUnderTest::expected_hit(std::span<const int32_t> tokens, int max_tokens) const {
  const int block_size = cache.block_size();
  const int limit = std::min({static_cast<int>(tokens.size()), max_tokens, cache.max_seq_len()});
  uint64_t parent = kPrefixHashSeed;
  int n = 0;
  for (; n + block_size <= limit; n += block_size) {
    parent = prefix_block_hash(parent, tokens.subspan(n, block_size));
    if (!cache.pool().find_cached(parent)) break;
  }
  return n;
}

// Every registered block is found under its hash and holds the K/V of the
// prefix that hash stands for: cached contents never change.
void CacheUnderTest::expect_cached_blocks_hold_their_prefix() const {
  const BlockPool& pool = cache.pool();
  int n_cached = 0, n_evictable = 0;
  for (int block = 0; block < pool.n_blocks(); ++block) {
    const std::optional<uint64_t> hash = pool.cached_hash(block);
    if (!hash) continue;
    ++n_cached;
    n_evictable += pool.ref_count(block) == 0;
    ASSERT_EQ(pool.find_cached(*hash), block);
    const auto prefix = prefix_of_hash.find(*hash);
    ASSERT_NE(prefix, prefix_of_hash.end()) << "block " << block << " under an unknown hash";
    const int start = static_cast<int>(prefix->second.size()) - cache.block_size();
    ASSERT_NO_FATAL_FAILURE(expect_rows_match(cache, block, 0, cache.block_size(), start,
                                              prefix->second, "cached block"));
  }
  ASSERT_EQ(pool.n_cached(), n_cached);
  ASSERT_EQ(pool.n_evictable(), n_evictable);
  if (!cache.prefix_caching()) {
    ASSERT_EQ(n_cached, 0);
  }
}

}  // namespace skiff::kv_test
