#include "kernels/matmul/matrix.h"

#include <cassert>

#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"

namespace skiff {

const uint8_t* Matrix::row(int64_t r) const {
  assert(layout == MatrixLayout::kRows);
  return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * row_bytes(type, cols);
}

void matrix_row(const Matrix& w, int64_t r, float* out) {
  if (w.layout == MatrixLayout::kPanels) return panel_row(w, r, out);
  dequantize_row(w.type, w.row(r), out, w.cols);
}

}  // namespace skiff
