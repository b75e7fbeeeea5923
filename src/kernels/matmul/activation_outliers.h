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

#include "kernels/matmul/routed_product.h"

namespace skiff {

// A value over kOutlierRatio times its token's RMS is an outlier.
constexpr float kOutlierRatio = 16.0f;

struct ActivationOutliers {
  struct Value {
    int token;
    int64_t col;
    float value;
  };
  const float* rest = nullptr;  // x with the outliers zeroed [n_tokens, cols], until the next split into its buffer
  std::vector<Value> values;  // by token, then column
};

// False when no token has an outlier (the common case: x is used as it is).
// rest is written into this thread's buffer number `buffer` (one per input of
// a region: routed_product.h), reused across calls.
bool split_outliers(const float* x, int n_tokens, int64_t cols, ActivationOutliers& out, size_t buffer = 0);

// One term of a product's outlier correction: y[token][r] += value · column[r].
struct OutlierTerm {
  int token;
  float value;
  const float* column;  // W[:, j] of the outlier's column j, rows floats
};

// A column the terms read that the matrix's cache does not keep: the threads
// write its rows into `column` as they compute those rows of the product
// (fill_columns), while the weights are still in cache, before adding the terms.
struct ColumnFill {
  int64_t col;
  float* column;  // rows floats
};

// One product's outlier correction.
struct ProductOutliers {
  std::vector<OutlierTerm> terms;   // by token, then column
  std::vector<ColumnFill> fills;    // ascending columns
  std::unique_ptr<float[]> filled;  // the fills' columns, rows floats each (left unset: the threads write them)
};

// Each product's terms for the outliers (t, j, v) of its rows of x,
// numbered by its own rows, by row then column, so a row's outputs do not
// depend on the others'. Columns come from the matrix's ColumnCache, or are
// filled per row range by the threads (fill_columns).
std::vector<ProductOutliers> outlier_terms(std::span<const RoutedProduct> products,
                                           const ActivationOutliers& outliers);
// Keeps the products' filled columns in their caches, while they have room.
void keep_filled_columns(std::span<const RoutedProduct> products, std::span<const ProductOutliers> outliers);

// fills[k].column[r] = W[r, fills[k].col] for r in [r0, r1), bit-identical to
// matrix_row; columns ascending.
void fill_columns(const Matrix& w, std::span<const ColumnFill> fills, int64_t r0, int64_t r1);

// Adds the terms to rows [r0, r1) of y (n_tokens × rows), term by term: the
// threads add them to the rows each has just computed.
inline void add_outlier_terms(std::span<const OutlierTerm> terms, float* y, int64_t rows, int64_t r0, int64_t r1) {
  for (const OutlierTerm& term : terms) {
    float* out = y + term.token * rows;
    for (int64_t r = r0; r < r1; ++r) out[r] += term.value * term.column[r];
  }
}

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

}  // namespace skiff
