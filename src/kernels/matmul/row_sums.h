// Sums and tests over an activation row that the portable matmul code needs
// fast and with the same bits on every ISA of a CPU family: the family's baseline
// vector code where there is one (x86: SSE2), else plain loops.
#pragma once
#include <cstdint>

#if defined(__SSE2__)
#include "kernels/x86/row_sums_sse2.h"
#else
#include <algorithm>
#include <cmath>

namespace skiff {

inline int32_t sum16_int8(const int8_t* q) {
  int32_t s = 0;
  for (int i = 0; i < 16; ++i) s += q[i];
  return s;
}

inline void lane_sums_of_squares(const float* row, int64_t n, float sum_sq[8], float amax[8]) {
  for (int k = 0; k < 8; ++k) sum_sq[k] = amax[k] = 0;
  for (int64_t i = 0; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      sum_sq[k] += row[i + k] * row[i + k];
      amax[k] = std::max(amax[k], std::fabs(row[i + k]));
    }
}

inline int abs_over_mask4(const float* x, float limit) {
  int mask = 0;
  for (int k = 0; k < 4; ++k) mask |= (std::fabs(x[k]) > limit) << k;
  return mask;
}

}  // namespace skiff
#endif
