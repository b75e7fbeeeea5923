// The flash-attention kernel compiled for avx2.
#include "kernels/attention.h"
#include "kernels/scratch.h"

namespace skiff::avx2 {
#include "kernels/flash_attention_impl.h"

void flash_attention(const AttentionQueries& queries, const KvRun& kv, int head_dim, float scale) {
  flash::attention(queries, kv, head_dim, scale);
}

}  // namespace skiff::avx2
