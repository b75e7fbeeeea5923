// Bodies of the row kernels, as plain loops the compiler vectorizes. Included
// by ops_{scalar,avx2,avx512}.cpp inside a per-ISA namespace, so each copy is
// compiled with its own flags and cannot be merged with another by the linker.
// No STL here (see CMakeLists.txt).

#include "kernels/vec_math.h"

inline void rmsnorm(const float* x, const float* weight, int n, float eps, float* out) {
  float sum_sq = 0.0f;
#pragma omp simd reduction(+ : sum_sq)
  for (int i = 0; i < n; ++i) sum_sq += x[i] * x[i];
  const float scale = 1.0f / __builtin_sqrtf(sum_sq / static_cast<float>(n) + eps);
#pragma omp simd
  for (int i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

inline void silu_mul(float* gate, const float* up, long n) {
#pragma omp simd
  for (long i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + fast_exp(-gate[i])) * up[i];
}

inline float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

inline void add(float* x, const float* y, long n) {
#pragma omp simd
  for (long i = 0; i < n; ++i) x[i] += y[i];
}
