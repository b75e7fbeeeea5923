#include "kv/kv_cache.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

KvCache::KvCache(int n_layers, int n_kv_heads, int head_dim, int n_slots, int max_ctx)
    : n_layers_(n_layers), n_kv_heads_(n_kv_heads), head_dim_(head_dim), n_slots_(n_slots),
      max_ctx_(max_ctx), lengths_(n_slots, 0) {
  if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || n_slots <= 0 || max_ctx <= 0)
    fail("KV cache: invalid shape ({} layers, {} KV heads of {}, {} slots, context {})", n_layers,
         n_kv_heads, head_dim, n_slots, max_ctx);
  const size_t n = static_cast<size_t>(n_layers) * n_slots * max_ctx * n_kv_heads * head_dim;
  keys_.resize(n);
  values_.resize(n);
}

void KvCache::write(int layer, int slot, int pos, const float* k, const float* v) {
  for (int h = 0; h < n_kv_heads_; ++h) {
    std::copy_n(k + h * head_dim_, head_dim_, keys_.data() + offset(layer, slot, h, pos));
    std::copy_n(v + h * head_dim_, head_dim_, values_.data() + offset(layer, slot, h, pos));
  }
}

size_t KvCache::bytes_per_token() const {
  return 2 * static_cast<size_t>(n_layers_) * kv_dim() * sizeof(float);
}

}  // namespace skiff
