#include "kv/paged_kv_cache.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <string>

#include "base/error.h"
#include "kernels/attention/kv_row.h"
#include "kv/prefix_hash.h"

namespace skiff {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Validates what the block layout depends on and returns one block's size.
size_t checked_block_bytes(KvShape shape, KvType type, int block_size) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0 || shape.head_dim <= 0)
    fail("KV cache: invalid shape ({} layers, {} KV heads, head dim {})", shape.n_layers,
         shape.n_kv_heads, shape.head_dim);
  if (block_size <= 0) fail("KV cache: block size must be positive, not {}", block_size);
  return 2 * static_cast<size_t>(shape.n_layers) * shape.n_kv_heads * block_size *
         kv_row_bytes(kv_element(type), shape.head_dim);
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

KvElement kv_element(KvType type) {
  switch (type) {
    case KvType::kF32: return KvElement::kF32;
    case KvType::kF16: return KvElement::kF16;
    case KvType::kQ8_0: return KvElement::kQ8_0;
  }
  fail("KV cache: unknown element type {}", static_cast<int>(type));
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
                           int max_seq_len, PrefixCaching prefix_caching)
    : shape_(shape),
      type_(type),
      block_size_(block_size),
      max_seq_len_(max_seq_len),
      block_stride_(checked_block_bytes(shape, type, block_size) / (2 * shape.n_layers * shape.n_kv_heads)),
      pool_(std::max(n_blocks, 0)),  // clamped so the message below is the one raised
      prefix_caching_(prefix_caching == PrefixCaching::kOn) {
  if (n_blocks <= 0) fail("KV cache: needs at least one block, not {}", n_blocks);
  if (max_seq_len <= 0) fail("KV cache: max sequence length must be positive, not {}", max_seq_len);
  storage_ = HugePageBuffer(static_cast<size_t>(n_blocks) * block_stride_ * 2 * shape.n_layers *
                            shape.n_kv_heads);
  if (prefix_caching_) {
    cached_tokens_.resize(static_cast<size_t>(n_blocks) * block_size);
    cached_parents_.resize(n_blocks);
  }
}

PagedKvCache PagedKvCache::with_memory(KvShape shape, KvType type, int block_size,
                                       size_t mem_bytes, int max_seq_len,
                                       PrefixCaching prefix_caching) {
  const size_t block_bytes = checked_block_bytes(shape, type, block_size);
  const size_t n_blocks = mem_bytes / block_bytes;
  if (n_blocks == 0)
    fail("KV cache: {} bytes hold no block of {} tokens ({} bytes with {} {} layers)", mem_bytes,
         block_size, block_bytes, shape.n_layers, kv_type_name(type));
  return PagedKvCache(shape, type, block_size, static_cast<int>(std::min<size_t>(n_blocks, INT_MAX)),
                      max_seq_len, prefix_caching);
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
  release_blocks(s, 0);
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
  // another sequence or the prefix cache shares must become private first.
  const int first_written = s.length / block_size_;
  const int last_held_written = n > s.length ? std::min(n_held, n_needed) : first_written;
  int n_copies = 0;
  for (int i = first_written; i < last_held_written; ++i) n_copies += is_shared(s.blocks[i]);
  const int n_new = std::max(0, n_needed - n_held);
  if (n_copies + n_new > pool_.n_free()) return false;

  for (int i = first_written; i < last_held_written; ++i) {
    const int shared = s.blocks[i];
    if (!is_shared(shared)) continue;
    const int copy = *pool_.allocate_after(i > 0 ? s.blocks[i - 1] : -1);  // the tail stays in one run
    copy_block(shared, copy);
    pool_.release(shared);  // a cached block nobody else holds stays cached, evictable
    s.blocks[i] = copy;
  }
  for (int i = 0; i < n_new; ++i) s.blocks.push_back(*pool_.allocate_after(s.blocks.empty() ? -1 : s.blocks.back()));
  return true;
}

void PagedKvCache::set_length(int seq, int n) {
  Sequence& s = sequence(seq);
  const int n_reserved = static_cast<int>(s.blocks.size()) * block_size_;
  if (n < 0 || n > n_reserved)
    fail("KV cache: length {} for sequence {} is outside its reserved positions [0, {}]", n, seq,
         n_reserved);
  s.length = n;
  trim_hash_chain(s);
}

void PagedKvCache::check_writable(int seq, int begin, int end) const {
  const Sequence& s = sequence(seq);
  const int n_reserved = static_cast<int>(s.blocks.size()) * block_size_;
  if (begin < 0 || end > n_reserved)
    fail("KV cache: positions [{}, {}) of sequence {} are not reserved (it holds [0, {})): reserve "
         "them before the forward pass",
         begin, end, seq, n_reserved);
  for (int i = begin / block_size_; i < ceil_div(end, block_size_); ++i)
    if (is_shared(s.blocks[i]))
      fail("KV cache: positions [{}, {}) of sequence {} reach block {}, which another sequence or "
           "the prefix cache shares: reserve them before the forward pass (it copies the block)",
           begin, end, seq, s.blocks[i]);
}

void PagedKvCache::truncate(int seq, int n) {
  Sequence& s = sequence(seq);
  if (n < 0 || n > s.length)
    fail("KV cache: cannot truncate sequence {} of length {} to {}", seq, s.length, n);
  release_blocks(s, ceil_div(n, block_size_));  // never more than held: n <= length
  s.length = n;
  trim_hash_chain(s);
}

