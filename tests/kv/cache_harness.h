// A PagedKvCache driven side by side with a reference that knows only each
// sequence's tokens. The K and V written at position p are a fixed
// pseudo-random function of tokens [0, p], as a model's would be, so a block
// attached from the prefix cache must read back exactly as if the sequence had
// computed it. Reads go through block_table + key_block/value_block and decode
// the documented layout independently of the cache's own code; F32 must be
// exact, F16 within fp16 rounding, Q8_0 within half a quantization step.
// Block reference counts are recomputed from the block tables.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "kv/paged_kv_cache.h"

namespace skiff::kv_test {

inline constexpr KvShape kShape{.n_layers = 2, .n_kv_heads = 2, .head_dim = 64};
inline constexpr int kKvDim = kShape.n_kv_heads * kShape.head_dim;

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// K (or V) of every head of one row of a block, [kKvDim] floats.
std::vector<float> read_row(const PagedKvCache& cache, int block, int row, int layer, bool value);

struct RefSequence {
  std::vector<int32_t> tokens;  // one per position written
  int length() const { return static_cast<int>(tokens.size()); }
};

// Block tables, lengths and reference counts: everything reserve may change.
struct Snapshot {
  std::map<int, std::pair<int, std::vector<int>>> sequences;
  std::vector<int> ref_counts;
  bool operator==(const Snapshot&) const = default;
};

class CacheUnderTest {
 public:
  CacheUnderTest(KvType type, int block_size, int n_blocks, int max_seq_len, uint32_t seed = 1,
                 PrefixCaching prefix_caching = PrefixCaching::kOff);

  int create();
  int fork(int parent);
  // Reserves, writes the K/V of each new token in every layer and sets the
  // length, as a forward pass does. False (and nothing changed) when the pool
  // cannot serve the reservation.
  bool append(int seq, std::span<const int32_t> tokens);
  bool append(int seq, int n) { return append(seq, random_tokens(n - reference.at(seq).length())); }
  void truncate(int seq, int n);
  void free(int seq);
  // attach_cached_prefix, checking the count against the pool's registrations.
  int attach(int seq, std::span<const int32_t> tokens, int max_tokens);
  // cache_full_blocks with the sequence's tokens; counts duplicate blocks.
  void cache_blocks(int seq);

  // Every sequence reads back as the reference, refcounts equal the number of
  // holders, and every cached block holds what its hash says.
  void expect_consistent() const;
  Snapshot snapshot() const;
  std::vector<int32_t> random_tokens(int n);
  std::vector<float> random_position();  // K or V of one position, not tied to tokens

  PagedKvCache cache;
  std::map<int, RefSequence> reference;
  // The token prefix ending with each full block cache_blocks has hashed.
  std::map<uint64_t, std::vector<int32_t>> prefix_of_hash;
  // Full blocks cache_blocks found unregistered while another block held
  // their hash (counted at each call, so a block may count more than once).
  int n_duplicates = 0;
  std::mt19937 rng;

 private:
  int expected_hit(std::span<const int32_t> tokens, int max_tokens) const;
  void expect_cached_blocks_hold_their_prefix() const;
};

}  // namespace skiff::kv_test
