#include "kv/paged_kv_cache.h"


#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <string>

#include "base/error.h"
#include "kernels/fp16.h"
#include "kernels/kv_row.h"

namespace skiff {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

size_t kv_row_bytes(KvType type, int head_dim) {
  switch (type) {
    case KvType::kF32: return static_cast<size_t>(head_dim) * sizeof(float);
    case KvType::kF16: return static_cast<size_t>(head_dim) * sizeof(uint16_t);
    case KvType::kQ8_0: return kv_q8_row_bytes(head_dim);
  }
  fail("KV cache: unknown element type {}", static_cast<int>(type));
}

// Validates what the block layout depends on and returns one block's size.
size_t checked_block_bytes(KvShape shape, KvType type, int block_size) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0 || shape.head_dim <= 0)
    fail("KV cache: invalid shape ({} layers, {} KV heads, head dim {})", shape.n_layers,
         shape.n_kv_heads, shape.head_dim);
  if (block_size <= 0) fail("KV cache: block size must be positive, not {}", block_size);
  return 2 * static_cast<size_t>(shape.n_layers) * shape.n_kv_heads * block_size *
         kv_row_bytes(type, shape.head_dim);
}

void store_row(KvType type, const float* src, int n, uint8_t* dst) {
  switch (type) {
    case KvType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case KvType::kF16:
      for (int i = 0; i < n; ++i) {
        const uint16_t half = f32_to_fp16(src[i]);
        std::memcpy(dst + i * sizeof(uint16_t), &half, sizeof(uint16_t));
      }
      return;
    case KvType::kQ8_0:
      quantize_kv_q8_row(src, n, dst);
      return;
  }
}

// Blocks [first, last) of a table that other sequences also hold.
int count_shared(const BlockPool& pool, const std::vector<int>& blocks, int first, int last) {
  int n_shared = 0;
  for (int i = first; i < last; ++i) n_shared += pool.ref_count(blocks[i]) > 1;
  return n_shared;
}

void check_head(const PagedKvCache& cache, int block, int layer, int kv_head) {
  const int n_blocks = cache.pool().n_blocks();
  const KvShape shape = cache.shape();
  if (block < 0 || block >= n_blocks || layer < 0 || layer >= shape.n_layers || kv_head < 0 ||
      kv_head >= shape.n_kv_heads)
    fail("KV cache: no block {}, layer {}, KV head {} (pool of {} blocks, {} layers, {} KV heads)",
         block, layer, kv_head, n_blocks, shape.n_layers, shape.n_kv_heads);
}

}  // namespace

const char* kv_type_name(KvType type) {
  switch (type) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kQ8_0: return "q8_0";
  }
  return "unknown";
}

std::optional<KvType> kv_type_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8_0})
    if (lower == kv_type_name(type)) return type;
  return std::nullopt;
}

PagedKvCache::PagedKvCache(KvShape shape, KvType type, int block_size, int n_blocks,
                           int max_seq_len)
    : shape_(shape),
      type_(type),
      block_size_(block_size),
      max_seq_len_(max_seq_len),
      block_stride_(checked_block_bytes(shape, type, block_size) / (2 * shape.n_layers * shape.n_kv_heads)),
      pool_(std::max(n_blocks, 0)) {  // clamped so the message below is the one raised
  if (n_blocks <= 0) fail("KV cache: needs at least one block, not {}", n_blocks);
  if (max_seq_len <= 0) fail("KV cache: max sequence length must be positive, not {}", max_seq_len);
  storage_ = HugePageBuffer(static_cast<size_t>(n_blocks) * block_stride_ * 2 * shape.n_layers *
                            shape.n_kv_heads);
}

PagedKvCache PagedKvCache::with_memory(KvShape shape, KvType type, int block_size,
                                       size_t mem_bytes, int max_seq_len) {
  const size_t block_bytes = checked_block_bytes(shape, type, block_size);
  const size_t n_blocks = mem_bytes / block_bytes;
  if (n_blocks == 0)
    fail("KV cache: {} bytes hold no block of {} tokens ({} bytes with {} {} layers)", mem_bytes,
         block_size, block_bytes, shape.n_layers, kv_type_name(type));
  return PagedKvCache(shape, type, block_size, static_cast<int>(std::min<size_t>(n_blocks, INT_MAX)),
                      max_seq_len);
}

int PagedKvCache::create_sequence() {
  const auto unused = std::find_if(sequences_.begin(), sequences_.end(),
                                   [](const Sequence& s) { return !s.live; });
  const int seq = static_cast<int>(unused - sequences_.begin());
  if (unused == sequences_.end()) sequences_.emplace_back();
  sequences_[seq].live = true;
  return seq;
}

int PagedKvCache::fork_sequence(int parent) {
  // Copied before create_sequence, which may reallocate sequences_.
  Sequence shared = sequence(parent);
  for (int block : shared.blocks) pool_.retain(block);
  const int child = create_sequence();
  sequences_[child] = std::move(shared);
  return child;
}

void PagedKvCache::free_sequence(int seq) {
  Sequence& s = sequence(seq);
  for (int block : s.blocks) pool_.release(block);
  s = Sequence{};
}

bool PagedKvCache::has_sequence(int seq) const {
  return seq >= 0 && seq < static_cast<int>(sequences_.size()) && sequences_[seq].live;
}

