// The paged KV cache (PagedAttention): keys and values live in fixed-size
// blocks from one pool; each sequence reaches its blocks through a block
// table. Blocks are allocated as a sequence grows, freed when it ends, and
// reference-counted so sequences can share a prefix (fork). Around each
// forward pass the sequence's owner calls reserve(seq, end), which allocates
// and copies any shared block the pass will write (copy-on-write), and after
// it set_length(seq, end); the pass only writes [length, end).
//
// With prefix caching on, full blocks are also registered under the hash of
// their token prefix (kv/prefix_hash.h) and outlive their sequences until the
// pool needs the space, so a new sequence whose prompt starts with cached
// blocks attaches them instead of computing them again. The caller's protocol:
//   attach_cached_prefix(seq, prompt, prompt.size() - 1) on the empty sequence,
//   run the model from the returned position, then after each forward pass
//   cache_full_blocks(seq, tokens so far).
// A registered block is never written: cached contents never change under a hash.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/huge_page_buffer.h"
#include "kernels/attention/attention.h"
#include "kv/block_pool.h"

namespace skiff {

enum class KvType { kF32, kF16, kQ8_0 };
const char* kv_type_name(KvType type);  // "f32", "f16", "q8_0"
KvElement kv_element(KvType type);       // what the attention kernels call it
std::optional<KvType> kv_type_from_name(std::string_view name);  // case-insensitive

enum class PrefixCaching { kOff, kOn };

struct KvShape {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
};

// Storage layout: one array per (layer, K or V, KV head), each holding every
// block in pool order: a value block as [block_size][head_dim] elements of the
// KvType (for kQ8_0, int8 groups with fp16 scales), a key block the same
// bytes transposed to dimension-major, as kernels/attention/kv_row.h defines them.
// So one head's block is contiguous, and so are consecutive
// blocks — which a sequence allocated from a fresh pool mostly has — so decode
// attention streams them. The whole pool sits on transparent huge pages.
class PagedKvCache {
 public:
  // n_blocks blocks of block_size tokens each; max_seq_len caps one sequence.
  PagedKvCache(KvShape shape, KvType type, int block_size, int n_blocks, int max_seq_len,
               PrefixCaching prefix_caching = PrefixCaching::kOff);
  // As many blocks as fit in mem_bytes.
  static PagedKvCache with_memory(KvShape shape, KvType type, int block_size, size_t mem_bytes,
                                  int max_seq_len,
                                  PrefixCaching prefix_caching = PrefixCaching::kOff);

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
  // Throws Error unless positions [begin, end) of seq are reserved and in
  // blocks it alone holds: what a forward pass may write. The model checks
  // this; whoever owns the sequence reserves.
  void check_writable(int seq, int begin, int end) const;
  void truncate(int seq, int n);    // drops positions >= n, releasing whole blocks

  // Prefix caching (both do nothing but check arguments when it is off).
  // On an empty sequence (no positions, no blocks): attaches the longest run
  // of cached blocks that matches the start of tokens, in whole blocks covering
  // at most max_tokens tokens (pass the prompt length - 1 so the last prompt
  // token is computed and gives logits). Sets the length to the tokens covered
  // and returns it, 0 on a miss. Allocates nothing.
  int attach_cached_prefix(int seq, std::span<const int32_t> tokens, int max_tokens);
  // tokens: the sequence's tokens from position 0, at least length(seq) of
  // them. Registers each full block within the length that is not registered
  // yet; a block whose hash another block already holds stays unregistered.
  void cache_full_blocks(int seq, std::span<const int32_t> tokens);
  bool prefix_caching() const { return prefix_caching_; }

  // Stores K and V ([n_kv_heads * head_dim] floats each) of one position
  // (within the reserved range), converting to the cache's element type.
  void write(int layer, int seq, int pos, const float* k, const float* v);

  // Backs the whole pool with memory now rather than on first write.
  void prefault() { storage_.prefault(); }

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
  const BlockPool& pool() const { return pool_; }  // pool().stats() for metrics
  size_t row_bytes() const;         // one head's K (or V) for one position
  size_t bytes_per_token() const { return bytes_per_token(shape_, type_); }
  // 2 × layers × KV heads × one row's bytes, for any cache of this shape and type.
  static size_t bytes_per_token(KvShape shape, KvType type);
  size_t bytes() const;             // the whole pool
  int capacity_tokens() const { return pool_.n_blocks() * block_size_; }

 private:
  struct Sequence {
    bool live = false;
    int length = 0;
    std::vector<int> blocks;
    // Prefix hashes of its first full blocks, each hashed once; kept even for
    // a block left unregistered (its hash held by another), as the next
    // block's parent.
    std::vector<uint64_t> block_hashes;
  };
  // Start of one block's rows of one (layer, K/V, head).
  uint8_t* rows_of(int block, int layer, int kv_head, bool value) const;
  // Held by another sequence or by the prefix cache: must be copied before a write.
  bool is_shared(int block) const;
  void copy_block(int from, int to);
  // The registered block with this hash, parent and tokens, if any.
  std::optional<int> find_cached_block(uint64_t hash, uint64_t parent,
                                       std::span<const int32_t> tokens) const;
  void trim_hash_chain(Sequence& s) const;  // to the blocks full within s.length
  void release_blocks(Sequence& s, size_t n_kept);  // releases all but the first n_kept
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
  bool prefix_caching_;
  // What each registered block holds, compared on lookup so that a 64-bit
  // collision of block hashes cannot attach wrong contents. The remaining risk
  // is a 64-bit collision of the parent hashes of two different prefixes that
  // end in the same block of tokens. Sized only with prefix caching on.
  std::vector<int32_t> cached_tokens_;   // [block][block_size]
  std::vector<uint64_t> cached_parents_;  // [block]
};

}  // namespace skiff
