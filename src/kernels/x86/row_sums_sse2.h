// kernels/matmul/row_sums.h on x86: SSE2, baseline x86-64, so every x86 ISA
// gets the same bits.
#pragma once
#include <emmintrin.h>

#include <cstdint>

namespace skiff {

// Σq of 16 int8 values: psadbw's unsigned sum of the bytes + 128, less
// 16·128 (a scalar loop of 16 adds was most of a decode row's Q8_K
// quantization). An exact integer, whatever the order.
inline int32_t sum16_int8(const int8_t* q) {
  const __m128i u = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)),
                                  _mm_set1_epi8(static_cast<char>(0x80)));
  const __m128i s = _mm_sad_epu8(u, _mm_setzero_si128());  // two 16-bit sums, at bits 0 and 64
  return _mm_cvtsi128_si32(s) + _mm_extract_epi16(s, 4) - 16 * 128;
}

// Lane k of sum_sq and amax gets Σ x² and max |x| over row[k], row[k + 8], ...
// of the first n / 8 · 8 values, in two vectors (left to the compiler, the
// lanes went through memory each step). A NaN leaves a lane's max as it was.
inline void lane_sums_of_squares(const float* row, int64_t n, float sum_sq[8], float amax[8]) {
  const __m128 sign = _mm_set1_ps(-0.0f);
  __m128 sum_lo = _mm_setzero_ps(), sum_hi = _mm_setzero_ps(), max_lo = _mm_setzero_ps(), max_hi = _mm_setzero_ps();
  for (int64_t i = 0; i + 8 <= n; i += 8) {
    const __m128 lo = _mm_loadu_ps(row + i), hi = _mm_loadu_ps(row + i + 4);
    sum_lo = _mm_add_ps(sum_lo, _mm_mul_ps(lo, lo));
    sum_hi = _mm_add_ps(sum_hi, _mm_mul_ps(hi, hi));
    // max(|x|, m): m where |x| is NaN, as std::max(m, |x|)
    max_lo = _mm_max_ps(_mm_andnot_ps(sign, lo), max_lo);
    max_hi = _mm_max_ps(_mm_andnot_ps(sign, hi), max_hi);
  }
  _mm_storeu_ps(sum_sq, sum_lo);
  _mm_storeu_ps(sum_sq + 4, sum_hi);
  _mm_storeu_ps(amax, max_lo);
  _mm_storeu_ps(amax + 4, max_hi);
}

// Bit k set where |x[k]| > limit, for k < 4 (a NaN is never over).
inline int abs_over_mask4(const float* x, float limit) {
  return _mm_movemask_ps(_mm_cmpgt_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), _mm_loadu_ps(x)), _mm_set1_ps(limit)));
}

}  // namespace skiff
