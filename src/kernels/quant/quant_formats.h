// The (de)quantizers of the formats beyond quant.cpp's own, and the scalar
// helpers they share with it. Internal to src/kernels' generic files (never
// included by a per-ISA file: the inline helpers must have one, generic copy).
// Each function takes nb blocks.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/fp16.h"

namespace skiff {

// IQ4_NL's and IQ4_XS's 16 levels (a non-linear grid, ggml-common.h's kvalues_iq4nl).
constexpr int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// MXFP4's and NVFP4's 16 E2M1 values, doubled to integers (ggml-common.h's
// kvalues_mxfp4: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, times 2).
constexpr int8_t kE2M1Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// An E8M0 scale 2^(e - 127), halved to match the doubled values: 2^(e - 128),
// subnormal below e = 2 (ggml's ggml_e8m0_to_fp32_half, bit for bit).
inline float e8m0_half(uint8_t e) {
  return bits_to_f32(e < 2 ? uint32_t{0x00200000} << e : (uint32_t{e} - 1) << 23);
}

// The index of the level nearest v (the lower of two as near).
inline uint8_t nearest_iq4_level(float v) {
  int best = 0;
  for (int k = 1; k < 16; ++k)
    if (std::fabs(v - kIq4Levels[k]) < std::fabs(v - kIq4Levels[best])) best = k;
  return static_cast<uint8_t>(best);
}

// The smallest fp16 not below v (v >= 0), so a scale stored in fp16 still
// covers the range it was computed for.
inline uint16_t fp16_round_up(float v) {
  uint16_t h = f32_to_fp16(v);
  if (fp16_to_f32(h) < v) ++h;
  return h;
}

// Sub-block j's 6-bit scale and min from the 12 packed bytes: bytes 0-3 hold
// scales 0-3 (low 6 bits), bytes 4-7 mins 0-3; scales/mins 4-7 keep their low
// 4 bits in bytes 8-11 and their top 2 bits in the spare top bits of 0-7.
inline void unpack_scale_min(const uint8_t* q, int j, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Smallest multiplier k in 0..kmax with k * unit >= v (kmax when it does not fit).
inline int ceil_multiple(float v, float unit, int kmax) {
  if (unit <= 0) return 0;
  return std::clamp(static_cast<int>(std::ceil(v / unit)), 0, kmax);
}

inline int round_clamped(float v, int lo, int hi) { return std::clamp(static_cast<int>(std::lround(v)), lo, hi); }

// The element of largest magnitude, with its sign (the first of equals), as
// ggml's symmetric quantizers (Q4_0, Q5_0) pick their scale.
inline float signed_max(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

// quant_blocks32.cpp: blocks of 32 with one fp16 scale (and a min for _1).
void dequantize_q4_1(const uint8_t* src, float* y, int64_t nb);
void dequantize_q5_0(const uint8_t* src, float* y, int64_t nb);
void dequantize_q5_1(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq4_nl(const uint8_t* src, float* y, int64_t nb);
// As ggml's quantize_row_*_ref (bit-exact).
void quantize_q4_1(const float* x, uint8_t* dst, int64_t nb);
void quantize_q5_0(const float* x, uint8_t* dst, int64_t nb);
void quantize_q5_1(const float* x, uint8_t* dst, int64_t nb);
// Nearest table level on the scale that maps the largest |x| to -127 (not ggml's search).
void quantize_iq4_nl(const float* x, uint8_t* dst, int64_t nb);

// quant_k_low.cpp: super-blocks of 256.
void dequantize_q2_k(const uint8_t* src, float* y, int64_t nb);
void dequantize_q3_k(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq4_xs(const uint8_t* src, float* y, int64_t nb);
// Max-abs / min-max quantizers, as quant.cpp's Q4_K (not ggml's search).
void quantize_q2_k(const float* x, uint8_t* dst, int64_t nb);
void quantize_q3_k(const float* x, uint8_t* dst, int64_t nb);
void quantize_iq4_xs(const float* x, uint8_t* dst, int64_t nb);

// quant_other.cpp: MXFP4, and formats read only, through the scalar kernel.
void dequantize_tq1_0(const uint8_t* src, float* y, int64_t nb);
void dequantize_tq2_0(const uint8_t* src, float* y, int64_t nb);
void dequantize_mxfp4(const uint8_t* src, float* y, int64_t nb);
void dequantize_nvfp4(const uint8_t* src, float* y, int64_t nb);
// As ggml's quantize_row_mxfp4_ref (bit-exact where ggml's is defined).
void quantize_mxfp4(const float* x, uint8_t* dst, int64_t nb);
// quant_iq.cpp: the lattice i-quants, read only.
void dequantize_iq2_xxs(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq2_xs(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq2_s(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq3_xxs(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq3_s(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq1_s(const uint8_t* src, float* y, int64_t nb);
void dequantize_iq1_m(const uint8_t* src, float* y, int64_t nb);

}  // namespace skiff
