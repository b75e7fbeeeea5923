// Portable kernels for every weight type: dequantize a row to floats, then dot
// it with every token. The reference the SIMD kernels are tested against.
#include <vector>

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/ops/ops.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

void scalar_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0,
                   int64_t r1) {
  const int cols = static_cast<int>(w.cols);
  const bool direct = w.type == DType::F32 && w.layout == MatrixLayout::kRows;
  std::vector<float> row_buf(direct ? 0 : cols);
  for (int64_t r = r0; r < r1; ++r) {
    const float* row = direct ? reinterpret_cast<const float*>(w.row(r)) : row_buf.data();
    if (!direct) matrix_row(w, r, row_buf.data());
    for (int t = 0; t < x.n_tokens; ++t) y[t * ldy + r] = dot(row, x.f32 + t * x.cols, cols);
  }
}

}  // namespace

KernelEntry matmul_kernel_scalar(DType) { return {scalar_matmul, ActivationFormat::kF32, 1}; }

}  // namespace skiff
