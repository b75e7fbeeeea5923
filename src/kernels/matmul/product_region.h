// The parallel region that runs a set of products (routed_product.h) once the
// dispatcher (matmul.cpp) has chosen the activations' precision. Internal to
// src/kernels.
#pragma once
#include <span>

#include "kernels/matmul/activation_outliers.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/routed_product.h"

namespace skiff {

// The products of one input x [n_x, cols] in a region. outliers: each
// product's correction (empty: none), indexed as the products, its terms
// numbered by the product's own rows.
struct ProductGroup {
  std::span<const RoutedProduct> products;
  const float* x;
  int n_x;
  std::span<const ProductOutliers> outliers = {};
};

// Runs the groups' products in one parallel region: each group's x quantized
// once per activation format its kernels read, each product's rows gathered
// where they are not one run of its x, quads packed for the kernels that read
// them, then the row units of all products split across the threads. The
// kernels on rows of a batch_invariant product, or of every product in
// batch-invariant mode, see kInvariantTokens tokens at a time.
void run_products(std::span<const ProductGroup> groups, PrefetchLevel prefetch = PrefetchLevel::kL1);

}  // namespace skiff
