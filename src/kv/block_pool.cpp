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
  // Pushed in reverse so a fresh pool hands out blocks 0, 1, 2, ... in order.
  free_.reserve(n_blocks);
  for (int block = n_blocks - 1; block >= 0; --block) free_.push_back(block);
}

std::optional<int> BlockPool::allocate() {
  if (free_.empty()) return std::nullopt;
  const int block = free_.back();
  free_.pop_back();
  ref_counts_[block] = 1;
  return block;
}

void BlockPool::retain(int block) {
  check_allocated(ref_counts_, block, "retain");
  ++ref_counts_[block];
}

void BlockPool::release(int block) {
  check_allocated(ref_counts_, block, "release");
  if (--ref_counts_[block] == 0) free_.push_back(block);
}

int BlockPool::ref_count(int block) const {
  check_in_range(ref_counts_, block, "ref_count");
  return ref_counts_[block];
}

}  // namespace skiff
