// The AVX2 peaks. Float: 12 independent chains of 256-bit FMAs (4-cycle
// latency × 2 FMA ports needs at least 8 in flight; 12 leaves margin within
// the 16 ymm registers). Int8: 12 chains of vpmaddubsw + vpaddw, as the
// integer kernels sum a unit before widening it.
#include <immintrin.h>

#include "kernels/peak/peak.h"
#include "kernels/x86/peak_chains.h"

namespace skiff {

double fma_loop_avx2(int64_t iterations, float* sink) {
  // acc = acc * m + c converges to c / (1 - m) without overflow or denormals.
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(0.1f), a2 = _mm256_set1_ps(0.2f),
         a3 = _mm256_set1_ps(0.3f), a4 = _mm256_set1_ps(0.4f), a5 = _mm256_set1_ps(0.5f),
         a6 = _mm256_set1_ps(0.6f), a7 = _mm256_set1_ps(0.7f), a8 = _mm256_set1_ps(0.8f),
         a9 = _mm256_set1_ps(0.9f), a10 = _mm256_set1_ps(1.0f), a11 = _mm256_set1_ps(1.1f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, c);   a1 = _mm256_fmadd_ps(a1, m, c);
    a2 = _mm256_fmadd_ps(a2, m, c);   a3 = _mm256_fmadd_ps(a3, m, c);
    a4 = _mm256_fmadd_ps(a4, m, c);   a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c);   a7 = _mm256_fmadd_ps(a7, m, c);
    a8 = _mm256_fmadd_ps(a8, m, c);   a9 = _mm256_fmadd_ps(a9, m, c);
    a10 = _mm256_fmadd_ps(a10, m, c); a11 = _mm256_fmadd_ps(a11, m, c);
  }
  const __m256 sum = _mm256_add_ps(
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                    _mm256_add_ps(a4, a5)),
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a6, a7), _mm256_add_ps(a8, a9)),
                    _mm256_add_ps(a10, a11)));
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  float lanes[4];
  _mm_storeu_ps(lanes, half);
  *sink = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  return static_cast<double>(iterations) * 12 * 8 * 2;
}

double int8_dot_loop_avx2(int64_t iterations, float* sink) {
  // Small bytes keep the int16 sums far from saturation; the adds wrap anyway.
  const __m256i u = _mm256_set1_epi8(3), s = _mm256_set1_epi8(-2);
  const __m256i sum = run_chains<12, __m256i>(
      iterations, [](int j) { return _mm256_set1_epi16(static_cast<short>(j)); },
      [&](__m256i a) {
        // Hidden from the optimizer, so the multiply is not hoisted out of the loop.
        __m256i w = u;
        asm volatile("" : "+x"(w));
        return _mm256_add_epi16(a, _mm256_maddubs_epi16(w, s));
      },
      [](__m256i a, __m256i b) { return _mm256_add_epi16(a, b); });
  *sink = static_cast<float>(_mm256_extract_epi16(sum, 0));
  return static_cast<double>(iterations) * 12 * 32 * 2;
}

}  // namespace skiff
