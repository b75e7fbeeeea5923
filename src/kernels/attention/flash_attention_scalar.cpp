// The flash-attention kernel compiled for scalar.
#include "kernels/attention/attention.h"
#include "kernels/attention/kv_row.h"
#include "kernels/scratch.h"

namespace skiff::scalar {
#include "kernels/attention/flash_attention_impl.h"

void flash_attention_partial(const AttentionQueries& queries, const KvBlocks& kv, int pos_begin,
                             int pos_end, int head_dim, float scale, const AttentionPartial& out) {
  flash::partial(queries, kv, pos_begin, pos_end, head_dim, scale, out);
}

}  // namespace skiff::scalar
