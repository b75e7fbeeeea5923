#include "kernels/attention.h"

#include "base/error.h"
#include "kernels/isa.h"

namespace skiff {

namespace scalar { void flash_attention(const AttentionQueries&, const KvRun&, int, float); }
namespace avx2 { void flash_attention(const AttentionQueries&, const KvRun&, int, float); }
namespace avx512 { void flash_attention(const AttentionQueries&, const KvRun&, int, float); }

void flash_attention(const AttentionQueries& queries, const KvRun& kv, int head_dim, float scale) {
  if (queries.n_q * queries.group > kAttentionMaxRows || head_dim > 256)
    fail("flash_attention: {} query rows / head dim {} exceed the kernel's tile", queries.n_q * queries.group, head_dim);
  switch (active_isa()) {
    case Isa::kAvx512: return avx512::flash_attention(queries, kv, head_dim, scale);
    case Isa::kAvx2: return avx2::flash_attention(queries, kv, head_dim, scale);
    case Isa::kScalar: return scalar::flash_attention(queries, kv, head_dim, scale);
  }
}

}  // namespace skiff
