#include "kv/kv_cache.h"

#include "base/error.h"

namespace skiff {

KvCache::KvCache(int n_layers, int kv_dim, int n_slots, int max_ctx)
    : n_layers_(n_layers), kv_dim_(kv_dim), n_slots_(n_slots), max_ctx_(max_ctx),
      lengths_(n_slots, 0) {
  if (n_layers <= 0 || kv_dim <= 0 || n_slots <= 0 || max_ctx <= 0)
    fail("KV cache: invalid shape ({} layers, kv dim {}, {} slots, context {})", n_layers, kv_dim,
         n_slots, max_ctx);
  const size_t n = static_cast<size_t>(n_layers) * n_slots * max_ctx * kv_dim;
  keys_.resize(n);
  values_.resize(n);
}

size_t KvCache::bytes_per_token() const {
  return 2 * static_cast<size_t>(n_layers_) * kv_dim_ * sizeof(float);
}

}  // namespace skiff