int PagedKvCache::attach_cached_prefix(int seq, std::span<const int32_t> tokens, int max_tokens) {
  Sequence& s = sequence(seq);
  if (s.length != 0 || !s.blocks.empty())
    fail("KV cache: a cached prefix attaches only to an empty sequence, but sequence {} has {} "
         "positions in {} blocks",
         seq, s.length, s.blocks.size());
  if (!prefix_caching_) return 0;
  const int64_t limit =
      std::min<int64_t>({static_cast<int64_t>(tokens.size()), max_tokens, max_seq_len_});
  uint64_t parent = kPrefixHashSeed;
  for (int64_t start = 0; start + block_size_ <= limit; start += block_size_) {
    const std::span<const int32_t> block_tokens = tokens.subspan(start, block_size_);
    const uint64_t hash = prefix_block_hash(parent, block_tokens);
    const std::optional<int> block = find_cached_block(hash, parent, block_tokens);
    if (!block) break;
    pool_.retain(*block);
    s.blocks.push_back(*block);
    s.block_hashes.push_back(hash);
    parent = hash;
  }
  s.length = static_cast<int>(s.blocks.size()) * block_size_;
  return s.length;
}

void PagedKvCache::cache_full_blocks(int seq, std::span<const int32_t> tokens) {
  Sequence& s = sequence(seq);
  if (tokens.size() < static_cast<size_t>(s.length))
    fail("KV cache: {} tokens given to cache sequence {} of length {}", tokens.size(), seq,
         s.length);
  if (!prefix_caching_) return;
  for (size_t i = s.block_hashes.size(); i < static_cast<size_t>(s.length / block_size_); ++i) {
    const uint64_t parent = i == 0 ? kPrefixHashSeed : s.block_hashes[i - 1];
    const std::span<const int32_t> block_tokens = tokens.subspan(i * block_size_, block_size_);
    const uint64_t hash = prefix_block_hash(parent, block_tokens);
    s.block_hashes.push_back(hash);
    const int block = s.blocks[i];
    // Registered already when shared with the sequence that registered it.
    if (const std::optional<uint64_t> cached = pool_.cached_hash(block)) {
      if (*cached != hash)
        fail("KV cache: tokens [{}, {}) given for sequence {} differ from those its block {} was "
             "cached with",
             i * block_size_, (i + 1) * block_size_, seq, block);
      continue;
    }
    if (!pool_.register_block(block, hash)) continue;
    std::copy(block_tokens.begin(), block_tokens.end(),
              cached_tokens_.begin() + static_cast<size_t>(block) * block_size_);
    cached_parents_[block] = parent;
  }
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
  if (is_shared(block))
    fail("KV cache: write of position {} of sequence {} into block {}, which other sequences "
         "or the prefix cache share (reserve first: it copies the block)",
         pos, seq, block);

  const int slot = pos % block_size_;
  const size_t row_offset = static_cast<size_t>(slot) * row_bytes();
  const int head_dim = shape_.head_dim;
  const KvElement element = kv_element(type_);
  for (int head = 0; head < shape_.n_kv_heads; ++head) {
    store_key(element, k + head * head_dim, head_dim, block_size_, slot, rows_of(block, layer, head, false));
    encode_kv_row(element, v + head * head_dim, head_dim, rows_of(block, layer, head, true) + row_offset);
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

size_t PagedKvCache::row_bytes() const { return kv_row_bytes(kv_element(type_), shape_.head_dim); }

size_t PagedKvCache::bytes_per_token(KvShape shape, KvType type) {
  return 2 * static_cast<size_t>(shape.n_layers) * shape.n_kv_heads * kv_row_bytes(kv_element(type), shape.head_dim);
}

size_t PagedKvCache::bytes() const { return storage_.size(); }

uint8_t* PagedKvCache::rows_of(int block, int layer, int kv_head, bool value) const {
  const size_t array = (static_cast<size_t>(layer) * 2 + value) * shape_.n_kv_heads + kv_head;
  return storage_.data() + (array * pool_.n_blocks() + block) * block_stride_;
}

bool PagedKvCache::is_shared(int block) const {
  return pool_.ref_count(block) > 1 || pool_.cached_hash(block).has_value();
}

void PagedKvCache::copy_block(int from, int to) {
  for (int layer = 0; layer < shape_.n_layers; ++layer)
    for (int head = 0; head < shape_.n_kv_heads; ++head)
      for (bool value : {false, true})
        std::memcpy(rows_of(to, layer, head, value), rows_of(from, layer, head, value),
                    block_stride_);
}

std::optional<int> PagedKvCache::find_cached_block(uint64_t hash, uint64_t parent,
                                                   std::span<const int32_t> tokens) const {
  const std::optional<int> block = pool_.find_cached(hash);
  if (!block || cached_parents_[*block] != parent) return std::nullopt;
  const auto stored = cached_tokens_.begin() + static_cast<size_t>(*block) * block_size_;
  if (!std::equal(tokens.begin(), tokens.end(), stored)) return std::nullopt;
  return block;
}

void PagedKvCache::trim_hash_chain(Sequence& s) const {
  // Blocks no longer full within the length may be rewritten: not in the chain.
  s.block_hashes.resize(std::min(s.block_hashes.size(), static_cast<size_t>(s.length / block_size_)));
}

void PagedKvCache::release_blocks(Sequence& s, size_t n_kept) {
  // Last block first: of a cached chain, the tail is then evicted before the
  // head, which keeps the rest of the prefix reachable.
  for (size_t i = s.blocks.size(); i > n_kept; --i) pool_.release(s.blocks[i - 1]);
  s.blocks.resize(n_kept);
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
