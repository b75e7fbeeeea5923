#include "kv/block_pool.h"

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
  for (int block = n_blocks - 1; block >= 0; --block) free_.push_back(block);
}

std::optional<int> BlockPool::allocate() {
  int block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!evictable_.empty()) {
    block = evict_oldest();
  } else {
    return std::nullopt;
  }
  ref_counts_[block] = 1;
  return block;
}

void BlockPool::retain(int block) {
  check_in_range(ref_counts_, block, "retain");
  if (ref_counts_[block] == 0) {
    if (!hash_of_block_[block]) check_allocated(ref_counts_, block, "retain");  // throws
    evictable_.erase({released_at_[block], block});
  }
  ++ref_counts_[block];
}

void BlockPool::release(int block) {
  check_allocated(ref_counts_, block, "release");
  if (--ref_counts_[block] > 0) return;
  if (hash_of_block_[block]) {
    released_at_[block] = release_tick_++;
    evictable_.emplace(released_at_[block], block);
  } else {
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

int BlockPool::evict_oldest() {
  const int block = evictable_.begin()->second;
  evictable_.erase(evictable_.begin());
  block_of_hash_.erase(*hash_of_block_[block]);
  hash_of_block_[block].reset();
  ++n_evictions_;
  return block;
}

}  // namespace skiff
