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
  KvCache(int n_layers, int kv_dim, int n_slots, int max_ctx);

  int n_slots() const { return n_slots_; }
  int max_ctx() const { return max_ctx_; }
  int kv_dim() const { return kv_dim_; }
  // Tokens stored for a slot (the position of its next token).
  int length(int slot) const { return lengths_[slot]; }
  void set_length(int slot, int n) { lengths_[slot] = n; }
  void clear(int slot) { lengths_[slot] = 0; }

  // K/V vectors [kv_dim] of one position; positions of a slot are contiguous.
  float* key(int layer, int slot, int pos) { return keys_.data() + offset(layer, slot, pos); }
  float* value(int layer, int slot, int pos) { return values_.data() + offset(layer, slot, pos); }

  size_t bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }
  size_t bytes_per_token() const;

 private:
  size_t offset(int layer, int slot, int pos) const {
    return ((static_cast<size_t>(layer) * n_slots_ + slot) * max_ctx_ + pos) * kv_dim_;
  }
  int n_layers_, kv_dim_, n_slots_, max_ctx_;
  std::vector<float> keys_;    // [layer][slot][pos][kv_dim]
  std::vector<float> values_;  // same layout
  std::vector<int> lengths_;   // [slot]
};

}  // namespace skiff
