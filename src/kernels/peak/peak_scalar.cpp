// Portable multiply-add chains (the compiler may use SSE2 multiplies and adds):
// the figure for CPUs without AVX2, where skiff's kernels are scalar too.
#include "kernels/peak/peak.h"

namespace skiff {

double fma_loop_scalar(int64_t iterations, float* sink) {
  constexpr int kChains = 16;
  float acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = 0.1f * static_cast<float>(j);
  for (int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * 0.999999f + 1e-7f;
  float sum = 0.0f;
  for (int j = 0; j < kChains; ++j) sum += acc[j];
  *sink = sum;
  return static_cast<double>(iterations) * kChains * 2;
}

}  // namespace skiff
