// The matmul dispatcher: picks the kernel for each weight layout and type and
// the active ISA, and the activations' precision (outliers, refined rows)
// before product_region.cpp runs the products.
#include "kernels/matmul/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
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

// The groups of one parallel region (product_region.h) for a call's inputs at
// the activations' precision, the storage they point into, and what is left
// after the region: the refined rows' sums, the filled columns to keep.
class RegionGroups {
 public:
  void add(const RoutedInput& in) {
    if (!reads_int8(in.products)) return add_group(in.products, in.x, in.n_x);
    const ActivationPrecision precision = activation_precision();
    if (precision == ActivationPrecision::kRefined) return add_refined(in);
    // Integer kernels quantize each token's activations with one scale per
    // block of 32 or 256 values. A value many times its row's RMS (the
    // "massive activations" of Qwen2 and Gemma at attention-sink tokens, up to
    // ~30x) then leaves the other values of its block a few levels each, and
    // the token's output is off by whole logits. So such values are taken out
    // of x and their products added exactly: W·x = W·(x - o) + Σ o_j W[:, j].
    ActivationOutliers& outliers = outliers_.emplace_back();
    if (precision == ActivationPrecision::kPlainInt8 ||
        !split_outliers(in.x, in.n_x, in.products[0].w->cols, outliers, outliers_.size() - 1))
      return add_group(in.products, in.x, in.n_x);
    // Float kernels see x as it is (as in a call of theirs alone).
    std::vector<RoutedProduct> floats, ints;
    for (const RoutedProduct& p : in.products) (format_of(p) == ActivationFormat::kF32 ? floats : ints).push_back(p);
    add_group(keep(std::move(floats)), in.x, in.n_x);
    const std::span<const RoutedProduct> kept_ints = keep(std::move(ints));
    const std::vector<ProductOutliers>& terms = terms_.emplace_back(outlier_terms(kept_ints, outliers));
    groups_.push_back({kept_ints, outliers.rest, in.n_x, terms});
  }

  void run(PrefetchLevel prefetch) {
    run_products(groups_, prefetch);
    for (const RefinedSum& s : sums_)
      for (size_t i = 0; i < s.n; ++i) s.y[i] = s.both[i] + s.both[s.n + i];
    for (const ProductGroup& g : groups_)
      if (!g.outliers.empty()) keep_filled_columns(g.products, g.outliers);
  }

 private:
  // A refined product's outputs: its rows' and then their residuals' (n floats each), summed into y.
  struct RefinedSum {
    float* y;
    const float* both;
    size_t n;
  };

  std::span<const RoutedProduct> keep(std::vector<RoutedProduct> products) {
    return products_.emplace_back(std::move(products));
  }

  void add_group(std::span<const RoutedProduct> products, const float* x, int n_x) {
    if (!products.empty()) groups_.push_back({products, x, n_x});
  }

  // kRefined: per activation format, each product's rows and their residuals
  // x - Q(x) in one pass over each matrix: the input is [x; residuals], a
  // product's rows its own and then theirs, and each residual row's products
  // are added to its row's.
  void add_refined(const RoutedInput& in) {
    const int64_t cols = in.products[0].w->cols;
    const int n_x = in.n_x;
    for (ActivationFormat format : {ActivationFormat::kF32, ActivationFormat::kQ8_0, ActivationFormat::kQ8_K}) {
      std::vector<RoutedProduct> group;
      for (const RoutedProduct& p : in.products)
        if (format_of(p) == format) group.push_back(p);
      if (group.empty()) continue;
      if (format == ActivationFormat::kF32) {
        add_group(keep(std::move(group)), in.x, n_x);
        continue;
      }
      std::vector<float>& rows = floats_.emplace_back(static_cast<size_t>(2) * n_x * cols);
      std::copy(in.x, in.x + n_x * cols, rows.begin());
      for (int t = 0; t < n_x; ++t)
        activation_residual(format, in.x + t * cols, rows.data() + (n_x + t) * cols, cols);
      std::vector<RoutedProduct> extended;
      for (const RoutedProduct& p : group) {
        std::vector<int32_t>& both_rows = rows_.emplace_back();
        for (int32_t r : p.rows) both_rows.push_back(r);
        for (int32_t r : p.rows) both_rows.push_back(n_x + r);
        const size_t n = static_cast<size_t>(routed_rows(p, n_x)) * p.w->rows;
        std::vector<float>& outputs = floats_.emplace_back(2 * n);
        extended.push_back({p.w, outputs.data(), both_rows, p.batch_invariant});
        sums_.push_back({p.y, outputs.data(), n});
      }
      add_group(keep(std::move(extended)), rows.data(), 2 * n_x);
    }
  }

  std::vector<ProductGroup> groups_;
  // Deques: what the groups point into stays where it is as they grow.
  std::deque<std::vector<RoutedProduct>> products_;
  std::deque<ActivationOutliers> outliers_;
  std::deque<std::vector<ProductOutliers>> terms_;
  std::deque<std::vector<float>> floats_;
  std::deque<std::vector<int32_t>> rows_;
  std::vector<RefinedSum> sums_;
};

void multiply(std::span<const RoutedInput> inputs, PrefetchLevel prefetch) {
  RegionGroups groups;
  for (const RoutedInput& in : inputs)
    if (!in.products.empty() && in.n_x > 0) groups.add(in);
  groups.run(prefetch);
}

// Whether a decode product's kernel reads Activations::prefetch (its KernelEntry says so).
bool tunes_prefetch(std::span<const RoutedInput> inputs) {
  return std::any_of(inputs.begin(), inputs.end(), [](const RoutedInput& in) {
    return std::any_of(in.products.begin(), in.products.end(), [&](const RoutedProduct& p) {
      return routed_rows(p, in.n_x) == 1 && find_kernel(active_isa(), *p.w).reads_prefetch;
    });
  });
}

}  // namespace

void matmul_routed(std::span<const RoutedInput> inputs, const void* tune_key) {
  // None, e.g. the output head of a step of prompt chunks only.
  if (std::none_of(inputs.begin(), inputs.end(),
                   [](const RoutedInput& in) { return !in.products.empty() && in.n_x > 0; }))
    return;
  const bool tune = tunes_prefetch(inputs);
  if (!tune && !product_profiling()) return multiply(inputs, PrefetchLevel::kL1);
  thread_local PrefetchTuner tuner;  // the calling thread's: no locks, each model step runs on one thread
  const PrefetchLevel prefetch = tune ? tuner.choose(tune_key) : PrefetchLevel::kL1;
  const Timer timer;
  multiply(inputs, prefetch);
  const double seconds = timer.seconds();
  if (tune) tuner.record(tune_key, prefetch, seconds);
  if (product_profiling()) {
    std::vector<RoutedProduct> all;
    for (const RoutedInput& in : inputs) all.insert(all.end(), in.products.begin(), in.products.end());
    record_product_call(all, inputs[0].n_x, seconds);
  }
}

void matmul_many(std::span<const MatmulProduct> products, const float* x, int n_tokens) {
  std::vector<RoutedProduct> routed;
  routed.reserve(products.size());
  for (const MatmulProduct& p : products) routed.push_back({p.w, p.y, {}, p.batch_invariant});
  const RoutedInput input{routed, x, n_tokens};
  matmul_routed({&input, 1}, products.empty() ? nullptr : products[0].w);
}

void matmul(const Matrix& w, const float* x, int n_tokens, float* y) {
  const MatmulProduct product{&w, y};
  matmul_many({&product, 1}, x, n_tokens);
}

}  // namespace skiff
