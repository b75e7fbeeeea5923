// The KV cache: keys and values of every past token, so decode never
// recomputes them. This first version preallocates a contiguous region per
// sequence slot; a paged cache with block tables replaces it later, behind the
// same per-(layer, slot, position) accessors the model uses.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace skiff {

class KvCache {
 public:
  KvCache(int n_layers, int n_kv_heads, int head_dim, int n_slots, int max_ctx);

  int n_slots() const { return n_slots_; }
  int max_ctx() const { return max_ctx_; }
  int kv_dim() const { return n_kv_heads_ * head_dim_; }
  // Tokens stored for a slot (the position of its next token).
  int length(int slot) const { return lengths_[slot]; }
  void set_length(int slot, int n) { lengths_[slot] = n; }
  void clear(int slot) { lengths_[slot] = 0; }

  // Stores K and V ([kv_dim] floats each) of one position.
  void write(int layer, int slot, int pos, const float* k, const float* v);
  // One head's keys / values of a slot: max_ctx rows of head_dim floats.
  const float* keys(int layer, int slot, int kv_head) const { return keys_.data() + offset(layer, slot, kv_head, 0); }
  const float* values(int layer, int slot, int kv_head) const { return values_.data() + offset(layer, slot, kv_head, 0); }

  size_t bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }
  size_t bytes_per_token() const;

 private:
  size_t offset(int layer, int slot, int kv_head, int pos) const {
    return (((static_cast<size_t>(layer) * n_slots_ + slot) * n_kv_heads_ + kv_head) * max_ctx_ + pos) * head_dim_;
  }
  int n_layers_, n_kv_heads_, head_dim_, n_slots_, max_ctx_;
  std::vector<float> keys_;    // [layer][slot][kv_head][pos][head_dim]
  std::vector<float> values_;  // same layout
  std::vector<int> lengths_;   // [slot]
};

}  // namespace skiff
