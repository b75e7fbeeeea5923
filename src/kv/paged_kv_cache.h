// The paged KV cache (PagedAttention): keys and values live in fixed-size
// blocks from one pool; each sequence reaches its blocks through a block
// table. Blocks are allocated as a sequence grows, freed when it ends, and
// reference-counted so sequences can share a prefix (fork); writing into a
// shared block copies it first (copy-on-write).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/huge_page_buffer.h"
#include "kv/block_pool.h"

namespace skiff {

enum class KvType { kF32, kF16, kQ8_0 };
const char* kv_type_name(KvType type);  // "f32", "f16", "q8_0"
std::optional<KvType> kv_type_from_name(std::string_view name);  // case-insensitive

struct KvShape {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
};

// Storage layout: one array per (layer, K or V, KV head), each holding every
// block in pool order as [block][block_size][head_dim] elements of the KvType
// (for kQ8_0, int8 groups with fp16 scales as kernels/kv_row.h defines them).
// So one head's rows are contiguous within a block, and across consecutive
// blocks — which a sequence allocated from a fresh pool mostly has — so decode
// attention streams them. The whole pool sits on transparent huge pages.
class PagedKvCache {
 public:
  // n_blocks blocks of block_size tokens each; max_seq_len caps one sequence.
  PagedKvCache(KvShape shape, KvType type, int block_size, int n_blocks, int max_seq_len);
  // As many blocks as fit in mem_bytes.
  static PagedKvCache with_memory(KvShape shape, KvType type, int block_size, size_t mem_bytes,
                                  int max_seq_len);

  // Sequences. Ids are small non-negative integers, reused after free.
  int create_sequence();
  int fork_sequence(int parent);  // shares every block of parent (no copy)
  void free_sequence(int seq);    // releases its blocks
  bool has_sequence(int seq) const;

  int length(int seq) const;      // positions written
  // Makes positions [0, n) writable: allocates blocks, copies a shared block
  // that will be written. Returns false, changing nothing, if the pool cannot
  // serve it; throws Error past max_seq_len.
  bool reserve(int seq, int n);
  void set_length(int seq, int n);  // after a forward pass wrote positions [length, n)
  void truncate(int seq, int n);    // drops positions >= n, releasing whole blocks

  // Stores K and V ([n_kv_heads * head_dim] floats each) of one position
  // (within the reserved range), converting to the cache's element type.
  void write(int layer, int seq, int pos, const float* k, const float* v);

  const std::vector<int>& block_table(int seq) const;
  // Start of one head's keys / values in a block (block_size rows of head_dim).
  const uint8_t* key_block(int block, int layer, int kv_head) const;
  const uint8_t* value_block(int block, int layer, int kv_head) const;

  KvShape shape() const { return shape_; }
  KvType type() const { return type_; }
  int block_size() const { return block_size_; }
  // Bytes between block b and b+1 of one (layer, K/V, head): block_size rows.
  size_t block_stride() const { return block_stride_; }
  int max_seq_len() const { return max_seq_len_; }
  const BlockPool& pool() const { return pool_; }
  size_t row_bytes() const;         // one head's K (or V) for one position
  size_t bytes_per_token() const;   // 2 × layers × KV heads × row_bytes
  size_t bytes() const;             // the whole pool
  int capacity_tokens() const { return pool_.n_blocks() * block_size_; }

 private:
  struct Sequence {
    bool live = false;
    int length = 0;
    std::vector<int> blocks;
  };
  // Start of one block's rows of one (layer, K/V, head).
  uint8_t* rows_of(int block, int layer, int kv_head, bool value) const;
  Sequence& sequence(int seq);
  const Sequence& sequence(int seq) const;

  KvShape shape_;
  KvType type_;
  int block_size_;
  int max_seq_len_;
  size_t block_stride_;
  BlockPool pool_;
  HugePageBuffer storage_;  // [layer][K/V][head] arrays of [block][block_size][head_dim]
  std::vector<Sequence> sequences_;
};

}  // namespace skiff
