// kInt8 activations' outliers (matmul.h): values many times their token's
// RMS, taken out of the integer products and added back exactly, as
// value · weight column, from columns dequantized once and kept.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "kernels/matmul.h"

namespace skiff {

// A value over kOutlierRatio times its token's RMS is an outlier.
constexpr float kOutlierRatio = 16.0f;

struct ActivationOutliers {
  struct Value {
    int token;
    int64_t col;
    float value;
  };
  const float* rest = nullptr;  // x with the outliers zeroed [n_tokens, cols], until the next split on this thread
  std::vector<Value> values;  // by token, then column
};

// False when no token has an outlier (the common case: x is used as it is).
bool split_outliers(const float* x, int n_tokens, int64_t cols, ActivationOutliers& out);

// y[t] += v · W[:, j] for each outlier (t, j, v), in column order per token,
// so a token's outputs do not depend on the others'.
void add_outlier_products(std::span<const MatmulProduct> products, const ActivationOutliers& outliers);

// Columns of one weight matrix (Matrix::column_cache), dequantized: the few
// input channels where a model's massive activations recur (~2-4 a token in
// Qwen2's ffn_down inputs), so each is dequantized once, not per call.
class ColumnCache {
 public:
  static constexpr size_t kMaxColumns = 32;  // later columns are dequantized per call
  const float* find(int64_t col);
  // Keeps a copy of the column (rows floats) unless full.
  void keep(int64_t col, const float* column, int64_t rows);

 private:
  std::mutex mutex_;
  std::map<int64_t, std::unique_ptr<float[]>> columns_;
};

// out[k · w.rows + r] = W[r, cols[k]], bit-identical to matrix_row; cols ascending.
void matrix_columns(const Matrix& w, std::span<const int64_t> cols, float* out);

}  // namespace skiff
