// A pool of fixed-size KV blocks, identified by index, with reference counts:
// a block shared by several sequences returns to the free list only when the
// last of them releases it.
#pragma once
#include <optional>
#include <vector>

namespace skiff {

class BlockPool {
 public:
  explicit BlockPool(int n_blocks);

  std::optional<int> allocate();  // a free block with refcount 1, or nullopt when none is free
  void retain(int block);         // refcount + 1 (block must be allocated)
  void release(int block);        // refcount - 1; back to the free list at 0
  int ref_count(int block) const;

  int n_blocks() const { return static_cast<int>(ref_counts_.size()); }
  int n_free() const { return static_cast<int>(free_.size()); }
  int n_used() const { return n_blocks() - n_free(); }

 private:
  std::vector<int> ref_counts_;
  std::vector<int> free_;  // stack: most recently freed first (warm in cache)
};

}  // namespace skiff
