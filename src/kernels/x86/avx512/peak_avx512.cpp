// The AVX-512 peaks. Float: 16 independent chains of 512-bit FMAs (4-cycle
// latency × 2 FMA ports needs at least 8 in flight; 16 leaves margin and fits
// the 32 zmm registers). Int8: 16 chains of VNNI's vpdpbusd, the integer
// kernels' one instruction per 64 products (5-cycle latency × 2 ports).
#include <immintrin.h>

#include "kernels/peak/peak.h"
#include "kernels/x86/peak_chains.h"

namespace skiff {

double fma_loop_avx512(int64_t iterations, float* sink) {
  // acc = acc * m + c converges to c / (1 - m) without overflow or denormals.
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(0.1f), a2 = _mm512_set1_ps(0.2f),
         a3 = _mm512_set1_ps(0.3f), a4 = _mm512_set1_ps(0.4f), a5 = _mm512_set1_ps(0.5f),
         a6 = _mm512_set1_ps(0.6f), a7 = _mm512_set1_ps(0.7f), a8 = _mm512_set1_ps(0.8f),
         a9 = _mm512_set1_ps(0.9f), a10 = _mm512_set1_ps(1.0f), a11 = _mm512_set1_ps(1.1f),
         a12 = _mm512_set1_ps(1.2f), a13 = _mm512_set1_ps(1.3f), a14 = _mm512_set1_ps(1.4f),
         a15 = _mm512_set1_ps(1.5f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = _mm512_fmadd_ps(a0, m, c);   a1 = _mm512_fmadd_ps(a1, m, c);
    a2 = _mm512_fmadd_ps(a2, m, c);   a3 = _mm512_fmadd_ps(a3, m, c);
    a4 = _mm512_fmadd_ps(a4, m, c);   a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c);   a7 = _mm512_fmadd_ps(a7, m, c);
    a8 = _mm512_fmadd_ps(a8, m, c);   a9 = _mm512_fmadd_ps(a9, m, c);
    a10 = _mm512_fmadd_ps(a10, m, c); a11 = _mm512_fmadd_ps(a11, m, c);
    a12 = _mm512_fmadd_ps(a12, m, c); a13 = _mm512_fmadd_ps(a13, m, c);
    a14 = _mm512_fmadd_ps(a14, m, c); a15 = _mm512_fmadd_ps(a15, m, c);
  }
  const __m512 sum = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                    _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                    _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
  *sink = _mm512_reduce_add_ps(sum);
  return static_cast<double>(iterations) * 16 * 16 * 2;
}

double int8_dot_loop_avx512(int64_t iterations, float* sink) {
  const __m512i u = _mm512_set1_epi8(3), s = _mm512_set1_epi8(-2);
  const __m512i sum = run_chains<16, __m512i>(
      iterations, [](int j) { return _mm512_set1_epi32(j); },
      [&](__m512i a) { return _mm512_dpbusd_epi32(a, u, s); },
      [](__m512i a, __m512i b) { return _mm512_add_epi32(a, b); });
  alignas(64) int32_t lanes[16];  // not _mm512_reduce_add_epi32, which the emulated test build lacks
  _mm512_store_si512(lanes, sum);
  int64_t total = 0;  // the lanes have long since wrapped: their sum would overflow an int
  for (int32_t lane : lanes) total += lane;
  *sink = static_cast<float>(total);
  return static_cast<double>(iterations) * 16 * 64 * 2;
}

}  // namespace skiff
