// The parallel region that runs a set of products (routed_product.h) once the
// dispatcher (matmul.cpp) has chosen the activations' precision. Internal to
// src/kernels.
#pragma once
#include <span>

#include "kernels/matmul/activation_outliers.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/routed_product.h"

namespace skiff {

// Runs the products of input x [n_x, cols] in one parallel region: x quantized
// once per activation format the kernels read, each product's rows gathered
// where they are not one run of x, quads packed for the kernels that read
// them, then the row units of all products split across the threads. In
// batch-invariant mode the kernels on rows see kInvariantTokens tokens at a
// time. outliers: each product's correction (empty: none), indexed as the
// products, its terms numbered by the product's own rows.
void run_products(std::span<const RoutedProduct> products, const float* x, int n_x,
                  std::span<const ProductOutliers> outliers = {}, PrefetchLevel prefetch = PrefetchLevel::kL1);

}  // namespace skiff
