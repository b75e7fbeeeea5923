// The matmul dispatcher: picks the kernel for each weight layout and type and
// the active ISA, quantizes the activations once per format the kernels read, and splits
// the output rows of all products across threads.
#include "kernels/matmul/matmul.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "kernels/matmul/activation_outliers.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/prefetch_tuner.h"
#include "kernels/matmul/product_profile.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/matmul/unit_ranges.h"
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

constexpr int kNumFormats = 3;  // the values of ActivationFormat

// Scratch for quantized activations, one per format, reused across calls on
// this thread: rows, and quads (QuadUnit, 64-byte aligned by its type).
template <class T>
T* activation_buffer(ActivationFormat format, size_t bytes) {
  thread_local std::vector<T> buffers[kNumFormats];
  std::vector<T>& buffer = buffers[static_cast<int>(format)];
  const size_t n = (bytes + sizeof(T) - 1) / sizeof(T);
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// The input quantized in one format, for all the products whose kernels read
// it: as rows, and as quads when some kernel reads those.
struct QuantizedInput {
  uint8_t* data = nullptr;
  size_t row_bytes = 0;
  QuadUnit* quads = nullptr;
};

struct QuantizedInputs {
  QuantizedInput formats[kNumFormats];
};

// Up to this many tokens, every thread quantizes all of them for itself.
constexpr int kOwnQuantizationTokens = 4;

// One product as the parallel region sees it: its kernel, its activations, and
// its place among the concatenated row units (of row_granularity rows) of all products.
struct Job {
  const Matrix* w;
  float* y;
  KernelEntry k;
  Activations act;
  int64_t first_unit, n_units;
  std::span<const OutlierTerm> outlier_terms;  // added to the rows after the kernel's products
  std::span<const ColumnFill> column_fills;    // the columns those terms read, filled per row range first
  int first_token;                             // of the outliers' token numbering, at y[0]
};

// Whether a kernel reads n_tokens tokens' activations as quads.
bool reads_quads(const KernelEntry& k, int n_tokens) {
  return k.activations != ActivationFormat::kF32 && k.quads_from_tokens > 0 && n_tokens >= k.quads_from_tokens;
}

// Points each job at the quantized input its kernel reads, in this thread's
// buffers: each activation format the kernels read is quantized once, shared by its products.
QuantizedInputs attach_input_buffers(std::vector<Job>& jobs, int n_tokens, int64_t cols) {
  QuantizedInputs quantized;
  for (Job& j : jobs) {
    if (j.k.activations == ActivationFormat::kF32) continue;
    QuantizedInput& q = quantized.formats[static_cast<int>(j.k.activations)];
    if (!q.data) {
      q.row_bytes = activation_row_bytes(j.k.activations, cols);
      q.data = activation_buffer<uint8_t>(j.k.activations, q.row_bytes * n_tokens);
    }
    if (reads_quads(j.k, n_tokens) && !q.quads)
      q.quads = activation_buffer<QuadUnit>(j.k.activations, activation_quads_bytes(cols, n_tokens));
    j.act.quant = q.data;
    j.act.quant_row_bytes = q.row_bytes;
  }
  for (Job& j : jobs)  // after the loop above: a later product may have asked for the quads
    if (j.k.activations != ActivationFormat::kF32) j.act.quads = quantized.formats[static_cast<int>(j.k.activations)].quads;
  return quantized;
}

// Quantizes tokens [t0, t1) of x into every format some job reads.
void quantize_tokens(const QuantizedInputs& quantized, const float* x, int t0, int t1, int64_t cols) {
  for (int t = t0; t < t1; ++t)
    for (int f = 0; f < kNumFormats; ++f) {
      const QuantizedInput& q = quantized.formats[f];
      if (q.data)
        quantize_activation_row(static_cast<ActivationFormat>(f), x + t * cols, q.data + q.row_bytes * t, cols);
    }
}

// Runs the rows of units [u0, u1) of the concatenation, product by product.
void run_units(const std::vector<Job>& jobs, int64_t u0, int64_t u1) {
  for (const Job& j : jobs) {
    const int64_t a = std::max(u0, j.first_unit) - j.first_unit;
    const int64_t b = std::min(u1, j.first_unit + j.n_units) - j.first_unit;
    const int64_t g = j.k.row_granularity, rows = j.w->rows;
    if (a >= b) continue;
    const int64_t r0 = std::min(rows, a * g), r1 = std::min(rows, b * g);
    j.k.fn(*j.w, j.act, j.y, rows, r0, r1);
    fill_columns(*j.w, j.column_fills, r0, r1);
    add_outlier_terms(j.outlier_terms, j.y, rows, j.first_token, j.act.n_tokens, r0, r1);
  }
}

ActivationFormat format_of(const MatmulProduct& p) { return find_kernel(active_isa(), *p.w).activations; }

bool reads_int8(std::span<const MatmulProduct> products) {
  return std::any_of(products.begin(), products.end(),
                     [](const MatmulProduct& p) { return format_of(p) != ActivationFormat::kF32; });
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

// outliers: each product's correction (empty: none), indexed as the products.
void run_products(std::span<const MatmulProduct> products, const float* x, int n_tokens,
                  std::span<const ProductOutliers> outliers = {}, PrefetchLevel prefetch = PrefetchLevel::kL1);
void run_refined(std::span<const MatmulProduct> products, const float* x, int n_tokens);
// Runs the rows [n_tokens token rows; one extra row per owner] in one pass over
// each matrix; each extra row's products are added to its owner token's.
void run_with_extra_rows(std::span<const MatmulProduct> products, const float* rows, int n_tokens,
                         std::span<const int> owners);

}  // namespace

ActivationPrecision activation_precision() { return precision_setting().load(); }
bool batch_invariant() { return batch_invariant_setting().load(); }
void set_batch_invariant(bool on) { batch_invariant_setting().store(on); }
void set_activation_precision(ActivationPrecision precision) { precision_setting().store(precision); }

namespace {

void multiply(std::span<const MatmulProduct> products, const float* x, int n_tokens, PrefetchLevel prefetch) {
  if (!reads_int8(products)) return run_products(products, x, n_tokens, {}, prefetch);
  const ActivationPrecision precision = activation_precision();
  if (precision == ActivationPrecision::kRefined) return run_refined(products, x, n_tokens);
  // Integer kernels quantize each token's activations with one scale per
  // block of 32 or 256 values. A value many times its row's RMS (the
  // "massive activations" of Qwen2 and Gemma at attention-sink tokens, up to
  // ~30x) then leaves the other values of its block a few levels each, and
  // the token's output is off by whole logits. So such values are taken out
  // of x and their products added exactly: W·x = W·(x - o) + Σ o_j W[:, j].
  ActivationOutliers outliers;
  if (precision == ActivationPrecision::kPlainInt8 || !split_outliers(x, n_tokens, products[0].w->cols, outliers))
    return run_products(products, x, n_tokens, {}, prefetch);
  const std::vector<ProductOutliers> terms = outlier_terms(products, outliers);
  run_products(products, outliers.rest, n_tokens, terms, prefetch);
  keep_filled_columns(products, terms);
}

// Whether a decode product's kernel reads Activations::prefetch (its KernelEntry says so).
bool tunes_prefetch(std::span<const MatmulProduct> products, int n_tokens) {
  return n_tokens == 1 && std::any_of(products.begin(), products.end(), [](const MatmulProduct& p) {
           return find_kernel(active_isa(), *p.w).reads_prefetch;
         });
}

}  // namespace

void matmul_many(std::span<const MatmulProduct> products, const float* x, int n_tokens) {
  if (products.empty() || n_tokens == 0) return;  // e.g. the output head of a step of prompt chunks only
  const bool tune = tunes_prefetch(products, n_tokens);
  if (!tune && !product_profiling()) return multiply(products, x, n_tokens, PrefetchLevel::kL1);
  thread_local PrefetchTuner tuner;  // the calling thread's: no locks, each model step runs on one thread
  const PrefetchLevel prefetch = tune ? tuner.choose(products[0].w) : PrefetchLevel::kL1;
  const Timer timer;
  multiply(products, x, n_tokens, prefetch);
  const double seconds = timer.seconds();
  if (tune) tuner.record(products[0].w, prefetch, seconds);
  if (product_profiling()) record_product_call(products, n_tokens, seconds);
}

namespace {

void run_with_extra_rows(std::span<const MatmulProduct> products, const float* rows, int n_tokens,
                         std::span<const int> owners) {
  const int n_rows = n_tokens + static_cast<int>(owners.size());
  std::vector<std::vector<float>> outputs(products.size());
  std::vector<MatmulProduct> extended;
  for (size_t p = 0; p < products.size(); ++p) {
    outputs[p].resize(static_cast<size_t>(n_rows) * products[p].w->rows);
    extended.push_back({products[p].w, outputs[p].data()});
  }
  run_products(extended, rows, n_rows);
  for (size_t p = 0; p < products.size(); ++p) {
    const int64_t width = products[p].w->rows;
    float* y = products[p].y;
    std::copy(outputs[p].begin(), outputs[p].begin() + n_tokens * width, y);
    for (size_t i = 0; i < owners.size(); ++i) {
      const float* extra = outputs[p].data() + (n_tokens + i) * width;
      float* owner = y + owners[i] * width;
      for (int64_t r = 0; r < width; ++r) owner[r] += extra[r];
    }
  }
}

// kRefined: per activation format, each token's row and its residual x - Q(x)
// in one pass over each matrix.
void run_refined(std::span<const MatmulProduct> products, const float* x, int n_tokens) {
  const int64_t cols = products[0].w->cols;
  std::vector<int> owners(n_tokens);
  for (int t = 0; t < n_tokens; ++t) owners[t] = t;
  for (ActivationFormat format : {ActivationFormat::kF32, ActivationFormat::kQ8_0, ActivationFormat::kQ8_K}) {
    std::vector<MatmulProduct> group;
    for (const MatmulProduct& p : products)
      if (format_of(p) == format) group.push_back(p);
    if (group.empty()) continue;
    if (format == ActivationFormat::kF32) {
      run_products(group, x, n_tokens);
      continue;
    }
    std::vector<float> rows(static_cast<size_t>(2) * n_tokens * cols);
    std::copy(x, x + n_tokens * cols, rows.begin());
    for (int t = 0; t < n_tokens; ++t)
      activation_residual(format, x + t * cols, rows.data() + (n_tokens + t) * cols, cols);
    run_with_extra_rows(group, rows.data(), n_tokens, owners);
  }
}

// Whether batch-invariant mode must cut these products' tokens into passes.
bool needs_invariant_passes(std::span<const MatmulProduct> products, int n_tokens) {
  if (!batch_invariant() || n_tokens <= kInvariantTokens || active_isa() == Isa::kScalar) return false;
  return std::any_of(products.begin(), products.end(),
                     [](const MatmulProduct& p) { return p.w->layout == MatrixLayout::kRows; });
}

void run_products_at_once(std::span<const MatmulProduct> products, const float* x, int n_tokens,
                          std::span<const ProductOutliers> outliers, int first_token,
                          PrefetchLevel prefetch = PrefetchLevel::kL1);

void run_products(std::span<const MatmulProduct> products, const float* x, int n_tokens,
                  std::span<const ProductOutliers> outliers, PrefetchLevel prefetch) {
  if (!needs_invariant_passes(products, n_tokens))
    return run_products_at_once(products, x, n_tokens, outliers, 0, prefetch);
  const int64_t cols = products[0].w->cols;
  std::vector<MatmulProduct> pass(products.begin(), products.end());
  for (int t0 = 0; t0 < n_tokens; t0 += kInvariantTokens) {
    for (size_t p = 0; p < products.size(); ++p) pass[p].y = products[p].y + t0 * products[p].w->rows;
    run_products_at_once(pass, x + t0 * cols, std::min(kInvariantTokens, n_tokens - t0), outliers, t0);
  }
}

// The fewest multiply-adds a thread claims at a time (UnitRanges), 20-35 KB of
// 4-8-bit weights in decode: what is left to a thread when the other one is
// done is at most about a microsecond's streaming (the LM head's claims of 1/64
// of a thread's share, 1.1 MB, kept the second thread waiting far longer;
// figures: docs/notes/kernel-design-figures.md), and short products go in a few
// claims.
constexpr int64_t kMinClaimWork = int64_t{1} << 15;

void run_products_at_once(std::span<const MatmulProduct> products, const float* x, int n_tokens,
                          std::span<const ProductOutliers> outliers, int first_token, PrefetchLevel prefetch) {
  const int64_t cols = products[0].w->cols;
  std::vector<Job> jobs;
  int64_t n_units = 0, work = 0;
  for (const MatmulProduct& p : products) {
    if (p.w->cols != cols) fail("matmul_many: a {}-column matrix with {}-column ones", p.w->cols, cols);
    const KernelEntry k = find_kernel(active_isa(), *p.w);
    const int64_t units = (p.w->rows + k.row_granularity - 1) / k.row_granularity;
    Job job{p.w, p.y, k, Activations{x, nullptr, 0, nullptr, n_tokens, cols, prefetch}, n_units, units, {}, {}, first_token};
    if (!outliers.empty()) {
      job.outlier_terms = outliers[jobs.size()].terms;
      // Every pass computes all rows: the first fills the columns for the rest.
      if (first_token == 0) job.column_fills = outliers[jobs.size()].fills;
    }
    jobs.push_back(job);
    n_units += units;
    work += p.w->rows * cols * n_tokens;
  }
  // Decode packs no quads: its threads skip that loop and its barrier.
  const bool any_quads = std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) { return reads_quads(j.k, n_tokens); });
  // A decode step's few tokens are quantized by every thread for itself, into
  // its own buffers: a microsecond's work, where sharing one thread's would
  // cost a barrier per product. Otherwise the threads share these buffers.
  const bool each_thread_quantizes = !any_quads && n_tokens <= kOwnQuantizationTokens;
  const QuantizedInputs quantized = each_thread_quantizes ? QuantizedInputs{} : attach_input_buffers(jobs, n_tokens, cols);
  const int64_t n_quads = (n_tokens + kQuadTokens - 1) / kQuadTokens;

  // One parallel region: quantize, interleave quads, then the units.
  // Threads only pay off once the products have real work; tiny models run serially.
  const int n_threads = work >= (int64_t{1} << 16) ? omp_get_max_threads() : 1;
  UnitRanges ranges(n_units, n_threads, n_units * kMinClaimWork / std::max<int64_t>(1, work));
#pragma omp parallel num_threads(n_threads)
  {
    const std::vector<Job>* thread_jobs = &jobs;
    if (each_thread_quantizes) {
      thread_local std::vector<Job> own_jobs;
      own_jobs.assign(jobs.begin(), jobs.end());
      quantize_tokens(attach_input_buffers(own_jobs, n_tokens, cols), x, 0, n_tokens, cols);
      thread_jobs = &own_jobs;
    } else {
#pragma omp for schedule(static)
      for (int t = 0; t < n_tokens; ++t) quantize_tokens(quantized, x, t, t + 1, cols);
    }
    if (any_quads) {  // the same for every thread
#pragma omp for schedule(static)
      for (int64_t k = 0; k < n_quads; ++k)
        for (int f = 0; f < kNumFormats; ++f) {
          const QuantizedInput& q = quantized.formats[f];
          if (q.quads)
            pack_activation_quad(static_cast<ActivationFormat>(f), q.data, q.row_bytes, n_tokens, cols, k, q.quads);
        }
    }
    for (int64_t u0, u1; ranges.next(omp_get_thread_num(), u0, u1);) run_units(*thread_jobs, u0, u1);
  }
}

}  // namespace

void matmul(const Matrix& w, const float* x, int n_tokens, float* y) {
  const MatmulProduct product{&w, y};
  matmul_many({&product, 1}, x, n_tokens);
}

}  // namespace skiff
