#include "kernels/matmul/matmul_experts.h"

#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/matmul/matmul.h"

namespace skiff {

void matmul_experts(std::span<const Matrix> experts, const int32_t* ids, int k, const float* x, int x_slots,
                    int n_tokens, float* y) {
  const int n_experts = static_cast<int>(experts.size());
  if (n_experts == 0) fail("matmul_experts: no experts");
  const int64_t rows = experts[0].rows, cols = experts[0].cols;
  for (const Matrix& w : experts)
    if (w.rows != rows || w.cols != cols)
      fail("matmul_experts: experts of shapes [{}, {}] and [{}, {}]", rows, cols, w.rows, w.cols);
  if (x_slots != 1 && x_slots != k) fail("matmul_experts: {} input rows a token for {} experts", x_slots, k);
  // Each expert's (token, slot) pairs, in token order.
  std::vector<std::vector<int>> routed(n_experts);
  for (int i = 0; i < n_tokens * k; ++i) {
    const int32_t e = ids[i];
    if (e < 0 || e >= n_experts) fail("matmul_experts: expert {} of {}", e, n_experts);
    routed[e].push_back(i);
  }
  std::vector<float> xs, ys;
  for (int e = 0; e < n_experts; ++e) {
    const std::vector<int>& slots = routed[e];
    if (slots.empty()) continue;
    const int n = static_cast<int>(slots.size());
    xs.resize(static_cast<size_t>(n) * cols);
    ys.resize(static_cast<size_t>(n) * rows);
    for (int j = 0; j < n; ++j) {
      const int x_row = x_slots == 1 ? slots[j] / k : slots[j];
      std::memcpy(&xs[j * cols], x + x_row * cols, cols * sizeof(float));
    }
    matmul(experts[e], xs.data(), n, ys.data());
    for (int j = 0; j < n; ++j) std::memcpy(y + slots[j] * rows, &ys[j * rows], rows * sizeof(float));
  }
}

}  // namespace skiff
