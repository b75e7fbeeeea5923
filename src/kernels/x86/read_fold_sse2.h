// kernels/peak/read_fold.h on x86: 16 bytes at a time (SSE2, every x86-64),
// folded by xor into four registers: one-cycle operations that never hold the
// loads back.
#pragma once
#include <emmintrin.h>

#include <cstddef>
#include <cstdint>

namespace skiff {

inline uint64_t xor_fold_read(const void* b, const void* c, size_t n_lines) {
  const auto* pb = static_cast<const __m128i*>(b);
  const auto* pc = static_cast<const __m128i*>(c);
  __m128i l0 = _mm_setzero_si128(), l1 = l0, l2 = l0, l3 = l0;
  auto fold = [&](size_t i) { return _mm_xor_si128(_mm_load_si128(pb + i), _mm_load_si128(pc + i)); };
  for (size_t i = 0; i < 4 * n_lines; i += 4) {
    l0 = _mm_xor_si128(l0, fold(i));
    l1 = _mm_xor_si128(l1, fold(i + 1));
    l2 = _mm_xor_si128(l2, fold(i + 2));
    l3 = _mm_xor_si128(l3, fold(i + 3));
  }
  return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_xor_si128(_mm_xor_si128(l0, l1), _mm_xor_si128(l2, l3))));
}

}  // namespace skiff
