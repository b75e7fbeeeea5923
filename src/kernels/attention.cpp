#include "kernels/attention.h"

#include <cmath>

#include "kernels/ops.h"

namespace skiff {

void attend(const float* query, const float* keys, const float* values, int n_ctx, int stride,
            int head_dim, float* scores, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  for (int j = 0; j < n_ctx; ++j) scores[j] = dot(query, keys + static_cast<long>(j) * stride, head_dim) * scale;
  softmax(scores, n_ctx);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  for (int j = 0; j < n_ctx; ++j) {
    const float* v = values + static_cast<long>(j) * stride;
    for (int d = 0; d < head_dim; ++d) out[d] += scores[j] * v[d];
  }
}

}  // namespace skiff
