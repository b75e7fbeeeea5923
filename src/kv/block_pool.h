// A pool of fixed-size KV blocks, identified by index, with reference counts:
// a block shared by several sequences returns to the pool only when the last
// of them releases it.
//
// Prefix caching: a block in use can be registered under the hash of the
// tokens it holds (kv/prefix_hash.h), so other sequences can find and share
// it. A registered block that its last holder releases is not freed but kept,
// contents intact, as "evictable": a lookup can still take it back (retain).
// allocate() reuses an evictable block only when no never-registered block is
// free, taking the one released longest ago and dropping its registration.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace skiff {

class BlockPool {
 public:
  struct Stats {
    int n_blocks = 0;
    int n_used = 0;       // refcount > 0
    int n_free = 0;       // what allocate() can serve: never-registered free + evictable
    int n_cached = 0;     // registered, in use or evictable
    int n_evictable = 0;  // registered with refcount 0
    int64_t n_evictions = 0;
  };

  explicit BlockPool(int n_blocks);

  // A block with refcount 1: a never-registered free one if any, else the
  // least recently released evictable one (evicted); nullopt when neither.
  std::optional<int> allocate();
  // allocate() for a sequence's next block, keeping each sequence's blocks
  // in runs: the block after `previous` if it is free, else (and for a first
  // block, previous < 0) the start of a run of kRunBlocks free blocks found
  // near a cursor that moves on past each run handed out, else allocate().
  // Decode attention reads a sequence's blocks in order, and adjacent blocks
  // stream from memory where scattered ones wait on each block's first miss.
  std::optional<int> allocate_after(int previous);
  static constexpr int kRunBlocks = 16;
  // refcount + 1. The block must be in use, or evictable: a cached block
  // taken back by a lookup leaves the eviction order.
  void retain(int block);
  // refcount - 1; at 0 the block becomes evictable if registered, else free.
  void release(int block);
  int ref_count(int block) const;

  // Registers a block in use under hash. False, changing nothing, if another
  // block already holds the hash (two sequences computed the same block): that
  // one stays the cached copy. Throws if the block is already registered.
  bool register_block(int block, uint64_t hash);
  std::optional<int> find_cached(uint64_t hash) const;  // the block registered under hash
  std::optional<uint64_t> cached_hash(int block) const;  // nullopt if not registered

  int n_blocks() const { return static_cast<int>(ref_counts_.size()); }
  int n_free() const { return static_cast<int>(free_.size() + evictable_.size()); }
  int n_used() const { return n_blocks() - n_free(); }
  int n_cached() const { return static_cast<int>(block_of_hash_.size()); }
  int n_evictable() const { return static_cast<int>(evictable_.size()); }
  int64_t n_evictions() const { return n_evictions_; }
  Stats stats() const;

  // The hashes of the cached blocks, most recently used first, at most limit:
  // those in use (by block index: all as recent), then the evictable ones by
  // their last release, newest first (evicted last). For a router that sends
  // requests to where their prefix is cached (server/prefix_blocks.cpp).
  std::vector<uint64_t> cached_hashes(size_t limit) const;
  // Changes whenever cached_hashes() may: a block registered, evicted, or
  // entering or leaving the evictable order. Lets a reader skip unchanged lists.
  uint64_t cache_version() const { return cache_version_; }

 private:
  int evict_oldest();
  bool is_free(int block) const { return block >= 0 && block < n_blocks() && free_pos_[block] >= 0; }
  int take_free(int block);     // removes a free block from free_, refcount 1
  std::optional<int> find_run();  // a free block followed by kRunBlocks - 1 free ones

  std::vector<int> ref_counts_;
  // Free blocks not registered (never, or evicted); a stack: most recently
  // freed first (warm in cache).
  std::vector<int> free_;
  std::vector<int> free_pos_;  // each block's index in free_, -1 when not there
  int run_cursor_ = 0;         // where find_run looks first
  std::vector<std::optional<uint64_t>> hash_of_block_;
  std::unordered_map<uint64_t, int> block_of_hash_;
  // Evictable blocks as (release tick, block): ordered by release, and
  // copyable, which iterators into a list would not be.
  std::set<std::pair<uint64_t, int>> evictable_;
  std::vector<uint64_t> released_at_;  // tick of each block's last release to refcount 0
  uint64_t release_tick_ = 0;
  int64_t n_evictions_ = 0;
  uint64_t cache_version_ = 0;
};

}  // namespace skiff
