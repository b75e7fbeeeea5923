// The matmul dispatcher: picks the kernel for each weight layout and type and
// the active ISA, quantizes the activations once per format the kernels read, and splits
// the output rows of all products across threads.
#include "kernels/matmul.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <vector>

#include "base/error.h"
#include "kernels/matmul_kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_activation_layout.h"
#include "kernels/repack.h"

namespace skiff {

const uint8_t* Matrix::row(int64_t r) const {
  assert(layout == MatrixLayout::kRows);
  return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * row_bytes(type, cols);
}

void matrix_row(const Matrix& w, int64_t r, float* out) {
  if (w.layout == MatrixLayout::kPanels) return panel_row(w, r, out);
  dequantize_row(w.type, w.row(r), out, w.cols);
}

KernelEntry find_kernel(Isa isa, const Matrix& w) {
  if (w.layout == MatrixLayout::kPanels)  // the scalar kernel reads any layout through matrix_row
    return isa != Isa::kAvx512      ? scalar_kernel(w.type)
           : w.type == DType::F16 ? float_panel_kernel_avx512(w.type)
                                  : quant_panel_kernel_avx512(w.type);
  return find_kernel(isa, w.type);
}

KernelEntry find_kernel(Isa isa, DType type) {
  KernelEntry k;
  if (isa == Isa::kAvx512) {
    k = float_kernel_avx512(type);
    if (!k.fn) k = quant_kernel_avx512(type);
    if (k.fn) return k;
  }
  if (isa >= Isa::kAvx2) {
    k = float_kernel_avx2(type);
    if (!k.fn) k = quant_kernel_avx2(type);
    if (k.fn) return k;
  }
  return scalar_kernel(type);
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

// One product as the parallel region sees it: its kernel, its activations, and
// its place among the concatenated row units (of row_granularity rows) of all products.
struct Job {
  const Matrix* w;
  float* y;
  KernelEntry k;
  Activations act;
  int64_t first_unit, n_units;
};

// Runs the rows of units [u0, u1) of the concatenation, product by product.
void run_units(const std::vector<Job>& jobs, int64_t u0, int64_t u1) {
  for (const Job& j : jobs) {
    const int64_t a = std::max(u0, j.first_unit) - j.first_unit;
    const int64_t b = std::min(u1, j.first_unit + j.n_units) - j.first_unit;
    const int64_t g = j.k.row_granularity, rows = j.w->rows;
    if (a < b) j.k.fn(*j.w, j.act, j.y, rows, std::min(rows, a * g), std::min(rows, b * g));
  }
}

}  // namespace

void matmul_many(std::span<const MatmulProduct> products, const float* x, int n_tokens) {
  if (products.empty()) return;
  const int64_t cols = products[0].w->cols;
  std::vector<Job> jobs;
  int64_t n_units = 0, work = 0;
  for (const MatmulProduct& p : products) {
    if (p.w->cols != cols) fail("matmul_many: a {}-column matrix with {}-column ones", p.w->cols, cols);
    const KernelEntry k = find_kernel(active_isa(), *p.w);
    const int64_t units = (p.w->rows + k.row_granularity - 1) / k.row_granularity;
    jobs.push_back({p.w, p.y, k, Activations{x, nullptr, 0, nullptr, n_tokens, cols}, n_units, units});
    n_units += units;
    work += p.w->rows * cols * n_tokens;
  }
  // Each activation format the kernels read is quantized once, shared by its products.
  QuantizedInput quantized[kNumFormats];
  for (Job& j : jobs) {
    if (j.k.activations == ActivationFormat::kF32) continue;
    QuantizedInput& q = quantized[static_cast<int>(j.k.activations)];
    if (!q.data) {
      q.row_bytes = activation_row_bytes(j.k.activations, cols);
      q.data = activation_buffer<uint8_t>(j.k.activations, q.row_bytes * n_tokens);
    }
    if (j.k.quads_from_tokens > 0 && n_tokens >= j.k.quads_from_tokens && !q.quads)
      q.quads = activation_buffer<QuadUnit>(j.k.activations, activation_quads_bytes(cols, n_tokens));
    j.act.quant = q.data;
    j.act.quant_row_bytes = q.row_bytes;
  }
  for (Job& j : jobs)  // after the loop above: a later product may have asked for the quads
    if (j.k.activations != ActivationFormat::kF32) j.act.quads = quantized[static_cast<int>(j.k.activations)].quads;
  const int64_t n_quads = (n_tokens + kQuadTokens - 1) / kQuadTokens;

  // One parallel region: quantize, interleave quads, then contiguous unit
  // ranges, one per thread.
  // Threads only pay off once the products have real work; tiny models run serially.
  const int n_threads = work >= (int64_t{1} << 16) ? omp_get_max_threads() : 1;
#pragma omp parallel num_threads(n_threads)
  {
#pragma omp for schedule(static)
    for (int t = 0; t < n_tokens; ++t)
      for (int f = 0; f < kNumFormats; ++f) {
        const QuantizedInput& q = quantized[f];
        if (q.data)
          quantize_activation_row(static_cast<ActivationFormat>(f), x + t * cols,
                                  q.data + q.row_bytes * t, cols);
      }
#pragma omp for schedule(static)
    for (int64_t k = 0; k < n_quads; ++k)
      for (int f = 0; f < kNumFormats; ++f) {
        const QuantizedInput& q = quantized[f];
        if (q.quads)
          pack_activation_quad(static_cast<ActivationFormat>(f), q.data, q.row_bytes, n_tokens, cols, k, q.quads);
      }
    // One contiguous range per thread: handing out 2-8 pieces per thread
    // dynamically measured no better on 1B decode and slower on 110M.
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    run_units(jobs, n_units * id / nt, n_units * (id + 1) / nt);
  }
}

void matmul(const Matrix& w, const float* x, int n_tokens, float* y) {
  const MatmulProduct product{&w, y};
  matmul_many({&product, 1}, x, n_tokens);
}

}  // namespace skiff
