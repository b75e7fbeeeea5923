// A weight matrix as the kernels see it: its type, shape, bytes and layout.
// Its own header so that code which only passes matrices around (the model's
// weights, repacking, the outlier column cache) does not include the
// dispatcher (matmul.h).
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace skiff {

class ColumnCache;  // kernels/matmul/activation_outliers.h

// How a matrix's bytes are arranged.
enum class MatrixLayout {
  kRows,    // row-major, each row row_bytes(type, cols) bytes, as GGUF stores it
  kPanels,  // repacked in panels of 16 rows for the AVX-512 and AVX2 kernels (kernels/matmul/repack.h)
};

// A weight matrix of `rows` output features × `cols` input features
// (GGUF ne = {cols, rows}).
struct Matrix {
  DType type = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  MatrixLayout layout = MatrixLayout::kRows;
  // Where the kInt8 activations' outlier columns of these weights are kept
  // (owned by the model); null: dequantized in each call that needs them.
  ColumnCache* column_cache = nullptr;

  // Out of line: an inline function compiled into an ISA's kernel file could
  // be the copy the linker keeps for every caller (CMakeLists.txt).
  const uint8_t* row(int64_t r) const;  // kRows only
};

// Dequantizes row r of w (any layout) into out[cols].
void matrix_row(const Matrix& w, int64_t r, float* out);

}  // namespace skiff
