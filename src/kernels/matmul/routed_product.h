// The dispatcher's general product: a matrix times chosen rows of the input.
// matmul_many() gives every product all the rows; matmul_experts() gives each
// expert the rows routed to it. Internal to src/kernels.
#pragma once
#include <cstdint>
#include <span>

#include "kernels/matmul/matrix.h"

namespace skiff {

// y[i, :] = W · x[rows[i], :] for i < n; with rows empty, every row of the
// input in order (n = the input's rows). y is [n, w->rows]. batch_invariant:
// as MatmulProduct's (matmul.h).
struct RoutedProduct {
  const Matrix* w;
  float* y;
  std::span<const int32_t> rows;
  bool batch_invariant = false;
};

// Products of one input x [n_x, cols]; every matrix has cols columns.
struct RoutedInput {
  std::span<const RoutedProduct> products;
  const float* x;
  int n_x;
};

// The products of one or more inputs in one parallel region, each
// bit-identical to a matmul() of its rows gathered: the same kernel sees the
// same quantized rows, in every ActivationPrecision and in batch-invariant
// mode. Each input is quantized once per activation format for all its
// products; a product whose rows are one run of its input reads them in
// place, the others from a gathered copy. tune_key names the call site for the
// decode prefetch tuner (prefetch_tuner.h): the same key at every call of the site.
void matmul_routed(std::span<const RoutedInput> inputs, const void* tune_key);

// The number of rows product p multiplies.
inline int routed_rows(const RoutedProduct& p, int n_x) {
  return p.rows.empty() ? n_x : static_cast<int>(p.rows.size());
}

}  // namespace skiff
