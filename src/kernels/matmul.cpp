#include "kernels/matmul.h"

#include <vector>

#include "kernels/ops.h"
#include "kernels/quant.h"

namespace skiff {

const uint8_t* Matrix::row(int64_t r) const {
  return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * row_bytes(type, cols);
}

void matrix_row(const Matrix& w, int64_t r, float* out) {
  dequantize_row(w.type, w.row(r), out, w.cols);
}

void matmul(const Matrix& w, const float* x, int n_tokens, float* y) {
  const int cols = static_cast<int>(w.cols);
  // Threads only pay off once a product has real work; tiny models run serially.
  const bool parallel = w.rows * w.cols * n_tokens >= (int64_t{1} << 16);
#pragma omp parallel if (parallel)
  {
    std::vector<float> row_buf(w.type == DType::F32 ? 0 : cols);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < w.rows; ++r) {
      const float* row = reinterpret_cast<const float*>(w.row(r));
      if (w.type != DType::F32) {
        dequantize_row(w.type, w.row(r), row_buf.data(), cols);
        row = row_buf.data();
      }
      for (int t = 0; t < n_tokens; ++t)
        y[static_cast<int64_t>(t) * w.rows + r] = dot(row, x + static_cast<int64_t>(t) * cols, cols);
    }
  }
}

}  // namespace skiff
