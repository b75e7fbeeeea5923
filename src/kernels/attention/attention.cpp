// Dispatch of the flash-attention kernel to the active ISA, and the exact
// merge of split-KV partial results.
#include "kernels/attention/attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/isa.h"

namespace skiff {

#define SKIFF_DECLARE_ATTENTION(isa)                                                         \
  namespace isa {                                                                            \
  void flash_attention_partial(const AttentionQueries&, const KvBlocks&, int, int, int, float, \
                               const AttentionPartial&);                                     \
  }
SKIFF_DECLARE_ATTENTION(scalar)
SKIFF_DECLARE_ATTENTION(avx2)
SKIFF_DECLARE_ATTENTION(avx512)
#undef SKIFF_DECLARE_ATTENTION

void flash_attention_partial(const AttentionQueries& queries, const KvBlocks& kv, int pos_begin,
                             int pos_end, int head_dim, float scale, const AttentionPartial& out) {
  if (queries.n_q * queries.group > kAttentionMaxRows || head_dim > kAttentionMaxHeadDim)
    fail("flash attention: {} query rows / head dim {} exceed the kernel's tile",
         queries.n_q * queries.group, head_dim);
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512::flash_attention_partial(queries, kv, pos_begin, pos_end, head_dim, scale, out);
    case Isa::kAvx2:
      return avx2::flash_attention_partial(queries, kv, pos_begin, pos_end, head_dim, scale, out);
    case Isa::kScalar:
      break;
  }
  scalar::flash_attention_partial(queries, kv, pos_begin, pos_end, head_dim, scale, out);
}

void merge_attention_partials(const AttentionQueries& queries, const AttentionPartial* parts,
                              int n, int head_dim) {
  const int rows = queries.n_q * queries.group;
  for (int r = 0; r < rows; ++r) {
    const int t = r / queries.group, h = r % queries.group;
    float max = queries.sinks ? queries.sinks[h] : -std::numeric_limits<float>::infinity();
    for (int i = 0; i < n; ++i) max = std::max(max, parts[i].max[r]);
    float* out = queries.out + t * queries.out_stride + h * head_dim;
    for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
    float sum = queries.sinks ? std::exp(queries.sinks[h] - max) : 0.0f;
    for (int i = 0; i < n; ++i) {
      if (parts[i].max[r] == -std::numeric_limits<float>::infinity()) continue;
      const float w = std::exp(parts[i].max[r] - max);
      sum += parts[i].sum[r] * w;
      for (int d = 0; d < head_dim; ++d) out[d] += parts[i].acc[r * head_dim + d] * w;
    }
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int d = 0; d < head_dim; ++d) out[d] *= inv;
  }
}

void flash_attention(const AttentionQueries& queries, const KvBlocks& kv, int head_dim, float scale) {
  const int rows = queries.n_q * queries.group;
  thread_local std::vector<float> buffer;
  buffer.resize(static_cast<size_t>(rows) * (head_dim + 2));
  const AttentionPartial part{buffer.data(), buffer.data() + rows * head_dim,
                              buffer.data() + rows * head_dim + rows};
  flash_attention_partial(queries, kv, 0, kv.n_ctx, head_dim, scale, part);
  merge_attention_partials(queries, &part, 1, head_dim);
}

}  // namespace skiff