int PagedKvCache::length(int seq) const { return sequence(seq).length; }

bool PagedKvCache::reserve(int seq, int n) {
  Sequence& s = sequence(seq);
  if (n < 0 || n > max_seq_len_)
    fail("KV cache: cannot reserve {} positions for sequence {} (max sequence length {})", n, seq,
         max_seq_len_);
  const int n_held = static_cast<int>(s.blocks.size());
  const int n_needed = ceil_div(n, block_size_);
  // Positions [length, n) will be written: every held block among them that
  // another sequence shares must become private first.
  const int first_written = s.length / block_size_;
  const int last_held_written = n > s.length ? std::min(n_held, n_needed) : first_written;
  const int n_copies = count_shared(pool_, s.blocks, first_written, last_held_written);
  const int n_new = std::max(0, n_needed - n_held);
  if (n_copies + n_new > pool_.n_free()) return false;

  for (int i = first_written; i < last_held_written; ++i) {
    const int shared = s.blocks[i];
    if (pool_.ref_count(shared) == 1) continue;
    const int copy = *pool_.allocate();
    for (int layer = 0; layer < shape_.n_layers; ++layer)
      for (int head = 0; head < shape_.n_kv_heads; ++head)
        for (bool value : {false, true})
          std::memcpy(rows_of(copy, layer, head, value), rows_of(shared, layer, head, value), block_stride_);
    pool_.release(shared);
    s.blocks[i] = copy;
  }
  for (int i = 0; i < n_new; ++i) s.blocks.push_back(*pool_.allocate());
  return true;
}

void PagedKvCache::set_length(int seq, int n) {
  Sequence& s = sequence(seq);
  const int n_reserved = static_cast<int>(s.blocks.size()) * block_size_;
  if (n < 0 || n > n_reserved)
    fail("KV cache: length {} for sequence {} is outside its reserved positions [0, {}]", n, seq,
         n_reserved);
  s.length = n;
}

void PagedKvCache::truncate(int seq, int n) {
  Sequence& s = sequence(seq);
  if (n < 0 || n > s.length)
    fail("KV cache: cannot truncate sequence {} of length {} to {}", seq, s.length, n);
  const size_t n_kept = ceil_div(n, block_size_);  // never more than held: n <= length
  for (size_t i = n_kept; i < s.blocks.size(); ++i) pool_.release(s.blocks[i]);
  s.blocks.resize(n_kept);
  s.length = n;
}

void PagedKvCache::write(int layer, int seq, int pos, const float* k, const float* v) {
  const Sequence& s = sequence(seq);
  if (layer < 0 || layer >= shape_.n_layers)
    fail("KV cache: write to layer {} of {}", layer, shape_.n_layers);
  const int n_reserved = static_cast<int>(s.blocks.size()) * block_size_;
  if (pos < 0 || pos >= n_reserved)
    fail("KV cache: write of position {} of sequence {}, outside its reserved positions [0, {})",
         pos, seq, n_reserved);
  const int block = s.blocks[pos / block_size_];
  if (pool_.ref_count(block) > 1)
    fail("KV cache: write of position {} of sequence {} into block {}, which other sequences "
         "share (reserve first: it copies the block)",
         pos, seq, block);

  const size_t row_offset = static_cast<size_t>(pos % block_size_) * row_bytes();
  const int head_dim = shape_.head_dim;
  for (int head = 0; head < shape_.n_kv_heads; ++head) {
    store_row(type_, k + head * head_dim, head_dim, rows_of(block, layer, head, false) + row_offset);
    store_row(type_, v + head * head_dim, head_dim, rows_of(block, layer, head, true) + row_offset);
  }
}

const std::vector<int>& PagedKvCache::block_table(int seq) const { return sequence(seq).blocks; }

const uint8_t* PagedKvCache::key_block(int block, int layer, int kv_head) const {
  check_head(*this, block, layer, kv_head);
  return rows_of(block, layer, kv_head, false);
}

const uint8_t* PagedKvCache::value_block(int block, int layer, int kv_head) const {
  check_head(*this, block, layer, kv_head);
  return rows_of(block, layer, kv_head, true);
}

size_t PagedKvCache::row_bytes() const { return kv_row_bytes(type_, shape_.head_dim); }

size_t PagedKvCache::bytes_per_token() const {
  return 2 * static_cast<size_t>(shape_.n_layers) * shape_.n_kv_heads * row_bytes();
}

size_t PagedKvCache::bytes() const { return storage_.size(); }

uint8_t* PagedKvCache::rows_of(int block, int layer, int kv_head, bool value) const {
  const size_t array = (static_cast<size_t>(layer) * 2 + value) * shape_.n_kv_heads + kv_head;
  return storage_.data() + (array * pool_.n_blocks() + block) * block_stride_;
}

PagedKvCache::Sequence& PagedKvCache::sequence(int seq) {
  if (!has_sequence(seq)) fail("KV cache: no sequence {}", seq);
  return sequences_[seq];
}

const PagedKvCache::Sequence& PagedKvCache::sequence(int seq) const {
  if (!has_sequence(seq)) fail("KV cache: no sequence {}", seq);
  return sequences_[seq];
}

}  // namespace skiff
