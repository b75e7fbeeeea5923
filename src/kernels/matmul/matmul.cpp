// The matmul dispatcher: picks the kernel for each weight layout and type and
// the active ISA, and the activations' precision (outliers, refined rows)
// before product_region.cpp runs the products.
#include "kernels/matmul/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "kernels/matmul/activation_outliers.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/prefetch_tuner.h"
#include "kernels/matmul/product_profile.h"
#include "kernels/matmul/product_region.h"
#include "kernels/matmul/routed_product.h"
#include "kernels/quant/quant.h"

namespace skiff {

KernelEntry table_kernel(KernelTable table, DType type, MatrixLayout layout) {
  for (int i = 0; i < table.n_types; ++i) {
    const TypeKernels& k = table.types[i];
    if (k.type != type) continue;
    KernelEntry (*family)(DType) = layout == MatrixLayout::kPanels ? k.panels : k.rows;
    return family ? family(type) : KernelEntry{};
  }
  return {};
}

namespace {

// The table of an ISA with kernels of its own; none for the scalar one.
KernelEntry isa_kernel(Isa isa, DType type, MatrixLayout layout) {
  switch (isa) {
    case Isa::kAvx512: return table_kernel(matmul_table_avx512(), type, layout);
    case Isa::kAvx2: return table_kernel(matmul_table_avx2(), type, layout);
    default: return {};
  }
}

}  // namespace

// Panels are laid out for the ISA that repacked them: its kernel, else the
// scalar one (which reads any layout through matrix_row). Rows fall back to
// the next narrower ISA.
KernelEntry find_kernel(Isa isa, const Matrix& w) {
  if (w.layout != MatrixLayout::kPanels) return find_kernel(isa, w.type);
  const KernelEntry k = isa_kernel(isa, w.type, MatrixLayout::kPanels);
  return k.fn ? k : matmul_kernel_scalar(w.type);
}

bool panel_kernel_for(Isa isa, DType type) { return isa_kernel(isa, type, MatrixLayout::kPanels).fn != nullptr; }

KernelEntry find_kernel(Isa isa, DType type) {
  for (Isa i : {Isa::kAvx512, Isa::kAvx2}) {
    if (isa < i) continue;
    if (const KernelEntry k = isa_kernel(i, type, MatrixLayout::kRows); k.fn) return k;
  }
  return matmul_kernel_scalar(type);
}

namespace {

ActivationFormat format_of(const RoutedProduct& p) { return find_kernel(active_isa(), *p.w).activations; }

bool reads_int8(std::span<const RoutedProduct> products) {
  return std::any_of(products.begin(), products.end(),
                     [](const RoutedProduct& p) { return format_of(p) != ActivationFormat::kF32; });
}

ActivationPrecision precision_from_env() {
  const char* name = std::getenv("SKIFF_ACTIVATIONS");
  if (!name || std::string_view(name) == "int8") return ActivationPrecision::kInt8;
  if (std::string_view(name) == "plain") return ActivationPrecision::kPlainInt8;
  if (std::string_view(name) == "refined") return ActivationPrecision::kRefined;
  fail("SKIFF_ACTIVATIONS={} is not one of plain, int8, refined", name);
}

std::atomic<bool>& batch_invariant_setting() {
  static std::atomic<bool> on{false};
  return on;
}

std::atomic<ActivationPrecision>& precision_setting() {
  static std::atomic<ActivationPrecision> precision{precision_from_env()};
  return precision;
}

}  // namespace

ActivationPrecision activation_precision() { return precision_setting().load(); }
bool batch_invariant() { return batch_invariant_setting().load(); }
void set_batch_invariant(bool on) { batch_invariant_setting().store(on); }
void set_activation_precision(ActivationPrecision precision) { precision_setting().store(precision); }

namespace {

// kRefined: per activation format, each product's rows and their residuals
// x - Q(x) in one pass over each matrix: the input is [x; residuals], a
// product's rows its own and then theirs, and each residual row's products are
// added to its row's.
void run_refined(std::span<const RoutedProduct> products, const float* x, int n_x) {
  const int64_t cols = products[0].w->cols;
  for (ActivationFormat format : {ActivationFormat::kF32, ActivationFormat::kQ8_0, ActivationFormat::kQ8_K}) {
    std::vector<RoutedProduct> group;
    for (const RoutedProduct& p : products)
      if (format_of(p) == format) group.push_back(p);
    if (group.empty()) continue;
    if (format == ActivationFormat::kF32) {
      run_products(group, x, n_x);
      continue;
    }
    std::vector<float> rows(static_cast<size_t>(2) * n_x * cols);
    std::copy(x, x + n_x * cols, rows.begin());
    for (int t = 0; t < n_x; ++t) activation_residual(format, x + t * cols, rows.data() + (n_x + t) * cols, cols);
    std::vector<std::vector<float>> outputs(group.size());
    std::vector<std::vector<int32_t>> both_rows(group.size());
    std::vector<RoutedProduct> extended;
    for (size_t p = 0; p < group.size(); ++p) {
      for (int32_t r : group[p].rows) both_rows[p].push_back(r);
      for (int32_t r : group[p].rows) both_rows[p].push_back(n_x + r);
      outputs[p].resize(static_cast<size_t>(2) * routed_rows(group[p], n_x) * group[p].w->rows);
      extended.push_back({group[p].w, outputs[p].data(), both_rows[p]});
    }
    run_products(extended, rows.data(), 2 * n_x);
    for (size_t p = 0; p < group.size(); ++p) {
      const size_t n = static_cast<size_t>(routed_rows(group[p], n_x)) * group[p].w->rows;
      const float* out = outputs[p].data();
      for (size_t i = 0; i < n; ++i) group[p].y[i] = out[i] + out[n + i];
    }
  }
}

void multiply(std::span<const RoutedProduct> products, const float* x, int n_x, PrefetchLevel prefetch) {
  if (!reads_int8(products)) return run_products(products, x, n_x, {}, prefetch);
  const ActivationPrecision precision = activation_precision();
  if (precision == ActivationPrecision::kRefined) return run_refined(products, x, n_x);
  // Integer kernels quantize each token's activations with one scale per
  // block of 32 or 256 values. A value many times its row's RMS (the
  // "massive activations" of Qwen2 and Gemma at attention-sink tokens, up to
  // ~30x) then leaves the other values of its block a few levels each, and
  // the token's output is off by whole logits. So such values are taken out
  // of x and their products added exactly: W·x = W·(x - o) + Σ o_j W[:, j].
  ActivationOutliers outliers;
  if (precision == ActivationPrecision::kPlainInt8 || !split_outliers(x, n_x, products[0].w->cols, outliers))
    return run_products(products, x, n_x, {}, prefetch);
  // Float kernels see x as it is (as in a call of theirs alone).
  std::vector<RoutedProduct> floats, ints;
  for (const RoutedProduct& p : products) (format_of(p) == ActivationFormat::kF32 ? floats : ints).push_back(p);
  if (!floats.empty()) run_products(floats, x, n_x, {}, prefetch);
  const std::vector<ProductOutliers> terms = outlier_terms(ints, outliers);
  run_products(ints, outliers.rest, n_x, terms, prefetch);
  keep_filled_columns(ints, terms);
}

// Whether a decode product's kernel reads Activations::prefetch (its KernelEntry says so).
bool tunes_prefetch(std::span<const RoutedProduct> products, int n_x) {
  return std::any_of(products.begin(), products.end(), [&](const RoutedProduct& p) {
    return routed_rows(p, n_x) == 1 && find_kernel(active_isa(), *p.w).reads_prefetch;
  });
}

}  // namespace

void matmul_routed(std::span<const RoutedProduct> products, const float* x, int n_x, const void* tune_key) {
  if (products.empty() || n_x == 0) return;  // e.g. the output head of a step of prompt chunks only
  const bool tune = tunes_prefetch(products, n_x);
  if (!tune && !product_profiling()) return multiply(products, x, n_x, PrefetchLevel::kL1);
  thread_local PrefetchTuner tuner;  // the calling thread's: no locks, each model step runs on one thread
  const PrefetchLevel prefetch = tune ? tuner.choose(tune_key) : PrefetchLevel::kL1;
  const Timer timer;
  multiply(products, x, n_x, prefetch);
  const double seconds = timer.seconds();
  if (tune) tuner.record(tune_key, prefetch, seconds);
  if (product_profiling()) record_product_call(products, n_x, seconds);
}

void matmul_many(std::span<const MatmulProduct> products, const float* x, int n_tokens) {
  std::vector<RoutedProduct> routed;
  routed.reserve(products.size());
  for (const MatmulProduct& p : products) routed.push_back({p.w, p.y, {}});
  matmul_routed(routed, x, n_tokens, products.empty() ? nullptr : products[0].w);
}

void matmul(const Matrix& w, const float* x, int n_tokens, float* y) {
  const MatmulProduct product{&w, y};
  matmul_many({&product, 1}, x, n_tokens);
}

}  // namespace skiff
