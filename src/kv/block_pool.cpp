#include "kv/block_pool.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {
namespace {

void check_in_range(const std::vector<int>& ref_counts, int block, const char* operation) {
  const int n_blocks = static_cast<int>(ref_counts.size());
  if (block < 0 || block >= n_blocks)
    fail("block pool: {} of block {}, outside the pool of {} blocks", operation, block, n_blocks);
}

void check_allocated(const std::vector<int>& ref_counts, int block, const char* operation) {
  check_in_range(ref_counts, block, operation);
  if (ref_counts[block] == 0)
    fail("block pool: {} of block {}, which is free (double free or use after free)", operation,
         block);
}

}  // namespace

BlockPool::BlockPool(int n_blocks) {
  if (n_blocks < 0) fail("block pool: negative block count {}", n_blocks);
  ref_counts_.assign(n_blocks, 0);
  hash_of_block_.assign(n_blocks, std::nullopt);
  released_at_.assign(n_blocks, 0);
  // Pushed in reverse so a fresh pool hands out blocks 0, 1, 2, ... in order.
  free_.reserve(n_blocks);
  free_pos_.assign(n_blocks, -1);
  for (int block = n_blocks - 1; block >= 0; --block) {
    free_pos_[block] = static_cast<int>(free_.size());
    free_.push_back(block);
  }
}

std::optional<int> BlockPool::allocate() {
  if (!free_.empty()) return take_free(free_.back());
  if (evictable_.empty()) return std::nullopt;
  const int block = evict_oldest();
  ref_counts_[block] = 1;
  return block;
}

std::optional<int> BlockPool::allocate_after(int previous) {
  if (previous >= 0 && is_free(previous + 1)) return take_free(previous + 1);
  if (const std::optional<int> start = find_run()) {
    run_cursor_ = *start + kRunBlocks;
    return take_free(*start);
  }
  return allocate();
}

int BlockPool::take_free(int block) {
  const int pos = free_pos_[block];
  free_pos_[free_.back()] = pos;  // the last entry moves into the hole
  free_[pos] = free_.back();
  free_.pop_back();
  free_pos_[block] = -1;
  ref_counts_[block] = 1;
  return block;
}

std::optional<int> BlockPool::find_run() {
  // A bounded scan from the cursor (wrapping), so a crowded pool costs a
  // fixed amount per allocation before the plain stack takes over.
  constexpr int kMaxProbes = 64;
  const int n = n_blocks();
  if (n < kRunBlocks) return std::nullopt;
  int start = run_cursor_ % n;
  for (int probe = 0; probe < kMaxProbes; ++probe) {
    if (start + kRunBlocks > n) start = 0;
    int used = -1;  // the last non-free block in [start, start + kRunBlocks)
    for (int b = start + kRunBlocks - 1; b >= start && used < 0; --b)
      if (!is_free(b)) used = b;
    if (used < 0) return start;
    start = used + 1;
  }
  return std::nullopt;
}

void BlockPool::retain(int block) {
  check_in_range(ref_counts_, block, "retain");
  if (ref_counts_[block] == 0) {
    if (!hash_of_block_[block]) check_allocated(ref_counts_, block, "retain");  // throws
    evictable_.erase({released_at_[block], block});
    ++cache_version_;
  }
  ++ref_counts_[block];
}

void BlockPool::release(int block) {
  check_allocated(ref_counts_, block, "release");
  if (--ref_counts_[block] > 0) return;
  if (hash_of_block_[block]) {
    released_at_[block] = release_tick_++;
    evictable_.emplace(released_at_[block], block);
    ++cache_version_;
  } else {
    free_pos_[block] = static_cast<int>(free_.size());
    free_.push_back(block);
  }
}

int BlockPool::ref_count(int block) const {
  check_in_range(ref_counts_, block, "ref_count");
  return ref_counts_[block];
}

bool BlockPool::register_block(int block, uint64_t hash) {
  check_allocated(ref_counts_, block, "register");
  if (hash_of_block_[block])
    fail("block pool: register of block {} under hash {:#x}, but it is already cached under {:#x}",
         block, hash, *hash_of_block_[block]);
  if (!block_of_hash_.emplace(hash, block).second) return false;
  hash_of_block_[block] = hash;
  ++cache_version_;
  return true;
}

std::optional<int> BlockPool::find_cached(uint64_t hash) const {
  const auto it = block_of_hash_.find(hash);
  if (it == block_of_hash_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint64_t> BlockPool::cached_hash(int block) const {
  check_in_range(ref_counts_, block, "cached_hash");
  return hash_of_block_[block];
}

BlockPool::Stats BlockPool::stats() const {
  return {.n_blocks = n_blocks(),
          .n_used = n_used(),
          .n_free = n_free(),
          .n_cached = n_cached(),
          .n_evictable = n_evictable(),
          .n_evictions = n_evictions_};
}

std::vector<uint64_t> BlockPool::cached_hashes(size_t limit) const {
  std::vector<uint64_t> out;
  out.reserve(std::min(limit, block_of_hash_.size()));
  // The scan ends at the last cached block in use.
  const size_t n_in_use = std::min(limit, block_of_hash_.size() - evictable_.size());
  for (int block = 0; block < n_blocks() && out.size() < n_in_use; ++block)
    if (ref_counts_[block] > 0 && hash_of_block_[block]) out.push_back(*hash_of_block_[block]);
  for (auto it = evictable_.rbegin(); it != evictable_.rend() && out.size() < limit; ++it)
    out.push_back(*hash_of_block_[it->second]);
  return out;
}

int BlockPool::evict_oldest() {
  const int block = evictable_.begin()->second;
  evictable_.erase(evictable_.begin());
  block_of_hash_.erase(*hash_of_block_[block]);
  hash_of_block_[block].reset();
  ++n_evictions_;
  ++cache_version_;
  return block;
}

}  // namespace skiff
