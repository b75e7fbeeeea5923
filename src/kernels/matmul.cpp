// The matmul dispatcher: picks the kernel for the weight type and the active
// ISA, quantizes the activations once if the kernel reads them as integers,
// and splits the output rows across threads.
#include "kernels/matmul.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/matmul_kernels.h"
#include "kernels/quant.h"

namespace skiff {

const uint8_t* Matrix::row(int64_t r) const {
  return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * row_bytes(type, cols);
}

void matrix_row(const Matrix& w, int64_t r, float* out) {
  dequantize_row(w.type, w.row(r), out, w.cols);
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

// Scratch for quantized activations, reused across calls on this thread.
std::vector<uint8_t>& activation_buffer() {
  thread_local std::vector<uint8_t> buffer;
  return buffer;
}

}  // namespace

void matmul(const Matrix& w, const float* x, int n_tokens, float* y) {
  const KernelEntry k = find_kernel(active_isa(), w.type);
  Activations act{x, nullptr, 0, n_tokens, w.cols};
  if (k.activations != ActivationFormat::kF32) {
    act.quant_row_bytes = activation_row_bytes(k.activations, w.cols);
    std::vector<uint8_t>& buf = activation_buffer();
    if (buf.size() < act.quant_row_bytes * n_tokens) buf.resize(act.quant_row_bytes * n_tokens);
#pragma omp parallel for schedule(static) if (n_tokens > 1)
    for (int t = 0; t < n_tokens; ++t)
      quantize_activation_row(k.activations, x + static_cast<int64_t>(t) * w.cols,
                              buf.data() + act.quant_row_bytes * t, w.cols);
    act.quant = buf.data();
  }
  // Contiguous row ranges, one per thread, in multiples of the kernel's granularity.
  // Threads only pay off once a product has real work; tiny models run serially.
  const int64_t work = w.rows * w.cols * n_tokens;
  const int n_threads = work >= (int64_t{1} << 16) ? omp_get_max_threads() : 1;
  const int64_t g = k.row_granularity;
  const int64_t units = (w.rows + g - 1) / g;
#pragma omp parallel num_threads(n_threads)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t r0 = std::min(w.rows, units * id / nt * g);
    const int64_t r1 = std::min(w.rows, units * (id + 1) / nt * g);
    if (r0 < r1) k.fn(w, act, y, w.rows, r0, r1);
  }
}

}  // namespace skiff
